//! The state file of a bulk fetch with a recipe (`--state FILE`): where each
//! item's steps and chain have got to, so a run started again with the same
//! command does not fetch again what an earlier one finished.
//!
//! One SQLite row per item, keyed by its URL (without credentials): the next
//! step to run, the URL it starts from (the step before's final URL, or a
//! chain's next page), the page number, the values read so far, and whether
//! the item is done. A row is written after each step and each page has been
//! handed to the outputs, before the next request, so a kill costs at most
//! the request in flight: it is made again (at least once, never skipped).
//! An item that failed keeps the row of its last good point and is retried
//! from there. Each call takes the connection briefly on the blocking pool,
//! never across an `.await`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension};
use url::Url;

use super::index::{IndexCause, IndexError, open_nofollow};

/// Where one item has got to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mark {
    /// The step to run next (0-based); the last step for a chain's pages.
    pub step: usize,
    /// The URL the step starts from: a step's template is resolved against
    /// it, a page is fetched at it.
    pub url: Url,
    /// The page number of the last step's next page (1 before it starts).
    pub page: u32,
    /// The values read by the steps before.
    pub values: Vec<(String, String)>,
    /// The item finished (successfully) in an earlier run.
    pub done: bool,
}

/// The open state file; cheap to clone.
#[derive(Clone)]
pub(crate) struct Journal {
    path: PathBuf,
    conn: Arc<Mutex<Connection>>,
}

impl Journal {
    /// Opens (or creates) the state file at `path`.
    pub(crate) fn open(path: &Path) -> Result<Journal, IndexError> {
        let path = path.to_path_buf();
        let conn = open_nofollow(&path)?;
        let fail = |e: rusqlite::Error| IndexError {
            path: path.clone(),
            source: e.into(),
        };
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             CREATE TABLE IF NOT EXISTS recipe_items (
                 item TEXT PRIMARY KEY,
                 step INTEGER NOT NULL,
                 url TEXT NOT NULL,
                 page INTEGER NOT NULL,
                 vals TEXT NOT NULL,
                 done INTEGER NOT NULL
             );",
        )
        .map_err(fail)?;
        Ok(Journal {
            path,
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Where `item` has got to; `None` when it is new (or its row cannot be
    /// read: a damaged row only costs a fetch from the start).
    pub(crate) async fn lookup(&self, item: &Url) -> Option<Mark> {
        let journal = self.clone();
        let item = item.to_string();
        tokio::task::spawn_blocking(move || journal.lookup_now(&item))
            .await
            .ok()
            .flatten()
    }

    fn lookup_now(&self, item: &str) -> Option<Mark> {
        let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        let (step, url, page, vals, done) = conn
            .query_row(
                "SELECT step, url, page, vals, done FROM recipe_items WHERE item = ?1",
                [item],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, bool>(4)?,
                    ))
                },
            )
            .optional()
            .ok()??;
        Some(Mark {
            step: usize::try_from(step).ok()?,
            url: Url::parse(&url).ok()?,
            page: u32::try_from(page).ok()?,
            values: serde_json::from_str(&vals).ok()?,
            done,
        })
    }

    /// Records where `item` has got to; the error for a person when the
    /// file cannot be written (the run goes on, as if without a state file).
    pub(crate) async fn record(&self, item: &Url, mark: &Mark) -> Result<(), IndexError> {
        let journal = self.clone();
        let item = item.to_string();
        let mark = mark.clone();
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || journal.record_now(&item, &mark))
            .await
            .map_err(|e| IndexError {
                path,
                source: IndexCause::Task(e),
            })?
    }

    fn record_now(&self, item: &str, mark: &Mark) -> Result<(), IndexError> {
        let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        let vals = serde_json::to_string(&mark.values).unwrap_or_else(|_| "[]".into());
        conn.execute(
            "INSERT OR REPLACE INTO recipe_items (item, step, url, page, vals, done)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            rusqlite::params![
                item,
                mark.step as i64,
                mark.url.as_str(),
                i64::from(mark.page),
                vals,
                mark.done
            ],
        )
        .map(|_| ())
        .map_err(|e| IndexError {
            path: self.path.clone(),
            source: e.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_mark_is_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        let item = Url::parse("http://h/flags/br/metadata.json").unwrap();
        let journal = Journal::open(&path).unwrap();
        assert_eq!(journal.lookup(&item).await, None);
        let mark = Mark {
            step: 1,
            url: Url::parse("http://h/api?page=3").unwrap(),
            page: 3,
            values: vec![("country".into(), "Brazil".into())],
            done: false,
        };
        journal.record(&item, &mark).await.unwrap();
        drop(journal);
        let again = Journal::open(&path).unwrap();
        assert_eq!(again.lookup(&item).await, Some(mark));
    }
}
