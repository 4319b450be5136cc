//! `skitter fetch` end to end: the real binary against the local test site, in a
//! temporary directory, checking exit statuses, stdin input, outputs and messages.

use std::path::Path;
use std::process::{Output, Stdio};

use skitter_testsite::{RunningSite, SiteConfig, TestSite};
use tokio::io::AsyncWriteExt;

fn specials() -> RunningSite {
    TestSite::start(SiteConfig {
        specials: true,
        ..SiteConfig::default()
    })
    .expect("test site starts")
}

/// Runs `skitter fetch ARGS` in `dir`, feeding `stdin`.
async fn fetch(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_skitter"))
        .arg("fetch")
        .args(["--retry-delay", "5ms", "--max-retry-after", "10ms"])
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let mut input = child.stdin.take().expect("piped stdin");
    input
        .write_all(stdin.as_bytes())
        .await
        .expect("stdin written");
    drop(input);
    child.wait_with_output().await.expect("the binary finishes")
}

fn show(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test]
async fn all_ok_exits_0_and_saves_with_a_template() {
    let site = specials();
    let dir = tempfile::tempdir().unwrap();
    let pattern = site.url("/p/[001-003]");
    let pages = site.url("/p/[1-3]");
    let args = ["-o", "out", "--name-template", "{n}.html", &pages, &pattern];
    let out = fetch(dir.path(), &args, "").await;
    // /p/001 is not /p/1: the site answers 404 for non-canonical numbers.
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let out = fetch(
        dir.path(),
        &["-o", "out", "--name-template", "{n}.html", &pages],
        "",
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(stderr(&out).contains("3 URLs in"), "{}", show(&out));
    for n in 1..=3 {
        let body = std::fs::read_to_string(dir.path().join(format!("out/{n}.html"))).unwrap();
        assert!(body.starts_with("<!DOCTYPE html>"), "{n}: {body:.80}");
    }
}

#[tokio::test]
async fn failures_exit_1_and_are_counted_by_kind() {
    let site = specials();
    let dir = tempfile::tempdir().unwrap();
    // The flags downloader: an image and a metadata document per item.
    let gifs = site.url("/flags/{ad,ar,br}.gif");
    let logo = site.url("/asset/logo.png");
    let error = site.url("/error");
    let out = fetch(dir.path(), &["-o", "flags", "-v", &gifs, &logo, &error], "").await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = stderr(&out);
    let not_found = err
        .lines()
        .find(|l| l.trim_start().starts_with("not found"));
    assert!(
        not_found.is_some_and(|l| l.trim_end().ends_with(" 3")),
        "{err}"
    );
    let http_500 = err.lines().find(|l| l.trim_start().starts_with("http 500"));
    assert!(
        http_500.is_some_and(|l| l.trim_end().ends_with(" 1")),
        "{err}"
    );
    // -v: one line per failure.
    assert_eq!(err.matches(": HTTP 404").count(), 3, "{err}");
    let saved = dir
        .path()
        .join("flags")
        .join(format!("127.0.0.1_{}", site.addr().port()));
    assert!(saved.join("asset/logo.png").is_file());
    assert!(!saved.join("flags").exists());
}

#[tokio::test]
async fn reads_stdin_and_reports_malformed_lines() {
    let site = specials();
    let dir = tempfile::tempdir().unwrap();
    let stdin = format!(
        "# list\n{}\n{}\n",
        site.url("/p/[1-2]"),
        site.url("/p/{1,2")
    );
    let out = fetch(dir.path(), &["-", "--jsonl", "-"], &stdin).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        stderr(&out).contains("stdin:3: skipped: bad pattern"),
        "{}",
        show(&out)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 2, "{}", show(&out));
    assert!(stdout.lines().all(|l| l.contains("\"status\":200")));
}

#[tokio::test]
async fn skip_existing_makes_a_rerun_fetch_only_what_is_missing() {
    let site = specials();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("list.txt"), site.url("/p/[1-4]")).unwrap();
    let args = ["-i", "list.txt", "-o", "out", "--skip-existing"];
    let first = fetch(dir.path(), &args, "").await;
    assert_eq!(first.status.code(), Some(0), "{}", show(&first));
    let host = format!("out/127.0.0.1_{}", site.addr().port());
    std::fs::remove_file(dir.path().join(&host).join("p/3")).unwrap();
    let second = fetch(dir.path(), &args, "").await;
    assert_eq!(second.status.code(), Some(0), "{}", show(&second));
    assert!(
        stderr(&second).contains("skipped (file exists)"),
        "{}",
        show(&second)
    );
    assert_eq!(site.stats().requests("/p/3"), 2);
    assert_eq!(site.stats().requests("/p/1"), 1);
}

#[tokio::test]
async fn bad_usage_exits_2() {
    let site = specials();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a-file"), b"x").unwrap();
    let url = site.url("/p/1");
    let cases: &[(&[&str], &str)] = &[
        (
            &["-i", "no-such-file.txt"],
            "cannot read input file no-such-file.txt",
        ),
        (&[], "no URLs given"),
        (&["--concurrency", "many", &url], "invalid value"),
        (&["--concurrency", "0", &url], "at least 1"),
        (
            &["-o", "a-file", &url],
            "cannot use output directory a-file",
        ),
        (&["--name-template", "{n}", &url], "--output-dir"),
        (
            &["-o", "out", "--name-template", "{x}", &url],
            "unknown placeholder",
        ),
        (&["-H", "no colon", &url], "invalid --header"),
    ];
    for (args, want) in cases {
        let out = fetch(dir.path(), args, "").await;
        assert_eq!(out.status.code(), Some(2), "{args:?}\n{}", show(&out));
        assert!(
            stderr(&out).contains(want),
            "{args:?}: want {want:?}\n{}",
            show(&out)
        );
    }
    assert_eq!(site.stats().total_requests, 0);
}

#[tokio::test]
async fn refused_addresses_are_failures_of_kind_blocked() {
    let site = specials();
    let dir = tempfile::tempdir().unwrap();
    // Never connected to: refused before any request (no timeout is waited for).
    let metadata = "http://169.254.169.254/latest/meta-data/";
    let out = fetch(dir.path(), &["--allow-private", metadata], "").await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(stderr(&out).contains("blocked"), "{}", show(&out));
    // The named host itself is fine by default, refused with --deny-private.
    let page = site.url("/p/1");
    let out = fetch(dir.path(), &[&page], "").await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let out = fetch(dir.path(), &["--deny-private", &page], "").await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(stderr(&out).contains("blocked"), "{}", show(&out));
    assert_eq!(site.stats().total_requests, 1);
}

/// `--if-modified`: the second run over a site whose pages changed in part
/// counts them by change, and its JSONL lines say the same per URL.
#[tokio::test]
async fn if_modified_reruns_count_changes() {
    let site = TestSite::start(SiteConfig {
        pages: 40,
        versions: Some(skitter_testsite::Versions {
            change: 0.2,
            ..skitter_testsite::Versions::default()
        }),
        ..SiteConfig::default()
    })
    .expect("test site starts");
    let dir = tempfile::tempdir().unwrap();
    let pages = site.url("/p/[0-39]");
    let args = ["-o", "out", "--if-modified", "--jsonl", "run.jsonl", &pages];
    let first = fetch(dir.path(), &args, "").await;
    assert_eq!(first.status.code(), Some(0), "{}", show(&first));
    assert!(stderr(&first).contains("change: new"), "{}", show(&first));
    assert!(dir.path().join("out/.skitter-fetch-index").is_file());
    site.next_pass();
    let second = fetch(dir.path(), &args, "").await;
    assert_eq!(second.status.code(), Some(0), "{}", show(&second));
    let text = stderr(&second);
    let count = |class: &str| -> u64 {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(&format!("change: {class}")))
            .map_or(0, |n| n.trim().parse().unwrap())
    };
    let (changed, unchanged) = (count("changed"), count("unchanged"));
    assert!(changed > 0 && unchanged > 0, "{text}");
    assert_eq!(changed + unchanged, 40, "{text}");
    let jsonl = std::fs::read_to_string(dir.path().join("run.jsonl")).unwrap();
    let lines = jsonl
        .lines()
        .filter(|l| l.contains("\"change\":\"unchanged\""));
    assert_eq!(lines.count() as u64, unchanged, "{jsonl}");

    let out = fetch(dir.path(), &["--if-modified", &pages], "").await;
    assert_eq!(out.status.code(), Some(2), "needs -o: {}", show(&out));
}

/// Every file under `dir`, sorted, relative.
fn names(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn the_flags_downloader_is_one_command() {
    let site = TestSite::start(SiteConfig::default()).expect("test site starts");
    let dir = tempfile::tempdir().unwrap();
    let pattern = site.url("/flags/{br,cn,jp,xd}/metadata.json");
    let args = [
        &pattern,
        "--let",
        "country=json:/country",
        "--then",
        "{1}.gif",
        "-o",
        "flags",
        "--name-template",
        "{country}.gif",
    ];
    let out = fetch(dir.path(), &args, "").await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert_eq!(
        names(&dir.path().join("flags")),
        ["Brazil.gif", "China.gif", "Japan.gif"]
    );
    let err = stderr(&out);
    // The failed value is printed without -v, naming the value and the URL.
    assert!(
        err.contains("value country (json:/country) of http://"),
        "{err}"
    );
    assert!(err.contains("/flags/xd/metadata.json: missing"), "{err}");
    assert!(err.contains("value not read                   1"), "{err}");
}

#[tokio::test]
async fn a_paginated_api_is_followed_from_a_config_recipe() {
    let site = TestSite::start(SiteConfig::default()).expect("test site starts");
    let dir = tempfile::tempdir().unwrap();
    let recipe = "[fetch]\n\
        next = \"after=json:/cursor\"\n\
        max-pages = 3\n\
        field = [\"id=json:/items/0/id\"]\n\
        jsonl = \"pages.jsonl\"\n";
    std::fs::write(dir.path().join("api.toml"), recipe).unwrap();
    let chains = site.url("/paged/cursor/[1-2]/5");
    let loops = site.url("/paged/loop/9/2?page=1");
    let args = ["--config", "api.toml", &chains, &loops];
    let out = fetch(dir.path(), &args, "").await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let err = stderr(&out);
    assert!(err.contains("chain pages                      7"), "{err}");
    assert!(err.contains("chains at --max-pages            2"), "{err}");
    let jsonl = std::fs::read_to_string(dir.path().join("pages.jsonl")).unwrap();
    assert!(
        jsonl.contains("\"2-3-1\"") && !jsonl.contains("\"2-4-1\""),
        "{jsonl}"
    );
    // The loop's chain ends at no cursor: json:/cursor is null on its pages.
    let out = fetch(dir.path(), &["--next", "json:/next", &loops], "").await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        stderr(&out).contains("note:") && stderr(&out).contains("the chain loops"),
        "{}",
        show(&out)
    );
}

#[tokio::test]
async fn a_state_file_lets_a_second_run_skip_finished_chains() {
    let site = TestSite::start(SiteConfig::default()).expect("test site starts");
    let dir = tempfile::tempdir().unwrap();
    let chains = site.url("/paged/link/[1-2]/3");
    let args = ["--next", "link:next", "--state", "fetch.state", &chains];
    let out = fetch(dir.path(), &args, "").await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let out = fetch(dir.path(), &args, "").await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        stderr(&out).contains("skipped (done before)            2"),
        "{}",
        show(&out)
    );
    assert_eq!(site.stats().requests("/paged/link/1/3?page=3"), 1);
    // Without a recipe there is nothing for a state file to record.
    let out = fetch(dir.path(), &["--state", "fetch.state", &chains], "").await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
}

#[tokio::test]
async fn http2_prior_knowledge_fetches_over_h2c() {
    // An API over h2c: every request goes out as HTTP/2 from the first byte,
    // and the choice conflicts with --http1-only.
    let site = specials();
    let dir = tempfile::tempdir().unwrap();
    let pages = site.url("/p/[1-3]");
    let args = ["--http2-prior-knowledge", "-o", "out", &pages];
    let out = fetch(dir.path(), &args, "").await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stats = site.stats();
    assert_eq!(stats.http2_requests, 3, "{stats:?}");
    assert_eq!(stats.total_requests, 3);
    let both = ["--http2-prior-knowledge", "--http1-only", &pages];
    let out = fetch(dir.path(), &both, "").await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        show(&out)
    );
}
