//! The XML side of sitemap parsing: one pass over `quick-xml` events that collects
//! `urlset/url/loc`, `sitemapindex/sitemap/loc`, RSS `channel/link`, `item/link`
//! (or a permalink `guid` when an item has no link), and Atom `feed/link` and
//! `entry/link` hrefs.
//!
//! Elements are matched by local name only, because real sitemaps use every
//! namespace there has been (Google's 0.84, sitemaps.org 0.9, none, or `xmlns=""`
//! on children), and by parent, so that `image:loc` inside `image:image` is not
//! mistaken for a page.

use quick_xml::XmlVersion;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::reader::Reader;

use super::{MAX_URLS, Sitemap, SitemapError, SitemapKind};

/// Longest URL text we keep; sitemaps.org caps URLs at 2,048 characters, and a
/// bound keeps one endless `<loc>` from growing a buffer to the body size.
const MAX_URL_LEN: usize = 16 * 1024;

/// Which document the root element announced.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    UrlSet,
    Index,
    Rss,
    Atom,
}

/// The element kinds whose position matters; everything else is `Other`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tag {
    Url,
    Sitemap,
    Channel,
    Item,
    Entry,
    Feed,
    Other,
}

/// Text being collected from a `loc`, `link` or `guid` element.
struct Capture {
    /// The stack depth of the element, so its own end tag closes the capture.
    depth: usize,
    text: String,
    is_guid: bool,
}

/// State of the single pass over the document.
struct Walker {
    mode: Mode,
    /// Whether the root element's end tag is still to come; a document that ends
    /// before it was cut off.
    root_open: bool,
    /// Open elements below the root (the root itself is implied by `mode`).
    stack: Vec<Tag>,
    capture: Option<Capture>,
    /// For RSS items: whether a `link` was seen, and a permalink `guid` to use
    /// instead when none was.
    item_has_link: bool,
    item_guid: Option<String>,
    urls: Vec<String>,
    /// Set once a URL beyond [`MAX_URLS`] turns up.
    full: bool,
}

/// Parses an XML sitemap or feed (already decompressed and decoded).
pub(super) fn parse(text: &str) -> Result<Sitemap, SitemapError> {
    let mut reader = Reader::from_str(text);
    // Raw `&` in query strings is the most common sitemap mistake; read it as text.
    reader.config_mut().allow_dangling_amp = true;
    let mut walker: Option<Walker> = None;
    loop {
        let event = match reader.read_event() {
            Ok(event) => event,
            Err(err) => return broken(walker, reader.error_position(), &err.to_string()),
        };
        match (event, walker.as_mut()) {
            (Event::Eof, Some(w)) if w.root_open => {
                let position = reader.buffer_position();
                return broken(walker, position, "document ends inside an element");
            }
            (Event::Eof, _) => break,
            (Event::Start(e), None) => walker = Some(Walker::new(&e, true)?),
            (Event::Empty(e), None) => walker = Some(Walker::new(&e, false)?),
            (Event::Start(e), Some(w)) => w.start(&e),
            (Event::Empty(e), Some(w)) => {
                w.start(&e);
                w.end();
            }
            (Event::End(_), Some(w)) => w.end(),
            (Event::Text(t), Some(w)) => w.text(&t.xml10_content()),
            (Event::CData(t), Some(w)) => w.text(&t.xml10_content()),
            (Event::GeneralRef(r), Some(w)) => w.reference(&r),
            _ => {}
        }
        if walker.as_ref().is_some_and(|w| w.full) {
            break;
        }
    }
    match walker {
        Some(w) => Ok(w.finish()),
        None => Err(SitemapError::Xml {
            position: reader.buffer_position(),
            message: "no root element".to_owned(),
        }),
    }
}

/// The result for a document that broke off: what was read so far, if anything.
fn broken(walker: Option<Walker>, position: u64, message: &str) -> Result<Sitemap, SitemapError> {
    match walker {
        Some(w) if !w.urls.is_empty() => {
            let mut sitemap = w.finish();
            sitemap.truncated = true;
            Ok(sitemap)
        }
        _ => Err(SitemapError::Xml {
            position,
            message: message.to_owned(),
        }),
    }
}

impl Walker {
    /// Starts the walk at the root element, which decides the document kind.
    fn new(root: &BytesStart<'_>, root_open: bool) -> Result<Walker, SitemapError> {
        let mode = match root.local_name().as_ref() {
            "urlset" => Mode::UrlSet,
            "sitemapindex" => Mode::Index,
            // RSS 2.0 and RSS 1.0 (`rdf:RDF`) share `channel/link` and `item/link`.
            "rss" | "RDF" => Mode::Rss,
            "feed" => Mode::Atom,
            other => {
                return Err(SitemapError::NotASitemap {
                    root: other.to_owned(),
                });
            }
        };
        Ok(Walker {
            mode,
            root_open,
            stack: Vec::new(),
            capture: None,
            item_has_link: false,
            item_guid: None,
            urls: Vec::new(),
            full: false,
        })
    }

    fn start(&mut self, element: &BytesStart<'_>) {
        let name = element.local_name();
        let name = name.as_ref();
        let parent = self.stack.last().copied().unwrap_or(match self.mode {
            Mode::Atom => Tag::Feed,
            _ => Tag::Other,
        });
        let tag = match name {
            "url" => Tag::Url,
            "sitemap" => Tag::Sitemap,
            "channel" => Tag::Channel,
            "item" => Tag::Item,
            "entry" => Tag::Entry,
            _ => Tag::Other,
        };
        self.stack.push(tag);
        if tag == Tag::Item {
            self.item_has_link = false;
            self.item_guid = None;
        }
        let depth = self.stack.len();
        let capture = |is_guid| Capture {
            depth,
            text: String::new(),
            is_guid,
        };
        match (self.mode, name, parent) {
            (Mode::UrlSet, "loc", Tag::Url) | (Mode::Index, "loc", Tag::Sitemap) => {
                self.capture = Some(capture(false));
            }
            (Mode::Rss, "link", Tag::Channel | Tag::Item) => {
                self.item_has_link |= parent == Tag::Item;
                self.capture = Some(capture(false));
            }
            (Mode::Rss, "guid", Tag::Item) if is_permalink(element) => {
                self.capture = Some(capture(true));
            }
            (Mode::Atom, "link", Tag::Feed | Tag::Entry) => self.atom_link(element),
            _ => {}
        }
    }

    fn end(&mut self) {
        let depth = self.stack.len();
        if depth == 0 {
            self.root_open = false;
            return;
        }
        if self.capture.as_ref().is_some_and(|c| c.depth == depth)
            && let Some(capture) = self.capture.take()
        {
            let text = capture.text.trim();
            if capture.is_guid {
                self.item_guid = Some(text.to_owned()).filter(|t| !t.is_empty());
            } else {
                self.push(text);
            }
        }
        if self.stack.pop() == Some(Tag::Item)
            && !self.item_has_link
            && let Some(guid) = self.item_guid.take()
        {
            self.push(&guid);
        }
    }

    fn text(&mut self, text: &str) {
        if let Some(capture) = self.capture.as_mut() {
            // Past the bound the URL is garbage anyway; stop growing and let the
            // length check in `push` drop it.
            if capture.text.len() <= MAX_URL_LEN {
                capture.text.push_str(text);
            }
        }
    }

    /// Resolves `&name;` and `&#n;` inside captured text. Entities declared in a
    /// DTD are never expanded (that is where XXE lives); they are dropped.
    fn reference(&mut self, reference: &BytesRef<'_>) {
        if self.capture.is_none() {
            return;
        }
        let mut buf = [0u8; 4];
        let resolved = match reference.resolve_char_ref() {
            Ok(Some(ch)) => Some(&*ch.encode_utf8(&mut buf)),
            Ok(None) => resolve_predefined_entity(&reference.xml10_content()),
            Err(_) => None,
        };
        if let Some(text) = resolved {
            self.text(text);
        }
    }

    /// An Atom `<link href=…>` counts when its `rel` is absent or `alternate`
    /// (the page itself), not `self`, `edit`, `enclosure` and the like.
    fn atom_link(&mut self, element: &BytesStart<'_>) {
        let rel = attribute(element, "rel");
        if rel.as_deref().is_some_and(|rel| rel.trim() != "alternate") {
            return;
        }
        if let Some(href) = attribute(element, "href") {
            self.push(href.trim());
        }
    }

    fn push(&mut self, url: &str) {
        if url.is_empty() || url.len() > MAX_URL_LEN {
            return;
        }
        if self.urls.len() == MAX_URLS {
            self.full = true;
            return;
        }
        self.urls.push(url.to_owned());
    }

    fn finish(self) -> Sitemap {
        let kind = match self.mode {
            Mode::UrlSet => SitemapKind::UrlSet,
            Mode::Index => SitemapKind::Index,
            Mode::Rss | Mode::Atom => SitemapKind::Feed,
        };
        Sitemap {
            kind,
            urls: self.urls,
            truncated: self.full,
        }
    }
}

/// RSS: a `guid` is the item's URL unless it says `isPermaLink="false"`.
fn is_permalink(element: &BytesStart<'_>) -> bool {
    attribute(element, "isPermaLink").is_none_or(|v| v.trim() != "false")
}

/// An attribute's value with predefined entities decoded; a value that cannot be
/// decoded is used as written rather than dropped.
fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    let attr = element.try_get_attribute(name).ok().flatten()?;
    let value = attr
        .normalized_value(XmlVersion::Implicit1_0)
        .map(|v| v.into_owned())
        .unwrap_or_else(|_| attr.value.clone().into_owned());
    Some(value)
}
