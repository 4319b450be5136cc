//! What a test site serves: the one configuration struct.
//!
//! Plain public fields plus `Default`, so a test states only what it cares
//! about: `SiteConfig { pages: 10, ..SiteConfig::default() }`.

use std::time::Duration;

/// Written in [`SiteConfig::robots_txt`], [`SiteConfig::sitemap_xml`] and
/// [`SiteConfig::extra_root_links`], replaced by the running site's origin
/// (`http://127.0.0.1:PORT`), because the port is only known once bound.
pub const ORIGIN_PLACEHOLDER: &str = "{origin}";

/// Configuration of one test-site instance.
#[derive(Clone, Debug)]
pub struct SiteConfig {
    /// Number of generated pages `/p/0` .. `/p/{pages-1}`.
    pub pages: usize,
    /// Child links per page; the pages form a tree of this fanout (0 acts as 1).
    pub fanout: usize,
    /// Minimum size in bytes of each generated page's HTML (padded with text).
    pub page_size: usize,
    /// Delay added before every response; counted as in flight.
    pub latency: Duration,
    /// Status and body for `/robots.txt`; `None` serves 404.
    pub robots_txt: Option<(u16, String)>,
    /// Body for `/sitemap.xml`; `None` serves 404.
    pub sitemap_xml: Option<String>,
    /// Extra links put on `/`, for example to another site instance.
    pub extra_root_links: Vec<String>,
    /// Serve HTML gzip-encoded when the request's `Accept-Encoding` allows it.
    pub gzip: bool,
    /// Link `/specials` (redirects, errors, assets, broken bodies) from `/`.
    pub specials: bool,
    /// Link the infinite crawler traps (`/cal/..`, `/loop/a/`, `/session`) from `/`.
    pub traps: bool,
    /// Record each request's arrival time, for [`crate::Stats::starts`].
    pub record_starts: bool,
    /// Fault modes: failing URLs, robots.txt outages, rate limits, outages.
    pub faults: crate::Faults,
}

impl Default for SiteConfig {
    fn default() -> Self {
        SiteConfig {
            pages: 100,
            fanout: 10,
            page_size: 4096,
            latency: Duration::ZERO,
            robots_txt: None,
            sitemap_xml: None,
            extra_root_links: Vec::new(),
            gzip: false,
            specials: false,
            traps: false,
            record_starts: false,
            faults: crate::Faults::default(),
        }
    }
}

impl SiteConfig {
    /// The paths a complete crawl from `/` must fetch on the generated site:
    /// `/` and every `/p/{i}` (specials, traps and extra links excluded).
    pub fn page_paths(&self) -> Vec<String> {
        page_paths(self.pages)
    }

    /// A copy with [`ORIGIN_PLACEHOLDER`] replaced by `origin` everywhere.
    pub(crate) fn with_origin(&self, origin: &str) -> SiteConfig {
        let fill = |s: &String| s.replace(ORIGIN_PLACEHOLDER, origin);
        SiteConfig {
            robots_txt: self
                .robots_txt
                .as_ref()
                .map(|(code, body)| (*code, fill(body))),
            sitemap_xml: self.sitemap_xml.as_ref().map(fill),
            extra_root_links: self.extra_root_links.iter().map(fill).collect(),
            ..self.clone()
        }
    }
}

/// `/` followed by `/p/0` .. `/p/{pages-1}`.
pub(crate) fn page_paths(pages: usize) -> Vec<String> {
    std::iter::once("/".to_string())
        .chain((0..pages).map(|i| format!("/p/{i}")))
        .collect()
}
