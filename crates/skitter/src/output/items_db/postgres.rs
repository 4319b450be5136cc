//! The PostgreSQL writer (`tokio-postgres`): one connection, a batch per
//! transaction, each table's rows sent as one `INSERT … SELECT FROM unnest(…)`
//! of column arrays, so a batch of thousands of rows is a handful of round
//! trips.
//!
//! Connections are TCP, with or without TLS as libpq's `sslmode` says (see
//! `tls.rs` for the modes and what each checks), or a Unix socket (never TLS).
//!
//! Several processes may write to one database: schema changes happen under a
//! transaction-scoped advisory lock ([`SCHEMA_LOCK`]), and a batch that loses a
//! race with another writer's (deadlock, serialisation failure, unique
//! violation) is retried from the start, up to [`ATTEMPTS`] times. Inserts are
//! `ON CONFLICT (page_url, item_index) DO UPDATE`, so two writers storing the
//! same page at once end with one set of rows rather than an error.

use std::time::Duration;

use chrono::{DateTime, Utc};
use rand::RngExt;
use tokio::sync::mpsc;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::batch::{Batch, TableBatch};
use super::schema::{Cell, Dialect, quote};
use super::{ItemsDbError, Job, Writer};
use crate::parse::items::{ColumnType, TableSchema};

/// The advisory lock key under which skitter writers change tables ("skitter"
/// in ASCII), so concurrent `CREATE TABLE IF NOT EXISTS` never race.
pub const SCHEMA_LOCK: i64 = 0x0073_6b69_7474_6572;

/// Tries of one batch that keeps losing races with other writers.
pub const ATTEMPTS: u32 = 5;

/// Connect timeout when the URL sets none.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A table's prepared statements.
struct Statements {
    delete: Statement,
    insert: Statement,
}

/// Connects, prepares the tables and statements, and starts the writer task.
pub(super) async fn start(
    target: &str,
    shown: &str,
    schemas: &[TableSchema],
    jobs: mpsc::Receiver<Job>,
) -> Result<Writer, ItemsDbError> {
    let fail = |doing| {
        move |source| ItemsDbError::Postgres {
            target: shown.to_string(),
            doing,
            source,
        }
    };
    let tls = super::tls::settings(target, shown)?;
    let mut config: tokio_postgres::Config = tls
        .url
        .parse()
        .map_err(fail("not a usable PostgreSQL URL"))?;
    config.ssl_mode(tls.mode.negotiation());
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    let connector = MakeRustlsConnect::new(super::tls::client_config(&tls, shown)?);
    let (mut client, connection) = config.connect(connector).await.map_err(|source| match &tls
        .roots
    {
        Some(roots) if super::tls::is_certificate_refused(&source) => ItemsDbError::Certificate {
            target: shown.to_string(),
            mode: tls.mode.name(),
            roots: roots.to_string(),
            source,
        },
        _ => fail("cannot connect to PostgreSQL")(source),
    })?;
    let watched = shown.to_string();
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::warn!(target = %watched, "items: PostgreSQL connection ended: {e}");
        }
    });
    prepare_tables(&mut client, shown, schemas).await?;
    let mut statements = Vec::with_capacity(schemas.len());
    for table in schemas {
        let (delete, insert) = sql(table);
        statements.push(Statements {
            delete: client
                .prepare(&delete)
                .await
                .map_err(fail("cannot prepare a statement"))?,
            insert: client
                .prepare(&insert)
                .await
                .map_err(fail("cannot prepare a statement"))?,
        });
    }
    let shown = shown.to_string();
    let schemas = schemas.to_vec();
    Ok(tokio::spawn(async move {
        run(client, &shown, &schemas, &statements, jobs).await
    }))
}

/// Creates missing tables and adds missing columns under [`SCHEMA_LOCK`].
async fn prepare_tables(
    client: &mut Client,
    shown: &str,
    schemas: &[TableSchema],
) -> Result<(), ItemsDbError> {
    let fail = |source| ItemsDbError::Postgres {
        target: shown.to_string(),
        doing: "cannot create the tables",
        source,
    };
    let tx = client.transaction().await.map_err(fail)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
        .await
        .map_err(fail)?;
    for table in schemas {
        tx.batch_execute(&Dialect::Postgres.create_table(table))
            .await
            .map_err(fail)?;
        let existing: Vec<(String, String)> = tx
            .query(
                "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod) \
                 FROM pg_attribute a WHERE a.attrelid = to_regclass($1::text) \
                 AND a.attnum > 0 AND NOT a.attisdropped",
                &[&quote(&table.name)],
            )
            .await
            .map_err(fail)?
            .iter()
            .map(|row| (row.get(0), row.get(1)))
            .collect();
        for alter in Dialect::Postgres.plan_growth(shown, table, &existing)? {
            tx.batch_execute(&alter).await.map_err(fail)?;
        }
    }
    tx.commit().await.map_err(fail)
}

/// The `DELETE` of some pages' rows and the `INSERT` of column arrays, for `table`.
fn sql(table: &TableSchema) -> (String, String) {
    let name = quote(&table.name);
    let delete = format!("DELETE FROM {name} WHERE page_url = ANY($1::text[])");
    let mut columns = String::from("page_url, item_index, fetched_at");
    let mut select = String::from("u.c1, u.c2, u.c3");
    let mut arrays = String::from("$1::text[], $2::int8[], $3::timestamptz[]");
    let mut aliases = String::from("c1, c2, c3");
    let mut update = String::from("fetched_at = EXCLUDED.fetched_at");
    for (i, column) in table.columns.iter().enumerate() {
        let (n, quoted) = (i + 4, quote(&column.name));
        columns.push_str(&format!(", {quoted}"));
        aliases.push_str(&format!(", c{n}"));
        update.push_str(&format!(", {quoted} = EXCLUDED.{quoted}"));
        let (array, cast) = match column.ty {
            ColumnType::Text | ColumnType::Url => ("text[]", ""),
            ColumnType::Integer => ("int8[]", ""),
            ColumnType::Number => ("float8[]", ""),
            // JSON travels as text and is parsed by the server.
            ColumnType::Json => ("text[]", "::jsonb"),
        };
        arrays.push_str(&format!(", ${n}::{array}"));
        select.push_str(&format!(", u.c{n}{cast}"));
    }
    let insert = format!(
        "INSERT INTO {name} ({columns}) SELECT {select} FROM unnest({arrays}) AS u({aliases}) \
         ON CONFLICT (page_url, item_index) DO UPDATE SET {update}"
    );
    (delete, insert)
}

async fn run(
    mut client: Client,
    shown: &str,
    schemas: &[TableSchema],
    statements: &[Statements],
    mut jobs: mpsc::Receiver<Job>,
) -> Result<(), ItemsDbError> {
    let fail = |source| ItemsDbError::Postgres {
        target: shown.to_string(),
        doing: "cannot write a batch of items",
        source,
    };
    let mut refused = 0;
    while let Some(job) = jobs.recv().await {
        match job {
            Job::Write(batch) => match write(&mut client, schemas, statements, &batch).await {
                Ok(()) => {}
                Err(e) if refuses_data(&e) => {
                    tracing::debug!("items: a batch was refused ({e}), writing it page by page");
                    refused += write_pages(&mut client, shown, schemas, statements, batch)
                        .await
                        .map_err(fail)?;
                }
                Err(e) => return Err(fail(e)),
            },
            Job::Flush(done) => {
                let _ = done.send(std::mem::take(&mut refused));
            }
        }
    }
    Ok(())
}

/// Writes a refused batch one page per transaction, leaving out the pages the
/// database refuses; answers how many items were left out.
async fn write_pages(
    client: &mut Client,
    shown: &str,
    schemas: &[TableSchema],
    statements: &[Statements],
    batch: Batch,
) -> Result<u64, tokio_postgres::Error> {
    let mut refused = 0;
    for (url, page) in batch.into_pages() {
        match write(client, schemas, statements, &page).await {
            Ok(()) => {}
            Err(e) if refuses_data(&e) => {
                tracing::warn!(target = %shown, page = %url, "items: the database refused this page's items: {e}");
                refused += page.items as u64;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(refused)
}

/// Whether PostgreSQL refused the data rather than failed: a data exception
/// (class 22: a character it cannot store, a malformed value) or a value
/// beyond a limit (class 54: a key too long for its index). Another page's
/// data would go through.
fn refuses_data(e: &tokio_postgres::Error) -> bool {
    e.code()
        .is_some_and(|code| code.code().starts_with("22") || code.code().starts_with("54"))
}

/// Writes `batch` in one transaction, again when it lost a race.
async fn write(
    client: &mut Client,
    schemas: &[TableSchema],
    statements: &[Statements],
    batch: &Batch,
) -> Result<(), tokio_postgres::Error> {
    let mut attempt = 1;
    loop {
        match write_once(client, schemas, statements, batch).await {
            Err(e) if attempt < ATTEMPTS && lost_race(&e) => {
                tracing::debug!("items: batch lost a race with another writer, again: {e}");
                // Spread the writers apart so they do not collide again at once.
                let jitter = rand::rng().random_range(0..10);
                tokio::time::sleep(Duration::from_millis(10 * u64::from(attempt) + jitter)).await;
                attempt += 1;
            }
            result => return result,
        }
    }
}

fn lost_race(e: &tokio_postgres::Error) -> bool {
    e.code().is_some_and(|code| {
        [
            SqlState::T_R_DEADLOCK_DETECTED,
            SqlState::T_R_SERIALIZATION_FAILURE,
            SqlState::UNIQUE_VIOLATION,
        ]
        .contains(code)
    })
}

async fn write_once(
    client: &mut Client,
    schemas: &[TableSchema],
    statements: &[Statements],
    batch: &Batch,
) -> Result<(), tokio_postgres::Error> {
    let tx = client.transaction().await?;
    for ((table, schema), statements) in batch.tables.iter().zip(schemas).zip(statements) {
        if table.replace.is_empty() {
            continue;
        }
        let urls: Vec<&str> = table.replace.iter().map(|u| &**u).collect();
        tx.execute(&statements.delete, &[&urls]).await?;
        if table.rows.is_empty() {
            continue;
        }
        let arrays = Arrays::of(table, schema);
        tx.execute(&statements.insert, &arrays.params()).await?;
    }
    tx.commit().await
}

/// One table's rows as column arrays, the parameters of its `INSERT`.
struct Arrays<'a> {
    urls: Vec<&'a str>,
    indexes: Vec<i64>,
    fetched: Vec<DateTime<Utc>>,
    fields: Vec<FieldArray<'a>>,
}

enum FieldArray<'a> {
    Text(Vec<Option<&'a str>>),
    Integer(Vec<Option<i64>>),
    Number(Vec<Option<f64>>),
}

impl<'a> Arrays<'a> {
    fn of(table: &'a TableBatch, schema: &TableSchema) -> Arrays<'a> {
        let rows = &table.rows;
        let fields = schema
            .columns
            .iter()
            .enumerate()
            .map(|(c, column)| {
                let cells = rows.iter().map(move |r| &r.cells[c]);
                match column.ty {
                    ColumnType::Integer => FieldArray::Integer(
                        cells
                            .map(|cell| match cell {
                                Cell::Integer(i) => Some(*i),
                                _ => None,
                            })
                            .collect(),
                    ),
                    ColumnType::Number => FieldArray::Number(
                        cells
                            .map(|cell| match cell {
                                Cell::Number(n) => Some(*n),
                                _ => None,
                            })
                            .collect(),
                    ),
                    ColumnType::Text | ColumnType::Url | ColumnType::Json => FieldArray::Text(
                        cells
                            .map(|cell| match cell {
                                Cell::Text(s) | Cell::Json(s) => Some(s.as_str()),
                                _ => None,
                            })
                            .collect(),
                    ),
                }
            })
            .collect();
        Arrays {
            urls: rows.iter().map(|r| &*r.page_url).collect(),
            indexes: rows.iter().map(|r| i64::from(r.item_index)).collect(),
            fetched: rows.iter().map(|r| r.fetched_at).collect(),
            fields,
        }
    }

    fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&self.urls, &self.indexes, &self.fetched];
        for field in &self.fields {
            params.push(match field {
                FieldArray::Text(v) => v,
                FieldArray::Integer(v) => v,
                FieldArray::Number(v) => v,
            });
        }
        params
    }
}
