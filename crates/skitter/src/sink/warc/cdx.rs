//! The CDXJ index of the WARC files: one line per response record, as pywb reads it.
//!
//! A line is `urlkey timestamp14 {json}`, where the key is the URL in SURT form
//! ([`surt`](super::surt), byte for byte what pywb's canonicaliser computes for a
//! lookup) so that lines for one site sort together, and the JSON carries `url, mime, status, digest, length, offset,
//! filename` as strings, as pywb's own indexer writes them. Lines are collected in
//! memory (about 250 bytes per response) and written sorted by [`write_sorted`],
//! because pywb binary-searches the file.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::Serialize;
use url::Url;

use super::surt::surt;

/// The JSON part of a CDXJ line; field order is pywb's.
#[derive(Serialize)]
struct Fields<'a> {
    url: &'a str,
    mime: &'a str,
    status: String,
    digest: &'a str,
    length: String,
    offset: String,
    filename: &'a str,
}

/// Where a response record lives, and what it holds.
pub(crate) struct Entry<'a> {
    /// The target URI.
    pub url: &'a Url,
    /// When the request was sent.
    pub date: DateTime<Utc>,
    /// The response media type (`unk` when none was given, as pywb writes it).
    pub mime: Option<&'a str>,
    /// The HTTP status.
    pub status: Option<u16>,
    /// Base32 SHA-1 of the payload.
    pub digest: &'a str,
    /// The record's length in the file (compressed length for gzip members).
    pub length: u64,
    /// The record's offset in the file.
    pub offset: u64,
    /// The WARC file's name (no directory: pywb resolves it against its archive dir).
    pub filename: &'a str,
}

/// One CDXJ line, without the newline.
pub(crate) fn line(e: &Entry<'_>) -> String {
    let fields = Fields {
        url: e.url.as_str(),
        mime: e.mime.unwrap_or("unk"),
        status: e.status.map_or_else(|| "-".to_string(), |s| s.to_string()),
        digest: e.digest,
        length: e.length.to_string(),
        offset: e.offset.to_string(),
        filename: e.filename,
    };
    // Serialising a struct of strings cannot fail.
    let json = serde_json::to_string(&fields).unwrap_or_default();
    format!("{} {} {json}", surt(e.url), e.date.format("%Y%m%d%H%M%S"))
}

/// Sorts the lines bytewise and writes them to `path` through a temporary file and
/// a rename, so the index is either the old one or the whole new one.
pub(crate) fn write_sorted(path: &Path, mut lines: Vec<String>) -> io::Result<u64> {
    lines.sort_unstable();
    let tmp = path.with_extension("cdxj.tmp");
    let mut out = io::BufWriter::new(fs::File::create(&tmp)?);
    let mut bytes = 0u64;
    for l in &lines {
        out.write_all(l.as_bytes())?;
        out.write_all(b"\n")?;
        bytes += l.len() as u64 + 1;
    }
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    fs::rename(&tmp, path)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_is_pywb_shaped() {
        let url = Url::parse("http://example.com/a").unwrap();
        let date = DateTime::parse_from_rfc3339("2024-01-02T03:04:05.678Z")
            .unwrap()
            .with_timezone(&Utc);
        let got = line(&Entry {
            url: &url,
            date,
            mime: Some("text/html"),
            status: Some(200),
            digest: "ABC",
            length: 10,
            offset: 20,
            filename: "x.warc.gz",
        });
        assert_eq!(
            got,
            "com,example)/a 20240102030405 {\"url\":\"http://example.com/a\",\"mime\":\"text/html\",\
             \"status\":\"200\",\"digest\":\"ABC\",\"length\":\"10\",\"offset\":\"20\",\
             \"filename\":\"x.warc.gz\"}"
        );
    }
}
