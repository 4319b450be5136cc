//! `skitter crawl`: flags → [`skitter::CrawlerBuilder`] in one place, run, print
//! the report.
//!
//! The baseline crawler's options keep their names, defaults and underscore
//! spellings (`--max_tasks`, `--max_redirect`, `--max_tries`) so its users'
//! scripts keep working.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use skitter::base::scope::ScopeMode;
use skitter::base::trap::TrapRules;
use skitter::cluster::CrawlSpec;
use skitter::frontier::{DiskFrontier, DiskOptions, Frontier, RecrawlStart};
use skitter::host::HostPolicy;
use skitter::output::report::{ReportOptions, StopReason};
use skitter::parse::discovery::SitemapMode;
use skitter::parse::links::ExtractMode;
use skitter::settings::{CrawlSettings, Limits, RunSettings};
use skitter::state::recrawl::RecrawlOrder;
use skitter::state::store::CrawlMeta;
use skitter::{Crawler, CrawlerBuilder, Report};
use tokio_util::sync::CancellationToken;

use crate::content_flags::ContentFlags;
use crate::extract_flags::ExtractFlags;
use crate::flags;
use crate::output::{ReportFormat, print_report, print_report_to};
use crate::output_flags::OutputFlags;
use crate::progress::{ProgressLine, StderrLogs};
use crate::render_flags::RenderFlags;
use crate::request_flags::RequestFlags;
use crate::watch_flags::WatchFlags;
use skitter::output::report_html::{self, TimelineSink};

/// Options of `skitter crawl`. Serialisable so a shared crawl can store its
/// defining options in Redis for `skitter worker` (see `redis_cmd`).
#[derive(Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("kept").args(["state", "redis"]).multiple(true)))]
pub struct CrawlArgs {
    /// Root URLs to start from; `http://` is assumed when no scheme is given.
    #[arg(required = true, value_name = "ROOT")]
    pub roots: Vec<String>,
    /// Concurrent requests at most, over all hosts.
    #[arg(long, alias = "max_tasks", default_value_t = 100, value_parser = flags::count, value_name = "N")]
    pub max_tasks: usize,
    /// Redirect hops followed per chain.
    #[arg(long, alias = "max_redirect", default_value_t = 10, value_name = "N")]
    pub max_redirect: u32,
    /// Skip URLs matching this regex (unanchored, on the absolute URL); repeatable.
    #[arg(long, value_name = "REGEX")]
    pub exclude: Vec<String>,
    /// Only follow URLs matching one of these regexes (roots always); repeatable.
    #[arg(long, value_name = "REGEX")]
    pub include: Vec<String>,
    /// Stay on the roots' hosts (with `www.` toggled) and ports [default].
    #[arg(long, overrides_with_all = ["lenient", "span_hosts"])]
    pub strict: bool,
    /// Allow any host of the roots' registrable domains (Public Suffix List).
    #[arg(long, overrides_with_all = ["strict", "span_hosts"])]
    pub lenient: bool,
    /// Follow links to any host and port (wget's --span-hosts): a broad crawl,
    /// bounded by --domains, --exclude-domains, --max-depth, --max-pages,
    /// --max-per-host and the trap rules.
    #[arg(long, overrides_with_all = ["strict", "lenient"])]
    pub span_hosts: bool,
    /// Only hosts equal to or under these domains (comma-separated; in every
    /// scope mode): `--domains example.com` allows `www.example.com`.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub domains: Vec<String>,
    /// Never hosts equal to or under these domains (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub exclude_domains: Vec<String>,
    /// Follow links at most this deep (roots are depth 0) [default: no limit].
    #[arg(long, value_name = "N")]
    pub max_depth: Option<u32>,
    /// Stop after fetching this many URLs [default: no limit].
    #[arg(long, value_name = "N")]
    pub max_pages: Option<u64>,
    /// Stop after this long, e.g. 10m [default: no limit].
    #[arg(long, value_parser = flags::duration, value_name = "DURATION")]
    pub max_time: Option<Duration>,
    /// Fetch at most this many URLs per host; skip the rest [default: no limit].
    #[arg(long, value_name = "N")]
    pub max_per_host: Option<u64>,
    /// Skip URLs longer than this many bytes (0 = no limit) [default: 2048].
    #[arg(long, value_name = "N")]
    pub max_url_length: Option<usize>,
    /// Skip URLs with more path segments than this (0 = no limit) [default: 32].
    #[arg(long, value_name = "N")]
    pub max_path_segments: Option<usize>,
    /// Skip paths repeating a segment more than N times, or a run of segments
    /// back to back (0 = no limit) [default: 3].
    #[arg(long, value_name = "N")]
    pub max_segment_repeats: Option<usize>,
    /// Distinct query strings followed per path (0 = no limit) [default: 1000].
    #[arg(long, value_name = "N")]
    pub max_query_variants: Option<usize>,
    /// Stop following a numeric chain (`/page/7` → `/page/8`) after this many
    /// near-duplicate pages in a row: an endless pager (0 = no limit) [default: 50].
    #[arg(long, value_name = "N")]
    pub max_similar_chain: Option<usize>,
    /// Turn every crawler-trap rule off (also the implausible-date rule).
    #[arg(long)]
    pub no_trap_rules: bool,
    /// Also read `/sitemap.xml` of every root's origin (sitemaps named by
    /// robots.txt are always read unless --no-sitemaps).
    #[arg(long, conflicts_with = "no_sitemaps")]
    pub sitemaps: bool,
    /// Read no sitemaps at all.
    #[arg(long)]
    pub no_sitemaps: bool,
    /// Do not fetch or obey robots.txt.
    #[arg(long)]
    pub ignore_robots: bool,
    /// Longest robots.txt Crawl-delay honoured; longer ones are cut to this.
    #[arg(long, value_parser = flags::duration, default_value = "30s", value_name = "DURATION")]
    pub max_crawl_delay: Duration,
    /// Also fetch page resources: images, scripts, stylesheets, frames, media,
    /// CSS url()/@import and Link headers (like wget's page requisites).
    #[arg(short = 'p', long)]
    pub resources: bool,
    /// Read at most this many links of one page (HTML or CSS); the rest are
    /// dropped unread and counted in the report as links_cut. Bounds the
    /// memory a page of a million links can take.
    #[arg(long, default_value_t = skitter::parse::links::DEFAULT_MAX_LINKS, value_parser = flags::count, value_name = "N")]
    pub max_links_per_page: usize,
    /// At most this many requests in flight to one host (host:port); a host
    /// starts at 6 (or this, if lower) and doubles on each clean answer (slow
    /// start).
    #[arg(long, default_value_t = 8, value_parser = flags::count, value_name = "N")]
    pub per_host: usize,
    /// Minimum gap between request starts to one host, e.g. 250ms.
    #[arg(long, value_parser = flags::duration, default_value = "0s", value_name = "DURATION")]
    pub delay: Duration,
    /// Up to this much random extra gap on top of --delay.
    #[arg(long, value_parser = flags::duration, default_value = "0s", value_name = "DURATION")]
    pub jitter: Duration,
    /// How long an origin's robots.txt may stay unavailable (5xx, 429,
    /// unreachable) while its URLs wait, without using up tries; after that they
    /// are skipped as robots_unavailable. robots.txt is also checked again after
    /// a page fails, so a server that is down as a whole makes its URLs wait too.
    #[arg(long, value_parser = flags::duration, default_value = "10m", value_name = "DURATION")]
    pub max_outage: Duration,
    /// How long robots.txt outages may block the whole crawl (nothing in
    /// flight, every URL left waiting on an origin whose robots.txt is
    /// unavailable) before those URLs are skipped as robots_unavailable; said
    /// on stderr at once, even with -q. While other hosts have work,
    /// --max-outage applies.
    #[arg(long, value_parser = flags::duration, default_value = "60s", value_name = "DURATION")]
    pub max_blocked: Duration,
    /// How long all of one URL's attempts may take together. Each attempt
    /// gets what is left, and a timed-out attempt is not retried when what is
    /// left cannot hold another --timeout; such URLs fail as timeouts saying
    /// the deadline ran out (url_deadline_exceeded in the report). Waits
    /// between attempts do not count [default: twice --timeout].
    #[arg(long, value_parser = flags::duration, value_name = "DURATION")]
    pub url_deadline: Option<Duration>,
    /// Read at most this much of a body, e.g. 10M; a longer one is cut there
    /// (outcome marked truncated, links taken from the part read). Also caps
    /// decoded (decompressed) bodies.
    #[arg(long, value_parser = flags::size, default_value = "10M", value_name = "SIZE")]
    pub max_body_size: u64,
    /// Keep a cookie jar for the crawl.
    #[arg(long)]
    pub cookies: bool,
    #[command(flatten)]
    pub request: RequestFlags,
    #[command(flatten)]
    pub extract: ExtractFlags,
    #[command(flatten)]
    pub render: RenderFlags,
    #[command(flatten)]
    pub content: ContentFlags,
    /// Report format on stdout (on stderr when `--jsonl -` takes stdout).
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub report: ReportFormat,
    #[command(flatten)]
    pub outputs: OutputFlags,
    /// Also write a one-file HTML report (charts and tables) to FILE.
    #[arg(long, value_name = "FILE")]
    pub report_html: Option<PathBuf>,
    /// No live progress line on stderr (it is only drawn on a terminal anyway).
    #[arg(long)]
    pub no_progress: bool,
    #[command(flatten)]
    pub watch: WatchFlags,
    /// Keep the crawl in DIR (crash-safe): running the same command again resumes
    /// it; the report covers every run. `skitter status DIR` reads it meanwhile.
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,
    /// With --state, reuse a directory that holds a crawl with other roots or scope.
    #[arg(long, requires = "state")]
    pub force: bool,
    /// With --state (or --redis), on a finished crawl: start a new pass over
    /// the same scope. Every known URL is fetched again with its validators
    /// (If-None-Match, If-Modified-Since); a 304 or an identical payload is
    /// "unchanged". A pass cut short is resumed, not restarted; on Redis, a
    /// pass still running is joined.
    #[arg(long, requires = "kept")]
    pub recrawl: bool,
    /// Which known URLs a new pass fetches again: `oldest` (all, least recently
    /// fetched first) or `adaptive` (only those whose per-URL interval has
    /// passed: it starts at a day, halves when the page changed, doubles when
    /// it did not, between an hour and 30 days).
    #[arg(long, value_enum, default_value_t = RecrawlOrderArg::Oldest, requires = "recrawl")]
    pub recrawl_order: RecrawlOrderArg,
    /// Memory for the seen set, the queue and the report's per-URL lines before
    /// they spill to disk (to --spill-dir, or into --state DIR with --state); the
    /// report's lines get one eighth of it.
    #[arg(long, value_parser = flags::size, default_value = "256M", value_name = "SIZE")]
    pub memory_budget: u64,
    /// Without --state: where the seen set, queue and report spill beyond --memory-budget
    /// (default: the system temporary directory). Spill files are deleted when the
    /// crawl ends, however it ends.
    #[arg(long, value_name = "DIR", conflicts_with = "state")]
    pub spill_dir: Option<PathBuf>,
    /// Start (or join) a crawl shared through this Redis server
    /// (redis://HOST:PORT/DB), or Redis Cluster (redis+cluster://HOST:PORT[,HOST:PORT…]);
    /// more machines join with `skitter worker`.
    /// Output file names get a worker id: crawl.warc.gz → crawl-wHOST-PID.warc.gz.
    #[arg(long, value_name = "URL", requires = "crawl")]
    pub redis: Option<String>,
    /// The shared crawl's name (with --redis).
    #[arg(long, value_name = "NAME", requires = "redis")]
    pub crawl: Option<String>,
    /// With --redis: how long a claimed URL stays this worker's without a
    /// heartbeat before another worker may take it over.
    #[arg(long, value_parser = flags::duration, default_value = "60s", value_name = "DURATION")]
    pub lease: Duration,
    /// With --redis or --state: a URL whose lease was lost N times (the
    /// worker or run handling it died, was killed or stalled past its lease)
    /// is not fetched again but fails as `quarantined` (listed by `skitter
    /// status`). Each loss also counts as a failed try of --max-tries.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..), value_name = "N")]
    pub quarantine_after: u32,
    /// With --redis, for a new crawl: how many shards to split it into (1 to
    /// 1024; each host's queue, politeness and seen URLs live in one shard, each
    /// shard under its own Redis Cluster hash tag). Default: 16 with a
    /// redis+cluster:// URL, 1 otherwise. A crawl keeps the count it was
    /// created with.
    #[arg(long, value_name = "N", requires = "redis", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub redis_shards: Option<u16>,
}

impl CrawlArgs {
    /// Maps the flags onto the library's builder; the only place that does.
    pub fn builder(&self) -> anyhow::Result<CrawlerBuilder> {
        self.builder_on(None)
    }

    /// Everything these flags set, as the library's one settings value: what
    /// every crawl is built from. Reads the rules file and the proxy list, so
    /// the settings carry their contents.
    pub fn settings(&self) -> anyhow::Result<CrawlSettings> {
        let mut s = CrawlSettings::new(self.roots.iter().cloned());
        s.scope = self.scope_mode();
        s.domains = self.domains.clone();
        s.exclude_domains = self.exclude_domains.clone();
        s.include = self.include.clone();
        s.exclude = self.exclude.clone();
        s.limits = Limits {
            max_depth: self.max_depth,
            max_pages: self.max_pages,
            max_time: self.max_time,
            max_per_host: self.max_per_host,
        };
        s.traps = self.trap_rules();
        s.extract_mode = if self.resources {
            ExtractMode::Resources
        } else {
            ExtractMode::Pages
        };
        s.sitemaps = match (self.sitemaps, self.no_sitemaps) {
            (_, true) => SitemapMode::Off,
            (true, _) => SitemapMode::Probe,
            _ => SitemapMode::Robots,
        };
        s.ignore_robots = self.ignore_robots;
        s.robots.max_outage = self.max_outage;
        s.robots.max_blocked = self.max_blocked;
        s.url_deadline = self.url_deadline;
        s.max_crawl_delay = self.max_crawl_delay;
        s.max_links_per_page = self.max_links_per_page;
        s.request.fetch = self.request.fetch_config(self.max_body_size)?;
        s.request.fetch.cookies = self.cookies;
        s.request.retry = self.request.retry_policy();
        s.request.retry.quarantine_after = self.quarantine_after;
        s.request.politeness = self.host_policy();
        s.request.max_redirect = self.max_redirect;
        s.extract = self.extract.source()?;
        s.render = self.render.settings();
        if s.render.screenshots && self.outputs.warc.is_none() && self.outputs.wacz.is_none() {
            anyhow::bail!("--screenshots stores the pictures in the WARC: add --warc or --wacz");
        }
        s.content = self.content.options();
        s.run = RunSettings {
            max_tasks: self.max_tasks,
            grace: self.request.grace,
            memory_budget: Some(self.frontier_memory()),
            spill_dir: self.spill_dir.clone(),
            report: self.report_options(),
        };
        // Checked here, for the message that names the rules file (the
        // library's own check cannot name it).
        if let Some(source) = &s.extract {
            self.extract.parse(source.clone())?;
        }
        Ok(s)
    }

    /// The crawl these flags define, as a shared crawl stores it for its
    /// workers: [`CrawlArgs::settings`] without the per-process part.
    pub fn spec(&self) -> anyhow::Result<CrawlSpec> {
        Ok(CrawlSpec::new(self.settings()?))
    }

    /// [`CrawlArgs::builder`] on a frontier made elsewhere (a shared crawl's):
    /// the per-host and memory flags are then that frontier's business.
    pub fn builder_on(
        &self,
        frontier: Option<Arc<dyn Frontier>>,
    ) -> anyhow::Result<CrawlerBuilder> {
        let settings = self.settings()?;
        // The state is opened (and locked) before any output is opened, since a
        // resumed crawl's outputs are repaired: a second invocation of a running
        // crawl must stop at "busy" before it touches them.
        let described = describe(&settings);
        let state = match &self.state {
            Some(dir) => Some(Arc::new(self.open_state(dir, &described)?)),
            None => None,
        };
        let mut b = Crawler::from_settings(settings);
        for sink in self
            .outputs
            .sinks(state.as_deref(), described, self.max_body_size)?
        {
            b = b.sink(sink);
        }
        // A frontier of another's enforces its own politeness and memory; the
        // settings' are the built-in frontier's.
        if let Some(frontier) = frontier {
            b = b.frontier(frontier);
        } else if let Some(store) = state {
            b = b.frontier(store.clone()).outcome_store(store);
        }
        Ok(b)
    }

    /// The report's share of --memory-budget (an eighth) and where it spills:
    /// --spill-dir, the --state directory, or the system temporary directory.
    /// No per-URL lines at all when no report shows them.
    fn report_options(&self) -> ReportOptions {
        ReportOptions {
            records: self.report != ReportFormat::None || self.report_html.is_some(),
            memory_budget: self.budget() / 8,
            spill_dir: self.spill_dir.clone().or_else(|| self.state.clone()),
        }
    }

    /// What is left of --memory-budget for the frontier.
    fn frontier_memory(&self) -> usize {
        self.budget() - self.budget() / 8
    }

    fn budget(&self) -> usize {
        usize::try_from(self.memory_budget).unwrap_or(usize::MAX)
    }

    /// Opens (or resumes) the crawl kept in `dir`.
    fn open_state(
        &self,
        dir: &std::path::Path,
        described: &[(String, String)],
    ) -> anyhow::Result<DiskFrontier> {
        let meta = CrawlMeta {
            roots: printable_roots(&self.roots),
            scope: scope_name(self.scope_mode()).into(),
            // Only what changes which URLs the crawl visits; concurrency may differ.
            settings: described
                .iter()
                .filter(|(k, _)| {
                    [
                        "max-depth",
                        "resources",
                        "exclude",
                        "include",
                        "robots",
                        "domains",
                        "exclude-domains",
                    ]
                    .contains(&k.as_str())
                })
                .cloned()
                .collect(),
        };
        let options = DiskOptions {
            policy: self.host_policy(),
            memory_budget: self.frontier_memory(),
            force: self.force,
            recrawl: self.recrawl.then_some(RecrawlStart {
                order: self.recrawl_order(),
                max_redirect: self.max_redirect,
            }),
            ..DiskOptions::default()
        };
        DiskFrontier::open(dir, &meta, options)
            .with_context(|| format!("cannot open the crawl state in {}", dir.display()))
    }

    /// `--recrawl-order` as the library's order.
    pub fn recrawl_order(&self) -> RecrawlOrder {
        match self.recrawl_order {
            RecrawlOrderArg::Oldest => RecrawlOrder::Oldest,
            RecrawlOrderArg::Adaptive => RecrawlOrder::Adaptive,
        }
    }

    /// The politeness rules every host starts with.
    pub fn host_policy(&self) -> HostPolicy {
        HostPolicy {
            max_in_flight: self.per_host,
            delay: self.delay,
            jitter: self.jitter,
        }
    }

    fn trap_rules(&self) -> TrapRules {
        let mut rules = if self.no_trap_rules {
            TrapRules::off()
        } else {
            TrapRules::default()
        };
        let set = |slot: &mut usize, v: Option<usize>| {
            if let Some(v) = v {
                *slot = v;
            }
        };
        set(&mut rules.max_url_length, self.max_url_length);
        set(&mut rules.max_path_segments, self.max_path_segments);
        set(&mut rules.max_segment_repeats, self.max_segment_repeats);
        set(&mut rules.max_query_variants, self.max_query_variants);
        set(&mut rules.max_similar_chain, self.max_similar_chain);
        rules
    }

    /// Opens the outputs asked for; a path that cannot be written fails here,
    /// before anything is fetched. With a `state`, outputs are continued only if
    /// the state records them as its own (see `resume_outputs`).
    /// The scope the flags ask for (the last of --strict, --lenient and
    /// --span-hosts wins; clap keeps only it).
    fn scope_mode(&self) -> ScopeMode {
        if self.span_hosts {
            ScopeMode::AnyHost
        } else if self.lenient {
            ScopeMode::Lenient
        } else {
            ScopeMode::Strict
        }
    }
}

/// The crawl's defining options, for the WARC's warcinfo record and the
/// state's check that a resumed crawl is the same one.
pub fn describe(settings: &CrawlSettings) -> Vec<(String, String)> {
    let mut described = vec![
        ("roots".into(), printable_roots(&settings.roots).join(" ")),
        ("scope".into(), scope_name(settings.scope).into()),
        ("max-tasks".into(), settings.run.max_tasks.to_string()),
        (
            "per-host".into(),
            settings.request.politeness.max_in_flight.to_string(),
        ),
        (
            "max-depth".into(),
            settings
                .limits
                .max_depth
                .map_or("none".into(), |d| d.to_string()),
        ),
        (
            "resources".into(),
            (settings.extract_mode == ExtractMode::Resources).to_string(),
        ),
        ("robots".into(), (!settings.ignore_robots).to_string()),
        (
            "max-per-host".into(),
            format!("{:?}", settings.limits.max_per_host),
        ),
        ("exclude".into(), settings.exclude.join(" ")),
        ("include".into(), settings.include.join(" ")),
    ];
    // Only when given, so states written before these flags still resume.
    for (key, list) in [
        ("domains", &settings.domains),
        ("exclude-domains", &settings.exclude_domains),
    ] {
        if !list.is_empty() {
            described.push((key.into(), list.join(",")));
        }
    }
    described
}

/// `--recrawl-order`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RecrawlOrderArg {
    /// Every known URL, least recently fetched first.
    #[default]
    Oldest,
    /// Only the URLs due by their adaptive interval.
    Adaptive,
}

/// Runs the crawl and prints the report; returns the exit status. (A crawl
/// with `--redis` is `redis_cmd::run_shared`'s.)
pub async fn run(
    mut args: CrawlArgs,
    cancel: CancellationToken,
    progress_allowed: bool,
    logs: &StderrLogs,
) -> anyhow::Result<u8> {
    args.request.load_proxy_list()?;
    let mut builder = args.builder()?;
    if let Some(items) =
        crate::output::items_sink(args.outputs.items.as_deref(), args.extract.rules()?).await?
    {
        builder = builder.sink(Box::new(items));
    }
    let mut timeline = None;
    // The dashboard shows the end report, which needs the timeline too.
    if args.report_html.is_some() || args.watch.metrics.is_some() {
        let (sink, handle) = TimelineSink::new();
        builder = builder.sink(Box::new(sink));
        timeline = Some(handle);
    }
    let crawler = builder.build()?;
    let roots: Vec<&str> = crawler
        .config()
        .roots()
        .iter()
        .map(|u| u.as_str())
        .collect();
    tracing::info!(?roots, "crawl starting");
    let watch = args.watch.start(crawler.live(), &cancel).await?;
    let line = ProgressLine::start(
        crawler.progress(),
        progress_allowed && !args.no_progress,
        logs,
    );
    let result = crawler.run(cancel.clone()).await;
    line.finish(); // clears the line before anything prints
    let mut report = result?;
    report
        .sinks
        .retain(|s| s.name != report_html::timeline::SINK_NAME);
    if let (Some(path), Some(timeline)) = (&args.report_html, &timeline) {
        report_html::write(path, &report, &timeline.timeline())
            .with_context(|| format!("cannot write the HTML report {}", path.display()))?;
    }
    if args.outputs.jsonl_on_stdout() {
        print_report_to(&mut std::io::stderr().lock(), &report, args.report)?;
    } else {
        print_report(&report, args.report)?;
    }
    if watch.is_some() {
        let html = timeline.and_then(|t| report_html::render(&report, &t.timeline()).ok());
        args.watch.linger(watch, html, &cancel).await;
    }
    Ok(exit_status(&report))
}

/// 0 completed, 1 completed but some URL hit a bug in skitter (a panic, in the
/// report as `error other: internal: …`), 130 interrupted, 2 fatal; limits count
/// as completing.
pub fn exit_status(report: &Report) -> u8 {
    match &report.stopped {
        None | Some(StopReason::Limit(_)) if report.internal_errors() > 0 => {
            eprintln!(
                "skitter: error: {} URLs failed by an internal error (see the report)",
                report.internal_errors()
            );
            1
        }
        None | Some(StopReason::Limit(_)) => 0,
        Some(StopReason::Interrupted) => 130,
        // `skitter crawl --jsonl - | head`: the reader left; nothing went wrong.
        Some(StopReason::OutputClosed(_)) => 0,
        Some(StopReason::Fatal(e)) => {
            eprintln!("skitter: error: {e}");
            2
        }
    }
}

/// The roots without any `user:pass@` (sent as Basic auth to their host only,
/// never written into an archive, a state directory or a log).
fn printable_roots(roots: &[String]) -> Vec<String> {
    roots
        .iter()
        .map(|raw| match skitter::base::urlnorm::parse_root(raw) {
            Ok(mut url) if !url.username().is_empty() || url.password().is_some() => {
                let _ = url.set_username("");
                let _ = url.set_password(None);
                url.to_string()
            }
            _ => raw.clone(),
        })
        .collect()
}

/// A scope mode as the state and warcinfo name it.
fn scope_name(mode: ScopeMode) -> &'static str {
    match mode {
        ScopeMode::Strict => "strict",
        ScopeMode::Lenient => "lenient",
        ScopeMode::AnyHost => "any-host",
    }
}

#[cfg(test)]
mod tests {
    use skitter::output::report::{ReportSummary, Tally};

    use super::*;

    #[test]
    fn exit_status_says_when_a_url_hit_an_internal_error() {
        let report = |stopped: Option<StopReason>, internal: u64| {
            let mut tally = Tally::default();
            let mut counts = skitter::output::report::Counters::default();
            counts.internal_errors = internal;
            tally.add_unrecorded(&counts);
            tally.finish(ReportSummary {
                stopped,
                ..ReportSummary::default()
            })
        };
        let limit = || Some(StopReason::Limit(skitter::output::report::Limit::MaxPages));
        assert_eq!(exit_status(&report(None, 0)), 0);
        assert_eq!(exit_status(&report(None, 2)), 1);
        assert_eq!(exit_status(&report(limit(), 1)), 1);
        assert_eq!(exit_status(&report(Some(StopReason::Interrupted), 1)), 130);
    }
}
