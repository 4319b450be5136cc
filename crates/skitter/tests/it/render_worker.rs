//! `--render` on a page that waits for its service worker: the worker
//! should register and activate in the render browser, so that what the page
//! writes once `navigator.serviceWorker.ready` resolves (a paragraph, a link)
//! is in the rendered DOM and followed.
//!
//! Not so yet, hence ignored: the tabs' interception never sees a service
//! worker's requests, so its script meets the render browser's closed proxy
//! and the registration fails ("An unknown error occurred when fetching the
//! script"); and the virtual clock settles the page (about 0.1 s) before the
//! worker would even ask for its script. Run it with `--ignored`.
//!
//! Needs Debian's `chromium` (or `$SKITTER_CHROMIUM`); without it the test
//! says so loudly and, under CI, fails.

use skitter::output::JsonlSink;
use skitter::render::{RenderMode, RenderSettings};
use skitter::{Crawler, Report};
use skitter_testsite::{SiteConfig, TestSite, WORKER_WORD};
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "service workers' requests are not intercepted yet (see the module header)"]
async fn a_page_that_waits_for_its_service_worker_renders_its_content() {
    let Some(browser) = skitter_testsite::skip::chromium("render_worker", "service worker") else {
        return;
    };
    let site = TestSite::start(SiteConfig {
        pages: 0,
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("c.jsonl");
    let report: Report = Crawler::builder()
        .root(site.url("/js/worker"))
        .max_depth(1)
        .render(RenderSettings {
            mode: RenderMode::Always,
            chromium: browser,
            tasks: 1,
            ..RenderSettings::default()
        })
        .sink(Box::new(JsonlSink::create(&jsonl).unwrap()))
        .build()
        .expect("valid config")
        .run(CancellationToken::new())
        .await
        .expect("crawl runs");
    let stats = site.stats();
    let lines = std::fs::read_to_string(&jsonl).unwrap();
    let page = lines
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["url"] == site.url("/js/worker"))
        .expect("a line for /js/worker");
    let html = page["rendered_html"].as_str().unwrap_or_default();
    let worker = stats.requests("/js/sw.js");
    assert!(
        html.contains(WORKER_WORD),
        "{html}\n(the worker's script fetched {worker} times)\n{}",
        report.to_text()
    );
    assert_eq!(stats.requests("/js/t/worker"), 1, "{}", report.to_text());
    assert_eq!(report.counters.render_failed, 0, "{}", report.to_text());
    site.shutdown().await;
}
