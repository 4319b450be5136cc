//! The streaming path against the DOM path: hand-picked pages for the
//! fallback detector, and a seeded property test over generated pages and
//! rule sets.

use super::*;
use crate::parse::items::{Css, Items, PageInput, Rules};

fn page(html: &str) -> (url::Url, String) {
    (
        url::Url::parse("http://example.com/dir/page").unwrap(),
        html.to_string(),
    )
}

/// Both paths' items, and whether the streaming one ran.
fn both(rules: &Rules, html: &str) -> (Items, Items, bool) {
    let (url, body) = page(html);
    let input = PageInput {
        url: &url,
        body: body.as_bytes(),
        charset: None,
        fetched_at: chrono::DateTime::UNIX_EPOCH,
    };
    let (dom, dom_streamed) = rules.extract_with(&input, None, Css::Dom).unwrap();
    assert!(!dom_streamed);
    let (fast, streamed) = rules.extract_with(&input, None, Css::Stream).unwrap();
    (dom, fast, streamed)
}

fn rules() -> Rules {
    Rules::from_fields(&[
        "title=css:title",
        "h=css:h1",
        r#"n={ css = "h1", regex = "([0-9]+)", type = "integer" }"#,
        r#"link={ css = "a@href", type = "url" }"#,
        "p=css:p",
        r#"ps={ css = "div p", all = true }"#,
        "all=css:",
        "b=css:b",
    ])
    .unwrap()
}

#[test]
fn clean_pages_stream_and_agree() {
    let pages = [
        "<!DOCTYPE html><html><head><title>T &amp; t</title></head><body><h1>Page 7</h1><a href='/x?a=1&amp;b=2'>x</a><p>one <b>two</b>\n three</p></body></html>",
        "<title>x</title><p>a<p>b<div><p>c</div>",
        "<ul><li>a<li>b</ul><p>x</p>",
        "<dl><dt>a<dd>b<dt>c</dl>",
        "<pre>\nline</pre><p>after",
        "hello <b>world</b>",
        "<div><span>a</span></div></body></html>  <p>late</p>",
        "<script>if (a < b) { x = '</div>' }</script><p>&notit; &copy</p>",
        "<p>a</P><H1>Up 3</H1 >",
        "<body class=x><p>a<hr>b",
        "<form><p>a</form>",
        "<div><p>x</div>",
    ];
    for html in pages {
        let (dom, fast, streamed) = both(&rules(), html);
        assert!(streamed, "declined: {html}");
        assert_eq!(dom, fast, "page: {html}");
    }
}

#[test]
fn messy_pages_fall_back() {
    let pages = [
        "<p><b>a<p>b</b>",             // formatting element closed by a p
        "<b><i>x</b>y</i>",            // misnested formatting
        "<table><tr><td>x</table>",    // implied tbody
        "<table>a<tr></table>",        // foster parenting
        "<a href=1><a href=2>x</a>",   // nested a
        "<p>x</span>y",                // stray end tag
        "</p><p>x",                    // </p> with no p makes one
        "<svg><title>x</title></svg>", // foreign content
        "<select><option>x</select>",
        "<textarea>\nx</textarea>",
        "<noscript><p>x</p></noscript>",
        "<template><p>x</p></template>",
        "<p>a\0b",
        "<h1><h2>x</h2></h1>",
        "<html><html lang=x>",
        "<div>x</img>",
        "<head></head><title>late</title>",
        "<div class=\"x", // a tag cut by the end of the page
    ];
    for html in pages {
        let (dom, fast, streamed) = both(&rules(), html);
        assert!(!streamed, "streamed: {html}");
        assert_eq!(dom, fast, "page: {html}");
    }
    let deep = format!("{}x", "<div>".repeat(tree::MAX_DEPTH + 1));
    assert!(!both(&rules(), &deep).2);
}

#[test]
fn rule_sets_that_need_the_dom_do_not_stream() {
    for spec in [
        "h=html:h1",
        "h=css:p:first-child",
        "h=css:a + b",
        "h=css:[type=x]",
    ] {
        let rules = Rules::from_fields(&[spec]).unwrap();
        let (dom, fast, streamed) = both(&rules, "<h1>x</h1>");
        assert!(!streamed, "{spec}");
        assert_eq!(dom, fast);
    }
    let with_item = Rules::from_toml("[s]\nitem = \"li\"\n[s.fields]\nx = \"css:\"\n").unwrap();
    assert!(!both(&with_item, "<li>a<li>b").2);
}

mod prop;
