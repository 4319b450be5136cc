//! The Redis frontier against data in the crawl's keys that skitter did not
//! write: each malformed value is dropped (and reported) where it is met, and the
//! crawl goes on with the rest, instead of every claim failing on it.

use std::time::Duration;

use skitter::frontier::{Claim, Frontier, RedisFrontier, RedisOptions, Request, RequestKind};
use skitter::host::{HostFeedback, HostKey, HostPolicy};
use url::Url;

use crate::support::redis_server::RedisServer;

fn req(url: &str) -> Request {
    Request {
        url: Url::parse(url).unwrap(),
        depth: 1,
        redirects_left: 5,
        parent: None,
        kind: RequestKind::Page,
    }
}

async fn worker(server: &RedisServer, crawl: &str) -> RedisFrontier {
    let options = RedisOptions {
        policy: HostPolicy {
            max_in_flight: 8,
            ..HostPolicy::default()
        },
        ..RedisOptions::default()
    };
    RedisFrontier::connect(&server.url(), crawl, options)
        .await
        .expect("connect")
}

/// Runs one Redis command on the server.
async fn raw(server: &RedisServer, args: &[&str]) {
    let client = redis::Client::open(server.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    let _: redis::Value = cmd.query_async(&mut conn).await.unwrap();
}

/// Claims every URL there is, completing each; the URLs claimed.
async fn drain(f: &RedisFrontier) -> Vec<String> {
    let mut urls = Vec::new();
    for _ in 0..100 {
        match f
            .claim()
            .await
            .expect("claims never fail on malformed data")
        {
            Claim::Ready(lease) => {
                urls.push(lease.request.url.to_string());
                f.complete(lease, HostFeedback::Clean).await.unwrap();
            }
            Claim::Wait(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            Claim::Exhausted => break,
        }
    }
    urls.sort();
    urls
}

#[tokio::test]
async fn an_expired_lease_without_its_separator_is_dropped() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let f = worker(&server, "garbled").await;
    f.offer(vec![req("http://a.test/1"), req("http://a.test/2")])
        .await
        .unwrap();
    // A lease record with no tab, already expired: every claim reclaims it first.
    raw(
        &server,
        &["HSET", "skitter:{garbled}:lease", "9999", "no separator"],
    )
    .await;
    raw(&server, &["ZADD", "skitter:{garbled}:leases", "0", "9999"]).await;
    assert_eq!(drain(&f).await, ["http://a.test/1", "http://a.test/2"]);
}

#[tokio::test]
async fn a_retry_entry_without_its_separator_is_dropped() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let f = worker(&server, "retries").await;
    let url = req("http://a.test/1");
    f.offer(vec![url.clone()]).await.unwrap();
    let host = HostKey::of(&url.url);
    let retries = format!("skitter:{{retries}}:r:{}", host.as_str());
    raw(&server, &["ZADD", &retries, "0", "garbage"]).await;
    assert_eq!(drain(&f).await, ["http://a.test/1"]);
}

#[tokio::test]
async fn a_lease_garbled_while_out_does_not_fail_its_completion() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let f = worker(&server, "out").await;
    f.offer(vec![req("http://a.test/1"), req("http://b.test/1")])
        .await
        .unwrap();
    let Claim::Ready(lease) = f.claim().await.unwrap() else {
        panic!("a lease");
    };
    let id = lease.id.to_string();
    raw(&server, &["HSET", "skitter:{out}:lease", &id, "garbled"]).await;
    f.complete(lease, HostFeedback::Clean)
        .await
        .expect("completing a garbled lease is no error");
    assert_eq!(drain(&f).await.len(), 1);
}

/// A counter that is not an integer is refused with its key and field named,
/// before the script writes anything: the offer changes nothing, and repairing
/// the counter lets the crawl go on.
#[tokio::test]
async fn a_garbled_counter_is_refused_with_its_key_named() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let f = worker(&server, "count").await;
    f.offer(vec![req("http://a.test/1")]).await.unwrap();
    raw(
        &server,
        &["HSET", "skitter:{count}:count", "queued", "lots"],
    )
    .await;
    let err = f
        .offer(vec![req("http://a.test/2")])
        .await
        .expect_err("a garbled counter is refused")
        .to_string();
    assert!(
        err.contains("skitter:{count}:count") && err.contains("queued") && err.contains("lots"),
        "{err}"
    );
    let err = f.claim().await.expect_err("claims too").to_string();
    assert!(err.contains("queued"), "{err}");
    // Nothing was written by the refused offer: /2 is still new once repaired.
    raw(&server, &["HSET", "skitter:{count}:count", "queued", "1"]).await;
    f.offer(vec![req("http://a.test/2")]).await.unwrap();
    assert_eq!(drain(&f).await, ["http://a.test/1", "http://a.test/2"]);
}

/// A crawl total that is not an integer: reading the totals leaves it out,
/// adding to it is refused with the key and field named.
#[tokio::test]
async fn a_garbled_total_is_named() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let f = worker(&server, "totals").await;
    let counts = std::collections::BTreeMap::from([("html".to_string(), 2u64)]);
    f.add_stats(&counts).await.unwrap();
    raw(
        &server,
        &["HSET", "skitter:{totals}:stats", "failed", "many"],
    )
    .await;
    let totals = f.stats().await.expect("the others are still read");
    assert_eq!(totals.get("html"), Some(&2));
    assert!(!totals.contains_key("failed"));
    let more = std::collections::BTreeMap::from([("failed".to_string(), 1u64)]);
    let err = f.add_stats(&more).await.unwrap_err().to_string();
    assert!(
        err.contains("skitter:{totals}:stats") && err.contains("failed") && err.contains("many"),
        "{err}"
    );
}
