//! A page read for a link checker: every link with the line it is on, and
//! the anchors (`id`s and `<a name>`s) a `#fragment` may point at, from the
//! one `lol_html` pass the link extraction makes anyway ([`AnchorPass`]
//! adds them to the crawl's own pass); [`PageLinks`] is what a checker gets
//! of any page, HTML or not.

use std::cell::RefCell;

use lol_html::{HtmlRewriter, Settings};
use url::Url;

use super::parsed::{on_element, parsed_selector};
use super::{ExtractMode, HtmlDocument, Link, LinkPass, decode_attribute, decode_html};

/// The most anchors kept of one page unless told otherwise: far above real
/// pages (a long manual page has a few thousand `id`s), and what bounds a
/// hostile page's cost.
pub const DEFAULT_MAX_ANCHORS: usize = 50_000;

/// Anchors longer than this are not kept: no fragment a person writes is
/// that long, and it bounds the memory a page of huge `id`s takes.
pub const MAX_ANCHOR_LEN: usize = 1024;

/// The result of [`extract_anchored`].
#[derive(Debug, Clone)]
pub struct AnchoredDocument {
    /// The links in every mode's sense of [`ExtractMode::Resources`]: pages
    /// and subresources.
    pub doc: HtmlDocument,
    /// The 1-based source line of each link of `doc.links`, in its order.
    pub lines: Vec<u32>,
    /// Every `id` and `<a name>` of the page, as written (entity-decoded),
    /// in document order, duplicates left in.
    pub anchors: Vec<String>,
    /// Anchors past the cap, dropped: a fragment pointing at one is not
    /// reported missing by a careful caller (see `anchors_cut`).
    pub anchors_cut: u64,
}

/// A page's links as a link checker reads them, whatever the page is: each
/// link with its source line, and for an HTML page its anchors. The crawl
/// hands one to the sinks that ask for it (`Sink::wants_links`) from its
/// own parse of the page, so a checker reads no page twice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// The links, in the crawl's order: those of the response's headers
    /// first, then those of the body.
    pub links: Vec<Link>,
    /// The 1-based line of each link of `links`, in its order; 0 where the
    /// link has no line (a header, a sitemap entry).
    pub lines: Vec<u32>,
    /// Every `id` and `<a name>` of an HTML page, as written
    /// (entity-decoded), in document order; `None` when the page is not
    /// HTML (a stylesheet, a sitemap).
    pub anchors: Option<Vec<String>>,
    /// Anchors past the cap, dropped: a fragment pointing at one is not
    /// reported missing by a careful caller.
    pub anchors_cut: u64,
}

impl From<AnchoredDocument> for PageLinks {
    fn from(doc: AnchoredDocument) -> PageLinks {
        PageLinks {
            links: doc.doc.links,
            lines: doc.lines,
            anchors: Some(doc.anchors),
            anchors_cut: doc.anchors_cut,
        }
    }
}

/// The anchor handlers to add to a `lol_html` pass over a page (the link
/// pass's own, so the page is tokenized once): every `id` and
/// `<a name>`, at most `max` of them, none over [`MAX_ANCHOR_LEN`].
pub(crate) struct AnchorPass {
    found: RefCell<(Vec<String>, u64)>,
    max: usize,
}

impl AnchorPass {
    /// A pass keeping at most `max` anchors.
    pub(crate) fn new(max: usize) -> AnchorPass {
        AnchorPass {
            found: RefCell::new((Vec::new(), 0)),
            max,
        }
    }

    fn keep(&self, value: Option<String>) {
        let Some(value) = value else { return };
        let mut found = self.found.borrow_mut();
        if found.0.len() >= self.max || value.len() > MAX_ANCHOR_LEN {
            found.1 += 1;
            return;
        }
        found.0.push(decode_attribute(&value).into_owned());
    }

    /// `settings` with the anchor handlers added.
    pub(crate) fn handlers<'h>(&'h self, settings: Settings<'h, 'static>) -> Settings<'h, 'static> {
        parsed_selector!(WITH_ID = "[id]");
        parsed_selector!(NAMED_A = "a[name]");
        settings
            .append_element_content_handler(on_element!(WITH_ID.get(), |el| {
                self.keep(el.get_attribute("id"));
                Ok(())
            }))
            .append_element_content_handler(on_element!(NAMED_A.get(), |el| {
                self.keep(el.get_attribute("name"));
                Ok(())
            }))
    }

    /// The anchors kept, and how many were dropped at the caps.
    pub(crate) fn finish(self) -> (Vec<String>, u64) {
        self.found.into_inner()
    }
}

/// Reads `body` (decoded as [`super::extract_html`] does) for its links,
/// their lines and its anchors: at most `max_links` links and `max_anchors`
/// anchors. Never fails; malformed markup yields what can be read.
pub fn extract_anchored(
    body: &[u8],
    content_type_charset: Option<&str>,
    page_url: &Url,
    max_links: usize,
    max_anchors: usize,
) -> AnchoredDocument {
    let (text, encoding, had_decode_errors) = decode_html(body, content_type_charset);
    let pass = LinkPass::new(&text, ExtractMode::Resources, max_links);
    let anchors = AnchorPass::new(max_anchors);
    let settings = anchors.handlers(pass.handlers(Settings::new().with_strict(false)));
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    if let Err(error) = rewriter
        .write(text.as_bytes())
        .and_then(|()| rewriter.end())
    {
        tracing::debug!(%error, "HTML anchor extraction stopped early");
    }
    let doc = pass.finish(page_url, encoding.name(), had_decode_errors);
    let lines = lines_of(&text, doc.links.iter().map(|l| l.at));
    let (anchors, anchors_cut) = anchors.finish();
    AnchoredDocument {
        doc,
        lines,
        anchors,
        anchors_cut,
    }
}

/// The 1-based line of each byte offset of `text`.
pub(crate) fn lines_of(text: &str, offsets: impl Iterator<Item = usize>) -> Vec<u32> {
    let newlines: Vec<usize> = memchr::memchr_iter(b'\n', text.as_bytes()).collect();
    offsets
        .map(|at| {
            let line = newlines.partition_point(|&n| n < at) + 1;
            u32::try_from(line).unwrap_or(u32::MAX)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(html: &str) -> AnchoredDocument {
        let url = Url::parse("http://example.com/dir/page").unwrap();
        extract_anchored(html.as_bytes(), None, &url, 100, 100)
    }

    #[test]
    fn links_carry_their_line_and_anchors_are_collected() {
        let page = read(
            "<!doctype html>\n<title>t</title>\n<h1 id=top>T</h1>\n\
             <p><a href=/a>a</a>\n<img\n src=i.png>\n<a name=old>x</a>\
             <noscript>\n<a href=/n>n</a></noscript>\n<style>\n\np{background:url(b.png)}</style>\n\
             <div id=\"caf&eacute;\"></div>",
        );
        let got: Vec<(&str, &str, u32)> = page
            .doc
            .links
            .iter()
            .zip(&page.lines)
            .map(|(l, &line)| (l.raw.as_str(), l.element, line))
            .collect();
        assert_eq!(
            got,
            [
                ("/a", "a", 4),
                ("i.png", "img", 5),
                ("/n", "a", 8),
                ("b.png", "style", 11),
            ]
        );
        assert_eq!(page.anchors, ["top", "old", "café"]);
    }

    #[test]
    fn anchors_are_capped() {
        let url = Url::parse("http://example.com/").unwrap();
        let html = "<p id=a></p><p id=b></p><p id=c></p>".to_string()
            + &format!("<p id={}></p>", "x".repeat(MAX_ANCHOR_LEN + 1));
        let page = extract_anchored(html.as_bytes(), None, &url, 10, 2);
        assert_eq!(page.anchors, ["a", "b"]);
        assert_eq!(page.anchors_cut, 2);
    }
}
