//! `--llms-txt` and `--chunks` end to end: the real binary, `crawl` and
//! `fetch`, against the local test site; and a crawl killed mid-way leaves
//! the last llms.txt as it was.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use skitter::output::count_tokens;
use skitter_testsite::{SiteConfig, TestSite};

use crate::support::cli::{finish, run, skitter};

/// The chunk lines of `path`, each checked: within `max` tokens, counted
/// right, not empty.
fn chunk_lines(path: &Path, max: u64) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for l in &lines {
        let markdown = l["markdown"].as_str().unwrap();
        let tokens = l["tokens"].as_u64().unwrap();
        assert!(tokens <= max, "{l}");
        assert_eq!(tokens as usize, count_tokens(markdown), "{l}");
        assert!(!markdown.trim().is_empty(), "{l}");
    }
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_writes_llms_txt_beside_its_full_file_and_chunks() {
    let site = TestSite::start(SiteConfig {
        pages: 12,
        page_size: 3000,
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let llms = dir.path().join("site.txt");
    let chunks = dir.path().join("chunks.jsonl");
    let root = site.url("/");
    let args = [
        "-q",
        "crawl",
        &root,
        "--report",
        "json",
        "--llms-txt",
        llms.to_str().unwrap(),
        "--chunks",
        chunks.to_str().unwrap(),
        "--chunk-tokens",
        "48",
    ];
    let out = run(&args).await;
    out.assert_ok("crawl");
    let report: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    let sinks: Vec<&str> = report["sinks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(sinks, ["llms-txt", "chunks"]);

    let index = std::fs::read_to_string(&llms).unwrap();
    assert!(index.starts_with("# skitter test site\n\n> "), "{index}");
    assert!(index.contains("\n## Pages\n\n"), "{index}");
    assert!(index.contains("\n## p\n\n"), "{index}");
    assert_eq!(index.matches("\n- [").count(), 13, "{index}");
    let full = std::fs::read_to_string(dir.path().join("site-full.txt")).unwrap();
    assert_eq!(full.matches("\nSource: ").count(), 13);

    let lines = chunk_lines(&chunks, 48);
    let pages: std::collections::BTreeSet<&str> =
        lines.iter().map(|l| l["url"].as_str().unwrap()).collect();
    assert_eq!(pages.len(), 13);
    assert!(
        lines.iter().any(|l| l["chunk"] == 1),
        "3 KB pages need more than one chunk"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_writes_chunks_and_llms_txt_for_each_html_page() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let chunks = dir.path().join("chunks.jsonl");
    let llms = dir.path().join("llms.txt");
    let (a, b) = (site.url("/p/1"), site.url("/p/2"));
    let args = [
        "fetch",
        "--chunks",
        chunks.to_str().unwrap(),
        "--llms-txt",
        llms.to_str().unwrap(),
        &a,
        &b,
    ];
    run(&args).await.assert_ok("fetch");
    let index = std::fs::read_to_string(&llms).unwrap();
    assert!(index.starts_with("# Page 1\n"), "{index}");
    assert!(
        index.contains(&format!("\n## p\n\n- [Page 1]({a})")),
        "{index}"
    );
    assert!(index.contains(&format!("\n- [Page 2]({b})")), "{index}");
    let full = std::fs::read_to_string(dir.path().join("llms-full.txt")).unwrap();
    assert_eq!(full.matches("\nSource: ").count(), 2);
    let lines = chunk_lines(&chunks, 512);
    let mut urls: Vec<&str> = lines.iter().map(|l| l["url"].as_str().unwrap()).collect();
    urls.dedup();
    urls.sort();
    assert_eq!(urls, [a.as_str(), b.as_str()]);
    assert_eq!(lines[0]["chunk"], 0);
    assert!(
        lines
            .iter()
            .all(|l| l["title"].as_str().unwrap().starts_with("Page "))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_crawl_leaves_the_last_llms_txt_whole() {
    // Every answer takes a minute: the crawl cannot end before the kill.
    let site = TestSite::start(SiteConfig {
        latency: Duration::from_secs(60),
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let llms = dir.path().join("llms.txt");
    std::fs::write(&llms, "# Last crawl\n").unwrap();
    let root = site.url("/");
    let mut child = skitter(&["-q", "crawl", &root, "--llms-txt", llms.to_str().unwrap()]);
    let partial = dir.path().join("llms-full.txt.partial");
    for _ in 0..600 {
        if partial.exists() && site.stats().total_requests > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(partial.exists(), "the crawl started");
    child.start_kill().unwrap();
    let run = finish(child).await;
    assert_eq!(run.code, None, "killed by a signal");
    assert_eq!(std::fs::read_to_string(&llms).unwrap(), "# Last crawl\n");
    assert!(!dir.path().join("llms-full.txt").exists());
}

#[tokio::test]
async fn a_chunk_size_too_small_is_refused() {
    let out = run(&[
        "crawl",
        "x.test",
        "--chunks",
        "c.jsonl",
        "--chunk-tokens",
        "8",
    ])
    .await;
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("at least 16 tokens"), "{}", out.stderr);
}
