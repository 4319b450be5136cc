//! A seeded, bounded differential test: generated pages (clean and broken
//! markup, entities, scripts, comments, tables, foreign content) and rule
//! sets; the streaming path gives the DOM path's items, or declines.

use std::cell::Cell;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};

use super::both;
use crate::parse::items::Rules;

const CASES: u32 = 1500;

fn tag() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "div",
        "p",
        "p",
        "span",
        "b",
        "i",
        "a",
        "h1",
        "h2",
        "li",
        "ul",
        "dl",
        "dt",
        "dd",
        "title",
        "script",
        "style",
        "pre",
        "br",
        "img",
        "hr",
        "head",
        "body",
        "html",
        "form",
        "button",
        "em",
        "section",
        "table",
        "tr",
        "td",
        "svg",
        "select",
        "noscript",
        "textarea",
        "nobr",
        "template",
        "custom-el",
        "DIV",
        "P",
    ])
}

fn attr() -> impl Strategy<Value = String> {
    let name = prop::sample::select(vec!["class", "id", "href", "title", "data-k", "CLASS"]);
    let value = prop::sample::select(vec![
        "a",
        "b c",
        "x&amp;y",
        "/p?a=1&b=2",
        "&copy",
        "A",
        "a\r\nb",
        "",
        "z\"q",
        "/x/../y",
    ]);
    let quote = prop::sample::select(vec!["\"", "'", ""]);
    (name, value, quote).prop_map(|(n, v, q)| {
        if q.is_empty() && (v.is_empty() || v.contains([' ', '"', '\r'])) {
            format!(" {n}")
        } else if q == "'" {
            format!(" {n}='{v}'")
        } else if q == "\"" {
            format!(" {n}=\"{}\"", v.replace('"', "&quot;"))
        } else {
            format!(" {n}={v}")
        }
    })
}

fn text() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "hello",
        " ",
        "\n",
        "\r\n",
        "a &amp; b",
        "&lt;",
        "&notin",
        "&notit;",
        "x < y",
        "1 2 3",
        "&#x41;",
        "&#0;",
        "&#x80;",
        "  wide\t\tspace ",
        "42",
        "</",
        "<>",
        "a\0b",
        "\u{a0}nbsp",
        "\u{3000}ideo",
    ])
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        5 => (tag(), prop::collection::vec(attr(), 0..3), any::<bool>()).prop_map(
            |(t, attrs, slash)| format!("<{t}{}{}>", attrs.concat(), if slash { "/" } else { "" })
        ),
        4 => tag().prop_map(|t| format!("</{t}>")),
        6 => text().prop_map(str::to_string),
        1 => Just("<!-- c <p> -->".to_string()),
        1 => Just("<!DOCTYPE html>".to_string()),
        1 => Just("<?pi x?>".to_string()),
        1 => Just("</p >".to_string()),
    ]
}

/// Well-nested markup, where the streaming path mostly runs.
fn clean() -> impl Strategy<Value = String> {
    let leaf = text().prop_map(str::to_string);
    leaf.prop_recursive(3, 24, 4, |inner| {
        let tag = prop::sample::select(vec![
            "div",
            "p",
            "span",
            "b",
            "a",
            "h1",
            "ul",
            "li",
            "section",
            "em",
            "pre",
            "custom-el",
        ]);
        (
            tag,
            prop::collection::vec(attr(), 0..3),
            prop::collection::vec(inner, 0..4),
        )
            .prop_map(|(t, attrs, kids)| format!("<{t}{}>{}</{t}>", attrs.concat(), kids.concat()))
    })
}

fn page() -> impl Strategy<Value = String> {
    prop_oneof![broken(), clean()]
}

fn broken() -> impl Strategy<Value = String> {
    let start = prop::sample::select(vec![
        "",
        "<!DOCTYPE html>\n<html>\n<head>\n<title>T 1</title>\n</head>\n<body>\n",
        "<html><body>",
        "<title>x</title>",
    ]);
    (start, prop::collection::vec(token(), 0..24)).prop_map(|(s, t)| format!("{s}{}", t.concat()))
}

fn field() -> impl Strategy<Value = String> {
    let sel = prop::sample::select(vec![
        "p",
        "div p",
        "div > p",
        "b",
        "a",
        ".a",
        "#a",
        "[href]",
        "a[href^='/']",
        "li",
        "h1",
        "title",
        "body > p",
        "span, b",
        "*",
        "html p",
        "script",
        "pre",
        "",
        "[class~=c]",
        "[data-k|=b]",
        "p:first-child",
        "td",
        "custom-el",
    ]);
    let take = prop::sample::select(vec!["", "", "@href", "@class", "@id"]);
    let regex = prop::sample::select(vec!["", r#", regex = "([0-9]+)", type = "integer""#]);
    (sel, take, regex, any::<bool>()).prop_map(|(s, t, r, all)| {
        let css = format!("{s}{t}").replace('\'', "\\\"");
        format!("{{ css = \"{css}\"{r}, all = {all} }}")
    })
}

fn rule_set() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(field(), 1..4).prop_map(|fields| {
        fields
            .into_iter()
            .enumerate()
            .map(|(i, f)| format!("f{i}={f}"))
            .collect()
    })
}

#[test]
fn streaming_gives_the_doms_items_or_declines() {
    let config = Config {
        cases: CASES,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x5eed_0019),
        ..Config::default()
    };
    let streamed = Cell::new(0u32);
    let mut runner = TestRunner::new(config);
    let result = runner.run(&(page(), rule_set()), |(html, specs)| {
        let rules = Rules::from_fields(&specs).expect("generated rules are valid");
        let (dom, fast, ran) = both(&rules, &html);
        streamed.set(streamed.get() + u32::from(ran));
        prop_assert_eq!(dom, fast, "page {:?} rules {:?}", html, specs);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // The test means something only if the streaming path often runs.
    assert!(
        streamed.get() >= CASES / 5,
        "streamed on {} of {CASES} pages",
        streamed.get()
    );
}

/// The per-character collapse that `collapse_into` must equal.
fn collapse_reference(out: &mut String, space: &mut bool, t: &str) {
    for c in t.chars() {
        if c.is_whitespace() {
            *space = !out.is_empty();
        } else {
            if *space {
                out.push(' ');
                *space = false;
            }
            out.push(c);
        }
    }
}

#[test]
fn collapsing_by_stretches_equals_collapsing_by_characters() {
    let pieces = prop::sample::select(vec![
        "a", "word", " ", "  ", "\t", "\n", "\r\n", "\u{b}", "\u{c}", "\u{a0}", "\u{2003}", "é",
        "\u{85}", "x y", "日本",
    ]);
    let node = prop::collection::vec(pieces, 0..12).prop_map(|v| v.concat());
    let strategy = prop::collection::vec(node, 1..4);
    let mut runner = TestRunner::new(Config {
        cases: 2000,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x5eed_c011),
        ..Config::default()
    });
    runner
        .run(&strategy, |nodes| {
            let (mut want, mut want_space) = (String::new(), false);
            let (mut got, mut got_space) = (String::new(), false);
            for t in &nodes {
                collapse_reference(&mut want, &mut want_space, t);
                super::super::collapse_into(&mut got, &mut got_space, t);
                prop_assert_eq!(&got, &want);
                prop_assert_eq!(got_space, want_space);
            }
            Ok(())
        })
        .unwrap();
}
