//! llms.txt, llms-full.txt and retrieval chunks from a real crawl of the test
//! site: llms.txt parses back (title, summary, sections, each page listed
//! once), the full file holds every page, every chunk is within its size, and
//! a page that failed once before it answered is there like any other.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::Value;
use skitter::Crawler;
use skitter::base::outcome::OutcomeKind;
use skitter::fetch::retry::RetryPolicy;
use skitter::output::{ChunksSink, LlmsTxtSink, count_tokens};
use skitter_testsite::{Faults, SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

/// An llms.txt read back: H1, summary, and each section's links.
struct Index {
    title: String,
    summary: String,
    sections: Vec<(String, Vec<String>)>,
}

fn parse(text: &str) -> Index {
    let mut lines = text.lines();
    let title = lines
        .next()
        .and_then(|l| l.strip_prefix("# "))
        .expect("an H1");
    let mut index = Index {
        title: title.into(),
        summary: String::new(),
        sections: Vec::new(),
    };
    for line in lines {
        if let Some(s) = line.strip_prefix("> ") {
            index.summary = s.into();
        } else if let Some(name) = line.strip_prefix("## ") {
            index.sections.push((name.into(), Vec::new()));
        } else if let Some(item) = line.strip_prefix("- [") {
            let url = item.split("](").nth(1).and_then(|r| r.split(')').next());
            let section = index.sections.last_mut().expect("a list under a section");
            section.1.push(url.expect("a link").into());
        }
    }
    index
}

#[tokio::test]
async fn a_crawl_writes_llms_txt_its_full_file_and_chunks() {
    // Every URL answers 503 once before it answers.
    let site = TestSite::start(SiteConfig {
        pages: 30,
        fanout: 4,
        faults: Faults {
            fail_rate: 1.0,
            fail_times: 1,
            ..Faults::default()
        },
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let llms = dir.path().join("llms.txt");
    let chunks = dir.path().join("chunks.jsonl");
    let report = Crawler::builder()
        .root(site.url("/"))
        .retry_policy(RetryPolicy {
            max_tries: 3,
            base_delay: Duration::from_millis(1),
            ..Default::default()
        })
        .sink(Box::new(LlmsTxtSink::create(&llms).unwrap()))
        .sink(Box::new(ChunksSink::create(&chunks, 64).unwrap()))
        .build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap();
    let html: BTreeSet<String> = report
        .pages
        .iter()
        .map(Result::unwrap)
        .filter(|p| p.kind == OutcomeKind::Html)
        .map(|p| p.url.to_string())
        .collect();
    assert_eq!(html.len(), 31, "the home page and 30 pages");
    assert_eq!(
        site.stats().requests("/p/7"),
        2,
        "failed once, then answered"
    );

    let index = parse(&std::fs::read_to_string(&llms).unwrap());
    assert_eq!(index.title, "skitter test site");
    assert!(!index.summary.is_empty());
    let names: Vec<&str> = index.sections.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Pages", "p"]);
    assert_eq!(index.sections[0].1, [site.url("/")]);
    let listed: Vec<&String> = index.sections.iter().flat_map(|(_, l)| l).collect();
    let unique: BTreeSet<String> = listed.iter().map(|u| u.to_string()).collect();
    assert_eq!(listed.len(), unique.len(), "each page listed once");
    assert_eq!(unique, html);

    let full = std::fs::read_to_string(dir.path().join("llms-full.txt")).unwrap();
    let sources: BTreeSet<String> = full
        .lines()
        .filter_map(|l| l.strip_prefix("Source: "))
        .map(String::from)
        .collect();
    assert_eq!(sources, html);
    assert!(full.contains("# Page 7\nSource: "));

    let mut per_page: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for line in std::fs::read_to_string(&chunks).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let markdown = v["markdown"].as_str().unwrap();
        let tokens = v["tokens"].as_u64().unwrap();
        assert!(tokens <= 64, "{v}");
        assert_eq!(tokens as usize, count_tokens(markdown));
        assert!(!markdown.trim().is_empty());
        let url = v["url"].as_str().unwrap().to_string();
        per_page
            .entry(url)
            .or_default()
            .push(v["chunk"].as_u64().unwrap());
    }
    assert_eq!(per_page.keys().cloned().collect::<BTreeSet<_>>(), html);
    for (url, indexes) in &per_page {
        let want: Vec<u64> = (0..indexes.len() as u64).collect();
        assert_eq!(indexes, &want, "{url}");
    }
    let sinks: Vec<&str> = report.sinks.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(sinks, ["llms-txt", "chunks"]);
}

#[test]
fn a_documentation_page_is_chunked_by_its_headings() {
    let html = r#"<!DOCTYPE html><html><head><title>Install</title>
<meta name="description" content="How to install Example."></head><body>
<nav><a href="/">Home</a> <a href="/docs">Docs</a></nav>
<main><h1>Install</h1><p>Example runs on Linux and macOS, from a package.</p>
<h2>Linux</h2><p>Use the package manager of your distribution.</p>
<pre><code class="language-sh">apt install example</code></pre>
<h2>macOS</h2><p>Use Homebrew, which most Macs of developers have.</p>
<table><tr><th>OS</th><th>Command</th></tr><tr><td>Linux</td><td>apt</td></tr></table>
</main><footer>Copyright Example</footer></body></html>"#;
    let url = url::Url::parse("https://docs.example.org/install").unwrap();
    let doc = skitter::content::extract(html, &url);
    let chunks = skitter::output::chunk_document(&doc, 512);
    let paths: Vec<Vec<&str>> = chunks
        .iter()
        .map(|c| c.headings.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(
        paths,
        [
            vec!["Install"],
            vec!["Install", "Linux"],
            vec!["Install", "macOS"]
        ],
        "{chunks:#?}"
    );
    assert!(
        chunks[0].markdown.starts_with("# Install\n\n"),
        "{chunks:#?}"
    );
    assert!(
        chunks[1].markdown.starts_with("## Linux\n\n"),
        "{chunks:#?}"
    );
    assert!(
        chunks[1].markdown.contains("apt install example"),
        "{chunks:#?}"
    );
    assert!(chunks[2].markdown.contains("| OS |"), "{chunks:#?}");
    assert!(
        chunks.iter().all(|c| !c.markdown.contains("Docs")),
        "no navigation"
    );
}
