//! `skitter crawl --screenshots`: every rendered page gets a full-page PNG and a
//! 640×360 JPEG thumbnail in the WARC, as `resource` records named
//! `urn:fullPage:URL` and `urn:thumbnail:URL` (Browsertrix's names), with
//! `--render always` and without `--render` (the pages rendered for their
//! pictures alone). The pictures are read back from an uncompressed WARC and
//! their sizes from their own headers.
//!
//! Needs Chromium; without it the test says so loudly and, under CI, fails.

use std::collections::BTreeMap;

use skitter_testsite::skip::chromium;
use skitter_testsite::{SiteConfig, TestSite, docs};

use crate::support::cli::run;

/// The render viewport's width (chromiumoxide's default viewport, 800×600).
const VIEWPORT_WIDTH: u32 = 800;

/// One WARC record: its named fields and its block.
struct Record {
    fields: BTreeMap<String, String>,
    block: Vec<u8>,
}

/// The records of an uncompressed WARC file.
fn records(warc: &[u8]) -> Vec<Record> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < warc.len() {
        let head_end = at
            + warc[at..]
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .expect("a record head")
            + 4;
        let head = String::from_utf8_lossy(&warc[at..head_end]);
        let fields: BTreeMap<String, String> = head
            .lines()
            .skip(1)
            .filter_map(|l| l.split_once(": "))
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
            .collect();
        let len: usize = fields["content-length"].parse().unwrap();
        out.push(Record {
            fields,
            block: warc[head_end..head_end + len].to_vec(),
        });
        at = head_end + len + 4;
    }
    out
}

fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let word = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    (word(16), word(20))
}

/// The width and height of a JPEG's frame (its SOF0 or SOF2 segment).
fn jpeg_size(jpeg: &[u8]) -> (u32, u32) {
    assert!(jpeg.starts_with(&[0xff, 0xd8]), "not a JPEG");
    let mut at = 2;
    while at + 9 < jpeg.len() {
        assert_eq!(jpeg[at], 0xff, "a JPEG segment at {at}");
        let marker = jpeg[at + 1];
        let len = usize::from(u16::from_be_bytes([jpeg[at + 2], jpeg[at + 3]]));
        if matches!(marker, 0xc0 | 0xc2) {
            let half = |i: usize| u32::from(u16::from_be_bytes([jpeg[i], jpeg[i + 1]]));
            return (half(at + 7), half(at + 5));
        }
        at += 2 + len;
    }
    panic!("no frame header in the JPEG");
}

/// Crawls the docs section with `extra` flags into a WARC; the pictures
/// found, by target URI: (media type, width, height).
async fn pictures(extra: &[&str]) -> (BTreeMap<String, (String, u32, u32)>, String) {
    let site = TestSite::start(SiteConfig {
        pages: 0,
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("out.warc");
    let mut args = vec![
        "-q",
        "crawl",
        "--warc",
        warc.to_str().unwrap(),
        "--screenshots",
        // Generous: with the suite beside it on two cores, a render (and a
        // capture, which has the same limit) can take many seconds.
        "--render-timeout",
        "90s",
    ];
    args.extend_from_slice(extra);
    let root = site.url("/docs/");
    args.push(&root);
    run(&args).await.assert_ok("crawl --screenshots");
    let mut found = BTreeMap::new();
    for record in records(&std::fs::read(&warc).unwrap()) {
        if record.fields["warc-type"] != "resource" {
            continue;
        }
        let mime = record.fields["content-type"].clone();
        let (w, h) = match mime.as_str() {
            "image/png" => png_size(&record.block),
            "image/jpeg" => jpeg_size(&record.block),
            other => panic!("a resource record of type {other}"),
        };
        found.insert(record.fields["warc-target-uri"].clone(), (mime, w, h));
    }
    (found, site.url(""))
}

fn check(found: &BTreeMap<String, (String, u32, u32)>, origin: &str, how: &str) {
    let pages = docs::paths();
    assert_eq!(
        found.len(),
        pages.len() * 2,
        "{how}: two pictures for each of the {} pages: {found:#?}",
        pages.len()
    );
    for path in pages {
        let url = format!("{origin}{path}");
        let (mime, w, h) = &found[&format!("urn:fullPage:{url}")];
        assert_eq!(mime, "image/png", "{how}: {url}");
        assert_eq!(
            *w, VIEWPORT_WIDTH,
            "{how}: {url} is as wide as the viewport"
        );
        assert!(
            (200..=16_384).contains(h),
            "{how}: {url} is {h} pixels tall"
        );
        let thumb = &found[&format!("urn:thumbnail:{url}")];
        assert_eq!(thumb, &("image/jpeg".to_string(), 640, 360), "{how}: {url}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rendered_pages_get_a_full_page_png_and_a_thumbnail() {
    if chromium("screenshots_cli", "pictures of rendered pages").is_none() {
        return;
    }
    let (found, origin) = pictures(&["--render", "always"]).await;
    check(&found, origin.trim_end_matches('/'), "--render always");
    // Without --render the pages are rendered for their pictures alone.
    let (found, origin) = pictures(&[]).await;
    check(&found, origin.trim_end_matches('/'), "no --render");
}
