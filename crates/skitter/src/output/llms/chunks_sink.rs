//! The chunks sink (`--chunks FILE`, `--chunk-tokens N`): each HTML page's
//! Markdown as retrieval chunks of at most N `cl100k_base` tokens (see
//! [`super::chunk`]), one JSON line each:
//!
//! ```text
//! {"url":…,"title":…,"chunk":0,"headings":["Guide","Install"],"tokens":87,"markdown":"## Install\n\n…"}
//! ```
//! `chunk` counts from 0 within the page; `title` is the page's (as in
//! llms.txt); `headings` the heading path, outermost first.
//!
//! Counting tokens is CPU work of about a millisecond per 50 KB of text, and
//! a page is counted about twice; so a page is chunked, and its lines
//! written with one `write_all`, on the blocking pool. One page is in work at
//! a time: the next page waits for it (a bound on memory and threads), while
//! the crawl goes on. A killed crawl leaves whole pages' lines, at most the
//! last one torn.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;
use tokio::task::JoinHandle;

use super::chunk::{Chunk, chunk_document};
use super::entry::title;
use crate::output::{Page, Sink, SinkError, SinkSummary, Syncable, SyncedFile};

/// Tokens per chunk unless set.
pub const DEFAULT_CHUNK_TOKENS: usize = 512;

const NAME: &str = "chunks";

/// One page's lines written: chunks and bytes.
type Job = JoinHandle<Result<(u64, u64), SinkError>>;

/// Writes each HTML page as chunks; see the module docs.
pub struct ChunksSink {
    file: Arc<SyncedFile>,
    max_tokens: usize,
    job: Option<Job>,
    pages: u64,
    chunks: u64,
    bytes: u64,
}

/// A chunk's line.
#[derive(Serialize)]
struct Line<'a> {
    url: &'a str,
    title: &'a str,
    chunk: usize,
    headings: &'a [String],
    tokens: usize,
    markdown: &'a str,
}

impl ChunksSink {
    /// Writes to `path`, created or truncated now (a symbolic link there is
    /// replaced), chunks of at most `max_tokens` tokens (at least
    /// [`super::MIN_CHUNK_TOKENS`]).
    pub fn create(path: impl AsRef<Path>, max_tokens: usize) -> Result<ChunksSink, SinkError> {
        let path = path.as_ref();
        let file = crate::output::create_output(path)
            .map_err(|e| SinkError::io(NAME, format!("cannot create {}", path.display()), e))?;
        Ok(ChunksSink {
            file: Arc::new(SyncedFile::new(file, PathBuf::from(path))),
            max_tokens,
            job: None,
            pages: 0,
            chunks: 0,
            bytes: 0,
        })
    }

    /// Waits for the page in work, if any.
    async fn settle(&mut self) -> Result<(), SinkError> {
        let Some(job) = self.job.take() else {
            return Ok(());
        };
        let (chunks, bytes) = job
            .await
            .map_err(|e| SinkError::new(NAME, "chunking task failed").with_source(e))??;
        self.chunks += chunks;
        self.bytes += bytes;
        Ok(())
    }
}

/// `chunks` of the page at `url` as JSON lines.
fn lines(url: &str, title: &str, chunks: &[Chunk]) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        let line = Line {
            url,
            title,
            chunk: i,
            headings: &c.headings,
            tokens: c.tokens,
            markdown: &c.markdown,
        };
        serde_json::to_writer(&mut out, &line)?;
        out.push(b'\n');
    }
    Ok(out)
}

#[async_trait]
impl Sink for ChunksSink {
    fn wants_content(&self) -> bool {
        true
    }

    async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
        let Some(doc) = super::document(page).cloned() else {
            return Ok(());
        };
        self.settle().await?;
        let url = page.record.url.clone();
        let (file, max) = (self.file.clone(), self.max_tokens);
        self.job = Some(tokio::task::spawn_blocking(move || {
            let title = title(&url, &doc);
            let chunks = chunk_document(&doc, max);
            let buf = lines(url.as_str(), &title, &chunks)
                .map_err(|e| SinkError::new(NAME, format!("cannot encode {url}")).with_source(e))?;
            file.file().write_all(&buf).map_err(|e| {
                SinkError::io(NAME, format!("cannot write {}", file.path().display()), e)
            })?;
            Ok((chunks.len() as u64, buf.len() as u64))
        }));
        self.pages += 1;
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        self.settle().await
    }

    fn unsynced(&mut self) -> Vec<Arc<dyn Syncable>> {
        vec![self.file.clone()]
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        self.settle().await?;
        let file = self.file.clone();
        tokio::task::spawn_blocking(move || file.file().sync_data())
            .await
            .map_err(|e| SinkError::new(NAME, "writer task failed").with_source(e))?
            .map_err(|e| {
                SinkError::io(
                    NAME,
                    format!("cannot write {}", self.file.path().display()),
                    e,
                )
            })?;
        Ok(SinkSummary {
            name: NAME.into(),
            files: vec![self.file.path().display().to_string()],
            bytes: self.bytes,
            records: self.chunks,
            refused: 0,
        })
    }
}

#[cfg(test)]
mod tests;
