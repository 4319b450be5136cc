//! The mirror sink (`--mirror DIR`): a browsable copy of the crawl on disk, like
//! `wget --mirror`.
//!
//! Every 2xx response (HTML or other) is saved as one file at [`mirror_path`] (the
//! naming rules are documented in `path.rs` and in the README). Saved bytes are the
//! content-decoded body: `Exchange::decoded_body` when the fetcher decoded it (HTML),
//! else the wire body decoded here per its `Content-Encoding` (so a gzip-encoded
//! stylesheet is saved as CSS, not as gzip). A body whose coding cannot be decoded
//! is skipped with a warning rather than saved corrupt. Redirects, errors, failures
//! and skips are not saved, nor is a recrawl's `304` (its empty body must never
//! replace the copy saved before); redirects are remembered so `--convert-links` can point
//! a link at the page its target was saved as.
//!
//! A rendered page (`--render`) is saved as the server sent it, since a mirror
//! is a copy of what was fetched; with [`MirrorOptions::rendered`] its file
//! holds the rendered DOM instead (see `rendered_file`), links converted like
//! any saved page's. The browser's own requests (scripts, images) are not
//! saved: a mirror holds the pages the crawl visited.
//!
//! All file work runs on the blocking pool; files are written to a temporary name
//! and renamed (see `place.rs`). With `convert_links`, `finish` rewrites links in
//! every saved HTML and CSS file (see `convert.rs`). When the crawl's
//! completions survive a power cut, the mirror's file system is synced after
//! each flush (see [`Sink::unsynced`]).

mod convert;
mod path;
pub(super) mod place;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use url::Url;

pub use path::mirror_path;
pub(super) use path::relative_link;

use super::{Exchange, Page, Sink, SinkError, SinkSummary, Syncable, SyncedFilesystem};
use crate::base::outcome::{OutcomeKind, PageRecord};
use crate::fetch::decode;

/// How to mirror.
#[derive(Clone, Debug)]
pub struct MirrorOptions {
    /// Rewrite links in saved HTML and CSS to the saved files when the crawl ends.
    pub convert_links: bool,
    /// The largest file saved after content decoding: the crawl's body size cap,
    /// so a small compression bomb cannot inflate in memory (default 10 MiB, the
    /// fetch default). A longer decoded body is saved cut at this size.
    pub max_body_size: u64,
    /// Save a rendered page's DOM after its scripts ran instead of the HTML
    /// the server sent (`--mirror-rendered`; off by default).
    pub rendered: bool,
}

impl Default for MirrorOptions {
    fn default() -> Self {
        MirrorOptions {
            convert_links: false,
            rendered: false,
            max_body_size: crate::fetch::FetchConfig::default().max_body_size,
        }
    }
}

/// Saves a browsable copy of every 2xx response under a directory.
pub struct MirrorSink {
    dir: PathBuf,
    options: MirrorOptions,
    saved: HashMap<String, Saved>,
    redirects: HashMap<String, Url>,
    files: u64,
    bytes: u64,
    /// The mirror's file system, synced whole (see [`Sink::unsynced`]), and
    /// whether a file was saved since it was last handed out.
    filesystem: Arc<SyncedFilesystem>,
    unsynced: bool,
}

/// A saved file, by URL (without fragment).
#[derive(Clone, Debug)]
struct Saved {
    path: PathBuf,
    url: Url,
    links: Rewrite,
}

/// Whether (and how) a saved file has links to convert.
#[derive(Clone, Debug)]
enum Rewrite {
    Html { charset: Option<String> },
    Css,
    None,
}

impl MirrorSink {
    /// Creates `dir` (and its parents) if needed.
    pub fn create(dir: impl AsRef<Path>, options: MirrorOptions) -> Result<MirrorSink, SinkError> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir)
            .map_err(|e| io_error(format!("cannot create {}", dir.display()), e))?;
        let filesystem = SyncedFilesystem::open(&dir)
            .map_err(|e| io_error(format!("cannot open {}", dir.display()), e))?;
        Ok(MirrorSink {
            filesystem: Arc::new(filesystem),
            unsynced: false,
            dir,
            options,
            saved: HashMap::new(),
            redirects: HashMap::new(),
            files: 0,
            bytes: 0,
        })
    }

    /// Records where a URL was saved (and where earlier files moved), for
    /// `--convert-links`; without it nothing is kept per page.
    fn remember(&mut self, r: &PageRecord, placed: place::Placed, rendered: bool) {
        for (from, to) in placed.moved {
            for s in self.saved.values_mut().filter(|s| s.path == from) {
                s.path = to.clone();
            }
        }
        let links = match r.content_type.as_deref() {
            // The rendered DOM is saved as UTF-8 whatever the page's charset.
            _ if rendered => Rewrite::Html {
                charset: Some("utf-8".into()),
            },
            Some("text/html" | "application/xhtml+xml") => Rewrite::Html {
                charset: r.encoding.clone(),
            },
            Some("text/css") => Rewrite::Css,
            _ => Rewrite::None,
        };
        let saved = Saved {
            path: placed.path,
            url: r.url.clone(),
            links,
        };
        self.saved.insert(key(&r.url), saved);
    }
}

#[async_trait]
impl Sink for MirrorSink {
    fn wants_bodies(&self) -> bool {
        true
    }

    fn wants_decoded_bodies(&self) -> bool {
        true
    }

    async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
        let r = &page.record;
        if r.kind == OutcomeKind::Redirect {
            if let (Some(next), true) = (&r.next_url, self.options.convert_links) {
                self.redirects.insert(key(&r.url), next.clone());
            }
            return Ok(());
        }
        let (Some(ex), Some(200..=299)) = (&page.exchange, r.status) else {
            return Ok(());
        };
        let wanted = mirror_path(&self.dir, &r.url, r.content_type.as_deref());
        let (dir, ex, url) = (self.dir.clone(), ex.clone(), r.url.clone());
        let max = self.options.max_body_size;
        let dom = match &page.rendered {
            Some(done) if self.options.rendered => done.html.as_deref().map(rendered_file),
            _ => None,
        };
        let rendered = dom.is_some();
        let saved = tokio::task::spawn_blocking(move || {
            let body = match dom.map_or_else(|| content(&ex, max), Ok) {
                Ok(body) => body,
                Err(e) => {
                    tracing::warn!(%url, error = %e, "mirror: body not saved");
                    return Ok(None);
                }
            };
            place::save(&dir, &wanted, &body)
                .map(|placed| Some((placed, body.len() as u64)))
                .map_err(|e| io_error(format!("cannot save {url} as {}", wanted.display()), e))
        })
        .await
        .map_err(|e| SinkError::new("mirror", "writer task failed").with_source(e))??;
        if let Some((placed, len)) = saved {
            self.unsynced = true;
            self.files += 1;
            self.bytes += len;
            if self.options.convert_links {
                self.remember(&page.record, placed, rendered);
            }
        }
        Ok(())
    }

    /// Its whole file system, in one call: a page is a new file and often
    /// new directories, each of which would need an `fsync` of its own.
    fn unsynced(&mut self) -> Vec<Arc<dyn Syncable>> {
        if !std::mem::take(&mut self.unsynced) {
            return Vec::new();
        }
        vec![self.filesystem.clone()]
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        if self.options.convert_links {
            let saved = std::mem::take(&mut self.saved);
            let redirects = std::mem::take(&mut self.redirects);
            tokio::task::spawn_blocking(move || convert_all(&saved, &redirects))
                .await
                .map_err(|e| SinkError::new("mirror", "link conversion failed").with_source(e))??;
        }
        Ok(SinkSummary {
            name: "mirror".into(),
            files: vec![self.dir.display().to_string()],
            bytes: self.bytes,
            records: self.files,
            refused: 0,
        })
    }
}

/// Rewrites the links of every saved HTML and CSS file.
fn convert_all(
    saved: &HashMap<String, Saved>,
    redirects: &HashMap<String, Url>,
) -> Result<(), SinkError> {
    let links = convert::Links { saved, redirects };
    for s in saved.values() {
        if matches!(s.links, Rewrite::None) {
            continue;
        }
        let fail = |e| io_error(format!("cannot convert {}", s.path.display()), e);
        let data = std::fs::read(&s.path).map_err(fail)?;
        let new = match &s.links {
            Rewrite::Html { charset } => {
                match convert::rewrite_html(&data, &s.url, charset.as_deref(), &s.path, &links) {
                    Ok(new) => new,
                    Err(e) => {
                        // A page lol_html cannot rewrite stays as it was saved.
                        tracing::warn!(path = %s.path.display(), error = %e, "links not converted");
                        continue;
                    }
                }
            }
            _ => convert::rewrite_css(&data, &|raw| links.rewrite(&s.path, &s.url, raw)),
        };
        if new != data {
            place::write_whole(&s.path, &new).map_err(fail)?;
        }
    }
    Ok(())
}

/// The file for a rendered DOM: UTF-8, as the browser serialised it, behind
/// a doctype (the serialisation has none) and with a `<meta charset>` first
/// in its head, since a page sent in another charset still names that one
/// and a browser opening the file would believe it (the first wins).
fn rendered_file(dom: &str) -> Bytes {
    const META: &str = "<meta charset=\"utf-8\">";
    let mut out = String::with_capacity(dom.len() + 40);
    out.push_str("<!DOCTYPE html>\n");
    match head_open_end(dom) {
        Some(at) => {
            out.push_str(&dom[..at]);
            out.push_str(META);
            out.push_str(&dom[at..]);
        }
        None => {
            out.push_str(META);
            out.push_str(dom);
        }
    }
    Bytes::from(out)
}

/// Just past the `<head …>` start tag of a serialised DOM, where the browser
/// always puts it: right after the `<html …>` start tag.
fn head_open_end(dom: &str) -> Option<usize> {
    let html_end = dom.strip_prefix("<html")?.find('>')? + "<html".len() + 1;
    let rest = dom[html_end..].strip_prefix("<head")?;
    if !rest.starts_with(['>', ' ']) {
        return None;
    }
    Some(html_end + "<head".len() + rest.find('>')? + 1)
}

/// The body to save: content-decoded.
fn content(ex: &Exchange, max: u64) -> Result<Bytes, decode::DecodeError> {
    if let Some(decoded) = &ex.decoded_body {
        return Ok(decoded.clone());
    }
    match header(&ex.response_head, "content-encoding") {
        Some(coding) => decode::decode_prefix(Some(&coding), &ex.body, max, ex.truncated)
            .map(|d| Bytes::from(d.body.into_owned())),
        None => Ok(ex.body.clone()),
    }
}

/// A header's value from a raw response head (the first one, trimmed).
fn header(head: &[u8], name: &str) -> Option<String> {
    head.split(|&b| b == b'\n').skip(1).find_map(|line| {
        let colon = line.iter().position(|&b| b == b':')?;
        line[..colon]
            .trim_ascii()
            .eq_ignore_ascii_case(name.as_bytes())
            .then(|| String::from_utf8_lossy(line[colon + 1..].trim_ascii()).into_owned())
    })
}

/// Map key for a URL: its text without fragment.
fn key(url: &Url) -> String {
    let mut u = url.clone();
    u.set_fragment(None);
    u.into()
}

/// An I/O failure while doing `what` (naming the file).
fn io_error(what: String, e: std::io::Error) -> SinkError {
    SinkError::io("mirror", what, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendered_dom_gets_a_doctype_and_a_utf8_charset_first() {
        let cases = [
            (
                "<html><head><meta charset=\"windows-1252\"></head><body>é</body></html>",
                "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><meta charset=\"windows-1252\"></head><body>é</body></html>",
            ),
            (
                "<html lang=\"en\"><head class=\"x\"></head></html>",
                "<!DOCTYPE html>\n<html lang=\"en\"><head class=\"x\"><meta charset=\"utf-8\"></head></html>",
            ),
            // Not the browser's shape: the charset goes first of all.
            (
                "<html><header></header></html>",
                "<!DOCTYPE html>\n<meta charset=\"utf-8\"><html><header></header></html>",
            ),
            ("", "<!DOCTYPE html>\n<meta charset=\"utf-8\">"),
        ];
        for (dom, want) in cases {
            assert_eq!(rendered_file(dom), want.as_bytes(), "{dom}");
        }
    }

    #[test]
    fn finds_headers_case_insensitively() {
        let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/css\r\nCONTENT-ENCODING:  gzip \r\n\r\n";
        assert_eq!(header(head, "content-encoding").as_deref(), Some("gzip"));
        assert_eq!(header(head, "content-length"), None);
    }
}
