use serde_json::Value;

use super::*;
use crate::output::llms::llms_sink::tests::page;
use crate::output::llms::token;

#[tokio::test]
async fn writes_a_line_per_chunk_within_the_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chunks.jsonl");
    let mut sink = ChunksSink::create(&path, 32).unwrap();
    assert!(sink.wants_content());
    let long = "The crawler keeps every page's text for the index. ".repeat(20);
    sink.record(&page("http://h/a", 1, "A", "hello world"))
        .await
        .unwrap();
    sink.record(&page("http://h/b", 1, "Bee", long.trim()))
        .await
        .unwrap();
    let summary = sink.finish().await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(summary.records, lines.len() as u64);
    assert_eq!(summary.bytes, text.len() as u64);
    // "# A\n\nhello world": "# A" 2 tokens, "\n\n" 1, "hello world" 2.
    assert_eq!(
        lines[0],
        serde_json::json!({
            "url": "http://h/a", "title": "A", "chunk": 0, "headings": ["A"],
            "tokens": 5, "markdown": "# A\n\nhello world"
        })
    );
    let b: Vec<&Value> = lines.iter().filter(|l| l["url"] == "http://h/b").collect();
    assert!(b.len() > 3);
    for (i, l) in b.iter().enumerate() {
        let markdown = l["markdown"].as_str().unwrap();
        assert_eq!(l["chunk"], i);
        assert_eq!(l["headings"], serde_json::json!(["Bee"]));
        assert!(markdown.starts_with("# Bee\n\n"), "{markdown}");
        assert_eq!(l["tokens"], token::count(markdown));
        assert!(l["tokens"].as_u64().unwrap() <= 32);
    }
}
