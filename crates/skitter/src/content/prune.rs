//! What is left out before anything is chosen: the invisible (scripts,
//! styles, templates, form controls, `hidden`, `aria-hidden`,
//! `display:none`), the `exclude` selectors' matches, and — for the main
//! content — the page's furniture: navigation, headers, footers, sidebars
//! and, by their class or id words, cookie banners, share bars, ads,
//! comments, breadcrumbs and "related" boxes.

use scraper::Selector;

use super::stats::Stats;
use super::tree::{Tag, Tree};

/// Marks the invisible and the excluded: `keep[i]` is false for each node
/// of a dropped subtree.
pub(crate) fn invisible(tree: &Tree<'_>, exclude: &[Selector]) -> Vec<bool> {
    let mut keep = vec![true; tree.len()];
    let mut i = 0;
    while i < tree.len() {
        if drops_invisible(tree, i) || matches_any(tree, i, exclude) {
            let end = tree.end(i);
            keep[i..end].fill(false);
            i = end;
        } else {
            i += 1;
        }
    }
    keep
}

/// Marks the page's furniture as dropped, unless dropping it would take most
/// of the page's text (a wrapper whose class merely mentions "header").
pub(crate) fn furniture(tree: &Tree<'_>, keep: &mut [bool], stats: &Stats, body: usize) {
    let total = stats.text[body].max(1);
    let mut i = 0;
    while i < tree.len() {
        if keep[i] && is_furniture(tree, i) && (stats.text[i] as u64) * 2 < total as u64 {
            let end = tree.end(i);
            keep[i..end].fill(false);
            i = end;
        } else {
            i += 1;
        }
    }
}

fn matches_any(tree: &Tree<'_>, i: usize, selectors: &[Selector]) -> bool {
    if selectors.is_empty() {
        return false;
    }
    tree.element(i)
        .is_some_and(|e| selectors.iter().any(|s| s.matches(&e)))
}

fn drops_invisible(tree: &Tree<'_>, i: usize) -> bool {
    match tree.tag(i) {
        Tag::Head
        | Tag::Script
        | Tag::Style
        | Tag::Noscript
        | Tag::Template
        | Tag::Svg
        | Tag::Math
        | Tag::Iframe
        | Tag::Object
        | Tag::Embed
        | Tag::Canvas
        | Tag::Video
        | Tag::Audio
        | Tag::Input
        | Tag::Button
        | Tag::Select
        | Tag::Textarea
        | Tag::Title
        | Tag::Meta
        | Tag::Link => true,
        Tag::Text | Tag::Document => false,
        _ => {
            tree.attr(i, "hidden").is_some()
                || tree
                    .attr(i, "aria-hidden")
                    .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
                || tree.attr(i, "style").is_some_and(hidden_style)
        }
    }
}

/// Whether an inline style hides the element.
fn hidden_style(style: &str) -> bool {
    let compact: String = style
        .chars()
        .filter(|c| !c.is_whitespace())
        .take(4096)
        .collect::<String>()
        .to_ascii_lowercase();
    compact.contains("display:none") || compact.contains("visibility:hidden")
}

/// Whether element `i` is the page's furniture.
fn is_furniture(tree: &Tree<'_>, i: usize) -> bool {
    let tag = tree.tag(i);
    match tag {
        Tag::Nav | Tag::Aside | Tag::Footer => return true,
        Tag::Header => return !inside_content(tree, i),
        Tag::Text | Tag::Document | Tag::Html | Tag::Body | Tag::Main | Tag::Article | Tag::A => {
            return false;
        }
        _ => {}
    }
    if let Some(role) = tree.attr(i, "role") {
        let role = role.trim().to_ascii_lowercase();
        if matches!(
            role.as_str(),
            "navigation"
                | "banner"
                | "contentinfo"
                | "complementary"
                | "menu"
                | "menubar"
                | "dialog"
                | "alertdialog"
        ) {
            return true;
        }
    }
    if !(tag.is_block() || matches!(tag, Tag::Other | Tag::Span)) {
        return false;
    }
    let class = tree.attr(i, "class").unwrap_or("");
    let id = tree.attr(i, "id").unwrap_or("");
    if class.is_empty() && id.is_empty() {
        return false;
    }
    furniture_words(class, id)
}

/// Whether a `<header>` sits inside the content (an article's own header,
/// holding its title), not at the page's top.
fn inside_content(tree: &Tree<'_>, i: usize) -> bool {
    let mut at = tree.parent(i);
    while let Some(p) = at {
        if matches!(tree.tag(p), Tag::Article | Tag::Main) || tree.attr(p, "role") == Some("main") {
            return true;
        }
        at = tree.parent(p);
    }
    false
}

/// Words of class and id names that mark furniture.
const FURNITURE: &[&str] = &[
    "nav",
    "navbar",
    "navigation",
    "menu",
    "breadcrumb",
    "breadcrumbs",
    "footer",
    "masthead",
    "sidebar",
    "cookie",
    "cookies",
    "consent",
    "gdpr",
    "share",
    "sharing",
    "social",
    "ad",
    "ads",
    "advert",
    "advertisement",
    "adsense",
    "sponsor",
    "sponsored",
    "promo",
    "comment",
    "comments",
    "disqus",
    "related",
    "recommended",
    "newsletter",
    "subscribe",
    "popup",
    "modal",
    "pagination",
    "pager",
    "skip",
    "toolbar",
    "banner",
    "outbrain",
    "taboola",
    "widget",
    "widgets",
    "byline-share",
    "tags",
    "signup",
    "login",
    "sr",
    "visually",
    "screen",
];

/// Words that say the element holds content, which outweigh the above
/// (`article-footer-share` is furniture, `main-content-header` is not).
const CONTENT: &[&str] = &[
    "article", "content", "main", "post", "entry", "story", "body", "text", "blog",
];

fn furniture_words(class: &str, id: &str) -> bool {
    let mut furniture = false;
    for word in class
        .split(|c: char| !c.is_ascii_alphanumeric())
        .chain(id.split(|c: char| !c.is_ascii_alphanumeric()))
        .filter(|w| !w.is_empty())
        .take(64)
    {
        let lower = word.to_ascii_lowercase();
        if CONTENT.contains(&lower.as_str()) {
            return false;
        }
        if FURNITURE.contains(&lower.as_str()) {
            furniture = true;
        }
    }
    furniture
}
