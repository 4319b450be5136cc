//! A page's title and visible text, read by a `lol_html` pass: the text a
//! WACZ's page list holds for full-text search.
//!
//! `TextPass` adds its handlers to the crawl's own `lol_html` pass over a
//! page when it runs one (see `crawl::body`), so such a page costs only the
//! copying of its text; [`page_text`] runs it alone: over a rendered DOM, or
//! over a page's body as the WACZ writer archives it or reads it from a WARC
//! file (`skitter wacz create`). Both give the same text for the same
//! decoded page.
//!
//! What counts as visible is what the tokenizer can tell without a DOM:
//! text in `<script>`, `<style>`, `<noscript>` (read as a browser with
//! scripts on reads it), `<iframe>`, `<noembed>`, `<noframes>`, `<xmp>`,
//! `<title>` and `<textarea>` (raw or escapable raw text), and everything
//! inside a `<template>`, is left out. A `<head>` holds no other text: a
//! parser closes it at the first text that is not whitespace, so that text
//! is the body's. Styles (`display: none`, `hidden`) are not read. Character
//! references are decoded; every run of whitespace, and every tag between
//! two pieces of text, becomes one space, so words of adjacent blocks never
//! run together (and an inline tag inside a word splits it: `<b>W</b>ord`
//! gives `W ord`).
//!
//! Bad input costs a bounded amount: the text stops at [`TEXT_MAX`] and the
//! title at [`TITLE_MAX`] (the text node being read is held only up to what
//! may still be kept), and nothing here recurses on the input's nesting.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use lol_html::html_content::{Element, EndTag, TextChunk, TextType};
use lol_html::{DocumentContentHandlers, HtmlRewriter, Settings};

use super::links::parsed::{on_element, on_text, parsed_selector};

/// The most text kept of a page, in bytes of UTF-8 (cut at a character
/// boundary): enough for any article, and a bound on a WACZ's page list,
/// which ReplayWeb.page loads whole into its search index.
pub const TEXT_MAX: usize = 256 << 10;

/// The most of a page's title kept, in bytes of UTF-8.
pub const TITLE_MAX: usize = 2 << 10;

/// Raw bytes held past what may still be kept: a character reference cut at
/// the end of the room would otherwise be kept as written.
const MARGIN: usize = 64;

/// A page's title and visible text; see the module docs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageText {
    /// The first `<title>`'s text, whitespace collapsed; `None` when the
    /// page has none or it is blank.
    pub title: Option<String>,
    /// The visible text, whitespace collapsed, at most [`TEXT_MAX`] bytes.
    pub text: String,
    /// The page had more text than [`TEXT_MAX`].
    pub cut: bool,
}

/// The title and visible text of `html`, a decoded page, read alone (the
/// crawl adds a `TextPass` to its own pass instead).
pub fn page_text(html: &str) -> PageText {
    let pass = TextPass::new();
    let settings = pass.handlers(Settings::new().with_strict(false));
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    // Handlers never fail and strict mode is off: an error is a lol_html
    // limit, and the text read up to there is still good.
    if let Err(error) = rewriter
        .write(html.as_bytes())
        .and_then(|()| rewriter.end())
    {
        tracing::debug!(%error, "page text stopped early");
    }
    pass.finish()
}

/// The text handlers to add to a `lol_html` pass over a decoded page.
pub(crate) struct TextPass {
    state: RefCell<Gathered>,
    /// `<template>` elements open around the text being read; shared with
    /// their end-tag handlers, which `lol_html` wants `'static`.
    templates: Rc<Cell<u32>>,
}

#[derive(Default)]
struct Gathered {
    text: String,
    cut: bool,
    /// The raw text node being read (it may come in chunks, and a character
    /// reference may straddle two), and whether it holds references.
    node: String,
    node_escaped: bool,
    title: String,
    title_raw: String,
    title_done: bool,
}

impl TextPass {
    /// A pass that has read nothing yet.
    pub(crate) fn new() -> TextPass {
        TextPass {
            state: RefCell::new(Gathered::default()),
            templates: Rc::new(Cell::new(0)),
        }
    }

    /// `settings` with the text handlers added.
    pub(crate) fn handlers<'h>(&'h self, settings: Settings<'h, 'static>) -> Settings<'h, 'static> {
        parsed_selector!(TITLE = "title");
        parsed_selector!(TEMPLATE = "template");
        let templates = &self.templates;
        settings
            .append_element_content_handler(on_element!(TEMPLATE.get(), |el| {
                on_template(el, templates);
                Ok(())
            }))
            .append_element_content_handler(on_text!(TITLE.get(), |chunk| {
                self.state.borrow_mut().title_chunk(chunk);
                Ok(())
            }))
            .append_document_content_handler(DocumentContentHandlers::default().text(
                |chunk: &mut TextChunk<'_>| {
                    let shown = matches!(
                        chunk.text_type(),
                        TextType::Data | TextType::PlainText | TextType::CDataSection
                    );
                    if shown && templates.get() == 0 {
                        self.state.borrow_mut().text_chunk(chunk);
                    }
                    Ok(())
                },
            ))
    }

    /// What the pass read.
    pub(crate) fn finish(self) -> PageText {
        let mut state = self.state.into_inner();
        // A pass stopped early (a lol_html limit) leaves a node unread.
        state.end_node();
        if !state.title_done {
            state.end_title();
        }
        PageText {
            title: (!state.title.is_empty()).then_some(state.title),
            text: state.text,
            cut: state.cut,
        }
    }
}

/// Counts a `<template>` open until its end tag (one that never comes hides
/// the rest of the page, as it does in a browser).
fn on_template(el: &mut Element<'_, '_>, templates: &Rc<Cell<u32>>) {
    let Some(handlers) = el.end_tag_handlers() else {
        return;
    };
    templates.set(templates.get().saturating_add(1));
    let open = templates.clone();
    handlers.push(Box::new(move |_: &mut EndTag<'_>| {
        open.set(open.get().saturating_sub(1));
        Ok(())
    }));
}

impl Gathered {
    fn text_chunk(&mut self, chunk: &TextChunk<'_>) {
        if self.cut {
            return;
        }
        let room = (TEXT_MAX + MARGIN).saturating_sub(self.text.len());
        let raw = chunk.as_str();
        let last = chunk.last_in_text_node();
        if self.node.is_empty() {
            let escaped = chunk.text_type().allows_html_entities();
            if last {
                // A whole node in one chunk, the common case: read in place.
                self.add(&raw[..floor(raw, room)], escaped);
                return;
            }
            self.node_escaped = escaped;
        }
        push_within(&mut self.node, raw, room);
        if last {
            self.end_node();
        }
    }

    /// Adds the text node read to the text.
    fn end_node(&mut self) {
        if self.node.is_empty() {
            return;
        }
        let mut node = std::mem::take(&mut self.node);
        self.add(&node, self.node_escaped);
        // Its room serves the next node.
        node.clear();
        self.node = node;
    }

    /// Adds the raw text of a node to the text.
    fn add(&mut self, raw: &str, escaped: bool) {
        let decoded = if escaped && raw.contains('&') {
            htmlize::unescape(raw)
        } else {
            raw.into()
        };
        self.cut |= collapse_within(&mut self.text, &decoded, TEXT_MAX);
    }

    fn title_chunk(&mut self, chunk: &TextChunk<'_>) {
        if self.title_done {
            return;
        }
        push_within(&mut self.title_raw, chunk.as_str(), TITLE_MAX + MARGIN);
        if chunk.last_in_text_node() {
            self.end_title();
        }
    }

    fn end_title(&mut self) {
        self.title_done = true;
        let decoded = htmlize::unescape(&self.title_raw);
        collapse_within(&mut self.title, &decoded, TITLE_MAX);
        self.title_raw = String::new();
    }
}

/// Appends to `out` what of `s` fits in `max` bytes, cut at a character
/// boundary.
fn push_within(out: &mut String, s: &str, max: usize) {
    let room = max.saturating_sub(out.len());
    out.push_str(&s[..floor(s, room)]);
}

/// Appends the words of `s` to `out`, one space before each but the first
/// of `out`, stopping at `max` bytes (a word that does not fit is cut at a
/// character boundary); answers whether it stopped.
pub(crate) fn collapse_within(out: &mut String, s: &str, max: usize) -> bool {
    for word in words(s) {
        let space = usize::from(!out.is_empty());
        let room = max.saturating_sub(out.len() + space);
        if word.len() > room {
            let end = floor(word, room);
            if end > 0 {
                out.push_str(&" "[..space]);
                out.push_str(&word[..end]);
            }
            return true;
        }
        out.push_str(&" "[..space]);
        out.push_str(word);
    }
    false
}

/// The words of `s`, split at whitespace (`char::is_whitespace`), as
/// `s.split(char::is_whitespace)` without the empty ones, but byte by byte
/// where the text is ASCII (most of a page's text, read here for every
/// page the crawl archives).
fn words(s: &str) -> impl Iterator<Item = &str> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at + skip(&s[at..], true);
        let end = start + skip(&s[start..], false);
        at = end;
        (end > start).then(|| &s[start..end])
    })
}

/// The length of the run of whitespace (`space`) or of other characters at
/// the start of `s`.
fn skip(s: &str, space: bool) -> usize {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (is_space, len) = if b.is_ascii() {
            (matches!(b, b'\t'..=b'\r' | b' '), 1)
        } else {
            let c = s[i..].chars().next().unwrap_or(' ');
            (c.is_whitespace(), c.len_utf8())
        };
        if is_space != space {
            break;
        }
        i += len;
    }
    i
}

/// The largest character boundary of `s` at or before `at` (`str`'s own is
/// newer than the crate's oldest Rust).
fn floor(s: &str, at: usize) -> usize {
    let mut end = at.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    end
}

#[cfg(test)]
mod tests;
