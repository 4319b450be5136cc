//! The JSON Lines sink: one whole, parseable line per URL, with the documented
//! schema for pages and skips.

use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use skitter::base::outcome::{ErrorKind, FetchFailure, OutcomeKind, PageRecord, SkipReason};
use skitter::output::{Exchange, JsonlSink, Page, Sink};
use url::Url;

const PAGE_FIELDS: &[&str] = &[
    "type",
    "url",
    "final_url",
    "status",
    "content_type",
    "charset",
    "size",
    "digest",
    "depth",
    "parent",
    "elapsed_ms",
    "attempts",
    "retries",
    "kind",
    "error_kind",
    "error",
    "links_found",
    "links_new",
];
const SKIP_FIELDS: &[&str] = &["type", "url", "reason", "depth", "parent"];

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

fn fetched(u: &str, kind: OutcomeKind, status: Option<u16>) -> PageRecord {
    let mut r = PageRecord::skipped(url(u), SkipReason::Scope, 2, Some(url("http://h/")));
    r.kind = kind;
    r.skip = None;
    r.status = status;
    r.attempts = 3;
    r.elapsed = Duration::from_millis(1234);
    r
}

fn pages() -> Vec<Page> {
    let mut html = fetched("http://h/a", OutcomeKind::Html, Some(200));
    html.content_type = Some("text/html".into());
    html.encoding = Some("utf-8".into());
    html.size = 3;
    html.num_urls = 7;
    html.num_new_urls = 4;
    let mut redirect = fetched("http://h/old", OutcomeKind::Redirect, Some(301));
    redirect.next_url = Some(url("http://h/new"));
    let mut failed = fetched("http://h/日本", OutcomeKind::Failed, None);
    failed.error = Some(FetchFailure {
        kind: ErrorKind::Timeout,
        message: "read timed out\nafter 30s \"twice\"".into(),
    });
    let exchange = Exchange {
        request_head: Bytes::new(),
        response_head: Bytes::new(),
        body: Bytes::from_static(b"abc"),
        decoded_body: None,
        truncated: false,
        body_sha1: None,
        remote_addr: None,
        http_version: "HTTP/1.1",
        started: chrono::Utc::now(),
        revisit: None,
    };
    vec![
        Page {
            record: html,
            exchange: Some(exchange),
            rendered: None,
            items: None,
            content: None,
            links: None,
            text: None,
        },
        Page {
            record: redirect,
            exchange: None,
            rendered: None,
            items: None,
            content: None,
            links: None,
            text: None,
        },
        Page {
            record: fetched("http://h/x", OutcomeKind::HttpError, Some(404)),
            exchange: None,
            rendered: None,
            items: None,
            content: None,
            links: None,
            text: None,
        },
        Page {
            record: failed,
            exchange: None,
            rendered: None,
            items: None,
            content: None,
            links: None,
            text: None,
        },
        Page {
            rendered: None,
            record: PageRecord::skipped(
                url("http://o/"),
                SkipReason::Robots,
                1,
                Some(url("http://h/a")),
            ),
            exchange: None,
            items: None,
            content: None,
            links: None,
            text: None,
        },
    ]
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

fn sorted(fields: &[&'static str]) -> Vec<&'static str> {
    let mut f = fields.to_vec();
    f.sort_unstable();
    f
}

#[tokio::test]
async fn every_line_parses_with_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    let mut sink = JsonlSink::create(&path).unwrap();
    assert!(
        !sink.wants_bodies(),
        "JSONL needs no bodies; digests come when others ask"
    );
    for p in pages() {
        sink.record(&p).await.unwrap();
    }
    let summary = sink.finish().await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!((summary.name.as_str(), summary.records), ("jsonl", 5));
    assert_eq!(summary.bytes, text.len() as u64);
    assert!(text.ends_with('\n'));
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    for v in &lines[..4] {
        assert_eq!(keys(v), sorted(PAGE_FIELDS), "{v}");
        assert_eq!(
            (v["type"].as_str(), v["depth"].as_u64()),
            (Some("page"), Some(2))
        );
        assert_eq!(
            (v["attempts"].as_u64(), v["retries"].as_u64()),
            (Some(3), Some(2))
        );
        assert_eq!(
            (v["elapsed_ms"].as_u64(), v["parent"].as_str()),
            (Some(1234), Some("http://h/"))
        );
    }
    let [html, redirect, not_found, failed, skip] = &lines[..] else {
        unreachable!()
    };
    assert_eq!(
        html["digest"], "VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5",
        "sha1(\"abc\") in base32"
    );
    assert_eq!(
        (
            &html["kind"],
            &html["status"],
            &html["content_type"],
            &html["charset"]
        ),
        (
            &json!("html"),
            &json!(200),
            &json!("text/html"),
            &json!("utf-8")
        )
    );
    assert_eq!(
        (&html["links_found"], &html["links_new"], &html["size"]),
        (&json!(7), &json!(4), &json!(3))
    );
    assert_eq!(
        (&redirect["kind"], &redirect["final_url"]),
        (&json!("redirect"), &json!("http://h/new"))
    );
    assert_eq!(
        (&redirect["digest"], &html["final_url"]),
        (&Value::Null, &Value::Null)
    );
    assert_eq!(
        (&not_found["kind"], &not_found["status"]),
        (&json!("http_error"), &json!(404))
    );
    assert_eq!(
        (&failed["error_kind"], &failed["status"]),
        (&json!("timeout"), &Value::Null)
    );
    assert_eq!(failed["error"], "read timed out\nafter 30s \"twice\"");
    assert_eq!(failed["url"], "http://h/%E6%97%A5%E6%9C%AC");
    assert_eq!(keys(skip), sorted(SKIP_FIELDS));
    assert_eq!(
        skip,
        &json!({"type": "skip", "url": "http://o/", "reason": "robots", "depth": 1, "parent": "http://h/a"})
    );
}

#[tokio::test]
async fn lines_reach_the_file_whole_before_finish() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    let mut sink = JsonlSink::create(&path).unwrap();
    let page = &pages()[3];
    for _ in 0..200 {
        sink.record(page).await.unwrap();
    }
    // Unfinished: what is on disk so far is whole lines only (batches of 64).
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.is_empty() && text.ends_with('\n'));
    assert_eq!(text.lines().count() % 64, 0);
    assert!(
        text.lines()
            .all(|l| serde_json::from_str::<Value>(l).is_ok())
    );
    sink.finish().await.unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 200);
}

#[test]
fn create_fails_on_a_bad_path() {
    let err = JsonlSink::create("/nonexistent-dir-skitter/x.jsonl")
        .err()
        .unwrap();
    assert_eq!(err.sink(), "jsonl");
}
