//! The Markdown tree (`--markdown`) and JSONL content fields (`--content`)
//! from real crawls of the test site's `/docs/` section: the tree's paths and
//! front matter, links pointed at the tree's files, the site's template
//! dropped from every page (the first ones too) and counted, pages that fail
//! once still in the tree, and one file per 2xx HTML page whatever the site.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use skitter::fetch::retry::RetryPolicy;
use skitter::output::{ContentField, JsonlSink, MarkdownSink, Sink};
use skitter::{Crawler, Report};
use skitter_testsite::docs::{ARTICLES, TEMPLATE_TEXTS, marker};
use skitter_testsite::{Faults, RunningSite, SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

/// Every file under `dir`, relative, `/`-separated, sorted.
pub fn tree(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, &mut files);
    let mut out: Vec<String> = files
        .iter()
        .map(|p| {
            p.strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    out.sort();
    out
}

/// The tree a crawl of the docs section must write, under the site's host.
pub fn docs_tree(site: &RunningSite) -> Vec<String> {
    let host = host_dir(site);
    let mut want: Vec<String> = ["docs/index.md", "docs/latin1.md", "docs/malformed.md"]
        .iter()
        .map(|p| format!("{host}/{p}"))
        .collect();
    want.extend((1..=ARTICLES).map(|n| format!("{host}/docs/a/{n}.md")));
    want.sort();
    want
}

/// The site's directory in a tree: `127.0.0.1_PORT`.
pub fn host_dir(site: &RunningSite) -> String {
    format!("127.0.0.1_{}", site.addr().port())
}

async fn crawl(site: &RunningSite, sinks: Vec<Box<dyn Sink>>, tries: u32) -> Report {
    let mut b = Crawler::builder()
        .root(site.url("/docs/"))
        .max_tasks(4)
        .per_host(4)
        .retry_policy(RetryPolicy {
            max_tries: tries,
            base_delay: Duration::from_millis(1),
            ..Default::default()
        });
    for sink in sinks {
        b = b.sink(sink);
    }
    b.build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap()
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[tokio::test]
async fn the_docs_section_becomes_a_tree_without_its_template() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let out = tempfile::tempdir().unwrap();
    let md = out.path().join("md");
    let report = crawl(&site, vec![Box::new(MarkdownSink::create(&md).unwrap())], 1).await;
    assert_eq!(tree(&md), docs_tree(&site));
    let host = host_dir(&site);

    // Front matter: JSON strings, the fields the page has.
    let a1 = read(&md, &format!("{host}/docs/a/1.md"));
    let url = site.url("/docs/a/1");
    let lines: Vec<&str> = a1.lines().take(7).collect();
    assert_eq!(lines[0], "---", "{a1}");
    assert_eq!(lines[1], format!("url: \"{url}\""));
    assert_eq!(lines[2], "title: \"Article 1\"");
    assert!(
        lines[3].starts_with("fetched: \"20") && lines[3].ends_with("Z\""),
        "{a1}"
    );
    assert_eq!(lines[4], "lang: \"en\"");
    assert_eq!(
        lines[5],
        "description: \"Article 1, from the example docs\""
    );
    assert_eq!(lines[6], "---");

    // Content kept with its structure.
    assert!(a1.contains(&marker(1)), "{a1}");
    assert!(a1.contains("```rust"), "{a1}");
    assert!(a1.contains("| Option | Value |"), "{a1}");
    assert!(a1.contains("Inner point A"), "{a1}");

    // Links: a page of the tree relatively with its fragment, the rest absolute.
    assert!(a1.contains("](2.md#usage)"), "{a1}");
    assert!(a1.contains("](https://example.org/ext)"), "{a1}");
    assert!(
        a1.contains(&format!("]({})", site.url("/docs/guide.pdf"))),
        "{a1}"
    );
    assert!(
        a1.contains(&format!("]({})", site.url("/asset/logo.png"))),
        "{a1}"
    );
    let a7 = read(&md, &format!("{host}/docs/a/{ARTICLES}.md"));
    assert!(a7.contains("](1.md#usage)"), "{a7}");
    let index = read(&md, &format!("{host}/docs/index.md"));
    assert!(index.contains("](a/3.md)"), "{index}");

    // Other charsets and broken markup still make pages.
    let latin1 = read(&md, &format!("{host}/docs/latin1.md"));
    assert!(latin1.contains("title: \"Café\""), "{latin1}");
    assert!(latin1.contains("crème brûlée"), "{latin1}");
    assert!(read(&md, &format!("{host}/docs/malformed.md")).contains(&marker(100)));

    // The template is gone from every page, the first ones included.
    for rel in tree(&md) {
        let text = read(&md, &rel);
        for t in TEMPLATE_TEXTS {
            assert!(!text.contains(t), "{rel} keeps {t:?}:\n{text}");
        }
    }
    let c = &report.counters;
    assert_eq!(c.content_pages, 10);
    assert!(c.content_boilerplate_blocks >= 10, "{c:?}");
    assert!(c.content_boilerplate_bytes > 0, "{c:?}");
    assert!(!md.join(skitter::output::MARKDOWN_LINK_LOG).exists());
}

#[tokio::test]
async fn jsonl_lines_carry_the_content_fields_asked_for() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let out = tempfile::tempdir().unwrap();
    let jsonl = out.path().join("c.jsonl");
    let fields = vec![
        ContentField::Markdown,
        ContentField::Title,
        ContentField::Author,
    ];
    let sink = JsonlSink::create(&jsonl).unwrap().with_content(fields);
    crawl(&site, vec![Box::new(sink)], 1).await;
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let mut pages = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let html = v["kind"] == "html";
        assert_eq!(v.get("markdown").is_some(), html, "{line}");
        assert_eq!(v.get("title").is_some(), html, "{line}");
        assert!(v.get("text").is_none(), "{line}");
        if v["url"] == site.url("/docs/a/2") {
            assert_eq!(v["title"], "Article 2");
            assert_eq!(v["author"], serde_json::Value::Null);
            assert!(
                v["markdown"].as_str().unwrap().contains(&marker(2)),
                "{line}"
            );
        }
        pages += usize::from(html);
    }
    assert_eq!(pages, 10);
}

#[tokio::test]
async fn pages_that_fail_once_end_up_in_the_tree() {
    for faults in ["fail=1,times=1,status=503", "fail=1,times=1,reset=1"] {
        let site = TestSite::start(SiteConfig {
            faults: Faults::from_str(faults).unwrap(),
            ..SiteConfig::default()
        })
        .unwrap();
        let out = tempfile::tempdir().unwrap();
        let md = out.path().join("md");
        let report = crawl(&site, vec![Box::new(MarkdownSink::create(&md).unwrap())], 3).await;
        assert!(
            report.counters.retries >= 10,
            "{faults}: {:?}",
            report.counters
        );
        assert_eq!(tree(&md), docs_tree(&site), "{faults}");
    }
}

mod property {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 6,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// Whatever the site (sizes, gzip, the special cases: redirects,
        /// errors, broken encodings, cut bodies, assets), the tree holds one
        /// file per 2xx HTML page, at that page's path.
        #[test]
        fn one_file_per_html_page(
            pages in 1usize..40,
            fanout in 1usize..6,
            specials: bool,
            gzip: bool,
        ) {
            let rt = tokio::runtime::Runtime::new().unwrap();
            let (files, want) = rt.block_on(async {
                let site = TestSite::start(SiteConfig {
                    pages,
                    fanout,
                    specials,
                    gzip,
                    ..SiteConfig::default()
                })
                .unwrap();
                let out = tempfile::tempdir().unwrap();
                let md = out.path().join("md");
                let jsonl = out.path().join("c.jsonl");
                let report = Crawler::builder()
                    .root(site.url("/"))
                    .max_tasks(8)
                    .fetch_config(skitter::fetch::FetchConfig {
                        read_timeout: Duration::from_millis(300),
                        total_timeout: Duration::from_secs(2),
                        ..Default::default()
                    })
                    .retry_policy(RetryPolicy { max_tries: 1, ..Default::default() })
                    .sink(Box::new(MarkdownSink::create(&md).unwrap()))
                    .sink(Box::new(JsonlSink::create(&jsonl).unwrap()))
                    .build()
                    .unwrap()
                    .run(CancellationToken::new())
                    .await
                    .unwrap();
                let mut want: Vec<String> = std::fs::read_to_string(&jsonl)
                    .unwrap()
                    .lines()
                    .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                    .filter(|v| v["kind"] == "html")
                    .map(|v| {
                        let url = url::Url::parse(v["url"].as_str().unwrap()).unwrap();
                        let path = skitter::output::markdown_path(&md, &url);
                        path.strip_prefix(&md).unwrap().to_string_lossy().replace('\\', "/")
                    })
                    .collect();
                want.sort();
                want.dedup();
                assert_eq!(report.counters.html as usize, want.len());
                (tree(&md), want)
            });
            prop_assert_eq!(files, want);
        }
    }
}

/// Huge, deeply nested and tag-bomb pages (the test site's `/hostile/`)
/// each still make one file, under the crawl's caps, and the crawl ends.
/// (The nesting is kept modest: parsing nested `<div>`s into a DOM takes
/// time quadratic in the depth, about 3 s for 20,000 in a debug build.)
#[tokio::test]
async fn hostile_pages_still_make_one_file_each() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let out = tempfile::tempdir().unwrap();
    let md = out.path().join("md");
    let roots = [
        "/hostile/big/4096",
        "/hostile/deep/2000",
        "/hostile/noscript/2048",
    ];
    let mut b = Crawler::builder().max_depth(0);
    for root in roots {
        b = b.root(site.url(root));
    }
    let report = b
        .sink(Box::new(MarkdownSink::create(&md).unwrap()))
        .build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(report.counters.content_pages, 3, "{:?}", report.counters);
    let host = host_dir(&site);
    let want = vec![
        format!("{host}/hostile/big/4096.md"),
        format!("{host}/hostile/deep/2000.md"),
        format!("{host}/hostile/noscript/2048.md"),
    ];
    assert_eq!(tree(&md), want);
}
