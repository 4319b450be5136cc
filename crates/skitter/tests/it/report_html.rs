//! The one-file HTML report: its sections, its escaping of hostile text, its size on
//! big crawls, and (in a headless Chromium) that it draws with no script error and
//! that its time chart reads right for a crawl of a fraction of a second, minutes
//! or days (round axis labels that fit, rates that agree with the URLs/s card).
//!
//! The browser test needs Debian's `chromium` (or `$SKITTER_CHROMIUM`); without it
//! the test fails when `CI` is set and is skipped loudly otherwise. To look at the
//! page yourself, set `SKITTER_REPORT_HTML_KEEP=/tmp/report.html` (the time-chart
//! test then also leaves `/tmp/report.LENGTH.png` screenshots).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use skitter::Report;
use skitter::base::outcome::{ErrorKind, FetchFailure, OutcomeKind, PageRecord, SkipReason};
use skitter::output::SinkSummary;
use skitter::output::report::{Counters, ReportSummary, StopReason, Tally};
use skitter::output::report_html::{self, Timeline};
use url::Url;

/// Text that runs script if it reaches the page unescaped, in text or attributes.
const HOSTILE: &str = r#"</td></tr></table><script>document.documentElement.dataset.pwned='1'</script><img src=x onerror="document.documentElement.dataset.pwned='2'">'"&amp;"#;

/// The synthetic crawl's length: long enough that the time chart is at its cap.
const SPAN_MS: u64 = 3_000_000;

fn record(url: &str, kind: OutcomeKind, status: Option<u16>, ms: u64) -> PageRecord {
    let mut r = PageRecord::new(Url::parse(url).unwrap(), 1, None);
    r.kind = kind;
    r.status = status;
    r.attempts = 1;
    r.elapsed = Duration::from_millis(ms);
    r.size = 1000;
    r
}

fn failure(kind: ErrorKind, message: &str) -> Option<FetchFailure> {
    Some(FetchFailure {
        kind,
        message: message.to_string(),
    })
}

/// `n` ordinary pages over 30 hosts spread over 50 minutes, plus one record of each
/// other kind, some with hostile URLs and messages.
fn synthetic(n: usize) -> (Report, Timeline) {
    let mut tally = Tally::default();
    let mut timeline = Timeline::new();
    let mut add = |r: PageRecord, at: u64| {
        timeline.add(Duration::from_millis(at), &r);
        tally.add(&r).unwrap();
    };
    for i in 0..n {
        let url = format!("http://host{}.test/page/{i}?a=1&b='2'", i % 30);
        let kind = if i % 4 == 0 {
            OutcomeKind::Other
        } else {
            OutcomeKind::Html
        };
        let at = i as u64 * SPAN_MS / n as u64;
        add(record(&url, kind, Some(200), (i % 3000) as u64), at);
    }
    let mut missing = record(
        "http://host1.test/gone\"><script>x</script>",
        OutcomeKind::HttpError,
        Some(404),
        12,
    );
    missing.content_type = Some(HOSTILE.into());
    add(missing, 100);
    add(
        record(
            "http://host2.test/boom",
            OutcomeKind::HttpError,
            Some(503),
            40,
        ),
        900,
    );
    let mut failed = record(
        "http://host3.test/'onmouseover='alert(1)",
        OutcomeKind::Failed,
        None,
        30_000,
    );
    failed.error = failure(ErrorKind::Timeout, HOSTILE);
    add(failed, 2500);
    let mut redirect = record(
        "http://host1.test/loop",
        OutcomeKind::Redirect,
        Some(302),
        3,
    );
    redirect.error = failure(ErrorKind::TooManyRedirects, "10 hops");
    add(redirect, 50);
    add(
        PageRecord::skipped(
            Url::parse("http://host1.test/private").unwrap(),
            SkipReason::Robots,
            2,
            None,
        ),
        60,
    );
    let mut unrecorded = Counters::default();
    unrecorded.links_skipped.insert(SkipReason::Scope, 42);
    tally.add_unrecorded(&unrecorded);
    let report = tally.finish(ReportSummary {
        todo: 3,
        elapsed: Duration::from_millis(SPAN_MS),
        max_tasks: 100,
        stopped: Some(StopReason::Fatal(HOSTILE.into())),
        sinks: vec![
            SinkSummary {
                name: "warc".into(),
                files: vec![format!("out/{HOSTILE}.warc.gz")],
                bytes: 123_456,
                records: 7,
                refused: 0,
            },
            SinkSummary {
                name: report_html::timeline::SINK_NAME.into(),
                ..SinkSummary::default()
            },
        ],
        ..ReportSummary::default()
    });
    (report, timeline)
}

fn empty() -> (Report, Timeline) {
    (
        Tally::default().finish(ReportSummary::default()),
        Timeline::new(),
    )
}

#[test]
fn synthetic_report_has_every_section() {
    let (report, timeline) = synthetic(200);
    let html = report_html::render(&report, &timeline).unwrap();
    for want in [
        "<!DOCTYPE html>",
        "Content-Security-Policy",
        "<h2>URLs per second</h2>",
        "<h2>HTTP status codes</h2>",
        "<h2>Response times</h2>",
        "<h2>Top hosts</h2>",
        "<h2>Errors</h2>",
        "Failing URLs",
        "<h2>Skipped</h2>",
        "links_skipped_scope",
        "skipped_robots",
        "<h2>Outputs</h2>",
        ">HTTP 404<",
        ">HTTP 503<",
        ">timeout<",
        ">redirect: too_many_redirects<",
        ">failed<",
        "host1.test",
        "Showing 20 of 30 hosts",
    ] {
        assert!(html.contains(want), "missing {want:?}");
    }
    assert_eq!(html.matches("<svg class=\"chart\"").count(), 3);
    assert!(
        !html.contains(">timeline<"),
        "the timeline sink is not an output"
    );
}

#[test]
fn hostile_text_is_escaped_everywhere() {
    let (report, timeline) = synthetic(10);
    let html = report_html::render(&report, &timeline).unwrap();
    assert_eq!(
        html.matches("<script").count(),
        1,
        "only the report's own script"
    );
    assert!(!html.contains("<img"));
    assert!(!html.contains("onerror=\""));
    assert!(!html.contains("'onmouseover='"));
    assert!(html.contains("&lt;script&gt;document.documentElement.dataset.pwned=&apos;1&apos;"));
    assert!(
        html.contains("&amp;amp;"),
        "an entity in input stays literal text"
    );
}

#[test]
fn empty_crawl_renders_placeholders() {
    let (report, timeline) = empty();
    let html = report_html::render(&report, &timeline).unwrap();
    for want in [
        "Completed",
        "No URL finished while the timeline was recording.",
        "No responses.",
        "Nothing was fetched.",
        "No hosts.",
        "No failures and no error statuses.",
        "Nothing was skipped.",
    ] {
        assert!(html.contains(want), "missing {want:?}");
    }
    assert!(!html.contains("<svg"));
}

#[test]
fn size_does_not_grow_with_the_crawl() {
    let size = |n| {
        let (report, timeline) = synthetic(n);
        report_html::render(&report, &timeline).unwrap().len()
    };
    // From 3,000 URLs on the time chart has its most points (20 URLs a point at
    // least, 150 points at most); below that a smaller crawl draws fewer.
    let (small, big) = (size(3_000), size(30_000));
    assert!(
        big < small + 2000,
        "{small} bytes for 3,000 pages, {big} for 30,000"
    );
    assert!(big < 200_000, "{big} bytes");
}

#[test]
fn write_creates_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.html");
    let (report, timeline) = synthetic(5);
    report_html::write(&path, &report, &timeline).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, report_html::render(&report, &timeline).unwrap());
    assert!(report_html::write(&dir.path().join("no/such/dir.html"), &report, &timeline).is_err());
}

/// Runs headless Chromium on `page` and returns (dumped DOM, stderr).
fn dump_dom(browser: &Path, page: &Path) -> (String, String) {
    run_chromium(browser, page, "--dump-dom")
}

/// Runs headless Chromium on `page` with `mode` (`--dump-dom`, `--screenshot=…`)
/// and returns (stdout, stderr).
fn run_chromium(browser: &Path, page: &Path, mode: &str) -> (String, String) {
    let scratch = tempfile::tempdir().unwrap();
    // Output goes to files, not pipes: a DOM dump or a chatty log larger than a pipe
    // buffer would block the browser while we wait for it to exit.
    let stdout_path = scratch.path().join("stdout");
    let stderr_path = scratch.path().join("stderr");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!(
            "--user-data-dir={}",
            scratch.path().join("profile").display()
        ))
        .arg("--window-size=1200,1600")
        .arg(mode)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).unwrap())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("start chromium");
    // A guard, not an assertion on speed: a wedged browser must not hang the suite.
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    let (stdout, stderr) = (read(&stdout_path), read(&stderr_path));
    assert!(status.success(), "chromium failed: {stderr}");
    (stdout, stderr)
}

#[test]
fn draws_in_headless_chromium_without_script_errors() {
    let Some(browser) = skitter_testsite::skip::find_chromium() else {
        skitter_testsite::skip::cannot_run(
            "report_html",
            "the browser test",
            "chromium is not installed (scripts/chromium-check.sh install)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, (report, timeline)) in [("full", synthetic(500)), ("empty", empty())] {
        let path = dir.path().join(format!("{name}.html"));
        report_html::write(&path, &report, &timeline).unwrap();
        if let Some(keep) = std::env::var_os("SKITTER_REPORT_HTML_KEEP") {
            std::fs::copy(
                &path,
                PathBuf::from(keep).with_extension(format!("{name}.html")),
            )
            .unwrap();
        }
        let (dom, stderr) = dump_dom(&browser, &path);
        // The marks are attributes of the root element, set by the script's last
        // lines; the script's own text must not be able to satisfy the check.
        let root = dom
            .find("<html")
            .and_then(|at| dom[at..].split_once('>'))
            .map_or("", |(tag, _)| tag);
        let charts = if name == "full" { "3" } else { "0" };
        let want =
            format!(r#"<html lang="en" data-axes="ok" data-charts="{charts}" data-rendered="ok""#);
        assert_eq!(root, want, "{name}: the script did not finish:\n{stderr}");
        assert!(!dom.contains("data-pwned"), "{name}: hostile text ran");
        for bad in ["Uncaught", "Content Security Policy", "Refused to"] {
            assert!(
                !stderr.contains(bad),
                "{name}: browser said {bad}:\n{stderr}"
            );
        }
    }
}

/// `n` HTML pages finishing evenly over a crawl of `elapsed`.
fn steady(n: u64, elapsed: Duration) -> (Report, Timeline) {
    let mut tally = Tally::default();
    let mut timeline = Timeline::new();
    for i in 0..n {
        let r = record(
            &format!("http://h.test/p/{i}"),
            OutcomeKind::Html,
            Some(200),
            5,
        );
        timeline.add(elapsed.mul_f64(i as f64 / n as f64), &r);
        tally.add(&r).unwrap();
    }
    let report = tally.finish(ReportSummary {
        elapsed,
        max_tasks: 100,
        ..ReportSummary::default()
    });
    (report, timeline)
}

/// The text of every `<text class="t …">` (the time axis) in `html`.
fn time_labels(html: &str) -> Vec<String> {
    html.split(r#"<text class="t "#)
        .skip(1)
        .filter_map(|rest| rest.split_once('>')?.1.split_once("</text>"))
        .map(|(label, _)| label.to_string())
        .collect()
}

/// The URLs/s of each point of the time chart, from its tooltips.
fn chart_rates(html: &str) -> Vec<f64> {
    html.split(" URLs/s; ")
        .filter_map(|before| before.rsplit(": ").next())
        .filter_map(|n| n.replace(',', "").parse().ok())
        .collect()
}

#[test]
fn time_chart_reads_right_at_any_crawl_length() {
    let Some(browser) = skitter_testsite::skip::find_chromium() else {
        skitter_testsite::skip::cannot_run(
            "report_html",
            "the time chart's browser test",
            "chromium is not installed (scripts/chromium-check.sh install)",
        );
        return;
    };
    let ms = Duration::from_millis;
    let cases: [(&str, u64, Duration, &[&str]); 4] = [
        // The report that showed `0 0 0 0 1s` and 1,170 pages/s by a card of 5,017.
        (
            "subsecond",
            1170,
            ms(233),
            &["0", "50 ms", "100 ms", "150 ms", "200 ms"],
        ),
        (
            "seconds",
            20_000,
            ms(2_300),
            &["0", "0.5 s", "1.0 s", "1.5 s", "2.0 s"],
        ),
        ("minutes", 50_000, ms(200_000), &["0", "1m", "2m", "3m"]),
        (
            "days",
            20_000,
            ms(3 * 86_400_000 + 3_600_000),
            &["0", "1d", "2d", "3d"],
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let keep = std::env::var_os("SKITTER_REPORT_HTML_KEEP").map(PathBuf::from);
    for (name, n, elapsed, want) in cases {
        let (report, timeline) = steady(n, elapsed);
        let path = dir.path().join(format!("{name}.html"));
        report_html::write(&path, &report, &timeline).unwrap();
        let (dom, stderr) = dump_dom(&browser, &path);
        let root = dom
            .find("<html")
            .and_then(|at| dom[at..].split_once('>'))
            .map_or("", |(tag, _)| tag);
        assert!(
            root.contains(r#"data-axes="ok""#) && root.contains(r#"data-rendered="ok""#),
            "{name}: {root}\n{stderr}"
        );
        assert_eq!(time_labels(&dom), want, "{name}: time axis");
        // Every point of an even crawl is at the card's rate, give or take the
        // timeline's bucketing (a point is a whole number of 1 ms buckets).
        let card = report.urls_per_sec();
        let rates = chart_rates(&dom);
        assert!(!rates.is_empty(), "{name}: no rates in the chart");
        for r in &rates {
            assert!(
                (r / card - 1.0).abs() < 0.25,
                "{name}: a point at {r}/s, card {card}/s"
            );
        }
        if let Some(keep) = &keep {
            let png = keep.with_extension(format!("{name}.png"));
            run_chromium(&browser, &path, &format!("--screenshot={}", png.display()));
        }
    }
}
