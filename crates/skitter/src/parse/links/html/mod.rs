//! HTML link extraction: one streaming `lol_html` pass over the decoded text.
//!
//! There is no DOM: `lol_html` tokenizes with just enough tree awareness to
//! know raw-text elements (`<script>`, `<style>`, `<textarea>`…) and foreign
//! content, which is all link discovery needs. Handlers only record raw
//! values; resolution happens once at the end, because `<base href>` applies
//! to links that appear before it. Attribute values from `lol_html` are as
//! written, so they are entity-decoded with [`decode_attribute`].

use std::cell::RefCell;

use lol_html::html_content::{Element, TextChunk};
use std::sync::LazyLock;

use lol_html::{HtmlRewriter, Selector, Settings};
use url::Url;

use super::parsed::{on_element, on_text, parsed_selector};
use super::rel::{self, Rel};
use super::{
    ExtractMode, Link, LinkKind, css, decode_attribute, decode_html, parse_srcset, refresh_target,
    trim_html_whitespace,
};

/// The result of [`extract_html`].
#[derive(Debug, Clone)]
pub struct HtmlDocument {
    /// Links in document order (a `<style>` element's links at its end).
    pub links: Vec<Link>,
    /// Name of the encoding the body was decoded with (`"UTF-8"`, `"windows-1252"`, …).
    pub charset: &'static str,
    /// True when some bytes were malformed in that encoding and became U+FFFD.
    pub had_decode_errors: bool,
    /// The base links were resolved against: the first `<base href>` resolved
    /// against the page URL, or the page URL itself.
    pub base: Url,
    /// Links past the cap ([`DEFAULT_MAX_LINKS`] for [`extract_html`]): found,
    /// then dropped unread, so a page of a million links costs no more
    /// memory than one at the cap.
    pub cut: u64,
}

/// The most links read from one HTML page unless told otherwise
/// (`--max-links-per-page`). Real pages stay far below it (the largest index
/// pages of the Rust and Python documentation hold about 20,000); a hostile one
/// of 700,000 links, each resolved against a 2 KB page URL, would otherwise
/// cost gigabytes before a single link is gated.
pub const DEFAULT_MAX_LINKS: usize = 100_000;

/// Subresource elements read in [`ExtractMode::Resources`] and the attributes
/// that hold their URLs. `srcset` values hold several URLs.
const RESOURCE_ATTRS: &[(&str, &[&str])] = &[
    ("img", &["src", "srcset"]),
    ("source", &["src", "srcset"]),
    ("link", &["href"]),
    ("script", &["src"]),
    ("iframe", &["src"]),
    ("frame", &["src"]),
    ("video", &["src", "poster"]),
    ("audio", &["src"]),
    ("track", &["src"]),
    ("embed", &["src"]),
    ("object", &["data"]),
];

/// Element names a `style` attribute commonly sits on, so that links from it
/// can name their element with a `&'static str`; others are reported as `"*"`.
const STYLED_TAGS: &[&str] = &[
    "a", "article", "aside", "body", "button", "div", "footer", "h1", "h2", "h3", "h4", "h5", "h6",
    "header", "html", "i", "img", "input", "label", "li", "main", "nav", "ol", "p", "section",
    "span", "table", "td", "th", "tr", "ul",
];

/// A link as found, before the base is known.
struct Found {
    raw: String,
    kind: LinkKind,
    element: &'static str,
    attr: &'static str,
    /// Byte offset of its element in the page's text (see [`Link::at`]).
    at: usize,
}

/// What the handlers collect during the pass.
#[derive(Default)]
struct State {
    found: Vec<Found>,
    /// Links kept at most; the rest are counted in `cut`.
    max: usize,
    cut: u64,
    base_href: Option<String>,
    style_text: String,
    noscript_text: String,
    /// How many `<noscript>` passes enclose the one running now.
    noscript_depth: u32,
    /// Bytes `<noscript>` passes may still re-read: bounds their total work by
    /// the page's own length, however the elements nest.
    noscript_budget: usize,
    /// Where the text the running pass reads starts in the page's text: 0,
    /// or inside a `<noscript>` pass where its text started.
    origin: usize,
    /// Where the `<noscript>` and `<style>` text being collected started.
    noscript_start: Option<usize>,
    style_start: Option<usize>,
}

impl State {
    fn push(
        &mut self,
        raw: String,
        (kind, element, attr): (LinkKind, &'static str, &'static str),
        at: usize,
    ) {
        if self.found.len() >= self.max {
            self.cut += 1;
            return;
        }
        self.found.push(Found {
            raw,
            kind,
            element,
            attr,
            at: self.origin + at,
        });
    }

    /// Records the URL in `attr` of `el`, if present and not blank.
    fn push_attr(
        &mut self,
        el: &Element,
        kind: LinkKind,
        element: &'static str,
        attr: &'static str,
    ) {
        let Some(value) = el.get_attribute(attr) else {
            return;
        };
        let decoded = decode_attribute(&value);
        let raw = trim_html_whitespace(&decoded);
        if raw.is_empty() {
            return;
        }
        let at = el.source_location().bytes().start;
        if attr == "srcset" {
            for candidate in parse_srcset(raw) {
                self.push(candidate, (kind, element, attr), at);
            }
        } else {
            self.push(raw.to_owned(), (kind, element, attr), at);
        }
    }
}

/// Extracts the links of an HTML document.
///
/// `body` is decoded with [`decode_html`] (so `content_type_charset` is the
/// `charset` parameter of the response's `Content-Type`, if any); links are
/// resolved against the first `<base href>` (itself resolved against
/// `page_url`) or `page_url`. Which elements are read depends on `mode`; see
/// the module documentation for what is deliberately left out. Never fails:
/// malformed markup or bytes yield whatever links can be read.
pub fn extract_html(
    body: &[u8],
    content_type_charset: Option<&str>,
    page_url: &Url,
    mode: ExtractMode,
) -> HtmlDocument {
    let (text, encoding, had_decode_errors) = decode_html(body, content_type_charset);
    let pass = LinkPass::new(&text, mode, DEFAULT_MAX_LINKS);
    run_rewriter(&text, &pass.state, mode);
    pass.finish(page_url, encoding.name(), had_decode_errors)
}

/// Link extraction as handlers to add to a `lol_html` pass that the caller
/// runs over already decoded text, so that other readers of the page (the
/// streaming item fields) share the one tokenization.
pub(crate) struct LinkPass {
    state: RefCell<State>,
    mode: ExtractMode,
}

impl LinkPass {
    /// The pass for `text` (the decoded page), keeping at most `max_links`.
    pub(crate) fn new(text: &str, mode: ExtractMode, max_links: usize) -> LinkPass {
        LinkPass {
            state: RefCell::new(State {
                noscript_budget: text.len(),
                max: max_links,
                ..State::default()
            }),
            mode,
        }
    }

    /// `settings` with the link handlers added.
    pub(crate) fn handlers<'h>(&'h self, settings: Settings<'h, 'static>) -> Settings<'h, 'static> {
        add_handlers(settings, &self.state, self.mode)
    }

    /// Whether a pass that sees every element anyway (a `*` handler of its
    /// own, as the streaming extraction has) may hand them to
    /// [`LinkPass::element`] instead of this pass's element selectors: in
    /// the pages mode, whose element handlers all go by tag name. It saves
    /// `lol_html` compiling four selectors per page and matching them
    /// against every tag.
    pub(crate) fn takes_elements(&self) -> bool {
        self.mode == ExtractMode::Pages
    }

    /// `settings` with the handlers [`LinkPass::element`] does not stand in
    /// for (the `<noscript>` text); only when [`LinkPass::takes_elements`].
    pub(crate) fn text_handlers<'h>(
        &'h self,
        settings: Settings<'h, 'static>,
    ) -> Settings<'h, 'static> {
        debug_assert!(self.takes_elements());
        add_text_handlers(settings, &self.state, self.mode)
    }

    /// One start tag, `name` lower case, for a pass set up with
    /// [`LinkPass::text_handlers`]: does what the pages mode's element
    /// selectors (`a[href]`, `area[href]`, `base[href]`,
    /// `meta[http-equiv][content]`) would.
    pub(crate) fn element(&self, name: &str, el: &Element) {
        match name {
            "a" => self
                .state
                .borrow_mut()
                .push_attr(el, LinkKind::Anchor, "a", "href"),
            "area" => self
                .state
                .borrow_mut()
                .push_attr(el, LinkKind::Anchor, "area", "href"),
            "base" => on_base(el, &mut self.state.borrow_mut()),
            "meta" if el.has_attribute("http-equiv") && el.has_attribute("content") => {
                on_meta(el, &mut self.state.borrow_mut())
            }
            _ => {}
        }
    }

    /// The links found, resolved; `charset` and `had_decode_errors` as the
    /// text was decoded.
    pub(crate) fn finish(
        self,
        page_url: &Url,
        charset: &'static str,
        had_decode_errors: bool,
    ) -> HtmlDocument {
        let state = self.state.into_inner();
        let base = document_base(page_url, state.base_href.as_deref());
        let links = state
            .found
            .into_iter()
            .map(|f| Link::resolve(f.raw, &base, (f.kind, f.element, f.attr), f.at))
            .collect();
        HtmlDocument {
            links,
            charset,
            had_decode_errors,
            base,
            cut: state.cut,
        }
    }
}

/// The frozen base URL: `<base href>` resolved against the page, unless it
/// does not parse or is a `data:`/`javascript:` URL, which the standard ignores.
fn document_base(page_url: &Url, base_href: Option<&str>) -> Url {
    base_href
        .and_then(|href| page_url.join(href).ok())
        .filter(|base| !matches!(base.scheme(), "data" | "javascript"))
        .unwrap_or_else(|| page_url.clone())
}

/// Streams `text` through `lol_html` with the handlers for `mode`.
fn run_rewriter(text: &str, state: &RefCell<State>, mode: ExtractMode) {
    let settings = add_handlers(Settings::new().with_strict(false), state, mode);
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    // Handlers never fail and strict mode is off, so an error here is a
    // lol_html limit; the links found up to that point are still good.
    if let Err(error) = rewriter
        .write(text.as_bytes())
        .and_then(|()| rewriter.end())
    {
        tracing::debug!(%error, "HTML link extraction stopped early");
    }
}

/// The link handlers for `mode`.
fn add_handlers<'h>(
    mut settings: Settings<'h, 'static>,
    state: &'h RefCell<State>,
    mode: ExtractMode,
) -> Settings<'h, 'static> {
    parsed_selector!(ANCHOR = "a[href]");
    parsed_selector!(AREA = "area[href]");
    parsed_selector!(BASE = "base[href]");
    parsed_selector!(META = "meta[http-equiv][content]");
    parsed_selector!(LINK = "link[href][rel]");
    settings = settings
        .append_element_content_handler(on_element!(ANCHOR.get(), |el| {
            state
                .borrow_mut()
                .push_attr(el, LinkKind::Anchor, "a", "href");
            Ok(())
        }))
        .append_element_content_handler(on_element!(AREA.get(), |el| {
            state
                .borrow_mut()
                .push_attr(el, LinkKind::Anchor, "area", "href");
            Ok(())
        }))
        .append_element_content_handler(on_element!(BASE.get(), |el| {
            on_base(el, &mut state.borrow_mut());
            Ok(())
        }))
        .append_element_content_handler(on_element!(META.get(), |el| {
            on_meta(el, &mut state.borrow_mut());
            Ok(())
        }))
        .append_element_content_handler(on_element!(LINK.get(), |el| {
            // `<link rel=next>` and the other hyperlink types are links a
            // reader follows, in every mode; the rest of `<link>` is a resource.
            if link_rel(el) == Rel::Hyperlink {
                state
                    .borrow_mut()
                    .push_attr(el, LinkKind::Anchor, "link", "href");
            }
            Ok(())
        }));
    settings = add_text_handlers(settings, state, mode);
    if mode == ExtractMode::Resources {
        settings = add_resource_handlers(settings, state);
    }
    settings
}

/// The `<noscript>` text handler, which every mode has.
fn add_text_handlers<'h>(
    settings: Settings<'h, 'static>,
    state: &'h RefCell<State>,
    mode: ExtractMode,
) -> Settings<'h, 'static> {
    parsed_selector!(NOSCRIPT = "noscript");
    settings.append_element_content_handler(on_text!(NOSCRIPT.get(), move |chunk| {
        on_noscript_text(chunk, state, mode);
        Ok(())
    }))
}

/// The first `<base href>` sets the document's base.
fn on_base(el: &Element, state: &mut State) {
    if state.base_href.is_none()
        && let Some(href) = el.get_attribute("href")
    {
        state.base_href = Some(trim_html_whitespace(&decode_attribute(&href)).to_owned());
    }
}

/// One selector per element of [`RESOURCE_ATTRS`], in its order.
static RESOURCE_SELECTORS: LazyLock<Vec<Selector>> = LazyLock::new(|| {
    RESOURCE_ATTRS
        .iter()
        .map(|(tag, _)| tag.parse().expect("lol_html rejects a tag name"))
        .collect()
});

/// Adds the subresource, `style` attribute and `<style>` text handlers.
fn add_resource_handlers<'h>(
    mut settings: Settings<'h, 'static>,
    state: &'h RefCell<State>,
) -> Settings<'h, 'static> {
    parsed_selector!(STYLED = "[style]");
    parsed_selector!(STYLE = "style");
    for (&(tag, attrs), selector) in RESOURCE_ATTRS.iter().zip(RESOURCE_SELECTORS.iter()) {
        settings = settings.append_element_content_handler(on_element!(selector, move |el| {
            if tag == "link" && link_rel(el) != Rel::Resource {
                return Ok(());
            }
            let mut state = state.borrow_mut();
            for &attr in attrs {
                state.push_attr(el, LinkKind::Resource, tag, attr);
            }
            Ok(())
        }));
    }
    settings
        .append_element_content_handler(on_element!(STYLED.get(), |el| {
            let tag = el.tag_name();
            let tag = STYLED_TAGS
                .iter()
                .copied()
                .find(|&t| t == tag)
                .unwrap_or("*");
            let value = el.get_attribute("style").unwrap_or_default();
            let at = el.source_location().bytes().start;
            let mut state = state.borrow_mut();
            css::scan(&decode_attribute(&value), |raw, _, _| {
                state.push(raw, (LinkKind::Resource, tag, "style"), at)
            });
            Ok(())
        }))
        .append_element_content_handler(on_text!(STYLE.get(), |chunk| {
            on_style_text(chunk, &mut state.borrow_mut());
            Ok(())
        }))
}

/// `<meta http-equiv=refresh content="5; url=…">` is a navigation.
fn on_meta(el: &Element, state: &mut State) {
    let is_refresh = el
        .get_attribute("http-equiv")
        .is_some_and(|v| trim_html_whitespace(&v).eq_ignore_ascii_case("refresh"));
    if !is_refresh {
        return;
    }
    let content = el.get_attribute("content").unwrap_or_default();
    if let Some(target) = refresh_target(&decode_attribute(&content)) {
        let at = el.source_location().bytes().start;
        state.push(target, (LinkKind::Navigation, "meta", "content"), at);
    }
}

/// What a `<link>` element points at (see [`rel::classify`]).
fn link_rel(el: &Element) -> Rel {
    rel::classify(&el.get_attribute("rel").unwrap_or_default())
}

/// `<noscript>` passes nest at most this deep. Each pass runs inside its
/// parent's handler, so without a cap a page of nested `<noscript>` would set
/// the stack depth (a 2 MB page overflowed it). Real pages nest one level.
const MAX_NOSCRIPT_DEPTH: u32 = 4;

/// `lol_html` parses as a browser with scripting on, so `<noscript>` content
/// arrives as raw text; a crawler runs no scripts and sees it as markup, so
/// it gets its own pass once complete. The state is not borrowed during that
/// pass: its handlers borrow it themselves. Content beyond the depth cap or
/// the byte budget is not read for links.
fn on_noscript_text(chunk: &TextChunk, state: &RefCell<State>, mode: ExtractMode) {
    {
        let mut s = state.borrow_mut();
        if s.noscript_depth >= MAX_NOSCRIPT_DEPTH {
            return;
        }
        let origin = s.origin;
        s.noscript_start
            .get_or_insert(origin + chunk.source_location().bytes().start);
        s.noscript_text.push_str(chunk.as_str());
        if !chunk.last_in_text_node() {
            return;
        }
    }
    let markup = std::mem::take(&mut state.borrow_mut().noscript_text);
    let outer = {
        let mut s = state.borrow_mut();
        let start = s.noscript_start.take().unwrap_or(s.origin);
        if markup.len() > s.noscript_budget {
            return;
        }
        s.noscript_budget -= markup.len();
        s.noscript_depth += 1;
        std::mem::replace(&mut s.origin, start)
    };
    run_rewriter(&markup, state, mode);
    let mut s = state.borrow_mut();
    s.noscript_depth -= 1;
    s.origin = outer;
}

/// Collects `<style>` text, which arrives in chunks, and scans it at its end.
/// It is raw text: no entity decoding applies.
fn on_style_text(chunk: &TextChunk, state: &mut State) {
    state
        .style_start
        .get_or_insert(chunk.source_location().bytes().start);
    state.style_text.push_str(chunk.as_str());
    if chunk.last_in_text_node() {
        let css_text = std::mem::take(&mut state.style_text);
        let at = state.style_start.take().unwrap_or(0);
        // Each link where its `url(` is, so a checker names its own line
        // of a long `<style>`.
        css::scan(&css_text, |raw, construct, pos| {
            state.push(raw, (LinkKind::Resource, "style", construct), at + pos)
        });
    }
}

#[cfg(test)]
mod tests;
