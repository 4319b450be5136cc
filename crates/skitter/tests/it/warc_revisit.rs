//! Revisit records (WARC 1.1 section 6.7): an original capture, then a `304`
//! (server-not-modified) and a same-body `200` (identical-payload-digest) of
//! the same URL. Checked by a small reader here (fields, block = head only),
//! by `warcio check` and `fastwarc check` (block digests; its payload check
//! `-p` does not know revisits, see below), by warcio reading the pairs back
//! in Python, and by pywb's `cdxj-indexer`, whose lines skitter's index must
//! equal; pywb itself replays the captures from skitter's WARC and index.
//!
//! The outside tools come from `scripts/validators.sh`; without them those
//! parts say SKIPPED loudly, and fail when `$CI` is set.

use std::io::Read;
use std::path::Path;
use std::process::Command;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use data_encoding::BASE32;
use sha1::{Digest, Sha1};
use skitter::base::outcome::{OutcomeKind, PageRecord, SkipReason};
use skitter::fetch::{Revisit, RevisitProfile};
use skitter::output::{Exchange, Page, Sink, WarcOptions, WarcSink};
use skitter_testsite::validators::{check_warc, python_tools, run_validator, warc_validators};
use url::Url;

const URL: &str = "http://127.0.0.1:8080/doc";
const BODY: &[u8] = b"<html><body>the original payload</body></html>";

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn page(status: u16, head: &str, body: &[u8], started: &str, revisit: Option<Revisit>) -> Page {
    let mut record = PageRecord::skipped(Url::parse(URL).unwrap(), SkipReason::Scope, 0, None);
    record.skip = None;
    record.kind = OutcomeKind::Html;
    record.status = Some(status);
    record.content_type = Some("text/html".into());
    record.size = body.len() as u64;
    Page {
        rendered: None,
        record,
        exchange: Some(Exchange {
            request_head: Bytes::from_static(
                b"GET /doc HTTP/1.1\r\nhost: 127.0.0.1:8080\r\nif-none-match: \"v1\"\r\n\r\n",
            ),
            response_head: Bytes::from(format!("HTTP/1.1 {status} X\r\n{head}\r\n")),
            body: Bytes::copy_from_slice(body),
            decoded_body: None,
            truncated: false,
            body_sha1: None,
            remote_addr: Some("127.0.0.1:8080".parse().unwrap()),
            http_version: "HTTP/1.1",
            started: at(started),
            revisit,
        }),
        items: None,
        content: None,
        links: None,
        text: None,
    }
}

fn sha1(data: &[u8]) -> [u8; 20] {
    Sha1::digest(data).into()
}

/// The original, a 304 revisit and an identical-payload revisit, written with
/// an index; returns (warc, cdxj).
async fn write(dir: &Path, name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let warc = dir.join(name);
    let cdx = dir.join(format!("{name}.cdxj"));
    let mut sink = WarcSink::create(
        &warc,
        WarcOptions {
            software: "skitter-test/1".into(),
            cdx: Some(cdx.clone()),
            ..WarcOptions::default()
        },
    )
    .unwrap();
    let original_date = at("2026-12-01T10:00:00Z");
    let refers = |profile| Revisit {
        profile,
        refers_to_uri: Url::parse(URL).unwrap(),
        refers_to_date: original_date,
        payload_sha1: Some(sha1(BODY)),
    };
    let head = "content-type: text/html\r\netag: \"v1\"\r\n";
    let pages = [
        page(200, head, BODY, "2026-12-01T10:00:00Z", None),
        page(
            304,
            "etag: \"v1\"\r\n",
            b"",
            "2026-12-02T10:00:00Z",
            Some(refers(RevisitProfile::ServerNotModified)),
        ),
        page(
            200,
            head,
            BODY,
            "2026-12-03T10:00:00Z",
            Some(refers(RevisitProfile::IdenticalPayloadDigest)),
        ),
    ];
    for p in &pages {
        sink.record(p).await.unwrap();
    }
    sink.finish().await.unwrap();
    (warc, cdx)
}

/// One record: its named fields (names lowercased) and its block.
type Rec = (Vec<(String, String)>, Vec<u8>);

/// The records of a (possibly gzipped) WARC.
fn records(path: &Path) -> Vec<Rec> {
    let raw = std::fs::read(path).unwrap();
    let mut data = Vec::new();
    if path.to_string_lossy().ends_with(".gz") {
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut data)
            .unwrap();
    } else {
        data = raw;
    }
    let mut out = Vec::new();
    let mut rest = &data[..];
    while !rest.is_empty() {
        let end = rest.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = std::str::from_utf8(&rest[10..end]).unwrap();
        let fields: Vec<(String, String)> = head
            .split("\r\n")
            .filter_map(|l| l.split_once(": "))
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
            .collect();
        let len: usize = fields
            .iter()
            .find(|(k, _)| k == "content-length")
            .unwrap()
            .1
            .parse()
            .unwrap();
        out.push((fields, rest[end + 4..end + 4 + len].to_vec()));
        rest = &rest[end + 8 + len..];
    }
    out
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> &'a str {
    fields
        .iter()
        .find(|(k, _)| k == name)
        .map_or("", |(_, v)| v.as_str())
}

#[tokio::test]
async fn revisits_name_the_original_and_hold_the_head_only() {
    let dir = tempfile::tempdir().unwrap();
    let (warc, cdx) = write(dir.path(), "r.warc.gz").await;
    let recs = records(&warc);
    let types: Vec<&str> = recs.iter().map(|(f, _)| field(f, "warc-type")).collect();
    assert_eq!(
        types,
        [
            "warcinfo", "request", "response", "request", "revisit", "request", "revisit"
        ]
    );
    let digest = format!("sha1:{}", BASE32.encode(&sha1(BODY)));
    let profiles = [
        (
            "http://netpreserve.org/warc/1.1/revisits/server-not-modified",
            "304",
        ),
        (
            "http://netpreserve.org/warc/1.1/revisits/identical-payload-digest",
            "200",
        ),
    ];
    for ((fields, block), (profile, status)) in [&recs[4], &recs[6]].into_iter().zip(profiles) {
        assert_eq!(field(fields, "warc-profile"), profile);
        assert_eq!(field(fields, "warc-refers-to-target-uri"), URL);
        assert_eq!(
            field(fields, "warc-refers-to-date"),
            "2026-12-01T10:00:00.000000Z"
        );
        assert_eq!(field(fields, "warc-payload-digest"), digest);
        assert_eq!(
            field(fields, "content-type"),
            "application/http;msgtype=response"
        );
        let head = String::from_utf8(block.clone()).unwrap();
        assert!(head.starts_with(&format!("HTTP/1.1 {status} ")), "{head}");
        assert!(head.ends_with("\r\n\r\n") && !head.contains("original payload"));
    }
    // The request record shows the conditional header that was sent.
    assert!(String::from_utf8_lossy(&recs[3].1).contains("if-none-match: \"v1\""));
    let index = std::fs::read_to_string(&cdx).unwrap();
    let lines: Vec<serde_json::Value> = index
        .lines()
        .map(|l| serde_json::from_str(&l[l.find('{').unwrap()..]).unwrap())
        .collect();
    let got: Vec<(&str, &str)> = lines
        .iter()
        .map(|v| (v["mime"].as_str().unwrap(), v["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("text/html", "200"),
            ("warc/revisit", "304"),
            ("warc/revisit", "200")
        ]
    );
    assert!(lines.iter().all(|v| v["digest"] == digest[5..]));
}

#[tokio::test]
async fn validators_and_pywbs_indexer_read_revisits() {
    let Some(bin) = warc_validators("warc_revisit") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for name in ["r.warc", "r.warc.gz"] {
        let (warc, _) = write(dir.path(), name).await;
        let (warcio, _) = check_warc(&bin, &warc);
        assert!(warcio.ok, "warcio check {name}: {}", warcio.output);
        assert!(
            warcio.output.contains("not checked (revisit)") || !warcio.output.contains("fail"),
            "{}",
            warcio.output
        );
        let blocks = run_validator(&bin, "fastwarc", &["check", "-q"], &warc);
        assert!(blocks.ok, "fastwarc check {name}: {}", blocks.output);
        // `fastwarc check -p` hashes every record's payload against its
        // WARC-Payload-Digest, revisits included, whose digest is by definition
        // the original's (warcio skips them: "not checked (revisit)"). So it
        // must flag exactly the two revisits, and pass every other payload.
        let report = dir.path().join(format!("{name}.fastwarc"));
        let out = Command::new(bin.join("fastwarc"))
            .args(["check", "-q", "-p", "-o"])
            .arg(&report)
            .arg(&warc)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let flagged: Vec<String> = std::fs::read_to_string(&report)
            .unwrap()
            .lines()
            .filter(|l| l.contains("PAYLOAD_FAIL"))
            .map(|l| l.split(">:").next().unwrap_or_default().to_string() + ">")
            .collect();
        let recs = records(&warc);
        let revisit_ids: Vec<String> = recs
            .iter()
            .filter(|(f, _)| field(f, "warc-type") == "revisit")
            .map(|(f, _)| field(f, "warc-record-id").to_string())
            .collect();
        assert_eq!(flagged.len(), 2, "fastwarc -p report: {flagged:?}");
        for id in &flagged {
            assert!(revisit_ids.contains(id), "{id} is not a revisit");
        }
    }
    let warc = dir.path().join("r.warc.gz");
    // warcio reads each revisit back with its refers-to fields and an HTTP head.
    let script = r#"
import sys
from warcio.archiveiterator import ArchiveIterator
with open(sys.argv[1], 'rb') as f:
    for r in ArchiveIterator(f):
        if r.rec_type in ('response', 'revisit'):
            h = r.rec_headers
            print(r.rec_type, r.http_headers.get_statuscode(),
                  h.get_header('WARC-Refers-To-Target-URI'),
                  h.get_header('WARC-Refers-To-Date'),
                  h.get_header('WARC-Payload-Digest'), len(r.content_stream().read()))
"#;
    let out = Command::new(bin.join("python"))
        .args(["-c", script])
        .arg(&warc)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let digest = format!("sha1:{}", BASE32.encode(&sha1(BODY)));
    let date = "2026-12-01T10:00:00.000000Z";
    let want = format!(
        "response 200 None None {digest} {}\n\
         revisit 304 {URL} {date} {digest} 0\n\
         revisit 200 {URL} {date} {digest} 0\n",
        BODY.len()
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);

    let Some(tools) = python_tools("warc_revisit", &["cdxj-indexer"]) else {
        return;
    };
    let theirs = Command::new(tools.join("cdxj-indexer"))
        .arg(&warc)
        .output()
        .unwrap();
    assert!(theirs.status.success());
    let ours = std::fs::read_to_string(dir.path().join("r.warc.gz.cdxj")).unwrap();
    let fields = |text: &str| -> Vec<(String, String, String, String)> {
        let mut v: Vec<_> = text
            .lines()
            .map(|l| {
                let json: serde_json::Value =
                    serde_json::from_str(&l[l.find('{').unwrap()..]).unwrap();
                let s = |k: &str| json[k].as_str().unwrap_or_default().to_string();
                let digest = s("digest");
                let key = l.split(' ').take(2).collect::<Vec<_>>().join(" ");
                (
                    key,
                    s("mime"),
                    s("status"),
                    digest.trim_start_matches("sha1:").to_string(),
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        fields(&ours),
        fields(&String::from_utf8_lossy(&theirs.stdout)),
        "skitter's index vs cdxj-indexer's"
    );
}

/// pywb (from PyPI, installed by `scripts/validators.sh`) replays the captures
/// from skitter's WARC with skitter's CDXJ as the collection index: the
/// original and the identical-payload revisit both give the original payload
/// (pywb finds it through the revisit's refers-to fields); the
/// server-not-modified revisit replays as what was recorded, a `304` with no
/// body (pywb serves a revisit whose head is a 3xx without a payload).
#[tokio::test]
async fn pywb_replays_the_original_through_the_revisits() {
    let Some(bin) = python_tools("warc_revisit_pywb", &["wb-manager"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (warc, cdx) = write(dir.path(), "r.warc.gz").await;
    let coll = dir.path().join("pywb/collections/c");
    std::fs::create_dir_all(coll.join("archive")).unwrap();
    std::fs::create_dir_all(coll.join("indexes")).unwrap();
    std::fs::copy(&warc, coll.join("archive/r.warc.gz")).unwrap();
    std::fs::copy(&cdx, coll.join("indexes/index.cdxj")).unwrap();
    // pywb's WSGI app called in-process: no port, no server to stop.
    let script = r#"
import io, os, sys
os.chdir(sys.argv[1])
from pywb.apps.frontendapp import FrontEndApp
app = FrontEndApp()
for ts in sys.argv[3:]:
    env = {"REQUEST_METHOD": "GET", "PATH_INFO": "/c/%sid_/%s" % (ts, sys.argv[2]),
           "QUERY_STRING": "", "SERVER_NAME": "localhost", "SERVER_PORT": "80",
           "SERVER_PROTOCOL": "HTTP/1.1", "HTTP_HOST": "localhost", "SCRIPT_NAME": "",
           "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(), "wsgi.errors": sys.stderr}
    got = {}
    def start(status, headers, exc_info=None):
        got["status"] = status
    body = b"".join(app(env, start))
    print("replay", ts, got["status"].split()[0], body.decode("utf-8", "replace"))
"#;
    let out = Command::new(bin.join("python"))
        .args(["-c", script])
        .arg(dir.path().join("pywb"))
        .arg(URL)
        .args(["20261201100000", "20261202100000", "20261203100000"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body = String::from_utf8_lossy(BODY);
    // pywb prints notes of its own on stdout; only the replay lines count.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let replays: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("replay "))
        .collect();
    assert_eq!(
        replays,
        [
            format!("replay 20261201100000 200 {body}"),
            "replay 20261202100000 304 ".to_string(),
            format!("replay 20261203100000 200 {body}"),
        ],
        "pywb's replay (stderr: {})",
        String::from_utf8_lossy(&out.stderr)
    );
}
