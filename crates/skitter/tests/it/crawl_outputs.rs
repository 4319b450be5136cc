//! All outputs from one real crawl at once: the WARC passes both validators
//! (`warcio check`, `fastwarc check`) and `warcio index` lists exactly the URLs
//! fetched; the JSONL parses line by line, one object per URL; the mirror has a
//! file for every HTML page.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use skitter::Crawler;
use skitter::base::outcome::OutcomeKind;
use skitter::fetch::retry::RetryPolicy;
use skitter::output::{JsonlSink, MirrorOptions, MirrorSink, WarcOptions, WarcSink};
use skitter_testsite::validators::{run_validator, warc_validators};
use skitter_testsite::{SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

fn run(bin: &Path, tool: &str, args: &[&str], file: &Path) -> (bool, String) {
    let verdict = run_validator(bin, tool, args, file);
    (verdict.ok, verdict.output)
}

#[tokio::test]
async fn one_crawl_writes_valid_warc_jsonl_and_mirror() {
    let site = TestSite::start(SiteConfig {
        pages: 40,
        specials: true,
        gzip: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("crawl.warc.gz");
    let jsonl = dir.path().join("crawl.jsonl");
    let mirror = dir.path().join("mirror");
    let fetch = skitter::fetch::FetchConfig {
        read_timeout: Duration::from_millis(500),
        total_timeout: Duration::from_secs(3),
        ..Default::default()
    };
    let report = Crawler::builder()
        .root(site.url("/"))
        .max_tasks(16)
        .per_host(16)
        .fetch_config(fetch)
        .retry_policy(RetryPolicy {
            max_tries: 2,
            base_delay: Duration::from_millis(5),
            ..Default::default()
        })
        .sink(Box::new(
            WarcSink::create(&warc, WarcOptions::default()).unwrap(),
        ))
        .sink(Box::new(
            JsonlSink::create(jsonl.to_str().unwrap()).unwrap(),
        ))
        .sink(Box::new(
            MirrorSink::create(
                &mirror,
                MirrorOptions {
                    convert_links: true,
                    ..MirrorOptions::default()
                },
            )
            .unwrap(),
        ))
        .build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap();
    assert!(report.completed());
    assert_eq!(report.sinks.len(), 3);

    // JSONL: every line is one JSON object; one page line per record, besides
    // the lines of hosts slowing down (the specials' 429).
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] != "throttle")
        .collect();
    assert_eq!(lines.len() as u64, report.done);
    assert!(text.ends_with('\n'));

    // Mirror: every HTML page has a file.
    let html = report
        .pages
        .iter()
        .map(Result::unwrap)
        .filter(|p| p.kind == OutcomeKind::Html)
        .count();
    let saved = walk(&mirror)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .count();
    assert!(saved >= html, "{saved} html files for {html} pages");

    // WARC: both validators pass, and the index lists exactly the URLs with a response.
    let Some(bin) = warc_validators("one_crawl_writes_valid_warc_jsonl_and_mirror") else {
        return;
    };
    assert!(run(&bin, "warcio", &["check"], &warc).0, "warcio check");
    let (ok, said) = run(&bin, "fastwarc", &["check", "-p"], &warc);
    assert!(ok, "fastwarc check: {said}");
    let (_, index) = run(
        &bin,
        "warcio",
        &["index", "-f", "warc-type,warc-target-uri"],
        &warc,
    );
    let indexed: BTreeSet<String> = index
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["warc-type"] == "response")
        .map(|v| v["warc-target-uri"].as_str().unwrap().to_string())
        .collect();
    let fetched: BTreeSet<String> = report
        .pages
        .iter()
        .map(Result::unwrap)
        .filter(|p| p.status.is_some())
        .map(|p| p.url.to_string())
        .collect();
    assert_eq!(indexed, fetched);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
