//! The crawl against a faulty site: URLs that fail transiently are retried on
//! their own schedule without holding up their host, a rate-limited host is
//! slowed down and finished, and a host that is down for a while loses nothing.
//! (Speed under faults is measured by `skitter bench --faults`, not here.)

use std::time::Duration;

use skitter::fetch::retry::RetryPolicy;
use skitter::{Crawler, Report};
use skitter_testsite::{Faults, RunningSite, SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

fn site(pages: usize, faults: &str) -> RunningSite {
    TestSite::start(SiteConfig {
        pages,
        faults: faults.parse().unwrap(),
        record_starts: true,
        ..SiteConfig::default()
    })
    .unwrap()
}

async fn crawl(site: &RunningSite, retry_delay: Duration) -> Report {
    builder(site, retry_delay)
        .build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap()
}

fn builder(site: &RunningSite, retry_delay: Duration) -> skitter::CrawlerBuilder {
    let fetch = skitter::fetch::FetchConfig {
        read_timeout: Duration::from_millis(500),
        total_timeout: Duration::from_secs(2),
        ..Default::default()
    };
    Crawler::builder()
        .root(site.url("/"))
        .fetch_config(fetch)
        .max_tasks(16)
        .per_host(8)
        .retry_policy(RetryPolicy {
            base_delay: retry_delay,
            ..RetryPolicy::default()
        })
}

/// Every generated page was fetched and is HTML in the report.
fn assert_complete(site: &RunningSite, report: &Report) {
    assert!(report.completed(), "{}", report.to_text());
    assert_eq!(
        report.counters.html,
        site.stats().page_paths().len() as u64,
        "{}",
        report.to_text()
    );
    // The site also links upper-case spellings that 404; nothing else failed.
    let failed: Vec<_> = report
        .pages
        .iter()
        .map(Result::unwrap)
        .filter(|p| p.kind == skitter::base::outcome::OutcomeKind::Failed)
        .collect();
    assert!(failed.is_empty(), "{failed:?}");
}

#[tokio::test]
async fn a_url_failing_once_waits_alone_while_its_host_goes_on() {
    let spec = "fail=0.1,times=1,status=503,seed=3";
    let site = site(200, spec);
    let faults: Faults = spec.parse().unwrap();
    let failing: Vec<String> = site
        .stats()
        .page_paths()
        .into_iter()
        .filter(|p| faults.fails(p))
        .collect();
    assert!(failing.len() > 5, "the seed gives failing URLs");
    // The retries wait at least a second; the rest of the site takes far less.
    let report = crawl(&site, Duration::from_secs(2)).await;
    assert_complete(&site, &report);
    assert_eq!(report.counters.retries, failing.len() as u64);
    assert!(
        report.throttled.is_empty(),
        "no slow-down: {:?}",
        report.throttled
    );
    // The host was never paused: while the first failing URL waited for its
    // retry (a second or more), the crawl of its host went on.
    let stats = site.stats();
    let mut waits: Vec<(Duration, Duration)> = failing
        .iter()
        .map(|p| {
            let tries = stats.starts_of(p);
            assert_eq!(tries.len(), 2, "{p}: one failure, one success");
            (tries[0], tries[1])
        })
        .collect();
    waits.sort();
    let (from, to) = waits[0];
    let during = stats
        .starts("/p/")
        .into_iter()
        .filter(|t| *t > from && *t < to)
        .count();
    let pages = stats.page_paths().len();
    assert!(
        during >= pages / 2,
        "only {during} of {pages} pages started while {from:?}..{to:?}"
    );
}

#[tokio::test]
async fn a_rate_limited_host_is_slowed_down_and_finished() {
    let site = site(300, "rate=100");
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("crawl.jsonl");
    let report = builder(&site, Duration::from_millis(200))
        .sink(Box::new(
            skitter::output::JsonlSink::create(&jsonl).unwrap(),
        ))
        .build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap();
    assert_complete(&site, &report);
    let host = report.throttled.values().next().expect("throttled");
    let events = host.get("429").copied().unwrap_or(0);
    assert!(events >= 1, "{host:?}");
    // The JSONL logs each slow-down as it happened.
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let throttles: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] == "throttle")
        .collect();
    assert_eq!(throttles.len() as u64, events);
    assert_eq!(throttles[0]["reason"], "429");
    assert!(
        throttles[0]["host"]
            .as_str()
            .unwrap()
            .starts_with("127.0.0.1:")
    );
}

#[tokio::test]
async fn a_host_down_for_a_while_loses_nothing() {
    // robots.txt answers, then every answer is 503 for 1.5 s: far more than the
    // four tries' back-off (0.05 + 0.1 + 0.2 s) would survive if they counted.
    let site = site(400, "outage=30ms+1500ms");
    let report = crawl(&site, Duration::from_millis(50)).await;
    assert_complete(&site, &report);
    let host = report.throttled.values().next().expect("throttled");
    assert!(host.contains_key("robots_unavailable"), "{host:?}");
    assert!(site.stats().requests("/robots.txt") >= 2, "probed again");
}

#[tokio::test]
async fn broken_urls_still_fail_after_their_tries() {
    // /error (a 500) and /hang fail every time while the server is fine: the
    // health probe finds robots.txt answering, so their tries count.
    let site = TestSite::start(SiteConfig {
        pages: 5,
        specials: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let report = crawl(&site, Duration::from_millis(5)).await;
    assert!(report.completed());
    let url = site.url("/error");
    let page = report
        .pages
        .iter()
        .map(Result::unwrap)
        .find(|p| p.url.as_str() == url)
        .unwrap();
    assert_eq!(page.status, Some(500));
    assert_eq!(page.attempts, RetryPolicy::default().max_tries);
}
