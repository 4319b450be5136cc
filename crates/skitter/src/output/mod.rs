//! Sinks: where each finished URL's outcome goes.
//!
//! The crawler hands every [`Page`] to every sink, one page at a time, in the order
//! pages finish, from a single task fed by a bounded channel: a slow sink slows the
//! crawl down, it never loses a page. A sink that fails stops the crawl with its
//! error (an output that cannot be written is not something to crawl on past).

mod channel;
pub mod report;
pub mod report_html;

use async_trait::async_trait;
use serde::Serialize;

use crate::base::outcome::PageRecord;

pub use channel::ChannelSink;
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
}

/// A page as the browser rendered it.
#[derive(Clone, Debug)]
pub struct RenderedPage {
    /// The serialised DOM once the page settled.
    pub html: String,
    /// The exchanges skitter made for the browser's requests (scripts, XHR,
    /// images…), with their URLs, when bodies are archived.
    pub exchanges: Vec<(url::Url, Exchange)>,
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
    /// [`crate::output::report::StopReason::OutputClosed`], not as an error.
    pub reader_gone: bool,
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

    /// Takes one finished page.
    async fn record(&mut self, page: &Page) -> Result<(), SinkError>;

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
