//! Pathological pages under `/hostile/`: inputs sized to crash, stall or
//! bloat a crawler that trusts them (deep nesting, huge link counts, huge
//! attributes, oversized bodies, a compression bomb, endless sitemap indexes).
//!
//! None is linked from `/specials` or the generated pages, so ordinary crawls
//! and their counts are unchanged; a test or bench starts its crawl at one.
//! Sizes are in the path, capped so a typo cannot exhaust the site's memory.

use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Duration;

use bytes::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;
use hyper::header::{CONTENT_ENCODING, CONTENT_TYPE};
use hyper::{Response, StatusCode};

use tokio_util::sync::CancellationToken;

use crate::body::SiteBody;
use crate::number::canonical_u32;
use crate::reply::{HTML, reply, with_header};

/// Largest generated body, in KiB (64 MiB).
const MAX_KIB: u32 = 64 * 1024;
/// Most nested elements of `/hostile/deep/N`.
const MAX_DEPTH: u32 = 1_000_000;
/// Most links on one `/hostile/links/N` page.
const MAX_LINKS: u32 = 2_000_000;
/// Most gzip layers of `/hostile/stacked/N`.
const MAX_STACKED: u32 = 64;
/// Longest gap between two bytes of `/hostile/trickle/S`, in seconds.
const MAX_TRICKLE_SECS: u32 = 60;
/// Largest inflated size of `/hostile/gzipbomb/N`, in MiB.
const MAX_BOMB_MIB: u32 = 4096;

/// Answers a `/hostile/` path, or `None` if `path` is not one:
///
/// - `/hostile/leaf/I`: a small page without links.
/// - `/hostile/noscript/K`: a link to leaf 0, then K KiB of nested `<noscript>`.
/// - `/hostile/links/N`: N distinct links, to leaves 0..N.
/// - `/hostile/linkpages/N`: links to link pages 0..N; link page K links the
///   1,000 leaves K·1000 .. K·1000+999 (so N link pages hold N·1000 distinct
///   links, as many as one `/hostile/links/` page of N·1000).
/// - `/hostile/attr/K`: links to leaves 0 and 1 on elements carrying a K KiB attribute.
/// - `/hostile/big/K`: a K KiB page, a link to leaf 0 first and to leaf 1 last.
/// - `/hostile/deep/N` (N ≤ [`MAX_DEPTH`]): a paragraph of text inside N
///   nested `<div>`s, then a link to leaf 0 (for content extractors that
///   walk the DOM).
/// - `/hostile/gzipbomb/M`: a gzip body (about 1 KiB per MiB) that inflates to
///   M MiB of HTML: a link to leaf 0, then spaces.
/// - `/hostile/sitemapindex/I`: a sitemap index naming index I+1, without end.
/// - `/hostile/stacked/N`: a 1 MiB page (a link to leaf 0, then spaces)
///   gzip-wrapped N times (1 to 64) without compressing (stored blocks), sent
///   as `Content-Encoding: gzip, gzip, …`: every layer a client decodes is a
///   full MiB of work.
/// - `/hostile/trickle/S`: an HTML head, then one space every S seconds
///   (1 to 60) without end: never silent long enough for a read timeout.
pub(crate) fn route(path: &str, shutdown: &CancellationToken) -> Option<Response<SiteBody>> {
    let rest = path.strip_prefix("/hostile/")?;
    let (kind, arg) = rest.split_once('/')?;
    let n = canonical_u32(arg)?;
    let html = |body: String| reply(StatusCode::OK, Some(HTML), body);
    Some(match kind {
        "leaf" => html(format!(
            "<!DOCTYPE html>\n<title>Leaf {n}</title><p>leaf {n}</p>\n"
        )),
        "noscript" if n <= MAX_KIB => html(noscript(n as usize * 1024)),
        "links" if n <= MAX_LINKS => html(links(0, n, "leaf")),
        "linkpages" if n <= MAX_LINKS / 1000 => html(links(0, n, "linkpage")),
        "linkpage" if n < MAX_LINKS / 1000 => html(links(n * 1000, 1000, "leaf")),
        "attr" if n <= MAX_KIB => html(attr(n as usize * 1024)),
        "big" if n <= MAX_KIB => html(big(n as usize * 1024)),
        "deep" if n <= MAX_DEPTH => html(deep(n as usize)),
        "gzipbomb" if n <= MAX_BOMB_MIB => with_header(
            reply(StatusCode::OK, Some(HTML), gzip_bomb(n)),
            CONTENT_ENCODING,
            "gzip",
        ),
        "stacked" if (1..=MAX_STACKED).contains(&n) => with_header(
            reply(StatusCode::OK, Some(HTML), stacked(n)),
            CONTENT_ENCODING,
            &vec!["gzip"; n as usize].join(", "),
        ),
        "trickle" if (1..=MAX_TRICKLE_SECS).contains(&n) => {
            let head = Bytes::from_static(b"<!DOCTYPE html>\n<html><body><p>Trickle");
            let every = Duration::from_secs(u64::from(n));
            let body = SiteBody::trickle(head, every, shutdown.clone().cancelled_owned());
            with_header(Response::new(body), CONTENT_TYPE, HTML)
        }
        "sitemapindex" => reply(StatusCode::OK, Some("application/xml"), sitemap_index(n)),
        _ => return None,
    })
}

fn deep(depth: usize) -> String {
    let mut out = String::with_capacity(depth * 11 + 200);
    out.push_str("<!DOCTYPE html>\n<title>Deep</title><body>");
    out.push_str(&"<div>".repeat(depth));
    out.push_str("<p>Deep down there is a paragraph of words, long enough to be content.</p>");
    out.push_str(&"</div>".repeat(depth));
    out.push_str("<a href=\"/hostile/leaf/0\">leaf</a></body>\n");
    out
}

fn noscript(len: usize) -> String {
    let mut out = String::with_capacity(len + 64);
    out.push_str("<!DOCTYPE html>\n<a href=\"/hostile/leaf/0\">first</a>");
    while out.len() < len {
        out.push_str("<noscript>");
    }
    out
}

/// `n` links to `/hostile/{kind}/{first}` and on.
fn links(first: u32, n: u32, kind: &str) -> String {
    let mut out = String::with_capacity(n as usize * 32 + 64);
    out.push_str("<!DOCTYPE html>\n<title>Links</title>\n");
    for i in first..first + n {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "<a href=\"/hostile/{kind}/{i}\">{i}</a>");
    }
    out
}

fn attr(len: usize) -> String {
    let filler = "x".repeat(len);
    format!(
        "<!DOCTYPE html>\n<a title=\"{filler}\" href=\"/hostile/leaf/0\">0</a>\n\
         <div data-x=\"{filler}\"><a href=\"/hostile/leaf/1\">1</a></div>\n"
    )
}

fn big(len: usize) -> String {
    let head = "<!DOCTYPE html>\n<a href=\"/hostile/leaf/0\">early</a>\n";
    let tail = "<a href=\"/hostile/leaf/1\">late</a>\n";
    let line = "<p>Filler text that takes room and carries no links.</p>\n";
    let mut out = String::with_capacity(len + line.len());
    out.push_str(head);
    while out.len() + line.len() + tail.len() <= len {
        out.push_str(line);
    }
    out.push_str(tail);
    out
}

/// One gzip member per MiB: concatenated members are one valid gzip body, so
/// the bomb costs one small compression, not `mib` of them.
fn gzip_bomb(mib: u32) -> Bytes {
    let mut first = vec![b' '; 1 << 20];
    let link = b"<!DOCTYPE html>\n<a href=\"/hostile/leaf/0\">bomb</a>\n";
    first[..link.len()].copy_from_slice(link);
    let member = |data: &[u8]| {
        let mut e = GzEncoder::new(Vec::new(), Compression::best());
        // Writing to a Vec cannot fail.
        let _ = e.write_all(data);
        e.finish().unwrap_or_default()
    };
    let head = member(&first);
    let rest = member(&[b' '; 1 << 20]);
    let mut out = head;
    for _ in 1..mib {
        out.extend_from_slice(&rest);
    }
    Bytes::from(out)
}

/// A 1 MiB page wrapped in `layers` stored (uncompressed) gzip members, one
/// inside the other.
fn stacked(layers: u32) -> Bytes {
    let mut body = vec![b' '; 1 << 20];
    let link = b"<!DOCTYPE html>\n<a href=\"/hostile/leaf/0\">stacked</a>\n";
    body[..link.len()].copy_from_slice(link);
    for _ in 0..layers {
        let mut e = GzEncoder::new(Vec::with_capacity(body.len() + 1024), Compression::none());
        // Writing to a Vec cannot fail.
        let _ = e.write_all(&body);
        body = e.finish().unwrap_or_default();
    }
    Bytes::from(body)
}

fn sitemap_index(i: u32) -> String {
    let next = i.saturating_add(1);
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
         <sitemap><loc>/hostile/sitemapindex/{next}</loc></sitemap>\n\
         </sitemapindex>\n"
    )
}
