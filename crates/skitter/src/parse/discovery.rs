//! URL sources besides links: sitemaps (XML, sitemap indexes, gzip'd, plain text,
//! RSS and Atom feeds).
//!
//! Sitemap URLs go through the frontier like any page (so politeness, robots and
//! the seen set apply, and each is recorded in the report); this registry only
//! remembers which queued URLs are sitemaps and whether robots.txt named them,
//! since a sitemap may add URLs outside its own directory only when robots.txt
//! vouched for it (sitemaps.org). Their entries then pass the gate like links.
//!
//! What one sitemap index can add is bounded: indexes nest at most
//! [`MAX_INDEX_DEPTH`] deep (sitemaps.org allows none), one index lists at
//! most [`MAX_INDEX_ENTRIES`] sitemaps (the protocol's own cap), and a crawl
//! knows at most [`MAX_SITEMAPS`] sitemaps; entries past a limit are counted as
//! links skipped by `limit`. Only entries the gate admits are registered.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use url::Url;

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
    /// parent's trust; false (nothing registered) past a nesting or count limit.
    pub(crate) fn register_child(&self, parent: &Url, child: Url) -> bool {
        let mut sitemaps = lock(&self.sitemaps);
        let Some(&Known { trusted, depth }) = sitemaps.get(parent) else {
            return false;
        };
        if sitemaps.contains_key(&child) {
            return true;
        }
        if depth >= MAX_INDEX_DEPTH || sitemaps.len() >= MAX_SITEMAPS {
            return false;
        }
        let depth = depth + 1;
        sitemaps.insert(child, Known { trusted, depth });
        true
    }

    /// `Some(trusted)` when `url` is a known sitemap.
    pub(crate) fn lookup(&self, url: &Url) -> Option<bool> {
        if self.mode == SitemapMode::Off {
            return None;
        }
        lock(&self.sitemaps).get(url).map(|k| k.trusted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn index_chains_stop_at_the_depth_limit() {
        let registry = SitemapRegistry::new(SitemapMode::Robots);
        registry.register(url("http://h/0"), true);
        for i in 0..MAX_INDEX_DEPTH {
            let (parent, child) = (url(&format!("http://h/{i}")), format!("http://h/{}", i + 1));
            assert!(registry.register_child(&parent, url(&child)), "level {i}");
        }
        let last = url(&format!("http://h/{MAX_INDEX_DEPTH}"));
        assert!(!registry.register_child(&last, url("http://h/deeper")));
        assert_eq!(registry.lookup(&url("http://h/deeper")), None);
        assert_eq!(registry.lookup(&last), Some(true));
        assert!(!registry.register_child(&url("http://h/unknown"), url("http://h/x")));
    }
}
