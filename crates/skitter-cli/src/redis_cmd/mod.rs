//! One crawl shared by many processes on many machines through Redis:
//! `skitter crawl --redis`, `skitter worker`, `skitter status` and
//! `skitter redis-clean`.
//!
//! The process that starts a crawl stores its spec (the library's typed,
//! versioned [`CrawlSpec`]: the crawl flags minus the per-worker ones) in the
//! crawl's Redis meta before seeding the roots; a worker reads it back, so
//! every process crawls with the same scope, limits and politeness, through
//! the same
//! [`RedisFrontier`] (key layout and failure behaviour are documented there).
//! Per worker are only concurrency (`--max-tasks`), the lease, the grace
//! period, the report format and the outputs, whose file names get a worker id
//! (`crawl.warc.gz` → `crawl-wHOST-PID.warc.gz`) so no two processes write one
//! file. Each worker also adds its records' counters to the crawl-wide totals
//! ([`RedisStatsSink`]) and prints them after its own report.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use skitter::cluster::{ClusterWatch, RedisStatsSink};
use skitter::fetch::ProxyLedger;
use skitter::frontier::{Frontier, RedisFrontier, RedisOptions};
use skitter::output::report::{Limit, StopReason};
use tokio_util::sync::CancellationToken;

use skitter::cluster::CrawlSpec;

use crate::crawl_cmd::{CrawlArgs, describe, exit_status};
use crate::flags;
use crate::output::ReportFormat;
use crate::output_flags::OutputFlags;
use crate::watch_flags::WatchFlags;

mod totals;

use totals::{CrawlWide, finish_output, print_reports};

/// Meta field holding the crawl's spec ([`CrawlSpec`] as JSON).
const META_SPEC: &str = "spec";
/// Meta field where skitter 0.x before the spec kept its CLI options.
const META_OLD_OPTIONS: &str = "options";
/// Meta field holding the version of skitter that started the crawl.
const META_VERSION: &str = "version";
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// How long `status` and `redis-clean` wait for an unreachable server; a
/// crawling worker waits much longer (it pauses rather than fails).
const QUICK_OUTAGE: Duration = Duration::from_secs(5);

/// Which shared crawl: the Redis server and the crawl's name.
#[derive(Args, Debug, Clone)]
pub struct Target {
    /// The Redis server holding the crawl (redis://HOST:PORT/DB), or a Redis
    /// Cluster named by any of its nodes (redis+cluster://HOST:PORT[,HOST:PORT…]).
    #[arg(long, value_name = "URL")]
    pub redis: String,
    /// The crawl's name.
    #[arg(long, value_name = "NAME")]
    pub crawl: String,
}

/// Options of `skitter worker`: everything else comes from the crawl's meta.
#[derive(Args, Debug, Clone)]
pub struct WorkerArgs {
    #[command(flatten)]
    target: Target,
    /// Concurrent requests of this worker at most, over all hosts.
    #[arg(long, alias = "max_tasks", default_value_t = 100, value_parser = crate::flags::count, value_name = "N")]
    max_tasks: usize,
    /// How long a claimed URL stays this worker's without a heartbeat before
    /// another worker may take it over.
    #[arg(long, value_parser = flags::duration, default_value = "60s", value_name = "DURATION")]
    lease: Duration,
    /// After Ctrl-C, how long in-flight requests may take to finish.
    #[arg(long, value_parser = flags::duration, default_value = "5s", value_name = "DURATION")]
    grace: Duration,
    /// Report format on stdout (on stderr when `--jsonl -` takes stdout).
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    report: ReportFormat,
    #[command(flatten)]
    outputs: OutputFlags,
    #[command(flatten)]
    watch: WatchFlags,
}

/// What each process of a crawl chooses for itself; the rest is the spec.
#[derive(Debug, Clone)]
struct Own {
    max_tasks: usize,
    lease: Duration,
    grace: Duration,
    report: ReportFormat,
    outputs: OutputFlags,
    watch: WatchFlags,
}

impl Own {
    /// The starter's own settings.
    fn of(args: &CrawlArgs) -> Own {
        Own {
            max_tasks: args.max_tasks,
            lease: args.lease,
            grace: args.request.grace,
            report: args.report,
            outputs: args.outputs.clone(),
            watch: args.watch.clone(),
        }
    }
}

impl WorkerArgs {
    /// This worker's own settings.
    fn own(&self) -> Own {
        Own {
            max_tasks: self.max_tasks,
            lease: self.lease,
            grace: self.grace,
            report: self.report,
            outputs: self.outputs.clone(),
            watch: self.watch.clone(),
        }
    }
}

/// Options of `skitter status`.
#[derive(Args, Debug, Clone)]
pub struct StatusArgs {
    #[command(flatten)]
    pub target: Target,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub report: ReportFormat,
}

/// Options of `skitter redis-clean`.
#[derive(Args, Debug, Clone)]
pub struct CleanArgs {
    #[command(flatten)]
    target: Target,
}

/// `skitter crawl --redis URL --crawl NAME ROOT...`: stores the options (or
/// checks they match those of the crawl already there), then crawls.
pub async fn run_shared(args: CrawlArgs, cancel: CancellationToken) -> anyhow::Result<u8> {
    let target = Target {
        redis: args.redis.clone().context("--redis is required")?,
        crawl: args.crawl.clone().context("--crawl is required")?,
    };
    // The spec carries the rules and the proxy list themselves: the files may
    // not exist where workers run.
    let spec = args.spec()?;
    let own = Own::of(&args);
    // Bad options are reported before anything is stored in Redis or
    // written to disk.
    spec.builder()?.max_tasks(own.max_tasks).build()?;
    let options = RedisOptions {
        shards: Some(args.redis_shards.unwrap_or(default_shards(&target.redis))),
        ..redis_options(&spec, own.lease)
    };
    let frontier = connect(&target, options).await?;
    let stored = spec.to_json()?;
    if frontier.put_meta_if_absent(META_SPEC, &stored).await? {
        frontier.put_meta(META_VERSION, VERSION).await?;
    } else if frontier.get_meta(META_SPEC).await?.as_deref() != Some(stored.as_str()) {
        bail!(
            "crawl {name:?} already exists with other options: join it with \
             `skitter worker --redis URL --crawl {name}`, or remove it first with \
             `skitter redis-clean --redis URL --crawl {name}`",
            name = target.crawl
        );
    } else {
        tracing::info!(crawl = %target.crawl, "the crawl exists with the same options: joining it");
    }
    if args.recrawl {
        let pass = frontier
            .begin_pass(args.recrawl_order(), args.max_redirect)
            .await?;
        tracing::info!(crawl = %target.crawl, pass = pass.number, "recrawl pass");
    }
    crawl(spec, own, &target, frontier, cancel).await
}

/// `skitter worker`: joins a crawl started with `crawl --redis`.
pub async fn run_worker(worker: WorkerArgs, cancel: CancellationToken) -> anyhow::Result<u8> {
    let probe = connect(&worker.target, RedisOptions::default()).await?;
    let spec = stored_spec(&probe, &worker.target.crawl).await?;
    drop(probe);
    let own = worker.own();
    let frontier = connect(&worker.target, redis_options(&spec, own.lease)).await?;
    crawl(spec, own, &worker.target, frontier, cancel).await
}

/// `skitter status`: the crawl-wide totals, from any machine, at any time.
pub async fn run_status(status: StatusArgs) -> anyhow::Result<u8> {
    let options = RedisOptions {
        max_outage: QUICK_OUTAGE,
        ..RedisOptions::default()
    };
    let frontier = connect(&status.target, options).await?;
    let spec = stored_spec(&frontier, &status.target.crawl).await?;
    let wide =
        CrawlWide::read(&frontier, &status.target.crawl, spec.crawl.limits.max_pages).await?;
    let mut out = std::io::stdout().lock();
    let written = match status.report {
        ReportFormat::Text => {
            let roots = spec.redacted().crawl.roots.join(" ");
            writeln!(out, "Roots: {roots}").and_then(|_| wide.write_text(&mut out))
        }
        ReportFormat::Json => {
            let mut value = wide.to_json();
            // The crawl's settings, as a library caller writes them.
            value["options"] = serde_json::to_value(spec.redacted().crawl)?;
            writeln!(out, "{value}")
        }
        ReportFormat::None => Ok(()),
    };
    finish_output(written.and_then(|_| out.flush()))?;
    Ok(0)
}

/// `skitter redis-clean`: removes every key of the crawl.
pub async fn run_clean(clean: CleanArgs) -> anyhow::Result<u8> {
    let options = RedisOptions {
        max_outage: QUICK_OUTAGE,
        ..RedisOptions::default()
    };
    // Connecting first fails fast on an unreachable server; `clean` would wait.
    let frontier = connect(&clean.target, options).await?;
    let mut prefix = format!("{}*", frontier.key_prefix());
    if frontier.shards() > 1 {
        prefix.push_str(&format!(" and {} more shards", frontier.shards() - 1));
    }
    drop(frontier);
    let removed = RedisFrontier::clean(&clean.target.redis, &clean.target.crawl).await?;
    println!("removed {removed} keys ({prefix})");
    Ok(0)
}

/// Shards of a new crawl unless `--redis-shards` says: enough for a cluster
/// to spread a crawl evenly over a few masters, one on a single server.
fn default_shards(url: &str) -> u16 {
    if url.starts_with("redis+cluster://") {
        16
    } else {
        1
    }
}

fn redis_options(spec: &CrawlSpec, lease: Duration) -> RedisOptions {
    RedisOptions {
        policy: spec.crawl.request.politeness,
        lease,
        max_claims: spec.crawl.limits.max_pages,
        ..RedisOptions::default()
    }
}

async fn connect(target: &Target, options: RedisOptions) -> anyhow::Result<Arc<RedisFrontier>> {
    let frontier = RedisFrontier::connect(&target.redis, &target.crawl, options)
        .await
        .with_context(|| format!("cannot join crawl {:?}", target.crawl))?;
    Ok(Arc::new(frontier))
}

/// The spec the crawl's starter stored.
async fn stored_spec(frontier: &RedisFrontier, name: &str) -> anyhow::Result<CrawlSpec> {
    let version = frontier.get_meta(META_VERSION).await?;
    let version = version.as_deref().unwrap_or("(unknown)");
    let Some(json) = frontier.get_meta(META_SPEC).await? else {
        if frontier.get_meta(META_OLD_OPTIONS).await?.is_some() {
            bail!(
                "crawl {name:?} was started by skitter {version}, which stored its options in a \
                 form this skitter {VERSION} does not read: finish it with that version, or \
                 remove it with `skitter redis-clean --redis URL --crawl {name}`"
            );
        }
        bail!(
            "there is no crawl named {name:?} on this Redis server; start one with \
             `skitter crawl --redis URL --crawl {name} ROOT...`"
        );
    };
    CrawlSpec::from_json(&json).with_context(|| {
        format!("crawl {name:?} was started by skitter {version}; this skitter is {VERSION}")
    })
}

/// Runs this process's share of the crawl and prints its report, then the
/// crawl-wide totals.
async fn crawl(
    mut spec: CrawlSpec,
    own: Own,
    target: &Target,
    frontier: Arc<RedisFrontier>,
    cancel: CancellationToken,
) -> anyhow::Result<u8> {
    let id = worker_id();
    let outputs = own.outputs.for_worker(&id);
    // The frontier counts --max-pages for the whole crawl (claim script).
    let max_pages = spec.crawl.limits.max_pages.take();
    let shared: Arc<dyn Frontier> = frontier.clone();
    let mut builder = spec
        .builder()?
        .max_tasks(own.max_tasks)
        .grace(own.grace)
        .frontier(shared)
        // This worker's report lines, spilled within the default budget; none
        // when its report is not shown.
        .report_options(skitter::output::report::ReportOptions {
            records: own.report != ReportFormat::None,
            ..Default::default()
        });
    let described = describe(builder.settings());
    let max_body = spec.crawl.request.fetch.max_body_size;
    for sink in outputs.sinks(None, described, max_body)? {
        builder = builder.sink(sink);
    }
    if let Some(items) = crate::output::items_sink(outputs.items.as_deref(), spec.rules()?).await? {
        builder = builder.sink(Box::new(items));
    }
    // The pool's per-proxy counts go to the crawl-wide totals with the rest.
    let ledger = Arc::new(ProxyLedger::new());
    let crawler = builder
        .robots_store(frontier.clone())
        .proxy_ledger(ledger.clone())
        .sink(Box::new(
            RedisStatsSink::new(frontier.clone()).proxies(ledger),
        ))
        .build()?;
    tracing::info!(crawl = %target.crawl, worker = %id, "crawling as one worker of a shared crawl");
    let cluster = ClusterWatch::new(frontier.clone(), ClusterWatch::process_id());
    let watch = own
        .watch
        .start_worker(crawler.live(), cluster, &cancel)
        .await?;
    let mut report = crawler.run(cancel.clone()).await?;
    if report.stopped.is_none() && frontier.claim_limit_reached() {
        report.stopped = Some(StopReason::Limit(Limit::MaxPagesCrawlWide));
    }
    let unrecorded = report.unrecorded.entries().into_iter().collect();
    if let Err(e) = frontier.add_stats(&unrecorded).await {
        tracing::warn!(error = %e, "cannot add this worker's link counters to the crawl-wide totals");
    }
    let wide = CrawlWide::read(&frontier, &target.crawl, max_pages).await;
    let to_stderr = outputs.jsonl_on_stdout();
    let written = if to_stderr {
        print_reports(&mut std::io::stderr().lock(), &report, &wide, own.report)
    } else {
        print_reports(&mut std::io::stdout().lock(), &report, &wide, own.report)
    };
    finish_output(written)?;
    own.watch.linger(watch, None, &cancel).await;
    Ok(exit_status(&report))
}

/// `wHOST-PID`: unique among the processes of a crawl, and readable.
fn worker_id() -> String {
    format!("w{}-{}", short_host_name(), std::process::id())
}

/// This machine's host name, made safe for a file name by [`file_safe_host`].
fn short_host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into `buf`.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let raw = if rc == 0 {
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        String::new()
    };
    file_safe_host(&raw)
}

/// The host name up to its first dot, with anything but `[A-Za-z0-9_-]`
/// replaced by `_`, or `host` when nothing is left: it goes into output file
/// names, so it must not name a directory, climb out of one, or be empty.
fn file_safe_host(raw: &str) -> String {
    let short: String = raw
        .split('.')
        .next()
        .unwrap_or("")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if short.is_empty() {
        "host".into()
    } else {
        short
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_are_file_name_safe() {
        let cases = [
            ("crawler-01.example.org", "crawler-01"),
            ("../../etc/passwd", "host"),
            ("a/b.example", "a_b"),
            ("C:\\evil", "C__evil"),
            ("x y\tz", "x_y_z"),
            ("nul\0byte", "nul_byte"),
            ("h\u{e9}te", "h_te"),
            ("\u{fffd}\u{fffd}", "__"),
            ("", "host"),
            (".", "host"),
            ("under_score", "under_score"),
        ];
        for (raw, want) in cases {
            assert_eq!(file_safe_host(raw), want, "{raw:?}");
        }
    }

    fn args(extra: &[&str]) -> CrawlArgs {
        use clap::Parser;
        #[derive(Parser)]
        struct Wrapper {
            #[command(flatten)]
            args: CrawlArgs,
        }
        let argv = ["skitter", "http://a.test/"].iter().chain(extra);
        Wrapper::parse_from(argv).args
    }

    #[test]
    fn per_worker_options_do_not_change_the_spec() {
        let spec = |extra: &[&str]| args(extra).spec().unwrap().to_json().unwrap();
        let base = spec(&["--per-host", "2"]);
        let other_worker = spec(&[
            "--per-host",
            "2",
            "--max-tasks",
            "7",
            "--warc",
            "x.warc",
            "--jsonl",
            "-",
            "--lease",
            "2s",
            "--grace",
            "1s",
            "--report",
            "json",
        ]);
        assert_eq!(base, other_worker);
        assert_ne!(base, spec(&["--per-host", "3"]));
        assert_ne!(base, spec(&["--per-host", "2", "--max-pages", "9"]));
    }

    #[test]
    fn a_worker_gets_the_stored_spec_and_its_own_settings() {
        use clap::Parser;
        #[derive(Parser)]
        struct Wrapper {
            #[command(flatten)]
            worker: WorkerArgs,
        }
        let stored = args(&["--per-host", "2", "--max-pages", "9", "--field", "t=css:h1"])
            .spec()
            .unwrap()
            .to_json()
            .unwrap();
        let spec = CrawlSpec::from_json(&stored).unwrap();
        assert_eq!(spec.crawl.request.politeness.max_in_flight, 2);
        assert_eq!(spec.crawl.limits.max_pages, Some(9));
        assert!(spec.rules().unwrap().is_some());
        let worker = Wrapper::parse_from([
            "w",
            "--redis",
            "redis://127.0.0.1:1/",
            "--crawl",
            "c",
            "--max-tasks",
            "3",
            "--warc",
            "a.warc.gz",
        ])
        .worker;
        let own = worker.own();
        assert_eq!(own.max_tasks, 3);
        assert_eq!(
            own.outputs.warc,
            Some(std::path::PathBuf::from("a.warc.gz"))
        );
    }
}
