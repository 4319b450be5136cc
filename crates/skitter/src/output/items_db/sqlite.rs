//! The SQLite writer: one connection on a blocking-pool thread, batches in
//! immediate transactions, WAL mode so readers and other writers (another
//! process on the same file) wait for each other instead of failing.
//!
//! `synchronous=NORMAL` in WAL mode makes a commit survive the process being
//! killed (not a power cut), which is what a flush promises; when the crawl's
//! completions survive a power cut, the crawler syncs the write-ahead log
//! after the flush (`ItemsDbSink::unsynced`), once for a group of flushes,
//! rather than every commit waiting for its own `fsync`.

use std::path::Path;
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use tokio::sync::mpsc;

use super::batch::Batch;
use super::schema::{Cell, Dialect, quote};
use super::{ItemsDbError, Job, Writer};
use crate::parse::items::TableSchema;

/// How long a transaction waits for another writer's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);
/// The wait between tries to switch a database another writer holds to WAL.
const WAL_RETRY: Duration = Duration::from_millis(10);

/// Opens the file, prepares its tables and starts the writer.
pub(super) async fn start(
    path: &Path,
    shown: &str,
    schemas: &[TableSchema],
    jobs: mpsc::Receiver<Job>,
) -> Result<Writer, ItemsDbError> {
    let (path, shown_owned, schemas_owned) = (path.to_owned(), shown.to_string(), schemas.to_vec());
    let conn = tokio::task::spawn_blocking(move || open(&path, &shown_owned, &schemas_owned))
        .await
        .map_err(|_| ItemsDbError::WriterGone {
            target: shown.to_string(),
        })??;
    let shown = shown.to_string();
    let schemas = schemas.to_vec();
    Ok(tokio::task::spawn_blocking(move || {
        run(conn, &shown, &schemas, jobs)
    }))
}

fn open(path: &Path, shown: &str, schemas: &[TableSchema]) -> Result<Connection, ItemsDbError> {
    let fail = |doing| {
        move |source| ItemsDbError::Sqlite {
            target: shown.to_string(),
            doing,
            source,
        }
    };
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(ItemsDbError::Schema {
            target: shown.to_string(),
            message: "it is a symbolic link, which outputs never follow".to_string(),
        });
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn =
        Connection::open_with_flags(path, flags).map_err(fail("cannot open the database"))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(fail("cannot set the busy timeout"))?;
    // journal_mode answers with the mode it is in: a file that cannot be
    // written (or is not a database) fails here rather than at the first batch.
    // Two writers opening a new database at once: the switch takes an
    // exclusive lock, and SQLite answers busy at once, without its busy
    // handler, where waiting could deadlock; so it is tried again here, on
    // this blocking thread, for as long as the busy timeout.
    let started = std::time::Instant::now();
    loop {
        match conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(())) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && started.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(WAL_RETRY);
            }
            done => break done.map_err(fail("cannot switch to WAL mode"))?,
        }
    }
    conn.execute_batch("PRAGMA synchronous=NORMAL")
        .map_err(fail("cannot set synchronous=NORMAL"))?;
    prepare_tables(&mut conn, shown, schemas)?;
    Ok(conn)
}

/// Creates missing tables and adds missing columns, in one immediate
/// transaction so concurrent writers do it one at a time.
fn prepare_tables(
    conn: &mut Connection,
    shown: &str,
    schemas: &[TableSchema],
) -> Result<(), ItemsDbError> {
    let fail = |source| ItemsDbError::Sqlite {
        target: shown.to_string(),
        doing: "cannot create the tables",
        source,
    };
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(fail)?;
    for table in schemas {
        tx.execute_batch(&Dialect::Sqlite.create_table(table))
            .map_err(fail)?;
        let existing = columns(&tx, &table.name).map_err(fail)?;
        for alter in Dialect::Sqlite.plan_growth(shown, table, &existing)? {
            tx.execute_batch(&alter).map_err(fail)?;
        }
    }
    tx.commit().map_err(fail)
}

/// The columns of `table`: name and declared type.
fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare("SELECT name, type FROM pragma_table_info(?1)")?;
    stmt.query_map([table], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect()
}

fn run(
    mut conn: Connection,
    shown: &str,
    schemas: &[TableSchema],
    mut jobs: mpsc::Receiver<Job>,
) -> Result<(), ItemsDbError> {
    let fail = |source| ItemsDbError::Sqlite {
        target: shown.to_string(),
        doing: "cannot write a batch of items",
        source,
    };
    let statements: Vec<(String, String)> = schemas.iter().map(statements).collect();
    let mut refused = 0;
    while let Some(job) = jobs.blocking_recv() {
        match job {
            Job::Write(batch) => match write(&mut conn, &statements, &batch) {
                Ok(()) => {}
                Err(e) if refuses_data(&e) => {
                    tracing::debug!("items: a batch was refused ({e}), writing it page by page");
                    refused += write_pages(&mut conn, shown, &statements, batch).map_err(fail)?;
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
fn write_pages(
    conn: &mut Connection,
    shown: &str,
    statements: &[(String, String)],
    batch: Batch,
) -> rusqlite::Result<u64> {
    let mut refused = 0;
    for (url, page) in batch.into_pages() {
        match write(conn, statements, &page) {
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

/// Whether SQLite refused the data rather than failed: a value beyond its
/// length limit, or one a constraint refuses. Another page's data would go
/// through.
fn refuses_data(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, rusqlite::ErrorCode::TooBig | rusqlite::ErrorCode::ConstraintViolation)
    )
}

/// The `DELETE` of a page's rows and the `INSERT` of one row, for `table`.
fn statements(table: &TableSchema) -> (String, String) {
    let name = quote(&table.name);
    let delete = format!("DELETE FROM {name} WHERE page_url = ?1");
    let mut columns = String::from("page_url, item_index, fetched_at");
    let mut values = String::from("?1, ?2, ?3");
    for (i, column) in table.columns.iter().enumerate() {
        columns.push_str(", ");
        columns.push_str(&quote(&column.name));
        values.push_str(&format!(", ?{}", i + 4));
    }
    // The page's rows were deleted just before, so REPLACE only matters when
    // another process wrote the same page in between.
    let insert = format!("INSERT OR REPLACE INTO {name} ({columns}) VALUES ({values})");
    (delete, insert)
}

fn write(
    conn: &mut Connection,
    statements: &[(String, String)],
    batch: &Batch,
) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for (table, (delete, insert)) in batch.tables.iter().zip(statements) {
        if table.replace.is_empty() {
            continue;
        }
        let mut delete = tx.prepare_cached(delete)?;
        for url in &table.replace {
            delete.execute([&**url])?;
        }
        let mut insert = tx.prepare_cached(insert)?;
        for row in &table.rows {
            let fetched_at = row
                .fetched_at
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
            let url: &str = &row.page_url;
            let mut params: Vec<&dyn rusqlite::ToSql> = Vec::with_capacity(3 + row.cells.len());
            params.push(&url);
            params.push(&row.item_index);
            params.push(&fetched_at);
            params.extend(row.cells.iter().map(|c| c as &dyn rusqlite::ToSql));
            insert.execute(params.as_slice())?;
        }
    }
    tx.commit()
}

impl rusqlite::ToSql for Cell {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Cell::Null => ValueRef::Null,
            Cell::Text(s) | Cell::Json(s) => ValueRef::Text(s.as_bytes()),
            Cell::Integer(i) => ValueRef::Integer(*i),
            Cell::Number(n) => ValueRef::Real(*n),
        }))
    }
}
