//! What a queued URL is outlives the process that queued it: a child sitemap
//! an index listed is read as a sitemap by a resumed run (`--state`) and by
//! another worker of a shared Redis crawl, not fetched as a page.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use skitter::crawl::config::Limits;
use skitter::fetch::retry::RetryPolicy;
use skitter::frontier::{DiskFrontier, DiskOptions, Frontier, RedisFrontier, RedisOptions};
use skitter::host::HostPolicy;
use skitter::parse::discovery::MAX_INDEX_DEPTH;
use skitter::state::store::CrawlMeta;
use skitter::{Crawler, Report};
use skitter_testsite::{RunningSite, SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

use crate::support::redis_server::RedisServer;

/// One page and robots.txt naming `/hostile/sitemapindex/0`, an index that
/// lists index 1, which lists index 2, and so on.
fn chain_site() -> RunningSite {
    TestSite::start(SiteConfig {
        pages: 1,
        robots_txt: Some((
            200,
            "User-agent: *\nAllow: /\nSitemap: /hostile/sitemapindex/0\n".into(),
        )),
        ..SiteConfig::default()
    })
    .unwrap()
}

/// One fetch at a time, so the order is the frontier's: `/`, then index 0
/// (queued when robots.txt is read before `/`), then index 1.
fn one_at_a_time() -> HostPolicy {
    HostPolicy {
        max_in_flight: 1,
        ..HostPolicy::default()
    }
}

/// Crawls `site` from `/` through `frontier`, fetching at most `max_pages`.
async fn run(site: &RunningSite, frontier: Arc<dyn Frontier>, max_pages: Option<u64>) -> Report {
    let crawl = Crawler::builder()
        .root(site.url("/"))
        .frontier(frontier)
        .max_tasks(1)
        .limits(Limits {
            max_pages,
            ..Limits::default()
        })
        .retry_policy(RetryPolicy {
            max_tries: 1,
            ..Default::default()
        })
        .build()
        .expect("valid config")
        .run(CancellationToken::new());
    tokio::time::timeout(Duration::from_secs(120), crawl)
        .await
        .expect("the crawl ended")
        .expect("crawl runs")
}

/// How many indexes of the chain were fetched, and that the first run stopped
/// with index 1 queued but not fetched.
fn indexes_fetched(site: &RunningSite) -> usize {
    let stats = site.stats();
    (0..10)
        .filter(|i| stats.requests(&format!("/hostile/sitemapindex/{i}")) > 0)
        .count()
}

#[tokio::test]
async fn a_resumed_run_reads_the_child_sitemaps_an_index_queued() {
    let site = chain_site();
    let dir = tempfile::tempdir().unwrap();
    let meta = CrawlMeta {
        roots: vec![site.url("/")],
        scope: "same-host".into(),
        settings: BTreeMap::new(),
    };
    let open = || -> Arc<dyn Frontier> {
        let options = DiskOptions {
            policy: one_at_a_time(),
            durable: false,
            ..DiskOptions::default()
        };
        Arc::new(DiskFrontier::open(dir.path(), &meta, options).expect("state opens"))
    };
    // `/` and index 0: index 1 is queued, not fetched.
    let first = run(&site, open(), Some(2)).await;
    assert!(first.todo > 0, "the first run stops with work queued");
    assert_eq!(indexes_fetched(&site), 1);
    let second = run(&site, open(), None).await;
    assert!(second.completed());
    // Index 1 was read as a sitemap (so index 2 was fetched), and with the
    // nesting it was queued at, so the chain still stops at the limit.
    assert_eq!(indexes_fetched(&site), MAX_INDEX_DEPTH as usize + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_redis_worker_reads_the_child_sitemaps_an_index_queued() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let site = chain_site();
    let connect = || async {
        let options = RedisOptions {
            policy: one_at_a_time(),
            ..RedisOptions::default()
        };
        let worker = RedisFrontier::connect(&server.url(), "sitemaps", options)
            .await
            .expect("connect");
        Arc::new(worker) as Arc<dyn Frontier>
    };
    // Worker A reads index 0 and stops; worker B, which never saw it, takes
    // index 1 from the shared queue.
    run(&site, connect().await, Some(2)).await;
    assert_eq!(indexes_fetched(&site), 1);
    let b = run(&site, connect().await, None).await;
    assert!(b.completed());
    assert_eq!(indexes_fetched(&site), MAX_INDEX_DEPTH as usize + 1);
}
