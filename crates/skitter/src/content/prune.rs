//! What is left out before anything is chosen: the invisible (scripts,
//! styles, templates, form controls, `hidden`, `aria-hidden`,
//! `display:none`), heading permalinks (Sphinx's `¶`, rustdoc's `§`: a
//! link whose only text is such a glyph, which would end every heading as
//! `[¶](…)`), the `exclude` selectors' matches, and — for the main
//! content — the page's furniture: navigation, headers, footers, sidebars
//! and, by their class or id words, cookie banners, share bars, ads,
//! comments, breadcrumbs, "related" boxes, teasers of other articles,
//! author boxes and bylines.

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

/// The share of the page's text above which furniture is kept after all: a
/// wrapper whose class merely mentions "sidebar" or "header". Not a `nav`
/// beside the page's marked `main`: that is a long menu beside a short page.
const MOST: f64 = 0.85;

/// The share of the page's text the furniture rules must leave, or they are
/// taken to have misfired and are not applied.
pub(crate) const LEAST: f64 = 0.05;

/// Marks the page's furniture as dropped, unless dropping it would take most
/// of the page's text.
///
/// An `aside` inside the page's marked-up content (`main`, `article`,
/// `[role=main]`) that holds a code block is the article's own: reST's
/// sidebar directive, where Python's documentation puts a module's first
/// example ("Hello World!" beside asyncio's introduction).
pub(crate) fn furniture(tree: &Tree<'_>, keep: &mut [bool], stats: &Stats, body: usize) {
    let total = stats.text[body].max(1);
    // Where the innermost marked-up content seen so far ends: every node
    // before that is inside it (parents come first, and none is skipped
    // unless dropped whole).
    let mut content_end = 0;
    let mut code: Option<Vec<bool>> = None;
    // A `nav` beside the page's marked main content (which holds text) is
    // navigation however much of the page it holds: mdBook's table of
    // contents of a book beside a chapter of one heading.
    // Looked for once, and only when such a `nav` is met.
    let mut main: Option<Option<usize>> = None;
    let mut i = 0;
    while i < tree.len() {
        if marks_content(tree, i) {
            content_end = content_end.max(tree.end(i));
        }
        let own_aside = tree.tag(i) == Tag::Aside
            && i < content_end
            && code.get_or_insert_with(|| code_holders(tree))[i];
        if keep[i]
            && !own_aside
            && is_furniture(tree, i)
            && ((stats.text[i] as f64) < MOST * total as f64
                || tree.tag(i) == Tag::Nav
                    && main
                        .get_or_insert_with(|| marked_main(tree).filter(|&m| stats.text[m] > 0))
                        .is_some_and(|m| m < i || m >= tree.end(i)))
        {
            let end = tree.end(i);
            keep[i..end].fill(false);
            i = end;
        } else if tree.tag(i) == Tag::Pre {
            // A code block is literal, markup and all: Sphinx's source pages
            // wrap each function in `div.viewcode-block#Class.add_comment`
            // inside the `pre`, and "comment" would drop it from the code.
            i = tree.end(i);
        } else {
            i += 1;
        }
    }
}

/// For each node, whether it is or holds a `pre`: one pass from the last
/// node up, each telling its parent.
pub(crate) fn code_holders(tree: &Tree<'_>) -> Vec<bool> {
    let mut code = vec![false; tree.len()];
    for i in (0..tree.len()).rev() {
        if tree.tag(i) == Tag::Pre {
            code[i] = true;
        }
        if code[i]
            && let Some(p) = tree.parent(i)
        {
            code[p] = true;
        }
    }
    code
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
        Tag::A if is_permalink(tree, i) => true,
        _ => {
            tree.attr(i, "hidden").is_some()
                || tree
                    .attr(i, "aria-hidden")
                    .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
                || tree.attr(i, "style").is_some_and(hidden_style)
        }
    }
}

/// The glyphs documentation generators put in a heading's self-link.
const PERMALINK_GLYPHS: [&str; 7] = ["¶", "§", "#", "🔗", "⚓", "⁋", "#️⃣"];

/// Whether link `i` is a heading's permalink: its whole text (one text node,
/// no element inside) is one of [`PERMALINK_GLYPHS`]. A link with words, or
/// with an image, is content.
fn is_permalink(tree: &Tree<'_>, i: usize) -> bool {
    let mut children = tree.children(i);
    let (Some(only), None) = (children.next(), children.next()) else {
        return false;
    };
    tree.text(only)
        .is_some_and(|t| PERMALINK_GLYPHS.contains(&t.trim()))
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
    // A code block or a table is content whatever its class says
    // (DocBook's `pre.screen` holds a terminal session, not a screen
    // reader's text).
    if !(tag.is_block() || matches!(tag, Tag::Other | Tag::Span))
        || matches!(tag, Tag::Pre | Tag::Table)
    {
        return false;
    }
    let class = tree.attr(i, "class").unwrap_or("");
    let id = tree
        .attr(i, "id")
        .filter(|id| !names_subject(tree, i, id))
        .unwrap_or("");
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
        if marks_content(tree, p) {
            return true;
        }
        at = tree.parent(p);
    }
    false
}

/// Whether the page's first `main` (or `[role=main]`) holds text and the
/// furniture rules left all of it (`after` against `before`): what they
/// took was outside it.
pub(crate) fn main_left_whole(tree: &Tree<'_>, before: &Stats, after: &Stats) -> bool {
    marked_main(tree).is_some_and(|m| after.text[m] > 0 && after.text[m] == before.text[m])
}

/// The page's first `main` or `[role=main]`, if any.
fn marked_main(tree: &Tree<'_>) -> Option<usize> {
    (0..tree.len()).find(|&i| tree.tag(i) == Tag::Main || tree.attr(i, "role") == Some("main"))
}

/// Whether `i` is the page's marked-up content: `main`, `article` or
/// `[role=main]`, which an article's own header or sidebar sits inside.
fn marks_content(tree: &Tree<'_>, i: usize) -> bool {
    matches!(tree.tag(i), Tag::Article | Tag::Main) || tree.attr(i, "role") == Some("main")
}

/// Words of class and id names that mark furniture.
const FURNITURE: &[&str] = &[
    "nav",
    "navbar",
    "navigation",
    // DocBook's bars of "Prev", "Up", "Home" and "Next" above and below
    // each page.
    "navheader",
    "navfooter",
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
    "tags",
    "signup",
    "login",
    "sr",
    "visually",
    "screen",
    "legends",
    "community",
    "remark",
    "replies",
    "rss",
    "supplemental",
    "agegate",
    "shoutbox",
    "skyscraper",
    "combx",
    // An author's box or byline is not the article; a "teaser" box is
    // another article's. An article's own lead named so says content too
    // (`teaser-text`, `article-teaser`), which outweighs it.
    "author",
    "byline",
    "teaser",
];

/// Words that say the element holds content, which outweigh the above
/// (`article-footer-share` is furniture, `main-content-header` is not).
const CONTENT: &[&str] = &[
    "article", "content", "main", "post", "entry", "story", "body", "text", "blog",
];

/// The words of a class or id value (at most 64).
pub(crate) fn words(s: &str) -> Vec<&str> {
    s.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(64)
        .collect()
}

fn furniture_words(class: &str, id: &str) -> bool {
    // An id of many words is a slug of a heading ("sharing-with-a-team"),
    // saying nothing of its role.
    let id_words = words(id);
    let id_words = if id_words.len() <= 3 {
        id_words
    } else {
        Vec::new()
    };
    let mut furniture = false;
    for word in words(class).into_iter().chain(id_words) {
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

/// Whether id `id` of element `i` names what the element is about, not its
/// role on the page, and so is not read for furniture or content words:
/// the slug of its own heading ([`names_own_heading`]), an anchor name
/// in capitals, as DocBook writes them (`SQL-SYNTAX-COMMENTS` is the
/// section on comments in SQL, not a comment box), or a dotted name, as
/// API references write theirs (Sphinx's `imaplib.IMAP4.login` is that
/// method, not a log-in box; a style hook has no dot, which CSS would have
/// to escape).
pub(crate) fn names_subject(tree: &Tree<'_>, i: usize, id: &str) -> bool {
    is_anchor_name(id) || is_dotted_name(id) || names_own_heading(tree, i, id)
}

/// An id of words joined by dots (`os.login_tty`, `c.PyObject.tp_hash`).
fn is_dotted_name(id: &str) -> bool {
    let id = id.trim();
    id.contains('.') && id.split('.').all(|w| !w.is_empty())
}

/// An id with letters, all of them capitals (digits and punctuation
/// between): a generator's anchor, where style hooks are lowercase.
fn is_anchor_name(id: &str) -> bool {
    id.bytes().any(|b| b.is_ascii_alphabetic()) && !id.chars().any(|c| c.is_lowercase())
}

/// Nodes after an element looked through for the text of its heading.
const HEADING_LOOKAHEAD: usize = 16;

/// Whether `id` is the slug of element `i`'s own heading (docutils'
/// `<section id="comments"><h2>Comments</h2>`): it names the section's
/// subject, not its role. A blog's `<section id="comments">` headed
/// "3 Comments" is still read.
///
/// The heading is the child holding the element's first text; empty
/// elements before it (docutils' `<span id="html-meta"></span>`, an old
/// anchor) do not count. The first text is looked for among the first
/// [`HEADING_LOOKAHEAD`] nodes only, so nested elements with ids cost no
/// more than that each.
pub(crate) fn names_own_heading(tree: &Tree<'_>, i: usize, id: &str) -> bool {
    let window = tree.end(i).min(i + 1 + HEADING_LOOKAHEAD);
    let Some(first_text) =
        (i + 1..window).find(|&j| tree.text(j).is_some_and(|t| !t.trim().is_empty()))
    else {
        return false;
    };
    // The child of `i` that holds it: parents come before their children,
    // so this climbs fewer than HEADING_LOOKAHEAD steps.
    let mut h = first_text;
    while let Some(p) = tree.parent(h).filter(|&p| p != i) {
        h = p;
    }
    if !matches!(tree.tag(h), Tag::H(_)) {
        return false;
    }
    // The heading's text, as far as it can still be the id.
    let mut text = String::new();
    for j in h + 1..tree.end(h) {
        text.push_str(tree.text(j).unwrap_or(""));
        if text.len() > id.len() + SLUG_SLACK {
            return false;
        }
    }
    let id = id.trim();
    // Sphinx numbers sections in the heading ("3.3.3.1. Metaclasses"),
    // docutils' id has the title alone ("metaclasses"). A count is no
    // section number: "2 Comments" has no dot after its digits.
    let title = text.trim_start();
    let unnumbered = match title.split_once(char::is_whitespace) {
        Some((number, rest))
            if number.ends_with('.')
                && number
                    .split('.')
                    .all(|n| n.bytes().all(|b| b.is_ascii_digit())) =>
        {
            rest
        }
        _ => title,
    };
    [title, unnumbered]
        .iter()
        .any(|t| slug_of(t).is_some_and(|s| s.eq_ignore_ascii_case(id)))
}

/// docutils' slug of a title: its runs of letters and digits, lowercased,
/// joined by hyphens; `None` when it has none.
fn slug_of(title: &str) -> Option<String> {
    let mut slug = String::new();
    let mut gap = false;
    for c in title.chars() {
        if c.is_alphanumeric() {
            if gap && !slug.is_empty() {
                slug.push('-');
            }
            gap = false;
            slug.extend(c.to_lowercase());
        } else {
            gap = true;
        }
    }
    (!slug.is_empty()).then_some(slug)
}

/// How much longer than an id the slug of a heading may grow before it
/// cannot be that id (a section number in front takes some).
const SLUG_SLACK: usize = 16;
