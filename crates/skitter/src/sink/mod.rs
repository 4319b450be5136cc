//! Sinks: where each finished URL's outcome goes.
//!
//! The crawler hands every [`Page`] to every sink, one page at a time, in the order
//! pages finish, from a single task fed by a bounded channel: a slow sink slows the
//! crawl down, it never loses a page. A sink that fails stops the crawl with its
//! error (an output that cannot be written is not something to crawl on past).

mod channel;

use std::net::SocketAddr;

use async_trait::async_trait;
use bytes::Bytes;
use serde::Serialize;

use crate::outcome::PageRecord;

pub use channel::ChannelSink;

/// The bytes of one HTTP exchange, for sinks that archive (WARC) or save (mirror).
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The request head as sent: request line and headers, CRLF-terminated.
    pub request_head: Bytes,
    /// The response head: status line and headers, CRLF-terminated. Rebuilt from
    /// the parsed response, since the HTTP client does not expose the raw bytes.
    pub response_head: Bytes,
    /// The body as received on the wire: after transfer decoding (chunking), before
    /// content decoding (gzip, br…). Empty when nothing needed it.
    pub body: Bytes,
    /// The body after content decoding, for HTML pages that had a content coding,
    /// when a sink asked for it ([`Sink::wants_decoded_bodies`]). `None` when the
    /// body had no coding: then [`Exchange::body`] is the decoded body too.
    pub decoded_body: Option<Bytes>,
    /// The body was cut at the fetch size cap: [`Exchange::body`] is its first
    /// part (WARC records say `WARC-Truncated: length`).
    pub truncated: bool,
    /// SHA-1 of [`Exchange::body`], when the fetcher already computed it: the WARC
    /// payload digest and the JSONL `digest` are the same hash, so the page's bytes
    /// are hashed once for both. [`Exchange::body_sha1`] computes it when `None`.
    pub body_sha1: Option<[u8; 20]>,
    /// The peer's address, when known.
    pub remote_addr: Option<SocketAddr>,
    /// `HTTP/1.1` or `HTTP/2`.
    pub http_version: &'static str,
    /// When the request was sent (UTC).
    pub started: chrono::DateTime<chrono::Utc>,
}

impl Exchange {
    /// SHA-1 of the body as received (the WARC payload digest).
    pub fn body_sha1(&self) -> [u8; 20] {
        self.body_sha1.unwrap_or_else(|| sha1_of(&self.body))
    }
}

/// SHA-1 of `data`.
pub(crate) fn sha1_of(data: &[u8]) -> [u8; 20] {
    use sha1::Digest;
    sha1::Sha1::digest(data).into()
}

/// One finished URL: its record, and its exchange when a sink asked for bodies.
#[derive(Clone, Debug)]
pub struct Page {
    /// What happened.
    pub record: PageRecord,
    /// The bytes exchanged, for responses (absent for failures and skips, and
    /// when no sink keeps bodies).
    pub exchange: Option<Exchange>,
    /// The structured records extracted from the page, when extraction rules
    /// matched its URL (see [`crate::items`]).
    pub items: Option<Box<crate::items::Items>>,
}

/// What a sink wrote, for the report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SinkSummary {
    /// The sink's name (`warc`, `jsonl`, `mirror`…).
    pub name: String,
    /// Files it wrote.
    pub files: Vec<String>,
    /// Bytes it wrote.
    pub bytes: u64,
    /// Records (or files) it wrote.
    pub records: u64,
}

/// A sink failed; the crawl stops.
#[derive(Debug, thiserror::Error)]
#[error("{sink}: {message}")]
pub struct SinkError {
    /// Which sink.
    pub sink: String,
    /// What went wrong, with the path or record involved.
    pub message: String,
    /// The output is a pipe whose reader went away (`… | head`): nothing is
    /// wrong, there is just no one left to write to. The crawl then stops as
    /// [`crate::report::StopReason::OutputClosed`], not as an error.
    pub reader_gone: bool,
}

/// A consumer of finished pages.
#[async_trait]
pub trait Sink: Send {
    /// Whether this sink needs the exchange bytes (bodies are only kept if one does).
    fn wants_bodies(&self) -> bool {
        false
    }

    /// Whether this sink uses [`Exchange::decoded_body`]. The crawler keeps a
    /// decoded copy of a compressed page (it decodes every HTML page to find links)
    /// only if some sink says so; the others would just hold on to it.
    fn wants_decoded_bodies(&self) -> bool {
        false
    }

    /// Takes one finished page.
    async fn record(&mut self, page: &Page) -> Result<(), SinkError>;

    /// Takes a slow-down of `host` as it happens (see
    /// [`crate::frontier::politeness`]). Outputs that log the crawl record it;
    /// the default ignores it.
    async fn throttled(
        &mut self,
        host: &str,
        throttle: &crate::frontier::Throttle,
    ) -> Result<(), SinkError> {
        let _ = (host, throttle);
        Ok(())
    }

    /// Writes out everything recorded so far (not necessarily to stable storage:
    /// it must survive the process being killed, not the machine). The crawler
    /// calls it before completing the leases of pages it wrote, when the frontier
    /// is durable.
    async fn flush(&mut self) -> Result<(), SinkError> {
        Ok(())
    }

    /// Flushes and closes; called once, after the last page.
    async fn finish(&mut self) -> Result<SinkSummary, SinkError>;
}

/// Creates (or truncates) the output file at `path`. A symbolic link there is
/// replaced by the file, never written through, so a link planted at an output's
/// name cannot send its bytes elsewhere.
pub(crate) fn create_output(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        std::fs::remove_file(path)?;
    }
    std::fs::File::create(path)
}

/// Opens an existing output file to read and write it in place (to continue
/// it); a symbolic link there is refused rather than followed.
pub(crate) fn open_output(path: &std::path::Path, create: bool) -> std::io::Result<std::fs::File> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(std::io::Error::other(
            "it is a symbolic link, which outputs never follow",
        ));
    }
    std::fs::OpenOptions::new()
        .create(create)
        .read(true)
        .write(true)
        .truncate(false)
        .open(path)
}

pub mod items_db;
mod jsonl;
mod mirror;
mod warc;

pub use items_db::{ItemsDbError, ItemsDbSink};
pub use jsonl::{JsonlSink, RESUME_TAIL_LINES};
pub use mirror::{MirrorOptions, MirrorSink, mirror_path};
pub use warc::{WarcOptions, WarcRepair, WarcSink, repair_warc, resume_cdx, rotated_warc_name};
mod redis_stats;
pub use redis_stats::RedisStatsSink;
