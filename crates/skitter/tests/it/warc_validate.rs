//! WARC output checked three ways: a small Rust reader in this file (lengths,
//! digests, record links; runs everywhere), and two independent validators,
//! `warcio check` and `fastwarc check`, plus `warcio index` for the URL list.
//!
//! The validators come from `scripts/validators.sh` (a venv in
//! `target/validators-venv`, or the bin dir in `$SKITTER_VALIDATORS`). Without
//! them the validator tests say SKIPPED loudly, and fail when `$CI` is set.

use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use bytes::Bytes;
use data_encoding::BASE32;
use sha1::{Digest, Sha1};
use skitter::base::outcome::{ErrorKind, FetchFailure, OutcomeKind, PageRecord, SkipReason};
use skitter::output::{Exchange, Page, Sink, WarcOptions, WarcSink};
use skitter_testsite::validators::{check_warc, warc_validators};
use url::Url;

const HOST: &str = "http://127.0.0.1:8080";

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut enc, data).unwrap();
    enc.finish().unwrap()
}

fn record(url: &str, kind: OutcomeKind, status: Option<u16>, mime: Option<&str>) -> PageRecord {
    let mut r = PageRecord::skipped(Url::parse(url).unwrap(), SkipReason::Scope, 1, None);
    r.kind = kind;
    r.skip = None;
    r.status = status;
    r.content_type = mime.map(str::to_string);
    r.attempts = 1;
    r.elapsed = Duration::from_millis(5);
    r
}

/// One synthetic response: path, status, version, extra headers, body.
fn page(path: &str, status: u16, version: &'static str, headers: &str, body: Vec<u8>) -> Page {
    let url = format!("{HOST}{path}");
    let (kind, mime) = match status {
        200 if headers.contains("text/html") => (OutcomeKind::Html, Some("text/html")),
        200 => (OutcomeKind::Other, Some("application/octet-stream")),
        300..=399 => (OutcomeKind::Redirect, None),
        _ => (OutcomeKind::HttpError, Some("text/plain")),
    };
    let mut rec = record(&url, kind, Some(status), mime);
    rec.size = body.len() as u64;
    let head = format!(
        "HTTP/1.1 {status} X\r\n{headers}content-length: {}\r\n\r\n",
        body.len()
    );
    Page {
        rendered: None,
        record: rec,
        exchange: Some(Exchange {
            request_head: Bytes::from(format!(
                "GET {path} HTTP/1.1\r\nhost: 127.0.0.1:8080\r\nuser-agent: test\r\n\r\n"
            )),
            response_head: Bytes::from(head),
            body: Bytes::from(body),
            decoded_body: None,
            truncated: false,
            body_sha1: None,
            remote_addr: Some("127.0.0.1:8080".parse().unwrap()),
            http_version: version,
            started: chrono::Utc::now(),
            revisit: None,
        }),
        items: None,
        content: None,
        links: None,
        text: None,
    }
}

/// The crawl: HTTP/1.1 and HTTP/2 pages, a gzip body, a redirect, a 404, a binary
/// body, and a failure and a skip (which must not become records).
fn pages() -> Vec<Page> {
    let html = b"<html><body><a href=/a>a</a></body></html>".to_vec();
    let binary: Vec<u8> = (0..=255u8)
        .chain(b"\r\n\r\nWARC/1.1\r\n".iter().copied())
        .collect();
    let mut gz = page(
        "/gz",
        200,
        "HTTP/1.1",
        "content-type: text/html\r\ncontent-encoding: gzip\r\n",
        gzip(&html),
    );
    if let Some(ex) = gz.exchange.as_mut() {
        ex.decoded_body = Some(Bytes::from(html.clone()));
    }
    let mut failed = record(&format!("{HOST}/down"), OutcomeKind::Failed, None, None);
    failed.error = Some(FetchFailure {
        kind: ErrorKind::Timeout,
        message: "timed out".into(),
    });
    vec![
        page(
            "/",
            200,
            "HTTP/1.1",
            "content-type: text/html\r\ntransfer-encoding: chunked\r\n",
            html.clone(),
        ),
        page(
            "/h2",
            200,
            "HTTP/2",
            "content-type: text/html\r\n",
            html.clone(),
        ),
        gz,
        page("/old", 301, "HTTP/1.1", "location: /\r\n", Vec::new()),
        page(
            "/missing",
            404,
            "HTTP/1.1",
            "content-type: text/plain\r\n",
            b"not found".to_vec(),
        ),
        page(
            "/bin?x=1",
            200,
            "HTTP/2",
            "content-type: application/octet-stream\r\n",
            binary,
        ),
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
                Url::parse(&format!("{HOST}/no")).unwrap(),
                SkipReason::Robots,
                1,
                None,
            ),
            exchange: None,
            items: None,
            content: None,
            links: None,
            text: None,
        },
    ]
}

fn expected_urls() -> BTreeSet<String> {
    ["/", "/h2", "/gz", "/old", "/missing", "/bin?x=1"]
        .iter()
        .map(|p| format!("{HOST}{p}"))
        .collect()
}

async fn write(path: &Path, options: WarcOptions) -> skitter::output::SinkSummary {
    let mut sink = WarcSink::create(path, options).unwrap();
    assert!(sink.wants_bodies());
    for p in pages() {
        sink.record(&p).await.unwrap();
    }
    sink.finish().await.unwrap()
}

fn options() -> WarcOptions {
    WarcOptions {
        software: "skitter-test/1".into(),
        crawl_options: vec![("robots".into(), "obey".into())],
        ..WarcOptions::default()
    }
}

/// One parsed record: named fields and block.
struct Rec {
    fields: HashMap<String, String>,
    block: Vec<u8>,
}

impl Rec {
    fn get(&self, name: &str) -> &str {
        self.fields
            .get(&name.to_ascii_lowercase())
            .map_or("", String::as_str)
    }
}

fn sha1_b32(data: &[u8]) -> String {
    format!("sha1:{}", BASE32.encode(&Sha1::digest(data)))
}

/// Parses a whole (decompressed) WARC file, checking the framing as it goes.
fn parse(mut data: &[u8]) -> Vec<Rec> {
    let mut out = Vec::new();
    while !data.is_empty() {
        assert!(data.starts_with(b"WARC/1.1\r\n"), "version line");
        let end = data
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("end of header");
        let head = std::str::from_utf8(&data[10..end]).expect("UTF-8 header");
        let fields: HashMap<String, String> = head
            .split("\r\n")
            .map(|l| l.split_once(": ").expect("name: value"))
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
            .collect();
        let len: usize = fields["content-length"].parse().unwrap();
        let block = data[end + 4..end + 4 + len].to_vec();
        assert_eq!(
            &data[end + 4 + len..end + 8 + len],
            b"\r\n\r\n",
            "record trailer"
        );
        data = &data[end + 8 + len..];
        let rec = Rec { fields, block };
        assert_eq!(rec.get("WARC-Block-Digest"), sha1_b32(&rec.block));
        out.push(rec);
    }
    out
}

fn read_warc(path: &Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap();
    if path.to_string_lossy().ends_with(".gz") {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        raw
    }
}

/// Checks one file's records: warcinfo first, request/response pairs linked to
/// each other and to the warcinfo, payload digests, protocol; returns response URLs.
fn check_file(path: &Path) -> Vec<String> {
    let recs = parse(&read_warc(path));
    let info = &recs[0];
    assert_eq!(info.get("WARC-Type"), "warcinfo");
    let text = String::from_utf8_lossy(&info.block);
    for want in [
        "software: skitter-test/1",
        "format: WARC File Format 1.1",
        "conformsTo: ",
        "robots: obey",
    ] {
        assert!(text.contains(want), "warcinfo lacks {want:?}: {text}");
    }
    let mut urls = Vec::new();
    for pair in recs[1..].chunks(2) {
        let [req, resp] = pair else {
            panic!("unpaired record")
        };
        assert_eq!(
            (req.get("WARC-Type"), resp.get("WARC-Type")),
            ("request", "response")
        );
        assert_eq!(req.get("WARC-Concurrent-To"), resp.get("WARC-Record-ID"));
        assert_eq!(resp.get("WARC-Concurrent-To"), req.get("WARC-Record-ID"));
        for r in [req, resp] {
            assert_eq!(r.get("WARC-Warcinfo-ID"), info.get("WARC-Record-ID"));
            assert_eq!(r.get("WARC-IP-Address"), "127.0.0.1");
            assert!(r.get("WARC-Record-ID").starts_with("<urn:uuid:"));
        }
        let split = resp
            .block
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap()
            + 4;
        assert_eq!(
            resp.get("WARC-Payload-Digest"),
            sha1_b32(&resp.block[split..])
        );
        let head = String::from_utf8_lossy(&resp.block[..split]).to_ascii_lowercase();
        assert!(
            !head.contains("\ntransfer-encoding:"),
            "de-chunked body labelled chunked"
        );
        let url = resp.get("WARC-Target-URI");
        let h2 = url.ends_with("/h2") || url.contains("/bin");
        assert_eq!(
            resp.get("WARC-Protocol"),
            if h2 { "h2" } else { "http/1.1" },
            "{url}"
        );
        if url.ends_with("/gz") {
            // The body is archived as received: still gzip, matching its header.
            assert!(
                head.contains("content-encoding: gzip")
                    && resp.block[split..].starts_with(&[0x1f, 0x8b])
            );
        }
        urls.push(url.to_string());
    }
    urls
}

#[tokio::test]
async fn plain_and_gzip_files_read_back() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["crawl.warc", "crawl.warc.gz"] {
        let path = dir.path().join(name);
        let summary = write(&path, options()).await;
        assert_eq!((summary.name.as_str(), summary.records), ("warc", 13));
        assert_eq!(summary.bytes, std::fs::metadata(&path).unwrap().len());
        let urls: BTreeSet<String> = check_file(&path).into_iter().collect();
        assert_eq!(urls, expected_urls(), "{name}");
    }
}

#[tokio::test]
async fn rotation_starts_each_file_with_warcinfo_and_keeps_pairs_together() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("rot.warc.gz");
    let opts = WarcOptions {
        max_size: Some(1),
        ..options()
    };
    let summary = write(&base, opts).await;
    assert_eq!(summary.files.len(), 6, "{:?}", summary.files);
    let mut urls = BTreeSet::new();
    for (i, f) in summary.files.iter().enumerate() {
        assert!(f.ends_with(&format!("rot-{i:05}.warc.gz")), "{f}");
        let got = check_file(Path::new(f));
        assert_eq!(got.len(), 1);
        urls.extend(got);
    }
    assert_eq!(urls, expected_urls());
    assert!(
        !base.exists(),
        "unnumbered file written alongside numbered ones"
    );
}

#[tokio::test]
async fn cdx_index_is_sorted_and_points_at_gzip_members() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("idx.warc.gz");
    let cdx = dir.path().join("idx.cdxj");
    let summary = write(
        &path,
        WarcOptions {
            cdx: Some(cdx.clone()),
            ..options()
        },
    )
    .await;
    assert!(summary.files.contains(&cdx.display().to_string()));
    let text = std::fs::read_to_string(&cdx).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6);
    assert!(lines.windows(2).all(|w| w[0] <= w[1]), "unsorted:\n{text}");
    let raw = std::fs::read(&path).unwrap();
    for line in lines {
        let mut parts = line.splitn(3, ' ');
        let (key, ts, json) = (
            parts.next().unwrap(),
            parts.next().unwrap(),
            parts.next().unwrap(),
        );
        assert!(key.starts_with("1,0,0,127:8080)/"), "{key}");
        assert_eq!(ts.len(), 14);
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(v["filename"], "idx.warc.gz");
        let offset: usize = v["offset"].as_str().unwrap().parse().unwrap();
        let length: usize = v["length"].as_str().unwrap().parse().unwrap();
        // The member at offset..offset+length is exactly the response record.
        let mut rec = Vec::new();
        flate2::read::GzDecoder::new(&raw[offset..offset + length])
            .read_to_end(&mut rec)
            .unwrap();
        let parsed = parse(&rec);
        assert_eq!(parsed.len(), 1);
        assert_eq!(parsed[0].get("WARC-Type"), "response");
        assert_eq!(parsed[0].get("WARC-Target-URI"), v["url"].as_str().unwrap());
        assert_eq!(
            parsed[0].get("WARC-Payload-Digest"),
            format!("sha1:{}", v["digest"].as_str().unwrap())
        );
    }
}

#[test]
fn create_fails_on_a_bad_path() {
    let dir = tempfile::tempdir().unwrap();
    let err = WarcSink::create(dir.path().join("no/such/dir/x.warc"), options())
        .err()
        .unwrap();
    assert_eq!(err.sink(), "warc");
}

/// `(warcio check passed, fastwarc check passed)`.
fn check(bin: &Path, file: &Path) -> (bool, bool) {
    let (warcio, fastwarc) = check_warc(bin, file);
    (warcio.ok, fastwarc.ok)
}

#[test]
fn validators_judge_the_corpus_as_recorded() {
    let Some(bin) = warc_validators("warc_validate") else {
        return;
    };
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/warc");
    let cases = [
        ("good.warc", (true, true)),
        ("good.warc.gz", (true, true)),
        ("bad-content-length.warc", (false, false)),
        ("bad-digest.warc", (false, false)),
        ("bad-gzip.warc.gz", (false, false)),
        // warcio check does not notice a truncated last record; fastwarc does.
        ("bad-truncated.warc", (true, false)),
        ("bad-version-line.warc", (false, false)),
    ];
    for (name, want) in cases {
        assert_eq!(
            check(&bin, &corpus.join(name)),
            want,
            "{name}: (warcio, fastwarc)"
        );
    }
}

#[tokio::test]
async fn validators_accept_what_skitter_writes() {
    let Some(bin) = warc_validators("warc_validate") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<PathBuf> = Vec::new();
    for name in ["v.warc", "v.warc.gz"] {
        write(&dir.path().join(name), options()).await;
        files.push(dir.path().join(name));
    }
    let rotated = write(
        &dir.path().join("r.warc.gz"),
        WarcOptions {
            max_size: Some(2000),
            ..options()
        },
    )
    .await;
    assert!(rotated.files.len() > 1);
    files.extend(rotated.files.iter().map(PathBuf::from));
    for f in &files {
        assert_eq!(check(&bin, f), (true, true), "{}", f.display());
        // A pass must mean the records were read, not that none were found.
        let out = Command::new(bin.join("fastwarc"))
            .args(["check", "-p"])
            .arg(f)
            .output()
            .unwrap();
        let records = parse(&read_warc(f)).len();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            said.contains(&format!("{records} records were verified successfully")),
            "{said}"
        );
    }
    for f in &files[..2] {
        let out = Command::new(bin.join("warcio"))
            .args(["index", "-f", "warc-type,warc-target-uri"])
            .arg(f)
            .output()
            .unwrap();
        assert!(out.status.success());
        let urls: BTreeSet<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v["warc-type"] == "response")
            .map(|v| v["warc-target-uri"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(urls, expected_urls(), "{}", f.display());
    }
}
