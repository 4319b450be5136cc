//! The scanner against `lol_html`: the same links from generated markup
//! built of the tokenizer's hard cases, from the real pages of the content
//! corpora, and from a few cases written out; and linear work on hostile
//! pages.

use std::cell::Cell;
use std::io::Read;
use std::path::Path;

use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use url::Url;

use super::super::{ExtractMode, HtmlDocument, LinkPass, run_rewriter};

const PAGE: &str = "http://example.com/dir/page.html";

/// The links `lol_html` finds in `text`, in the pages mode.
fn by_lol_html(text: &str) -> HtmlDocument {
    let pass = LinkPass::new(text, ExtractMode::Pages, 50);
    run_rewriter(text, &pass.state, ExtractMode::Pages);
    pass.finish(&Url::parse(PAGE).unwrap(), "UTF-8", false)
}

/// The links the scanner finds, or `None` when it gives the page back.
fn by_scan(text: &str) -> Option<HtmlDocument> {
    by_scan_departing(text).map(|(doc, _)| doc)
}

/// [`by_scan`], and whether the scan departed from `lol_html`.
fn by_scan_departing(text: &str) -> Option<(HtmlDocument, bool)> {
    let pass = LinkPass::new(text, ExtractMode::Pages, 50);
    let departed = pass.scan_departing(text)?;
    Some((
        pass.finish(&Url::parse(PAGE).unwrap(), "UTF-8", false),
        departed,
    ))
}

/// Each link as (raw, element, attr, offset), and the cut count.
fn summary(doc: &HtmlDocument) -> (Vec<(String, &'static str, &'static str, usize)>, u64) {
    let links = doc
        .links
        .iter()
        .map(|l| (l.raw.clone(), l.element, l.attr, l.at))
        .collect();
    (links, doc.cut)
}

/// Whether the scanner and `lol_html` agree on `text`: `Ok(true)` when the
/// scanner read it, `Ok(false)` when it gave it back (which is allowed).
fn check(text: &str) -> Result<bool, String> {
    let Some((got, departed)) = by_scan_departing(text) else {
        return Ok(false);
    };
    if departed {
        // lol_html has no consistent answer there (and may panic).
        return Ok(true);
    }
    let want = by_lol_html(text);
    if summary(&got) != summary(&want) || got.base != want.base {
        return Err(format!(
            "{text:?}: scanned {:?} (base {}), lol_html {:?} (base {})",
            summary(&got),
            got.base,
            summary(&want),
            want.base
        ));
    }
    Ok(true)
}

/// Panics unless the two agree; true when the scanner read `text`.
fn agree(text: &str) -> bool {
    check(text).unwrap()
}

/// Pieces of markup that reach every state the scanner models, and the
/// single bytes that end or restart them.
const PIECES: &[&str] = &[
    "<a href=x>",
    "<A HREF='y'>",
    "<a href=\"z\" href=w>",
    "<a\thref=u/>",
    "<a/href=v>",
    "<a href=>",
    "<a =b href=c>",
    "<area href=ar>",
    "<base href=/b/>",
    "<meta http-equiv=refresh content='0;url=r'>",
    "<meta content=\"1; URL=m\" http-equiv=Refresh>",
    "<link rel=next href=n>",
    "<link rel=stylesheet href=s>",
    "<link href=h>",
    "<script>",
    "<script x=>",
    "</script>",
    "</SCRIPT >",
    "<!--",
    "-->",
    "--!>",
    "<!-->",
    "<!--->",
    "<!DOCTYPE html>",
    "<?php x ?>",
    "</ x>",
    "</>",
    "<![CDATA[",
    "]]>",
    "<svg>",
    "<svg/>",
    "</svg>",
    "<math>",
    "</math>",
    "<mi>",
    "</mi>",
    "<annotation-xml encoding=text/html>",
    "</annotation-xml>",
    "<foreignObject>",
    "</foreignObject>",
    "<desc>",
    "<title>",
    "</title>",
    "<font color=red>",
    "<font>",
    "<p>",
    "</p>",
    "<br>",
    "</br>",
    "<div>",
    "<style>",
    "</style>",
    "<textarea>",
    "</textarea>",
    "<xmp>",
    "</xmp>",
    "<iframe>",
    "</iframe>",
    "<noembed>",
    "<noframes>",
    "<noscript>",
    "</noscript>",
    "<plaintext>",
    "&amp;",
    "\0",
    "é",
    "<",
    ">",
    "/",
    "!",
    "-",
    "\"",
    "'",
    "=",
    " ",
    "\n",
    "a",
    "s",
    "script",
    "[",
    "]",
    "?",
];

/// `name` from the environment, else `default`: `SCAN_CASES` and
/// `SCAN_SEED` run the generated test longer or on other markup (3,000,000
/// cases on three seeds agreed when the scanner was written).
fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Pieces for script data's escapes, where the states are densest.
const SCRIPT_PIECES: &[&str] = &[
    "<script>",
    "</script>",
    "</script ",
    "<script",
    "<!--",
    "<!-",
    "-->",
    "--",
    "-",
    "<",
    ">",
    "/",
    " ",
    "x",
    "<a href=x>",
    "<SCRIPT>",
    "</scripts>",
];

/// Pieces for foreign content: entering, leaving, integration points.
const FOREIGN_PIECES: &[&str] = &[
    "<svg>",
    "</svg>",
    "<svg/>",
    "<math>",
    "</math>",
    "<mi>",
    "</mi>",
    "<mi/>",
    "<desc>",
    "</desc>",
    "<title>",
    "</title>",
    "<foreignObject>",
    "</foreignObject>",
    "<p>",
    "</p>",
    "</br>",
    "<b>",
    "<font size=2>",
    "<font>",
    "<annotation-xml encoding=TEXT/HTML>",
    "<annotation-xml>",
    "</annotation-xml>",
    "<![CDATA[",
    "]]>",
    "<style>",
    "</style>",
    "<script>",
    "</script>",
    "<a href=x>",
    "<a href=y/>",
    "x",
];

/// Runs `cases` pages of up to 48 `pieces` through both readers (more with
/// `SCAN_CASES`, other pages with `SCAN_SEED`); at least half of them must
/// be the scanner's own (it gives back only a `<noscript>` it does not
/// model).
fn generated(pieces: &'static [&'static str], cases: u64, seed: u64) {
    let cases = env_or("SCAN_CASES", cases);
    let config = Config {
        cases: u32::try_from(cases).unwrap_or(u32::MAX),
        rng_seed: RngSeed::Fixed(env_or("SCAN_SEED", seed)),
        failure_persistence: None,
        ..Config::default()
    };
    let pages = proptest::collection::vec(proptest::sample::select(pieces), 0..48);
    let scanned = Cell::new(0);
    let mut runner = TestRunner::new(config);
    runner
        .run(&pages, |page| {
            if check(&page.concat()).map_err(TestCaseError::fail)? {
                scanned.set(scanned.get() + 1);
            }
            Ok(())
        })
        .unwrap();
    let scanned = scanned.get();
    assert!(scanned > cases / 2, "scanned only {scanned} of {cases}");
}

#[test]
fn generated_markup_yields_the_links_lol_html_finds() {
    generated(PIECES, 4_000, 0x5ca0_0035);
}

#[test]
fn generated_script_data_yields_the_links_lol_html_finds() {
    generated(SCRIPT_PIECES, 2_000, 0x5ca0_5c1d);
}

#[test]
fn generated_foreign_content_yields_the_links_lol_html_finds() {
    generated(FOREIGN_PIECES, 2_000, 0x5ca0_f04e);
}

/// The `source.html.gz` of every page under `dir`.
fn corpus_pages(dir: &Path) -> Vec<String> {
    let mut pages = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path().join("source.html.gz");
        let Ok(file) = std::fs::File::open(&path) else {
            continue;
        };
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(file)
            .read_to_end(&mut bytes)
            .unwrap();
        pages.push(
            crate::parse::links::decode_html(&bytes, None)
                .0
                .into_owned(),
        );
    }
    pages
}

#[test]
fn real_pages_yield_the_links_lol_html_finds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/content");
    let mut pages = corpus_pages(&root.join("readability/pages"));
    pages.extend(corpus_pages(&root.join("trafilatura/pages")));
    assert!(pages.len() > 300, "the corpora hold {} pages", pages.len());
    let mut links = 0;
    for page in &pages {
        let want = by_lol_html_uncapped(page);
        let pass = LinkPass::new(page, ExtractMode::Pages, usize::MAX);
        assert!(pass.scan(page), "the scanner gave back a real page");
        let got = pass.finish(&Url::parse(PAGE).unwrap(), "UTF-8", false);
        assert_eq!(summary(&got), summary(&want));
        links += got.links.len();
    }
    assert!(links > 50_000, "only {links} links in the corpora");
}

fn by_lol_html_uncapped(text: &str) -> HtmlDocument {
    let pass = LinkPass::new(text, ExtractMode::Pages, usize::MAX);
    run_rewriter(text, &pass.state, ExtractMode::Pages);
    pass.finish(&Url::parse(PAGE).unwrap(), "UTF-8", false)
}

#[test]
fn markup_that_is_not_a_tag_yields_no_link() {
    let none = [
        "<!-- <a href=x> -->",
        "<script>var s = '<a href=x>';</script>",
        "<script><!--<script></script><a href=x></script>",
        "<style><a href=x></style>",
        "<title><a href=x></title>",
        "<textarea><a href=x></textarea>",
        "<plaintext><a href=x>",
        "<math><![CDATA[<a href=x>]]></math>",
        "<![CDATA[<a href=x>]]>",
        "<a href='x",
        "<a href=x",
    ];
    for text in none {
        assert!(agree(text), "{text:?} given back");
        assert_eq!(by_scan(text).unwrap().links.len(), 0, "{text:?}");
    }
    let one = [
        "<!-- x --!><a href=x>",
        "<!--> <a href=y>",
        "<script><!--</script><a href=x>",
        "<svg><title><a href=x>",
        "<svg><style><a href=x></style>",
        "<svg><p><style></style><a href=x>",
        "<title>t</title  ><a href=x>",
        "<noscript><a href=x></noscript>",
    ];
    for text in one {
        assert!(agree(text), "{text:?} given back");
        assert_eq!(by_scan(text).unwrap().links.len(), 1, "{text:?}");
    }
}

#[test]
fn markup_the_scan_does_not_model_is_given_back() {
    for text in ["<svg><noscript><a href=x>", "<math><noscript><a href=x>"] {
        assert!(by_scan(text).is_none(), "{text:?} scanned");
        assert_eq!(by_lol_html(text).links.len(), 1, "{text:?}");
    }
}

#[test]
fn raw_text_after_a_start_tag_ending_in_eq_gt_is_read_as_the_standard_says() {
    // lol_html's tag scanner reads data after `=>` and its lexer, which
    // takes over at the next link, reads script data that never ends.
    let text = "<script x=><a href=x></script><a href=y>";
    assert_eq!(by_lol_html(text).links.len(), 0);
    let (doc, departed) = by_scan_departing(text).unwrap();
    assert!(departed);
    assert_eq!(summary(&doc).0, [("y".to_owned(), "a", "href", 30)]);
    // And on this, lol_html panics; the scan reads it.
    let text = "<script x=><svg></svg></script><a href=z>";
    assert!(std::panic::catch_unwind(|| by_lol_html(text)).is_err());
    assert_eq!(
        summary(&by_scan(text).unwrap()).0,
        [("z".to_owned(), "a", "href", 31)]
    );
    // The crawl's entry point falls back to lol_html with the same result.
    let page = Url::parse(PAGE).unwrap();
    let doc = super::super::extract_html(
        b"<svg><noscript><a href=x>",
        None,
        &page,
        ExtractMode::Pages,
    );
    assert_eq!(doc.links.len(), 1);
}

#[test]
fn hostile_pages_are_read_in_linear_work() {
    // Unclosed comments, escapes and foreign content, 200,000 times over:
    // each would be quadratic if the scan went back to the start.
    for piece in [
        "<!--",
        "<script><!--<script>",
        "<svg>",
        "<a href='",
        "<!DOCTYPE",
        "</x ",
    ] {
        let text = piece.repeat(200_000);
        assert!(by_scan(&text).is_some(), "{piece:?} given back");
    }
    let deep = "<svg><math>".repeat(100_000) + "<a href=deep>";
    assert_eq!(by_scan(&deep).unwrap().links.len(), 1);
}
