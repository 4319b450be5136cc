//! Several `skitter` processes crawl one site as one crawl through a real
//! `redis-server`: every page once, per-host cap and delay held across
//! processes, a killed worker's leases taken over, a Redis restart ridden out,
//! `status` (the per-proxy table too) and `redis-clean`.
//!
//! The test site runs in-process (its counters are the ground truth); the
//! crawlers are the real binary. The tests run one at a time, and not beside
//! `redis_cluster_sharded`'s ([`ONE_AT_A_TIME`]): they start several processes
//! each and the delay check needs a machine not busy with another test's crawl.

use std::time::Duration;

use skitter_testsite::{ProxyMode, RunningSite, SiteConfig, TestProxy, TestSite, dead_proxy_url};
use tokio::process::Child;

use crate::support::ONE_AT_A_TIME;
use crate::support::cli::{
    duplicates, finish, markdown_files, run, skitter, wait_for_crawl, wait_for_requests,
};
use crate::support::redis_server::RedisServer;

/// Starts `crawl --redis` with `shared` options plus `own`, waits until it
/// has stored the crawl, then starts one `worker` per entry of `workers`.
async fn start_cluster(
    redis: &str,
    crawl: &str,
    root: &str,
    shared: &[&str],
    own: &[&str],
    workers: &[&[&str]],
) -> Vec<Child> {
    let mut args = vec!["crawl", "--redis", redis, "--crawl", crawl, root];
    args.extend(shared);
    args.extend(own);
    let mut children = vec![skitter(&args)];
    wait_for_crawl(redis, crawl).await;
    for extra in workers {
        let mut args = vec!["worker", "--redis", redis, "--crawl", crawl];
        args.extend(*extra);
        children.push(skitter(&args));
    }
    children
}

fn site(pages: usize, latency_ms: u64, record_starts: bool) -> RunningSite {
    TestSite::start(SiteConfig {
        pages,
        latency: Duration::from_millis(latency_ms),
        record_starts,
        ..SiteConfig::default()
    })
    .expect("start the test site")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_crawl_as_one() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let redis = server.url();
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("pages.jsonl");
    let site = site(300, 20, false);
    let root = site.url("/");
    let children = start_cluster(
        &redis,
        "three",
        &root,
        &["--per-host", "2"],
        &["--jsonl", jsonl.to_str().unwrap()],
        &[&["--jsonl", jsonl.to_str().unwrap()], &["--report", "json"]],
    )
    .await;
    for (i, child) in children.into_iter().enumerate() {
        finish(child).await.assert_ok(&format!("process {i}"));
    }
    let stats = site.stats();
    assert_eq!(duplicates(&stats), 0, "a page was fetched twice");
    assert!(
        stats.in_flight_peak <= 2,
        "per-host cap broken: {} in flight",
        stats.in_flight_peak
    );
    // Two workers wrote JSON lines, each to its own file; together they hold
    // their share of the records and no file is written twice.
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files.iter().all(|f| {
        f.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("pages-w")
    }));
    let status = run(&["status", "--redis", &redis, "--crawl", "three", "--json"]).await;
    status.assert_ok("status");
    let totals: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(totals["state"], "finished", "{totals}");
    assert_eq!(totals["counters"]["html"], 301, "{totals}");
    assert_eq!(totals["done"], totals["claimed"], "{totals}");
}

/// Each process writes its own Markdown tree (`md-wID`), with the content
/// options of the crawl's spec (a worker is given none of its own);
/// together the trees hold every HTML page once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_write_markdown_trees() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let redis = server.url();
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("md");
    let md = md.to_str().unwrap();
    let site = site(60, 10, false);
    let children = start_cluster(
        &redis,
        "md",
        &site.url("/"),
        // Links dropped from the content: a worker that did not get the
        // spec's options would keep them.
        &["--content-scope", "full", "--content-exclude", "a"],
        &["--markdown", md],
        &[&["--markdown", md]],
    )
    .await;
    for (i, child) in children.into_iter().enumerate() {
        finish(child).await.assert_ok(&format!("process {i}"));
    }
    let trees: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(trees.len(), 2, "{trees:?}");
    let mut pages = std::collections::BTreeSet::new();
    for tree in &trees {
        let name = tree.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("md-w"), "{name}");
        for file in markdown_files(tree) {
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(
                !text.contains("]("),
                "{}: a link kept:\n{text}",
                file.display()
            );
            let rel = file.strip_prefix(tree).unwrap().to_path_buf();
            assert!(pages.insert(rel.clone()), "{} in both trees", rel.display());
        }
    }
    // The root and its 60 pages.
    assert_eq!(pages.len(), 61, "{pages:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_delay_holds_across_workers() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let redis = server.url();
    let site = site(20, 0, true);
    let shared = ["--delay", "50ms", "--per-host", "4", "--ignore-robots"];
    let children = start_cluster(&redis, "delay", &site.url("/"), &shared, &[], &[&[], &[]]).await;
    for child in children {
        finish(child).await.assert_ok("a delayed worker");
    }
    let stats = site.stats();
    duplicates(&stats);
    let starts = stats.starts("/");
    assert_eq!(starts.len() as u64, stats.total_requests);
    // Starts are claimed at least 50 ms apart on Redis' clock (that a delay
    // binds every worker is asserted on that clock in the library's
    // `redis_frontier` tests). At the
    // site each start also carries the time from its claim to its request,
    // which a process starved of CPU stretches for one request and not the
    // next, so two may arrive together (seen with the test's processes held
    // to a tenth of a core: 6 of 21 gaps under 35 ms). What such jitter cannot
    // fake is the span: n starts gated 50 ms apart take (n - 1) x 50 ms, less
    // what the first request was late by (100 ms of slack), where two workers
    // each keeping the delay to themselves would take about half that.
    let n = starts.len() as u32;
    let span = starts[starts.len() - 1] - starts[0];
    assert!(
        span + Duration::from_millis(100) >= Duration::from_millis(50) * (n - 1),
        "{n} requests in {span:?}: {starts:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_workers_pages_are_taken_over() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let redis = server.url();
    let site = site(300, 50, false);
    let each = ["--max-tasks", "4", "--lease", "2s"];
    let mut children = start_cluster(
        &redis,
        "kill",
        &site.url("/"),
        &["--per-host", "6"],
        &each,
        &[&each, &each],
    )
    .await;
    wait_for_requests(&site, 60).await;
    assert!(
        site.stats().total_requests < 250,
        "too late to kill mid-crawl"
    );
    let mut victim = children.remove(1);
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the worker to kill already ended"
    );
    victim.start_kill().expect("SIGKILL the worker");
    let _ = victim.wait().await;
    for child in children {
        finish(child).await.assert_ok("a surviving worker");
    }
    let extra = duplicates(&site.stats());
    eprintln!("duplicate fetches after the kill: {extra}");
    assert!(
        extra <= 4,
        "{extra} duplicate fetches; the killed worker held at most 4"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crawl_survives_a_redis_restart() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let Some(mut server) = RedisServer::start(true) else {
        return;
    };
    let redis = server.url();
    let site = site(200, 20, false);
    let children = start_cluster(
        &redis,
        "restart",
        &site.url("/"),
        &["--per-host", "4"],
        &[],
        &[&[]],
    )
    .await;
    wait_for_requests(&site, 50).await;
    server.stop();
    assert!(
        site.stats().total_requests < 150,
        "too late to stop Redis mid-crawl"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    server.restart();
    for child in children {
        finish(child).await.assert_ok("a worker across the restart");
    }
    duplicates(&site.stats());
    let status = run(&["status", "--redis", &redis, "--crawl", "restart"]).await;
    status.assert_ok("status");
    assert!(
        status.stdout.contains("State: finished"),
        "{}",
        status.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_status_and_clean() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let redis = server.url();
    let unknown = run(&["worker", "--redis", &redis, "--crawl", "nope"]).await;
    assert_eq!(unknown.code, Some(2));
    assert!(
        unknown.stderr.contains("no crawl named \"nope\""),
        "{}",
        unknown.stderr
    );

    let site = site(100, 10, false);
    let root = site.url("/");
    let shared = ["--max-pages", "40", "--ignore-robots", "--per-host", "4"];
    let children = start_cluster(
        &redis,
        "limited",
        &root,
        &shared,
        &[],
        &[&["--report", "json"]],
    )
    .await;
    let mut runs = Vec::new();
    for child in children {
        let run = finish(child).await;
        run.assert_ok("a limited worker");
        runs.push(run);
    }
    // The limit counts the whole crawl: both workers together fetched 40.
    assert_eq!(site.stats().total_requests, 40);
    assert!(
        runs[0].stdout.contains("Stopped: limit max-pages"),
        "{}",
        runs[0].stdout
    );
    // A worker's own crawl-wide block may miss the other's last unflushed stats;
    // once both have exited, status is exact.
    let report: serde_json::Value = serde_json::from_str(&runs[1].stdout).unwrap();
    assert!(
        report["crawl_wide"]["done"].as_u64().unwrap() <= 40,
        "{report}"
    );
    let status = run(&["status", "--redis", &redis, "--crawl", "limited", "--json"]).await;
    status.assert_ok("status");
    let totals: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(totals["done"], 40, "{totals}");

    let mut other = vec!["crawl", "--redis", &redis, "--crawl", "limited", &root];
    other.extend(["--max-pages", "41"]);
    let conflict = run(&other).await;
    assert_eq!(conflict.code, Some(2));
    assert!(
        conflict
            .stderr
            .contains("already exists with other options"),
        "{}",
        conflict.stderr
    );

    let status = run(&["status", "--redis", &redis, "--crawl", "limited"]).await;
    status.assert_ok("status");
    for line in ["State: stopped: limit max-pages", "Claimed: 40", "Done: 40"] {
        assert!(
            status.stdout.contains(line),
            "{line:?} missing:\n{}",
            status.stdout
        );
    }
    let clean = run(&["redis-clean", "--redis", &redis, "--crawl", "limited"]).await;
    clean.assert_ok("redis-clean");
    assert!(clean.stdout.starts_with("removed "), "{}", clean.stdout);
    let gone = run(&["status", "--redis", &redis, "--crawl", "limited"]).await;
    assert_eq!(gone.code, Some(2), "{}", gone.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_never_prints_credentials() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let redis = server.url();
    let site = site(3, 0, false);
    let root = site.url("/");
    let crawl = run(&[
        "crawl",
        "--redis",
        &redis,
        "--crawl",
        "secret",
        &root,
        "-H",
        "Authorization: Bearer S3CRET",
    ])
    .await;
    crawl.assert_ok("the crawl");
    let status = run(&["status", "--redis", &redis, "--crawl", "secret", "--json"]).await;
    status.assert_ok("status");
    assert!(!status.stdout.contains("S3CRET"), "{}", status.stdout);
    let shown: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(
        shown["options"]["request"]["fetch"]["headers"][0],
        serde_json::json!(["Authorization", "[redacted]"]),
        "{shown}"
    );
}

/// The `proxies` table of a report or of the crawl-wide totals, by proxy:
/// `(successes, failures, benchings, mean_ms)`.
fn proxy_table(value: &serde_json::Value) -> std::collections::BTreeMap<String, [f64; 4]> {
    let rows = value["proxies"].as_array().cloned().unwrap_or_default();
    rows.iter()
        .map(|p| {
            let n = |k: &str| p[k].as_f64().unwrap_or(f64::NAN);
            let name = p["proxy"].as_str().unwrap_or("?").to_string();
            (
                name,
                [n("successes"), n("failures"), n("benchings"), n("mean_ms")],
            )
        })
        .collect()
}

/// Two workers crawling through one proxy pool (two good proxies, one with
/// credentials, and a dead one): the crawl-wide totals hold the per-proxy
/// table of the whole crawl, the sum of the workers' own, under the proxies'
/// shown names and never their credentials.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_proxy_totals_add_up_across_workers() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let Some(server) = RedisServer::start(false) else {
        return;
    };
    let redis = server.url();
    let site = site(120, 10, false);
    let secret = TestProxy::http(ProxyMode::Good, Some(("user", "S3CRET"))).unwrap();
    let open = TestProxy::http(ProxyMode::Good, None).unwrap();
    let dead = dead_proxy_url().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("proxies.txt");
    std::fs::write(&list, format!("{}\n{}\n{dead}\n", secret.url(), open.url())).unwrap();
    let shared = [
        "--proxy-list",
        list.to_str().unwrap(),
        "--retry-delay",
        "5ms",
        "--per-host",
        "4",
    ];
    let json = ["--report", "json"];
    let children = start_cluster(&redis, "proxies", &site.url("/"), &shared, &json, &[&json]).await;
    let mut summed: std::collections::BTreeMap<String, [f64; 4]> = Default::default();
    let mut weighted_ms: std::collections::BTreeMap<String, f64> = Default::default();
    for (i, child) in children.into_iter().enumerate() {
        let run = finish(child).await;
        run.assert_ok(&format!("process {i}"));
        let report: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
        for (proxy, [ok, failed, benched, mean]) in proxy_table(&report) {
            let row = summed.entry(proxy.clone()).or_default();
            row[0] += ok;
            row[1] += failed;
            row[2] += benched;
            *weighted_ms.entry(proxy).or_default() += ok * mean;
        }
    }
    let status = run(&["status", "--redis", &redis, "--crawl", "proxies", "--json"]).await;
    status.assert_ok("status");
    let text = run(&["status", "--redis", &redis, "--crawl", "proxies"]).await;
    for out in [&status.stdout, &status.stderr, &text.stdout, &text.stderr] {
        assert!(!out.contains("S3CRET") && !out.contains("user@"), "{out}");
    }
    let totals: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    let wide = proxy_table(&totals);
    let names = [
        format!("http://{}", secret.addr()),
        format!("http://{}", open.addr()),
        dead.clone(),
    ];
    assert_eq!(
        wide.keys().collect::<Vec<_>>(),
        {
            let mut sorted: Vec<_> = names.iter().collect();
            sorted.sort();
            sorted
        },
        "{totals}"
    );
    for (name, proxy) in names.iter().zip([Some(&secret), Some(&open), None]) {
        let [ok, failed, benched, mean] = wide[name];
        let want = summed[name];
        assert_eq!([ok, failed, benched], [want[0], want[1], want[2]], "{name}");
        match proxy {
            // Every request a good proxy forwarded got its response.
            Some(p) => assert_eq!(ok, p.served() as f64, "{name}"),
            None => assert!(ok == 0.0 && failed >= 1.0 && benched >= 1.0, "{name}"),
        }
        if ok > 0.0 {
            // The merged histogram's mean is the workers' means, weighted.
            let merged = weighted_ms[name] / ok;
            assert!((mean - merged).abs() < 0.01, "{name}: {mean} vs {merged}");
        }
        let line = format!("Proxy: {name}");
        assert!(text.stdout.contains(&line), "{}", text.stdout);
    }
    let served = (secret.served() + open.served()) as f64;
    assert!(served > 0.0 && served == wide.values().map(|r| r[0]).sum::<f64>());
}
