//! `--render auto`: whether a page's plain fetch looks like it needs a browser.
//!
//! A pure function of the decoded HTML, so the rules are easy to read, test and
//! document (README, "Rendering pages that need JavaScript"). The rules are
//! tried in order and the first that fires is the reason given in the report:
//!
//! 1. `noscript`: a `<noscript>` whose text mentions JavaScript ("This app
//!    needs JavaScript", "enable JavaScript"): the site says so itself.
//! 2. `empty-root`: an empty application root, `<div id="app">`,
//!    `<div id="root">`, `<div id="__next">` or `<div id="__nuxt">` with no
//!    element and no text in it, while the page has a script: a single-page
//!    app's shell.
//! 3. `script-few-links`: the page has a `<script>` and fewer than
//!    [`FEW_LINKS`] `<a href>`/`<area href>` links: scripts are probably
//!    what builds its navigation.
//!
//! A page without any `<script>` never needs rendering (nothing could add a
//! link), and is decided by one substring search without parsing.
//!
//! The DOM is built only from the part of the page before any nesting deeper
//! than the items engine's cut ([`nesting::MAX_DEPTH`], 512 elements), for the
//! same reason: html5ever's cost grows with the square of the nesting, and a
//! hostile page of 100,000 nested `<div>`s would hold a CPU for minutes. A page
//! cut there is judged on what comes before the cut. The caller runs this on
//! the CPU pool, never on an async worker thread (`crawl/body`).

use scraper::{ElementRef, Html, Selector};

use crate::parse::items::nesting;

pub use crate::base::outcome::RenderReason;

/// Fewer `<a href>` links than this, on a page with a script, mean the page is
/// rendered. Two, so that a page with one "home" link and a script-built menu
/// is rendered, while a page with a script beside a real navigation (a leaf
/// page with home, parent and first-page links) is not.
pub const FEW_LINKS: usize = 2;

/// The ids of elements single-page-app frameworks mount into.
const APP_ROOTS: &str = "div#app, div#root, div#__next, div#__nuxt";

/// Decides whether the page whose decoded HTML is `html` needs rendering under
/// `--render auto`, and why; `None` when the plain fetch is enough.
pub fn judge(html: &str) -> Option<RenderReason> {
    if !contains_ignore_case(html, "<script") {
        return None;
    }
    let html = nesting::too_deep_at(html).map_or(html, |at| &html[..at]);
    let doc = Html::parse_document(html);
    let noscript = sel("noscript");
    let says_js = doc.select(&noscript).any(|n| {
        // html5ever parses <noscript> content as text (scripting "enabled").
        let text: String = n.text().collect();
        contains_ignore_case(&text, "javascript")
    });
    if says_js {
        return Some(RenderReason::Noscript);
    }
    if doc.select(&sel(APP_ROOTS)).any(is_empty) {
        return Some(RenderReason::EmptyRoot);
    }
    let links = doc
        .select(&sel("a[href], area[href]"))
        .take(FEW_LINKS)
        .count();
    (links < FEW_LINKS).then_some(RenderReason::ScriptFewLinks)
}

/// No child element and nothing but whitespace in it.
fn is_empty(el: ElementRef<'_>) -> bool {
    el.children().all(|c| match c.value() {
        scraper::Node::Text(t) => t.trim().is_empty(),
        scraper::Node::Comment(_) => true,
        _ => false,
    })
}

fn sel(css: &str) -> Selector {
    // The selectors are constants of this file; the tests parse each.
    Selector::parse(css).unwrap_or_else(|e| panic!("selector {css}: {e}"))
}

fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    let needle = needle.as_bytes();
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use RenderReason::*;

    #[test]
    fn the_rules_in_order() {
        let cases: &[(&str, &str, Option<RenderReason>)] = &[
            ("no script at all", "<div id=app></div>", None),
            ("no script, few links", "<p>hi</p>", None),
            (
                "noscript saying so",
                "<script src=a.js></script><noscript>You need to enable JavaScript to run this app.</noscript><a href=/a>a</a><a href=/b>b</a>",
                Some(Noscript),
            ),
            (
                "noscript about something else",
                "<script>x()</script><noscript><img src=pixel.gif></noscript><a href=/a>a</a><a href=/b>b</a>",
                None,
            ),
            (
                "empty #app",
                "<a href=/a>a</a><a href=/b>b</a><div id=\"app\">  </div><SCRIPT src=main.js></SCRIPT>",
                Some(EmptyRoot),
            ),
            (
                "empty #root with a comment",
                "<a href=/a>a</a><a href=/b>b</a><div id=root><!-- mount --></div><script></script>",
                Some(EmptyRoot),
            ),
            (
                "server-rendered #app",
                "<div id=app><a href=/a>a</a><a href=/b>b</a></div><script>hydrate()</script>",
                None,
            ),
            (
                "script, no links",
                "<script>build()</script>",
                Some(ScriptFewLinks),
            ),
            (
                "script, one link",
                "<a href=/>home</a><script>build()</script>",
                Some(ScriptFewLinks),
            ),
            (
                "script, enough links",
                "<a href=/>home</a><a href=/p/1>1</a><script>track()</script>",
                None,
            ),
            (
                "anchors without href do not count",
                "<a name=x>x</a><a>y</a><script>go()</script>",
                Some(ScriptFewLinks),
            ),
        ];
        for (what, html, want) in cases {
            assert_eq!(judge(html), *want, "{what}");
        }
    }

    /// `depth` nested `<div>`s after `before`, then `after`.
    fn nested(before: &str, depth: usize, after: &str) -> String {
        format!(
            "{before}{}{after}{}",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        )
    }

    #[test]
    fn a_page_nested_past_the_cut_is_judged_on_what_comes_before_it() {
        let links = "<a href=/a>a</a><a href=/b>b</a>";
        let shallow = nested("<script>go()</script>", nesting::MAX_DEPTH - 8, links);
        assert_eq!(judge(&shallow), None, "the links count when within the cut");
        let deep = nested("<script>go()</script>", nesting::MAX_DEPTH + 8, links);
        assert_eq!(
            judge(&deep),
            Some(ScriptFewLinks),
            "the links lie past the cut"
        );
        // 100,000 levels: quadratic without the cut (over a minute), linear with it.
        let hostile = nested("<script>go()</script>", 100_000, links);
        assert_eq!(judge(&hostile), Some(ScriptFewLinks));
    }

    #[test]
    fn names_are_stable() {
        let all = [Always, Noscript, EmptyRoot, ScriptFewLinks];
        let names: Vec<_> = all.iter().map(|r| r.as_str()).collect();
        assert_eq!(
            names,
            ["always", "noscript", "empty-root", "script-few-links"]
        );
        for r in all {
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{}\"", r.as_str()));
        }
    }

    #[test]
    fn selectors_parse() {
        for css in [APP_ROOTS, "noscript", "a[href], area[href]"] {
            assert!(Selector::parse(css).is_ok(), "{css}");
        }
    }
}
