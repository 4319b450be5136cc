//! The items database sink (`--items items.db`, `--items postgres://…`): every
//! page's extracted items as rows of a table per rule set, in SQLite or
//! PostgreSQL.
//!
//! **Typed columns**, not one JSONB document per item: a rule set's fields are
//! known before the crawl (its [`TableSchema`]), so each becomes a column of its
//! type that a user queries, indexes and sums directly, in SQLite too (which has
//! no JSONB). Only fields that are structured by nature (arrays, JSON pointer
//! picks) are JSON. See `schema.rs` for the columns and how a value that does not
//! fit its column is stored.
//!
//! **Idempotent.** A row's key is `(page_url, item_index)`. Recording a page
//! deletes that page's rows in every rule set that matched it, then inserts its
//! items, in one transaction: a page fetched again (after a kill, on resume, by
//! two Redis workers) never has its items twice, and one that now yields fewer
//! items loses the stale rows.
//!
//! **Batched.** Pages are buffered and written in one transaction per batch:
//! when it holds [`BATCH_ITEMS`] items or [`BATCH_PAGES`] pages, and on every
//! [`Sink::flush`]. The writer (a blocking-pool thread for SQLite, a task for
//! PostgreSQL) takes batches over a channel of [`QUEUED_BATCHES`], so the crawl
//! goes on filling the next batch while one is written, and waits when the
//! database falls behind. `flush` returns once everything recorded so far is
//! committed: the crawler completes a URL's lease only after that (see
//! `handoff`), so a page either has its items in the database or is fetched
//! again. Pages without items cost nothing.
//!
//! **A refused value costs its page, not the crawl.** When the database refuses
//! a batch for its data (a value it cannot store: `refuses_data` in `postgres.rs` and
//! `sqlite.rs`), the batch is written again page by page, each page in its own
//! transaction; the pages still refused are left out, logged with their URL, and
//! their items counted as refused ([`ItemsDbSink::refused`], the summary's
//! `refused`, the report's `items_refused`). Such a page keeps the rows an
//! earlier fetch gave it. Any other failure (the connection, the disk) stops the
//! crawl, since every page after it would fail too.
//!
//! **Several writers.** SQLite runs in WAL mode with a busy timeout, each batch
//! in an immediate transaction; PostgreSQL serialises schema changes under an
//! advisory lock, and retries a batch that lost a race (unique violation,
//! deadlock, serialisation failure).

mod batch;
mod error;
mod postgres;
mod schema;
mod sqlite;
mod tls;

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::{Page, Sink, SinkError, SinkSummary, Syncable, SyncedPath};
use crate::parse::items::TableSchema;
use batch::{Batch, Layout};

pub use batch::{BATCH_ITEMS, BATCH_PAGES};
pub use error::ItemsDbError;

/// Batches waiting for the writer at most; beyond that `record` waits.
pub const QUEUED_BATCHES: usize = 2;

/// What the sink sends its writer.
pub(crate) enum Job {
    /// Write these rows in one transaction.
    Write(Batch),
    /// Answer once every batch before this one is committed, with the items
    /// the database refused since the last answer.
    Flush(oneshot::Sender<u64>),
}

/// The writer: returns when the sink closes the channel, or at its first error.
type Writer = JoinHandle<Result<(), ItemsDbError>>;

/// A [`Sink`] that stores every page's items in SQLite or PostgreSQL; see the
/// [module documentation](self).
pub struct ItemsDbSink {
    /// The target as messages show it (no password).
    target: String,
    layout: Layout,
    batch: Batch,
    jobs: Option<mpsc::Sender<Job>>,
    writer: Option<Writer>,
    /// Items sent to the writer, and of those, committed and refused (as of
    /// the last flush).
    sent: u64,
    written: u64,
    refused: u64,
    /// A SQLite database's write-ahead log, where its commits are until a
    /// checkpoint, with whether a flush committed to it since it was last
    /// handed out to be synced (see [`Sink::unsynced`]). PostgreSQL makes a
    /// commit durable before answering.
    wal: Option<Arc<SyncedPath>>,
    unsynced: bool,
}

impl std::fmt::Debug for ItemsDbSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ItemsDbSink")
            .field("target", &self.target)
            .field("written", &self.written)
            .finish_non_exhaustive()
    }
}

impl ItemsDbSink {
    /// Opens the database at `target` and makes its tables ready for `schemas`:
    /// a `postgres://` or `postgresql://` URL is a PostgreSQL database (TCP,
    /// with TLS as libpq's `sslmode` and `sslrootcert` say, up to
    /// `verify-full`; or a Unix socket), anything else the path of a SQLite
    /// file, created if missing.
    ///
    /// Missing tables are created and tables missing a field's column gain it;
    /// a column whose type conflicts with its field's is an error, as is a
    /// table lacking the fixed columns. Must be called within a tokio runtime.
    pub async fn open(target: &str, schemas: Vec<TableSchema>) -> Result<Self, ItemsDbError> {
        let shown = error::redact(target);
        schema::validate(&shown, &schemas)?;
        let (jobs, rx) = mpsc::channel(QUEUED_BATCHES);
        let writer = if is_postgres(target) {
            postgres::start(target, &shown, &schemas, rx).await?
        } else {
            sqlite::start(std::path::Path::new(target), &shown, &schemas, rx).await?
        };
        let layout = Layout::new(schemas);
        let wal =
            (!is_postgres(target)).then(|| Arc::new(SyncedPath(format!("{target}-wal").into())));
        Ok(ItemsDbSink {
            wal,
            unsynced: false,
            target: shown,
            batch: layout.batch(),
            layout,
            jobs: Some(jobs),
            writer: Some(writer),
            sent: 0,
            written: 0,
            refused: 0,
        })
    }

    /// The target, as messages show it (a PostgreSQL password is `***`).
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Values stored as `NULL` so far because they did not fit their column.
    pub fn mismatched(&self) -> u64 {
        self.layout.mismatched
    }

    /// Items committed so far (as of the last flush).
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Items left out so far (as of the last flush) because the database
    /// refused a value of their page; see the [module documentation](self).
    pub fn refused(&self) -> u64 {
        self.refused
    }

    async fn send(&mut self, job: Job) -> Result<(), SinkError> {
        let sent = match &self.jobs {
            Some(jobs) => jobs.send(job).await.is_ok(),
            None => false,
        };
        if sent {
            Ok(())
        } else {
            Err(self.writer_failure().await)
        }
    }

    async fn send_batch(&mut self) -> Result<(), SinkError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::replace(&mut self.batch, self.layout.batch());
        let items = batch.items as u64;
        self.send(Job::Write(batch)).await?;
        self.sent += items;
        Ok(())
    }

    /// The writer stopped: its error, for the crawl.
    async fn writer_failure(&mut self) -> SinkError {
        self.jobs = None;
        let error = match self.writer.take() {
            Some(writer) => match writer.await {
                Ok(Err(e)) => e,
                _ => ItemsDbError::WriterGone {
                    target: self.target.clone(),
                },
            },
            None => ItemsDbError::WriterGone {
                target: self.target.clone(),
            },
        };
        error.into()
    }
}

impl From<ItemsDbError> for SinkError {
    /// The database's error with its causes' text in the message: its own
    /// `Display` leaves them to the source chain, which a crawl report (one
    /// line of text) would not show.
    fn from(e: ItemsDbError) -> SinkError {
        SinkError {
            message: e.chain(),
            source: Some(Box::new(e)),
            ..SinkError::new("items", "")
        }
    }
}

/// Whether `target` names a PostgreSQL database rather than a SQLite file.
fn is_postgres(target: &str) -> bool {
    let lower = target.get(..13).unwrap_or(target).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

#[async_trait]
impl Sink for ItemsDbSink {
    async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
        let Some(items) = &page.items else {
            return Ok(());
        };
        self.layout
            .add(&mut self.batch, page.record.url.as_str(), items)
            .map_err(|e| {
                SinkError::new("items", format!("{}: {}", self.target, page.record.url))
                    .with_source(e)
            })?;
        if self.batch.is_full() {
            self.send_batch().await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        if self.batch.is_empty() && self.sent == self.written + self.refused {
            return Ok(());
        }
        self.send_batch().await?;
        let (done, committed) = oneshot::channel();
        self.send(Job::Flush(done)).await?;
        match committed.await {
            Ok(refused) => self.refused += refused,
            Err(_) => return Err(self.writer_failure().await),
        }
        self.written = self.sent - self.refused;
        self.unsynced = true;
        Ok(())
    }

    fn unsynced(&mut self) -> Vec<Arc<dyn Syncable>> {
        match (&self.wal, std::mem::take(&mut self.unsynced)) {
            (Some(wal), true) => vec![wal.clone()],
            _ => Vec::new(),
        }
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        self.flush().await?;
        self.jobs = None;
        if let Some(writer) = self.writer.take() {
            match writer.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e.into()),
                Err(_) => {
                    let gone = ItemsDbError::WriterGone {
                        target: self.target.clone(),
                    };
                    return Err(gone.into());
                }
            }
        }
        if self.layout.mismatched > 0 {
            tracing::warn!(
                target = %self.target,
                values = self.layout.mismatched,
                "items: values that did not fit their column were stored as NULL"
            );
        }
        if self.refused > 0 {
            tracing::warn!(
                target = %self.target,
                items = self.refused,
                "items: the database refused some pages' values; their items were left out"
            );
        }
        Ok(SinkSummary {
            name: "items".to_string(),
            files: vec![self.target.clone()],
            bytes: 0,
            records: self.written,
            refused: self.refused,
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn postgres_targets_are_told_from_paths() {
        for (target, pg) in [
            ("postgres://h/db", true),
            ("PostgreSQL://u@h/db", true),
            ("items.db", false),
            ("postgres", false),
            ("./postgres://x", false),
            ("", false),
        ] {
            assert_eq!(super::is_postgres(target), pg, "{target}");
        }
    }
}
