//! HTML link extraction: one streaming pass over the decoded text.
//!
//! There is no DOM: `lol_html` tokenizes with just enough tree awareness to
//! know raw-text elements (`<script>`, `<style>`, `<textarea>`…) and foreign
//! content, which is all link discovery needs. In the pages mode, the
//! crawl's default, [`scan`] does the same for the few elements that mode
//! reads, at a fraction of the cost, and hands the page to `lol_html` only
//! where it does not model the markup. Handlers only record raw values;
//! resolution happens once at the end, because `<base href>` applies to
//! links that appear before it. Attribute values are as written, so they
//! are entity-decoded with [`decode_attribute`].

mod rewriter;
mod scan;
mod scanned;

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use lol_html::Settings;
use lol_html::html_content::Element;
use url::Url;

use self::rewriter::{add_handlers, add_text_handlers, run_rewriter};
use self::scanned::ScanSink;
use super::rel::{self, Rel};
use super::{
    ExtractMode, Link, LinkKind, decode_attribute, decode_html, parse_srcset, refresh_target,
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

    /// Starts the pass over a `<noscript>`'s `len` bytes of text, which
    /// start at `start` of the page's text: the origin to give back to
    /// [`State::leave_noscript`], or `None` past the depth cap or the byte
    /// budget (the text is then not read for links).
    fn enter_noscript(&mut self, start: usize, len: usize) -> Option<usize> {
        if self.noscript_depth >= MAX_NOSCRIPT_DEPTH || len > self.noscript_budget {
            return None;
        }
        self.noscript_budget -= len;
        self.noscript_depth += 1;
        Some(std::mem::replace(&mut self.origin, start))
    }

    /// Ends the pass [`State::enter_noscript`] started.
    fn leave_noscript(&mut self, outer: usize) {
        self.noscript_depth -= 1;
        self.origin = outer;
    }

    /// Records the URL in `attr` of `el`, if present and not blank.
    fn push_attr(
        &mut self,
        el: &impl StartTag,
        kind: LinkKind,
        element: &'static str,
        attr: &'static str,
    ) {
        let Some(value) = el.attr(attr) else {
            return;
        };
        let decoded = decode_attribute(&value);
        let raw = trim_html_whitespace(&decoded);
        if raw.is_empty() {
            return;
        }
        let at = el.start();
        if attr == "srcset" {
            for candidate in parse_srcset(raw) {
                self.push(candidate, (kind, element, attr), at);
            }
        } else {
            self.push(raw.to_owned(), (kind, element, attr), at);
        }
    }
}

/// A start tag's attributes as written, from `lol_html` or from [`scan`],
/// so that both feed the same handlers.
trait StartTag {
    /// The first attribute called `name`, as written.
    fn attr(&self, name: &str) -> Option<Cow<'_, str>>;
    /// Where the tag starts in the text the pass reads.
    fn start(&self) -> usize;
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
    if !pass.scan(&text) {
        run_rewriter(&text, &pass.state, mode);
    }
    pass.finish(page_url, encoding.name(), had_decode_errors)
}

/// Link extraction over already decoded text: by the scanner
/// ([`LinkPass::scan`]) in the pages mode, or as handlers to add to a
/// `lol_html` pass the caller runs, so that other readers of the page (the
/// streaming item fields, a checker's anchors, a WACZ's page text) share the
/// one tokenization.
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

    /// Reads the links of `text` (the page this pass was made for) with
    /// [`scan`], without `lol_html`: in the pages mode, and where the scan
    /// models the markup. `false` leaves the pass as new, for the caller to
    /// run `lol_html` with [`LinkPass::handlers`].
    pub(crate) fn scan(&self, text: &str) -> bool {
        self.scan_departing(text).is_some()
    }

    /// [`LinkPass::scan`], saying whether the scan departed from
    /// `lol_html` where `lol_html` contradicts itself (see [`scan`]);
    /// `None` when it gave the page back.
    fn scan_departing(&self, text: &str) -> Option<bool> {
        if self.mode != ExtractMode::Pages {
            return None;
        }
        match scan::scan(text, &mut ScanSink { state: &self.state }) {
            Ok(departed) => Some(departed),
            Err(scan::Bail) => {
                let mut state = self.state.borrow_mut();
                *state = State {
                    noscript_budget: text.len(),
                    max: state.max,
                    ..State::default()
                };
                None
            }
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
        let urls = resolve_each(&state.found, &base);
        let links = state
            .found
            .into_iter()
            .zip(urls)
            .map(|(f, url)| Link {
                raw: f.raw,
                url,
                kind: f.kind,
                element: f.element,
                attr: f.attr,
                at: f.at,
            })
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

/// Each link resolved against `base`. A value a page repeats (a docs page
/// links to the same item from its sidebar, its text and its signature:
/// about 40% of a rust-doc page's links) is parsed once and its URL cloned,
/// which costs a tenth of parsing it again.
fn resolve_each(found: &[Found], base: &Url) -> Vec<Result<Url, String>> {
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(found.len());
    let mut urls: Vec<Result<Url, String>> = Vec::with_capacity(found.len());
    for f in found {
        let url = match first.entry(f.raw.as_str()) {
            Entry::Occupied(seen) => urls[*seen.get()].clone(),
            Entry::Vacant(new) => {
                new.insert(urls.len());
                base.join(&f.raw).map_err(|e| e.to_string())
            }
        };
        urls.push(url);
    }
    urls
}

/// The frozen base URL: `<base href>` resolved against the page, unless it
/// does not parse or is a `data:`/`javascript:` URL, which the standard ignores.
fn document_base(page_url: &Url, base_href: Option<&str>) -> Url {
    base_href
        .and_then(|href| page_url.join(href).ok())
        .filter(|base| !matches!(base.scheme(), "data" | "javascript"))
        .unwrap_or_else(|| page_url.clone())
}

/// The first `<base href>` sets the document's base.
fn on_base(el: &impl StartTag, state: &mut State) {
    if state.base_href.is_none()
        && let Some(href) = el.attr("href")
    {
        state.base_href = Some(trim_html_whitespace(&decode_attribute(&href)).to_owned());
    }
}

/// `<meta http-equiv=refresh content="5; url=…">` is a navigation.
fn on_meta(el: &impl StartTag, state: &mut State) {
    let is_refresh = el
        .attr("http-equiv")
        .is_some_and(|v| trim_html_whitespace(&v).eq_ignore_ascii_case("refresh"));
    if !is_refresh {
        return;
    }
    let content = el.attr("content").unwrap_or_default();
    if let Some(target) = refresh_target(&decode_attribute(&content)) {
        let at = el.start();
        state.push(target, (LinkKind::Navigation, "meta", "content"), at);
    }
}

/// What a `<link>` element points at (see [`rel::classify`]).
fn link_rel(el: &impl StartTag) -> Rel {
    rel::classify(&el.attr("rel").unwrap_or_default())
}

/// `<noscript>` passes nest at most this deep. Each pass runs inside its
/// parent's handler, so without a cap a page of nested `<noscript>` would set
/// the stack depth (a 2 MB page overflowed it). Real pages nest one level.
const MAX_NOSCRIPT_DEPTH: u32 = 4;

#[cfg(test)]
mod tests;
