//! `--render`: pages whose links only a browser sees (inline script, XHR,
//! `setTimeout`, script navigations) are found with `auto` and `always` and
//! missed with `never`; `auto` renders only the pages its rules pick; the
//! browser's requests go through skitter (robots.txt, address policy) and land
//! in the WARC.
//!
//! Needs Debian's `chromium` (or `$SKITTER_CHROMIUM`); without it the tests say
//! so loudly and, under CI, fail.

use std::path::PathBuf;

use skitter::base::outcome::RenderReason;
use skitter::base::scope::ScopeMode;
use skitter::render::{RenderMode, RenderSettings};
use skitter::{Crawler, CrawlerBuilder, Report};
use skitter_testsite::{RunningSite, SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

fn chromium(check: &str) -> Option<PathBuf> {
    skitter_testsite::skip::chromium("render", check)
}

fn site() -> RunningSite {
    TestSite::start(SiteConfig {
        pages: 0,
        robots_txt: Some((200, "User-agent: *\nDisallow: /js/private/\n".into())),
        ..SiteConfig::default()
    })
    .unwrap()
}

fn builder(site: &RunningSite, mode: RenderMode, browser: PathBuf) -> CrawlerBuilder {
    Crawler::builder()
        .root(site.url("/js/"))
        .max_tasks(8)
        .render(RenderSettings {
            mode,
            chromium: browser,
            // Two tabs for the pages /js/ links to: each tab renders pages
            // in turn, so a page is also seen on a tab a page before used.
            tasks: 2,
            // The default settle, 1 s of page time on the browser's virtual
            // clock: the pages' 100 ms timer fires within it however loaded
            // the machine is, as page time does not pass while it waits.
            ..RenderSettings::default()
        })
}

async fn crawl(b: CrawlerBuilder) -> Report {
    b.build()
        .expect("valid config")
        .run(CancellationToken::new())
        .await
        .expect("crawl runs")
}

/// The `/js/t/…` pages the crawl fetched: what it found by each route.
fn found(site: &RunningSite) -> Vec<String> {
    let stats = site.stats();
    stats
        .paths()
        .keys()
        .filter_map(|p| p.strip_prefix("/js/t/"))
        .map(str::to_string)
        .collect()
}

const BY_SCRIPT: [&str; 6] = [
    "delayed",
    "from-script",
    "inline",
    "located",
    "pushed",
    "xhr",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn script_links_are_found_with_auto_and_always_and_missed_with_never() {
    let Some(browser) = chromium("script links") else {
        return;
    };
    for mode in [RenderMode::Never, RenderMode::Auto, RenderMode::Always] {
        let site = site();
        let report = crawl(builder(&site, mode, browser.clone())).await;
        let got = found(&site);
        let mut want: Vec<&str> = match mode {
            RenderMode::Never => vec![],
            _ => BY_SCRIPT.to_vec(),
        };
        want.push("plain");
        want.sort();
        assert_eq!(got, want, "{mode:?}: {}", report.to_text());
        let rendered = report.counters.rendered;
        match mode {
            RenderMode::Never => assert_eq!(rendered, 0),
            // inline, xhr, delayed, nav, guarded; not /js/ nor /js/plain
            // (a script but enough links), nor the /js/t/ pages (no script).
            RenderMode::Auto => {
                assert_eq!(rendered, 5, "{}", report.to_text());
                assert_eq!(
                    report.counters.rendered_by[&RenderReason::ScriptFewLinks],
                    3
                );
                assert_eq!(report.counters.rendered_by[&RenderReason::Noscript], 1);
                assert_eq!(report.counters.rendered_by[&RenderReason::EmptyRoot], 1);
            }
            RenderMode::Always => {
                assert_eq!(rendered, report.counters.html, "{}", report.to_text())
            }
        }
        assert_eq!(report.counters.render_failed, 0);
        // The pages themselves were fetched once: the browser got them from
        // the plain fetch.
        assert_eq!(site.stats().requests("/js/inline"), 1);
        site.shutdown().await;
    }
}

/// A tab is navigated from page to page, not opened per page: with one tab
/// every page is rendered on the tab the page before it left, and each render
/// still sees its own page's script links, timers and requests, not the last
/// page's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_tab_renders_every_page_in_turn() {
    let Some(browser) = chromium("one tab") else {
        return;
    };
    let site = site();
    let b = builder(&site, RenderMode::Always, browser.clone()).render(RenderSettings {
        mode: RenderMode::Always,
        chromium: browser,
        tasks: 1,
        ..RenderSettings::default()
    });
    let report = crawl(b).await;
    let mut want = BY_SCRIPT.to_vec();
    want.push("plain");
    want.sort();
    assert_eq!(found(&site), want, "{}", report.to_text());
    assert_eq!(report.counters.render_failed, 0);
    assert_eq!(report.counters.rendered, report.counters.html);
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_fetches_through_skitter() {
    let Some(browser) = chromium("browser requests") else {
        return;
    };
    let site = site();
    // Any host is in scope, so the metadata address is refused by the
    // address policy, not the scope.
    let b = builder(&site, RenderMode::Auto, browser)
        .root(site.url("/js/guarded"))
        .scope_mode(ScopeMode::AnyHost)
        .max_depth(1);
    let report = crawl(b).await;
    let stats = site.stats();
    assert_eq!(
        stats.requests("/js/app.js"),
        1,
        "the public script, through skitter"
    );
    assert_eq!(
        stats.requests("/js/private/app.js"),
        0,
        "robots.txt disallows it"
    );
    let got = found(&site);
    assert!(got.contains(&"from-script".to_string()), "{got:?}");
    assert!(!got.contains(&"private".to_string()), "{got:?}");
    let counters = &report.counters;
    assert!(counters.render_refused_robots >= 1, "{}", report.to_text());
    assert!(counters.render_refused_address >= 1, "{}", report.to_text());
    assert!(counters.render_requests >= 2, "{}", report.to_text());
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_warc_keeps_the_browsers_exchanges_and_the_jsonl_the_rendered_html() {
    use skitter::output::{JsonlSink, WarcOptions, WarcSink};
    let Some(browser) = chromium("WARC of subresources") else {
        return;
    };
    let site = site();
    let dir = tempfile::tempdir().unwrap();
    let (warc, jsonl) = (dir.path().join("c.warc"), dir.path().join("c.jsonl"));
    let b = builder(&site, RenderMode::Auto, browser)
        .max_depth(1)
        .sink(Box::new(
            WarcSink::create(&warc, WarcOptions::default()).unwrap(),
        ))
        .sink(Box::new(JsonlSink::create(&jsonl).unwrap()));
    let report = crawl(b).await;
    assert!(report.completed(), "{}", report.to_text());
    let text = String::from_utf8_lossy(&std::fs::read(&warc).unwrap()).into_owned();
    for path in ["/js/xhr", "/js/links.json", "/js/app.js"] {
        let target = format!("WARC-Target-URI: {}", site.url(path));
        // One request and one response record each.
        assert_eq!(text.matches(&format!("{target}\r\n")).count(), 2, "{path}");
    }
    let lines = std::fs::read_to_string(&jsonl).unwrap();
    let xhr = lines
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["url"] == site.url("/js/xhr"))
        .expect("a line for /js/xhr");
    assert_eq!(xhr["rendered"], "noscript");
    let html = xhr["rendered_html"].as_str().unwrap();
    assert!(html.contains("href=\"/js/t/xhr\""), "{html}");
    site.shutdown().await;
}

/// A site whose every answer takes `latency`, so requests that overlap show
/// in its in-flight peak.
fn slow_site(latency: std::time::Duration) -> RunningSite {
    TestSite::start(SiteConfig {
        pages: 0,
        latency,
        record_starts: true,
        ..SiteConfig::default()
    })
    .unwrap()
}

/// Renders `roots` (every page, nothing followed) under these host rules.
fn polite(
    site: &RunningSite,
    roots: &[&str],
    browser: PathBuf,
    per_host: usize,
    delay: std::time::Duration,
) -> CrawlerBuilder {
    Crawler::builder()
        .roots(roots.iter().map(|p| site.url(p)))
        .max_depth(0)
        .max_tasks(8)
        .per_host(per_host)
        .host_delay(delay, std::time::Duration::ZERO)
        .render(RenderSettings {
            mode: RenderMode::Always,
            chromium: browser,
            tasks: 2,
            settle: std::time::Duration::from_millis(300),
            ..RenderSettings::default()
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browsers_requests_keep_the_per_host_cap() {
    let Some(browser) = chromium("per-host cap of subresources") else {
        return;
    };
    // The page's scripts are requested together by the browser: with room
    // for them they overlap (so the first assertion can fail), under
    // --per-host 1 they wait their turn.
    for (per_host, overlap) in [(8, true), (1, false)] {
        let site = slow_site(std::time::Duration::from_millis(50));
        let b = polite(
            &site,
            &["/js/parts"],
            browser.clone(),
            per_host,
            std::time::Duration::ZERO,
        );
        let report = crawl(b).await;
        let stats = site.stats();
        for i in 0..skitter_testsite::PARTS {
            assert_eq!(stats.requests(&format!("/js/part/{i}.js")), 1, "part {i}");
        }
        assert_eq!(report.counters.render_failed, 0);
        assert_eq!(
            stats.in_flight_peak > 1,
            overlap,
            "--per-host {per_host}: peak {}",
            stats.in_flight_peak
        );
        site.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browsers_requests_keep_the_delay() {
    let Some(browser) = chromium("delay of subresources") else {
        return;
    };
    let site = slow_site(std::time::Duration::ZERO);
    let gap = std::time::Duration::from_millis(150);
    // Two pages of one host: whichever goes first, the other's fetch keeps
    // the gap after the first's last script too.
    let b = polite(&site, &["/js/parts", "/js/plain"], browser, 1, gap);
    let report = crawl(b).await;
    assert_eq!(report.counters.render_failed, 0);
    let starts = site.stats().starts("/js/");
    assert_eq!(starts.len(), 2 + skitter_testsite::PARTS, "{starts:?}");
    // Less a quarter for scheduling, as the crawl's own delay test.
    let slack = gap / 4;
    for pair in starts.windows(2) {
        assert!(pair[1] - pair[0] + slack >= gap, "{starts:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mirror_keeps_the_fetched_html_unless_asked_for_the_rendered_dom() {
    use skitter::output::{MirrorOptions, MirrorSink, mirror_path};
    let Some(browser) = chromium("mirror of rendered pages") else {
        return;
    };
    for rendered in [false, true] {
        let site = site();
        let dir = tempfile::tempdir().unwrap();
        let options = MirrorOptions {
            rendered,
            convert_links: true,
            ..MirrorOptions::default()
        };
        // /js/ → /js/inline → its script-built /js/t/inline.
        let b = builder(&site, RenderMode::Auto, browser.clone())
            .max_depth(2)
            .sink(Box::new(MirrorSink::create(dir.path(), options).unwrap()));
        let report = crawl(b).await;
        assert!(report.completed(), "{}", report.to_text());
        let url = url::Url::parse(&site.url("/js/inline")).unwrap();
        let file = mirror_path(dir.path(), &url, Some("text/html"));
        let html = std::fs::read_to_string(&file).unwrap();
        // The script-built link, converted to the file its page was saved as.
        let built = url::Url::parse(&site.url("/js/t/inline")).unwrap();
        let target = mirror_path(dir.path(), &built, Some("text/html"));
        assert!(target.is_file(), "{}", target.display());
        let name = target.file_name().unwrap().to_str().unwrap();
        assert_eq!(
            html.contains(&format!("href=\"t/{name}\"")),
            rendered,
            "rendered {rendered}: {html}"
        );
        // The DOM's own serialisation, behind a doctype and a UTF-8 charset.
        let dom = html.starts_with("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">");
        assert_eq!(dom, rendered, "{html}");
        site.shutdown().await;
    }
}
