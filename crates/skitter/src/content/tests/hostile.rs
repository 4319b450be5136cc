//! Hostile input: deep nesting, tag soup, odd characters, huge attributes.
//! Nothing panics, overflows the stack or grows without bound.

use url::Url;

use crate::content::{ContentOptions, ContentScope, Document, Extractor, extract};

fn url() -> Url {
    Url::parse("https://example.org/").unwrap()
}

fn both(html: &str) -> [Document; 2] {
    let full = Extractor::new(&ContentOptions {
        scope: ContentScope::Full,
        ..ContentOptions::default()
    })
    .unwrap();
    [extract(html, &url()), full.extract(html, &url())]
}

/// A paragraph, `depth` copies of `open`, a paragraph, then `depth` copies
/// of `close` and a last paragraph.
fn nested(open: &str, close: &str, depth: usize) -> String {
    let mut html = String::with_capacity(depth * (open.len() + close.len()) + 64);
    html.push_str("<p>The words before the nesting, kept.</p>");
    for _ in 0..depth {
        html.push_str(open);
    }
    html.push_str("<p>The words at the bottom.</p>");
    for _ in 0..depth {
        html.push_str(close);
    }
    html.push_str("<p>The words after.</p>");
    html
}

#[test]
fn deep_nesting_is_cut_at_the_cap_in_linear_time() {
    for (open, close) in [
        ("<div>", "</div>"),
        ("<ul><li>", "</li></ul>"),
        ("<blockquote>", "</blockquote>"),
        ("<table><tr><td>", "</td></tr></table>"),
        ("<b><i>", "</i></b>"),
        ("<span><a href='/x'>", "</a></span>"),
    ] {
        let html = nested(open, close, 100_000);
        for doc in both(&html) {
            assert!(
                doc.text().contains("The words before the nesting"),
                "{open}: {:?}",
                doc.text()
            );
            assert!(doc.truncated, "{open}: the cut is reported");
            assert!(doc.markdown().len() < 100_000, "{open}: output bounded");
        }
    }
}

#[test]
fn nesting_under_the_cap_is_kept_and_flattened_past_the_prefix_cap() {
    for (open, close) in [
        ("<ul><li>", "</li></ul>"),
        ("<blockquote>", "</blockquote>"),
    ] {
        let html = nested(open, close, 200);
        for doc in both(&html) {
            let text = doc.text();
            assert!(
                text.contains("The words at the bottom") && text.contains("The words after"),
                "{open}: {text:?}"
            );
            assert!(!doc.truncated, "{open}");
            // Quote and list prefixes stop at MAX_NEST levels.
            let widest = doc.markdown().lines().map(str::len).max().unwrap_or(0);
            assert!(
                widest < 4 * crate::content::convert::MAX_NEST + 64,
                "{open}: {widest}"
            );
        }
    }
}

#[test]
fn odd_characters_and_huge_attributes() {
    let huge = "x".repeat(4 << 20);
    let html = format!(
        "<p class='{huge}' style='{huge}'>NUL\0here, a lone surrogate &#xD800; and \u{202E}RTL\u{200F} marks</p>\
         <a href='/{huge}'>long link</a><img src='/{huge}' alt='{huge}'>"
    );
    for doc in both(&html) {
        let text = doc.text();
        assert!(
            text.contains("a lone surrogate \u{FFFD} and \u{202E}RTL\u{200F} marks"),
            "{text:?}"
        );
        assert!(!text.contains('\0'), "NUL is replaced by the parser");
    }
}

#[test]
fn many_blocks_are_capped() {
    let html = "<p>word</p>".repeat(crate::content::writer::MAX_BLOCKS + 10);
    for doc in both(&html) {
        assert!(doc.truncated);
        assert_eq!(doc.blocks.len(), crate::content::writer::MAX_BLOCKS);
    }
}

#[test]
fn many_lead_ins_and_tables_of_contents_stay_linear() {
    // Thousands of paragraphs ending in a colon, each before its list, and
    // tables of contents nested in tables of contents: each is looked into
    // a bounded number of steps (no root is searched for linearly, no
    // contents' links scanned past TOC_LOOKAHEAD).
    let mut html = String::from("<body><div>");
    for n in 0..5_000 {
        html.push_str(&format!(
            "<p>Paragraph {n} of the text, with commas, and words, leading into:</p>\
             <ul><li>item {n}</li></ul>"
        ));
    }
    html.push_str("</div>");
    for _ in 0..400 {
        html.push_str("<div class='toc'><ul><li><a href='#here'>here</a>");
    }
    for _ in 0..400 {
        html.push_str("</li></ul></div>");
    }
    html.push_str("</body>");
    for doc in both(&html) {
        let text = doc.text();
        assert!(
            text.contains("Paragraph 4999 of the text"),
            "{}",
            text.len()
        );
    }
    let main = extract(&html, &url()).markdown();
    assert!(main.contains("- item 4999"), "{}", main.len());
}
