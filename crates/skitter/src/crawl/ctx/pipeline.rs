//! The parts one claimed URL goes through, from robots.txt to the browser:
//! the fetcher and what it keeps of bodies, the robots.txt cache, the CPU
//! pool bodies are parsed on, the sitemaps met so far, and the browser when
//! the crawl renders.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use crate::content::Extractor;
use crate::crawl::body::CpuPool;
use crate::crawl::config::Config;
use crate::fetch::{Fetcher, Keep};
use crate::host::HostKey;
use crate::host::LivePolicy;
use crate::host::slots::HostLimits;
use crate::output::Sink;
use crate::parse::discovery::SitemapRegistry;
use crate::parse::links::ExtractMode;
use crate::render::Renderer;
use crate::robots::{RobotsCache, RobotsStore};

/// The per-URL pipeline's parts.
pub(crate) struct Pipeline {
    pub(crate) fetcher: Fetcher,
    /// Which bodies the fetcher keeps, by what the outputs and the link
    /// extraction need.
    pub(crate) keep: Keep,
    /// Whether a sink wants the decoded copy of compressed HTML pages.
    pub(crate) keep_decoded: bool,
    /// Whether a sink reads each page's links, lines and anchors
    /// (`Page::links`).
    pub(crate) keep_links: bool,
    /// Whether a sink reads each HTML page's visible text (`Page::text`).
    pub(crate) keep_text: bool,
    /// How HTML pages become Markdown and text, when a sink reads them.
    pub(crate) content: Option<Arc<Extractor>>,
    /// Runs the decoding and link extraction of large bodies off the async threads.
    pub(crate) cpu: CpuPool,
    pub(crate) robots: Option<RobotsCache>,
    /// Hosts whose robots `Crawl-delay` was already handed to the frontier.
    pub(crate) delays_applied: Mutex<HashSet<HostKey>>,
    pub(crate) sitemaps: SitemapRegistry,
    /// The browser, when pages may be rendered (`--render auto|always`).
    pub(crate) renderer: Option<Arc<Renderer>>,
    /// Per-host politeness of the browser's requests, under the crawl's
    /// rules (see `worker::render`).
    pub(crate) render_hosts: Arc<HostLimits>,
}

impl Pipeline {
    /// The pipeline of one run: `sinks` say which bodies to keep, `sitemaps`
    /// already knows the probes the roots were seeded with, and `renderer`
    /// was started before the roots were offered.
    pub(crate) fn new(
        config: &Config,
        fetcher: Fetcher,
        robots_store: Option<Arc<dyn RobotsStore>>,
        sitemaps: SitemapRegistry,
        renderer: Option<Arc<Renderer>>,
        sinks: &[Box<dyn Sink>],
        politeness: Option<&LivePolicy>,
    ) -> Pipeline {
        let keep = if sinks.iter().any(|s| s.wants_bodies()) {
            Keep::Everything
        } else if config.extract_mode == ExtractMode::Resources {
            Keep::HtmlAndCss
        } else {
            Keep::Html
        };
        let robots = config.robots.clone().map(|policy| {
            let cache = RobotsCache::new(fetcher.clone(), policy).with_scope(config.scope.clone());
            match robots_store {
                Some(store) => cache.with_store(store),
                None => cache,
            }
        });
        Pipeline {
            fetcher,
            keep,
            keep_decoded: sinks.iter().any(|s| s.wants_decoded_bodies()),
            keep_links: sinks.iter().any(|s| s.wants_links()),
            keep_text: sinks.iter().any(|s| s.wants_text()),
            content: sinks
                .iter()
                .any(|s| s.wants_content())
                .then(|| config.content.clone()),
            cpu: CpuPool::new(),
            robots,
            delays_applied: Mutex::new(HashSet::new()),
            sitemaps,
            renderer,
            // The frontier's rules when they change live, so the browser's
            // requests follow a new `--per-host`/`--delay` too.
            render_hosts: match politeness {
                Some(live) => HostLimits::live(live.clone()),
                None => HostLimits::new(config.host_policy),
            },
        }
    }
}
