//! The link check's sink: from every page the crawl finishes, what the crawl
//! said of its URL, and for an HTML page its links (with element, attribute
//! and line) and its anchors. Each new target is handed on at once (a
//! bounded channel) so links to other sites are checked while the crawl
//! runs.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use tokio::sync::mpsc;
use url::Url;

use crate::base::outcome::PageRecord;
use crate::base::urlnorm;
use crate::crawl::body::{CpuPool, INLINE_MAX};
use crate::output::{Page, Sink, SinkError, SinkSummary};
use crate::parse::links::{AnchoredDocument, DEFAULT_MAX_ANCHORS, extract_anchored};

use super::result::Occurrence;

/// Places one target keeps at most; further ones are only counted. A link in
/// a site's menu is on every page: the first places say where to fix it,
/// and a million pages do not make a million entries.
pub const MAX_OCCURRENCES: usize = 100;

/// A new target for the checker: its URL, and whether a fragment points
/// into it (its anchors are then needed).
#[derive(Debug)]
pub(crate) struct NewTarget {
    pub url: Url,
    pub anchors: bool,
}

/// Where each distinct link target appears.
#[derive(Debug, Default)]
pub(crate) struct Target {
    /// The places, up to [`MAX_OCCURRENCES`].
    pub places: Vec<Occurrence>,
    /// Places past the cap.
    pub cut: u64,
    /// Some place has a fragment.
    pub fragments: bool,
}

/// What the crawl gave the check.
#[derive(Debug, Default)]
pub(crate) struct Collected {
    /// Every URL the crawl finished, by its normalised form.
    pub crawled: HashMap<Url, PageRecord>,
    /// The anchors of each HTML page the crawl fetched.
    pub anchors: HashMap<Url, HashSet<String>>,
    /// Pages whose anchors were cut at the cap: no fragment is called
    /// missing there.
    pub anchors_cut: HashSet<Url>,
    /// Every http(s) link target without its fragment, normalised.
    pub targets: HashMap<Url, Target>,
    /// Links that are not http(s) (`mailto:`, `tel:`…) or do not parse:
    /// not checked.
    pub unchecked: u64,
}

/// Locks a mutex whose data stays usable after a panic elsewhere.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The sink.
pub(crate) struct Collector {
    pub shared: Arc<Mutex<Collected>>,
    /// Closed at `finish`, which tells the checker no more targets come.
    pub tx: Option<mpsc::Sender<NewTarget>>,
    pub cpu: Arc<CpuPool>,
    pub max_links: usize,
    /// Targets sent, and whether with anchors.
    pub sent: HashMap<Url, bool>,
    pub pages: u64,
}

#[async_trait]
impl Sink for Collector {
    fn wants_bodies(&self) -> bool {
        true
    }

    fn wants_decoded_bodies(&self) -> bool {
        true
    }

    async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
        let record = &page.record;
        lock(&self.shared)
            .crawled
            .insert(record.url.clone(), record.clone());
        let Some(exchange) = &page.exchange else {
            return Ok(());
        };
        let is_html = matches!(
            record.content_type.as_deref(),
            Some("text/html" | "application/xhtml+xml")
        );
        if !is_html || !(200..300).contains(&record.status.unwrap_or(0)) {
            return Ok(());
        }
        self.pages += 1;
        let body = exchange
            .decoded_body
            .clone()
            .unwrap_or_else(|| exchange.body.clone());
        let (url, charset, max) = (record.url.clone(), record.encoding.clone(), self.max_links);
        let read =
            move || extract_anchored(&body, charset.as_deref(), &url, max, DEFAULT_MAX_ANCHORS);
        let doc = if exchange.body.len() > INLINE_MAX {
            self.cpu.run(read).await
        } else {
            self.cpu.run_inline(read).await
        };
        let new = self.take(&record.url, doc);
        if let Some(tx) = &self.tx {
            for target in new {
                // The checker ended (a stop): nothing more to check.
                if tx.send(target).await.is_err() {
                    break;
                }
            }
        }
        Ok(())
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        self.tx = None;
        Ok(SinkSummary {
            name: "check".into(),
            records: self.pages,
            ..SinkSummary::default()
        })
    }
}

impl Collector {
    /// Files the page's links and anchors; the targets new to the check.
    fn take(&mut self, page: &Url, doc: AnchoredDocument) -> Vec<NewTarget> {
        let found = file_page(&mut lock(&self.shared), page, doc);
        let mut new = Vec::new();
        for (url, wants_anchors) in found {
            match self.sent.get(&url) {
                Some(&anchors) if anchors || !wants_anchors => {}
                _ => {
                    self.sent.insert(url.clone(), wants_anchors);
                    new.push(NewTarget {
                        url,
                        anchors: wants_anchors,
                    });
                }
            }
        }
        new
    }
}

/// Files the links and anchors of `page` in `shared`; each link's target
/// (normalised, without fragment) and whether its fragment needs anchors.
pub(crate) fn file_page(
    shared: &mut Collected,
    page: &Url,
    doc: AnchoredDocument,
) -> Vec<(Url, bool)> {
    let mut found = Vec::with_capacity(doc.doc.links.len());
    if doc.anchors_cut > 0 {
        shared.anchors_cut.insert(page.clone());
    }
    shared
        .anchors
        .insert(page.clone(), doc.anchors.into_iter().collect());
    for (link, line) in doc.doc.links.into_iter().zip(doc.lines) {
        let Ok(mut url) = link.url else {
            shared.unchecked += 1;
            continue;
        };
        if !urlnorm::is_crawlable_scheme(&url) {
            shared.unchecked += 1;
            continue;
        }
        let fragment = url.fragment().map(percent_decoded);
        url.set_fragment(None);
        let url = urlnorm::normalize(url);
        let target = shared.targets.entry(url.clone()).or_default();
        let wants_anchors = fragment.as_deref().is_some_and(|f| !f.is_empty());
        target.fragments |= wants_anchors;
        if target.places.len() < MAX_OCCURRENCES {
            target.places.push(Occurrence {
                page: page.clone(),
                element: link.element.to_owned(),
                attribute: link.attr.to_owned(),
                line,
                raw: link.raw,
                fragment,
            });
        } else {
            target.cut += 1;
        }
        found.push((url, wants_anchors));
    }
    found
}

/// A fragment as an `id` is written: percent-escapes decoded (browsers
/// match `#caf%C3%A9` to `id="café"`).
pub(crate) fn percent_decoded(fragment: &str) -> String {
    percent_encoding::percent_decode_str(fragment)
        .decode_utf8_lossy()
        .into_owned()
}
