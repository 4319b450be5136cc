//! Sitemaps, sitemap indexes and feeds as sources of URLs (sitemaps.org protocol).
//!
//! A pure function of the response body: the caller fetches, resolves the raw URLs
//! this returns against the sitemap's URL, and applies scope. The protocol's limits
//! (50,000 URLs, 50 MB uncompressed) are enforced here, and enforced *while*
//! decompressing, so a small gzip bomb costs at most 50 MB. XML is read with
//! `quick-xml`'s streaming reader, which never expands entities beyond the five
//! predefined ones and character references, so external entities (XXE) and
//! "billion laughs" definitions are inert.

mod xml;

use std::borrow::Cow;
use std::io::Read;

use flate2::read::MultiGzDecoder;
use url::Url;

/// The most URLs one sitemap file may list (sitemaps.org); the rest are ignored.
pub const MAX_URLS: usize = 50_000;

/// The most uncompressed bytes of one sitemap file that are read (sitemaps.org's
/// 50 MB, taken as 50 MiB); the rest is ignored.
pub const MAX_BYTES: usize = 50 * 1024 * 1024;

/// What kind of document a sitemap body was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SitemapKind {
    /// An XML `<urlset>`: its URLs are pages.
    UrlSet,
    /// An XML `<sitemapindex>`: its URLs are further sitemaps.
    Index,
    /// A plain-text sitemap, one URL per line.
    Text,
    /// An RSS or Atom feed, read for its links.
    Feed,
}

/// The URLs one sitemap body lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sitemap {
    /// What the document was; for [`SitemapKind::Index`] the URLs are sitemaps.
    pub kind: SitemapKind,
    /// The URLs as written in the document, trimmed (entities decoded, otherwise
    /// unresolved and unnormalised).
    pub urls: Vec<String>,
    /// Whether the document was not read to its end: it had more than
    /// [`MAX_URLS`] URLs or [`MAX_BYTES`] bytes, or it broke off (malformed XML,
    /// corrupt gzip) after some URLs had been read.
    pub truncated: bool,
}

/// Why a sitemap body yielded nothing.
#[derive(Debug, thiserror::Error)]
pub enum SitemapError {
    /// The body was empty or only whitespace.
    #[error("sitemap body is empty")]
    Empty,
    /// The body started like gzip but could not be decompressed.
    #[error("sitemap is not valid gzip")]
    Gzip(#[source] std::io::Error),
    /// The XML was malformed before any URL could be read.
    #[error("malformed sitemap XML at byte {position}: {message}")]
    Xml {
        /// Offset in the (decompressed) body where the reader gave up.
        position: u64,
        /// The XML reader's description of the problem.
        message: String,
    },
    /// Well-formed XML, but not a `urlset`, `sitemapindex`, RSS or Atom document.
    #[error("not a sitemap or feed (root element <{root}>)")]
    NotASitemap {
        /// The local name of the document's root element.
        root: String,
    },
}

/// Parses a sitemap body: XML `urlset` or `sitemapindex` (any namespace, including
/// Google's old 0.84 and 0.9), plain text, RSS 2.0 / RSS 1.0, or Atom; gzip-compressed
/// or not (detected by its magic bytes, whatever the `Content-Type` said).
pub fn parse_sitemap(body: &[u8]) -> Result<Sitemap, SitemapError> {
    let (data, cut) = decompress(body)?;
    let text = String::from_utf8_lossy(&data);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    if text.trim_end().is_empty() {
        return Err(SitemapError::Empty);
    }
    let mut sitemap = if text.starts_with('<') {
        xml::parse(text)?
    } else {
        parse_text(text, cut)
    };
    sitemap.truncated |= cut;
    Ok(sitemap)
}

/// Whether a URL listed in the sitemap at `sitemap_url` may be taken from it.
/// sitemaps.org lets a sitemap list only URLs of its own origin at or below its
/// own directory (`/a/sitemap.xml` covers `/a/…`), except when robots.txt named
/// the sitemap, which vouches for it. Scope rules still apply afterwards.
pub fn sitemap_allows(sitemap_url: &Url, target: &Url, from_robots: bool) -> bool {
    if from_robots {
        return true;
    }
    // Opaque origins (file:, data:) are never equal, so they are refused here.
    if sitemap_url.origin() != target.origin() {
        return false;
    }
    let path = sitemap_url.path();
    let dir = path.rfind('/').map_or("/", |slash| &path[..=slash]);
    target.path().starts_with(dir)
}

/// The body to parse, uncompressed and cut to [`MAX_BYTES`], and whether
/// anything was cut off.
fn decompress(body: &[u8]) -> Result<(Cow<'_, [u8]>, bool), SitemapError> {
    if !body.starts_with(&[0x1f, 0x8b]) {
        let cut = body.len() > MAX_BYTES;
        return Ok((Cow::Borrowed(&body[..body.len().min(MAX_BYTES)]), cut));
    }
    let mut out = Vec::new();
    // One byte past the limit tells "exactly at the limit" from "over it" without
    // ever inflating more than that.
    let mut reader = MultiGzDecoder::new(body).take(MAX_BYTES as u64 + 1);
    let broken = match reader.read_to_end(&mut out) {
        Ok(_) => false,
        // read_to_end keeps what it had read before the error.
        Err(_) if !out.is_empty() => true,
        Err(err) => return Err(SitemapError::Gzip(err)),
    };
    let cut = broken || out.len() > MAX_BYTES;
    out.truncate(MAX_BYTES);
    Ok((Cow::Owned(out), cut))
}

/// A text sitemap: every non-blank line is a URL. When the body was cut, its
/// last line may be a fragment of a URL, so it is dropped.
fn parse_text(text: &str, cut: bool) -> Sitemap {
    let text = match text.rfind('\n') {
        Some(last_eol) if cut => &text[..last_eol],
        None if cut => "",
        _ => text,
    };
    let mut urls: Vec<String> = Vec::new();
    let mut truncated = false;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if urls.len() == MAX_URLS {
            truncated = true;
            break;
        }
        urls.push(line.to_owned());
    }
    Sitemap {
        kind: SitemapKind::Text,
        urls,
        truncated,
    }
}

#[cfg(test)]
mod tests;
