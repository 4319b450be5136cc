//! The CDXJ index is the one pywb would write: the same WARC indexed by skitter and
//! by webrecorder's `cdxj-indexer` (pywb's indexer, which keys URLs with the `surt`
//! library) gives the same lines, keys first. A key that differs by one byte is a
//! lookup that misses, so the URLs here are the awkward ones: IP and IPv6 hosts,
//! ports, `www` prefixes, IDNs, percent-escapes, trailing slashes, query order and
//! session parameters.
//!
//! `cdxj-indexer` comes from `scripts/validators.sh` (the validators' venv). Without
//! it the comparison says SKIPPED loudly, and fails when `$CI` is set.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use bytes::Bytes;
use skitter::base::outcome::{OutcomeKind, PageRecord, SkipReason};
use skitter::output::{Exchange, Page, Sink, WarcOptions, WarcSink};
use skitter_testsite::validators::python_tools;
use url::Url;

/// The URLs archived, as a crawl would have them (the url crate's form).
const URLS: &[&str] = &[
    "http://127.0.0.1:8080/",
    "http://127.0.0.1:8080/p/7/",
    "http://10.1.2.3/x?b=2&a=1",
    "http://[::1]:8081/v6",
    "https://www.example.com/A/B/?Z=1&a=2&a",
    "http://www2.example.com/",
    "http://example.com:8443/caf%C3%A9",
    "http://example.com/a%2Fb//c/%7Euser",
    "http://example.com/p?q=a+b&q=a%20b&a-b=1&a=0",
    "http://example.com/s?jsessionid=0123456789abcdef0123456789ABCDEF&x=1",
    "http://example.com/(a(0123456789abcdefghijklmn))/Page.aspx",
    "http://xn--caf-dma.example/menu",
    "http://example.com/?",
];

fn page(url: &str) -> Page {
    let parsed = Url::parse(url).unwrap();
    assert_eq!(
        parsed.as_str(),
        url,
        "a test URL must be in the url crate's form"
    );
    let url = parsed;
    let mut record = PageRecord::skipped(url.clone(), SkipReason::Scope, 0, None);
    record.kind = OutcomeKind::Html;
    record.skip = None;
    record.status = Some(200);
    record.content_type = Some("text/html".into());
    record.attempts = 1;
    let body = format!("<p>{url}</p>");
    record.size = body.len() as u64;
    let target = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    let host = url.host_str().unwrap_or_default();
    Page {
        rendered: None,
        record,
        exchange: Some(Exchange {
            request_head: Bytes::from(format!(
                "GET {target} HTTP/1.1\r\nhost: {host}\r\nuser-agent: test\r\n\r\n"
            )),
            response_head: Bytes::from(format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\r\n",
                body.len()
            )),
            body: Bytes::from(body),
            decoded_body: None,
            body_sha1: None,
            truncated: false,
            remote_addr: Some("127.0.0.1:8080".parse().unwrap()),
            http_version: "HTTP/1.1",
            started: chrono::Utc::now(),
            revisit: None,
        }),
        items: None,
        content: None,
        links: None,
        text: None,
    }
}

/// `(key, timestamp, url)` → the JSON fields, for each line of a CDXJ text (two
/// URLs can share a key: `http://www2.example.com/` and `http://example.com/?`).
fn parse(cdxj: &str) -> BTreeMap<(String, String, String), serde_json::Value> {
    cdxj.lines()
        .map(|line| {
            let mut parts = line.splitn(3, ' ');
            let key = parts.next().unwrap_or_default().to_string();
            let ts = parts.next().unwrap_or_default().to_string();
            let json: serde_json::Value = serde_json::from_str(parts.next().unwrap_or("null"))
                .unwrap_or_else(|e| panic!("bad CDXJ line {line:?}: {e}"));
            let url = json["url"].as_str().unwrap_or_default().to_string();
            ((key, ts, url), json)
        })
        .collect()
}

#[tokio::test]
async fn cdxj_lines_match_pywbs_indexer() {
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("keys.warc.gz");
    let cdx = dir.path().join("keys.cdxj");
    let mut sink = WarcSink::create(
        &warc,
        WarcOptions {
            cdx: Some(cdx.clone()),
            software: "skitter-test/1".into(),
            ..WarcOptions::default()
        },
    )
    .unwrap();
    for url in URLS {
        sink.record(&page(url)).await.unwrap();
    }
    sink.finish().await.unwrap();
    let ours = parse(&std::fs::read_to_string(&cdx).unwrap());
    assert_eq!(ours.len(), URLS.len(), "one line per response");
    // The IP host's key is reversed, as the surt library writes it.
    assert!(
        ours.keys().any(|(k, _, _)| k == "1,0,0,127:8080)/p/7"),
        "{ours:#?}"
    );

    let Some(bin) = python_tools("cdx_pywb", &["cdxj-indexer"]) else {
        return;
    };
    let theirs = index_with_pywb(&bin, &warc);
    assert_eq!(theirs.len(), URLS.len(), "cdxj-indexer lines:\n{theirs:#?}");
    for ((key, ts, url), fields) in &theirs {
        let Some(mine) = ours.get(&(key.clone(), ts.clone(), url.clone())) else {
            let ours_for_url: Vec<_> = ours.keys().filter(|k| &k.2 == url).collect();
            panic!("{url}: pywb's key {key} {ts}, skitter's {ours_for_url:?}");
        };
        assert_eq!(mine, fields, "{url}: fields differ");
    }
}

/// Runs `cdxj-indexer` on `warc` in its directory, so `filename` is the bare name
/// skitter writes.
fn index_with_pywb(
    bin: &Path,
    warc: &Path,
) -> BTreeMap<(String, String, String), serde_json::Value> {
    let out = Command::new(bin.join("cdxj-indexer"))
        .arg(warc)
        .output()
        .expect("run cdxj-indexer");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "cdxj-indexer failed: {stderr}");
    let mut lines = parse(&String::from_utf8_lossy(&out.stdout));
    for fields in lines.values_mut() {
        // It keeps the `sha1:` of WARC-Payload-Digest, skitter writes the bare
        // base32 of older pywb indexes; pywb reads both.
        if let Some(digest) = fields.get_mut("digest") {
            let bare = digest.as_str().unwrap_or_default();
            *digest = bare
                .strip_prefix("sha1:")
                .unwrap_or(bare)
                .to_string()
                .into();
        }
        // It names the file as given on its command line.
        if let Some(name) = fields.get_mut("filename") {
            *name = Path::new(name.as_str().unwrap_or_default())
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .into();
        }
    }
    lines
}
