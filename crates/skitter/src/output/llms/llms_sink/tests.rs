use std::sync::Arc;

use url::Url;

use super::*;
use crate::base::outcome::{OutcomeKind, PageRecord, SkipReason};
use crate::content::{Block, BlockKind, Document};

fn block(kind: BlockKind, markdown: &str) -> Block {
    Block {
        kind,
        markdown: markdown.into(),
        text: markdown.trim_start_matches('#').trim().into(),
        links: Vec::new(),
    }
}

/// An HTML page at `url` with a title, a heading and a paragraph.
pub(crate) fn page(url: &str, depth: u32, title: &str, text: &str) -> Page {
    let url = Url::parse(url).unwrap();
    let mut record = PageRecord::skipped(url, SkipReason::Scope, depth, None);
    record.kind = OutcomeKind::Html;
    record.skip = None;
    record.status = Some(200);
    let doc = Document {
        title: Some(title.into()),
        blocks: vec![
            block(BlockKind::Heading(1), &format!("# {title}")),
            block(BlockKind::Paragraph, text),
        ],
        ..Document::default()
    };
    Page {
        record,
        exchange: None,
        rendered: None,
        items: None,
        content: Some(Arc::new(doc)),
        links: None,
        text: None,
    }
}

#[test]
fn the_full_file_is_named_beside_the_index() {
    let cases = [
        ("llms.txt", "llms-full.txt"),
        ("out/llms.txt", "out/llms-full.txt"),
        ("site.md", "site-full.md"),
        ("index", "index-full"),
        (".hidden", ".hidden-full"),
        ("a.b/c.txt", "a.b/c-full.txt"),
    ];
    for (given, want) in cases {
        assert_eq!(full_path(Path::new(given)), PathBuf::from(want), "{given}");
    }
}

#[tokio::test]
async fn lists_every_page_once_and_writes_all_their_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("llms.txt");
    let mut sink = LlmsTxtSink::create(&path).unwrap();
    assert!(sink.wants_content());
    let mut failed = page("http://h/gone", 1, "Gone", "x");
    failed.record.kind = OutcomeKind::HttpError;
    failed.record.status = Some(404);
    for p in [
        page("http://h/docs/b", 1, "B", "Bee text. More."),
        page("http://h/", 0, "Home", "Welcome to the site. Read on."),
        page("http://h/docs/a", 1, "A", "Aye text."),
        failed,
    ] {
        sink.record(&p).await.unwrap();
    }
    let summary = sink.finish().await.unwrap();
    assert_eq!(summary.records, 3);
    let index = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        index,
        "# Home\n\n> Welcome to the site.\n\n## Pages\n\n\
         - [Home](http://h/): Welcome to the site.\n\n## docs\n\n\
         - [A](http://h/docs/a): Aye text.\n- [B](http://h/docs/b): Bee text.\n\n"
    );
    let full = std::fs::read_to_string(dir.path().join("llms-full.txt")).unwrap();
    assert_eq!(
        full,
        "# B\nSource: http://h/docs/b\n\n# B\n\nBee text. More.\n\n\
         # Home\nSource: http://h/\n\n# Home\n\nWelcome to the site. Read on.\n\n\
         # A\nSource: http://h/docs/a\n\n# A\n\nAye text.\n\n"
    );
    assert!(!dir.path().join("llms-full.txt.partial").exists());
    assert_eq!(summary.bytes, (index.len() + full.len()) as u64);
}

#[tokio::test]
async fn past_the_cap_pages_go_to_the_full_file_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("llms.txt");
    let mut sink = LlmsTxtSink::with_cap(&path, 2).unwrap();
    for i in 0..3 {
        let p = page(&format!("http://h/p/{i}"), 1, &format!("P{i}"), "t");
        sink.record(&p).await.unwrap();
    }
    sink.finish().await.unwrap();
    let index = std::fs::read_to_string(&path).unwrap();
    assert_eq!(index.matches("\n- [").count(), 2, "{index}");
    assert!(index.contains("1 more pages are in llms-full.txt but not listed here."));
    let full = std::fs::read_to_string(dir.path().join("llms-full.txt")).unwrap();
    assert_eq!(full.matches("\nSource: ").count(), 3);
}

#[tokio::test]
async fn a_crawl_that_never_finishes_leaves_the_last_files_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("llms.txt");
    let full = dir.path().join("llms-full.txt");
    std::fs::write(&path, "# Old\n").unwrap();
    std::fs::write(&full, "old pages\n").unwrap();
    let mut sink = LlmsTxtSink::with_cap(&path, 10).unwrap();
    for i in 0..200 {
        let text = "words ".repeat(500);
        let p = page(&format!("http://h/p/{i}"), 1, "P", &text);
        sink.record(&p).await.unwrap();
    }
    sink.flush().await.unwrap();
    // Killed here: finish never runs.
    drop(sink);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "# Old\n");
    assert_eq!(std::fs::read_to_string(&full).unwrap(), "old pages\n");
    let partial = std::fs::read_to_string(dir.path().join("llms-full.txt.partial")).unwrap();
    assert_eq!(partial.matches("\nSource: ").count(), 200);
    let stray: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}
