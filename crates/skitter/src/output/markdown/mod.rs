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
//! mirror does, with its rules for file/directory clashes) by a writer
//! thread of the sink's own, fed through a bounded queue of
//! [`QUEUE`] pages: the crawl's one sink task hands a page over and goes on
//! to the next sink, where waiting for each file (a thread hop, a create
//! and a rename, 100–300 µs) held every sink behind it and capped a crawl
//! of small pages at a few thousand pages a second. [`Sink::flush`] waits
//! until every page handed over is written, so a page's lease is still
//! completed only once its file is in place; a failed write is reported
//! on the next page, flush or finish. When the crawl's completions survive a power cut, the tree's file
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
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::{mpsc, oneshot};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use url::Url;

pub use links::LOG_NAME;
pub use path::markdown_path;

use super::mirror::place;
use super::{Page, Sink, SinkError, SinkSummary, Syncable, SyncedFilesystem};
use crate::content::Document;

/// Pages handed to the writer thread and not yet written, at most: the
/// sink task waits for room beyond this.
pub const QUEUE: usize = 256;

/// Writes one Markdown file per HTML page under a directory.
pub struct MarkdownSink {
    dir: PathBuf,
    /// `None` once finished.
    writer: Option<Writer>,
    files: u64,
    bytes: u64,
    filesystem: Arc<SyncedFilesystem>,
    unsynced: bool,
}

/// The writer thread and the queue to it.
struct Writer {
    queue: mpsc::Sender<Msg>,
    /// Set by the thread when a write failed; the error waits for a flush.
    failed: Arc<AtomicBool>,
    /// Ends with what it wrote, for the link fix-up.
    thread: std::thread::JoinHandle<Tree>,
}

enum Msg {
    Write(Job),
    /// Answered once every page before it is written (and the link log
    /// handed to the file): the files and bytes written since the last
    /// flush, or the first error.
    Flush(oneshot::Sender<Result<(u64, u64), SinkError>>),
}

impl MarkdownSink {
    /// Creates `dir` (and its parents) if needed; a tree already there is
    /// written into, its files kept.
    pub fn create(dir: impl AsRef<Path>) -> Result<MarkdownSink, SinkError> {
        let dir = dir.as_ref().to_path_buf();
        let fail = |e| io_error(format!("cannot create {}", dir.display()), e);
        std::fs::create_dir_all(&dir).map_err(fail)?;
        // A tree with nothing in it yet is all the writer's: what is not in
        // its memory is not on disk, and it need not ask (see `Tree`).
        let fresh = std::fs::read_dir(&dir).map_err(fail)?.next().is_none();
        let filesystem = SyncedFilesystem::open(&dir).map_err(fail)?;
        let log = links::LinkLog::open(&dir).map_err(fail)?;
        let (queue, jobs) = mpsc::channel(QUEUE);
        let failed = Arc::new(AtomicBool::new(false));
        let flag = failed.clone();
        let thread = std::thread::Builder::new()
            .name("skitter-markdown".into())
            .spawn(move || write_all(jobs, log, Tree::new(fresh), &flag))
            .map_err(fail)?;
        Ok(MarkdownSink {
            dir,
            writer: Some(Writer {
                queue,
                failed,
                thread,
            }),
            files: 0,
            bytes: 0,
            filesystem: Arc::new(filesystem),
            unsynced: false,
        })
    }

    /// Hands one page's file to the writer thread.
    async fn write(&mut self, job: Job) -> Result<(), SinkError> {
        let writer = self.writer.as_ref().ok_or_else(finished)?;
        if writer.failed.load(Ordering::Acquire) {
            // The error itself comes back with the flush.
            self.drain().await?;
        }
        let writer = self.writer.as_ref().ok_or_else(finished)?;
        writer
            .queue
            .send(Msg::Write(job))
            .await
            .map_err(|_| SinkError::new("markdown", "the writer thread is gone"))?;
        self.unsynced = true;
        Ok(())
    }

    /// Waits until every page handed over is written.
    async fn drain(&mut self) -> Result<(), SinkError> {
        let writer = self.writer.as_ref().ok_or_else(finished)?;
        let (tx, rx) = oneshot::channel();
        let gone = || SinkError::new("markdown", "the writer thread is gone");
        writer
            .queue
            .send(Msg::Flush(tx))
            .await
            .map_err(|_| gone())?;
        let (files, bytes) = rx.await.map_err(|_| gone())??;
        self.files += files;
        self.bytes += bytes;
        Ok(())
    }
}

fn finished() -> SinkError {
    SinkError::new("markdown", "written to after its end")
}

/// What the writer thread knows of the tree it writes: the files it placed
/// and the directories it made, so neither a page's links nor its file's
/// parents cost a `stat` each.
struct Tree {
    files: links::Written,
    dirs: place::KnownDirs,
    /// The files of URLs met lately (pages and their links).
    paths: path::Paths,
}

impl Tree {
    /// For a tree that had nothing in it (`fresh`), or files from before.
    fn new(fresh: bool) -> Tree {
        Tree {
            files: links::Written::new(fresh),
            dirs: place::KnownDirs::new(fresh),
            paths: path::Paths::default(),
        }
    }
}

/// The writer thread: writes each page in turn; after a failure it writes
/// nothing more and gives the error to the next flush. Returns what it wrote
/// when the queue closes.
fn write_all(
    mut jobs: mpsc::Receiver<Msg>,
    mut log: links::LinkLog,
    mut tree: Tree,
    failed: &AtomicBool,
) -> Tree {
    let (mut files, mut bytes, mut error) = (0, 0, None);
    while let Some(msg) = jobs.blocking_recv() {
        match msg {
            Msg::Write(job) if error.is_none() => {
                let revise = job.revise;
                match job.run(&mut log, &mut tree) {
                    Ok(written) if !revise => {
                        files += 1;
                        bytes += written;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        error = Some(e);
                        failed.store(true, Ordering::Release);
                    }
                }
            }
            Msg::Write(_) => {}
            Msg::Flush(reply) => {
                let answer = match error.take() {
                    Some(e) => Err(e),
                    None => log
                        .flush()
                        .map(|()| (std::mem::take(&mut files), std::mem::take(&mut bytes)))
                        .map_err(|e| io_error(format!("cannot write {LOG_NAME}"), e)),
                };
                if answer.is_err() {
                    // Once failed, always failed: later pages are not written.
                    error = Some(SinkError::new("markdown", "an earlier write failed"));
                }
                let _ = reply.send(answer);
            }
        }
    }
    tree
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
    fn run(self, log: &mut links::LinkLog, tree: &mut Tree) -> Result<u64, SinkError> {
        let file = tree.paths.get(&self.dir, &self.url);
        let mut links =
            links::PageLinks::new(&self.dir, &file, &tree.files).with_paths(&mut tree.paths);
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
        let placed = place::save_known(&self.dir, &file, text.as_bytes(), &mut tree.dirs)
            .map_err(|e| io_error(format!("cannot save {} as {}", self.url, file.display()), e))?;
        let pending = links.pending;
        tree.files.placed(&placed);
        if placed.path == file {
            log.add(&pending)
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
        self.write(job).await
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
        self.write(job).await
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        self.drain().await
    }

    /// Its whole file system, in one call, as the mirror's.
    fn unsynced(&mut self) -> Vec<Arc<dyn Syncable>> {
        if !std::mem::take(&mut self.unsynced) {
            return Vec::new();
        }
        vec![self.filesystem.clone()]
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        self.drain().await?;
        // Finished once already: the file system answers for the tree.
        let mut tree = Tree::new(false);
        if let Some(writer) = self.writer.take() {
            drop(writer.queue);
            // The queue is empty (drained just now): the thread ends at once.
            tree = tokio::task::spawn_blocking(move || writer.thread.join())
                .await
                .map_err(|e| SinkError::new("markdown", "writer thread lost").with_source(e))?
                .map_err(|_| SinkError::new("markdown", "the writer thread panicked"))?;
        }
        let dir = self.dir.clone();
        tokio::task::spawn_blocking(move || links::fix_up(&dir, &tree.files))
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
