//! Choosing the main content: furniture rules that misfire are undone, and
//! link boxes inside the content are cleaned out.

use url::Url;

use crate::content::extract;

const PROSE: &str = "A paragraph of the article, long enough to count, with commas, clauses, \
    and the words a reader came for, written out in full sentences.";

#[test]
fn furniture_rules_that_would_empty_the_page_are_not_applied() {
    // A page builder that names every wrapper "sidebar-section": each
    // wrapper holds under 85% of the text, together all of it.
    let html = format!(
        "<body><div class='sidebar-section'><p>{PROSE}</p><p>{PROSE}</p></div>\
         <div class='sidebar-section'><p>{PROSE}</p></div></body>"
    );
    let doc = extract(&html, &Url::parse("https://example.org/").unwrap());
    assert!(
        doc.text().contains("A paragraph of the article"),
        "{:?}",
        doc.text()
    );
}

#[test]
fn link_boxes_and_read_more_lines_inside_the_content_are_dropped() {
    let html = format!(
        "<body><article><p>{PROSE}</p><p>{PROSE}</p>\
         <p>Read more: <a href='/other'>Another story entirely</a></p>\
         <div class='share-tools'>Share on Facebook, Twitter</div>\
         <div><a href='/a'>One link</a> <a href='/b'>Another link</a></div>\
         <p>{PROSE}</p></article></body>"
    );
    let doc = extract(&html, &Url::parse("https://example.org/").unwrap());
    let text = doc.text();
    assert_eq!(
        text.matches("A paragraph of the article").count(),
        3,
        "{text:?}"
    );
    assert!(!text.contains("Read more"), "{text:?}");
    assert!(!text.contains("Facebook"), "{text:?}");
    assert!(!text.contains("One link"), "{text:?}");
}

#[test]
fn nested_lists_and_sentences_with_links_stay() {
    // A list of points inside a point, and a sentence pointing at three
    // places: content, not boxes of links ("Read more" lines still go).
    let html = format!(
        "<body><article><h1>Topic</h1><p>{PROSE}</p>\
         <p>Read on in <a href='/a/2'>article 2</a>, or see <a href='/x'>the outside \
         world</a> and <a href='/g.pdf'>the PDF guide</a>.</p>\
         <ul><li>First point<ul><li>Inner point A</li><li>Inner point B</li></ul></li>\
         <li>Second point</li></ul>\
         <p>Read more: <a href='/other'>Another story entirely</a></p>\
         <p>{PROSE}</p></article></body>"
    );
    let doc = extract(&html, &Url::parse("https://example.org/").unwrap());
    let text = doc.text();
    assert!(text.contains("Inner point A"), "{text}");
    assert!(text.contains("Read on in article 2"), "{text}");
    assert!(!text.contains("Another story entirely"), "{text}");
}

#[test]
fn an_index_page_keeps_its_list_of_pages() {
    let items: String = (1..=7)
        .map(|n| format!("<li><a href='/docs/a/{n}'>Article {n}</a></li>"))
        .collect();
    let html = format!(
        "<body><nav><a href='/'>Home</a></nav><main><article><h1>Documentation</h1>\
         <p>Every article of the docs, in order of reading.</p><ul>{items}</ul>\
         </article></main></body>"
    );
    let doc = extract(&html, &Url::parse("https://example.org/docs/").unwrap());
    let md = doc.markdown();
    assert!(
        md.contains("- [Article 3](https://example.org/docs/a/3)"),
        "{md}"
    );
    assert!(md.contains("# Documentation"), "{md}");
}
