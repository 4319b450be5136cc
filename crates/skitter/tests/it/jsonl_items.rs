//! The JSONL sink's `item` lines: one per record after its page line, and a
//! resumed file never holds a page's items twice or in part.

use chrono::{TimeZone, Utc};
use serde_json::{Value, json};
use skitter::base::outcome::{OutcomeKind, PageRecord};
use skitter::output::{JsonlSink, Page, Sink};
use skitter::parse::items::{ExtractFailure, Item, Items};
use url::Url;

fn page(path: &str, n: u32) -> Page {
    let mut record = PageRecord::new(Url::parse(&format!("http://h{path}")).unwrap(), 0, None);
    record.kind = OutcomeKind::Html;
    record.status = Some(200);
    let records = (0..n)
        .map(|i| Item {
            rule_set: "rows".into(),
            index: i,
            fields: vec![
                ("name".into(), json!(format!("row {i}"))),
                ("n".into(), json!(i)),
            ],
        })
        .collect();
    Page {
        record,
        exchange: None,
        rendered: None,
        content: None,
        items: Some(Box::new(Items {
            fetched_at: Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap(),
            records,
            rule_sets: vec!["rows".into()],
            errors: if n == 0 {
                vec![ExtractFailure {
                    rule_set: "rows".into(),
                    field: Some("name".into()),
                    message: "record 0: required field missing".into(),
                }]
            } else {
                Vec::new()
            },
        })),
        links: None,
        text: None,
    }
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn item_lines_follow_their_page_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    let mut sink = JsonlSink::create(&path).unwrap();
    sink.record(&page("/a", 2)).await.unwrap();
    sink.record(&page("/b", 0)).await.unwrap();
    sink.finish().await.unwrap();
    let got = lines(&path);
    assert_eq!(got.len(), 4);
    assert_eq!(got[0]["type"], "page");
    assert_eq!(got[0]["items"], 2);
    assert!(got[0].get("extract_errors").is_none());
    assert_eq!(
        got[1],
        json!({
            "type": "item", "url": "http://h/a", "fetched_at": "2026-01-02T03:04:05.000Z",
            "rule_set": "rows", "index": 0, "fields": {"name": "row 0", "n": 0},
        })
    );
    // Fields keep the rules' order, not alphabetical order.
    let raw = std::fs::read_to_string(&path).unwrap();
    assert!(
        raw.lines()
            .nth(2)
            .unwrap()
            .contains(r#""fields":{"name":"row 1","n":1}"#)
    );
    assert_eq!(got[3]["items"], 0);
    assert_eq!(
        got[3]["extract_errors"],
        json!([{"rule_set": "rows", "field": "name", "message": "record 0: required field missing"}])
    );
}

#[tokio::test]
async fn a_page_whose_items_a_kill_cut_short_is_written_again_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    let mut sink = JsonlSink::create(&path).unwrap();
    sink.record(&page("/a", 3)).await.unwrap();
    sink.record(&page("/b", 5)).await.unwrap();
    sink.finish().await.unwrap();
    // A kill in the middle of /b's group: its page line and two of its five
    // items reached the file, and half of a third.
    let whole = std::fs::read_to_string(&path).unwrap();
    let keep: Vec<&str> = whole.lines().take(4 + 3).collect();
    std::fs::write(&path, format!("{}\n{{\"type\":\"it", keep.join("\n"))).unwrap();

    let mut sink = JsonlSink::append(&path).unwrap();
    // The resumed run fetches both again (neither was committed): /a is in the
    // file already and is not written again; /b is written whole.
    sink.record(&page("/a", 3)).await.unwrap();
    sink.record(&page("/b", 5)).await.unwrap();
    sink.finish().await.unwrap();
    let got = lines(&path);
    let summary: Vec<(String, String)> = got
        .iter()
        .map(|l| {
            (
                l["type"].as_str().unwrap().to_string(),
                l["url"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("page", "/a"),
        ("item", "/a"),
        ("item", "/a"),
        ("item", "/a"),
    ]
    .into_iter()
    .chain([("page", "/b")])
    .chain(std::iter::repeat_n(("item", "/b"), 5))
    .map(|(t, p)| (t.to_string(), format!("http://h{p}")))
    .collect();
    assert_eq!(summary, want);
    let indexes: Vec<u64> = got[5..]
        .iter()
        .map(|l| l["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indexes, [0, 1, 2, 3, 4]);
}

#[tokio::test]
async fn a_whole_last_group_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    let mut sink = JsonlSink::create(&path).unwrap();
    sink.record(&page("/a", 2)).await.unwrap();
    sink.finish().await.unwrap();
    let before = std::fs::read_to_string(&path).unwrap();
    let mut sink = JsonlSink::append(&path).unwrap();
    sink.record(&page("/a", 2)).await.unwrap();
    sink.finish().await.unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}
