//! URL sources besides links: sitemaps (XML, sitemap indexes, gzip'd, plain text,
//! RSS and Atom feeds).
//!
//! Sitemap URLs go through the frontier like any page (so politeness, robots and
//! the seen set apply, and each is recorded in the report); this registry only
//! remembers which queued URLs are sitemaps and whether robots.txt named them,
//! since a sitemap may add URLs outside its own directory only when robots.txt
//! vouched for it (sitemaps.org). Their entries then pass the gate like links.
//!
//! The registry is one process's memory, so what a queued URL is travels with
//! it: each sitemap is queued as a [`RequestKind::Sitemap`] carrying its trust
//! and nesting, and a claimed request of that kind is taken back into the
//! registry (`SitemapRegistry::sitemap`). The kind rather than a set stored
//! beside the state, because then every frontier (memory, `--state`, Redis)
//! keeps it in the entry it already writes, with no second store to keep in
//! step and no extra round trip per claim; an entry without a kind is a page,
//! as every entry was before.
//!
//! What one sitemap index can add is bounded: indexes nest at most
//! [`MAX_INDEX_DEPTH`] deep (sitemaps.org allows none), one index lists at
//! most [`MAX_INDEX_ENTRIES`] sitemaps (the protocol's own cap), and a crawl
//! knows at most [`MAX_SITEMAPS`] sitemaps; entries past a limit are counted as
//! links skipped by `limit`. Only entries the gate admits are registered.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use url::Url;

use crate::base::request::{Request, RequestKind};

/// How deep sitemap indexes may nest below a sitemap named by robots.txt or
/// probed (which is depth 0).
pub const MAX_INDEX_DEPTH: u32 = 3;
/// Entries read from one sitemap index.
pub const MAX_INDEX_ENTRIES: usize = 50_000;
/// Sitemaps one crawl follows.
pub const MAX_SITEMAPS: usize = 100_000;

/// Which sitemaps the crawl follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SitemapMode {
    /// None at all.
    Off,
    /// Those named by `Sitemap:` lines in robots.txt (the default).
    #[default]
    Robots,
    /// Those, plus `/sitemap.xml` on every root's origin.
    Probe,
}

/// The sitemaps known to the crawl.
#[derive(Debug, Default)]
pub(crate) struct SitemapRegistry {
    mode: SitemapMode,
    /// Sitemap URL → whether robots.txt named it (or an index robots named)
    /// and how many indexes lead to it.
    sitemaps: Mutex<HashMap<Url, Known>>,
    /// Origins whose robots.txt `Sitemap:` lines were already taken.
    origins: Mutex<HashSet<String>>,
}

/// What the registry knows of one sitemap.
#[derive(Clone, Copy, Debug)]
struct Known {
    trusted: bool,
    depth: u32,
}

impl Known {
    /// The kind a sitemap known so is queued as.
    fn kind(self) -> RequestKind {
        RequestKind::Sitemap {
            trusted: self.trusted,
            nesting: self.depth,
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl SitemapRegistry {
    pub(crate) fn new(mode: SitemapMode) -> Self {
        SitemapRegistry {
            mode,
            ..SitemapRegistry::default()
        }
    }

    /// The `/sitemap.xml` of each root's origin: a guess where a sitemap may be, when looking for them is on.
    pub(crate) fn guesses(&self, roots: &[Url]) -> Vec<Url> {
        if self.mode != SitemapMode::Probe {
            return Vec::new();
        }
        let mut out: Vec<Url> = Vec::new();
        for root in roots {
            if let Ok(url) = root.join("/sitemap.xml")
                && !out.contains(&url)
            {
                self.register(url.clone(), false);
                out.push(url);
            }
        }
        out
    }

    /// Takes an origin's robots.txt `Sitemap:` lines, once per origin.
    pub(crate) fn take_robots_lines(&self, origin: &str, lines: &[String], base: &Url) -> Vec<Url> {
        if self.mode == SitemapMode::Off
            || lines.is_empty()
            || !lock(&self.origins).insert(origin.to_string())
        {
            return Vec::new();
        }
        let urls: Vec<Url> = lines
            .iter()
            .filter_map(|l| base.join(l.trim()).ok())
            .collect();
        for url in &urls {
            self.register(crate::base::urlnorm::normalize(url.clone()), true);
        }
        urls
    }

    /// Remembers `url` as a sitemap (`trusted`: named by robots.txt).
    pub(crate) fn register(&self, url: Url, trusted: bool) {
        lock(&self.sitemaps)
            .entry(url)
            .or_insert(Known { trusted, depth: 0 });
    }

    /// Remembers `child`, listed by the index `parent`, as a sitemap with the
    /// parent's trust, and returns the kind to queue it as; `None` (nothing
    /// registered) past a nesting or count limit.
    pub(crate) fn register_child(&self, parent: &Url, child: Url) -> Option<RequestKind> {
        let mut sitemaps = lock(&self.sitemaps);
        let &Known { trusted, depth } = sitemaps.get(parent)?;
        if let Some(known) = sitemaps.get(&child) {
            return Some(known.kind());
        }
        if depth >= MAX_INDEX_DEPTH || sitemaps.len() >= MAX_SITEMAPS {
            return None;
        }
        let known = Known {
            trusted,
            depth: depth + 1,
        };
        sitemaps.insert(child, known);
        Some(known.kind())
    }

    /// `Some(trusted)` when `req` is a sitemap: queued as one (it is then
    /// remembered here, as its children's parent, even when another process
    /// queued it), or known here by its URL.
    pub(crate) fn sitemap(&self, req: &Request) -> Option<bool> {
        if self.mode == SitemapMode::Off {
            return None;
        }
        let mut sitemaps = lock(&self.sitemaps);
        if let RequestKind::Sitemap { trusted, nesting } = req.kind {
            let known = Known {
                trusted,
                depth: nesting,
            };
            return Some(sitemaps.entry(req.url.clone()).or_insert(known).trusted);
        }
        sitemaps.get(&req.url).map(|k| k.trusted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn page(s: &str) -> Request {
        Request {
            url: url(s),
            depth: 0,
            redirects_left: 5,
            parent: None,
            kind: RequestKind::Page,
        }
    }

    #[test]
    fn index_chains_stop_at_the_depth_limit() {
        let registry = SitemapRegistry::new(SitemapMode::Robots);
        registry.register(url("http://h/0"), true);
        for i in 0..MAX_INDEX_DEPTH {
            let (parent, child) = (url(&format!("http://h/{i}")), format!("http://h/{}", i + 1));
            assert!(
                registry.register_child(&parent, url(&child)).is_some(),
                "level {i}"
            );
        }
        let last = format!("http://h/{MAX_INDEX_DEPTH}");
        assert_eq!(
            registry.register_child(&url(&last), url("http://h/deeper")),
            None
        );
        assert_eq!(registry.sitemap(&page("http://h/deeper")), None);
        assert_eq!(registry.sitemap(&page(&last)), Some(true));
        assert_eq!(
            registry.register_child(&url("http://h/unknown"), url("http://h/x")),
            None
        );
    }

    #[test]
    fn a_sitemap_queued_elsewhere_is_known_with_its_trust_and_nesting() {
        // Another process registered "http://h/index" and queued its child.
        let registry = SitemapRegistry::new(SitemapMode::Robots);
        let child = Request {
            kind: RequestKind::Sitemap {
                trusted: true,
                nesting: MAX_INDEX_DEPTH,
            },
            ..page("http://h/child")
        };
        assert_eq!(registry.sitemap(&page("http://h/child")), None);
        assert_eq!(registry.sitemap(&child), Some(true));
        // Its nesting came with it: it may list no deeper index.
        assert_eq!(
            registry.register_child(&child.url, url("http://h/grandchild")),
            None
        );
        let off = SitemapRegistry::new(SitemapMode::Off);
        assert_eq!(off.sitemap(&child), None);
    }
}
