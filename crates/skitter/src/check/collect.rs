//! The link check's sink: from every page the crawl finishes, what the crawl
//! said of its URL, and the links the crawl found on it (with element,
//! attribute and line: an HTML page's, a stylesheet's, a sitemap's entries,
//! a response's `Link` headers) and an HTML page's anchors, all from the
//! crawl's own parse (`Page::links`): no page is read twice, and no body is
//! kept for the check. Each new target is handed on at once (a bounded
//! channel) so links to other sites are checked while the crawl runs.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use url::Url;

use crate::base::outcome::PageRecord;
use crate::base::urlnorm;
use crate::output::{Page, Sink, SinkError, SinkSummary};
use crate::parse::links::PageLinks;

use super::result::{LinkResult, Occurrence};

/// Where the sink hands each finished URL, and what was filed of it.
pub(crate) type KeepPage = Box<dyn Fn(&PageRecord, Option<&Filed>) + Send + Sync>;

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
    /// Pages whose links are filed: a page filed again (read again by a
    /// resumed crawl after a kill) adds nothing.
    pub filed: HashSet<Url>,
}

/// What one page adds to [`Collected`]: its anchors, each of its links'
/// targets with the place, and the links not checked. Kept in a check's
/// state (`journal`) as it is.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Filed {
    /// An HTML page's anchors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchors: Option<Vec<String>>,
    #[serde(default)]
    pub anchors_cut: u64,
    /// Each link's target (normalised, without fragment) and place.
    pub places: Vec<(Url, Occurrence)>,
    #[serde(default)]
    pub unchecked: u64,
}

impl Filed {
    /// What `page`'s links file.
    pub(crate) fn of(page: &Url, doc: &PageLinks) -> Filed {
        let mut filed = Filed {
            anchors: doc.anchors.clone(),
            anchors_cut: doc.anchors_cut,
            places: Vec::with_capacity(doc.links.len()),
            unchecked: 0,
        };
        for (link, &line) in doc.links.iter().zip(&doc.lines) {
            let Ok(mut url) = link.url.clone() else {
                filed.unchecked += 1;
                continue;
            };
            if !urlnorm::is_crawlable_scheme(&url) {
                filed.unchecked += 1;
                continue;
            }
            let fragment = url.fragment().map(percent_decoded);
            url.set_fragment(None);
            let place = Occurrence {
                page: page.clone(),
                element: link.element.to_owned(),
                attribute: link.attr.to_owned(),
                line,
                raw: link.raw.clone(),
                fragment,
            };
            filed.places.push((urlnorm::normalize(url), place));
        }
        filed
    }
}

impl Collected {
    /// Files what `page` adds; each link's target and whether its fragment
    /// needs anchors.
    pub(crate) fn apply(&mut self, page: &Url, filed: Filed) -> Vec<(Url, bool)> {
        if !self.filed.insert(page.clone()) {
            return Vec::new();
        }
        if let Some(anchors) = filed.anchors {
            if filed.anchors_cut > 0 {
                self.anchors_cut.insert(page.clone());
            }
            self.anchors
                .insert(page.clone(), anchors.into_iter().collect());
        }
        self.unchecked += filed.unchecked;
        let mut found = Vec::with_capacity(filed.places.len());
        for (url, place) in filed.places {
            let target = self.targets.entry(url.clone()).or_default();
            let wants_anchors = place.fragment.as_deref().is_some_and(|f| !f.is_empty());
            target.fragments |= wants_anchors;
            if target.places.len() < MAX_OCCURRENCES {
                target.places.push(place);
            } else {
                target.cut += 1;
            }
            found.push((url, wants_anchors));
        }
        found
    }
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
    /// Targets sent, and whether with anchors.
    pub sent: HashMap<Url, bool>,
    /// Keeps each finished URL and what was filed of it for a resumed
    /// check, when findings are kept (`journal`).
    pub keep: Option<KeepPage>,
    /// The results decided once a URL is in, and where they go, when the
    /// check's results are streamed (`stream`).
    pub decide: Option<(Decide, mpsc::Sender<LinkResult>)>,
    pub pages: u64,
}

/// The results of these targets that are decided and not sent yet.
pub(crate) type Decide = Box<dyn Fn(&Collected, &[&Url]) -> Vec<LinkResult> + Send + Sync>;

#[async_trait]
impl Sink for Collector {
    fn wants_links(&self) -> bool {
        true
    }

    async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
        let record = &page.record;
        let filed = page
            .links
            .as_ref()
            .map(|links| Filed::of(&record.url, links));
        if let Some(keep) = &self.keep {
            keep(record, filed.as_ref());
        }
        lock(&self.shared)
            .crawled
            .insert(record.url.clone(), record.clone());
        let mut found = Vec::new();
        if let Some(filed) = filed {
            if filed.anchors.is_some() {
                self.pages += 1;
            }
            found = lock(&self.shared).apply(&record.url, filed);
            let new = self.new_targets(&found);
            if let Some(tx) = &self.tx {
                for target in new {
                    // The checker ended (a stop): nothing more to check.
                    if tx.send(target).await.is_err() {
                        break;
                    }
                }
            }
        }
        if let Some((decide, results)) = &self.decide {
            // This URL's own result may be decided now, and those of the
            // links on it whose targets came earlier.
            let mut targets: Vec<&Url> = found.iter().map(|(url, _)| url).collect();
            targets.push(&record.url);
            let decided = decide(&lock(&self.shared), &targets);
            for result in decided {
                // The reader went away: the check goes on for its report.
                if results.send(result).await.is_err() {
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
    /// The targets of `found` new to the checker (or now wanting anchors).
    fn new_targets(&mut self, found: &[(Url, bool)]) -> Vec<NewTarget> {
        let mut new = Vec::new();
        for (url, wants_anchors) in found {
            let wants_anchors = *wants_anchors;
            match self.sent.get(url) {
                Some(&anchors) if anchors || !wants_anchors => {}
                _ => {
                    self.sent.insert(url.clone(), wants_anchors);
                    new.push(NewTarget {
                        url: url.clone(),
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
pub(crate) fn file_page(shared: &mut Collected, page: &Url, doc: &PageLinks) -> Vec<(Url, bool)> {
    shared.apply(page, Filed::of(page, doc))
}

/// A fragment as an `id` is written: percent-escapes decoded (browsers
/// match `#caf%C3%A9` to `id="café"`).
pub(crate) fn percent_decoded(fragment: &str) -> String {
    percent_encoding::percent_decode_str(fragment)
        .decode_utf8_lossy()
        .into_owned()
}
