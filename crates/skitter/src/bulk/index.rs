//! The fetch index of an output directory (`--if-modified`): for each URL saved
//! there, what the next run needs to make its fetch conditional and to tell
//! whether the body changed.
//!
//! One file, `DIR/.skitter-fetch-index`, an SQLite database with one table:
//!
//! ```sql
//! CREATE TABLE fetched (
//!     url TEXT PRIMARY KEY,   -- the input URL, credentials removed
//!     final_url TEXT NOT NULL, -- where redirects led (the URL the validators belong to)
//!     etag TEXT, last_modified TEXT,  -- the validators, verbatim
//!     sha1 TEXT NOT NULL,     -- base32 SHA-1 of the payload as received (the WARC payload digest)
//!     captured_at TEXT NOT NULL, -- when that payload was fetched (RFC 3339): a revisit's WARC-Refers-To-Date
//!     checked_at TEXT NOT NULL   -- when the URL was last fetched or revalidated
//! )
//! ```
//!
//! Memory stays bounded whatever the batch size: a lookup is one primary-key
//! read, and SQLite keeps a fixed page cache, never the whole index.
//!
//! Crash safety: the runner writes a URL's row only after its file is saved,
//! in transactions of up to [`BATCH`] rows; SQLite's rollback journal makes each
//! transaction all or nothing, so a kill leaves the index as of the last
//! commit. The index then lags the files, never leads them: a file saved but
//! not yet indexed is fetched in full (and compared by digest) next time,
//! never wrongly taken as unchanged.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use data_encoding::BASE32;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use url::Url;

use crate::fetch::Validators;

/// The index file's name in the output directory.
pub const INDEX_FILE: &str = ".skitter-fetch-index";

/// Rows per transaction: the most a kill can lose.
pub(crate) const BATCH: usize = 256;

/// What an earlier run saved for a URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Known {
    /// Where redirects led: the URL the validators and payload belong to.
    pub final_url: Url,
    /// Its `ETag` and `Last-Modified`.
    pub validators: Validators,
    /// SHA-1 of the payload as received.
    pub sha1: [u8; 20],
    /// When that payload was fetched.
    pub captured_at: DateTime<Utc>,
}

/// A change to one URL's row.
#[derive(Debug)]
pub(crate) enum Update {
    /// The URL's row is now this (fetched or revalidated at `checked_at`).
    Put {
        /// The input URL.
        url: Url,
        /// What the row holds.
        known: Known,
        /// When it was fetched or revalidated.
        checked_at: DateTime<Utc>,
    },
    /// The URL is gone (404/410): its row is dropped.
    Remove(Url),
}

pub use crate::crawl::build_error::{IndexCause, IndexError};

/// The open index; cheap to clone, each call takes the connection briefly (on
/// the blocking pool, never across an `.await`).
#[derive(Clone)]
pub(crate) struct FetchIndex {
    path: PathBuf,
    conn: Arc<Mutex<Connection>>,
}

/// Opens (or creates) the SQLite file at `path` for one thread's use, never
/// through a symbolic link: a link planted at its name would have SQLite write
/// wherever it points. Checked first for a clear error; `SQLITE_OPEN_NOFOLLOW`
/// closes the gap between the check and the open.
pub(super) fn open_nofollow(path: &Path) -> Result<Connection, IndexError> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(IndexError {
            path: path.to_path_buf(),
            source: IndexCause::SymbolicLink,
        });
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    Connection::open_with_flags(path, flags).map_err(|e| IndexError {
        path: path.to_path_buf(),
        source: e.into(),
    })
}

impl FetchIndex {
    /// Opens (or creates) the index of output directory `dir`.
    pub(crate) fn open(dir: &Path) -> Result<FetchIndex, IndexError> {
        let path = dir.join(INDEX_FILE);
        let conn = open_nofollow(&path)?;
        let fail = |e: rusqlite::Error| IndexError {
            path: path.clone(),
            source: e.into(),
        };
        conn.execute_batch(
            "PRAGMA journal_mode = DELETE;
             PRAGMA synchronous = NORMAL;
             CREATE TABLE IF NOT EXISTS fetched (
                 url TEXT PRIMARY KEY,
                 final_url TEXT NOT NULL,
                 etag TEXT,
                 last_modified TEXT,
                 sha1 TEXT NOT NULL,
                 captured_at TEXT NOT NULL,
                 checked_at TEXT NOT NULL
             );",
        )
        .map_err(fail)?;
        Ok(FetchIndex {
            path,
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// What the index holds for `url`; `None` also when its row cannot be read
    /// (a damaged row only costs a full fetch).
    pub(crate) async fn lookup(&self, url: &Url) -> Option<Known> {
        let index = self.clone();
        let url = url.to_string();
        tokio::task::spawn_blocking(move || index.lookup_now(&url))
            .await
            .ok()
            .flatten()
    }

    fn lookup_now(&self, url: &str) -> Option<Known> {
        let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        let row = conn
            .query_row(
                "SELECT final_url, etag, last_modified, sha1, captured_at
                 FROM fetched WHERE url = ?1",
                [url],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        r.get::<_, Option<String>>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                    ))
                },
            )
            .optional()
            .ok()??;
        let (final_url, etag, last_modified, sha1, captured_at) = row;
        Some(Known {
            final_url: Url::parse(&final_url).ok()?,
            validators: Validators {
                etag,
                last_modified,
            },
            sha1: BASE32.decode(sha1.as_bytes()).ok()?.try_into().ok()?,
            captured_at: DateTime::parse_from_rfc3339(&captured_at)
                .ok()?
                .with_timezone(&Utc),
        })
    }

    /// Applies `updates` in one transaction, on the blocking pool.
    pub(crate) async fn apply(&self, updates: Vec<Update>) -> Result<(), IndexError> {
        if updates.is_empty() {
            return Ok(());
        }
        let index = self.clone();
        tokio::task::spawn_blocking(move || index.apply_now(&updates))
            .await
            .unwrap_or_else(|e| {
                Err(IndexError {
                    path: self.path.clone(),
                    source: e.into(),
                })
            })
    }

    fn apply_now(&self, updates: &[Update]) -> Result<(), IndexError> {
        let fail = |e: rusqlite::Error| IndexError {
            path: self.path.clone(),
            source: e.into(),
        };
        let mut conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        let tx = conn.transaction().map_err(fail)?;
        for update in updates {
            match update {
                Update::Put {
                    url,
                    known,
                    checked_at,
                } => tx.execute(
                    "INSERT OR REPLACE INTO fetched
                     (url, final_url, etag, last_modified, sha1, captured_at, checked_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![
                        url.as_str(),
                        known.final_url.as_str(),
                        known.validators.etag,
                        known.validators.last_modified,
                        BASE32.encode(&known.sha1),
                        rfc3339(known.captured_at),
                        rfc3339(*checked_at),
                    ],
                ),
                Update::Remove(url) => {
                    tx.execute("DELETE FROM fetched WHERE url = ?1", [url.as_str()])
                }
            }
            .map_err(fail)?;
        }
        tx.commit().map_err(fail)
    }
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(n: u8) -> Known {
        Known {
            final_url: Url::parse("http://h/final").unwrap(),
            validators: Validators {
                etag: Some(format!("\"v{n}\"")),
                last_modified: None,
            },
            sha1: [n; 20],
            captured_at: DateTime::parse_from_rfc3339("2026-12-01T10:00:00.123456Z")
                .unwrap()
                .with_timezone(&Utc),
        }
    }

    #[tokio::test]
    async fn rows_are_last_wins_and_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let a = Url::parse("http://h/a").unwrap();
        let b = Url::parse("http://h/b").unwrap();
        let index = FetchIndex::open(dir.path()).unwrap();
        assert_eq!(index.lookup(&a).await, None);
        let put = |url: &Url, n| Update::Put {
            url: url.clone(),
            known: known(n),
            checked_at: Utc::now(),
        };
        index
            .apply(vec![put(&a, 1), put(&b, 1), put(&a, 2)])
            .await
            .unwrap();
        index.apply(vec![Update::Remove(b.clone())]).await.unwrap();
        drop(index);
        let index = FetchIndex::open(dir.path()).unwrap();
        assert_eq!(index.lookup(&a).await, Some(known(2)));
        assert_eq!(index.lookup(&b).await, None);
    }

    #[tokio::test]
    async fn a_damaged_row_is_no_row() {
        let dir = tempfile::tempdir().unwrap();
        let index = FetchIndex::open(dir.path()).unwrap();
        {
            let conn = index.conn.lock().unwrap();
            conn.execute(
                "INSERT INTO fetched VALUES ('http://h/x', 'not a url', NULL, NULL, '??', 'x', 'x')",
                [],
            )
            .unwrap();
        }
        assert_eq!(index.lookup(&Url::parse("http://h/x").unwrap()).await, None);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_at_the_index_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim.db");
        let link = dir.path().join(INDEX_FILE);
        // A dangling link: SQLite would create the file where it points.
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let Err(err) = FetchIndex::open(dir.path()) else {
            panic!("opened through a link");
        };
        assert!(matches!(err.source, IndexCause::SymbolicLink), "{err}");
        assert!(err.to_string().contains(INDEX_FILE), "{err}");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(!victim.exists(), "a file was made through the link");
        // A link to an existing file: left as it was.
        std::fs::write(&victim, b"keep").unwrap();
        assert!(FetchIndex::open(dir.path()).is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    }
}
