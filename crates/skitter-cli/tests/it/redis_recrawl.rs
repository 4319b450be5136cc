//! A new pass of a finished shared crawl through a real `redis-server`:
//! `crawl --redis URL --crawl NAME --recrawl` starts pass 2 from the visits
//! stored in Redis, a `worker` joining it sends conditional requests too, and
//! the two reports together account for every known URL once, with what
//! changed. Without `redis-server` the test says SKIPPED loudly (and fails
//! under CI).

use std::collections::BTreeSet;
use std::time::Duration;

use skitter_testsite::{SiteConfig, TestSite, Versions};

use crate::support::cli::{report, skitter};
use crate::support::redis_server::RedisServer;

fn urls(report: &serde_json::Value) -> Vec<String> {
    report["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["url"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_shared_crawl_is_recrawled_with_conditional_requests() {
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let redis = server.url();
    let site = TestSite::start(SiteConfig {
        pages: 300,
        fanout: 5,
        latency: Duration::from_millis(5),
        versions: Some(Versions {
            change: 0.1,
            gone: 0.05,
            ..Versions::default()
        }),
        ..SiteConfig::default()
    })
    .unwrap();
    let root = site.url("/");
    let common = [
        "--redis",
        &redis,
        "--crawl",
        "again",
        "--report",
        "json",
        "--no-trap-rules",
        "--per-host",
        "4",
    ];
    let crawl = |extra: &[&str]| {
        let mut args = vec!["-q", "crawl", root.as_str()];
        args.extend(common);
        args.extend(extra);
        skitter(&args)
    };

    let first = report(crawl(&[]), "pass 1").await;
    let known: BTreeSet<String> = first["pages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !matches!(p["kind"].as_str(), Some("skipped" | "failed")))
        .map(|p| p["url"].as_str().unwrap().to_string())
        .collect();
    assert!(known.len() > 300, "pass 1 found {} URLs", known.len());
    assert_eq!(first["counters"]["recrawl_pass"], serde_json::Value::Null);
    assert_eq!(site.stats().not_modified, 0, "pass 1 sent validators");

    // A --recrawl on a crawl still at pass 1 but finished starts pass 2; a
    // worker joining it works in pass 2 as well.
    site.next_pass();
    let starter = crawl(&["--recrawl"]);
    let worker = skitter(&[
        "-q", "worker", "--redis", &redis, "--crawl", "again", "--report", "json",
    ]);
    let (a, b) = (
        report(starter, "pass 2 starter").await,
        report(worker, "pass 2 worker").await,
    );
    assert_eq!(a["counters"]["recrawl_pass"], 2, "{}", a["counters"]);
    let mut revisited = BTreeSet::new();
    for (who, r) in [("starter", &a), ("worker", &b)] {
        for page in r["pages"].as_array().unwrap() {
            let url = page["url"].as_str().unwrap();
            assert!(
                page["change"].is_string(),
                "{who}: {url} has no change, so it was not fetched as pass 2: {page}"
            );
        }
        for url in urls(r) {
            assert!(revisited.insert(url.clone()), "{url} fetched twice");
        }
    }
    let missing: Vec<_> = known.difference(&revisited).collect();
    assert!(missing.is_empty(), "known URLs not revisited: {missing:?}");
    let change = |c: &str| {
        let key = format!("change_{c}");
        a["counters"][&key].as_u64().unwrap_or(0) + b["counters"][&key].as_u64().unwrap_or(0)
    };
    let sum: u64 = ["changed", "unchanged", "gone", "failed"]
        .iter()
        .map(|c| change(c))
        .sum();
    assert_eq!(
        sum,
        known.len() as u64,
        "{} {}",
        a["counters"],
        b["counters"]
    );
    assert!(change("changed") > 0 && change("gone") > 0 && change("unchanged") > 0);
    assert!(
        site.stats().not_modified > 0,
        "no conditional request got a 304"
    );

    // A finished pass 2: status says so, and another --recrawl starts pass 3.
    let status = report(
        skitter(&["status", "--redis", &redis, "--crawl", "again", "--json"]),
        "status",
    )
    .await;
    assert_eq!(status["pass"], 2, "{status}");
    assert_eq!(status["state"], "finished", "{status}");
    let third = report(crawl(&["--recrawl"]), "pass 3").await;
    assert_eq!(
        third["counters"]["recrawl_pass"], 3,
        "{}",
        third["counters"]
    );
    assert_eq!(
        third["counters"]["change_changed"].as_u64().unwrap_or(0),
        0,
        "the site did not change since pass 2: {}",
        third["counters"]
    );
}
