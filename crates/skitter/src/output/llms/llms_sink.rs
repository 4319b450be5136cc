//! The llms.txt sink (`--llms-txt FILE`): an index of the site in
//! llmstxt.org's format at FILE (see [`super::index`] for its sections), and
//! every page's Markdown in the file beside it ([`full_path`]:
//! `llms.txt` → `llms-full.txt`).
//!
//! Memory stays bounded: of each page only a small [`Entry`] is kept (URL,
//! title and description, each capped), for at most [`MAX_LISTED`] pages;
//! pages past that still go to the full file, and llms.txt says how many it
//! left out. The full file is streamed as pages arrive, in that order, into
//! `NAME.partial` beside it, in batches of whole pages written on the
//! blocking pool; at the end of the crawl it is renamed into place, and
//! llms.txt written to a temporary file and renamed over FILE. So a killed
//! crawl leaves the files of the last finished one as they were (and its
//! own `.partial`), never half an index.
//!
//! Each page in the full file is
//! ```text
//! # Page title
//! Source: https://example.org/docs/install
//!
//! (the page's Markdown)
//!
//! ```

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;

use super::entry::Entry;
use super::index;
use crate::output::{Page, Sink, SinkError, SinkSummary, Syncable, SyncedFile};

/// Pages listed in llms.txt at most; past them pages go to the full file only.
pub const MAX_LISTED: usize = 50_000;

/// Bytes of the full file gathered before a write.
const WRITE_BYTES: usize = 256 * 1024;

const NAME: &str = "llms-txt";

/// Writes llms.txt and llms-full.txt; see the module docs.
pub struct LlmsTxtSink {
    path: PathBuf,
    full: PathBuf,
    partial: Arc<SyncedFile>,
    pending: Vec<u8>,
    entries: Vec<Entry>,
    max_listed: usize,
    left_out: u64,
    pages: u64,
    bytes: u64,
}

/// The full file's path for llms.txt at `path`: `-full` before the last
/// extension, in the same folder (`out/llms.txt` → `out/llms-full.txt`,
/// `site.md` → `site-full.md`, `index` → `index-full`).
pub fn full_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "llms.txt".into());
    let cut = name.rfind('.').filter(|&at| at > 0).unwrap_or(name.len());
    path.with_file_name(format!("{}-full{}", &name[..cut], &name[cut..]))
}

impl LlmsTxtSink {
    /// Will write llms.txt at `path` and the full file beside it (see
    /// [`full_path`]); starts the full file's `.partial` now. Symbolic links
    /// at either name are replaced, never written through.
    pub fn create(path: impl AsRef<Path>) -> Result<LlmsTxtSink, SinkError> {
        LlmsTxtSink::with_cap(path, MAX_LISTED)
    }

    /// [`LlmsTxtSink::create`] listing at most `max_listed` pages.
    pub fn with_cap(path: impl AsRef<Path>, max_listed: usize) -> Result<LlmsTxtSink, SinkError> {
        let path = path.as_ref().to_path_buf();
        let full = full_path(&path);
        let partial = partial_path(&full);
        let file = crate::output::create_output(&partial)
            .map_err(|e| SinkError::io(NAME, format!("cannot create {}", partial.display()), e))?;
        Ok(LlmsTxtSink {
            path,
            full,
            partial: Arc::new(SyncedFile::new(file, partial)),
            pending: Vec::new(),
            entries: Vec::new(),
            max_listed,
            left_out: 0,
            pages: 0,
            bytes: 0,
        })
    }

    /// Writes the gathered pages with one `write_all`, on the blocking pool.
    async fn write_pending(&mut self) -> Result<(), SinkError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let buf = std::mem::take(&mut self.pending);
        let file = self.partial.clone();
        let len = buf.len() as u64;
        blocking(
            move || file.file().write_all(&buf),
            || format!("cannot write {}", self.partial.path().display()),
        )
        .await?;
        self.bytes += len;
        Ok(())
    }
}

/// Runs `work` on the blocking pool; its error becomes the sink's, doing `what`.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> io::Result<T> + Send + 'static,
    what: impl FnOnce() -> String,
) -> Result<T, SinkError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(done)) => Ok(done),
        Ok(Err(e)) => Err(SinkError::io(NAME, what(), e)),
        Err(e) => Err(SinkError::new(NAME, "writer task failed").with_source(e)),
    }
}

fn partial_path(full: &Path) -> PathBuf {
    let mut name = full.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    full.with_file_name(name)
}

#[async_trait]
impl Sink for LlmsTxtSink {
    fn wants_content(&self) -> bool {
        true
    }

    async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
        let Some(doc) = super::document(page) else {
            return Ok(());
        };
        let url = &page.record.url;
        let entry = Entry::new(url, page.record.depth, doc);
        let _ = write!(self.pending, "# {}\nSource: {url}\n\n", entry.title);
        let markdown = doc.markdown();
        if !markdown.trim().is_empty() {
            self.pending
                .extend_from_slice(markdown.trim_end().as_bytes());
            self.pending.extend_from_slice(b"\n\n");
        }
        if self.entries.len() < self.max_listed {
            self.entries.push(entry);
        } else {
            self.left_out += 1;
        }
        self.pages += 1;
        if self.pending.len() >= WRITE_BYTES {
            self.write_pending().await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        self.write_pending().await
    }

    fn unsynced(&mut self) -> Vec<Arc<dyn Syncable>> {
        vec![self.partial.clone()]
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        self.write_pending().await?;
        let full_name = self.full.file_name().unwrap_or_default();
        let full_name = full_name.to_string_lossy().into_owned();
        let (partial, full, path) = (self.partial.clone(), self.full.clone(), self.path.clone());
        let (mut entries, left_out) = (std::mem::take(&mut self.entries), self.left_out);
        let what = format!(
            "cannot write {} and {}",
            self.path.display(),
            self.full.display()
        );
        // Sorting up to MAX_LISTED entries is work for the blocking pool too.
        let publish = move || {
            let text = index::render(&mut entries, left_out, &full_name);
            publish(&partial, &full, &path, &text).map(|()| text.len() as u64)
        };
        self.bytes += blocking(publish, || what).await?;
        Ok(SinkSummary {
            name: NAME.into(),
            files: vec![
                self.path.display().to_string(),
                self.full.display().to_string(),
            ],
            bytes: self.bytes,
            records: self.pages,
            refused: 0,
        })
    }
}

/// Puts both files in place: the full file synced and renamed from its
/// `.partial`, then llms.txt written whole to a temporary file, synced and
/// renamed over `path` (a rename replaces a link at `path`, never follows it).
fn publish(partial: &SyncedFile, full: &Path, path: &Path, text: &str) -> io::Result<()> {
    partial.file().sync_data()?;
    std::fs::rename(partial.path(), full)?;
    let dir = crate::output::parent(path);
    let mut tmp = crate::output::temp_beside(dir, ".llms.tmp")?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_data()?;
    tmp.persist(path).map_err(|e| e.error)?;
    crate::output::sync_dir(dir)
}

#[cfg(test)]
pub(super) mod tests;
