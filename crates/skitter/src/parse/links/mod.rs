//! Link discovery: which URLs a fetched document points at.
//!
//! This module owns everything between "here are the bytes of a response" and
//! "here are the links it contains": charset detection and decoding
//! ([`decode_html`]), one streaming pass over HTML by the HTML tokenizer's
//! rules (no DOM, no regular expressions over markup: [`extract_html`]; a
//! scanner of our own in the default pages mode, `lol_html` otherwise),
//! CSS `url()`/`@import`
//! scanning ([`extract_css`]), `srcset` candidates ([`parse_srcset`]) and the
//! two link-carrying HTTP headers, `Refresh` ([`refresh_target`]) and `Link`
//! ([`link_header_targets`]).
//!
//! It deliberately stops at *resolution*: every [`Link`] carries the raw value
//! as written and the URL resolved against the document base, but nothing is
//! normalised, filtered by scheme, or de-duplicated here. Those are policy
//! decisions that belong to the URL and scope layers; keeping them out makes
//! this module a pure function of its input and easy to test against other
//! projects' corpora.
//!
//! What is *not* a link here, by design:
//! - anything inside comments and `<script>` text (a tokenizer sees neither as
//!   markup, and guessing URLs in JavaScript produces mostly garbage);
//! - bare URLs in text, and attributes such as `cite`, `longdesc`, `action`,
//!   `ping` or `data-*` (they are not navigations or subresources a browser
//!   fetches on load);
//! - an empty or whitespace-only `href`/`src`: it refers to the page itself.
//!
//! What *is* a link, also by design:
//! - links inside `<template>`, `<noscript>`, `<pre>` and `<code>`: scripts clone
//!   template content into the page and `<noscript>` content is what a client
//!   without scripts sees, so both describe reachable URLs;
//! - `rel=nofollow` anchors: `nofollow` is a ranking hint to search engines, not
//!   a crawling prohibition (robots.txt is), so the caller decides;
//! - `mailto:`, `javascript:`, `tel:`, `data:` and other schemes: they are
//!   returned so the caller can count them as skipped by scheme.

mod anchored;
mod charset;
mod css;
mod header;
mod html;
mod markdown;
pub(crate) mod parsed;
mod rel;
mod srcset;

use std::borrow::Cow;

pub(crate) use anchored::{AnchorPass, lines_of};
pub use anchored::{
    AnchoredDocument, DEFAULT_MAX_ANCHORS, MAX_ANCHOR_LEN, PageLinks, extract_anchored,
};
pub use charset::decode_html;
pub use css::extract_css;
pub use header::{header_links, link_header_targets, link_with_rel, refresh_target};
pub(crate) use html::LinkPass;
pub use html::{DEFAULT_MAX_LINKS, HtmlDocument, extract_html};
pub use markdown::{extract_markdown, slugify};
pub use srcset::parse_srcset;

/// Which links [`extract_html`] collects.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum ExtractMode {
    /// Only links to other pages: `a href`, `area href` and
    /// `<meta http-equiv=refresh>` targets (the default).
    #[default]
    Pages,
    /// Pages plus every subresource a browser would load or that a mirror
    /// needs: images (`src`, `srcset`), stylesheets and other `<link>`s,
    /// scripts, frames, media, embeds, objects, and CSS `url()`/`@import` in
    /// `style` attributes and `<style>` elements.
    Resources,
}

/// What a link is for, so the caller can treat pages and subresources apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkKind {
    /// A hyperlink a person follows: `a href`, `area href`.
    Anchor,
    /// A subresource of the document: image, stylesheet, script, frame, media,
    /// CSS reference, or a `<link>` of any relation.
    Resource,
    /// A redirect the document (or its headers) asks for: `<meta
    /// http-equiv=refresh>`, or a `Refresh`/`Location` header handled by the
    /// caller with [`refresh_target`].
    Navigation,
}

/// One link found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The value as written, after HTML character references are decoded and
    /// leading/trailing ASCII whitespace is stripped (for CSS: after CSS
    /// escapes are decoded).
    pub raw: String,
    /// `raw` resolved against the document base, not normalised; `Err` holds
    /// the parser's message when it cannot be resolved (for example
    /// `http://[bad/`). Unresolvable links are reported, never dropped.
    pub url: Result<url::Url, String>,
    /// What the link is for.
    pub kind: LinkKind,
    /// The lower-case element the link came from (`"a"`, `"img"`, …); `"*"` for
    /// a `style` attribute on an element outside the list of known HTML tags;
    /// `""` for links found by [`extract_css`] in a stylesheet file.
    pub element: &'static str,
    /// The attribute the link came from (`"href"`, `"srcset"`, …); for CSS
    /// text, the construct: `"url()"` or `"@import"`.
    pub attr: &'static str,
    /// Where the element the link came from starts (for CSS text, in a
    /// `<style>` or a stylesheet: its `url(` or `@import`): a byte offset
    /// in the decoded document text, for a link checker to say on which
    /// line a link is. 0 where there is no text to point into (headers,
    /// sitemaps).
    pub at: usize,
}

impl Link {
    /// Builds a link by resolving `raw` against `base`.
    fn resolve(
        raw: String,
        base: &url::Url,
        (kind, element, attr): (LinkKind, &'static str, &'static str),
        at: usize,
    ) -> Link {
        let url = base.join(&raw).map_err(|e| e.to_string());
        Link {
            raw,
            url,
            kind,
            element,
            attr,
            at,
        }
    }
}

/// Decodes HTML character references in an attribute value the way the HTML
/// tokenizer does (`&amp;` → `&`, `&#x41;` → `A`, legacy `&copy` without `;`
/// decoded except before `=` or an alphanumeric, …).
///
/// `lol_html` hands out attribute values exactly as written, so every value
/// this module reads goes through here. It also leaves NUL characters in
/// place, which the HTML tokenizer replaces with U+FFFD; that is done here
/// too. Borrowed when nothing needed decoding.
pub fn decode_attribute(raw: &str) -> Cow<'_, str> {
    let decoded = htmlize::unescape_attribute(raw);
    if decoded.contains('\0') {
        Cow::Owned(decoded.replace('\0', "\u{FFFD}"))
    } else {
        decoded
    }
}

/// Strips the ASCII whitespace HTML allows around URL-valued attributes.
fn trim_html_whitespace(value: &str) -> &str {
    value.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\x0C' | '\r'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_attribute_follows_attribute_rules() {
        let cases = [
            ("plain", "plain"),
            ("a&amp;b", "a&b"),
            ("&#x41;&#66;", "AB"),
            ("?a=1&copy=2", "?a=1&copy=2"), // legacy name before '=' stays literal
            ("&copy 2024", "\u{a9} 2024"),
            ("&notit;", "&notit;"),
            ("&#0;", "\u{fffd}"),
            ("&#x80;", "\u{20ac}"), // windows-1252 remapping of C1 controls
            ("a\0b", "a\u{fffd}b"),
        ];
        for (input, want) in cases {
            assert_eq!(decode_attribute(input), want, "input {input:?}");
        }
    }

    #[test]
    fn unresolvable_links_are_kept_with_a_message() {
        let base = url::Url::parse("http://example.com/dir/page").unwrap();
        let ok = Link::resolve("../x".into(), &base, (LinkKind::Anchor, "a", "href"), 0);
        assert_eq!(ok.url.unwrap().as_str(), "http://example.com/x");
        let bad = Link::resolve(
            "http://[bad/".into(),
            &base,
            (LinkKind::Anchor, "a", "href"),
            0,
        );
        assert!(bad.url.is_err());
        assert_eq!(bad.raw, "http://[bad/");
    }
}
