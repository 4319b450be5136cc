//! Crawls of the test site's pathological pages (`/hostile/…`): no input may
//! crash the crawler, stall it, or make it hold more than its limits allow.
//!
//! A crawl that would hang fails through a generous guard instead (`ended`);
//! nothing here asserts on how long anything took.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use skitter::base::outcome::{OutcomeKind, PageRecord, SkipReason};
use skitter::crawl::config::Limits;
use skitter::fetch::retry::RetryPolicy;
use skitter::output::report::StopReason;
use skitter::output::{
    JsonlSink, MirrorOptions, MirrorSink, Page, Sink, SinkError, SinkSummary, WarcOptions, WarcSink,
};
use skitter::{Crawler, CrawlerBuilder, Report};
use skitter_testsite::{RunningSite, SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

fn site() -> RunningSite {
    TestSite::start(SiteConfig {
        pages: 3,
        ..SiteConfig::default()
    })
    .unwrap()
}

fn builder(site: &RunningSite, root: &str, max_body: u64) -> CrawlerBuilder {
    let fetch = skitter::fetch::FetchConfig {
        read_timeout: Duration::from_secs(5),
        total_timeout: Duration::from_secs(30),
        max_body_size: max_body,
        ..Default::default()
    };
    Crawler::builder()
        .root(site.url(root))
        .fetch_config(fetch)
        .retry_policy(RetryPolicy {
            max_tries: 1,
            ..Default::default()
        })
}

/// Runs the crawl; a crawl still running after five minutes is a hang, and fails.
async fn ended(b: CrawlerBuilder, cancel: CancellationToken) -> Report {
    let run = b.build().expect("valid config").run(cancel);
    tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .expect("the crawl ended")
        .expect("crawl runs")
}

fn record(report: &Report, site: &RunningSite, path: &str) -> PageRecord {
    let url = site.url(path);
    report
        .pages
        .iter()
        .map(Result::unwrap)
        .find(|p| p.url.as_str() == url)
        .unwrap_or_else(|| panic!("no record for {url}"))
}

#[tokio::test]
async fn nested_noscript_does_not_overflow_the_stack() {
    let site = site();
    // 2 MiB of nested <noscript> once aborted the whole process.
    let report = ended(
        builder(&site, "/hostile/noscript/2048", 4 << 20),
        CancellationToken::new(),
    )
    .await;
    assert!(report.completed());
    assert_eq!(
        record(&report, &site, "/hostile/noscript/2048").kind,
        OutcomeKind::Html
    );
    assert_eq!(site.stats().requests("/hostile/leaf/0"), 1);
}

#[tokio::test]
async fn a_body_over_the_cap_is_cut_and_its_links_are_kept() {
    let site = site();
    let dir = tempfile::tempdir().unwrap();
    let (warc, jsonl) = (dir.path().join("c.warc"), dir.path().join("c.jsonl"));
    let b = builder(&site, "/hostile/big/2048", 64 * 1024)
        .sink(Box::new(
            WarcSink::create(&warc, WarcOptions::default()).unwrap(),
        ))
        .sink(Box::new(
            JsonlSink::create(jsonl.to_str().unwrap()).unwrap(),
        ));
    let report = ended(b, CancellationToken::new()).await;
    let big = record(&report, &site, "/hostile/big/2048");
    assert_eq!(big.kind, OutcomeKind::Html, "{big:?}");
    assert!(big.truncated);
    assert_eq!(big.size, 64 * 1024);
    assert_eq!(report.counters.truncated, 1);
    // The link in the part read is followed; the one past the cap is not seen.
    assert_eq!(site.stats().requests("/hostile/leaf/0"), 1);
    assert_eq!(site.stats().requests("/hostile/leaf/1"), 0);
    let archive = std::fs::read(&warc).unwrap();
    let archive = String::from_utf8_lossy(&archive);
    assert_eq!(archive.matches("WARC-Truncated: length").count(), 1);
    let lines = std::fs::read_to_string(&jsonl).unwrap();
    let cut: Vec<&str> = lines
        .lines()
        .filter(|l| l.contains("\"truncated\":true"))
        .collect();
    assert_eq!(cut.len(), 1, "{lines}");
    assert!(cut[0].contains("/hostile/big/2048"));
}

#[tokio::test]
async fn a_compression_bomb_is_decoded_only_up_to_the_cap_even_for_the_mirror() {
    let site = site();
    let dir = tempfile::tempdir().unwrap();
    let mirror = dir.path().join("m");
    let max = 1 << 20;
    let options = MirrorOptions {
        max_body_size: max,
        ..MirrorOptions::default()
    };
    // 1 GiB inflated; the mirror once decoded it whole with its own 1 GiB cap.
    let b = builder(&site, "/hostile/gzipbomb/1024", max)
        .sink(Box::new(MirrorSink::create(&mirror, options).unwrap()));
    let report = ended(b, CancellationToken::new()).await;
    let bomb = record(&report, &site, "/hostile/gzipbomb/1024");
    assert_eq!(
        (bomb.kind, bomb.truncated),
        (OutcomeKind::Html, true),
        "{bomb:?}"
    );
    assert_eq!(site.stats().requests("/hostile/leaf/0"), 1);
    let largest = largest_file(&mirror);
    assert!(
        largest > 0 && largest <= max,
        "largest mirrored file {largest}"
    );
}

fn largest_file(dir: &Path) -> u64 {
    let mut largest = 0;
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(d).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                todo.push(entry.path());
            } else {
                largest = largest.max(meta.len());
            }
        }
    }
    largest
}

#[tokio::test]
async fn huge_attributes_and_many_links_are_handled() {
    let site = site();
    let b = builder(&site, "/hostile/attr/4096", 16 << 20).limits(one_page());
    let report = ended(b, CancellationToken::new()).await;
    assert_eq!(record(&report, &site, "/hostile/attr/4096").num_urls, 2);
    let b = builder(&site, "/hostile/links/50000", 16 << 20).limits(one_page());
    let report = ended(b, CancellationToken::new()).await;
    assert_eq!(
        record(&report, &site, "/hostile/links/50000").num_urls,
        50_000
    );
    assert_eq!(report.todo, 50_000);
}

/// Only the root is fetched; its links are still gated, de-duplicated and queued.
fn one_page() -> Limits {
    Limits {
        max_pages: Some(1),
        ..Limits::default()
    }
}

#[tokio::test]
async fn an_endless_sitemap_index_chain_stops_at_the_depth_limit() {
    let site = TestSite::start(SiteConfig {
        pages: 2,
        robots_txt: Some((
            200,
            "User-agent: *\nAllow: /\nSitemap: /hostile/sitemapindex/0\n".into(),
        )),
        ..SiteConfig::default()
    })
    .unwrap();
    let report = ended(builder(&site, "/", 1 << 20), CancellationToken::new()).await;
    assert!(report.completed());
    let stats = site.stats();
    let fetched = (0..10)
        .filter(|i| stats.requests(&format!("/hostile/sitemapindex/{i}")) > 0)
        .count();
    let depth = skitter::parse::discovery::MAX_INDEX_DEPTH as usize;
    assert_eq!(fetched, depth + 1);
    assert!(report.counters.links_skipped[&SkipReason::Limit] >= 1);
}

/// An output that accepts one page and then never returns.
struct Stuck {
    took_one: Arc<AtomicBool>,
}

#[async_trait]
impl Sink for Stuck {
    async fn record(&mut self, _page: &Page) -> Result<(), SinkError> {
        if self.took_one.swap(true, Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
        Ok(())
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        std::future::pending().await
    }
}

fn stuck_crawl(site: &RunningSite, cancel: &CancellationToken) -> CrawlerBuilder {
    let took_one = Arc::new(AtomicBool::new(false));
    let watch = took_one.clone();
    let cancel = cancel.clone();
    tokio::spawn(async move {
        while !watch.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        cancel.cancel();
    });
    builder(site, "/hostile/links/500", 1 << 20)
        .max_tasks(4)
        .grace(Duration::from_millis(200))
        .sink(Box::new(Stuck { took_one }))
}

#[tokio::test]
async fn max_pages_ends_the_crawl_even_when_an_output_is_stuck() {
    let site = site();
    let never = CancellationToken::new();
    let b = stuck_crawl(&site, &CancellationToken::new()).limits(Limits {
        max_pages: Some(10),
        ..Limits::default()
    });
    let report = ended(b, never).await;
    assert!(
        matches!(&report.stopped, Some(StopReason::Fatal(why)) if why.contains("outputs")),
        "{:?}",
        report.stopped
    );
    assert!(report.todo > 0);
}

#[tokio::test]
async fn ctrl_c_ends_the_crawl_even_when_an_output_is_stuck() {
    let site = site();
    let cancel = CancellationToken::new();
    let report = ended(stuck_crawl(&site, &cancel), cancel).await;
    assert_eq!(report.stopped, Some(StopReason::Interrupted));
}

/// Not a test: prints how long one page of 1,000,000 links takes against 1,000
/// pages of 1,000 links each (the same 1,000,000 distinct links, all gated,
/// de-duplicated and queued). `cargo test --release -p skitter --test it --
/// hostile::bench --ignored --nocapture`
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a benchmark: prints figures, asserts nothing about time"]
async fn bench_one_million_links_against_a_thousand_pages() {
    let site = site();
    let limits = |max_pages| Limits {
        max_pages: Some(max_pages),
        ..Limits::default()
    };
    let started = std::time::Instant::now();
    let b = builder(&site, "/hostile/links/1000000", 64 << 20).limits(limits(1));
    let one = ended(b, CancellationToken::new()).await;
    let one_time = started.elapsed();
    let started = std::time::Instant::now();
    let b = builder(&site, "/hostile/linkpages/1000", 64 << 20).limits(limits(1001));
    let many = ended(b, CancellationToken::new()).await;
    let many_time = started.elapsed();
    println!(
        "1 page of 1,000,000 links: {one_time:.2?} ({} queued); \
         1 + 1,000 pages of 1,000 links: {many_time:.2?} ({} queued)",
        one.todo, many.todo
    );
}

/// A page with more links than `--max-links-per-page` has the rest dropped
/// unread: only the first ones are followed, and the report counts the cut.
#[tokio::test]
async fn links_past_the_per_page_cap_are_dropped_and_counted() {
    let site = site();
    let b = builder(&site, "/hostile/links/50", 1 << 20).max_links_per_page(20);
    let report = ended(b, CancellationToken::new()).await;
    assert!(report.completed());
    assert_eq!(report.counters.links_cut, 30, "{}", report.to_text());
    assert_eq!(record(&report, &site, "/hostile/links/50").num_urls, 20);
    let stats = site.stats();
    let leaves = (0..50)
        .filter(|i| stats.requests(&format!("/hostile/leaf/{i}")) > 0)
        .count();
    assert_eq!(leaves, 20);
    assert!(report.to_text().contains("        30 links_cut\n"));
}
