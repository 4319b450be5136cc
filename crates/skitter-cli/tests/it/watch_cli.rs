//! `skitter crawl --metrics` and `skitter ctl`, run as a user would: the
//! server's addresses and token on stderr, pause and resume from `ctl`, a
//! wrong token refused, `ctl status`, and `ctl stop` ending the linger.

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use skitter_testsite::{SiteConfig, TestSite};

use crate::support::cli::{finish, skitter};

const TOKEN: &str = "cli-test-token-0123456789";

fn ctl(addr: &str, token: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skitter"))
        .arg("ctl")
        .args(args)
        .args(["--addr", addr, "--token", token])
        .env_remove("SKITTER_CONTROL_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn status(addr: &str) -> Option<serde_json::Value> {
    let out = ctl(addr, TOKEN, &["status"]);
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).unwrap())
}

/// The status once `ready` holds for it, asked every 25 ms for up to
/// `tries` times; `None` if it never did.
async fn status_when(
    addr: &str,
    tries: u32,
    ready: impl Fn(&serde_json::Value) -> bool,
) -> Option<serde_json::Value> {
    for _ in 0..tries {
        if let Some(s) = status(addr).filter(|s| ready(s)) {
            return Some(s);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    None
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctl_pauses_resumes_and_stops_a_crawl() {
    let pages = 40;
    let site = TestSite::start(SiteConfig {
        pages,
        latency: Duration::from_millis(30),
        ..SiteConfig::default()
    })
    .unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let crawl = skitter(&[
        "crawl",
        &site.url("/"),
        "--max-tasks",
        "2",
        "--metrics",
        &addr,
        "--control-token",
        TOKEN,
        "--metrics-linger",
        "60s",
    ]);
    let up = status_when(&addr, 200, |_| true).await;
    assert!(up.is_some(), "the metrics server never answered");
    let wrong = ctl(&addr, "cli-test-token-wrong-0000", &["pause"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("403"));
    let paused = ctl(&addr, TOKEN, &["pause"]);
    assert!(
        paused.status.success(),
        "{}",
        String::from_utf8_lossy(&paused.stderr)
    );
    let set = ctl(
        &addr,
        TOKEN,
        &[
            "set",
            "--max-tasks",
            "1",
            "--per-host",
            "1",
            "--delay",
            "20ms",
        ],
    );
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    assert!(
        !ctl(&addr, TOKEN, &["set"]).status.success(),
        "set needs a setting"
    );
    let held = status_when(&addr, 400, |s| s["in_flight"] == 0)
        .await
        .expect("fetches still in flight after the pause");
    assert_eq!(
        (held["paused"].as_bool(), held["max_tasks"].as_u64()),
        (Some(true), Some(1))
    );
    assert_eq!(
        (held["per_host"].as_u64(), held["delay_seconds"].as_f64()),
        (Some(1), Some(0.02))
    );
    let requests = site.stats().total_requests;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        site.stats().total_requests,
        requests,
        "a request went out while paused"
    );
    assert!(ctl(&addr, TOKEN, &["resume"]).status.success());
    let ended = status_when(&addr, 1200, |s| s["ended"] == true && s["report"] == true).await;
    assert!(ended.is_some(), "the crawl never ended");
    // The dashboard is the end report now; a stop ends the linger.
    assert!(ctl(&addr, TOKEN, &["stop"]).status.success());
    let run = finish(crawl).await;
    run.assert_ok("crawl --metrics");
    assert!(
        run.stderr
            .contains(&format!("metrics at http://{addr}/metrics")),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains(TOKEN), "a given token is not printed");
    assert!(
        run.stdout.contains(&format!("{:>10} html", pages + 1)),
        "{}",
        run.stdout
    );
    let twice: Vec<_> = site
        .stats()
        .paths()
        .iter()
        .filter(|&(_, &n)| n != 1)
        .map(|(p, n)| (p.clone(), *n))
        .collect();
    assert!(twice.is_empty(), "{twice:?}");
}

/// `GET path` on the metrics server, the body.
fn get(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.split_once("\r\n\r\n").unwrap().1.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_serves_metrics_and_status_and_stops_from_ctl() {
    let site = TestSite::start(SiteConfig {
        pages: 10,
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let pattern = site.url("/p/[1-6]");
    let fetch = skitter(&[
        "fetch",
        &pattern,
        "-o",
        dir.path().to_str().unwrap(),
        "--metrics",
        &addr,
        "--control-token",
        TOKEN,
        "--metrics-linger",
        "60s",
    ]);
    let s = status_when(&addr, 400, |s| s["done"] == 6)
        .await
        .expect("the fetch never reported its 6 items");
    assert_eq!(
        (s["command"].as_str(), s["ok"].as_u64()),
        (Some("fetch"), Some(6))
    );
    let metrics = get(&addr, "/metrics");
    assert!(
        metrics.contains("skitter_fetch_items_total{outcome=\"ok\"} 6"),
        "{metrics}"
    );
    assert!(metrics.ends_with("# EOF\n"), "{metrics}");
    // A fetch cannot be paused; a wrong token is refused; stop ends the linger.
    let pause = ctl(&addr, TOKEN, &["pause"]);
    assert_eq!(pause.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&pause.stderr).contains("only be stopped"));
    assert_eq!(
        ctl(&addr, "cli-test-token-wrong-0000", &["stop"])
            .status
            .code(),
        Some(2)
    );
    assert!(ctl(&addr, TOKEN, &["stop"]).status.success());
    let run = finish(fetch).await;
    run.assert_ok("fetch --metrics");
    assert!(
        run.stderr
            .contains(&format!("status at http://{addr}/api/status")),
        "{}",
        run.stderr
    );
}
