//! The sharded Redis frontier: a crawl split into shards by host, on one
//! `redis-server` and on a real three-master Redis Cluster. Dedup, claims
//! across shards, the crawl-wide end test, the crawl-wide claim limit, lease
//! reclaim from any shard, and keys spread over every master.

use std::collections::BTreeSet;
use std::time::Duration;

use skitter::frontier::{Claim, Frontier, RedisFrontier, RedisOptions};
use skitter::host::{HostFeedback, HostPolicy};

use crate::support::frontier_contract::{self as contract, req};
use crate::support::redis_cluster::{MASTERS, RedisCluster};
use crate::support::redis_server::RedisServer;

fn options(shards: u16) -> RedisOptions {
    RedisOptions {
        policy: HostPolicy {
            max_in_flight: 100,
            ..HostPolicy::default()
        },
        lease: Duration::from_secs(30),
        poll: Duration::from_millis(5),
        shards: Some(shards),
        ..RedisOptions::default()
    }
}

async fn worker(url: &str, crawl: &str, options: RedisOptions) -> RedisFrontier {
    RedisFrontier::connect(url, crawl, options)
        .await
        .expect("connect to Redis")
}

/// Two URLs on each of `hosts` hosts.
fn pages(hosts: usize) -> Vec<skitter::frontier::Request> {
    (0..hosts)
        .flat_map(|h| {
            [
                req(&format!("http://h{h}.test/a")),
                req(&format!("http://h{h}.test/b")),
            ]
        })
        .collect()
}

/// Claims until nothing is ready, sleeping through short waits.
async fn drain(f: &RedisFrontier) -> Vec<skitter::frontier::Lease> {
    let mut leases = Vec::new();
    loop {
        match f.claim().await.unwrap() {
            Claim::Ready(lease) => leases.push(lease),
            _ => return leases,
        }
    }
}

/// Every URL of `hosts` hosts is queued once, handed out once by claims that
/// go round the shards, and the crawl ends only after the last completion.
async fn dedups_claims_everything_and_ends(url: &str, crawl: &str) {
    let a = worker(url, crawl, options(8)).await;
    let b = worker(
        url,
        crawl,
        RedisOptions {
            shards: None,
            ..options(1)
        },
    )
    .await;
    assert_eq!((a.shards(), b.shards()), (8, 8), "the stored count wins");
    assert_eq!(a.offer(pages(30)).await.unwrap(), 60);
    assert_eq!(
        b.offer(pages(30)).await.unwrap(),
        0,
        "seen by the other worker"
    );
    let counts = a.counts().await.unwrap();
    assert_eq!((counts.queued, counts.seen), (60, 60));
    // Rounds of claims by both workers, each lease answered but the last: a
    // new host has one lease out until it answers (slow start).
    let (mut handed, mut urls, mut last) = (0, BTreeSet::new(), None);
    while handed < 60 {
        let mut round = drain(&a).await;
        round.extend(drain(&b).await);
        assert!(
            !round.is_empty(),
            "{handed} of 60 URLs handed out, then none"
        );
        for lease in round {
            handed += 1;
            urls.insert(lease.request.url.to_string());
            if handed == 60 {
                last = Some(lease);
            } else {
                a.complete(lease, HostFeedback::Clean).await.unwrap();
            }
        }
    }
    assert_eq!((handed, urls.len()), (60, 60), "each URL once");
    assert_eq!(a.claimed().await.unwrap(), 60);
    let last = last.unwrap();
    assert!(
        matches!(b.claim().await.unwrap(), Claim::Wait(_)),
        "not over while a lease is out"
    );
    a.complete(last, HostFeedback::Clean).await.unwrap();
    assert!(matches!(b.claim().await.unwrap(), Claim::Exhausted));
    let counts = b.counts().await.unwrap();
    assert_eq!((counts.queued, counts.leased, counts.seen), (0, 0, 60));
}

/// `max_claims` counts the whole crawl, over every shard.
async fn the_claim_limit_is_crawl_wide(url: &str, crawl: &str) {
    let opts = RedisOptions {
        max_claims: Some(7),
        ..options(4)
    };
    let a = worker(url, crawl, opts).await;
    let b = worker(url, crawl, opts).await;
    a.offer(pages(10)).await.unwrap();
    let of_a = drain(&a).await;
    let of_b = drain(&b).await;
    assert_eq!(of_a.len() + of_b.len(), 7);
    assert!(matches!(a.claim().await.unwrap(), Claim::Wait(_)));
    for (worker, leases) in [(&a, of_a), (&b, of_b)] {
        for lease in leases {
            worker.complete(lease, HostFeedback::Clean).await.unwrap();
        }
    }
    assert!(matches!(a.claim().await.unwrap(), Claim::Exhausted));
    assert!(a.claim_limit_reached());
}

/// A dead worker's leases do not keep a crawl whose limit is used up alive:
/// they expire and the crawl ends.
async fn a_used_up_limit_ends_despite_a_dead_workers_leases(url: &str, crawl: &str) {
    let opts = RedisOptions {
        max_claims: Some(5),
        lease: Duration::from_millis(300),
        ..options(4)
    };
    let dead = worker(url, crawl, opts).await;
    dead.offer(pages(10)).await.unwrap();
    assert_eq!(drain(&dead).await.len(), 5);
    drop(dead);
    let alive = worker(url, crawl, opts).await;
    assert!(matches!(alive.claim().await.unwrap(), Claim::Wait(_)));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(matches!(alive.claim().await.unwrap(), Claim::Exhausted));
    assert!(alive.claim_limit_reached());
}

/// A dead worker's leases, in whichever shard, come back to another worker.
async fn expired_leases_come_back_from_any_shard(url: &str, crawl: &str) {
    let short = RedisOptions {
        lease: Duration::from_millis(300),
        ..options(4)
    };
    let dead = worker(url, crawl, short).await;
    // One URL per host: a new host has one lease out until it answers.
    let roots = (0..12)
        .map(|h| req(&format!("http://h{h}.test/")))
        .collect();
    dead.offer(roots).await.unwrap();
    let taken = drain(&dead).await;
    assert_eq!(taken.len(), 12);
    drop(dead); // its heartbeat stops; the leases expire
    let alive = worker(url, crawl, short).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let mut again = Vec::new();
    for _ in 0..200 {
        again.extend(drain(&alive).await);
        if again.len() == 12 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(again.len(), 12, "every expired lease requeued");
    for lease in again {
        alive.complete(lease, HostFeedback::Clean).await.unwrap();
    }
    assert!(matches!(alive.claim().await.unwrap(), Claim::Exhausted));
}

/// The contract checks that hold for a Redis frontier, on a sharded crawl.
async fn contract_checks(url: &str, crawl: &str) {
    let f = worker(url, &format!("{crawl}-1"), options(4)).await;
    contract::retry_waits_alone(&f).await;
    let f = worker(url, &format!("{crawl}-2"), options(4)).await;
    contract::retry_comes_back_with_its_tries(&f).await;
    let f = worker(url, &format!("{crawl}-3"), options(4)).await;
    contract::slow_down_pauses_only_its_host(&f).await;
    let f = worker(url, &format!("{crawl}-4"), options(4)).await;
    contract::unknown_lease_is_an_error(&f).await;
    let sixteen = RedisOptions {
        policy: contract::sixteen_per_host(),
        ..options(4)
    };
    let f = worker(url, &format!("{crawl}-5"), sixteen).await;
    contract::new_host_starts_with_the_initial_window(&f).await;
}

#[tokio::test]
async fn one_server_sharded_crawl() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let url = server.url();
    dedups_claims_everything_and_ends(&url, "all").await;
    the_claim_limit_is_crawl_wide(&url, "limit").await;
    a_used_up_limit_ends_despite_a_dead_workers_leases(&url, "limit-dead").await;
    expired_leases_come_back_from_any_shard(&url, "expired").await;
    contract_checks(&url, "contract").await;
    // Every shard's keys are found and removed.
    assert!(RedisFrontier::clean(&url, "all").await.unwrap() > 8);
    assert_eq!(RedisFrontier::clean(&url, "all").await.unwrap(), 0);
}

#[tokio::test]
async fn three_master_cluster_sharded_crawl() {
    let Some(cluster) = RedisCluster::start() else {
        return;
    };
    let url = cluster.url();
    dedups_claims_everything_and_ends(&url, "all").await;
    for i in 0..MASTERS {
        let keys = cluster.keys_on(i, "skitter:{all*");
        assert!(
            keys.iter()
                .any(|k| k.contains(":q:") || k.contains(":seen:")),
            "master {i} holds none of the crawl: {keys:?}"
        );
    }
    the_claim_limit_is_crawl_wide(&url, "limit").await;
    a_used_up_limit_ends_despite_a_dead_workers_leases(&url, "limit-dead").await;
    expired_leases_come_back_from_any_shard(&url, "expired").await;
    contract_checks(&url, "contract").await;
    let removed = RedisFrontier::clean(&url, "all").await.unwrap();
    assert!(removed > 8, "{removed}");
    for i in 0..MASTERS {
        assert_eq!(cluster.keys_on(i, "skitter:{all*"), Vec::<String>::new());
    }
}
