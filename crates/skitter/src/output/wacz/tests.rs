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
