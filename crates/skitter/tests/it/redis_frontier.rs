//! The Redis frontier against a real `redis-server`: two frontier instances
//! stand for two worker processes sharing one crawl.

use std::time::{Duration, Instant};

use skitter::frontier::{
    Claim, Frontier, FrontierError, Lease, RedisFrontier, RedisOptions, Request, RequestKind,
};
use skitter::host::{HostFeedback, HostKey, HostPolicy};
use url::Url;

use crate::support::frontier_contract::{self as contract, take};
use crate::support::redis_server::RedisServer;

fn req(url: &str) -> Request {
    Request {
        url: Url::parse(url).unwrap(),
        depth: 1,
        redirects_left: 5,
        parent: Some(Url::parse("http://root.test/").unwrap()),
        kind: RequestKind::Page,
    }
}

fn options(max_in_flight: usize, delay: Duration) -> RedisOptions {
    RedisOptions {
        policy: HostPolicy {
            max_in_flight,
            delay,
            ..HostPolicy::default()
        },
        ..RedisOptions::default()
    }
}

async fn worker(server: &RedisServer, crawl: &str, options: RedisOptions) -> RedisFrontier {
    RedisFrontier::connect(&server.url(), crawl, options)
        .await
        .expect("connect")
}

fn assert_wait(claim: Claim) {
    assert!(
        matches!(claim, Claim::Wait(Some(_))),
        "expected a wait, got {claim:?}"
    );
}

/// Claims until a lease comes, for cases that wait on Redis' clock (lease
/// expiry); gives up after `limit` so a bug fails instead of hanging.
async fn take_within(f: &RedisFrontier, limit: Duration) -> Lease {
    let start = Instant::now();
    loop {
        match f.claim().await.unwrap() {
            Claim::Ready(lease) => return lease,
            Claim::Wait(wait) if start.elapsed() < limit => {
                tokio::time::sleep(wait.unwrap_or(Duration::from_millis(50))).await
            }
            other => panic!("no lease within {limit:?}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn dedups_across_workers() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let a = worker(&server, "dedup", options(8, Duration::ZERO)).await;
    let b = worker(&server, "dedup", options(8, Duration::ZERO)).await;
    let new_a = a
        .offer(vec![req("http://a.test/1"), req("http://a.test/2")])
        .await
        .unwrap();
    let new_b = b
        .offer(vec![
            req("http://a.test/2"),
            req("http://a.test/3"),
            req("http://a.test/3"),
        ])
        .await
        .unwrap();
    assert_eq!((new_a, new_b), (2, 1));
    let counts = b.counts().await.unwrap();
    assert_eq!((counts.seen, counts.queued, counts.leased), (3, 3, 0));
    let lease = take(&b).await;
    assert_eq!(
        lease.request,
        req("http://a.test/1"),
        "FIFO per host, fields intact"
    );
    assert_eq!(a.counts().await.unwrap().leased, 1);
}

#[tokio::test]
async fn per_host_cap_holds_across_workers() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let a = worker(&server, "cap", options(1, Duration::ZERO)).await;
    let b = worker(&server, "cap", options(1, Duration::ZERO)).await;
    a.offer(vec![req("http://a.test/1"), req("http://a.test/2")])
        .await
        .unwrap();
    let first = take(&a).await;
    assert_wait(b.claim().await.unwrap());
    b.offer(vec![req("http://b.test/1")]).await.unwrap();
    assert_eq!(
        take(&b).await.request.url.as_str(),
        "http://b.test/1",
        "another host is not held up"
    );
    a.complete(first, HostFeedback::default()).await.unwrap();
    assert_eq!(take(&b).await.request.url.as_str(), "http://a.test/2");
}

#[tokio::test]
async fn delays_and_back_off_hold_across_workers() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let minute = Duration::from_secs(60);
    let a = worker(&server, "delay", options(4, minute)).await;
    let b = worker(&server, "delay", options(4, minute)).await;
    a.offer(vec![req("http://a.test/1"), req("http://a.test/2")])
        .await
        .unwrap();
    // Each first lease is answered, so its host has a slot free (past its
    // first request in slow start) and only the delay holds it.
    let first = take(&a).await;
    a.complete(first, HostFeedback::Clean).await.unwrap();
    assert_wait(b.claim().await.unwrap());

    // Crawl-delay set by one worker binds the other.
    let c = worker(&server, "crawl-delay", options(4, Duration::ZERO)).await;
    let d = worker(&server, "crawl-delay", options(4, Duration::ZERO)).await;
    let host = HostKey::of(&Url::parse("http://c.test/").unwrap());
    c.set_host_delay(&host, minute).await.unwrap();
    d.offer(vec![req("http://c.test/1"), req("http://c.test/2")])
        .await
        .unwrap();
    let first = take(&d).await;
    d.complete(first, HostFeedback::Clean).await.unwrap();
    assert_wait(c.claim().await.unwrap());

    // A back-off reported by one worker stops the other from starting more.
    d.offer(vec![
        req("http://e.test/1"),
        req("http://e.test/2"),
        req("http://e.test/3"),
    ])
    .await
    .unwrap();
    let e1 = take(&c).await;
    assert_eq!(e1.request.url.host_str(), Some("e.test"));
    let slow_down = HostFeedback::SlowDown(minute, skitter::host::ThrottleReason::RetryAfter);
    c.complete(e1, slow_down).await.unwrap();
    assert_wait(d.claim().await.unwrap());
}

#[tokio::test]
async fn expired_leases_are_reclaimed_by_other_workers() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let short = RedisOptions {
        lease: Duration::from_millis(300),
        ..options(1, Duration::ZERO)
    };
    let a = worker(&server, "reclaim", short).await;
    let b = worker(&server, "reclaim", short).await;
    a.offer(vec![req("http://a.test/1")]).await.unwrap();
    let lost = take(&a).await;
    drop(a); // The worker dies: no completion, no more heartbeats.
    assert_wait(b.claim().await.unwrap());
    let again = take_within(&b, Duration::from_secs(10)).await;
    assert_eq!(again.request, lost.request);
    b.complete(again, HostFeedback::default()).await.unwrap();
    assert!(matches!(b.claim().await.unwrap(), Claim::Exhausted));
    assert_eq!(
        b.claimed().await.unwrap(),
        2,
        "the reclaimed URL counts again"
    );
}

#[tokio::test]
async fn heartbeat_keeps_long_fetches_leased() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let short = RedisOptions {
        lease: Duration::from_millis(900),
        ..options(1, Duration::ZERO)
    };
    let a = worker(&server, "heartbeat", short).await;
    let b = worker(&server, "heartbeat", short).await;
    a.offer(vec![req("http://a.test/1")]).await.unwrap();
    let lease = take(&a).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_wait(b.claim().await.unwrap());
    a.complete(lease, HostFeedback::default()).await.unwrap();
    assert!(matches!(b.claim().await.unwrap(), Claim::Exhausted));
}

#[tokio::test]
async fn exhausted_only_when_queue_empty_and_no_lease_out() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let a = worker(&server, "end", options(8, Duration::ZERO)).await;
    let b = worker(&server, "end", options(8, Duration::ZERO)).await;
    assert!(
        matches!(b.claim().await.unwrap(), Claim::Exhausted),
        "a new crawl is empty"
    );
    a.offer(vec![req("http://a.test/1")]).await.unwrap();
    let lease = take(&a).await;
    assert_wait(b.claim().await.unwrap());
    a.complete(lease, HostFeedback::default()).await.unwrap();
    assert!(matches!(b.claim().await.unwrap(), Claim::Exhausted));
    assert!(matches!(a.claim().await.unwrap(), Claim::Exhausted));
}

#[tokio::test]
async fn leases_are_checked_on_completion() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let a = worker(&server, "leases", options(8, Duration::ZERO)).await;
    let bogus = Lease {
        id: 4242,
        request: req("http://a.test/"),
        tries: 0,
        lost: 0,
    };
    assert!(matches!(
        a.complete(bogus, HostFeedback::default()).await,
        Err(FrontierError::UnknownLease(4242))
    ));
}

#[tokio::test]
async fn counters_stats_and_meta_are_shared() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let a = worker(&server, "shared", options(8, Duration::ZERO)).await;
    let b = worker(&server, "shared", options(8, Duration::ZERO)).await;
    a.put_meta("roots", "[\"http://a.test/\"]").await.unwrap();
    assert_eq!(
        b.get_meta("roots").await.unwrap().as_deref(),
        Some("[\"http://a.test/\"]")
    );
    assert_eq!(b.get_meta("missing").await.unwrap(), None);
    a.incr_stat("pages", 3).await.unwrap();
    assert_eq!(b.incr_stat("pages", 2).await.unwrap(), 5);
    b.incr_stat("bytes", 100).await.unwrap();
    let stats = a.stats().await.unwrap();
    assert_eq!(
        stats.into_iter().collect::<Vec<_>>(),
        [("bytes".into(), 100), ("pages".into(), 5)]
    );
    a.offer(vec![req("http://a.test/1"), req("http://b.test/1")])
        .await
        .unwrap();
    take(&a).await;
    take(&b).await;
    assert_eq!(a.claimed().await.unwrap(), 2);
    assert_eq!(
        a.mark_seen(&[
            Url::parse("http://a.test/1").unwrap(),
            Url::parse("http://a.test/9").unwrap()
        ])
        .await
        .unwrap(),
        1
    );
    assert_eq!(
        b.offer(vec![req("http://a.test/9")]).await.unwrap(),
        0,
        "marked seen, never queued"
    );
}

#[tokio::test]
async fn clean_removes_every_key_of_the_crawl_only() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let a = worker(&server, "doomed", options(8, Duration::ZERO)).await;
    let keep = worker(&server, "kept", options(8, Duration::ZERO)).await;
    a.offer(vec![req("http://a.test/1"), req("http://a.test/2")])
        .await
        .unwrap();
    take(&a).await;
    a.set_host_delay(
        &HostKey::of(&Url::parse("http://z.test/").unwrap()),
        Duration::from_secs(1),
    )
    .await
    .unwrap();
    a.incr_stat("pages", 1).await.unwrap();
    a.put_meta("roots", "x").await.unwrap();
    keep.offer(vec![req("http://a.test/1")]).await.unwrap();
    let removed = RedisFrontier::clean(&server.url(), "doomed").await.unwrap();
    assert!(removed >= 8, "removed {removed}");
    let client = redis::Client::open(server.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let left: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(
        left.iter().all(|k| k.starts_with("skitter:{kept}:")),
        "{left:?}"
    );
    assert!(!left.is_empty());
    assert_eq!(keep.counts().await.unwrap().queued, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn survives_a_redis_restart() {
    let Some(mut server) = RedisServer::start(true) else {
        return;
    };
    let a = worker(&server, "restart", options(8, Duration::ZERO)).await;
    a.offer(vec![req("http://a.test/1"), req("http://a.test/2")])
        .await
        .unwrap();
    let first = take(&a).await;
    server.restart();
    a.complete(first, HostFeedback::default()).await.unwrap();

    // An operation issued while Redis is down waits for it and then succeeds.
    server.stop();
    let offer = a.offer(vec![req("http://a.test/3"), req("http://a.test/1")]);
    let restart = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        server.restart();
    };
    let (offered, ()) = tokio::join!(offer, restart);
    assert_eq!(offered.unwrap(), 1);
    let counts = a.counts().await.unwrap();
    assert_eq!((counts.seen, counts.queued, counts.leased), (3, 2, 0));
    assert_eq!(take(&a).await.request.url.as_str(), "http://a.test/2");
}

/// `redis-cli -u URL ARGS…`; its standard output.
fn redis_cli(server: &RedisServer, args: &[&str]) -> String {
    let out = std::process::Command::new("redis-cli")
        .arg("-u")
        .arg(server.url())
        .args(args)
        .output()
        .expect("run redis-cli");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Gives a one-node cluster every slot and waits until it says it is up.
async fn serve_every_slot(server: &RedisServer) {
    redis_cli(server, &["cluster", "addslotsrange", "0", "16383"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !redis_cli(server, &["cluster", "info"]).contains("cluster_state:ok") {
        assert!(
            Instant::now() < deadline,
            "the one-node cluster never came up"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A cluster master that has not rejoined yet (a restarted one, say) refuses
/// keyed commands with CLUSTERDOWN; inside a MULTI that makes the whole
/// transaction EXECABORT. That is an outage to wait out like a lost
/// connection, not an error that ends the crawl.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_refused_while_the_cluster_is_down_is_retried() {
    let Some(server) = RedisServer::start_with(false, &["--cluster-enabled", "yes"]) else {
        return;
    };
    serve_every_slot(&server).await;
    let a = worker(&server, "down", options(8, Duration::ZERO)).await;
    let one = std::collections::BTreeMap::from([("pages".to_string(), 1)]);
    a.add_stats(&one).await.unwrap();

    redis_cli(&server, &["cluster", "delslotsrange", "0", "16383"]);
    let refused = redis_cli(&server, &["hincrby", "skitter:{down}:stats", "pages", "1"]);
    assert!(refused.contains("CLUSTERDOWN"), "{refused}");
    let waiting = tokio::spawn(async move {
        a.add_stats(&one).await?;
        a.counts().await?;
        Ok::<_, FrontierError>(a)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !waiting.is_finished(),
        "gave up while the cluster was down: {:?}",
        waiting.await.unwrap().map(|_| ())
    );
    serve_every_slot(&server).await;
    let a = waiting
        .await
        .unwrap()
        .expect("carried on once the cluster was up");
    assert_eq!(a.stats().await.unwrap()["pages"], 2);
}

#[tokio::test]
async fn a_long_outage_becomes_an_error() {
    let Some(mut server) = RedisServer::start(false) else {
        return;
    };
    let brief = RedisOptions {
        max_outage: Duration::from_millis(300),
        ..options(8, Duration::ZERO)
    };
    let a = worker(&server, "outage", brief).await;
    server.stop();
    assert!(matches!(a.claim().await, Err(FrontierError::Redis { .. })));
}

#[tokio::test]
async fn bad_names_and_urls_are_errors() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let opts = RedisOptions::default();
    for crawl in ["", "a{b}c"] {
        let got = RedisFrontier::connect(&server.url(), crawl, opts).await;
        assert!(
            matches!(got, Err(FrontierError::Setting(_))),
            "crawl {crawl:?}"
        );
    }
    let got = RedisFrontier::connect("not a url", "x", opts).await;
    assert!(matches!(got, Err(FrontierError::Redis { .. })));
}

#[tokio::test]
async fn workers_share_robots_txt() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let site = skitter_testsite::TestSite::start(skitter_testsite::SiteConfig {
        pages: 3,
        robots_txt: Some((200, "User-agent: *\nDisallow: /p/1\n".into())),
        ..Default::default()
    })
    .unwrap();
    let run = |frontier: std::sync::Arc<RedisFrontier>| {
        skitter::Crawler::builder()
            .root(site.url("/"))
            .frontier(frontier.clone())
            .robots_store(frontier)
            .build()
            .unwrap()
            .run(tokio_util::sync::CancellationToken::new())
    };
    // Two crawls of the same shared crawl, one after the other: the second finds
    // the first's robots.txt in Redis and never asks the site.
    let a = std::sync::Arc::new(worker(&server, "robots", options(4, Duration::ZERO)).await);
    let first = run(a).await.unwrap();
    let b = std::sync::Arc::new(worker(&server, "robots", options(4, Duration::ZERO)).await);
    b.offer(vec![req(&site.url("/p/1")), req(&site.url("/p/2"))])
        .await
        .unwrap();
    run(b).await.unwrap();
    assert_eq!(site.stats().requests("/robots.txt"), 1);
    assert_eq!(
        site.stats().requests("/p/1"),
        0,
        "the shared rules still apply"
    );
    assert!(first.completed());
}

/// The shared contract (support/frontier_contract.rs), on Redis.
#[tokio::test]
async fn retry_waits_alone() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let f = worker(&server, "retry_waits_alone", options(100, Duration::ZERO)).await;
    contract::retry_waits_alone(&f).await;
}

/// The shared contract (support/frontier_contract.rs), on Redis.
#[tokio::test]
async fn retry_comes_back_with_its_tries() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let f = worker(
        &server,
        "retry_comes_back_with_its_tries",
        options(100, Duration::ZERO),
    )
    .await;
    contract::retry_comes_back_with_its_tries(&f).await;
}

/// The shared contract (support/frontier_contract.rs), on Redis.
#[tokio::test]
async fn slow_down_pauses_only_its_host() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let f = worker(
        &server,
        "slow_down_pauses_only_its_host",
        options(100, Duration::ZERO),
    )
    .await;
    contract::slow_down_pauses_only_its_host(&f).await;
}

/// The shared contract (support/frontier_contract.rs), on Redis.
#[tokio::test]
async fn new_host_starts_with_the_initial_window() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let f = worker(
        &server,
        "new_host_starts_with_the_initial_window",
        options(16, Duration::ZERO),
    )
    .await;
    contract::new_host_starts_with_the_initial_window(&f).await;
}

#[tokio::test]
async fn a_delay_set_live_spaces_this_workers_next_claims() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let f = worker(&server, "live-delay", options(8, Duration::ZERO)).await;
    let urls = ["http://a.test/1", "http://a.test/2", "http://a.test/3"];
    f.offer(urls.iter().map(|u| req(u)).collect())
        .await
        .unwrap();
    // No delay: one start after the other.
    for _ in 0..2 {
        let lease = take(&f).await;
        f.complete(lease, HostFeedback::Clean).await.unwrap();
    }
    let live = f
        .politeness()
        .expect("the Redis frontier's rules change live");
    live.set(HostPolicy {
        delay: Duration::from_secs(3600),
        ..live.get()
    });
    // The claim after the change starts at once (the last start owed no
    // gap) and sets the new one: the host waits an hour for the next.
    let third = take(&f).await;
    f.complete(third, HostFeedback::Clean).await.unwrap();
    f.offer(vec![req("http://a.test/4")]).await.unwrap();
    assert_wait(f.claim().await.unwrap());
}
