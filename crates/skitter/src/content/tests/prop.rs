//! Seeded, bounded tag soup: no page makes the extractor panic, and every
//! Document it gives is well-formed (fences balanced, link ranges on the
//! links' targets) and bounded.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use url::Url;

use crate::content::links::destination;
use crate::content::{ContentOptions, ContentScope, Document, Extractor, extract};

const CASES: u32 = 1500;

fn tag() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "div",
        "p",
        "p",
        "span",
        "b",
        "i",
        "em",
        "strong",
        "a",
        "a",
        "h1",
        "h3",
        "ul",
        "ol",
        "li",
        "li",
        "dl",
        "dt",
        "dd",
        "pre",
        "code",
        "pre",
        "blockquote",
        "table",
        "tr",
        "td",
        "th",
        "thead",
        "caption",
        "br",
        "img",
        "hr",
        "nav",
        "footer",
        "article",
        "main",
        "header",
        "script",
        "style",
        "template",
        "svg",
        "math",
        "form",
        "button",
        "select",
        "textarea",
        "del",
        "sup",
        "figure",
        "figcaption",
        "section",
        "body",
        "html",
        "head",
        "title",
        "base",
    ])
}

fn attr() -> impl Strategy<Value = String> {
    let name = prop::sample::select(vec![
        "class",
        "id",
        "href",
        "src",
        "data-src",
        "alt",
        "hidden",
        "style",
        "role",
        "colspan",
        "start",
        "lang",
        "aria-hidden",
    ]);
    let value = prop::sample::select(vec![
        "language-rust",
        "highlight-python",
        "cookie-banner",
        "content",
        "/x?a=1",
        "javascript:alert(1)",
        "data:,x",
        "http://[::1]:bad",
        "display:none",
        "navigation",
        "main",
        "3",
        "99999999999",
        "true",
        "a (b) <c>",
        "",
    ]);
    (name, value).prop_map(|(n, v)| format!(" {n}=\"{v}\""))
}

fn text() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "hello world, with commas, and words",
        " ",
        "\n",
        "```",
        "`",
        "*star* _under_ [br] <lt> \\back",
        "# hash",
        "1. one",
        "- dash",
        "> quote",
        "| pipe |",
        "&#xD800;",
        "&#0;",
        "a\0b",
        "\u{200F}\u{202E}rtl",
        "\u{a0}nbsp",
        "~~~",
        "    indented",
    ])
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        5 => (tag(), prop::collection::vec(attr(), 0..3)).prop_map(|(t, a)| format!("<{t}{}>", a.concat())),
        4 => tag().prop_map(|t| format!("</{t}>")),
        6 => text().prop_map(str::to_string),
        1 => Just("<!-- <p> -->".to_string()),
    ]
}

fn page() -> impl Strategy<Value = String> {
    prop::collection::vec(token(), 0..80).prop_map(|t| t.concat())
}

/// Whether every code fence opened in `md` is closed (CommonMark's rules:
/// three backticks or more open a fence when no backtick follows on the
/// line; a run at least as long, alone on its line, closes it).
fn fences_closed(md: &str) -> bool {
    let mut open: Option<usize> = None;
    for line in md.lines() {
        let line = line
            .trim_start_matches(['>', ' ', '-', ':'])
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start_matches(". ")
            .trim_start();
        let run = line.len() - line.trim_start_matches('`').len();
        let rest = &line[run..];
        match open {
            None if run >= 3 && !rest.contains('`') => open = Some(run),
            Some(n) if run >= n && rest.trim().is_empty() => open = None,
            _ => {}
        }
    }
    open.is_none()
}

/// Checks one Document's invariants.
fn well_formed(doc: &Document, html: &str) -> Result<(), TestCaseError> {
    let md = doc.markdown();
    prop_assert!(
        md.len() <= 64 * html.len() + 4096,
        "output bounded: {} from {}",
        md.len(),
        html.len()
    );
    for block in &doc.blocks {
        prop_assert!(
            !block.markdown.trim().is_empty(),
            "empty block in {:?}",
            doc.blocks
        );
        prop_assert!(
            fences_closed(&block.markdown),
            "unbalanced fences in {:?}",
            block.markdown
        );
        for link in &block.links {
            let target = block.markdown.get(link.range.clone());
            let want = destination(&link.url);
            prop_assert_eq!(target, Some(want.as_str()), "{:?}", block);
        }
    }
    Ok(())
}

#[test]
fn tag_soup_gives_well_formed_bounded_documents() {
    let full = Extractor::new(&ContentOptions {
        scope: ContentScope::Full,
        ..ContentOptions::default()
    })
    .unwrap();
    let url = Url::parse("https://example.org/a/b").unwrap();
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x5eed_0033),
        ..Config::default()
    });
    runner
        .run(&page(), |html| {
            well_formed(&extract(&html, &url), &html)?;
            well_formed(&full.extract(&html, &url), &html)
        })
        .unwrap();
}
