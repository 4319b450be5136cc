//! The `lol_html` pass: the link handlers as selectors and text handlers,
//! for every mode, and the one [`run_rewriter`] that streams a page (or a
//! `<noscript>`'s text) through them. The pages mode reads most pages with
//! the scanner instead (`scan/`); this pass is the resources mode, the
//! passes that share `lol_html` with other readers of the page (items,
//! anchors, page text), and the pages the scanner gives back.

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::LazyLock;

use lol_html::html_content::{Element, TextChunk};
use lol_html::{HtmlRewriter, Selector, Settings};

use super::super::parsed::{on_element, on_text, parsed_selector};
use super::super::rel::Rel;
use super::super::{ExtractMode, LinkKind, css, decode_attribute};
use super::{MAX_NOSCRIPT_DEPTH, StartTag, State, link_rel, on_base, on_meta};

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

impl StartTag for Element<'_, '_> {
    fn attr(&self, name: &str) -> Option<Cow<'_, str>> {
        self.get_attribute(name).map(Cow::Owned)
    }

    fn start(&self) -> usize {
        self.source_location().bytes().start
    }
}

/// Streams `text` through `lol_html` with the handlers for `mode`.
pub(super) fn run_rewriter(text: &str, state: &RefCell<State>, mode: ExtractMode) {
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
pub(super) fn add_handlers<'h>(
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
pub(super) fn add_text_handlers<'h>(
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
        let Some(outer) = s.enter_noscript(start, markup.len()) else {
            return;
        };
        outer
    };
    run_rewriter(&markup, state, mode);
    state.borrow_mut().leave_noscript(outer);
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
