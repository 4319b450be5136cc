//! Packing WARC files and checking the result, and the checker catching what
//! is wrong with a damaged file.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use zip::ZipArchive;
use zip::write::{SimpleFileOptions, ZipWriter};

use super::*;

/// A WARC record, as one gzip member.
fn member(kind: &str, url: &str, block: &str) -> Vec<u8> {
    let record = format!(
        "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {url}\r\nWARC-Date: 2026-11-29T15:10:20.500000Z\r\nWARC-Payload-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
        block.len()
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(record.as_bytes()).unwrap();
    gz.finish().unwrap()
}

fn html(title: &str, words: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<html><head><title>{title}</title></head><body><main><p>{words}</p></main></body></html>"
    )
}

/// Two WARC files in `dir`: two pages and an image, then a redirect.
fn warcs(dir: &Path) -> Vec<PathBuf> {
    let a = dir.join("a.warc.gz");
    let b = dir.join("b.warc.gz");
    let first = [
        member("request", "http://h/", "GET / HTTP/1.1\r\n\r\n"),
        member(
            "response",
            "http://h/",
            &html("Home", "welcome to the zebra house"),
        ),
        member(
            "response",
            "http://h/pic.png",
            "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\nPNG",
        ),
    ];
    std::fs::write(&a, first.concat()).unwrap();
    let second = [
        member(
            "response",
            "http://h/about",
            &html("About", "we keep aardvarks"),
        ),
        member(
            "response",
            "http://h/old",
            "HTTP/1.1 301 Moved\r\nLocation: /\r\n\r\n",
        ),
    ];
    std::fs::write(&b, second.concat()).unwrap();
    vec![a, b]
}

fn packed(dir: &Path) -> PathBuf {
    let out = dir.join("site.wacz");
    let summary = pack_wacz(&warcs(dir), &out, &WaczOptions::default()).unwrap();
    assert_eq!((summary.warcs, summary.captures, summary.pages), (2, 4, 2));
    out
}

fn entry(path: &Path, name: &str) -> Vec<u8> {
    let mut zip = ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut bytes = Vec::new();
    zip.by_name(name).unwrap().read_to_end(&mut bytes).unwrap();
    bytes
}

#[test]
fn a_packed_archive_checks_clean_with_its_pages_and_index() {
    let dir = tempfile::tempdir().unwrap();
    let out = packed(dir.path());
    let check = validate_wacz(&out).unwrap();
    assert_eq!(check.problems, vec![], "{check:?}");
    assert_eq!((check.resources, check.captures, check.pages), (5, 4, 2));
    let mut zip = ZipArchive::new(std::fs::File::open(&out).unwrap()).unwrap();
    for name in [
        "archive/a.warc.gz",
        "archive/b.warc.gz",
        "indexes/index.cdx.gz",
    ] {
        let stored = zip.by_name(name).unwrap().compression();
        assert_eq!(stored, zip::CompressionMethod::Stored, "{name}");
    }
    let pages = String::from_utf8(entry(&out, "pages/pages.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = pages
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["format"], "json-pages-1.0");
    assert_eq!(lines[1]["url"], "http://h/");
    assert_eq!(lines[1]["title"], "Home");
    assert_eq!(lines[1]["ts"], "2026-11-29T15:10:20.500Z");
    assert!(
        lines[1]["text"].as_str().unwrap().contains("zebra house"),
        "{pages}"
    );
    assert_eq!(lines[2]["title"], "About");
    let manifest: serde_json::Value =
        serde_json::from_slice(&entry(&out, "datapackage.json")).unwrap();
    assert_eq!(manifest["wacz_version"], "1.1.1");
    assert_eq!(manifest["profile"], "data-package");
    let a = &manifest["resources"][0];
    assert_eq!(a["path"], "archive/a.warc.gz");
    let warc = std::fs::read(dir.path().join("a.warc.gz")).unwrap();
    assert_eq!(a["bytes"], warc.len() as u64);
    let want = package::hash_text(&<sha2::Sha256 as sha2::Digest>::digest(&warc));
    assert_eq!(a["hash"], want);
    // No temporary file is left beside the archive.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 3, "{left:?}");
}

/// Copies the zip at `src` to `dst`, entry by entry, through `change`
/// (`None` drops the entry).
fn rewrite(src: &Path, dst: &Path, mut change: impl FnMut(&str, Vec<u8>) -> Option<Vec<u8>>) {
    let mut zip = ZipArchive::new(std::fs::File::open(src).unwrap()).unwrap();
    let mut out = ZipWriter::new(std::fs::File::create(dst).unwrap());
    for i in 0..zip.len() {
        let mut file = zip.by_index(i).unwrap();
        let name = file.name().unwrap().to_string();
        let method = file.compression();
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).unwrap();
        if let Some(bytes) = change(&name, bytes) {
            let options = SimpleFileOptions::default().compression_method(method);
            out.start_file(name, options).unwrap();
            out.write_all(&bytes).unwrap();
        }
    }
    out.finish().unwrap();
}

fn problems(path: &Path) -> Vec<WaczProblem> {
    validate_wacz(path).unwrap().problems
}

#[test]
fn the_check_finds_a_changed_file_a_missing_one_and_an_index_entry_pointing_nowhere() {
    let dir = tempfile::tempdir().unwrap();
    let good = packed(dir.path());
    let bad = dir.path().join("bad.wacz");

    rewrite(&good, &bad, |name, mut bytes| {
        if name == "archive/b.warc.gz" {
            let last = bytes.len() - 9;
            bytes[last] ^= 1;
        }
        Some(bytes)
    });
    let found = problems(&bad);
    assert!(
        matches!(&found[..], [WaczProblem::Mismatch { path, .. }, ..] if path == "archive/b.warc.gz"),
        "{found:?}"
    );

    rewrite(&good, &bad, |name, bytes| {
        (name != "pages/pages.jsonl").then_some(bytes)
    });
    let found = problems(&bad);
    assert!(
        found.contains(&WaczProblem::Missing("pages/pages.jsonl".into())),
        "{found:?}"
    );

    // An entry whose offset is moved by one points inside another record.
    rewrite(&good, &bad, |name, bytes| {
        if name != "indexes/index.cdx.gz" {
            return Some(bytes);
        }
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .unwrap();
        let moved = text.replacen("\"offset\":\"0\"", "\"offset\":\"1\"", 1);
        assert_ne!(moved, text);
        let lines = moved.lines().map(|l| Ok(l.to_string()));
        let mut blocks = Vec::new();
        zipnum::write_blocks(lines, &mut blocks).unwrap();
        Some(blocks)
    });
    let found = problems(&bad);
    assert!(
        found
            .iter()
            .any(|p| matches!(p, WaczProblem::Dangling { offset: 1, .. })),
        "{found:?}"
    );

    rewrite(&good, &bad, |name, bytes| {
        Some(if name == "datapackage-digest.json" {
            b"{}".to_vec()
        } else {
            bytes
        })
    });
    assert_eq!(problems(&bad), vec![WaczProblem::DigestMismatch]);
}

#[test]
fn two_warcs_of_one_name_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let warcs = warcs(dir.path());
    let same = [warcs[0].clone(), warcs[0].clone()];
    let e = pack_wacz(&same, &dir.path().join("x.wacz"), &WaczOptions::default()).unwrap_err();
    assert!(matches!(e, WaczError::BadInput(_)), "{e}");
    assert!(!dir.path().join("x.wacz").exists());
}

/// The page list of a WACZ without the entries' random ids.
fn pages_without_ids(wacz: &Path) -> Vec<serde_json::Value> {
    String::from_utf8(entry(wacz, "pages/pages.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut page: serde_json::Value = serde_json::from_str(l).unwrap();
            page.as_object_mut().unwrap().remove("id");
            page
        })
        .collect()
}

/// The index lines of a WACZ, inflated.
fn index_text(wacz: &Path) -> String {
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(&entry(wacz, "indexes/index.cdx.gz")[..])
        .read_to_string(&mut text)
        .unwrap();
    text
}

/// Packs the WARC files of `wacz` again, as `wacz create` reads them, and
/// asserts the result is the same archive: the same index and `.idx` byte for
/// byte, the same page entries (but for their random ids), the same files
/// with the same sizes and hashes. Answers how many WARC files it holds.
fn assert_same_as_repacked(wacz: &Path, scratch: &Path) -> usize {
    let mut zip = ZipArchive::new(std::fs::File::open(wacz).unwrap()).unwrap();
    let mut warcs = Vec::new();
    for i in 0..zip.len() {
        let mut file = zip.by_index(i).unwrap();
        let name = file.name().unwrap().to_string();
        if let Some(name) = name.strip_prefix("archive/") {
            let path = scratch.join(name);
            std::io::copy(&mut file, &mut std::fs::File::create(&path).unwrap()).unwrap();
            warcs.push(path);
        }
    }
    let again = scratch.join("again.wacz");
    pack_wacz(&warcs, &again, &WaczOptions::default()).unwrap();
    assert_eq!(index_text(wacz), index_text(&again));
    assert_eq!(
        entry(wacz, "indexes/index.idx"),
        entry(&again, "indexes/index.idx")
    );
    assert_eq!(pages_without_ids(wacz), pages_without_ids(&again));
    let resources = |path: &Path| {
        let manifest: serde_json::Value =
            serde_json::from_slice(&entry(path, "datapackage.json")).unwrap();
        manifest["resources"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["path"] != "pages/pages.jsonl")
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(resources(wacz), resources(&again));
    assert_eq!(validate_wacz(wacz).unwrap().problems, vec![]);
    warcs.len()
}

/// Crawls a test site of `pages` pages into a WACZ through [`WaczSink`], its
/// WARC files rotating past `max_size`; `keep` keeps their folder.
async fn crawl_wacz(out: &Path, pages: usize, max_size: u64, keep: bool) -> WaczSummary {
    use skitter_testsite::{SiteConfig, TestSite};

    let site = TestSite::start(SiteConfig {
        pages,
        gzip: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = wacz_warc_dir(out);
    std::fs::create_dir_all(&dir).unwrap();
    let options = crate::output::WarcOptions {
        max_size: Some(max_size),
        software: "skitter/test".into(),
        ..Default::default()
    };
    let sink = WaczSink::create(
        &dir.join("crawl.warc.gz"),
        options,
        out.to_path_buf(),
        WaczOptions::default(),
        keep,
    )
    .unwrap();
    let report = crate::Crawler::builder()
        .root(site.url("/"))
        .sink(Box::new(sink))
        .build()
        .unwrap()
        .run(tokio_util::sync::CancellationToken::new())
        .await
        .unwrap();
    let summary = &report.sinks[0];
    assert_eq!(summary.name, "wacz");
    WaczSummary {
        path: out.to_path_buf(),
        bytes: summary.bytes,
        captures: summary.records,
        ..WaczSummary::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_in_crawl_index_of_rotated_files_is_what_reading_them_gives() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site.wacz");
    let summary = crawl_wacz(&out, 40, 8 << 10, false).await;
    // The site's pages, its index and one broken link.
    assert_eq!(summary.captures, 42);
    assert!(!wacz_warc_dir(&out).exists(), "the folder is removed");
    let scratch = tempfile::tempdir().unwrap();
    let files = assert_same_as_repacked(&out, scratch.path());
    assert!(files >= 3, "{files} WARC files");
    let pages = pages_without_ids(&out);
    assert_eq!(pages.len(), 1 + 41);
    // The crawl's own reading of each page gave the text reading the
    // archived body gives (compared above), and there was text to give.
    assert!(
        pages[1..]
            .iter()
            .all(|p| p["text"].as_str().is_some_and(|t| t.len() > 20)),
        "{pages:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_an_earlier_run_left_are_read_and_listed_first() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site.wacz");
    // An earlier run's files: two pages of another host.
    let folder = wacz_warc_dir(&out);
    std::fs::create_dir_all(&folder).unwrap();
    let earlier = warcs(&folder);
    let summary = crawl_wacz(&out, 10, 1 << 30, true).await;
    assert_eq!(summary.captures, 12 + 4);
    let scratch = tempfile::tempdir().unwrap();
    assert_eq!(assert_same_as_repacked(&out, scratch.path()), 3);
    let pages = pages_without_ids(&out);
    assert_eq!(
        (pages[1]["url"].as_str(), pages.len()),
        (Some("http://h/"), 1 + 2 + 11)
    );
    // The folder is kept for the next run, earlier files and all.
    assert!(earlier.iter().all(|f| f.exists()));
}

/// A page the crawl extracted content from is listed with that content's
/// main text and title; another with the text its parse gathered.
#[test]
fn the_listed_text_is_the_contents_where_the_crawl_extracted_it() {
    use crate::base::outcome::PageRecord;
    use crate::output::Page;
    use crate::parse::text::PageText;
    use std::sync::Arc;

    let url = url::Url::parse("http://h/a").unwrap();
    let html = "<title>Doc</title><nav><a href=/>Home</a></nav>\
                <main><h1>Heading</h1><p>The   main\n text.</p></main>";
    let gathered = Arc::new(PageText {
        title: Some("Gathered".into()),
        text: "Home Heading The main text.".into(),
        cut: false,
    });
    let mut page = Page {
        record: PageRecord::new(url.clone(), 0, None),
        exchange: None,
        rendered: None,
        items: None,
        content: None,
        links: None,
        text: Some(gathered.clone()),
    };
    assert_eq!(sink::listed_text(&page), Some(gathered));
    let doc = crate::content::extract(html, &url);
    page.content = Some(Arc::new(doc.clone()));
    let listed = sink::listed_text(&page).unwrap();
    assert_eq!(listed.title.as_deref(), Some("Doc"));
    let text = doc.text();
    assert_eq!(
        listed.text,
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    assert!(listed.text.contains("The main text."), "{listed:?}");
    assert!(!listed.cut);
}
