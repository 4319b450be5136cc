//! Bulk fetches of the local test site through the library API: outcomes and the
//! summary, redirects and retries, saving (naming, `skip_existing`, no partial
//! files, unwritable outputs), the concurrency caps, sinks, and stopping.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use skitter::base::outcome::{ErrorKind, OutcomeKind, PageRecord};
use skitter::bulk::{
    self, BuildError, BulkFetcher, BulkFetcherBuilder, InputItem, Outcome, StopReason, Summary,
};
use skitter::fetch::FetchConfig;
use skitter::fetch::retry::RetryPolicy;
use skitter::output::{ChannelSink, JsonlSink, Page, Sink, SinkError, SinkSummary};
use skitter_testsite::{RunningSite, SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

fn site(config: SiteConfig) -> RunningSite {
    TestSite::start(config).expect("test site starts")
}

fn specials() -> RunningSite {
    site(SiteConfig {
        specials: true,
        ..SiteConfig::default()
    })
}

/// Quick retries and short timeouts, so failure cases stay fast.
fn quick() -> BulkFetcherBuilder {
    BulkFetcher::builder()
        .fetch_config(FetchConfig {
            connect_timeout: Duration::from_secs(2),
            read_timeout: Duration::from_millis(300),
            total_timeout: Duration::from_secs(3),
            ..FetchConfig::default()
        })
        .retry_policy(RetryPolicy {
            max_tries: 3,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
            max_retry_after: Duration::from_millis(20),
            ..RetryPolicy::default()
        })
}

fn args(patterns: &[String]) -> impl futures_util::Stream<Item = InputItem> + Send + 'static {
    bulk::from_args(patterns.to_vec(), true)
}

async fn run(b: BulkFetcherBuilder, patterns: &[String]) -> Summary {
    let fetcher = b.build().expect("valid settings");
    fetcher.run(args(patterns), CancellationToken::new()).await
}

/// Every file under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                out.push(path.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn host_dir(site: &RunningSite) -> String {
    format!("127.0.0.1_{}", site.addr().port())
}

#[tokio::test]
async fn counts_every_outcome_once_per_item() {
    let site = specials();
    let patterns = [
        site.url("/p/[0-4]"),
        site.url("/{missing,gone,error,flaky,ratelimited}"),
        site.url("/r/{301,chain/3,loop/a,nolocation}"),
        site.url("/[5-1]"),
    ];
    let (sink, mut rx) = ChannelSink::new(100);
    let reports = Arc::new(Mutex::new(Vec::new()));
    let seen = reports.clone();
    let b = quick()
        .max_redirect(5)
        .sink(Box::new(sink))
        .on_item(move |r| seen.lock().unwrap().push((r.n, r.final_url.clone())));
    let summary = run(b, &patterns).await;
    assert_eq!(summary.ok, 5 + 2 + 2, "{summary}");
    assert_eq!(summary.not_found, 2, "{summary}");
    assert_eq!(summary.http_errors.get(&500), Some(&1), "{summary}");
    let kinds: Vec<_> = summary
        .network_errors
        .iter()
        .map(|(k, n)| (*k, *n))
        .collect();
    assert_eq!(
        kinds,
        [
            (ErrorKind::BadRedirect, 1),
            (ErrorKind::TooManyRedirects, 1)
        ],
        "{summary}"
    );
    assert_eq!(summary.malformed, 1, "{summary}");
    assert_eq!((summary.total(), summary.failed()), (15, 6));
    assert!(summary.stopped.is_none());
    // Items are numbered in input order, each reported once.
    let mut reports = reports.lock().unwrap().clone();
    reports.sort_by_key(|r| r.0);
    assert_eq!(
        reports.iter().map(|r| r.0).collect::<Vec<_>>(),
        (1..=15).collect::<Vec<_>>()
    );
    let final_301 = reports[10].1.as_ref().map(|u| u.path().to_string());
    assert_eq!(final_301.as_deref(), Some("/p/1"));
    // Sinks see every hop: 301 → /p/1, chain/3 → 2 → 1 → 0 → /p/2, the loop's six.
    let mut records: Vec<PageRecord> = Vec::new();
    while let Ok(r) = rx.try_recv() {
        records.push(r);
    }
    let redirects = records
        .iter()
        .filter(|r| r.kind == OutcomeKind::Redirect)
        .count();
    assert_eq!(redirects, 1 + 4 + 6, "{records:#?}");
    // Plus each fetched item's last response (the loop's last one is a redirect).
    assert_eq!(records.len(), 13 + redirects);
    let hop = records
        .iter()
        .find(|r| r.url.path() == "/p/1" && r.parent.is_some());
    assert_eq!(
        hop.and_then(|r| r.parent.as_ref()).map(|p| p.path()),
        Some("/r/301")
    );
}

#[tokio::test]
async fn saves_bodies_by_mirror_path_and_by_template() {
    let site = site(SiteConfig {
        specials: true,
        gzip: true,
        ..SiteConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let patterns = [
        site.url("/asset/logo.png"),
        site.url("/p/[1-2]"),
        site.url("/r/301"),
    ];
    let summary = run(quick().output_dir(dir.path()), &patterns).await;
    assert_eq!((summary.ok, summary.files), (4, 4), "{summary}");
    let host = host_dir(&site);
    let want: Vec<String> = ["asset/logo.png", "p/1", "p/2", "r/301"]
        .iter()
        .map(|p| format!("{host}/{p}"))
        .collect();
    assert_eq!(files(dir.path()), want);
    let png = std::fs::read(dir.path().join(&want[0])).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    // Gzip-encoded pages are saved decoded; a redirect saves its target's body.
    let page = std::fs::read_to_string(dir.path().join(&want[1])).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{page:.40}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join(&want[3])).unwrap(),
        page
    );

    let templated = tempfile::tempdir().unwrap();
    let b = quick()
        .output_dir(templated.path())
        .name_template("items/{n}-{basename}.html");
    let summary = run(b, &[site.url("/p/[7-8]")]).await;
    assert_eq!(summary.ok, 2, "{summary}");
    assert_eq!(
        files(templated.path()),
        ["items/1-7.html", "items/2-8.html"]
    );
}

#[tokio::test]
async fn skip_existing_fetches_only_what_is_missing() {
    let site = specials();
    let dir = tempfile::tempdir().unwrap();
    let b = || quick().output_dir(dir.path()).skip_existing(true);
    let first = run(b(), &[site.url("/p/[1-3]")]).await;
    assert_eq!(first.ok, 3, "{first}");
    std::fs::remove_file(dir.path().join(host_dir(&site)).join("p/2")).unwrap();
    let second = run(b(), &[site.url("/p/[1-3]")]).await;
    assert_eq!((second.ok, second.skipped_existing), (1, 2), "{second}");
    assert_eq!(second.failed(), 0);
    let stats = site.stats();
    let counts: Vec<u64> = (1..=3)
        .map(|i| stats.requests(&format!("/p/{i}")))
        .collect();
    assert_eq!(counts, [1, 2, 1]);
}

#[tokio::test]
async fn failed_downloads_leave_no_file_behind() {
    let site = specials();
    let dir = tempfile::tempdir().unwrap();
    let b = quick().output_dir(dir.path()).retry_policy(RetryPolicy {
        max_tries: 1,
        ..RetryPolicy::default()
    });
    let patterns = [
        site.url("/{truncated,slowbody,hang}"),
        site.url("/asset/big.bin"),
    ];
    let mut fetch = FetchConfig {
        read_timeout: Duration::from_millis(200),
        total_timeout: Duration::from_millis(500),
        max_body_size: 1024 * 1024,
        ..FetchConfig::default()
    };
    fetch.connect_timeout = Duration::from_secs(2);
    let summary = run(b.fetch_config(fetch), &patterns).await;
    assert_eq!(summary.ok, 0, "{summary}");
    assert_eq!(summary.failed(), 4, "{summary}");
    assert_eq!(
        summary.network_errors.get(&ErrorKind::BodyTooLarge),
        Some(&1)
    );
    assert_eq!(files(dir.path()), Vec::<String>::new());
}

#[tokio::test]
async fn unwritable_outputs_are_reported() {
    let site = specials();
    let dir = tempfile::tempdir().unwrap();
    // An "output directory" that is a regular file fails before any request.
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let err = quick()
        .output_dir(&file)
        .build()
        .err()
        .expect("a build error");
    assert!(
        matches!(&err, BuildError::OutputDir { path, .. } if *path == file),
        "{err}"
    );
    let err = quick()
        .output_dir("/proc/skitter-test")
        .build()
        .err()
        .unwrap();
    assert!(err.to_string().contains("/proc/skitter-test"), "{err}");
    // A host directory that cannot be made: each body fails to save, the run goes on.
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join(host_dir(&site)), b"x").unwrap();
    let messages = Arc::new(Mutex::new(Vec::new()));
    let seen = messages.clone();
    let b = quick().output_dir(&out).on_item(move |r| {
        if let Outcome::SaveFailed(e) = &r.outcome {
            seen.lock().unwrap().push(e.to_string());
        }
    });
    let summary = run(b, &[site.url("/p/[1-2]")]).await;
    assert_eq!((summary.save_errors, summary.ok), (2, 0), "{summary}");
    let messages = messages.lock().unwrap();
    assert!(
        messages[0].contains("cannot create its directory"),
        "{messages:?}"
    );
}

#[tokio::test]
async fn respects_the_global_and_per_host_caps() {
    let slow = SiteConfig {
        latency: Duration::from_millis(20),
        ..SiteConfig::default()
    };
    let (a, b) = (site(slow.clone()), site(slow));
    let patterns = [a.url("/p/[0-29]"), b.url("/p/[0-29]")];
    let summary = run(quick().concurrency(5).per_host(3), &patterns).await;
    assert_eq!(summary.ok, 60, "{summary}");
    let (peak_a, peak_b) = (a.stats().in_flight_peak, b.stats().in_flight_peak);
    assert!(
        (1..=3).contains(&peak_a) && (1..=3).contains(&peak_b),
        "{peak_a} {peak_b}"
    );
}

#[tokio::test]
async fn sinks_get_pages_and_a_failing_sink_stops_the_run() {
    let site = specials();
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("out.jsonl");
    let b = quick().sink(Box::new(JsonlSink::create(&jsonl).unwrap()));
    let summary = run(b, &[site.url("/p/[0-3]"), site.url("/missing")]).await;
    assert_eq!(summary.sinks[0].records, 5, "{summary}");
    let text = std::fs::read_to_string(&jsonl).unwrap();
    assert_eq!(text.lines().count(), 5);
    assert!(text.contains("\"status\":404"));

    let b = quick().concurrency(2).sink(Box::new(Failing));
    let summary = run(b, &[site.url("/p/[0-99]")]).await;
    assert!(
        matches!(summary.stopped, Some(StopReason::Fatal(_))),
        "{summary}"
    );
    assert!(summary.total() < 100, "{summary}");
}

/// A sink whose disk is always full.
struct Failing;

#[async_trait]
impl Sink for Failing {
    async fn record(&mut self, _page: &Page) -> Result<(), SinkError> {
        Err(SinkError::new("failing", "disk full"))
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        Ok(SinkSummary::default())
    }
}

#[tokio::test]
async fn cancelling_stops_a_huge_pattern_early() {
    // Nothing listens on port 1; a trillion URLs would never finish if expanded.
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let count = Arc::new(Mutex::new(0u64));
    let seen = count.clone();
    let fetcher = quick()
        .retry_policy(RetryPolicy {
            max_tries: 1,
            ..RetryPolicy::default()
        })
        .on_item(move |_| {
            let mut n = seen.lock().unwrap();
            *n += 1;
            if *n == 20 {
                stop.cancel();
            }
        })
        .build()
        .unwrap();
    let urls = args(&["http://127.0.0.1:1/[0-999999999999]".to_string()]);
    let summary = fetcher.run(urls, cancel).await;
    assert!(matches!(summary.stopped, Some(StopReason::Interrupted)));
    assert!(summary.total() >= 20 && summary.total() < 1000, "{summary}");
    assert_eq!(
        summary.network_errors.get(&ErrorKind::Connect),
        Some(&summary.total())
    );
}

#[tokio::test]
async fn streams_input_from_a_reader() {
    let site = specials();
    let text = format!(
        "# pages\n{}\n\n{}\n{{broken\n",
        site.url("/p/[1-2]"),
        site.url("/gone")
    );
    let items = bulk::from_reader(std::io::Cursor::new(text), "list.txt", true);
    let lines = Arc::new(Mutex::new(Vec::new()));
    let seen = lines.clone();
    let fetcher = quick()
        .on_item(move |r| seen.lock().unwrap().push(r.to_string()))
        .build()
        .unwrap();
    let summary = fetcher.run(items, CancellationToken::new()).await;
    assert_eq!(
        (summary.ok, summary.not_found, summary.malformed),
        (2, 1, 1)
    );
    let lines = lines.lock().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("list.txt:5: skipped: bad pattern")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("list.txt:4 ") && l.ends_with("HTTP 410"))
    );
}

#[test]
fn settings_are_checked() {
    let cases: Vec<(BulkFetcherBuilder, &str)> = vec![
        (BulkFetcher::builder().concurrency(0), "at least 1"),
        (BulkFetcher::builder().per_host(0), "at least 1"),
        (
            BulkFetcher::builder().skip_existing(true),
            "output directory",
        ),
        (
            BulkFetcher::builder()
                .output_dir(PathBuf::from("unused"))
                .name_template("{nope}"),
            "unknown placeholder",
        ),
    ];
    for (b, want) in cases {
        let err = b.build().err().expect("a build error");
        assert!(err.to_string().contains(want), "{err}");
    }
}

/// `fetch` keeps the crawl's per-host rules: starts to one host at least
/// `--delay` apart (another host is not held up by it), one URL at a time.
#[tokio::test]
async fn the_host_delay_spaces_starts_to_one_host() {
    let slow = site(SiteConfig {
        record_starts: true,
        ..SiteConfig::default()
    });
    let other = site(SiteConfig::default());
    let b = quick()
        .concurrency(8)
        .per_host(4)
        .host_delay(Duration::from_millis(150), Duration::ZERO);
    let summary = run(b, &[slow.url("/p/[0-4]"), other.url("/p/[0-4]")]).await;
    assert_eq!(summary.ok, 10, "{summary}");
    let starts = slow.stats().starts("/p/");
    assert_eq!(starts.len(), 5);
    // Four gaps of 150 ms at least as the client starts them; arrivals at
    // the server may shift by scheduling, so only the whole span is checked,
    // with room for the first arrival to come 150 ms late.
    let span = starts[4] - starts[0];
    assert!(
        span >= Duration::from_millis(450),
        "starts too close: {starts:?}"
    );
}
