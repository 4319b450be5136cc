//! A URL whose Redis lease is lost (its worker died, was killed, or stalled
//! past the lease) comes back with its tries and one loss more, and the crawl
//! quarantines it after `quarantine_after` losses instead of handing it to
//! worker after worker. A worker's death is its frontier dropped without
//! handing the lease back: no completion, no more heartbeats.

use std::sync::Arc;
use std::time::{Duration, Instant};

use skitter::base::outcome::ErrorKind;
use skitter::frontier::{
    Claim, Frontier, Lease, RedisFrontier, RedisOptions, Request, RequestKind,
};
use skitter::host::{HostFeedback, HostPolicy};
use url::Url;

use crate::support::redis_server::RedisServer;

/// Leases so short that a dead worker's expire at once; Redis keeps time, so
/// the test waits on its clock (a few short polls).
fn short() -> RedisOptions {
    RedisOptions {
        policy: HostPolicy {
            max_in_flight: 4,
            delay: Duration::ZERO,
            ..HostPolicy::default()
        },
        lease: Duration::from_millis(30),
        poll: Duration::from_millis(10),
        ..RedisOptions::default()
    }
}

async fn worker(server: &RedisServer, crawl: &str) -> RedisFrontier {
    RedisFrontier::connect(&server.url(), crawl, short())
        .await
        .expect("connect")
}

fn req(url: &str) -> Request {
    Request {
        url: Url::parse(url).unwrap(),
        depth: 0,
        redirects_left: 5,
        parent: None,
        kind: RequestKind::Page,
    }
}

/// Claims until a lease comes (an expired lease is reclaimed by a claim once
/// Redis' clock passes its deadline); fails after ten seconds, not hangs.
async fn take(f: &RedisFrontier) -> Lease {
    let start = Instant::now();
    loop {
        match f.claim().await.unwrap() {
            Claim::Ready(lease) => return lease,
            Claim::Wait(wait) if start.elapsed() < Duration::from_secs(10) => {
                tokio::time::sleep(wait.unwrap_or(Duration::from_millis(10))).await
            }
            other => panic!("no lease: {other:?}"),
        }
    }
}

/// Each worker claims the URL and dies; the next one finds it with its tries
/// kept (a failed try before the first loss) and one failed try and one loss
/// more per death: on main the tries came back reset, `lost` did not exist.
#[tokio::test]
async fn lost_leases_keep_and_add_tries() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let first = worker(&server, "lost").await;
    first.offer(vec![req("http://a.test/kills")]).await.unwrap();
    let lease = take(&first).await;
    assert_eq!((lease.tries, lease.lost), (0, 0));
    // One ordinary failed attempt first: its try must survive the losses.
    first
        .retry(lease, Duration::ZERO, HostFeedback::Failed)
        .await
        .unwrap();
    let lease = take(&first).await;
    assert_eq!((lease.failed_tries(), lease.lost), (1, 0));
    drop((first, lease));
    for lost in 1..=3 {
        let next = worker(&server, "lost").await;
        let lease = take(&next).await;
        assert_eq!(lease.request.url.as_str(), "http://a.test/kills");
        assert_eq!(
            (lease.failed_tries(), lease.lost),
            (1 + lost, lost),
            "after {lost} lost leases"
        );
        drop((next, lease));
    }
    // A retry after losses keeps them too.
    let last = worker(&server, "lost").await;
    let lease = take(&last).await;
    assert_eq!(lease.lost, 4);
    last.retry(lease, Duration::ZERO, HostFeedback::Failed)
        .await
        .unwrap();
    let lease = take(&last).await;
    assert_eq!((lease.failed_tries(), lease.lost), (6, 4));
}

/// A crawl that claims a URL lost three times does not fetch it: it ends as a
/// `quarantined` failure in the report, and Redis lists it for `skitter
/// status`, while the crawl's other URLs are fetched.
#[tokio::test]
async fn a_url_lost_too_often_is_quarantined() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let site = skitter_testsite::TestSite::start(skitter_testsite::SiteConfig {
        pages: 2,
        ..Default::default()
    })
    .unwrap();
    let killer = site.url("/p/1");
    let seed = worker(&server, "quarantine").await;
    seed.offer(vec![req(&killer)]).await.unwrap();
    drop(take(&seed).await);
    drop(seed);
    for _ in 1..3 {
        let next = worker(&server, "quarantine").await;
        drop(take(&next).await);
        drop(next);
    }
    // The crawling worker lives: its leases are long, so only the dead
    // workers' expire.
    let long = RedisOptions {
        lease: Duration::from_secs(30),
        ..short()
    };
    let frontier = Arc::new(
        RedisFrontier::connect(&server.url(), "quarantine", long)
            .await
            .unwrap(),
    );
    let report = skitter::Crawler::builder()
        .root(site.url("/"))
        .frontier(frontier.clone())
        .build()
        .unwrap()
        .run(tokio_util::sync::CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        site.stats().requests("/p/1"),
        0,
        "a quarantined URL is not fetched again"
    );
    assert!(
        site.stats().requests("/") >= 1,
        "the rest of the crawl runs"
    );
    assert_eq!(
        report.counters.fail_by.get(&ErrorKind::Quarantined),
        Some(&1),
        "{:?}",
        report.counters
    );
    let (listed, total) = frontier.quarantined(10).await.unwrap();
    assert_eq!(listed, vec![(killer, 3)]);
    assert_eq!(total, 1);
}

/// What a worker of before lost leases reads stays as it was: the lease
/// record is `host TAB entry` (the tries beside it, under `t<id>`), and an
/// expired lease it wrote (no tries kept) comes back as one loss.
#[tokio::test]
async fn lease_records_stay_readable_by_older_workers() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let client = redis::Client::open(server.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let first = worker(&server, "compat").await;
    first.offer(vec![req("http://a.test/x")]).await.unwrap();
    drop(take(&first).await);
    drop(first);
    let next = worker(&server, "compat").await;
    let lease = take(&next).await;
    assert_eq!(lease.lost, 1);
    let record: String = redis::cmd("HGET")
        .arg("skitter:{compat}:lease")
        .arg(lease.id)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(record, "a.test:80\t0\t5\thttp://a.test/x\t");
    let tries: String = redis::cmd("HGET")
        .arg("skitter:{compat}:lease")
        .arg(format!("t{}", lease.id))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(tries, "1/1");
    // An older worker's lease: a record alone, already expired.
    let _: () = redis::cmd("HSET")
        .arg("skitter:{compat}:lease")
        .arg(9999)
        .arg("b.test:80\t0\t5\thttp://b.test/y\t")
        .query_async(&mut conn)
        .await
        .unwrap();
    let _: () = redis::cmd("ZADD")
        .arg("skitter:{compat}:leases")
        .arg(0)
        .arg(9999)
        .query_async(&mut conn)
        .await
        .unwrap();
    let old = take(&next).await;
    assert_eq!(old.request.url.as_str(), "http://b.test/y");
    assert_eq!((old.failed_tries(), old.lost), (1, 1));
}
