//! What a fetched body yields: decoded up to the size cap, then its links.
//!
//! Decoding and extraction are CPU work that grows with the body (a 10 MiB
//! page of links takes a while); on an async worker thread it would hold up
//! every timer, socket and heartbeat queued behind it. So any body that is
//! compressed or larger than [`INLINE_MAX`] is handled on the blocking pool,
//! at most one body per core at once ([`CpuPool`]); small plain pages, the
//! common case, stay inline where a thread hand-off would cost more than the
//! parse.
//!
//! A body with extraction rules to apply always takes a [`CpuPool`] permit
//! first: waiting for one is what slows the fetchers down when extraction
//! falls behind (the back-pressure). A small plain one is then extracted on
//! the calling task while it holds the permit ([`CpuPool::run_inline`]): a
//! 4 KiB page costs well under a millisecond, and the hop to the blocking
//! pool and back (about 50 µs measured) was as much as half of that. The
//! permit still bounds how many async worker threads are busy extracting at
//! once to one per core, so timers and sockets keep their turn. Large or
//! compressed bodies, whose cost grows without bound, go to the pool, and so
//! does every page `--render auto` judges (it builds a DOM).

use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::Semaphore;
use url::Url;

use lol_html::{HtmlRewriter, Settings};

use crate::base::trap;
use crate::content::{Document, Extractor};
use crate::fetch::decode::{self, DecodeError};
use crate::parse::fingerprint::text_simhash;
use crate::parse::items::stream::{self, StreamPass};
use crate::parse::items::{Css, Items, PageInput, Rules};
use crate::parse::links::{self, AnchorPass, DEFAULT_MAX_ANCHORS, ExtractMode, Link, LinkPass};
use crate::parse::text::{PageText, TextPass};
use crate::render::{RenderReason, auto};

/// Plain bodies up to this size are handled on the calling task.
pub(crate) const INLINE_MAX: usize = 64 * 1024;

/// A bound on CPU-heavy jobs running at once, one per core.
#[derive(Debug)]
pub(crate) struct CpuPool {
    permits: Arc<Semaphore>,
}

impl CpuPool {
    pub(crate) fn new() -> CpuPool {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        CpuPool {
            permits: Arc::new(Semaphore::new(cores)),
        }
    }

    /// Runs `job` on the calling task once a core is free, holding the permit
    /// while it runs: for jobs small enough that the thread hop would cost
    /// more than the job, but that must still wait their turn.
    pub(crate) async fn run_inline<T>(&self, job: impl FnOnce() -> T) -> T {
        // The semaphore is never closed.
        let _permit = self.permits.acquire().await;
        job()
    }

    /// Runs `job` on the blocking pool once a core is free; a panic in it
    /// resumes on the caller, where the worker turns it into the URL's failure.
    pub(crate) async fn run<T, F>(&self, job: F) -> T
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        // The semaphore is never closed.
        let permit = self.permits.clone().acquire_owned().await;
        let handle = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            job()
        });
        match handle.await {
            Ok(out) => out,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // Blocking tasks are only cancelled when the runtime shuts down.
            Err(e) => panic!("extraction task lost: {e}"),
        }
    }
}

/// What [`html_pass`] found besides the links.
struct HtmlExtras {
    items: Option<Items>,
    render: Option<RenderReason>,
    fingerprint: Option<u64>,
    content: Option<Document>,
    /// Each link's line and the page's anchors, when asked for.
    checked: Option<Checked>,
    /// The page's title and visible text, when asked for and a `lol_html`
    /// pass ran anyway.
    text: Option<PageText>,
}

/// A page's link lines and anchors, for a link checker.
pub(crate) struct Checked {
    pub(crate) lines: Vec<u32>,
    /// `None` for a page that is not HTML.
    pub(crate) anchors: Option<(Vec<String>, u64)>,
}

/// An HTML page's links, and its items when rules match it, from one pass
/// over the decoded text: the link scanner's when the links are read alone
/// or beside the page's visible text (`text`, read by `lol_html`'s text
/// handlers), else one `lol_html` pass that the streaming item fields (see
/// `items::stream`) and the anchors a link checker reads (`lines`) share
/// with the links. The text is decoded once for all.
fn html_pass(
    body: &[u8],
    charset: Option<&str>,
    url: &Url,
    (mode, max_links, lines, text_too): (ExtractMode, usize, bool, bool),
    items: Option<(&Rules, PageInput<'_>)>,
    (judge, fingerprint, content): (bool, Fingerprint, Option<&Extractor>),
) -> (links::HtmlDocument, HtmlExtras) {
    let (text, encoding, had_errors) = links::decode_html(body, charset);
    let content = content.map(|extractor| extractor.extract(&text, url));
    let render = if judge { auto::judge(&text) } else { None };
    let links = LinkPass::new(&text, mode, max_links);
    let anchors = lines.then(|| AnchorPass::new(DEFAULT_MAX_ANCHORS));
    let stream = items.and_then(|(rules, _)| rules.stream_pass(url, &text));
    // The links alone (the common case) need no lol_html pass. The page's
    // text (a WACZ's page list) is then left to the sink, which reads it from
    // the body off the crawl's path (see `output::wacz::live`): a pass of its
    // own here would hold the page's slot and a core while its links wait.
    // When lol_html runs anyway, the text comes with it.
    let scanned = stream.is_none() && anchors.is_none() && links.scan(&text);
    let visible = (text_too && !scanned).then(TextPass::new);
    let written = scanned
        || shared_pass(
            &text,
            &links,
            scanned,
            stream.as_ref(),
            (&anchors, &visible),
        );
    let doc = links.finish(url, encoding.name(), had_errors);
    let fingerprint = match fingerprint {
        Fingerprint::Off => false,
        Fingerprint::Always => true,
        Fingerprint::IfChained => doc
            .links
            .iter()
            .any(|link| link.url.as_ref().is_ok_and(|to| trap::may_step(url, to))),
    };
    let fingerprint = fingerprint.then(|| text_simhash(&text));
    let checked = anchors.map(|anchors| Checked {
        lines: links::lines_of(&text, doc.links.iter().map(|l| l.at)),
        anchors: Some(anchors.finish()),
    });
    let css = match stream {
        None => Css::Dom,
        Some(Err(declined)) => Css::Given(Err(declined)),
        Some(Ok(pass)) => Css::Given(pass.finish(written)),
    };
    let items = items.and_then(|(rules, page)| {
        rules
            .extract_with(&page, Some(&text), css)
            .map(|(items, _)| items)
    });
    let extras = HtmlExtras {
        items,
        render,
        fingerprint,
        content,
        checked,
        text: visible.map(TextPass::finish),
    };
    (doc, extras)
}

/// The `lol_html` pass of [`html_pass`] over `text`: the link handlers
/// unless the scan `scanned` the links already, and the other readers'
/// handlers. Whether it read the whole page.
fn shared_pass(
    text: &str,
    links: &LinkPass,
    scanned: bool,
    stream: Option<&Result<StreamPass<'_, '_>, stream::Declined>>,
    (anchors, visible): (&Option<AnchorPass>, &Option<TextPass>),
) -> bool {
    // With a streaming extraction, its `*` handler hands the link pass its
    // elements: one handler per tag instead of two passes of selectors.
    let shared = matches!(stream, Some(Ok(_))) && links.takes_elements();
    let settings = Settings::new().with_strict(false);
    let mut settings = if scanned {
        settings
    } else if shared {
        links.text_handlers(settings)
    } else {
        links.handlers(settings)
    };
    if let Some(Ok(pass)) = stream {
        settings = pass.handlers(settings, shared.then_some(links));
    }
    if let Some(anchors) = anchors {
        settings = anchors.handlers(settings);
    }
    if let Some(visible) = visible {
        settings = visible.handlers(settings);
    }
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    let written = rewriter
        .write(text.as_bytes())
        .and_then(|()| rewriter.end());
    if let Err(error) = &written {
        // The links found up to here are still good (see extract_html).
        tracing::debug!(%error, "HTML link extraction stopped early");
    }
    written.is_ok()
}

/// What kind of document a body is, for extraction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Doc {
    Html,
    Css,
    Other,
}

/// When a page's near-duplicate fingerprint is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fingerprint {
    /// Never: the endless-pager rule is off.
    Off,
    /// For every HTML page: links may come from elsewhere than the body
    /// (a rendered DOM), so the body's links cannot tell.
    Always,
    /// Only for a page with a link that may step along a numeric chain
    /// ([`trap::may_step`]): the rule reads no other page's fingerprint.
    IfChained,
}

/// One body to decode and read links from.
pub(crate) struct BodyJob {
    pub(crate) raw: Bytes,
    pub(crate) content_encoding: Option<String>,
    /// The wire body was cut at the cap.
    pub(crate) cut: bool,
    pub(crate) max: u64,
    pub(crate) doc: Doc,
    pub(crate) charset: Option<String>,
    pub(crate) url: Url,
    pub(crate) mode: ExtractMode,
    /// Links read from the page at most (`--max-links-per-page`).
    pub(crate) max_links: usize,
    /// Structured extraction to run on the decoded body, if rules match it.
    pub(crate) items: Option<ItemsJob>,
    /// Apply the `--render auto` rules to an HTML body.
    pub(crate) judge: bool,
    /// When to compute an HTML body's near-duplicate fingerprint (for the
    /// endless-pager trap rule).
    pub(crate) fingerprint: Fingerprint,
    /// Turn an HTML body into Markdown and text, for the sinks that read it.
    pub(crate) content: Option<Arc<Extractor>>,
    /// Find each link's line, and an HTML page's anchors, for a sink that
    /// reads `Page::links` (a link checker).
    pub(crate) lines: bool,
    /// Gather an HTML page's title and visible text, for a sink that reads
    /// `Page::text` (a WACZ's page list).
    pub(crate) text: bool,
}

/// The rules to apply to one page, and when its exchange started.
pub(crate) struct ItemsJob {
    pub(crate) rules: Arc<Rules>,
    pub(crate) fetched_at: chrono::DateTime<chrono::Utc>,
}

/// What [`BodyJob`] found.
pub(crate) struct BodyLinks {
    pub(crate) links: Vec<Link>,
    /// Links past `max_links`, dropped unread.
    pub(crate) cut: u64,
    /// The charset HTML was decoded with.
    pub(crate) charset: Option<&'static str>,
    /// The decoded body, when it differs from the wire body.
    pub(crate) decoded: Option<Bytes>,
    /// The wire or the decoded body was cut at the cap.
    pub(crate) truncated: bool,
    /// What the extraction rules found, if they ran.
    pub(crate) items: Option<Box<Items>>,
    /// Why the `--render auto` rules want the page rendered, if they ran and do.
    pub(crate) render: Option<RenderReason>,
    /// The near-duplicate fingerprint of an HTML body's text, if asked for.
    pub(crate) fingerprint: Option<u64>,
    /// An HTML body as Markdown and text, if asked for.
    pub(crate) content: Option<Document>,
    /// Each link's line (and an HTML page's anchors), if asked for.
    pub(crate) checked: Option<Checked>,
    /// An HTML page's title and visible text, if asked for and the links
    /// were read by `lol_html` (else the sink reads the text from the body).
    pub(crate) text: Option<PageText>,
}

impl BodyJob {
    /// Runs the job here or on the pool, by size. A page `--render auto`
    /// judges always goes to the pool: judging builds a DOM, work that a
    /// small page can still make costly (nesting up to the cut).
    pub(crate) async fn run(self, pool: &CpuPool) -> Result<BodyLinks, DecodeError> {
        let small = self.content_encoding.is_none() && self.raw.len() <= INLINE_MAX && !self.judge;
        // Like extraction rules, the content builds a DOM: it waits its turn
        // for a core, and a small page runs where it is.
        if small && self.items.is_none() && self.content.is_none() {
            self.work()
        } else if small {
            pool.run_inline(move || self.work()).await
        } else {
            pool.run(move || self.work()).await
        }
    }

    fn work(self) -> Result<BodyLinks, DecodeError> {
        let out = decode::decode_prefix(
            self.content_encoding.as_deref(),
            &self.raw,
            self.max,
            self.cut,
        )?;
        let truncated = self.cut || out.truncated;
        let decoded = match out.body {
            std::borrow::Cow::Borrowed(_) => None,
            std::borrow::Cow::Owned(v) => Some(Bytes::from(v)),
        };
        let body = decoded.as_deref().unwrap_or(&self.raw);
        let charset = self.charset.as_deref();
        let page = self.items.as_ref().map(|job| PageInput {
            url: &self.url,
            body,
            charset,
            fetched_at: job.fetched_at,
        });
        let rules = self.items.as_ref().map(|job| &*job.rules);
        let (mut render, mut fingerprint, mut content, mut checked) = (None, None, None, None);
        let mut text = None;
        let mut cut = 0;
        let (links, charset, items) = match (self.doc, rules.zip(page)) {
            (Doc::Html, items) => {
                let (doc, extras) = html_pass(
                    body,
                    charset,
                    &self.url,
                    (self.mode, self.max_links, self.lines, self.text),
                    items,
                    (self.judge, self.fingerprint, self.content.as_deref()),
                );
                content = extras.content;
                render = extras.render;
                fingerprint = extras.fingerprint;
                checked = extras.checked;
                text = extras.text;
                cut = doc.cut;
                (doc.links, Some(doc.charset), extras.items)
            }
            (Doc::Css, items) => {
                let text = String::from_utf8_lossy(body);
                let mut links = links::extract_css(&text, &self.url);
                if links.len() > self.max_links {
                    cut = (links.len() - self.max_links) as u64;
                    links.truncate(self.max_links);
                }
                checked = self.lines.then(|| Checked {
                    lines: links::lines_of(&text, links.iter().map(|l| l.at)),
                    anchors: None,
                });
                let items = items.and_then(|(rules, page)| rules.extract(&page));
                (links, None, items)
            }
            (Doc::Other, items) => (
                Vec::new(),
                None,
                items.and_then(|(rules, page)| rules.extract(&page)),
            ),
        };
        let items = items.map(Box::new);
        Ok(BodyLinks {
            links,
            cut,
            charset,
            decoded,
            truncated,
            items,
            render,
            fingerprint,
            content,
            checked,
            text,
        })
    }
}

#[cfg(test)]
mod tests;
