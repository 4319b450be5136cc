//! `--markdown`, `--content` and the content options with the real binary:
//! a crawl set up from a `--config` file, `skitter fetch --markdown`, the
//! counters in the report, and bad values refused before anything runs.

use crate::support::cli::{markdown_files, show, skitter_in as skitter};
use skitter_testsite::docs::marker;
use skitter_testsite::{SiteConfig, TestSite};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_writes_markdown_and_content_fields_from_the_config_file() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("c.toml"),
        format!(
            "[crawl]\nroots = [\"{}\"]\nmarkdown = \"md\"\njsonl = \"c.jsonl\"\n\
             content = [\"markdown\", \"title\"]\ncontent-scope = \"main\"\n\
             content-exclude = [\"table\"]\n",
            site.url("/docs/")
        ),
    )
    .unwrap();
    let out = skitter(dir.path(), &["-q", "crawl", "--config", "c.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("content_pages"), "{report}");
    assert!(report.contains("content_boilerplate_blocks"), "{report}");
    let files = markdown_files(&dir.path().join("md"));
    assert_eq!(files.len(), 10, "{files:?}");
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(!text.contains("| Option |"), "a table kept: {text}");
    }
    let jsonl = std::fs::read_to_string(dir.path().join("c.jsonl")).unwrap();
    let a3: serde_json::Value = jsonl
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["url"] == site.url("/docs/a/3"))
        .unwrap();
    assert_eq!(a3["title"], "Article 3");
    assert!(a3["markdown"].as_str().unwrap().contains(&marker(3)));
    assert!(a3.get("text").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_writes_markdown_for_a_url_list() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let urls = site.url("/docs/a/[1-2]");
    let out = skitter(
        dir.path(),
        &[
            "-q",
            "fetch",
            "--markdown",
            "md",
            "--jsonl",
            "f.jsonl",
            "--content",
            "text",
            &urls,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let host = format!("127.0.0.1_{}", site.addr().port());
    for n in 1..=2 {
        let file = dir.path().join(format!("md/{host}/docs/a/{n}.md"));
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains(&marker(n)), "{text}");
        assert!(text.contains("title: \"Article"), "{text}");
    }
    // Article 1 links to article 2, which is in the tree.
    let a1 = std::fs::read_to_string(dir.path().join(format!("md/{host}/docs/a/1.md"))).unwrap();
    assert!(a1.contains("](2.md#usage)"), "{a1}");
    let jsonl = std::fs::read_to_string(dir.path().join("f.jsonl")).unwrap();
    assert!(jsonl.lines().all(|l| l.contains("\"text\":\"")), "{jsonl}");
}

#[tokio::test]
async fn bad_content_options_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[&[&str]] = &[
        &[
            "crawl",
            "--jsonl",
            "x",
            "--content",
            "bogus",
            "http://127.0.0.1:9/",
        ],
        &["crawl", "--content", "text", "http://127.0.0.1:9/"],
        &[
            "crawl",
            "--markdown",
            "md",
            "--content-include",
            "[[[",
            "http://127.0.0.1:9/",
        ],
        &["crawl", "--content-scope", "half", "http://127.0.0.1:9/"],
        &[
            "fetch",
            "--markdown",
            "md",
            "--content-exclude",
            "a[",
            "http://127.0.0.1:9/",
        ],
    ];
    for args in cases {
        let out = skitter(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
    }
}
