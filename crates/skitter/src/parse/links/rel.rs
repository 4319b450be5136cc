//! What a `rel` names, for `<link>` elements and `Link` headers alike: a page
//! to follow (HTML's hyperlink link types: `next`, `prev`, `index`, `help`,
//! …), a resource of the page (`stylesheet`, `icon`, `preload`, …), or an
//! origin to warm up (`preconnect`, `dns-prefetch`).

/// What a `<link>` or `Link` header points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rel {
    /// A page a reader goes to: followed as a link, like `<a href>`.
    Hyperlink,
    /// Something the page loads: a page requisite (`-p`).
    Resource,
    /// An origin to connect to early: not a URL to fetch.
    Hint,
}

/// Relations that load a resource. Any of them in a `rel` makes the link a
/// resource, whatever else it says (`rel="alternate stylesheet"` is a
/// stylesheet).
const RESOURCE: &[&str] = &[
    "stylesheet",
    "icon",
    "shortcut",
    "apple-touch-icon",
    "apple-touch-icon-precomposed",
    "mask-icon",
    "preload",
    "modulepreload",
    "prefetch",
    "prerender",
    "manifest",
    "pingback",
    "import",
    "expect",
];

/// HTML's hyperlink link types, and the older navigation ones sites still
/// write (HTML 4's `contents`, `chapter`, `glossary`…): pages to follow.
/// Paginated listings depend on `next`.
const HYPERLINK: &[&str] = &[
    "next",
    "prev",
    "previous",
    "index",
    "contents",
    "toc",
    "start",
    "first",
    "last",
    "up",
    "top",
    "home",
    "search",
    "alternate",
    "canonical",
    "help",
    "glossary",
    "chapter",
    "section",
    "subsection",
    "appendix",
    "author",
    "license",
    "copyright",
    "archives",
    "bookmark",
    "related",
];

const HINT: &[&str] = &["preconnect", "dns-prefetch"];

/// Classifies a `rel` value (space-separated tokens, any case). A relation
/// skitter does not know, or none, is a resource, as before this rule: a
/// requisite with `-p`, and nothing without.
pub(crate) fn classify(rel: &str) -> Rel {
    let has = |set: &[&str]| {
        rel.split_ascii_whitespace()
            .any(|t| set.iter().any(|s| t.eq_ignore_ascii_case(s)))
    };
    if has(RESOURCE) {
        Rel::Resource
    } else if has(HYPERLINK) {
        Rel::Hyperlink
    } else if has(HINT) {
        Rel::Hint
    } else {
        Rel::Resource
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relations_are_told_apart() {
        let cases = [
            ("next", Rel::Hyperlink),
            ("NEXT", Rel::Hyperlink),
            ("prev nofollow", Rel::Hyperlink),
            ("alternate", Rel::Hyperlink),
            ("alternate stylesheet", Rel::Resource),
            ("stylesheet", Rel::Resource),
            ("shortcut icon", Rel::Resource),
            ("preload", Rel::Resource),
            ("preconnect", Rel::Hint),
            ("dns-prefetch", Rel::Hint),
            ("preconnect next", Rel::Hyperlink),
            ("", Rel::Resource),
            ("x-unknown", Rel::Resource),
        ];
        for (rel, want) in cases {
            assert_eq!(classify(rel), want, "{rel:?}");
        }
    }
}
