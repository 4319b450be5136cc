//! Sinks: where each finished URL's outcome goes.
//!
//! The crawler hands every [`Page`] to every sink, one page at a time, in the order
//! pages finish, from a single task fed by a bounded channel: a slow sink slows the
//! crawl down, it never loses a page. A sink that fails stops the crawl with its
//! error (an output that cannot be written is not something to crawl on past).

mod channel;
mod file;
pub mod report;
pub mod report_html;
mod site;
mod sync;

use async_trait::async_trait;
use serde::Serialize;

use crate::base::outcome::PageRecord;

pub use channel::ChannelSink;
pub(crate) use file::{create_output, open_output, temp_beside};
pub(crate) use site::SiteContent;
pub use sync::{Syncable, SyncedFile, SyncedFilesystem, SyncedPath};
pub(crate) use sync::{parent, sync_dir};
// The exchange is the fetcher's product; outputs take it as it comes.
pub use crate::fetch::Exchange;

/// One finished URL: its record, and its exchange when a sink asked for bodies.
#[derive(Clone, Debug)]
pub struct Page {
    /// What happened.
    pub record: PageRecord,
    /// The bytes exchanged, for responses (absent for failures and skips, and
    /// when no sink keeps bodies).
    pub exchange: Option<Exchange>,
    /// What rendering the page in the browser produced, when it was rendered
    /// (`--render`).
    pub rendered: Option<Box<RenderedPage>>,
    /// The structured records extracted from the page, when extraction rules
    /// matched its URL (see [`crate::parse::items`]).
    pub items: Option<Box<crate::parse::items::Items>>,
    /// The page as Markdown and text (see [`crate::content`]), when it is
    /// an HTML page and a sink asked for it ([`Sink::wants_content`]);
    /// shared by the sinks that read it. Taken from the rendered DOM when
    /// the page was rendered.
    pub content: Option<std::sync::Arc<crate::content::Document>>,
    /// The links the crawl found on the page (HTML, stylesheet, sitemap or
    /// headers) with their source lines, and an HTML page's anchors, from
    /// the crawl's own parse; only when a sink asked for them
    /// ([`Sink::wants_links`]).
    pub links: Option<std::sync::Arc<crate::parse::links::PageLinks>>,
    /// An HTML page's title and visible text from the crawl's own parse
    /// (see [`crate::parse::text`]); only when a sink asked for it
    /// ([`Sink::wants_text`]) and no content extraction ran for the page.
    pub text: Option<std::sync::Arc<crate::parse::text::PageText>>,
}

/// A page as the browser rendered it.
#[derive(Clone, Debug)]
pub struct RenderedPage {
    /// The serialised DOM once the page settled; `None` when the page was
    /// rendered only for its pictures (`--screenshots` without `--render`).
    pub html: Option<String>,
    /// The exchanges skitter made for the browser's requests (scripts, XHR,
    /// images…), with their URLs, when bodies are archived.
    pub exchanges: Vec<(url::Url, Exchange)>,
    /// Pictures of the page (`--screenshots`), for the WARC's `resource`
    /// records.
    pub screenshots: Vec<Screenshot>,
}

/// A picture of a rendered page, archived as a `resource` record whose
/// target is `urn:{kind}:{page URL}` (Browsertrix's names, which
/// ReplayWeb.page looks up: `urn:thumbnail:` for a page's thumbnail).
#[derive(Clone, Debug)]
pub struct Screenshot {
    /// `fullPage` (the whole page, PNG) or `thumbnail` (640×360, JPEG).
    pub kind: &'static str,
    /// Its media type.
    pub mime: &'static str,
    /// The image.
    pub data: bytes::Bytes,
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
    /// Records it left out because their data could not be stored (a value
    /// the items database refused); the crawl went on without them. Counted in
    /// the report as `items_refused`.
    #[serde(skip_serializing_if = "is_zero")]
    pub refused: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A sink failed; the crawl stops.
///
/// It names the sink and what it was doing (with the path or record
/// involved), and keeps the error that caused it as its
/// [`source`](std::error::Error::source) (an [`std::io::Error`], the
/// database's error, …), so a caller can tell a full disk from a refused
/// permission without reading the text. Its `Display` is
/// `sink: what it was doing: the cause`, the cause's text included, so a
/// report or a log line that shows only this error reads whole.
///
/// ```
/// use skitter::output::{WarcOptions, WarcSink};
///
/// let Err(e) = WarcSink::create("/no/such/dir/crawl.warc", WarcOptions::default()) else {
///     panic!("a WARC file in a missing directory");
/// };
/// let io = std::error::Error::source(&e)
///     .and_then(|s| s.downcast_ref::<std::io::Error>())
///     .expect("the I/O error");
/// assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
/// assert_eq!(e.sink(), "warc");
/// assert!(e.to_string().starts_with("warc: cannot write /no/such/dir/crawl.warc: "));
/// ```
#[derive(Debug)]
pub struct SinkError {
    sink: String,
    /// What went wrong, as shown after the sink's name: what the sink was
    /// doing and, when there is a shown cause, its text.
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
    reader_gone: bool,
}

impl SinkError {
    /// Sink `sink` failed doing `what` (`cannot write out/crawl.warc`), for
    /// no deeper cause than that; see [`SinkError::with_source`].
    pub fn new(sink: impl Into<String>, what: impl Into<String>) -> SinkError {
        SinkError {
            sink: sink.into(),
            message: what.into(),
            source: None,
            reader_gone: false,
        }
    }

    /// The error that made the sink fail: kept as the source, its text shown
    /// after `what`.
    pub fn with_source(
        mut self,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> SinkError {
        self.message = format!("{}: {source}", self.message);
        self.source = Some(Box::new(source));
        self
    }

    /// Sink `sink` failed as `source` says, whole: its text is the message
    /// (it already names what failed, and where).
    pub fn from_source(
        sink: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> SinkError {
        SinkError {
            message: source.to_string(),
            source: Some(Box::new(source)),
            ..SinkError::new(sink, "")
        }
    }

    /// Sink `sink` failed doing `what` because of an I/O error.
    pub fn io(sink: impl Into<String>, what: impl Into<String>, e: std::io::Error) -> SinkError {
        SinkError::new(sink, what).with_source(e)
    }

    /// The output is a pipe whose reader went away (`… | head`), as `pipe`
    /// (the broken-pipe error) says: nothing is wrong, there is just no one
    /// left to write to. The crawl then stops as
    /// [`crate::output::report::StopReason::OutputClosed`], not as an error,
    /// and `pipe` is the source but not part of the text (`jsonl: - closed by
    /// its reader`).
    pub fn reader_gone(
        sink: impl Into<String>,
        what: impl Into<String>,
        pipe: std::io::Error,
    ) -> SinkError {
        SinkError {
            reader_gone: true,
            source: Some(Box::new(pipe)),
            ..SinkError::new(sink, what)
        }
    }

    /// Which sink failed (`warc`, `jsonl`, `mirror`, `items`…).
    pub fn sink(&self) -> &str {
        &self.sink
    }

    /// Whether the output's reader went away (see [`SinkError::reader_gone`]),
    /// rather than the output failing.
    pub fn is_reader_gone(&self) -> bool {
        self.reader_gone
    }
}

impl std::fmt::Display for SinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.sink, self.message)
    }
}

impl std::error::Error for SinkError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// A consumer of finished pages.
///
/// An output of your own is one type implementing this, given to the crawler
/// (or to `skitter fetch`'s [`crate::bulk::BulkFetcher`]) with `.sink(…)`:
///
/// ```
/// use skitter::output::{Page, Sink, SinkError, SinkSummary};
/// use skitter::Crawler;
/// use skitter_testsite::{SiteConfig, TestSite};
/// use tokio_util::sync::CancellationToken;
///
/// /// Prints each page's status and URL.
/// struct Lines(u64);
///
/// #[async_trait::async_trait]
/// impl Sink for Lines {
///     async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
///         println!("{:?} {}", page.record.status, page.record.url);
///         self.0 += 1;
///         Ok(())
///     }
///
///     async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
///         Ok(SinkSummary {
///             name: "lines".into(),
///             records: self.0,
///             ..SinkSummary::default()
///         })
///     }
/// }
///
/// # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let site = TestSite::start(SiteConfig { pages: 5, ..SiteConfig::default() })?;
/// let report = Crawler::builder()
///     .root(site.url("/"))
///     .sink(Box::new(Lines(0)))
///     .build()?
///     .run(CancellationToken::new())
///     .await?;
/// // Every finished URL: the 5 pages, the index and the site's one broken link.
/// assert_eq!(report.sinks[0].records, 7);
/// # Ok(())
/// # }
/// ```
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

    /// Whether this sink reads [`Page::links`]. The crawl then keeps a copy
    /// of each page's links, with their lines and the page's anchors
    /// (a link checker's input), instead of only queueing them.
    fn wants_links(&self) -> bool {
        false
    }

    /// Whether this sink reads [`Page::text`]. The crawl's link pass then
    /// also gathers each HTML page's title and visible text (a copy of the
    /// text it tokenizes anyway), unless the crawl extracts the page's
    /// content for [`Page::content`], whose text a sink reads instead.
    fn wants_text(&self) -> bool {
        false
    }

    /// Whether this sink reads [`Page::content`]. The crawler turns HTML
    /// pages into Markdown and text (CPU work of the order of the parse
    /// itself) only if some sink says so.
    fn wants_content(&self) -> bool {
        false
    }

    /// Takes one finished page.
    async fn record(&mut self, page: &Page) -> Result<(), SinkError>;

    /// Whether this sink takes pages a second time through
    /// [`Sink::revise`] (an output of files it can rewrite; a stream
    /// cannot take back what it wrote).
    fn wants_revisions(&self) -> bool {
        false
    }

    /// Takes again one of the first pages of a host, recorded before the
    /// host's boilerplate was known (see [`crate::content::site`]): its
    /// [`Page::content`] now without every block the whole crawl found to
    /// repeat on the host. Only the record and the content are set. Called
    /// after the last page and before [`Sink::finish`], for sinks that
    /// [`Sink::wants_revisions`].
    async fn revise(&mut self, page: &Page) -> Result<(), SinkError> {
        let _ = page;
        Ok(())
    }

    /// Takes a slow-down of `host` as it happens (see
    /// [`crate::host::politeness`]). Outputs that log the crawl record it;
    /// the default ignores it.
    async fn throttled(
        &mut self,
        host: &str,
        throttle: &crate::host::Throttle,
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

    /// What this sink has written to, which must reach stable storage for the
    /// pages flushed so far to survive a power cut (its files; see
    /// [`Syncable`]). The crawler asks right after each [`Sink::flush`] when
    /// the frontier's completions survive a power cut (a disk frontier with
    /// `durable`), and syncs them on a blocking thread, grouped with other
    /// flushes, before it completes those pages' leases. Answer the same
    /// [`Syncable`] (an `Arc` clone) for as long as it is the same file:
    /// the crawler syncs each one once per group. The default is nothing, for a
    /// sink that writes no files or makes them durable itself in `flush`.
    fn unsynced(&mut self) -> Vec<std::sync::Arc<dyn Syncable>> {
        Vec::new()
    }

    /// Flushes and closes; called once, after the last page.
    async fn finish(&mut self) -> Result<SinkSummary, SinkError>;
}

pub mod items_db;
mod jsonl;
mod llms;
mod markdown;
mod mirror;
mod wacz;
mod warc;

pub use items_db::{ItemsDbError, ItemsDbSink};
pub use jsonl::{ContentField, JsonlSink, RESUME_TAIL_LINES, UnknownField};
pub use llms::{
    Chunk, ChunksSink, DEFAULT_CHUNK_TOKENS, LlmsTxtSink, MAX_LISTED, MIN_CHUNK_TOKENS,
    chunk_document, count_tokens, full_path,
};
pub use markdown::{LOG_NAME as MARKDOWN_LINK_LOG, MarkdownSink, markdown_path};
pub use mirror::{MirrorOptions, MirrorSink, mirror_path};
pub use wacz::{
    WACZ_VERSION, WARC_ROTATION, WaczCheck, WaczError, WaczOptions, WaczProblem, WaczSink,
    WaczSummary, pack_wacz, validate_wacz, wacz_warc_dir,
};
pub use warc::{WarcOptions, WarcRepair, WarcSink, repair_warc, resume_cdx, rotated_warc_name};

#[cfg(test)]
mod tests {
    use std::error::Error as _;
    use std::io;

    use super::SinkError;

    #[test]
    fn errors_show_their_cause_and_keep_it() {
        let pipe = || io::Error::from(io::ErrorKind::BrokenPipe);
        let cases = [
            (
                SinkError::new("s", "cannot do it"),
                "s: cannot do it".into(),
                false,
            ),
            (
                SinkError::io("s", "cannot write f", pipe()),
                format!("s: cannot write f: {}", pipe()),
                true,
            ),
            (
                SinkError::from_source("s", pipe()),
                format!("s: {}", pipe()),
                true,
            ),
            // A reader that went away is no failure: its pipe error is kept, not shown.
            (
                SinkError::reader_gone("s", "- closed by its reader", pipe()),
                "s: - closed by its reader".into(),
                true,
            ),
        ];
        for (e, text, has_source) in cases {
            assert_eq!(e.to_string(), text);
            assert_eq!(e.source().is_some(), has_source, "{text}");
            if let Some(source) = e.source() {
                assert!(source.is::<io::Error>(), "{text}");
            }
        }
    }
}
