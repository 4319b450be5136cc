//! Crawl configuration and the builder that checks it.
//!
//! There is one path from settings to a running crawl: [`CrawlerBuilder`]
//! writes one [`CrawlSettings`] value, [`CrawlerBuilder::build`] (the wiring, in
//! `assemble.rs`) checks it and reports the first problem as a typed
//! [`BuildError`], and the resulting [`Config`] is read-only for the whole
//! crawl. This module depends on the settings types of the parts it
//! configures, never on the crawler itself.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use regex::Regex;
use url::Url;

pub use crate::crawl::build_error::BuildError;

use crate::base::scope::{Scope, ScopeMode};
use crate::base::trap::TrapRules;
use crate::content::Extractor;
use crate::fetch::FetchConfig;
use crate::fetch::retry::RetryPolicy;
use crate::frontier::Frontier;
use crate::host::HostPolicy;
use crate::output::Sink;
use crate::output::report::ReportOptions;
use crate::parse::discovery::SitemapMode;
use crate::parse::items::Rules;
use crate::parse::links::ExtractMode;
use crate::render::RenderSettings;
use crate::robots::{RobotsPolicy, RobotsStore};
use crate::settings::CrawlSettings;
pub use crate::settings::{DEFAULT_MAX_CRAWL_DELAY, DEFAULT_MAX_REDIRECT, Limits};
use crate::state::store::OutcomeStore;

/// The validated settings of one crawl, read-only: set them on the
/// [`CrawlerBuilder`]. The accessors show what a caller may want to print;
/// the rest stays inside, so its representation is free to change.
#[derive(Clone, Debug)]
pub struct Config {
    /// Normalised roots, duplicates removed, in the order given.
    pub(crate) roots: Vec<Url>,
    /// Which hosts the crawl may enter.
    pub(crate) scope: Scope,
    /// Concurrent fetches at most (the baseline's `max_tasks`, default 100).
    pub(crate) max_tasks: usize,
    /// Redirect hops per chain (default 10).
    pub(crate) max_redirect: u32,
    /// Attempts and waits for transient failures.
    pub(crate) retry: RetryPolicy,
    /// A URL matching any of these is not fetched.
    pub(crate) exclude: Vec<Regex>,
    /// When non-empty, only URLs matching one of these are fetched (roots always are).
    pub(crate) include: Vec<Regex>,
    /// Limits that make every crawl end.
    pub(crate) limits: Limits,
    /// Crawler-trap rules (URL length, path depth, repeated segments, dates, query
    /// variants); `TrapRules::off()` disables them.
    pub(crate) trap_rules: TrapRules,
    /// robots.txt handling; `None` ignores robots.txt.
    pub(crate) robots: Option<RobotsPolicy>,
    /// The longest robots `Crawl-delay` honoured (default 30 s); longer ones are cut.
    pub(crate) max_crawl_delay: Duration,
    /// How long all of one URL's attempts may take together.
    pub(crate) url_deadline: Duration,
    /// Which links to follow.
    pub(crate) extract_mode: ExtractMode,
    /// Links read from one page at most.
    pub(crate) max_links_per_page: usize,
    /// Which sitemaps to read (default: those robots.txt names).
    pub(crate) sitemaps: SitemapMode,
    /// Per-host politeness every host starts with.
    pub(crate) host_policy: HostPolicy,
    /// How long in-flight fetches may run on after a stop is requested (default 5 s).
    pub(crate) grace: Duration,
    /// Everything about making requests.
    pub(crate) fetch: FetchConfig,
    /// Structured extraction rules, if any (see [`crate::parse::items`]).
    pub(crate) extract: Option<Arc<Rules>>,
    /// How the report keeps its per-URL records.
    pub(crate) report: ReportOptions,
    /// Which pages are rendered in a browser, and how (see [`crate::render`]).
    pub(crate) render: RenderSettings,
    /// How pages become Markdown and text, for the sinks that want it.
    pub(crate) content: Arc<Extractor>,
}

impl Config {
    /// The normalised roots, duplicates removed, in the order given.
    pub fn roots(&self) -> &[Url] {
        &self.roots
    }

    /// Concurrent fetches at most.
    pub fn max_tasks(&self) -> usize {
        self.max_tasks
    }

    /// The limits that make the crawl end.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Attempts and waits for transient failures.
    pub fn retry(&self) -> RetryPolicy {
        self.retry
    }

    /// The `--exclude` patterns, as given.
    pub fn exclude(&self) -> impl Iterator<Item = &str> {
        self.exclude.iter().map(Regex::as_str)
    }

    /// The rendering settings (`--render`).
    pub fn render(&self) -> &RenderSettings {
        &self.render
    }

    /// The `--include` patterns, as given.
    pub fn include(&self) -> impl Iterator<Item = &str> {
        self.include.iter().map(Regex::as_str)
    }
}

/// Builds a [`Crawler`](crate::Crawler): `Crawler::builder().root("example.com").build()?`.
///
/// A thin layer over one [`CrawlSettings`] value: each setter writes one field
/// of it (a later call wins), [`Crawler::from_settings`](crate::Crawler::from_settings)
/// starts from a whole value, and [`CrawlerBuilder::settings`] shows it. Besides
/// the settings it holds the live parts that cannot be written down: outputs, a
/// frontier, stores, parsed rules.
#[derive(Default)]
pub struct CrawlerBuilder {
    pub(crate) settings: CrawlSettings,
    /// Which setters of the built-in frontier were called (see
    /// [`BuildError::FrontierSetting`]).
    pub(crate) frontier_settings: Vec<&'static str>,
    /// Rules given parsed ([`Self::extract`]); they win over
    /// [`CrawlSettings::extract`].
    pub(crate) rules: Option<Arc<Rules>>,
    pub(crate) sinks: Vec<Box<dyn Sink>>,
    pub(crate) frontier: Option<Arc<dyn Frontier>>,
    pub(crate) outcomes: Option<Arc<dyn OutcomeStore + Send + Sync>>,
    pub(crate) robots_store: Option<Arc<dyn RobotsStore>>,
}

impl CrawlerBuilder {
    /// A builder starting from these settings.
    pub fn from_settings(settings: CrawlSettings) -> Self {
        CrawlerBuilder {
            settings,
            ..CrawlerBuilder::default()
        }
    }

    /// The settings so far.
    pub fn settings(&self) -> &CrawlSettings {
        &self.settings
    }

    /// Changes the settings in place, for a field without a setter of its own.
    pub fn with_settings(mut self, change: impl FnOnce(&mut CrawlSettings)) -> Self {
        change(&mut self.settings);
        self
    }
}

impl CrawlerBuilder {
    /// Adds a root URL; `http://` is assumed when it has no scheme.
    pub fn root(mut self, root: impl Into<String>) -> Self {
        self.settings.roots.push(root.into());
        self
    }

    /// Adds several root URLs.
    pub fn roots<I: IntoIterator<Item = S>, S: Into<String>>(mut self, roots: I) -> Self {
        self.settings
            .roots
            .extend(roots.into_iter().map(Into::into));
        self
    }

    /// Strict (the roots' hosts, `www.` toggled) or lenient (same registrable domain).
    pub fn scope_mode(mut self, mode: ScopeMode) -> Self {
        self.settings.scope = mode;
        self
    }

    /// Only hosts equal to or under one of these domains (in every scope mode;
    /// with [`ScopeMode::AnyHost`] this is wget's `--domains`); see [`Scope`].
    pub fn domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, domains: I) -> Self {
        self.settings
            .domains
            .extend(domains.into_iter().map(Into::into));
        self
    }

    /// Never hosts equal to or under one of these domains; see [`Scope`].
    pub fn exclude_domains<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        domains: I,
    ) -> Self {
        self.settings
            .exclude_domains
            .extend(domains.into_iter().map(Into::into));
        self
    }

    /// Concurrent fetches at most (default 100, at least 1).
    pub fn max_tasks(mut self, n: usize) -> Self {
        self.settings.run.max_tasks = n;
        self
    }

    /// Redirect hops per chain (default 10).
    pub fn max_redirect(mut self, n: u32) -> Self {
        self.settings.request.max_redirect = n;
        self
    }

    /// Attempts per URL, the first included (default 4, at least 1); sets the
    /// `max_tries` of the retry policy (a later [`Self::retry_policy`]
    /// replaces it).
    pub fn max_tries(mut self, n: u32) -> Self {
        self.settings.request.retry.max_tries = n;
        self
    }

    /// The whole retry policy (waits and caps); see [`Self::max_tries`].
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.settings.request.retry = policy;
        self
    }

    /// Skips URLs matching this regex (unanchored search on the absolute URL).
    pub fn exclude(mut self, pattern: impl Into<String>) -> Self {
        self.settings.exclude.push(pattern.into());
        self
    }

    /// Fetches only URLs matching one of the include regexes (roots always are).
    pub fn include(mut self, pattern: impl Into<String>) -> Self {
        self.settings.include.push(pattern.into());
        self
    }

    /// Follows links at most this deep (roots are depth 0); sets the depth of
    /// the limits (a later [`Self::limits`] replaces it).
    pub fn max_depth(mut self, depth: u32) -> Self {
        self.settings.limits.max_depth = Some(depth);
        self
    }

    /// All crawl limits at once (depth, pages, time, per host); see
    /// [`Self::max_depth`].
    pub fn limits(mut self, limits: Limits) -> Self {
        self.settings.limits = limits;
        self
    }

    /// Crawler-trap limits; default `TrapRules::default()`, `TrapRules::off()`
    /// disables them.
    pub fn trap_rules(mut self, rules: TrapRules) -> Self {
        self.settings.traps = rules;
        self
    }

    /// Ignores robots.txt entirely (default: obeyed).
    pub fn ignore_robots(mut self, ignore: bool) -> Self {
        self.settings.ignore_robots = ignore;
        self
    }

    /// How robots.txt is cached and retried.
    pub fn robots_policy(mut self, policy: RobotsPolicy) -> Self {
        self.settings.robots = policy;
        self
    }

    /// How long all of one URL's attempts may take together (default twice
    /// the fetch's `total_timeout`); see [`CrawlSettings::url_deadline`](crate::settings::CrawlSettings::url_deadline).
    pub fn url_deadline(mut self, deadline: Duration) -> Self {
        self.settings.url_deadline = Some(deadline);
        self
    }

    /// Caps robots `Crawl-delay` (default 30 s).
    pub fn max_crawl_delay(mut self, cap: Duration) -> Self {
        self.settings.max_crawl_delay = cap;
        self
    }

    /// Reads at most `n` links of a page (default
    /// [`DEFAULT_MAX_LINKS`](crate::parse::links::DEFAULT_MAX_LINKS)); the
    /// rest are dropped unread and counted in the report (`links_cut`).
    pub fn max_links_per_page(mut self, n: usize) -> Self {
        self.settings.max_links_per_page = n;
        self
    }

    /// Which links to follow (default: pages only).
    pub fn extract_mode(mut self, mode: ExtractMode) -> Self {
        self.settings.extract_mode = mode;
        self
    }

    /// Which sitemaps to read: off, those robots.txt names (default), or also
    /// `/sitemap.xml` of every root's origin.
    pub fn sitemaps(mut self, mode: SitemapMode) -> Self {
        self.settings.sitemaps = mode;
        self
    }

    /// At most `n` requests in flight to one host (default 8), from six (or
    /// `n`, if lower) for a new host, doubled per clean answer (slow start). A setting of
    /// the built-in frontier: with [`Self::frontier`], give it to that
    /// frontier instead (`build` refuses both).
    pub fn per_host(mut self, n: usize) -> Self {
        self.settings.request.politeness.max_in_flight = n;
        self.frontier_settings.push("per_host");
        self
    }

    /// Minimum gap between request starts to one host, plus up to `jitter`
    /// more. A setting of the built-in frontier, like [`Self::per_host`].
    pub fn host_delay(mut self, delay: Duration, jitter: Duration) -> Self {
        self.settings.request.politeness.delay = delay;
        self.settings.request.politeness.jitter = jitter;
        self.frontier_settings.push("host_delay");
        self
    }

    /// How long an origin's robots.txt may stay unavailable while its URLs wait
    /// (default 10 min); see [`RobotsPolicy::max_outage`].
    pub fn max_outage(mut self, limit: Duration) -> Self {
        self.settings.robots.max_outage = limit;
        self
    }

    /// How long in-flight fetches may run after a stop is requested (default 5 s).
    pub fn grace(mut self, grace: Duration) -> Self {
        self.settings.run.grace = grace;
        self
    }

    /// The request settings (timeouts, user agent, body cap, TLS, proxy, headers).
    pub fn fetch_config(mut self, fetch: FetchConfig) -> Self {
        self.settings.request.fetch = fetch;
        self
    }

    /// Extracts structured records from pages whose URL a rule set matches;
    /// each page's [`Items`](crate::parse::items::Items) reach the sinks with it.
    /// Extraction runs on the bounded CPU pool, off the async workers.
    pub fn extract(mut self, rules: Rules) -> Self {
        self.rules = Some(Arc::new(rules));
        self
    }

    /// Adds an output; every finished page goes to every sink, in finishing order.
    pub fn sink(mut self, sink: Box<dyn Sink>) -> Self {
        self.sinks.push(sink);
        self
    }

    /// Uses this frontier instead of a fresh in-memory one.
    pub fn frontier(mut self, frontier: Arc<dyn Frontier>) -> Self {
        self.frontier = Some(frontier);
        self
    }

    /// Memory for the in-memory frontier's seen set and queue (default 256 MiB);
    /// beyond it they spill to temporary files. A setting of the built-in
    /// frontier, like [`Self::per_host`].
    pub fn memory_budget(mut self, bytes: usize) -> Self {
        self.settings.run.memory_budget = Some(bytes);
        self.frontier_settings.push("memory_budget");
        self
    }

    /// How the report keeps its per-URL records (default: kept, 32 MiB in
    /// memory, then spilled to sorted runs in the system temporary directory;
    /// see [`ReportOptions`]). Works with any frontier.
    pub fn report_options(mut self, options: ReportOptions) -> Self {
        self.settings.run.report = options;
        self
    }

    /// Where the in-memory frontier spills (default: the system temporary
    /// directory); `build` fails if no file can be created in the one given.
    pub fn spill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.settings.run.spill_dir = Some(dir.into());
        self.frontier_settings.push("spill_dir");
        self
    }

    /// Builds the final report from this store (which holds every URL's record
    /// across resumed runs) instead of from this run's records alone.
    pub fn outcome_store(mut self, store: Arc<dyn OutcomeStore + Send + Sync>) -> Self {
        self.outcomes = Some(store);
        self
    }

    /// Shares robots.txt fetches with the crawl's other processes through `store`
    /// (a Redis crawl's workers fetch each origin's file once between them).
    pub fn robots_store(mut self, store: Arc<dyn RobotsStore>) -> Self {
        self.robots_store = Some(store);
        self
    }

    /// Has the proxy pool also add each proxy's counts to `ledger`, for a
    /// reporter outside this crawl's report (a Redis crawl's workers add them
    /// to the crawl-wide totals; see [`crate::cluster::RedisStatsSink::proxies`]).
    /// Set after [`Self::fetch_config`], which replaces it.
    pub fn proxy_ledger(mut self, ledger: Arc<crate::fetch::ProxyLedger>) -> Self {
        self.settings.request.fetch.proxy_ledger = Some(ledger);
        self
    }

    /// Renders pages that need JavaScript in headless Chromium (default:
    /// never; see [`crate::render`]). The browser starts with the crawl, which
    /// fails with [`CrawlError::Render`](crate::CrawlError::Render) if it cannot.
    pub fn render(mut self, settings: RenderSettings) -> Self {
        self.settings.render = settings;
        self
    }

    /// What of each HTML page its Markdown and text keep (default: the main
    /// content; see [`crate::content`]), for the sinks that ask for them
    /// ([`Sink::wants_content`]).
    /// `build` fails with [`BuildError::Content`] on a selector that does
    /// not parse.
    pub fn content(mut self, options: crate::content::ContentOptions) -> Self {
        self.settings.content = options;
        self
    }
}
