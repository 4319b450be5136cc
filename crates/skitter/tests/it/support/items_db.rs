//! The databases the items sink tests write to, and how they read them back:
//! SQLite files in a temporary directory, and databases in a private
//! PostgreSQL server (see `skitter_testsite::postgres`).

use chrono::{TimeZone, Utc};
use skitter::base::outcome::PageRecord;
use skitter::output::Page;
use skitter::parse::items::{Column, ColumnType, Item, Items, TableSchema};
use skitter_testsite::postgres::PrivateCluster;

/// Where a test's databases live.
pub enum Backend {
    Sqlite(tempfile::TempDir),
    Postgres(PrivateCluster),
}

impl Backend {
    pub fn sqlite() -> Backend {
        Backend::Sqlite(tempfile::tempdir().expect("temp dir"))
    }

    /// A private PostgreSQL server, or `None` when it is not installed (after
    /// a loud notice; a failure under CI).
    pub fn postgres() -> Option<Backend> {
        PrivateCluster::start().map(Backend::Postgres)
    }

    /// A new, empty database: its target for `ItemsDbSink::open`.
    pub fn fresh(&self, name: &str) -> String {
        match self {
            Backend::Sqlite(dir) => dir.path().join(format!("{name}.db")).display().to_string(),
            Backend::Postgres(cluster) => cluster.create_database(name).expect("createdb"),
        }
    }

    /// Runs `sql` in the database at `target` and returns its rows, values as
    /// text (`NULL` for null) joined with `|`.
    pub async fn rows(&self, target: &str, sql: &str) -> Vec<String> {
        match self {
            Backend::Sqlite(_) => {
                let conn = rusqlite::Connection::open(target).expect("open the SQLite file");
                let mut stmt = conn.prepare(sql).expect("prepare");
                let n = stmt.column_count();
                stmt.query_map([], |row| {
                    let values: Vec<String> = (0..n)
                        .map(|i| match row.get_ref(i).unwrap() {
                            rusqlite::types::ValueRef::Null => "NULL".to_string(),
                            rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                            rusqlite::types::ValueRef::Real(v) => v.to_string(),
                            rusqlite::types::ValueRef::Text(t) => {
                                String::from_utf8_lossy(t).into_owned()
                            }
                            rusqlite::types::ValueRef::Blob(_) => "BLOB".to_string(),
                        })
                        .collect();
                    Ok(values.join("|"))
                })
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows")
            }
            Backend::Postgres(_) => {
                let (client, connection) = tokio_postgres::connect(target, tokio_postgres::NoTls)
                    .await
                    .expect("connect to the private server");
                let conn = tokio::spawn(connection);
                let mut rows = Vec::new();
                for message in client.simple_query(sql).await.expect("query") {
                    if let tokio_postgres::SimpleQueryMessage::Row(row) = message {
                        let values: Vec<&str> = (0..row.len())
                            .map(|i| row.get(i).unwrap_or("NULL"))
                            .collect();
                        rows.push(values.join("|"));
                    }
                }
                drop(client);
                let _ = conn.await;
                rows
            }
        }
    }

    /// The columns of `table`: `name type`, as the database names types.
    pub async fn columns(&self, target: &str, table: &str) -> Vec<String> {
        let sql = match self {
            Backend::Sqlite(_) => {
                format!("SELECT name || ' ' || type FROM pragma_table_info('{table}')")
            }
            Backend::Postgres(_) => format!(
                "SELECT column_name || ' ' || data_type FROM information_schema.columns \
                 WHERE table_name = '{table}' ORDER BY ordinal_position"
            ),
        };
        self.rows(target, &sql).await
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Backend::Postgres(_))
    }
}

/// A table schema from `(name, type)` pairs.
pub fn schema(name: &str, columns: &[(&str, ColumnType)]) -> TableSchema {
    TableSchema {
        name: name.to_string(),
        columns: columns
            .iter()
            .map(|(n, ty)| Column {
                name: n.to_string(),
                ty: *ty,
            })
            .collect(),
    }
}

/// A fetched page at `url` whose rule set `rule_set` made `items` (field
/// lists), fetched at a fixed time.
pub fn page(url: &str, rule_set: &str, items: Vec<Vec<(&str, serde_json::Value)>>) -> Page {
    let records = items
        .into_iter()
        .enumerate()
        .map(|(i, fields)| Item {
            rule_set: rule_set.to_string(),
            index: i as u32,
            fields: fields
                .into_iter()
                .map(|(n, v)| (n.to_string(), v))
                .collect(),
        })
        .collect();
    Page {
        record: PageRecord::new(url::Url::parse(url).unwrap(), 0, None),
        exchange: None,
        rendered: None,
        content: None,
        items: Some(Box::new(Items {
            fetched_at: Utc.with_ymd_and_hms(2026, 5, 1, 12, 30, 0).unwrap(),
            records,
            rule_sets: vec![rule_set.to_string()],
            errors: vec![],
        })),
        links: None,
        text: None,
    }
}
