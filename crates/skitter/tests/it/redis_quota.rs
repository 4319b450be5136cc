//! `max_per_host` in a shared crawl holds for all workers together: each
//! worker takes a URL's unit from one counter per host in Redis, atomically,
//! before the URL's first request. Two frontier handles on one Redis stand
//! for two worker processes.

use std::sync::Arc;

use skitter::frontier::{Frontier, RedisFrontier, RedisOptions};
use skitter::host::{HostKey, HostPolicy};
use skitter::settings::Limits;
use url::Url;

use crate::support::redis_server::RedisServer;

fn options() -> RedisOptions {
    RedisOptions {
        policy: HostPolicy {
            max_in_flight: 4,
            ..HostPolicy::default()
        },
        poll: std::time::Duration::from_millis(10),
        ..RedisOptions::default()
    }
}

async fn worker(server: &RedisServer, crawl: &str) -> Arc<RedisFrontier> {
    Arc::new(
        RedisFrontier::connect(&server.url(), crawl, options())
            .await
            .expect("connect"),
    )
}

/// Two workers asking at once get exactly the quota between them, per host.
#[tokio::test]
async fn the_quota_is_shared_by_all_workers() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let a = worker(&server, "quota").await;
    let b = worker(&server, "quota").await;
    let host = HostKey::of(&Url::parse("http://a.test/").unwrap());
    let other = HostKey::of(&Url::parse("http://b.test/").unwrap());
    let asks = (0..10).map(|i| {
        let f = if i % 2 == 0 { a.clone() } else { b.clone() };
        let host = host.clone();
        async move { f.take_host_quota(&host, 4).await.unwrap() }
    });
    let taken = futures_util::future::join_all(asks).await;
    assert_eq!(taken.iter().filter(|t| **t == Some(true)).count(), 4);
    assert_eq!(taken.iter().filter(|t| **t == Some(false)).count(), 6);
    assert_eq!(b.take_host_quota(&other, 4).await.unwrap(), Some(true));
    // A worker that joins later (or restarts) counts on from there.
    let c = worker(&server, "quota").await;
    assert_eq!(c.take_host_quota(&host, 4).await.unwrap(), Some(false));
}

/// Two crawlers on one shared crawl of a 30-page site with a quota of 5 per
/// host: the site sees 5 page requests in all, not 5 per worker (before the
/// shared count it saw 8 to 10, as each worker counted its own).
#[tokio::test]
async fn two_crawling_workers_keep_one_quota() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let site = skitter_testsite::TestSite::start(skitter_testsite::SiteConfig {
        pages: 30,
        // Slow enough that both workers have pages in flight at once.
        latency: std::time::Duration::from_millis(100),
        ..Default::default()
    })
    .unwrap();
    let run = |frontier: Arc<RedisFrontier>| {
        skitter::Crawler::builder()
            .root(site.url("/"))
            .frontier(frontier)
            .limits(Limits {
                max_per_host: Some(5),
                ..Limits::default()
            })
            .build()
            .unwrap()
            .run(tokio_util::sync::CancellationToken::new())
    };
    let a = worker(&server, "crawl-quota").await;
    let b = worker(&server, "crawl-quota").await;
    let (ra, rb) = tokio::join!(run(a), run(b));
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    let stats = site.stats();
    let pages: u64 = stats
        .paths()
        .iter()
        .filter(|(path, _)| path.as_str() != "/robots.txt")
        .map(|(_, n)| n)
        .sum();
    assert_eq!(pages, 5, "{:?}", stats.paths());
    let fetched = |r: &skitter::Report| r.counters.html + r.counters.other;
    assert_eq!(fetched(&ra) + fetched(&rb), 5);
}
