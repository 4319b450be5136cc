//! The watch server (`--metrics`) over a real crawl of the test site: the
//! Prometheus exposition, the control API's token, pause and resume (the site
//! sees no request while paused, and every page once in all), a stop that is
//! Ctrl-C's, and a real Prometheus server scraping it (Debian's
//! `prometheus`; without it the check says so loudly, and fails under CI).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use skitter::watch::WatchServer;
use skitter::watch::client::{self, Answer};
use skitter::watch::control::{Command, Settings, Token};
use skitter::{Crawler, CrawlerBuilder, Report};
use skitter_testsite::{RunningSite, SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "test-token-0123456789";

fn site(pages: usize, latency_ms: u64) -> RunningSite {
    TestSite::start(SiteConfig {
        pages,
        latency: Duration::from_millis(latency_ms),
        ..SiteConfig::default()
    })
    .unwrap()
}

fn builder(site: &RunningSite, max_tasks: usize) -> CrawlerBuilder {
    Crawler::builder()
        .root(site.url("/"))
        .max_tasks(max_tasks)
        .per_host(max_tasks)
}

/// Starts the crawl and its watch server; answers the server and the crawl's task.
async fn watched(
    b: CrawlerBuilder,
    stop: &CancellationToken,
    paused: bool,
) -> (WatchServer, tokio::task::JoinHandle<Report>) {
    let crawler = b.build().expect("valid config");
    if paused {
        crawler.steer().pause();
    }
    let server = WatchServer::start(
        "127.0.0.1:0".parse().unwrap(),
        Token::new(TOKEN).unwrap(),
        crawler.live(),
        stop.clone(),
    )
    .await
    .expect("server starts");
    let stop = stop.clone();
    let task = tokio::spawn(async move { crawler.run(stop).await.expect("crawl runs") });
    (server, task)
}

async fn status(addr: SocketAddr) -> serde_json::Value {
    let a = client::get(addr, "/api/status").await.unwrap();
    assert_eq!(a.status, 200);
    serde_json::from_str(&a.body).unwrap()
}

/// Waits until the fetches started before a pause have ended.
async fn drained(addr: SocketAddr) -> serde_json::Value {
    for _ in 0..400 {
        let s = status(addr).await;
        if s["in_flight"] == 0 {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("fetches still in flight 10 s after the pause");
}

fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test]
async fn metrics_name_what_the_crawl_did() {
    let site = site(20, 0);
    let stop = CancellationToken::new();
    let (server, task) = watched(builder(&site, 4), &stop, false).await;
    let report = task.await.unwrap();
    let m = client::get(server.addr(), "/metrics").await.unwrap();
    assert_eq!(m.status, 200);
    let text = &m.body;
    assert!(text.ends_with("# EOF\n"), "{text}");
    assert!(text.contains("# TYPE skitter_pages counter"), "{text}");
    let html = sample(text, r#"skitter_pages_total{kind="html",class="2xx"}"#);
    assert_eq!(html, Some(report.counters.html as f64), "{text}");
    assert_eq!(html, Some(21.0));
    let bytes = sample(text, r#"skitter_bytes_total{kind="html"}"#);
    assert_eq!(bytes, Some(report.counters.html_bytes as f64));
    // Every URL with a response has a response time.
    let c = &report.counters;
    let answered = c.html + c.other + c.error + c.redirect;
    assert_eq!(
        sample(text, "skitter_response_seconds_count"),
        Some(answered as f64),
        "{text}"
    );
    assert_eq!(sample(text, "skitter_ended"), Some(1.0));
    assert_eq!(sample(text, "skitter_in_flight"), Some(0.0));
    // The memory frontier counts its hosts (none left live at the end, or
    // the one it has not forgotten yet); a small crawl spills nothing.
    assert!(
        sample(text, "skitter_hosts_active").is_some_and(|n| n <= 1.0),
        "{text}"
    );
    assert_eq!(sample(text, "skitter_hosts_benched"), Some(0.0));
    assert_eq!(sample(text, "skitter_frontier_disk_bytes"), Some(0.0));
    assert!(sample(text, "skitter_process_resident_bytes").is_some_and(|b| b > 0.0));
    // No per-URL or per-host label anywhere.
    assert!(!text.contains("127.0.0.1"), "{text}");
    // The status lists the last failures (the site links `/P/n`, a 404).
    let s = status(server.addr()).await;
    // One host, all its URLs counted (robots.txt is not a URL of the crawl).
    let busiest = s["busiest_hosts"].as_array().unwrap();
    assert_eq!(busiest.len(), 1, "{busiest:?}");
    assert_eq!(busiest[0]["host"], "127.0.0.1");
    assert_eq!(busiest[0]["pages"], report.done - c.skipped);
    assert_eq!(busiest[0]["over"], 0);
    assert!(report.counters.error > 0);
    let recent = s["recent_errors"].as_array().unwrap();
    assert_eq!(recent.len() as u64, report.counters.error.min(20));
    assert!(
        recent.iter().all(|e| e["what"] == "status 404"),
        "{recent:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn commands_need_the_token() {
    let site = site(5, 0);
    let stop = CancellationToken::new();
    let (server, task) = watched(builder(&site, 2), &stop, true).await;
    let addr = server.addr();
    let refused = |a: Answer| a.status;
    assert_eq!(
        refused(client::send(addr, None, &Command::Stop).await.unwrap()),
        401
    );
    let wrong = client::send(addr, Some("test-token-0123456780"), &Command::Stop).await;
    assert_eq!(wrong.unwrap().status, 403);
    let short = client::send(addr, Some("x"), &Command::Resume).await;
    assert_eq!(short.unwrap().status, 403);
    // Nothing happened: still paused, nothing fetched.
    let s = status(addr).await;
    assert_eq!(
        (s["paused"].as_bool(), s["done"].as_u64()),
        (Some(true), Some(0))
    );
    assert_eq!(site.stats().total_requests, 0);
    let bad = client::send(
        addr,
        Some(TOKEN),
        &Command::Set(Settings {
            max_tasks: Some(0),
            ..Settings::default()
        }),
    )
    .await;
    assert_eq!(bad.unwrap().status, 400);
    let ok = client::send(addr, Some(TOKEN), &Command::Resume)
        .await
        .unwrap();
    assert_eq!(ok.status, 200, "{}", ok.body);
    let report = task.await.unwrap();
    assert!(report.completed());
    server.shutdown().await;
}

#[tokio::test]
async fn set_changes_per_host_and_delay_of_a_running_crawl() {
    let site = site(5, 0);
    let stop = CancellationToken::new();
    let (server, task) = watched(builder(&site, 2), &stop, true).await;
    let addr = server.addr();
    let s = status(addr).await;
    assert_eq!(
        (s["per_host"].as_u64(), s["delay_seconds"].as_f64()),
        (Some(2), Some(0.0))
    );
    let set = Command::Set(Settings {
        per_host: Some(1),
        delay: Some(Duration::from_millis(250)),
        ..Settings::default()
    });
    let answer = client::send(addr, Some(TOKEN), &set).await.unwrap();
    assert_eq!(answer.status, 200, "{}", answer.body);
    let s: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(
        (s["per_host"].as_u64(), s["delay_seconds"].as_f64()),
        (Some(1), Some(0.25))
    );
    let metrics = client::get(addr, "/metrics").await.unwrap().body;
    assert_eq!(sample(&metrics, "skitter_per_host"), Some(1.0));
    assert_eq!(sample(&metrics, "skitter_delay_seconds"), Some(0.25));
    // A refused value changes nothing.
    let zero = Command::Set(Settings {
        per_host: Some(0),
        delay: Some(Duration::ZERO),
        ..Settings::default()
    });
    assert_eq!(
        client::send(addr, Some(TOKEN), &zero).await.unwrap().status,
        400
    );
    assert_eq!(status(addr).await["per_host"], 1);
    client::send(addr, Some(TOKEN), &Command::Resume)
        .await
        .unwrap();
    let report = task.await.unwrap();
    assert!(report.completed());
    assert_eq!(site.stats().in_flight_peak, 1);
    server.shutdown().await;
}

#[tokio::test]
async fn a_pause_holds_every_request_and_resume_loses_nothing() {
    let pages = 30;
    let site = site(pages, 30);
    let stop = CancellationToken::new();
    let (server, task) = watched(builder(&site, 2), &stop, false).await;
    let addr = server.addr();
    // Let the crawl get going, then hold it.
    while site.stats().total_requests < 4 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let paused = client::send(addr, Some(TOKEN), &Command::Pause)
        .await
        .unwrap();
    assert_eq!(paused.status, 200, "{}", paused.body);
    let before = drained(addr).await;
    assert_eq!(before["paused"], true);
    let requests = site.stats().total_requests;
    // Ten times the site's latency: any claim while paused would show.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        site.stats().total_requests,
        requests,
        "a request went out while paused"
    );
    assert_eq!(status(addr).await["done"], before["done"]);
    assert!(
        before["done"].as_u64().unwrap() < pages as u64,
        "the crawl ended before the pause"
    );
    let resumed = client::send(addr, Some(TOKEN), &Command::Resume)
        .await
        .unwrap();
    assert_eq!(resumed.status, 200);
    let report = task.await.unwrap();
    assert!(report.completed(), "{:?}", report.stopped);
    assert_eq!(report.counters.html, pages as u64 + 1);
    // Every path fetched exactly once: nothing lost, nothing repeated.
    let stats = site.stats();
    let twice: Vec<_> = stats.paths().iter().filter(|&(_, &n)| n != 1).collect();
    assert!(twice.is_empty(), "{twice:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn stop_is_the_clean_stop_of_ctrl_c() {
    let site = site(200, 20);
    let stop = CancellationToken::new();
    let (server, task) = watched(builder(&site, 2), &stop, false).await;
    while site.stats().total_requests < 3 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let a = client::send(server.addr(), Some(TOKEN), &Command::Stop)
        .await
        .unwrap();
    assert_eq!(a.status, 200);
    let report = task.await.unwrap();
    assert_eq!(
        report.stopped,
        Some(skitter::output::report::StopReason::Interrupted)
    );
    assert!(report.todo > 0);
    server.shutdown().await;
}

/// Debian's prometheus, or `$SKITTER_PROMETHEUS`; says loudly when missing.
fn prometheus(check: &str) -> Option<PathBuf> {
    let found = std::env::var_os("SKITTER_PROMETHEUS")
        .map(PathBuf::from)
        .or_else(|| {
            let path = std::env::var_os("PATH")?;
            std::env::split_paths(&path)
                .map(|d| d.join("prometheus"))
                .find(|p| p.is_file())
        });
    if found.is_none() {
        skitter_testsite::skip::cannot_run(
            "watch",
            check,
            "prometheus is not installed (apt-get install prometheus, or set SKITTER_PROMETHEUS)",
        );
    }
    found
}

/// A port free a moment ago, for a server that takes no port 0.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[tokio::test]
async fn a_real_prometheus_scrapes_the_crawl() {
    let Some(bin) = prometheus("Prometheus scrape") else {
        return;
    };
    let site = site(40, 5);
    let stop = CancellationToken::new();
    let (server, task) = watched(builder(&site, 4), &stop, false).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 200ms\n  scrape_timeout: 200ms\nscrape_configs:\n  - job_name: skitter\n    static_configs:\n      - targets: ['{}']\n",
            server.addr()
        ),
    )
    .unwrap();
    let port = free_port();
    let web: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut child = tokio::process::Command::new(&bin)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address={web}"))
        .arg("--log.level=warn")
        .kill_on_drop(true)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("prometheus starts");
    let report = task.await.unwrap();
    let want = report.counters.html as f64;
    let query = "/api/v1/query?query=skitter_pages_total%7Bkind%3D%22html%22%7D";
    let mut last = String::new();
    let mut got = None;
    // Prometheus needs a moment to start and a scrape after the crawl's end.
    for _ in 0..300 {
        if let Ok(a) = client::get(web, query).await {
            last = a.body;
            let v: serde_json::Value = serde_json::from_str(&last).unwrap_or_default();
            got = v["data"]["result"][0]["value"][1]
                .as_str()
                .and_then(|s| s.parse::<f64>().ok());
            if got == Some(want) {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = child.kill().await;
    assert_eq!(got, Some(want), "Prometheus answered: {last}");
    assert_eq!(want, 41.0);
    server.shutdown().await;
}

/// Reads `[data-n=NAME]`'s number off the dashboard in `page`.
async fn card(page: &chromiumoxide::Page, name: &str) -> u64 {
    let js = format!("document.querySelector('[data-n={name}]').textContent");
    let text: String = page
        .evaluate(js.as_str())
        .await
        .expect("the card is there")
        .into_value()
        .expect("text");
    text.trim().parse().unwrap_or(0)
}

#[tokio::test]
async fn the_dashboard_shows_the_numbers_rising_in_chromium() {
    use futures_util::StreamExt;
    let Some(chromium) = skitter_testsite::skip::chromium("watch", "dashboard in Chromium") else {
        return;
    };
    let site = site(150, 30);
    let stop = CancellationToken::new();
    let (server, task) = watched(builder(&site, 2), &stop, false).await;
    let profile = tempfile::tempdir().unwrap();
    let config = chromiumoxide::BrowserConfig::builder()
        .chrome_executable(chromium)
        .user_data_dir(profile.path())
        .disable_default_args()
        .no_sandbox()
        .args([
            "disable-gpu",
            "disable-quic",
            "no-first-run",
            "disable-background-networking",
            "disable-component-update",
            "disable-sync",
        ])
        .build()
        .unwrap();
    let (mut browser, mut handler) = chromiumoxide::Browser::launch(config)
        .await
        .expect("chromium starts");
    let driver = tokio::spawn(async move { while handler.next().await.is_some() {} });
    let page = browser
        .new_page(format!("http://{}/", server.addr()))
        .await
        .expect("the dashboard opens");
    // The first read: once the page has polled the crawl at least once.
    let mut first = 0;
    for _ in 0..200 {
        first = card(&page, "done").await;
        if first > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(first > 0, "the dashboard never showed a finished URL");
    let mut second = first;
    for _ in 0..200 {
        second = card(&page, "done").await;
        if second > first {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(second > first, "the dashboard stayed at {first}");
    let shot = page
        .screenshot(chromiumoxide::page::ScreenshotParams::builder().build())
        .await
        .expect("a screenshot");
    assert!(shot.starts_with(b"\x89PNG"), "not a PNG");
    // A script of another origin, or markup, never ran: the page is ours.
    let title: String = page
        .evaluate("document.title")
        .await
        .unwrap()
        .into_value()
        .unwrap();
    assert_eq!(title, "skitter crawl, live");
    let _ = browser.close().await;
    let _ = browser.wait().await;
    driver.abort();
    let report = task.await.unwrap();
    assert!(report.completed());
    // Once over, `/` is the end report.
    server.ended("<!DOCTYPE html><title>skitter crawl report</title>".into());
    let end = client::get(server.addr(), "/").await.unwrap();
    assert!(end.body.contains("skitter crawl report"), "{}", end.body);
    server.shutdown().await;
}

#[tokio::test]
async fn an_origin_waiting_on_its_robots_txt_counts_as_benched() {
    let site = TestSite::start(SiteConfig {
        pages: 5,
        robots_txt: Some((503, String::new())),
        ..SiteConfig::default()
    })
    .unwrap();
    let stop = CancellationToken::new();
    let (server, task) = watched(builder(&site, 2), &stop, false).await;
    let mut benched = None;
    for _ in 0..400 {
        let s = status(server.addr()).await;
        if s["hosts_benched"] == 1 {
            benched = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let s = benched.expect("the origin never showed as benched");
    assert_eq!(s["done"], 0);
    let metrics = client::get(server.addr(), "/metrics").await.unwrap().body;
    assert_eq!(sample(&metrics, "skitter_hosts_benched"), Some(1.0));
    stop.cancel();
    task.await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_redis_workers_status_shows_the_whole_crawl_and_each_worker() {
    use skitter::cluster::{ClusterWatch, RedisStatsSink};
    use skitter::frontier::{RedisFrontier, RedisOptions};
    let Some(redis) = crate::support::redis_server::RedisServer::start(false) else {
        return;
    };
    let site = site(5, 0);
    let frontier = std::sync::Arc::new(
        RedisFrontier::connect(&redis.url(), "watched", RedisOptions::default())
            .await
            .unwrap(),
    );
    let crawler = Crawler::builder()
        .root(site.url("/"))
        .max_tasks(2)
        .frontier(frontier.clone())
        .sink(Box::new(RedisStatsSink::new(frontier.clone())))
        .build()
        .unwrap();
    let live = crawler.live();
    let stop = CancellationToken::new();
    let server = WatchServer::start_worker(
        "127.0.0.1:0".parse().unwrap(),
        Token::new(TOKEN).unwrap(),
        live.clone(),
        ClusterWatch::new(frontier.clone(), "w1"),
        stop.clone(),
    )
    .await
    .unwrap();
    let report = crawler.run(stop).await.unwrap();
    // Another worker's line, and one that stopped long ago.
    ClusterWatch::new(frontier.clone(), "w2")
        .publish(&live.snapshot().await)
        .await
        .unwrap();
    frontier.put_worker("gone", r#"{"at_ms":1}"#).await.unwrap();
    let s = status(server.addr()).await;
    assert_eq!(s["crawl"]["done"], report.done, "{s}");
    assert_eq!(s["crawl"]["counters"]["html"], report.counters.html);
    let workers: Vec<(&str, bool)> = s["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["worker"].as_str().unwrap(), w["this"] == true))
        .collect();
    assert_eq!(workers, [("w1", true), ("w2", false)]);
    assert!(!frontier.workers().await.unwrap().contains_key("gone"));
    server.shutdown().await;
}
