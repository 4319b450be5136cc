//! The Markdown tree sink (`--markdown DIR`): one `.md` file per HTML page.
//!
//! Every 2xx HTML page that has content ([`Page::content`]: the sink asks
//! for it) is written at the mirror's path with `.md` for its extension
//! (see `path.rs`): a front matter (see `front.rs`) and the page's main
//! content as Markdown. Links to pages of the tree point at their files,
//! relatively; every other link is absolute (see `links.rs` for how links
//! to pages saved later are fixed at the end). Images and other files are
//! not saved: their links stay absolute.
//!
//! Files are written whole (a temporary file renamed into place, as the
//! mirror does, with its rules for file/directory clashes) on the blocking
//! pool. When the crawl's completions survive a power cut, the tree's file
//! system is synced after each flush (see [`Sink::unsynced`]). A resumed
//! crawl writes into the same tree: files from before are kept, a page
//! fetched again is rewritten. The first pages of each host are rewritten
//! at the end without their host's boilerplate ([`Sink::revise`]; see
//! [`crate::content::site`]).

mod front;
mod links;
mod path;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use url::Url;

pub use links::LOG_NAME;
pub use path::markdown_path;

use super::mirror::place;
use super::{Page, Sink, SinkError, SinkSummary, Syncable, SyncedFilesystem};
use crate::content::Document;

/// Writes one Markdown file per HTML page under a directory.
pub struct MarkdownSink {
    dir: PathBuf,
    /// `None` while a page is being written (it travels to the blocking pool).
    log: Option<links::LinkLog>,
    files: u64,
    bytes: u64,
    filesystem: Arc<SyncedFilesystem>,
    unsynced: bool,
}

impl MarkdownSink {
    /// Creates `dir` (and its parents) if needed; a tree already there is
    /// written into, its files kept.
    pub fn create(dir: impl AsRef<Path>) -> Result<MarkdownSink, SinkError> {
        let dir = dir.as_ref().to_path_buf();
        let fail = |e| io_error(format!("cannot create {}", dir.display()), e);
        std::fs::create_dir_all(&dir).map_err(fail)?;
        let filesystem = SyncedFilesystem::open(&dir).map_err(fail)?;
        let log = links::LinkLog::open(&dir).map_err(fail)?;
        Ok(MarkdownSink {
            dir,
            log: Some(log),
            files: 0,
            bytes: 0,
            filesystem: Arc::new(filesystem),
            unsynced: false,
        })
    }

    /// Writes one page's file on the blocking pool.
    async fn write(&mut self, job: Job) -> Result<u64, SinkError> {
        let mut log = self
            .log
            .take()
            .ok_or_else(|| SinkError::new("markdown", "an earlier write failed"))?;
        let (result, log) = tokio::task::spawn_blocking(move || {
            let result = job.run(&mut log);
            (result, log)
        })
        .await
        .map_err(|e| SinkError::new("markdown", "writer task failed").with_source(e))?;
        self.log = Some(log);
        let written = result?;
        self.unsynced = true;
        Ok(written)
    }
}

/// One page to write.
struct Job {
    dir: PathBuf,
    url: Url,
    fetched: DateTime<Utc>,
    doc: Arc<Document>,
    /// Keep the file's front matter (a revision: the fetch is the same).
    revise: bool,
}

impl Job {
    /// Writes the file; its size.
    fn run(self, log: &mut links::LinkLog) -> Result<u64, SinkError> {
        let file = markdown_path(&self.dir, &self.url);
        let mut links = links::PageLinks::new(&self.dir, &file);
        let body = self.doc.markdown_with(|url| links.target(url));
        let front = match self.revise {
            true => match std::fs::read_to_string(&file) {
                Ok(old) => front::end_of(&old).map(|end| old[..end].to_string()),
                // Gone (or never written): nothing to revise.
                Err(_) => return Ok(0),
            },
            false => None,
        };
        let front =
            front.unwrap_or_else(|| front::front_matter(&self.url, self.fetched, &self.doc));
        let mut text = front;
        text.push_str(&body);
        text.push('\n');
        let placed = place::save(&self.dir, &file, text.as_bytes())
            .map_err(|e| io_error(format!("cannot save {} as {}", self.url, file.display()), e))?;
        if placed.path == file {
            log.add(&links.pending)
                .map_err(|e| io_error(format!("cannot write {LOG_NAME}"), e))?;
        }
        Ok(text.len() as u64)
    }
}

#[async_trait]
impl Sink for MarkdownSink {
    fn wants_content(&self) -> bool {
        true
    }

    fn wants_revisions(&self) -> bool {
        true
    }

    async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
        let r = &page.record;
        let (Some(doc), Some(200..=299)) = (&page.content, r.status) else {
            return Ok(());
        };
        let job = Job {
            dir: self.dir.clone(),
            url: r.url.clone(),
            // When the exchange started, where bodies are kept; else now,
            // which is when the page finished.
            fetched: page.exchange.as_ref().map_or_else(Utc::now, |e| e.started),
            doc: doc.clone(),
            revise: false,
        };
        let written = self.write(job).await?;
        self.files += 1;
        self.bytes += written;
        Ok(())
    }

    async fn revise(&mut self, page: &Page) -> Result<(), SinkError> {
        let Some(doc) = &page.content else {
            return Ok(());
        };
        let job = Job {
            dir: self.dir.clone(),
            url: page.record.url.clone(),
            fetched: Utc::now(),
            doc: doc.clone(),
            revise: true,
        };
        self.write(job).await?;
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        if let Some(log) = self.log.as_mut() {
            log.flush()
                .map_err(|e| io_error(format!("cannot write {LOG_NAME}"), e))?;
        }
        Ok(())
    }

    /// Its whole file system, in one call, as the mirror's.
    fn unsynced(&mut self) -> Vec<Arc<dyn Syncable>> {
        if !std::mem::take(&mut self.unsynced) {
            return Vec::new();
        }
        vec![self.filesystem.clone()]
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        self.flush().await?;
        drop(self.log.take());
        let dir = self.dir.clone();
        tokio::task::spawn_blocking(move || links::fix_up(&dir))
            .await
            .map_err(|e| SinkError::new("markdown", "link fix-up failed").with_source(e))?
            .map_err(|e| {
                io_error(
                    format!("cannot point links at files in {}", self.dir.display()),
                    e,
                )
            })?;
        Ok(SinkSummary {
            name: "markdown".into(),
            files: vec![self.dir.display().to_string()],
            bytes: self.bytes,
            records: self.files,
            refused: 0,
        })
    }
}

/// An I/O failure while doing `what` (naming the file).
fn io_error(what: String, e: std::io::Error) -> SinkError {
    SinkError::io("markdown", what, e)
}
