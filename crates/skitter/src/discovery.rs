//! URL sources besides links: sitemaps (XML, sitemap indexes, gzip'd, plain text,
//! RSS and Atom feeds).
//!
//! Sitemap URLs go through the frontier like any page (so politeness, robots and
//! the seen set apply, and each is recorded in the report); this registry only
//! remembers which queued URLs are sitemaps and whether robots.txt named them,
//! since a sitemap may add URLs outside its own directory only when robots.txt
//! vouched for it (sitemaps.org). Their entries then pass the gate like links.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use url::Url;

/// Which sitemaps the crawl follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
    /// Sitemap URL → whether robots.txt named it (or an index robots named).
    sitemaps: Mutex<HashMap<Url, bool>>,
    /// Origins whose robots.txt `Sitemap:` lines were already taken.
    origins: Mutex<HashSet<String>>,
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

    /// The `/sitemap.xml` of each root's origin, when probing is on.
    pub(crate) fn probes(&self, roots: &[Url]) -> Vec<Url> {
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
            self.register(crate::urlnorm::normalize(url.clone()), true);
        }
        urls
    }

    /// Remembers `url` as a sitemap (`trusted`: named by robots.txt).
    pub(crate) fn register(&self, url: Url, trusted: bool) {
        lock(&self.sitemaps).entry(url).or_insert(trusted);
    }

    /// `Some(trusted)` when `url` is a known sitemap.
    pub(crate) fn lookup(&self, url: &Url) -> Option<bool> {
        if self.mode == SitemapMode::Off {
            return None;
        }
        lock(&self.sitemaps).get(url).copied()
    }
}
