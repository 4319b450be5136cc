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
