//! The state directory's layout, its format version and the crawl's identity.
//!
//! A directory holds `state.sqlite` (with SQLite's `-wal` and `-shm` companions)
//! and `lock`, an advisory file lock held by the one process that writes. The
//! format version is SQLite's `user_version`; the crawl definition is stored on
//! first open and compared on every later one.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use super::{CrawlMeta, StoreError};

/// The on-disk format this build reads and writes.
pub const SCHEMA_VERSION: i64 = 4;

/// The oldest format this build still opens: version 2 lacks the recrawl
/// tables, version 3 the fetch counts; opening adds what is missing. Version 3
/// also had no queue entries with a kind (a queued sitemap, see `chunk`), which
/// its entries (all pages) need not have; opening marks it as version 4, which
/// an older build refuses instead of misreading such an entry.
const OLDEST_READABLE: i64 = 2;

/// The database file inside a state directory.
pub(crate) const DB_FILE: &str = "state.sqlite";
const LOCK_FILE: &str = "lock";

const TABLES: &str = "
CREATE TABLE internal (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE progress (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    seen INTEGER NOT NULL, queued INTEGER NOT NULL, leased INTEGER NOT NULL,
    done INTEGER NOT NULL, outcomes INTEGER NOT NULL, errors INTEGER NOT NULL,
    next_seq INTEGER NOT NULL, spilled INTEGER NOT NULL, updated_ms INTEGER NOT NULL,
    fetched INTEGER NOT NULL DEFAULT 0);
INSERT INTO progress VALUES (0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0);
CREATE TABLE host (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE,
    pending INTEGER NOT NULL, done INTEGER NOT NULL, errors INTEGER NOT NULL,
    delay_floor_ms INTEGER NOT NULL, fetched INTEGER NOT NULL DEFAULT 0);
CREATE TABLE queue (
    id INTEGER PRIMARY KEY, host INTEGER NOT NULL, fps BLOB NOT NULL, reqs BLOB NOT NULL);
CREATE INDEX queue_host ON queue (host, id);
CREATE TABLE done (fp BLOB NOT NULL);
CREATE TABLE seen (fp BLOB PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE outcome (
    id INTEGER PRIMARY KEY, fp BLOB NOT NULL, failed INTEGER NOT NULL, record TEXT NOT NULL);
CREATE TABLE robots (origin TEXT PRIMARY KEY, body BLOB NOT NULL, fetched_ms INTEGER NOT NULL);
CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB NOT NULL);
";

/// What version 3 added: each fetched URL's visit (see `recrawl`), and one row
/// per pass. A version-2 state is upgraded in place by creating them.
const RECRAWL_TABLES: &str = "
CREATE TABLE visit (
    fp BLOB PRIMARY KEY, url TEXT NOT NULL, depth INTEGER NOT NULL, visit BLOB NOT NULL)
    WITHOUT ROWID;
CREATE TABLE pass (
    n INTEGER PRIMARY KEY, state TEXT NOT NULL,
    started_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL,
    urls INTEGER NOT NULL DEFAULT 0, new INTEGER NOT NULL DEFAULT 0,
    changed INTEGER NOT NULL DEFAULT 0, unchanged INTEGER NOT NULL DEFAULT 0,
    gone INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
    not_due INTEGER NOT NULL DEFAULT 0);
";

/// What version 4 added: the URLs fetched in the current pass, in all and
/// per host, from which a resumed crawl counts `max_pages` and
/// `max_per_host` on. An older state has only `done`, which also counts
/// URLs skipped before fetching; the crawl-wide count is taken from the
/// records (exact), the per-host one from `done` (never less than the
/// fetches, so an upgraded crawl may stop a host early but never late).
const FETCHED_COLUMNS: &str = "
ALTER TABLE progress ADD COLUMN fetched INTEGER NOT NULL DEFAULT 0;
ALTER TABLE host ADD COLUMN fetched INTEGER NOT NULL DEFAULT 0;
UPDATE progress SET fetched =
    (SELECT count(*) FROM outcome WHERE json_extract(record, '$.kind') <> 'skipped');
UPDATE host SET fetched = done;
";

const FIRST_PASS: &str = "INSERT INTO pass (n, state, started_ms, updated_ms)
    VALUES (1, 'running', CAST(unixepoch('subsec') * 1000 AS INTEGER), 0);";

/// How the writer wants its connection set up.
pub(crate) struct OpenSpec<'a> {
    pub(crate) meta: &'a CrawlMeta,
    pub(crate) force: bool,
    /// Refuse to grow the database beyond this many bytes.
    pub(crate) max_size: Option<u64>,
    /// SQLite's page cache, in bytes.
    pub(crate) cache_bytes: usize,
}

/// Creates the directory if needed, takes the writer's lock, and opens (or
/// initialises) the database, checking its version and crawl definition.
pub(crate) fn open_writer(dir: &Path, spec: &OpenSpec) -> Result<(Connection, File), StoreError> {
    let io = |source| StoreError::Io {
        path: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    let lock = File::create(dir.join(LOCK_FILE)).map_err(io)?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Err(StoreError::Busy(dir.to_path_buf())),
        Err(TryLockError::Error(e)) => return Err(io(e)),
    }
    let conn = Connection::open(dir.join(DB_FILE)).map_err(StoreError::sql("opening"))?;
    configure(&conn, spec)?;
    init_or_check(&conn, spec.meta, spec.force)?;
    Ok((conn, lock))
}

fn configure(conn: &Connection, spec: &OpenSpec) -> Result<(), StoreError> {
    // Small pages: a group commit writes every page it touched to the WAL, and
    // the crawl's commits are small and frequent; queue chunks are written and
    // read whole, so they lose nothing by spanning pages. It only takes effect
    // when the database is created.
    conn.execute_batch("PRAGMA page_size = 4096;")
        .map_err(StoreError::sql("configuring"))?;
    let cache_kib = (spec.cache_bytes / 1024).max(64);
    // Checkpoints fsync; letting the WAL reach 64 MiB keeps them rare under heavy appends.
    // A commit does not `fsync` (NORMAL): it survives `kill -9` once written,
    // and a durable frontier syncs the WAL itself, off the commit path
    // (`frontier::disk::commit::sync_loop`).
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
         PRAGMA cache_size = -{cache_kib}; PRAGMA wal_autocheckpoint = 16384;"
    ))
    .map_err(StoreError::sql("configuring"))?;
    if let Some(bytes) = spec.max_size {
        let page: u64 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .map_err(StoreError::sql("configuring"))?;
        let pages = (bytes / page.max(1)).max(1);
        conn.query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))
            .map_err(StoreError::sql("configuring"))?;
    }
    Ok(())
}

fn init_or_check(conn: &Connection, meta: &CrawlMeta, force: bool) -> Result<(), StoreError> {
    let given = serde_json::to_string(meta).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(StoreError::sql("reading the format version"))?;
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(StoreError::sql("reading the format version"))?;
    if version == 0 && tables == 0 {
        let script = format!(
            "BEGIN; {TABLES} {RECRAWL_TABLES} {FIRST_PASS} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
        );
        conn.execute_batch(&script)
            .map_err(StoreError::sql("creating the store"))?;
        conn.execute_batch(super::attempts::TABLE)
            .map_err(StoreError::sql("creating the store"))?;
        return store_meta(conn, &given);
    }
    if version == OLDEST_READABLE {
        // The first pass's start is unknown; its last commit stands in.
        let script = format!(
            "BEGIN; {RECRAWL_TABLES} {FIRST_PASS}
             UPDATE pass SET started_ms = (SELECT updated_ms FROM progress), \
               urls = (SELECT outcomes FROM progress);
             {FETCHED_COLUMNS}
             PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
        );
        conn.execute_batch(&script)
            .map_err(StoreError::sql("upgrading the store to format 4"))?;
    } else if version == 3 {
        let script =
            format!("BEGIN; {FETCHED_COLUMNS} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;");
        conn.execute_batch(&script)
            .map_err(StoreError::sql("upgrading the store to format 4"))?;
    } else if version != SCHEMA_VERSION {
        return Err(StoreError::Version {
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    conn.execute_batch(super::attempts::TABLE)
        .map_err(StoreError::sql("creating the store"))?;
    let stored: Option<String> = conn
        .query_row("SELECT value FROM internal WHERE key = 'crawl'", [], |r| {
            r.get(0)
        })
        .optional()
        .map_err(StoreError::sql("reading the crawl definition"))?;
    match stored {
        Some(stored) if stored == given => Ok(()),
        Some(stored) if !force => Err(StoreError::Conflict { stored, given }),
        _ => store_meta(conn, &given),
    }
}

fn store_meta(conn: &Connection, json: &str) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO internal (key, value) VALUES ('crawl', ?1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [json],
    )
    .map_err(StoreError::sql("storing the crawl definition"))?;
    Ok(())
}

/// Opens the database for reading only, as a status reader in another process
/// does; it sees the last committed state and never blocks the writer.
pub(crate) fn open_reader(dir: &Path) -> Result<Connection, StoreError> {
    let path: PathBuf = dir.join(DB_FILE);
    if !path.exists() {
        return Err(StoreError::Io {
            path,
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no crawl state here"),
        });
    }
    let conn = Connection::open_with_flags(
        &path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(StoreError::sql("opening for reading"))?;
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(StoreError::sql("reading the format version"))?;
    // A version-2 state reads as one without passes until a crawl upgrades it.
    if !(OLDEST_READABLE..=SCHEMA_VERSION).contains(&version) {
        return Err(StoreError::Version {
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(conn)
}

/// Whether a writer holds the directory's lock right now.
pub(crate) fn writer_active(dir: &Path) -> bool {
    let Ok(file) = File::open(dir.join(LOCK_FILE)) else {
        return false;
    };
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(_) => true,
    }
}
