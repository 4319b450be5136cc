//! Crawl configuration and the builder that checks it.
//!
//! There is one path from settings to a running crawl: [`CrawlerBuilder`] collects
//! them, `build()` validates everything (roots, patterns, the HTTP client) and
//! reports the first problem as a typed [`BuildError`], and the resulting
//! [`Config`] is read-only for the whole crawl.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use regex::Regex;
use url::Url;

use crate::crawler::Crawler;
use crate::discovery::SitemapMode;
use crate::extract::ExtractMode;
use crate::fetch::{FetchConfig, FetchSetupError, Fetcher};
use crate::frontier::{
    DEFAULT_MEMORY_BUDGET, Frontier, FrontierError, HostPolicy, MemoryFrontier, MemoryOptions,
};
use crate::items::Rules;
use crate::retry::RetryPolicy;
use crate::robots::{RobotsPolicy, RobotsStore};
use crate::scope::{Scope, ScopeMode};
use crate::sink::Sink;
use crate::store::OutcomeStore;
use crate::trap::TrapRules;
use crate::urlnorm::{self, UrlError};

/// The validated settings of one crawl.
#[derive(Clone, Debug)]
pub struct Config {
    /// Normalised roots, duplicates removed, in the order given.
    pub roots: Vec<Url>,
    /// Which hosts the crawl may enter.
    pub scope: Scope,
    /// Concurrent fetches at most (the baseline's `max_tasks`, default 100).
    pub max_tasks: usize,
    /// Redirect hops per chain (default 10).
    pub max_redirect: u32,
    /// Attempts and waits for transient failures.
    pub retry: RetryPolicy,
    /// A URL matching any of these is not fetched.
    pub exclude: Vec<Regex>,
    /// When non-empty, only URLs matching one of these are fetched (roots always are).
    pub include: Vec<Regex>,
    /// Limits that make every crawl end.
    pub limits: Limits,
    /// Crawler-trap rules (URL length, path depth, repeated segments, dates, query
    /// variants); `TrapRules::off()` disables them.
    pub trap_rules: TrapRules,
    /// robots.txt handling; `None` ignores robots.txt.
    pub robots: Option<RobotsPolicy>,
    /// The longest robots `Crawl-delay` honoured (default 30 s); longer ones are cut.
    pub max_crawl_delay: Duration,
    /// Which links to follow.
    pub extract_mode: ExtractMode,
    /// Which sitemaps to read (default: those robots.txt names).
    pub sitemaps: SitemapMode,
    /// Per-host politeness every host starts with.
    pub host_policy: HostPolicy,
    /// How long in-flight fetches may run on after a stop is requested (default 5 s).
    pub grace: Duration,
    /// Everything about making requests.
    pub fetch: FetchConfig,
    /// Structured extraction rules, if any (see [`crate::items`]).
    pub extract: Option<Arc<Rules>>,
}

/// Limits that make every crawl end; `None` means no limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Links deeper than this are not followed (roots are depth 0).
    pub max_depth: Option<u32>,
    /// At most this many URLs are fetched; the crawl then stops with `Todo` left.
    pub max_pages: Option<u64>,
    /// The crawl stops after this long (in-flight fetches get the grace period).
    pub max_time: Option<Duration>,
    /// At most this many URLs are fetched per host; further ones are skipped.
    pub max_per_host: Option<u64>,
}

/// A setting was invalid; nothing was started.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// No root URL was given.
    #[error("no root URL given")]
    NoRoots,
    /// A root could not be used.
    #[error("bad root URL {arg:?}: {source}")]
    Root {
        /// The root as given.
        arg: String,
        /// Why it was rejected.
        source: UrlError,
    },
    /// An `--exclude`/`--include` pattern is not a valid regex.
    #[error("bad pattern {pattern:?}: {source}")]
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// The regex error.
        source: regex::Error,
    },
    /// A numeric setting is out of range.
    #[error("{0}")]
    Value(String),
    /// The HTTP client could not be set up.
    #[error(transparent)]
    Fetch(#[from] FetchSetupError),
    /// The in-memory frontier cannot create spill files where it was told to.
    #[error(transparent)]
    Frontier(#[from] FrontierError),
}

/// Builds a [`Crawler`]: `Crawler::builder().root("example.com").build()?`.
#[derive(Default)]
pub struct CrawlerBuilder {
    roots: Vec<String>,
    scope_mode: ScopeMode,
    max_tasks: Option<usize>,
    max_redirect: Option<u32>,
    retry: RetryPolicy,
    exclude: Vec<String>,
    include: Vec<String>,
    limits: Limits,
    trap_rules: Option<TrapRules>,
    ignore_robots: bool,
    robots_policy: RobotsPolicy,
    max_crawl_delay: Option<Duration>,
    extract_mode: Option<ExtractMode>,
    sitemaps: SitemapMode,
    host_policy: HostPolicy,
    grace: Option<Duration>,
    fetch: FetchConfig,
    extract: Option<Arc<Rules>>,
    sinks: Vec<Box<dyn Sink>>,
    frontier: Option<Arc<dyn Frontier>>,
    memory_budget: Option<usize>,
    spill_dir: Option<PathBuf>,
    outcomes: Option<Arc<dyn OutcomeStore + Send + Sync>>,
    robots_store: Option<Arc<dyn RobotsStore>>,
}

impl CrawlerBuilder {
    /// Adds a root URL; `http://` is assumed when it has no scheme.
    pub fn root(mut self, root: impl Into<String>) -> Self {
        self.roots.push(root.into());
        self
    }

    /// Adds several root URLs.
    pub fn roots<I: IntoIterator<Item = S>, S: Into<String>>(mut self, roots: I) -> Self {
        self.roots.extend(roots.into_iter().map(Into::into));
        self
    }

    /// Strict (the roots' hosts, `www.` toggled) or lenient (same registrable domain).
    pub fn scope_mode(mut self, mode: ScopeMode) -> Self {
        self.scope_mode = mode;
        self
    }

    /// Concurrent fetches at most (default 100, at least 1).
    pub fn max_tasks(mut self, n: usize) -> Self {
        self.max_tasks = Some(n);
        self
    }

    /// Redirect hops per chain (default 10).
    pub fn max_redirect(mut self, n: u32) -> Self {
        self.max_redirect = Some(n);
        self
    }

    /// Attempts per URL, the first included (default 4, at least 1).
    pub fn max_tries(mut self, n: u32) -> Self {
        self.retry.max_tries = n;
        self
    }

    /// The whole retry policy (waits and caps).
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Skips URLs matching this regex (unanchored search on the absolute URL).
    pub fn exclude(mut self, pattern: impl Into<String>) -> Self {
        self.exclude.push(pattern.into());
        self
    }

    /// Fetches only URLs matching one of the include regexes (roots always are).
    pub fn include(mut self, pattern: impl Into<String>) -> Self {
        self.include.push(pattern.into());
        self
    }

    /// Follows links at most this deep (roots are depth 0).
    pub fn max_depth(mut self, depth: u32) -> Self {
        self.limits.max_depth = Some(depth);
        self
    }

    /// All crawl limits at once (depth, pages, time, per host).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Crawler-trap limits; default `TrapRules::default()`, `TrapRules::off()`
    /// disables them.
    pub fn trap_rules(mut self, rules: TrapRules) -> Self {
        self.trap_rules = Some(rules);
        self
    }

    /// Ignores robots.txt entirely (default: obeyed).
    pub fn ignore_robots(mut self, ignore: bool) -> Self {
        self.ignore_robots = ignore;
        self
    }

    /// How robots.txt is cached and retried.
    pub fn robots_policy(mut self, policy: RobotsPolicy) -> Self {
        self.robots_policy = policy;
        self
    }

    /// Caps robots `Crawl-delay` (default 30 s).
    pub fn max_crawl_delay(mut self, cap: Duration) -> Self {
        self.max_crawl_delay = Some(cap);
        self
    }

    /// Which links to follow (default: pages only).
    pub fn extract_mode(mut self, mode: ExtractMode) -> Self {
        self.extract_mode = Some(mode);
        self
    }

    /// Which sitemaps to read: off, those robots.txt names (default), or also
    /// `/sitemap.xml` of every root's origin.
    pub fn sitemaps(mut self, mode: SitemapMode) -> Self {
        self.sitemaps = mode;
        self
    }

    /// At most `n` requests in flight to one host (default 8).
    pub fn per_host(mut self, n: usize) -> Self {
        self.host_policy.max_in_flight = n;
        self
    }

    /// Minimum gap between request starts to one host, plus up to `jitter` more.
    pub fn host_delay(mut self, delay: Duration, jitter: Duration) -> Self {
        self.host_policy.delay = delay;
        self.host_policy.jitter = jitter;
        self
    }

    /// How long an origin's robots.txt may stay unavailable while its URLs wait
    /// (default 10 min); see [`RobotsPolicy::max_outage`].
    pub fn max_outage(mut self, limit: Duration) -> Self {
        self.robots_policy.max_outage = limit;
        self
    }

    /// How long in-flight fetches may run after a stop is requested (default 5 s).
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = Some(grace);
        self
    }

    /// The request settings (timeouts, user agent, body cap, TLS, proxy, headers).
    pub fn fetch_config(mut self, fetch: FetchConfig) -> Self {
        self.fetch = fetch;
        self
    }

    /// Extracts structured records from pages whose URL a rule set matches;
    /// each page's [`Items`](crate::items::Items) reach the sinks with it.
    /// Extraction runs on the bounded CPU pool, off the async workers.
    pub fn extract(mut self, rules: Rules) -> Self {
        self.extract = Some(Arc::new(rules));
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
    /// beyond it they spill to temporary files. Ignored with [`Self::frontier`].
    pub fn memory_budget(mut self, bytes: usize) -> Self {
        self.memory_budget = Some(bytes);
        self
    }

    /// Where the in-memory frontier spills (default: the system temporary
    /// directory); `build` fails if no file can be created in the one given.
    pub fn spill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.spill_dir = Some(dir.into());
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

    /// Validates everything and builds the crawler.
    pub fn build(mut self) -> Result<Crawler, BuildError> {
        let mut roots = parse_roots(&self.roots)?;
        // Credentials in a root URL go to that host as Basic auth and leave
        // the URL, so nothing that prints URLs can print them.
        for root in &mut roots {
            if let Some(credentials) = take_credentials(root) {
                self.fetch.site_credentials.push(credentials);
            }
        }
        let mut distinct: Vec<Url> = Vec::with_capacity(roots.len());
        for root in roots {
            if !distinct.contains(&root) {
                distinct.push(root);
            }
        }
        let roots = distinct;
        // The roots' hosts are the ones the user named (see `PrivateAccess::Named`).
        for host in roots.iter().filter_map(Url::host_str) {
            if !self.fetch.named_hosts.iter().any(|h| h == host) {
                self.fetch.named_hosts.push(host.to_owned());
            }
        }
        let max_tasks = self.max_tasks.unwrap_or(100);
        if max_tasks == 0 {
            return Err(BuildError::Value("max_tasks must be at least 1".into()));
        }
        if self.retry.max_tries == 0 {
            return Err(BuildError::Value("max_tries must be at least 1".into()));
        }
        if self.host_policy.max_in_flight == 0 {
            return Err(BuildError::Value("per_host must be at least 1".into()));
        }
        let config = Config {
            scope: Scope::new(&roots, self.scope_mode),
            roots,
            max_tasks,
            max_redirect: self.max_redirect.unwrap_or(10),
            retry: self.retry,
            exclude: compile(&self.exclude)?,
            include: compile(&self.include)?,
            limits: self.limits,
            trap_rules: self.trap_rules.unwrap_or_default(),
            robots: (!self.ignore_robots).then_some(self.robots_policy),
            max_crawl_delay: self.max_crawl_delay.unwrap_or(Duration::from_secs(30)),
            extract_mode: self.extract_mode.unwrap_or(ExtractMode::Pages),
            sitemaps: self.sitemaps,
            host_policy: self.host_policy,
            grace: self.grace.unwrap_or(Duration::from_secs(5)),
            fetch: self.fetch.clone(),
            extract: self.extract,
        };
        let fetcher = Fetcher::new(self.fetch)?;
        let frontier: Arc<dyn Frontier> = match self.frontier {
            Some(frontier) => frontier,
            None => Arc::new(MemoryFrontier::with_options(MemoryOptions {
                policy: config.host_policy,
                memory_budget: self.memory_budget.unwrap_or(DEFAULT_MEMORY_BUDGET),
                spill_dir: self.spill_dir,
            })?),
        };
        let parts = crate::crawler::Parts {
            sinks: self.sinks,
            outcomes: self.outcomes,
            robots_store: self.robots_store,
        };
        Ok(Crawler::new(config, fetcher, frontier, parts))
    }
}

/// Removes `user:pass@` from `url`; `(host:port, "user:pass")`, decoded.
fn take_credentials(url: &mut Url) -> Option<(String, String)> {
    if url.username().is_empty() && url.password().is_none() {
        return None;
    }
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    let userpass = format!(
        "{}:{}",
        decode(url.username()),
        decode(url.password().unwrap_or(""))
    );
    let host = format!(
        "{}:{}",
        url.host_str()?,
        url.port_or_known_default().unwrap_or(0)
    );
    let _ = url.set_username("");
    let _ = url.set_password(None);
    Some((host, userpass))
}

fn parse_roots(args: &[String]) -> Result<Vec<Url>, BuildError> {
    let mut roots: Vec<Url> = Vec::new();
    for arg in args {
        let url = urlnorm::parse_root(arg).map_err(|source| BuildError::Root {
            arg: arg.clone(),
            source,
        })?;
        if !roots.contains(&url) {
            roots.push(url);
        }
    }
    if roots.is_empty() {
        return Err(BuildError::NoRoots);
    }
    Ok(roots)
}

fn compile(patterns: &[String]) -> Result<Vec<Regex>, BuildError> {
    patterns
        .iter()
        .map(|p| {
            Regex::new(p).map_err(|source| BuildError::Pattern {
                pattern: p.clone(),
                source,
            })
        })
        .collect()
}
