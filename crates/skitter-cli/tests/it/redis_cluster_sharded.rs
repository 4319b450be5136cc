//! A broad crawl (the test site's virtual hosts) shared through a real
//! three-master Redis Cluster, with the real binary: the crawl's shards land on
//! every master, a killed worker's leases are taken over, and a master
//! restarted mid-crawl (append-only file on) loses nothing — every page is
//! fetched once and the crawl-wide report counts each once.
//!
//! The tests run one at a time, and not beside `redis_cluster`'s
//! ([`ONE_AT_A_TIME`]): each starts a cluster and several processes.

use std::time::Duration;

use skitter_testsite::dns::{Record, Reply, Responder};
use skitter_testsite::{RunningSite, SiteConfig, TestSite, VirtualHosts};
use tokio::process::Child;

use crate::support::ONE_AT_A_TIME;
use crate::support::cli::{duplicates, finish_ok, skitter, wait_for_crawl, wait_for_requests};
use crate::support::redis_cluster::{MASTERS, RedisCluster};

/// Virtual hosts of the site, each with `PAGES` pages besides its `/`.
const HOSTS: usize = 40;
const PAGES: usize = 9;

/// The site and a DNS server answering 127.0.0.1 for every name.
async fn broad_site() -> (RunningSite, Responder) {
    let site = TestSite::start(SiteConfig {
        pages: PAGES,
        fanout: 3,
        latency: Duration::from_millis(20),
        vhosts: Some(VirtualHosts {
            domain: "sites.test".into(),
            hosts: HOSTS,
            cross_links: 2,
        }),
        ..SiteConfig::default()
    })
    .expect("start the test site");
    let dns = Responder::builder()
        .fallback(Reply::Records(vec![Record::A([127, 0, 0, 1].into())]))
        .bind()
        .await
        .expect("start the DNS server");
    (site, dns)
}

/// `crawl --redis` over the cluster, then `workers` more `worker`s, each
/// with `own` options.
async fn start_crawl(
    redis: &str,
    crawl: &str,
    site: &RunningSite,
    dns: &Responder,
    own: &[&str],
    workers: usize,
) -> Vec<Child> {
    let root = format!("http://h0.sites.test:{}/", site.addr().port());
    let dns = dns.addr().to_string();
    let mut args = vec!["crawl", "--redis", redis, "--crawl", crawl, &root];
    args.extend(["--span-hosts", "--domains", "sites.test", "--allow-private"]);
    args.extend(["--dns-server", &dns, "--per-host", "2", "--report", "json"]);
    args.extend(own);
    let mut children = vec![skitter(&args)];
    wait_for_crawl(redis, crawl).await;
    for _ in 0..workers {
        let mut args = vec![
            "worker", "--redis", redis, "--crawl", crawl, "--report", "none",
        ];
        args.extend(own);
        children.push(skitter(&args));
    }
    children
}

/// The crawl-wide totals from `status --json`.
async fn totals(redis: &str, crawl: &str) -> serde_json::Value {
    let out = finish_ok(
        skitter(&["status", "--redis", redis, "--crawl", crawl, "--json"]),
        "status",
    )
    .await;
    serde_json::from_str(&out).expect("status JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_workers_leases_are_taken_over_on_a_cluster() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let Some(cluster) = RedisCluster::start() else {
        return;
    };
    let redis = cluster.url();
    let (site, dns) = broad_site().await;
    let own = ["--max-tasks", "4", "--lease", "2s"];
    let mut children = start_crawl(&redis, "kill", &site, &dns, &own, 2).await;
    wait_for_requests(&site, 60).await;
    // The crawl's shards are spread over every master.
    for i in 0..MASTERS {
        let keys = cluster.keys_on(i, "skitter:{kill*");
        assert!(
            keys.iter().any(|k| k.contains(":seen:")),
            "master {i} holds no seen URLs of the crawl: {keys:?}"
        );
    }
    let total = (HOSTS * (PAGES + 1)) as u64;
    assert!(
        site.stats().total_requests < total * 3 / 4,
        "too late to kill mid-crawl"
    );
    let mut victim = children.remove(2);
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the worker already ended"
    );
    victim.start_kill().expect("SIGKILL the worker");
    let _ = victim.wait().await;
    for (i, child) in children.into_iter().enumerate() {
        finish_ok(child, &format!("surviving process {i}")).await;
    }
    let extra = duplicates(&site.stats());
    assert!(
        extra <= 4,
        "{extra} duplicates; the killed worker held at most 4"
    );
    let wide = totals(&redis, "kill").await;
    assert_eq!(wide["state"], "finished", "{wide}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_master_loses_nothing() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let Some(cluster) = RedisCluster::start() else {
        return;
    };
    let redis = cluster.url();
    let (site, dns) = broad_site().await;
    // Leases outlast the restart, so no lease expires while its worker waits.
    let own = ["--max-tasks", "4", "--lease", "30s"];
    let children = start_crawl(&redis, "restart", &site, &dns, &own, 1).await;
    wait_for_requests(&site, 80).await;
    let total = (HOSTS * (PAGES + 1)) as u64;
    assert!(
        site.stats().total_requests < total * 3 / 4,
        "too late to restart mid-crawl"
    );
    let cluster = tokio::task::spawn_blocking(move || {
        let mut cluster = cluster;
        cluster.restart(1);
        cluster
    })
    .await
    .unwrap();
    for (i, child) in children.into_iter().enumerate() {
        finish_ok(child, &format!("process {i} across the restart")).await;
    }
    assert_eq!(duplicates(&site.stats()), 0, "a page was fetched twice");
    let wide = totals(&redis, "restart").await;
    assert_eq!(wide["state"], "finished", "{wide}");
    assert_eq!(wide["counters"]["html"], total, "{wide}");
    drop(cluster);
}
