//! The link pass gives the same links whether it runs its own element
//! selectors or takes its elements from the streaming extraction's `*`
//! handler (`LinkPass::takes_elements`): a seeded, bounded differential test
//! over generated pages full of link markup, clean and broken.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use url::Url;

use super::{Fingerprint, html_pass};
use crate::parse::items::{PageInput, Rules};
use crate::parse::links::{DEFAULT_MAX_LINKS, ExtractMode};

const CASES: u32 = 1000;

fn token() -> impl Strategy<Value = String> {
    let tag = prop::sample::select(vec![
        "a",
        "A",
        "area",
        "AREA",
        "base",
        "meta",
        "META",
        "p",
        "div",
        "noscript",
        "svg",
        "math",
        "table",
        "td",
        "title",
        "script",
        "style",
        "link",
        "img",
        "custom-el",
    ]);
    let attr = prop::sample::select(vec![
        " href=/x",
        " HREF='/y?a=1&amp;b=2'",
        " href",
        " href=\"  /sp ace \"",
        " href=\"\"",
        " href=\"javascript:void(0)\"",
        " href=\"mailto:a@b\"",
        " http-equiv=refresh",
        " HTTP-EQUIV=\"Refresh\"",
        " content=\"0; url=/r\"",
        " content=\"5;URL='/q'\"",
        " content",
        " src=/img.png",
        " class=c",
        " href=/dup href=/second",
        " href=\"/&#x41;&copy\"",
    ]);
    let text = prop::sample::select(vec![
        "hello",
        " ",
        "<a href=/in-noscript>",
        "&lt;a href=/escaped&gt;",
        "x < y",
        "</",
        "\r\n",
    ]);
    prop_oneof![
        6 => (tag.clone(), prop::collection::vec(attr, 0..3), any::<bool>()).prop_map(
            |(t, attrs, slash)| format!("<{t}{}{}>", attrs.concat(), if slash { "/" } else { "" })
        ),
        3 => tag.prop_map(|t| format!("</{t}>")),
        3 => text.prop_map(str::to_string),
        1 => Just("<!-- <a href=/commented> -->".to_string()),
        1 => Just("<!DOCTYPE html>".to_string()),
    ]
}

fn page() -> impl Strategy<Value = String> {
    let start = prop::sample::select(vec![
        "",
        "<!DOCTYPE html>\n<html>\n<head>\n<title>T 1</title>\n</head>\n<body>\n",
        "<html><head><base href=\"/base/\"></head><body>",
    ]);
    (start, prop::collection::vec(token(), 0..30)).prop_map(|(s, t)| format!("{s}{}", t.concat()))
}

#[test]
fn links_are_the_same_with_or_without_a_streaming_extraction() {
    let url = Url::parse("http://example.test/dir/page").unwrap();
    let rules = Rules::from_fields(&["t=css:title".to_string(), "h=css:a@href".to_string()])
        .expect("valid rules");
    let config = Config {
        cases: CASES,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x5eed_1195),
        ..Config::default()
    };
    let shared = std::cell::Cell::new(0u32);
    let mut runner = TestRunner::new(config);
    let result = runner.run(&page(), |html| {
        let (alone, _) = html_pass(
            html.as_bytes(),
            None,
            &url,
            (ExtractMode::Pages, DEFAULT_MAX_LINKS, false, false),
            None,
            (false, Fingerprint::Off, None),
        );
        let input = PageInput {
            url: &url,
            body: html.as_bytes(),
            charset: None,
            fetched_at: chrono::DateTime::UNIX_EPOCH,
        };
        let streams = rules.stream_pass(&url, &html).is_some_and(|p| p.is_ok());
        let (with, extras) = html_pass(
            html.as_bytes(),
            None,
            &url,
            (ExtractMode::Pages, DEFAULT_MAX_LINKS, false, true),
            Some((&rules, input)),
            (false, Fingerprint::Off, None),
        );
        shared.set(shared.get() + u32::from(streams));
        prop_assert_eq!(&alone.links, &with.links, "page {:?}", html);
        prop_assert_eq!(&alone.base, &with.base);
        // The page text read beside links and items is the text read alone.
        prop_assert_eq!(extras.text, Some(text_alone(&html)));
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // The test means something only if the shared pass often runs.
    let shared = shared.get();
    assert!(shared >= CASES / 2, "shared on {shared} of {CASES} pages");
}

/// The crawl's one pass, asked for lines and anchors (a link check), finds
/// what a checker's own read of the page would: the same links, lines and
/// anchors.
#[test]
fn the_crawls_pass_gives_a_checker_what_its_own_read_would() {
    use crate::parse::links::{DEFAULT_MAX_ANCHORS, extract_anchored};
    let url = Url::parse("http://example.test/dir/page").unwrap();
    let config = Config {
        cases: CASES / 4,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x5eed_0037),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&page(), |html| {
        let (doc, extras) = html_pass(
            html.as_bytes(),
            None,
            &url,
            (ExtractMode::Resources, DEFAULT_MAX_LINKS, true, true),
            None,
            (false, Fingerprint::Off, None),
        );
        let own = extract_anchored(
            html.as_bytes(),
            None,
            &url,
            DEFAULT_MAX_LINKS,
            DEFAULT_MAX_ANCHORS,
        );
        let checked = extras.checked.expect("lines asked for");
        prop_assert_eq!(&doc.links, &own.doc.links, "page {:?}", html);
        prop_assert_eq!(&checked.lines, &own.lines);
        prop_assert_eq!(checked.anchors, Some((own.anchors, own.anchors_cut)));
        prop_assert_eq!(extras.text, Some(text_alone(&html)));
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Asked for the page's text too (a WACZ's page list), the links still come
/// from the scan, the same links the lol_html pass finds (asked for lines,
/// which only it reads), and the text is left to the sink, which reads it
/// from the body; only a page the scan gave up on, read by lol_html, gives
/// its text here, the text read alone.
#[test]
fn links_beside_the_page_text_are_the_lol_html_pass_links() {
    let url = Url::parse("http://example.test/dir/page").unwrap();
    let config = Config {
        cases: CASES / 2,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x5eed_0057),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let pass = |html: &str, lines: bool, text: bool| {
        html_pass(
            html.as_bytes(),
            None,
            &url,
            (ExtractMode::Pages, DEFAULT_MAX_LINKS, lines, text),
            None,
            (false, Fingerprint::Off, None),
        )
    };
    let result = runner.run(&page(), |html| {
        let (doc, extras) = pass(&html, false, true);
        let (by_lol_html, _) = pass(&html, true, false);
        prop_assert_eq!(&doc.links, &by_lol_html.links, "page {:?}", html);
        prop_assert_eq!(&doc.base, &by_lol_html.base);
        if let Some(text) = extras.text {
            prop_assert_eq!(text, text_alone(&html));
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// The fingerprint is computed for a page with a link one number away from
/// its own URL (or an escaped one, which normalising may make so), and not
/// for a page whose links cannot step along a chain; `Always` and `Off` do
/// what they say.
#[test]
fn a_fingerprint_only_where_a_chain_may_read_it() {
    let url = Url::parse("http://example.test/list/7").unwrap();
    let print = |html: &str, when: Fingerprint| {
        let (_, extras) = html_pass(
            html.as_bytes(),
            None,
            &url,
            (ExtractMode::Pages, DEFAULT_MAX_LINKS, false, false),
            None,
            (false, when, None),
        );
        extras.fingerprint
    };
    let pager = "<p>Results</p><a href=\"/list/8\">next</a>";
    let escaped = "<p>Results</p><a href=\"/list/%38\">next</a>";
    let elsewhere =
        "<p>Results</p><a href=\"/about\">about</a><a href=\"http://other.test/list/8\">x</a>";
    assert!(print(pager, Fingerprint::IfChained).is_some());
    assert!(print(escaped, Fingerprint::IfChained).is_some());
    assert_eq!(print(elsewhere, Fingerprint::IfChained), None);
    assert!(print(elsewhere, Fingerprint::Always).is_some());
    assert_eq!(print(pager, Fingerprint::Off), None);
    assert_eq!(
        print(pager, Fingerprint::IfChained),
        print(pager, Fingerprint::Always)
    );
}

/// A page's text as `wacz create` reads it: decoded, then read alone.
fn text_alone(html: &str) -> crate::parse::text::PageText {
    let (text, _, _) = crate::parse::links::decode_html(html.as_bytes(), None);
    crate::parse::text::page_text(&text)
}
