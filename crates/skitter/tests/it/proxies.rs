//! The proxy pool through real proxies on loopback (the test crate's HTTP
//! forward proxy and SOCKS5 server): rotation, benching of dead, slow and
//! refusing proxies, the crawl completing through the good ones, failing
//! cleanly when none is left, and credentials kept out of every output.

use std::time::Duration;

use skitter::base::outcome::{ErrorKind, OutcomeKind};
use skitter::fetch::retry::RetryPolicy;
use skitter::fetch::{FetchConfig, ProxyBench, Rotation};
use skitter::output::{JsonlSink, WarcOptions, WarcSink};
use skitter::{Crawler, CrawlerBuilder, Report};
use skitter_testsite::{ProxyMode, RunningSite, SiteConfig, TestProxy, TestSite, dead_proxy_url};
use tokio_util::sync::CancellationToken;

fn site(pages: usize) -> RunningSite {
    TestSite::start(SiteConfig {
        pages,
        fanout: 4,
        ..SiteConfig::default()
    })
    .unwrap()
}

fn pool_config(proxies: Vec<String>, rotation: Rotation) -> FetchConfig {
    FetchConfig {
        proxy_list: proxies,
        proxy_rotation: rotation,
        // Long enough that a bad proxy is tried once or twice in a test.
        proxy_bench: ProxyBench {
            base: Duration::from_secs(30),
            cap: Duration::from_secs(60),
        },
        total_timeout: Duration::from_millis(500),
        ..FetchConfig::default()
    }
}

fn builder(site: &RunningSite, fetch: FetchConfig) -> CrawlerBuilder {
    Crawler::builder()
        .root(site.url("/"))
        .ignore_robots(true)
        .max_tasks(4)
        .retry_policy(RetryPolicy {
            max_tries: 6,
            base_delay: Duration::from_millis(10),
            ..RetryPolicy::default()
        })
        .fetch_config(fetch)
}

async fn run(b: CrawlerBuilder) -> Report {
    b.build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap()
}

/// Every page of the site fetched exactly once, and recorded as fetched.
fn assert_complete(site: &RunningSite, report: &Report) {
    let stats = site.stats();
    assert!(
        stats.missing_pages().is_empty(),
        "{:?}",
        stats.missing_pages()
    );
    for path in stats.page_paths() {
        assert_eq!(stats.requests(&path), 1, "{path} fetched more than once");
    }
    assert!(report.completed());
    let failed: Vec<_> = report
        .pages
        .iter()
        .map(Result::unwrap)
        .filter(|p| p.kind == OutcomeKind::Failed)
        .collect();
    assert!(failed.is_empty(), "{failed:?}");
}

#[tokio::test]
async fn round_robin_spreads_requests_over_the_good_proxies() {
    let site = site(30);
    let proxies: Vec<TestProxy> = (0..3)
        .map(|_| TestProxy::http(ProxyMode::Good, None).unwrap())
        .collect();
    let urls = proxies.iter().map(TestProxy::url).collect();
    let report = run(builder(&site, pool_config(urls, Rotation::RoundRobin))).await;
    assert_complete(&site, &report);
    let served: Vec<u64> = proxies.iter().map(TestProxy::served).collect();
    let total: u64 = served.iter().sum();
    assert_eq!(total, site.stats().total_requests, "{served:?}");
    // Round-robin: each proxy gets its third, give or take one.
    for n in &served {
        assert!(n.abs_diff(total / 3) <= 1, "{served:?}");
    }
    assert_eq!(report.proxies.len(), 3);
    for (stats, proxy) in report.proxies.iter().zip(&proxies) {
        assert_eq!(stats.proxy, proxy.url());
        assert_eq!(stats.successes, proxy.served());
        assert_eq!((stats.failures, stats.benchings), (0, 0));
    }
    let page = report
        .pages
        .iter()
        .map(Result::unwrap)
        .find(|p| p.url.path() == "/p/0")
        .unwrap();
    assert!(
        proxies
            .iter()
            .any(|p| page.proxy.as_deref() == Some(p.url().as_str()))
    );
}

#[tokio::test]
async fn sticky_keeps_a_host_on_one_proxy() {
    let site = site(20);
    let proxies: Vec<TestProxy> = (0..4)
        .map(|_| TestProxy::http(ProxyMode::Good, None).unwrap())
        .collect();
    let urls = proxies.iter().map(TestProxy::url).collect();
    let report = run(builder(&site, pool_config(urls, Rotation::Sticky))).await;
    assert_complete(&site, &report);
    let served: Vec<u64> = proxies.iter().map(TestProxy::served).collect();
    assert_eq!(served.iter().filter(|n| **n > 0).count(), 1, "{served:?}");
    let shown: std::collections::HashSet<_> = report
        .pages
        .iter()
        .map(Result::unwrap)
        .map(|p| p.proxy)
        .collect();
    assert_eq!(shown.len(), 1, "{shown:?}");
}

#[tokio::test]
async fn dead_slow_and_407_proxies_are_benched_and_the_crawl_completes() {
    let site = site(40);
    let good = TestProxy::http(ProxyMode::Good, None).unwrap();
    let slow = TestProxy::http(ProxyMode::Slow(Duration::from_secs(30)), None).unwrap();
    let auth = TestProxy::http(ProxyMode::Good, Some(("user", "right"))).unwrap();
    let refusing = TestProxy::http(ProxyMode::Refuse, None).unwrap();
    let dead = dead_proxy_url().unwrap();
    let wrong_creds = format!("http://user:WRONGPASS@{}", auth.addr());
    let list = vec![
        dead.clone(),
        good.url(),
        slow.url(),
        wrong_creds,
        refusing.url(),
    ];
    let report = run(builder(&site, pool_config(list, Rotation::RoundRobin))).await;
    assert_complete(&site, &report);
    assert_eq!(good.served(), site.stats().total_requests);
    let by_proxy = |needle: &str| {
        report
            .proxies
            .iter()
            .find(|s| s.proxy.ends_with(needle))
            .unwrap_or_else(|| panic!("{needle} not in {:?}", report.proxies))
            .clone()
    };
    for bad in [
        dead.trim_start_matches("http://").to_string(),
        slow.addr().to_string(),
        auth.addr().to_string(),
        refusing.addr().to_string(),
    ] {
        let s = by_proxy(&bad);
        assert_eq!(s.successes, 0, "{s:?}");
        assert!(s.failures >= 1 && s.benchings == 1, "{s:?}");
    }
    // A proxy failure is no failure of the site's.
    assert!(report.throttled.is_empty(), "{:?}", report.throttled);
    let text = report.to_text() + &report.to_json().to_string();
    assert!(!text.contains("WRONGPASS"), "{text}");
}

#[tokio::test]
async fn every_proxy_dead_fails_the_urls_with_error_proxy() {
    let site = site(5);
    let list = vec![dead_proxy_url().unwrap(), dead_proxy_url().unwrap()];
    let mut fetch = pool_config(list, Rotation::RoundRobin);
    fetch.proxy_bench = ProxyBench {
        base: Duration::from_millis(20),
        cap: Duration::from_millis(100),
    };
    let tries = RetryPolicy {
        max_tries: 3,
        base_delay: Duration::from_millis(10),
        ..RetryPolicy::default()
    };
    let report = run(builder(&site, fetch).retry_policy(tries)).await;
    assert!(report.completed());
    assert_eq!(report.pages.len(), 1, "{:?}", report.pages);
    let root = &report.pages.to_vec().unwrap()[0];
    assert_eq!(root.kind, OutcomeKind::Failed);
    let error = root.error.as_ref().unwrap();
    assert_eq!(error.kind, ErrorKind::Proxy, "{error:?}");
    assert_eq!(root.attempts, 3);
    assert!(
        report.to_text().contains(" error proxy: "),
        "{}",
        report.to_text()
    );
    assert_eq!(site.stats().total_requests, 0);
}

#[tokio::test]
async fn socks5_with_credentials_works_and_no_output_shows_them() {
    let site = site(10);
    let socks = TestProxy::socks5(ProxyMode::Good, Some(("suser", "S0CKSPASS"))).unwrap();
    let http = TestProxy::http(ProxyMode::Good, Some(("huser", "HTTPPASS"))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (jsonl, warc) = (dir.path().join("out.jsonl"), dir.path().join("out.warc"));
    let b = builder(
        &site,
        pool_config(vec![socks.url(), http.url()], Rotation::RoundRobin),
    )
    .sink(Box::new(JsonlSink::create(&jsonl).unwrap()))
    .sink(Box::new(
        WarcSink::create(
            &warc,
            WarcOptions {
                gzip: Some(false),
                ..WarcOptions::default()
            },
        )
        .unwrap(),
    ));
    let report = run(b).await;
    assert_complete(&site, &report);
    // (A SOCKS server counts tunnels, which carry several requests each.)
    assert!(socks.served() > 0 && http.served() > 0);
    let lines = std::fs::read_to_string(&jsonl).unwrap();
    let shown = format!("\"proxy\":\"socks5://{}\"", socks.addr());
    assert!(lines.contains(&shown), "{lines}");
    let everything = [
        lines,
        String::from_utf8_lossy(&std::fs::read(&warc).unwrap()).into_owned(),
        report.to_text(),
        report.to_json().to_string(),
        format!(
            "{:?}",
            pool_config(vec![socks.url(), http.url()], Rotation::Sticky)
        ),
    ];
    for text in everything {
        for secret in ["S0CKSPASS", "HTTPPASS", "suser", "huser"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(!text.to_ascii_lowercase().contains("proxy-authorization"));
    }
}
