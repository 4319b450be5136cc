//! The `skitter crawl` command line, run as a user would: the report's format,
//! JSON and HTML reports, the baseline's flag spellings, bad usage, and Ctrl-C.

use std::process::{Command, Stdio};
use std::time::Duration;

use skitter_testsite::{SiteConfig, TestSite};

fn skitter() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skitter"));
    cmd.stdin(Stdio::null());
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_report_has_the_baseline_format() {
    let site = TestSite::start(SiteConfig {
        pages: 20,
        ..SiteConfig::default()
    })
    .unwrap();
    let out = skitter()
        .args([
            "-q",
            "crawl",
            &site.url("/"),
            "--max_tasks",
            "5",
            "--max_redirect",
            "3",
            "--max_tries",
            "2",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "*** Report ***");
    let root = format!("{} 200 text/html utf-8 ", site.url("/"));
    assert!(lines[1].starts_with(&root), "{}", lines[1]);
    let finished = lines.iter().find(|l| l.starts_with("Finished ")).unwrap();
    let re = regex::Regex::new(r"^Finished \d+ urls in \d+\.\d{3} secs \(max_tasks=5\) \(\d+\.\d{3} urls/sec/task\) \(\d+\.\d{3} urls/sec\)$").unwrap();
    assert!(re.is_match(finished), "{finished}");
    assert!(lines.contains(&"        21 html"), "{text}");
    assert!(lines.contains(&"Todo: 0"));
    assert!(lines.iter().any(|l| l.starts_with("Done: ")));
    let date =
        regex::Regex::new(r"^Date: \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4} local time$").unwrap();
    assert!(
        date.is_match(lines.last().unwrap()),
        "{}",
        lines.last().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_and_html_reports() {
    let site = TestSite::start(SiteConfig {
        pages: 10,
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("report.html");
    let out = skitter()
        .args([
            "-q",
            "crawl",
            &site.url("/"),
            "--report",
            "json",
            "--report-html",
        ])
        .arg(&html)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["counters"]["html"], 11);
    assert_eq!(json["completed"], true);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") || page.starts_with("<!doctype html>"));
    assert!(page.contains("<svg"));
}

#[test]
fn bad_usage_exits_2_with_a_message() {
    let cases: &[&[&str]] = &[
        &["crawl"],
        &["crawl", "x.test", "--max-tasks", "many"],
        &["crawl", "x.test", "--exclude", "("],
        &["crawl", "ftp://x.test/"],
        &["crawl", "x.test", "--timeout", "soon"],
        &["crawl", "x.test", "--header", "no colon"],
        &["crawl", "x.test", "--no-such-flag"],
        // Values that once overflowed into a panic (exit 101).
        &["crawl", "x.test", "--timeout", "1e20"],
        &["crawl", "x.test", "--max-time", "1e300"],
        &["crawl", "x.test", "--grace", "99999999999999999999y"],
        &["crawl", "x.test", "--max-tasks", "18446744073709551615"],
        &["crawl", "x.test", "--per-host", "0"],
        &["fetch", "http://x.test/[0-18446744073709551615]"],
        &["fetch", "x.test", "--concurrency", "18446744073709551615"],
    ];
    for args in cases {
        let out = skitter().args(*args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(!stderr.is_empty(), "{args:?} printed no message");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_still_reports_and_exits_130() {
    let site = TestSite::start(SiteConfig {
        pages: 2000,
        latency: Duration::from_millis(50),
        ..SiteConfig::default()
    })
    .unwrap();
    let child = skitter()
        .args([
            "-q",
            "crawl",
            &site.url("/"),
            "--max-tasks",
            "4",
            "--grace",
            "1s",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    // SAFETY: sending SIGINT to a child we started and still own.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Stopped: interrupted"), "{text}");
    let todo = text.lines().find_map(|l| l.strip_prefix("Todo: ")).unwrap();
    assert!(todo.parse::<u64>().unwrap() > 0);
}

/// `skitter crawl --jsonl - | head -1`: the reader leaving stops the crawl
/// quietly, with status 0, as any command ends when its reader leaves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonl_to_a_closed_pipe_ends_quietly() {
    use std::io::{BufRead, BufReader};
    let site = TestSite::start(SiteConfig {
        pages: 3000,
        latency: Duration::from_millis(2),
        ..SiteConfig::default()
    })
    .unwrap();
    let mut child = skitter()
        .args([
            "-q",
            "crawl",
            &site.url("/"),
            "--jsonl",
            "-",
            "--max-tasks",
            "4",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.starts_with('{'), "{first}");
    drop(stdout); // the reader leaves, as `head -1` does
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
    assert!(stderr.contains("Stopped: output closed"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_blocked_by_robots_says_so_even_when_quiet() {
    let site = TestSite::start(SiteConfig {
        pages: 3,
        robots_txt: Some((503, String::new())),
        ..SiteConfig::default()
    })
    .unwrap();
    let out = skitter()
        .args(["-q", "crawl", &site.url("/"), "--max-blocked", "1s"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stderr.contains("the crawl is blocked") && stderr.contains("status 503"),
        "{stderr}"
    );
    assert!(stderr.contains("giving their URLs up"), "{stderr}");
    assert!(stdout.contains("robots_unavailable"), "{stdout}");
}

/// A rendering crawl given a secret on its command line says so once, naming
/// the flag; the same secret from a `--config` file, or a crawl that does not
/// render, says nothing. (The crawl then stops at once: its JSONL file cannot
/// be made.)
#[test]
fn a_rendering_crawl_warns_of_a_secret_on_its_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("secret.toml");
    std::fs::write(&config, "[crawl]\nproxy = \"http://u:pw@127.0.0.1:1\"\n").unwrap();
    let typed = ["--proxy", "http://u:pw@127.0.0.1:1"];
    let from_file = ["--config", config.to_str().unwrap()];
    let jsonl = dir.path().join("missing").join("x.jsonl");
    for (extra, render, warned) in [
        (&typed, "always", true),
        (&from_file, "always", false),
        (&typed, "never", false),
    ] {
        let out = skitter()
            .args(["crawl", "http://127.0.0.1:1/", "--render", render])
            .arg("--jsonl")
            .arg(&jsonl)
            .args(extra)
            .env("SKITTER_LOG", "warn")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let said = stderr
            .matches("a secret is on skitter's command line (--proxy)")
            .count();
        assert_eq!(said, usize::from(warned), "{extra:?} {render}: {stderr}");
        assert!(!stderr.contains(":pw@"), "{stderr}");
    }
}

/// Under an open-file limit of 256 (hard, so skitter cannot raise it), more
/// requests in flight than connections fit is an error that names the limit
/// and what to change, before any request; with a connection cap given, the
/// same crawl runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_requests_in_flight_than_open_files_allow_is_a_clear_error() {
    let site = TestSite::start(SiteConfig {
        pages: 5,
        ..SiteConfig::default()
    })
    .unwrap();
    let root = site.url("/");
    let limited = |args: &[&str]| {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg("ulimit -S -n 256 && ulimit -H -n 256 && exec \"$0\" \"$@\"")
            .arg(env!("CARGO_BIN_EXE_skitter"))
            .args(args)
            .stdin(Stdio::null());
        cmd.output().unwrap()
    };
    for args in [
        &["crawl", "-q", root.as_str(), "--max-tasks", "1000"][..],
        &["fetch", "-q", root.as_str(), "--concurrency", "1000"][..],
    ] {
        let out = limited(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} ran: {stderr}");
        assert!(
            stderr.contains("1000 requests in flight")
                && stderr.contains("open-file limit of 256 leaves room for 128")
                && stderr.contains("it is the hard limit")
                && stderr.contains("128 or less"),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(site.stats().total_requests, 0, "a request went out");
    let out = limited(&["crawl", "-q", root.as_str(), "--max-connections", "200"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("--max-connections) 200"),
        "a cap over the room was accepted: {stderr}"
    );
    for args in [
        &["crawl", "-q", root.as_str(), "--max-connections", "64"][..],
        &[
            "crawl",
            "-q",
            root.as_str(),
            "--max-tasks",
            "1000",
            "--max-connections",
            "64",
        ][..],
    ] {
        let out = limited(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(site.stats().total_requests > 0);
}
