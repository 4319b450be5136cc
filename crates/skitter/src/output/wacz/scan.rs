//! One pass over the WARC files of a WACZ: the CDXJ line of each capture, and the
//! page list entry of each HTML page (its title and visible text, see
//! [`crate::parse::text`], for ReplayWeb.page's full-text search).
//!
//! The index is built from the records themselves, so any WARC files can be
//! packed, not only skitter's; the lines are those skitter's WARC sink writes
//! (`cdx::line`), the same keys and fields pywb's indexer gives. Page entries go
//! to a writer as they are found (a page's text can be large); the index lines
//! go to an external sort (`sort`), which holds a bounded part of them.
//! The WACZ sink's in-crawl index (`live`) hands the records the WARC writer
//! builds to the same [`Scan::add`], so a crawl's archive and `wacz create`'s
//! of the same files agree line for line.

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::Serialize;
use url::Url;

use xxhash_rust::xxh3::xxh3_64;

use super::sort::{self, ExternalSort};
use crate::output::warc::read::{ReadRecord, WarcReader};
use crate::output::warc::{Built, cdx};
use crate::parse::text::{PageText, page_text};

/// The most of a record's block kept for reading a page's text; a longer page
/// gives the text of its first part.
pub(crate) const KEEP: usize = 8 << 20;

/// Records that get an index line, as pywb's indexer chooses them.
const INDEXED: [&str; 3] = ["response", "revisit", "resource"];

/// What one pass found, besides the page entries it wrote.
pub(crate) struct Scan {
    /// The CDXJ lines, being sorted (in bounded memory: see `sort`).
    pub lines: ExternalSort,
    /// Page entries written.
    pub pages: u64,
    /// The pages listed, by a 64-bit hash of their URL (8 bytes a page, not
    /// the URL: a crawl of millions of pages lists each once in little
    /// memory; two URLs of one hash, one chance in 2^64 per pair, would
    /// list only the first).
    seen: HashSet<u64>,
    /// Each page entry starts with its URL's hash (16 hex digits and a
    /// space), for a later pass to leave out pages listed elsewhere.
    tag_pages: bool,
}

impl Scan {
    /// A pass whose index runs, if any, go to temporary files in `dir`.
    pub(crate) fn new(dir: &Path) -> Scan {
        Scan {
            lines: ExternalSort::new(dir, sort::RUN_BYTES),
            pages: 0,
            seen: HashSet::new(),
            tag_pages: false,
        }
    }

    /// A pass whose page entries start with their URL's hash (see
    /// [`Scan::listed`]).
    pub(crate) fn tagged(dir: &Path) -> Scan {
        Scan {
            tag_pages: true,
            ..Scan::new(dir)
        }
    }

    /// A pass continuing the index lines of `lines`, listing pages afresh.
    pub(crate) fn with_lines(lines: ExternalSort) -> Scan {
        Scan {
            lines,
            pages: 0,
            seen: HashSet::new(),
            tag_pages: false,
        }
    }
}

/// One line of `pages.jsonl`.
#[derive(Serialize)]
struct PageEntry<'a> {
    id: String,
    url: &'a str,
    ts: String,
    title: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    text: &'a str,
}

impl Scan {
    /// Adds `capture`'s index line, and writes its page entry to `pages` when
    /// it is an HTML page not listed before. The same for a record read back
    /// from a WARC file ([`scan_warc`]) and one the crawl's writer reports
    /// (the sink's in-crawl index, `live`): its `body` is what a reader of the
    /// file keeps (at most [`KEEP`] bytes with the head) and `truncated` says
    /// the body stops short of the payload, at [`KEEP`] or at the fetch cap.
    pub(crate) fn add(&mut self, capture: &Built<'_>, pages: &mut impl Write) -> io::Result<()> {
        let http = (capture.kind != "resource").then(|| HttpHead::parse(capture.head));
        let (status, mime) = match (&http, capture.kind) {
            (_, "revisit") => (http.as_ref().and_then(|h| h.status), Some("warc/revisit")),
            (Some(h), _) => (h.status, h.mime.as_deref()),
            // pywb gives a resource record the status 200 and its own type.
            (None, _) => (Some(200), capture.mime),
        };
        self.lines.push(cdx::line(&cdx::Entry {
            url: capture.url,
            date: capture.date,
            mime: mime.map(|m| m.split(';').next().unwrap_or(m).trim()),
            status,
            digest: capture.digest,
            length: capture.length,
            offset: capture.offset,
            filename: capture.filename,
        }))?;
        if let Some(head) = http.filter(|h| capture.kind == "response" && h.is_page()) {
            let hash = xxh3_64(capture.url.as_str().as_bytes());
            if self.seen.insert(hash) {
                if self.tag_pages {
                    write!(pages, "{hash:016x} ")?;
                }
                write_page(capture, &head, pages)?;
                self.pages += 1;
            }
        }
        Ok(())
    }

    /// Whether a page of this URL hash was listed.
    pub(crate) fn listed(&self, hash: u64) -> bool {
        self.seen.contains(&hash)
    }
}

/// Indexes the WARC file at `path`, known in the archive as `name`, adding its
/// lines to `scan` and writing a page entry for each HTML page not seen before
/// to `pages`.
pub(crate) fn scan_warc(
    path: &Path,
    name: &str,
    scan: &mut Scan,
    pages: &mut impl Write,
) -> io::Result<()> {
    let mut reader = WarcReader::open(path, KEEP)?;
    while let Some(record) = reader.next_record()? {
        let kind = record.field("WARC-Type").unwrap_or_default();
        if !INDEXED.contains(&kind) {
            continue;
        }
        let (Some(url), Some(date)) = (record_url(&record), record_date(&record)) else {
            continue;
        };
        let head_len = if kind == "resource" {
            0
        } else {
            head_len(&record.block)
        };
        let digest = record
            .field("WARC-Payload-Digest")
            .map(|d| d.strip_prefix("sha1:").unwrap_or(d))
            .unwrap_or("-");
        let capture = Built {
            kind,
            url: &url,
            date,
            head: &record.block[..head_len],
            body: &record.block[head_len..],
            truncated: record.block_cut || record.field("WARC-Truncated").is_some(),
            mime: record.field("Content-Type"),
            digest,
            length: record.length,
            offset: record.offset,
            filename: name,
            text: None,
        };
        scan.add(&capture, pages)?;
    }
    Ok(())
}

/// The length of the HTTP head at the start of `block`, up to and with its
/// blank line (all of it when there is none).
pub(crate) fn head_len(block: &[u8]) -> usize {
    memchr::memmem::find(block, b"\r\n\r\n").map_or(block.len(), |i| i + 4)
}

/// Writes the page entry of an HTML response: its title and text as the
/// crawl read them, or else read from the body (decoded as the crawler
/// decodes it) by the same gatherer, [`page_text`].
fn write_page(capture: &Built<'_>, head: &HttpHead, out: &mut impl Write) -> io::Result<()> {
    let url = capture.url;
    let read;
    let page = match capture.text {
        Some(text) => text,
        None => {
            read = body_text(capture, head);
            &read
        }
    };
    let entry = PageEntry {
        id: uuid::Builder::from_random_bytes(rand::random())
            .into_uuid()
            .simple()
            .to_string(),
        url: url.as_str(),
        ts: capture
            .date
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        title: page.title.as_deref().unwrap_or(url.as_str()),
        text: &page.text,
    };
    serde_json::to_writer(&mut *out, &entry)?;
    out.write_all(b"\n")
}

/// The title and visible text of an HTML response's body; none when the
/// body cannot be decoded.
fn body_text(capture: &Built<'_>, head: &HttpHead) -> PageText {
    let decoded = crate::fetch::decode::decode_prefix(
        head.encoding.as_deref(),
        capture.body,
        KEEP as u64,
        capture.truncated,
    );
    decoded.map_or_else(
        |_| PageText::default(),
        |d| page_text(&crate::parse::links::decode_html(&d.body, head.charset.as_deref()).0),
    )
}

fn record_url(record: &ReadRecord) -> Option<Url> {
    Url::parse(record.target()?).ok()
}

fn record_date(record: &ReadRecord) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(record.field("WARC-Date")?)
        .ok()
        .map(|d| d.to_utc())
}

/// What the index and the page list need from a response's HTTP head.
#[derive(Debug, Default, PartialEq)]
struct HttpHead {
    status: Option<u16>,
    /// The media type, lowercased, without parameters.
    mime: Option<String>,
    charset: Option<String>,
    encoding: Option<String>,
    /// The head's length, up to and with its blank line.
    len: usize,
}

impl HttpHead {
    fn parse(block: &[u8]) -> HttpHead {
        let len = head_len(block);
        let text = String::from_utf8_lossy(&block[..len]);
        let mut lines = text.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok());
        let mut head = HttpHead {
            status,
            len,
            ..HttpHead::default()
        };
        for (name, value) in lines.filter_map(|l| l.split_once(':')) {
            let value = value.trim();
            if name.trim().eq_ignore_ascii_case("content-type") {
                let mut params = value.split(';');
                head.mime = params.next().map(|m| m.trim().to_ascii_lowercase());
                head.charset = params
                    .filter_map(|p| p.split_once('='))
                    .find(|(k, _)| k.trim().eq_ignore_ascii_case("charset"))
                    .map(|(_, v)| v.trim().trim_matches('"').to_string());
            } else if name.trim().eq_ignore_ascii_case("content-encoding") {
                head.encoding = Some(value.to_string());
            }
        }
        head
    }

    /// A page for the page list: an HTML document served whole (200).
    fn is_page(&self) -> bool {
        self.status == Some(200)
            && matches!(
                self.mime.as_deref(),
                Some("text/html" | "application/xhtml+xml")
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_give_status_type_charset_and_coding() {
        let block = b"HTTP/1.1 200 OK\r\nContent-Type: text/HTML; charset=\"latin1\"\r\ncontent-encoding: gzip\r\n\r\nbody";
        let head = HttpHead::parse(block);
        assert_eq!(
            head,
            HttpHead {
                status: Some(200),
                mime: Some("text/html".into()),
                charset: Some("latin1".into()),
                encoding: Some("gzip".into()),
                len: block.len() - 4,
            }
        );
        assert!(head.is_page());
        let redirect = HttpHead::parse(b"HTTP/1.1 301 Moved\r\nContent-Type: text/html\r\n\r\n");
        assert!(!redirect.is_page());
    }
}
