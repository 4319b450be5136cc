//! What CSS rules read from a parsed HTML document: matching elements, their
//! collapsed text, an attribute, their inner HTML.
//!
//! The DOM is `scraper`'s (html5ever's tree builder, which never recurses on
//! nesting). Every walk here is an iterator over the tree, never recursion,
//! counts its nodes against the page's [`Budget`] and stops building a value
//! once it passes [`MAX_VALUE_BYTES`], so neither a deep page nor a huge
//! element costs more than the caps allow.

use ego_tree::iter::Edge;
use scraper::{ElementRef, Node, Selector};

use super::limits::{Budget, MAX_VALUE_BYTES};

/// Elements matching `sel` below `scope` (and `scope` itself when
/// `include_self`), in document order, at most `max` of them.
pub(crate) fn select<'a>(
    scope: ElementRef<'a>,
    include_self: bool,
    sel: &Selector,
    max: usize,
    budget: &mut Budget,
) -> Vec<ElementRef<'a>> {
    let mut found = Vec::new();
    let skip = usize::from(!include_self);
    for node in scope.descendants().skip(skip) {
        if !budget.visit() {
            break;
        }
        if let Some(el) = ElementRef::wrap(node)
            && sel.matches(&el)
        {
            found.push(el);
            if found.len() >= max {
                break;
            }
        }
    }
    found
}

/// The element's text, runs of whitespace collapsed to one space and trimmed;
/// stops a little past [`MAX_VALUE_BYTES`] (the caller cuts it exactly).
pub(crate) fn text(el: ElementRef<'_>, budget: &mut Budget) -> String {
    let mut out = String::new();
    let mut space = false;
    for node in el.descendants() {
        if !budget.visit() || out.len() > MAX_VALUE_BYTES {
            break;
        }
        let Node::Text(t) = node.value() else {
            continue;
        };
        for c in t.chars() {
            if c.is_whitespace() {
                space = !out.is_empty();
            } else {
                if space {
                    out.push(' ');
                    space = false;
                }
                out.push(c);
            }
        }
    }
    out
}

/// An attribute's value (names are matched in lower case, as HTML parsing
/// stores them).
pub(crate) fn attr(el: ElementRef<'_>, name: &str) -> Option<String> {
    el.value().attr(name).map(str::to_string)
}

/// Elements that have no end tag.
const VOID: [&str; 14] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param",
];

/// The element's inner HTML, serialised by walking its subtree; stops a little
/// past [`MAX_VALUE_BYTES`].
pub(crate) fn inner_html(el: ElementRef<'_>, budget: &mut Budget) -> String {
    let mut out = String::new();
    // The first and last edges are the element's own tags.
    for edge in el.traverse().skip(1) {
        if !budget.visit() || out.len() > MAX_VALUE_BYTES {
            break;
        }
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(e) => {
                    out.push('<');
                    out.push_str(e.name());
                    for (name, value) in e.attrs() {
                        out.push(' ');
                        out.push_str(name);
                        out.push_str("=\"");
                        escape(&mut out, value, true);
                        out.push('"');
                    }
                    out.push('>');
                }
                Node::Text(t) => escape(&mut out, t, false),
                Node::Comment(c) => {
                    out.push_str("<!--");
                    out.push_str(c);
                    out.push_str("-->");
                }
                _ => {}
            },
            Edge::Close(node) => {
                if node.id() == el.id() {
                    break;
                }
                if let Node::Element(e) = node.value()
                    && !VOID.contains(&e.name())
                {
                    out.push_str("</");
                    out.push_str(e.name());
                    out.push('>');
                }
            }
        }
    }
    out
}

fn escape(out: &mut String, s: &str, attr: bool) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' if !attr => out.push_str("&lt;"),
            '>' if !attr => out.push_str("&gt;"),
            '"' if attr => out.push_str("&quot;"),
            '\u{a0}' => out.push_str("&nbsp;"),
            c => out.push(c),
        }
    }
}
