//! `skitter bench`: crawl the local test site and print what it cost — pages/s,
//! CPU time and peak memory — like `scrapy bench`, but gated on correctness: a
//! run that did not fetch every page of the site exactly once is reported as
//! failed, so a fast wrong crawler cannot post a good number.
//!
//! The site runs as a child process (`skitter testsite`), so the figures are the
//! crawler's alone. The open-file limit is raised first, for high `--max-tasks`.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

use crate::crawl_cmd::CrawlArgs;
use crate::flags;
use crate::output::ReportFormat;

/// Options of `skitter bench`.
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// Pages on the generated site.
    #[arg(long, default_value_t = 20_000)]
    pub pages: usize,
    /// Links per page.
    #[arg(long, default_value_t = 10)]
    pub fanout: usize,
    /// Bytes of HTML per page.
    #[arg(long, value_parser = flags::size, default_value = "4096")]
    pub page_size: u64,
    /// Delay the site adds before every response, e.g. 50ms. The figures then
    /// also give the ideal time on one host: the rounds of one latency a
    /// crawler spending nothing between an answer and its next requests
    /// would take (robots.txt first, then every URL the site links), and the
    /// wall time's ratio to it.
    #[arg(long, value_parser = flags::duration, default_value = "0s")]
    pub latency: Duration,
    /// Concurrent requests at most.
    #[arg(long, alias = "max_tasks", default_value_t = 100)]
    pub max_tasks: usize,
    /// Requests in flight to the (single-host) site at most [default: --max-tasks,
    /// so the bench measures the global cap; pass 8 to measure crawl's default].
    #[arg(long)]
    pub per_host: Option<usize>,
    /// Do not fetch or obey robots.txt (to measure what politeness costs).
    #[arg(long)]
    pub ignore_robots: bool,
    /// Also write a WARC, its CDXJ index and a JSONL file into DIR (to measure
    /// what outputs cost).
    #[arg(long, value_name = "DIR")]
    pub outputs: Option<std::path::PathBuf>,
    /// Also write every page's main content as a Markdown tree into DIR
    /// (`crawl --markdown`; to measure what content extraction costs).
    /// INCORRECT unless every HTML page got its content.
    #[arg(long, value_name = "DIR")]
    pub markdown: Option<std::path::PathBuf>,
    /// Keep the crawl in this (new) state directory (to measure what crash safety costs).
    #[arg(long, value_name = "DIR")]
    pub state: Option<std::path::PathBuf>,
    /// Crawl the site twice, clean and then with these faults (see `skitter
    /// testsite --faults`), and print both with their ratio, e.g.
    /// `fail=0.1,times=1,status=503`. INCORRECT unless every page was fetched
    /// and every failing URL recovered.
    #[arg(long, value_name = "SPEC", value_parser = crate::testsite_cmd::parse_faults)]
    pub faults: Option<skitter_testsite::Faults>,
    /// Also extract five CSS fields from every page (title, heading, its
    /// number as an integer, first link as a URL, the text of its paragraph),
    /// to measure what structured extraction costs.
    #[arg(long, conflicts_with = "extract")]
    pub fields: bool,
    /// Also extract with the rules in FILE (see `crawl --extract`).
    #[arg(long, value_name = "FILE")]
    pub extract: Option<std::path::PathBuf>,
    /// Print the figures as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Serve the crawl's metrics, dashboard and control API at ADDR, as
    /// `crawl --metrics` does (to measure what scraping costs:
    /// scripts/bench-watch.sh).
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<std::net::SocketAddr>,
    /// A broad crawl: N virtual hosts of --pages pages each (the test site's
    /// `--vhosts`), reached by --span-hosts through the site's DNS server.
    #[arg(long, value_name = "N")]
    pub vhosts: Option<usize>,
    /// Gap between request starts to one host (the crawl's --delay); the
    /// figures then also give the hosts ready per second it allows.
    #[arg(long, value_parser = flags::duration, default_value = "0s", value_name = "DURATION")]
    pub delay: Duration,
    /// Speak HTTP/2 to the site from the first byte (the crawl's
    /// --http2-prior-knowledge; the test site speaks h2c, up to 200 streams
    /// a connection), to hold more requests in flight than the open-file
    /// limit allows connections: one connection per host, with --vhosts.
    #[arg(long)]
    pub h2c: bool,
    /// Most connections open at once (the crawl's --max-connections).
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// Most requests one h2c connection of the site may have open at once
    /// (the site's --h2-max-streams; 0: no limit).
    #[arg(long, value_name = "N")]
    pub h2_max_streams: Option<u32>,
}

/// The five fields of `bench --fields`, as `--field` specs.
pub const BENCH_FIELDS: [&str; 5] = [
    "title=css:title",
    "heading=css:h1",
    r#"number={ css = "h1", regex = "([0-9]+)", type = "integer" }"#,
    r#"first_link={ css = "a@href", type = "url" }"#,
    "text=css:p",
];

/// Runs the benchmark; exit status 1 when the crawl was not complete and exact.
pub async fn run(args: BenchArgs, cancel: CancellationToken) -> anyhow::Result<u8> {
    let Some(faults) = args.faults.clone() else {
        let (ok, figures) = crawl_once(&args, None, cancel).await?;
        report(&args, &figures);
        return Ok(u8::from(!ok));
    };
    let (clean_ok, clean) = crawl_once(&args, None, cancel.clone()).await?;
    let (faulty_ok, faulty) = crawl_once(&args, Some(&faults), cancel).await?;
    let rate = |f: &serde_json::Value| f["pages_per_sec"].as_f64().unwrap_or(0.0);
    let ratio = rate(&faulty) / rate(&clean).max(f64::MIN_POSITIVE);
    if args.json {
        println!(
            "{}",
            json!({ "clean": clean, "faults": faulty, "ratio": ratio })
        );
    } else {
        println!("clean:");
        print_figures(&args, &clean);
        println!("with faults {faults:?}:");
        print_figures(&args, &faulty);
        println!("  retries      {}", faulty["retries"]);
        println!(
            "  throttled    {} host(s): {}",
            faulty["throttled_hosts"], faulty["throttled"]
        );
        println!("faults/clean pages/s ratio: {ratio:.3}");
    }
    Ok(u8::from(!(clean_ok && faulty_ok)))
}

fn report(args: &BenchArgs, figures: &serde_json::Value) {
    if args.json {
        println!("{figures}");
    } else {
        print_figures(args, figures);
    }
}

/// The crawl `skitter bench` runs: defaults, except concurrency and a quiet report.
fn crawl_args(root: String, max_tasks: usize, per_host: usize) -> CrawlArgs {
    use clap::Parser;
    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: CrawlArgs,
    }
    let mut args = Wrapper::parse_from(["skitter", root.as_str()]).args;
    args.max_tasks = max_tasks;
    args.per_host = per_host;
    args.report = ReportFormat::None;
    args
}

/// One crawl of a fresh site (with `faults`, if any); whether it was correct,
/// and its figures.
async fn crawl_once(
    args: &BenchArgs,
    faults: Option<&skitter_testsite::Faults>,
    cancel: CancellationToken,
) -> anyhow::Result<(bool, serde_json::Value)> {
    let (mut child, root, dns) = start_site(args, faults).await?;
    let mut crawl = crawl_args(
        root,
        args.max_tasks,
        args.per_host.unwrap_or(args.max_tasks),
    );
    if let Some(dns) = dns {
        crawl.span_hosts = true;
        crawl.domains = vec!["sites.test".into()];
        crawl.request.allow_private = true;
        crawl.request.dns_server = vec![dns];
    }
    // Keep the per-URL records (spilled past their share of the budget) though
    // nothing prints them: the correctness check below reads them.
    crawl.report = ReportFormat::Text;
    crawl.ignore_robots = args.ignore_robots;
    crawl.delay = args.delay;
    crawl.request.http2_prior_knowledge = args.h2c;
    crawl.request.max_connections = args.max_connections;
    crawl.state = args.state.clone();
    crawl.extract.extract_file = args.extract.clone();
    if args.fields {
        crawl.extract.fields = BENCH_FIELDS.iter().map(|s| s.to_string()).collect();
    }
    if let Some(dir) = &args.outputs {
        let dir = &dir.join(if faults.is_some() { "faults" } else { "clean" });
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        crawl.outputs.warc = Some(dir.join("bench.warc.gz"));
        crawl.outputs.cdx = Some(dir.join("bench.cdxj"));
        crawl.outputs.jsonl = Some(dir.join("bench.jsonl").to_string_lossy().into_owned());
    }
    if let Some(dir) = &args.markdown {
        let dir = dir.join(if faults.is_some() { "faults" } else { "clean" });
        crawl.outputs.markdown = Some(dir);
    }
    crawl.watch.metrics = args.metrics;
    let crawler = crawl.builder()?.build()?;
    let progress = crawler.progress();
    let watch = crawl.watch.start(crawler.live(), &cancel).await?;
    let cpu_before = cpu_time();
    let started = Instant::now();
    let report = crawler.run(cancel).await?;
    drop(watch);
    let wall = started.elapsed();
    let cpu = cpu_time().saturating_sub(cpu_before);
    let _ = child.kill().await;
    let expected = (args.pages as u64 + 1) * args.vhosts.unwrap_or(1) as u64;
    let html = report.counters.html;
    // The site also links upper-case spellings (`/P/7`), distinct URLs that 404:
    // everything that is not one of the expected pages must be one of those.
    let mut extras_ok = true;
    for page in report.pages.iter() {
        let p = page?;
        if p.kind != skitter::base::outcome::OutcomeKind::Html {
            extras_ok &= p.status == Some(404) && p.url.path().starts_with("/P/");
        }
    }
    // With faults, every failing URL must have recovered: it is then HTML like
    // the rest, and nothing failed.
    let retries = report.counters.retries;
    let content_ok = args.markdown.is_none() || report.counters.content_pages == html;
    let ok = report.completed() && html == expected && extras_ok && content_ok;
    // Issue 35's ideal: plus one round trip per retry on the critical path.
    let retry_rounds = match (faults, args.vhosts) {
        (Some(f), None) => retry_rounds(args.pages, args.fanout, f),
        _ => 0,
    };
    // One host's site: a broad crawl's hosts are found from each other.
    let ideal = match args.vhosts {
        None => ideal_time(
            args.pages,
            args.fanout,
            args.max_tasks,
            args.latency,
            !args.ignore_robots,
        )
        .map(|d| d + args.latency * retry_rounds as u32),
        Some(_) => None,
    };
    let figures = json!({
        "pages": html,
        "records": report.done,
        "expected_pages": expected,
        "correct": ok,
        "wall_secs": wall.as_secs_f64(),
        "pages_per_sec": report.done as f64 / wall.as_secs_f64(),
        "cpu_secs": cpu.as_secs_f64(),
        "peak_rss_mb": peak_rss_bytes().map(|b| b as f64 / 1e6),
        "max_tasks": args.max_tasks,
        "in_flight_peak": progress.snapshot().in_flight_peak,
        "h2c": args.h2c,
        "latency_ms": args.latency.as_millis() as u64,
        "ideal_secs": ideal.map(|d| d.as_secs_f64()),
        "ideal_retry_rounds": retry_rounds,
        "wall_over_ideal": ideal.map(|d| wall.as_secs_f64() / d.as_secs_f64()),
        "retries": retries,
        // By reason, summed over hosts: a broad crawl slows down thousands.
        "throttled": throttle_totals(&report.throttled),
        "throttled_hosts": report.throttled.len(),
        "items": report.counters.items,
        "extract_errors": report.counters.extract_errors,
        "content_pages": report.counters.content_pages,
        "hosts": args.vhosts.unwrap_or(1),
        "delay_ms": args.delay.as_millis() as u64,
        // With a per-host gap, at most this many hosts are ready per second
        // (every host known and with work): the scheduler's ceiling.
        "ready_hosts_per_sec": (!args.delay.is_zero())
            .then(|| args.vhosts.unwrap_or(1) as f64 / args.delay.as_secs_f64()),
    });
    if !ok {
        eprintln!(
            "skitter bench: INCORRECT crawl: {html} HTML pages of {expected} expected, {} records, {retries} retries",
            report.done
        );
    }
    Ok((ok, figures))
}

/// How often each reason slowed a host down, over all hosts.
fn throttle_totals(
    by_host: &std::collections::BTreeMap<String, std::collections::BTreeMap<String, u64>>,
) -> std::collections::BTreeMap<&str, u64> {
    let mut totals = std::collections::BTreeMap::new();
    for (reason, n) in by_host.values().flatten() {
        *totals.entry(reason.as_str()).or_default() += n;
    }
    totals
}

async fn start_site(
    args: &BenchArgs,
    faults: Option<&skitter_testsite::Faults>,
) -> anyhow::Result<(Child, String, Option<String>)> {
    let exe = std::env::current_exe().context("cannot find the skitter executable")?;
    let mut child = Command::new(exe)
        .args(["-q", "testsite", "--port", "0"])
        .arg(format!("--pages={}", args.pages))
        .arg(format!("--fanout={}", args.fanout))
        .arg(format!("--page-size={}", args.page_size))
        .arg(format!("--latency={}ms", args.latency.as_millis()))
        .args(faults.map(|f| format!("--faults={}", fault_spec(f))))
        .args(args.vhosts.map(|n| format!("--vhosts={n}")))
        .args(args.h2_max_streams.map(|n| format!("--h2-max-streams={n}")))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("cannot start the test site")?;
    let stdout = child
        .stdout
        .take()
        .context("no stdout from the test site")?;
    let mut lines = BufReader::new(stdout);
    let mut line = String::new();
    lines.read_line(&mut line).await?;
    let mut root = line.trim().to_string();
    if !root.starts_with("http://") {
        bail!("the test site did not start (printed {root:?})");
    }
    // With virtual hosts: `dns IP:PORT`, then the first host's URL.
    let mut dns = None;
    if args.vhosts.is_some() {
        line.clear();
        lines.read_line(&mut line).await?;
        dns = line.trim().strip_prefix("dns ").map(str::to_owned);
        line.clear();
        lines.read_line(&mut line).await?;
        root = line.trim().to_string();
        if dns.is_none() || !root.starts_with("http://h0.") {
            bail!("the test site did not start its virtual hosts (printed {root:?})");
        }
    }
    Ok((child, root, dns))
}

/// A `--faults` spec that parses back to `f`.
fn fault_spec(f: &skitter_testsite::Faults) -> String {
    let mut parts = vec![
        format!("fail={}", f.fail_rate),
        format!("times={}", f.fail_times),
        format!("reset={}", f.reset_rate),
        format!("stall={}ms", f.stall.as_millis()),
        format!("robots={}", f.robots_failures),
        format!("dns={}", f.dns_fail_rate),
        format!("dns-times={}", f.dns_fail_times),
        format!("seed={}", f.seed),
    ];
    parts.extend(f.fail_status.map(|s| format!("status={s}")));
    parts.extend(f.retry_after.map(|s| format!("retry-after={s}")));
    parts.extend(f.rate_limit.map(|r| format!("rate={r}")));
    parts.extend(
        f.outage
            .map(|(s, l)| format!("outage={}ms+{}ms", s.as_millis(), l.as_millis())),
    );
    parts.join(",")
}

fn print_figures(args: &BenchArgs, f: &serde_json::Value) {
    println!(
        "skitter bench: {} pages ({} URLs) of {} B on {} host(s), fanout {}, latency {:?}, max_tasks {}",
        f["pages"],
        f["records"],
        args.page_size,
        f["hosts"],
        args.fanout,
        args.latency,
        args.max_tasks
    );
    println!("  correct      {}", f["correct"]);
    println!(
        "  wall         {:.3} s",
        f["wall_secs"].as_f64().unwrap_or(0.0)
    );
    println!(
        "  pages/s      {:.1}",
        f["pages_per_sec"].as_f64().unwrap_or(0.0)
    );
    println!(
        "  cpu          {:.3} s (crawler process, user+sys)",
        f["cpu_secs"].as_f64().unwrap_or(0.0)
    );
    if let Some(rss) = f["peak_rss_mb"].as_f64() {
        println!("  peak RSS     {rss:.1} MB (crawler process)");
    }
    println!(
        "  in flight    {} at most",
        f["in_flight_peak"].as_u64().unwrap_or(0)
    );
    if let (Some(ideal), Some(ratio)) = (f["ideal_secs"].as_f64(), f["wall_over_ideal"].as_f64()) {
        let retries = match f["ideal_retry_rounds"].as_u64() {
            Some(n) if n > 0 => format!(", plus {n} round trips of retries on the longest chain"),
            _ => String::new(),
        };
        println!(
            "  ideal        {ideal:.3} s (rounds of URLs found, robots.txt first, x latency{retries}); wall/ideal {ratio:.3}"
        );
    }
}

/// The fastest any crawler can take over the site with `tasks` requests in
/// flight and `latency` per answer, when a link is known only once its page
/// has arrived: rounds of one latency, each fetching the first `tasks` URLs
/// found and not yet fetched, in the order they were found: robots.txt
/// (unless the crawl ignores it: no page may be fetched before it), `/`, and
/// every URL the site links, the 404 spellings (`/P/{t}`) included. A
/// crawler that spent no time between an answer and its next requests would
/// take exactly this.
///
/// Until stop 54 the bench counted breadth-first levels of the page tree
/// alone: it left out the robots.txt round trip and the `/P/` URLs found on
/// the deepest pages, an ideal no crawler that obeys robots.txt could meet.
fn ideal_time(
    pages: usize,
    fanout: usize,
    tasks: usize,
    latency: Duration,
    robots: bool,
) -> Option<Duration> {
    if latency.is_zero() {
        return None;
    }
    let rounds = u32::try_from(ideal_rounds(pages, fanout, tasks) + u64::from(robots)).ok()?;
    Some(latency * rounds)
}

/// Rounds from `/` to the last URL the site links, `tasks` URLs a round (see
/// [`ideal_time`]).
fn ideal_rounds(pages: usize, fanout: usize, tasks: usize) -> u64 {
    use skitter_testsite::SiteLink;
    let config = skitter_testsite::SiteConfig {
        pages,
        fanout,
        ..skitter_testsite::SiteConfig::default()
    };
    let tasks = tasks.max(1);
    let (mut page_seen, mut upper_seen) = (vec![false; pages], vec![false; pages]);
    let mut queue = std::collections::VecDeque::new();
    // `/` fetched in the first round links `/p/0`.
    let mut rounds = 1;
    if pages > 0 {
        page_seen[0] = true;
        queue.push_back(SiteLink::Page(0));
    }
    while !queue.is_empty() {
        rounds += 1;
        let round: Vec<SiteLink> = queue.drain(..tasks.min(queue.len())).collect();
        for fetched in round {
            let SiteLink::Page(i) = fetched else { continue };
            for found in skitter_testsite::page_links(&config, i) {
                let seen = match found {
                    SiteLink::Page(n) => &mut page_seen[n],
                    SiteLink::Upper(n) => &mut upper_seen[n],
                };
                if !std::mem::replace(seen, true) {
                    queue.push_back(found);
                }
            }
        }
    }
    rounds
}

/// Round trips the faults add to the site's critical path, as issue 35 counts
/// its ideal ("one round trip per retried URL on the critical path"): the most
/// retries of failing pages (each `times` of them) on any chain of the tree from
/// `/` down, since a page's links are known only once it has been fetched. Page
/// failures only (`fail=`), on a site without virtual hosts (the site keys a
/// failure by host and path).
fn retry_rounds(pages: usize, fanout: usize, faults: &skitter_testsite::Faults) -> u64 {
    let times = u64::from(faults.fail_times.max(1));
    let own = |path: &str| if faults.fails(path) { times } else { 0 };
    let fanout = fanout.max(1);
    let root = own("/");
    // Retries on the chain down to each page, parents before children.
    let mut chain = Vec::with_capacity(pages);
    for i in 0..pages {
        let above = if i == 0 {
            root
        } else {
            chain[(i - 1) / fanout]
        };
        chain.push(above + own(&format!("/p/{i}")));
    }
    chain.into_iter().max().unwrap_or(root)
}

fn cpu_time() -> Duration {
    // SAFETY: getrusage writes into the struct we pass and reads nothing else.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Peak resident set size (VmHWM) of this process.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_spec_round_trips() {
        let spec = "fail=0.1,times=2,status=500,retry-after=3,reset=0.5,stall=250ms,robots=2,rate=100,outage=1s+2s,seed=9";
        let f: skitter_testsite::Faults = spec.parse().unwrap();
        assert_eq!(
            fault_spec(&f).parse::<skitter_testsite::Faults>().unwrap(),
            f
        );
    }

    #[test]
    fn retries_on_the_longest_chain_count_in_the_ideal() {
        let none: skitter_testsite::Faults = "fail=0,seed=1".parse().unwrap();
        assert_eq!(retry_rounds(1000, 10, &none), 0);
        let all: skitter_testsite::Faults = "fail=1,times=2,seed=1".parse().unwrap();
        // `/`, `/p/0`, `/p/1`..`/p/10`, `/p/11`..: 4 pages on the longest chain
        // of 111, each retried twice.
        assert_eq!(retry_rounds(111, 10, &all), 8);
        // Against a count over every chain by brute force.
        let some: skitter_testsite::Faults = "fail=0.3,times=1,seed=4".parse().unwrap();
        let fails = |p: &str| u64::from(some.fails(p));
        let brute = (0..500usize)
            .map(|mut i| {
                let mut n = fails(&format!("/p/{i}")) + fails("/");
                while i > 0 {
                    i = (i - 1) / 3;
                    n += fails(&format!("/p/{i}"));
                }
                n
            })
            .max()
            .unwrap();
        assert_eq!(retry_rounds(500, 3, &some), brute);
        assert!(brute >= 2, "the case should have a chain with retries");
    }

    #[test]
    fn ideal_counts_rounds_of_urls_found() {
        let ms = Duration::from_millis(10);
        // `/`; `/p/0`; its 10 children and `/P/7` (it spells `/p/7`, a
        // child) with 5 tasks: 3 rounds.
        assert_eq!(ideal_rounds(11, 10, 5), 5);
        assert_eq!(ideal_time(11, 10, 5, ms, false), Some(ms * 5));
        // robots.txt first.
        assert_eq!(ideal_time(11, 10, 5, ms, true), Some(ms * 6));
        assert_eq!(ideal_rounds(11, 10, 100), 3);
        assert_eq!(ideal_time(11, 10, 100, Duration::ZERO, true), None);
        // `/p/50` is a leaf that links `/p/57` (found already) and `/P/57`,
        // a round below it.
        assert_eq!(ideal_rounds(60, 10, 1000), 5);
        assert_eq!(ideal_rounds(0, 10, 5), 1);
    }

    #[test]
    fn ideal_fetches_every_url_the_site_links_once() {
        // Against the count of URLs: with one task a round, one round each.
        for (pages, fanout) in [(1, 10), (11, 10), (500, 3), (2000, 10)] {
            let uppers = (0..pages).filter(|i| i % 50 == 0).count() as u64;
            assert_eq!(
                ideal_rounds(pages, fanout, 1),
                1 + pages as u64 + uppers,
                "{pages} pages, fanout {fanout}"
            );
        }
    }
}
