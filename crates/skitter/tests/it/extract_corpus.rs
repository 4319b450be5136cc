//! Conformance of `skitter::parse::links` against other projects' recorded results:
//! lychee, Scrapy and html5lib link-extraction cases, lychee's `srcset` cases,
//! and html5lib tokenizer cases for attribute-value decoding.
//!
//! The corpora were written for extractors with other rules (lychee reports raw
//! values and skips `nofollow`; Scrapy filters by file extension; html5lib
//! builds a DOM). Each group below is run with the comparison that matches what
//! skitter promises, and every case where skitter deliberately differs is
//! listed with the reason. The test fails when a listed case starts to agree
//! (the list must stay exact) as well as when any other case disagrees.
//! Provenance: `tests/corpora/PROVENANCE-extract.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use serde_json::Value;
use skitter::parse::links::{
    ExtractMode, HtmlDocument, decode_attribute, extract_html, parse_srcset,
};
use url::Url;

const LINKS: &str = include_str!("../corpora/links_cases.jsonl");
const SRCSET: &str = include_str!("../corpora/srcset_cases.jsonl");
const ATTRS: &str = include_str!("../corpora/html_attr_decoding_cases.jsonl");

/// Cases where skitter's rules differ from the recording project's, by id.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    (
        "lychee-000",
        "lychee skips links inside <pre>/<code> (\"verbatim\"); a link in <pre> is still a link to a crawler",
    ),
    (
        "lychee-001",
        "include_verbatim: lychee also finds bare URLs in text; skitter reads markup only",
    ),
    (
        "lychee-003",
        "lychee skips links inside <pre>; skitter does not",
    ),
    (
        "lychee-004",
        "lychee drops rel=nofollow anchors; nofollow is a ranking hint, skitter keeps them",
    ),
    (
        "lychee-005",
        "lychee drops rel=nofollow anchors; skitter keeps them",
    ),
    (
        "lychee-007",
        "lychee drops disabled stylesheets; skitter keeps them (scripts can enable them)",
    ),
    (
        "lychee-010",
        "lychee drops a mailto-less e-mail address; skitter returns the href, a relative URL",
    ),
    (
        "lychee-011",
        "lychee takes `v2@1.5x.png` for an e-mail address; to skitter it is a relative image URL",
    ),
    (
        "lychee-019",
        "lychee takes `/@global/global.css` for an e-mail address; to skitter it is a stylesheet",
    ),
    (
        "lychee-021",
        "lychee skips links inside <pre>; skitter does not",
    ),
    (
        "lychee-022",
        "include_verbatim: lychee also finds bare URLs in text; skitter reads markup only",
    ),
    (
        "lychee-023",
        "lychee drops rel=nofollow anchors (comma-separated rel); skitter keeps them",
    ),
    (
        "lychee-024",
        "lychee takes `v2@1.5x.png` for an e-mail address; to skitter it is a relative image URL",
    ),
    (
        "lychee-029",
        "lychee reads href/src/cite on any element; skitter reads the attributes of known elements only",
    ),
    (
        "scrapy-004",
        "Scrapy drops links ending in non-HTML extensions (.jpg); skitter leaves filtering to scope",
    ),
];

/// Scrapy extractor options skitter has no equivalent of (custom tag/attribute
/// sets, extension filters): such cases are not run.
const SCRAPY_SKIP_NOTE: &str = "Scrapy cases with extractor_options are not run: skitter reads a fixed \
    element/attribute set per mode (no custom tags/attrs) and does not filter by file extension";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// lychee: raw attribute values; compare skitter's `raw` as a multiset.
    LycheeRaw,
    /// lychee: absolute links only; compare the absolute `raw` values as a set.
    LycheeAbsolute,
    /// Scrapy with default options: resolved a/area links as a set.
    ScrapyDefault,
    /// Scrapy with custom options: not run (see `SCRAPY_SKIP_NOTE`).
    ScrapyCustom,
    /// html5lib: raw href/src values of the DOM; compare as a set (skitter does
    /// not de-duplicate, and DOM clones only repeat values).
    Html5lib,
}

fn group(case: &Value) -> Group {
    let source = case["source"].as_str().unwrap_or_default();
    let resolution = case["semantics"]["resolution"].as_str().unwrap_or_default();
    let has_options = case["extractor_options"]
        .as_object()
        .is_some_and(|o| !o.is_empty());
    match source {
        "lychee" if resolution.starts_with("absolute") => Group::LycheeAbsolute,
        "lychee" => Group::LycheeRaw,
        "scrapy" if has_options => Group::ScrapyCustom,
        "scrapy" => Group::ScrapyDefault,
        _ => Group::Html5lib,
    }
}

static CASES: LazyLock<Vec<Value>> = LazyLock::new(|| {
    LINKS
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
});

/// Runs skitter on a links case, with the case's bytes, charset and base.
fn run(case: &Value, mode: ExtractMode) -> HtmlDocument {
    let bytes = match case["html_bytes_b64"].as_str() {
        Some(b64) => base64_decode(b64),
        None => case["html"].as_str().unwrap().as_bytes().to_vec(),
    };
    // lychee and html5lib cases have no page URL; any base works for raw values.
    let page = Url::parse(
        case["base_url"]
            .as_str()
            .unwrap_or("http://corpus.invalid/page"),
    )
    .unwrap();
    extract_html(&bytes, case["encoding"].as_str(), &page, mode)
}

/// What skitter produced and what the case expects, in the group's comparison.
fn compare(case: &Value, group: Group) -> (Vec<String>, Vec<String>) {
    let expected: Vec<String> = case["expected_links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    let mode = match group {
        Group::ScrapyDefault => ExtractMode::Pages,
        _ => ExtractMode::Resources,
    };
    let doc = run(case, mode);
    let links = doc.links.iter();
    let mut got: Vec<String> = match group {
        Group::LycheeRaw | Group::Html5lib => links.map(|l| l.raw.clone()).collect(),
        Group::LycheeAbsolute => links
            .filter(|l| Url::parse(&l.raw).is_ok())
            .map(|l| l.raw.clone())
            .collect(),
        Group::ScrapyDefault => links
            .filter_map(|l| l.url.as_ref().ok())
            .map(Url::to_string)
            .collect(),
        Group::ScrapyCustom => unreachable!("not run"),
    };
    let mut expected = expected;
    if group == Group::LycheeRaw {
        got.sort();
        expected.sort();
    } else {
        got = got
            .into_iter()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        expected = expected
            .into_iter()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
    }
    (got, expected)
}

#[test]
fn links_corpus() {
    let known: BTreeMap<&str, &str> = KNOWN_DIFFERENCES.iter().copied().collect();
    let (mut passed, mut differ_as_listed, mut skipped) = (0, 0, 0);
    let mut problems = Vec::new();
    for case in CASES.iter() {
        let id = case["id"].as_str().unwrap();
        let group = group(case);
        if group == Group::ScrapyCustom {
            skipped += 1;
            continue;
        }
        let (got, expected) = compare(case, group);
        match (got == expected, known.get(id)) {
            (true, None) => passed += 1,
            (false, Some(reason)) => {
                differ_as_listed += 1;
                println!(
                    "differs by design: {id}: {reason}\n  expected {expected:?}\n  got      {got:?}"
                );
            }
            (true, Some(reason)) => problems.push(format!(
                "{id}: listed as differing ({reason}) but now agrees"
            )),
            (false, None) => problems.push(format!(
                "{id} ({group:?}):\n  expected {expected:?}\n  got      {got:?}"
            )),
        }
    }
    println!(
        "links corpus: {passed} agree, {differ_as_listed} differ by design, {skipped} not run"
    );
    println!("note: {SCRAPY_SKIP_NOTE}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(
        (passed, differ_as_listed, skipped),
        (
            PASSING_LINK_CASES,
            KNOWN_DIFFERENCES.len(),
            SKIPPED_LINK_CASES
        )
    );
}

/// Pinned so that a regression (or an unnoticed change in the corpus) shows.
const PASSING_LINK_CASES: usize = 43;
const SKIPPED_LINK_CASES: usize = 13;

#[test]
fn srcset_corpus() {
    let mut count = 0;
    for line in SRCSET.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let input = case["srcset"].as_str().unwrap();
        let expected: Vec<&str> = case["expected_urls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(parse_srcset(input), expected, "{}: {input:?}", case["test"]);
        count += 1;
    }
    println!("srcset corpus: {count} of {count} agree");
    assert_eq!(count, 7);
}

/// One start tag as the tokenizer saw it: element name and attributes, first
/// duplicate winning, values entity-decoded by skitter.
type StartTag = (String, BTreeMap<String, String>);

/// Reads every start tag of `html` with lol_html (the tokenizer skitter uses)
/// and decodes attribute values with `skitter::parse::links::decode_attribute`.
fn start_tags(html: &str) -> Vec<StartTag> {
    use lol_html::{HtmlRewriter, Settings, element};
    let mut tags = Vec::new();
    let settings = Settings::new()
        .with_strict(false)
        .append_element_content_handler(element!("*", |el| {
            let mut attributes = BTreeMap::new();
            for attr in el.attributes() {
                attributes
                    .entry(attr.name())
                    .or_insert_with(|| decode_attribute(&attr.value()).into_owned());
            }
            // The corpus records only start tags that have attributes.
            if !attributes.is_empty() {
                tags.push((el.tag_name(), attributes));
            }
            Ok(())
        }));
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    let result = rewriter
        .write(html.as_bytes())
        .and_then(|()| rewriter.end());
    result.map(|()| tags).unwrap_or_default()
}

fn expected_tags(case: &Value) -> Vec<StartTag> {
    let tags = case["expected_start_tags"].as_array().unwrap();
    tags.iter()
        .map(|t| {
            let attrs = t["attributes"].as_object().unwrap();
            let attrs = attrs
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                .collect();
            (t["element"].as_str().unwrap().to_owned(), attrs)
        })
        .collect()
}

#[test]
fn html_attr_decoding_corpus() {
    let (mut agree, mut values_only, mut names_differ) = (0, 0, 0);
    for line in ATTRS.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let got = start_tags(case["html"].as_str().unwrap());
        let expected = expected_tags(&case);
        if got == expected {
            agree += 1;
        } else if same_values(&got, &expected) {
            values_only += 1;
            println!(
                "names differ: {} {:?}\n  expected {expected:?}\n  got      {got:?}",
                case["description"], case["html"]
            );
        } else {
            names_differ += 1;
            println!(
                "differs: {} {:?}\n  expected {expected:?}\n  got      {got:?}",
                case["description"], case["html"]
            );
        }
    }
    println!(
        "attribute decoding corpus: {agree} agree, {values_only} agree on every attribute value but not on names, \
         {names_differ} differ"
    );
    // The 5 name-only differences are NUL characters in attribute *names*,
    // which lol_html keeps and the standard turns into U+FFFD; skitter reads
    // only named attributes (href, src, …), so they cannot affect a link.
    assert_eq!((agree, values_only, names_differ), (359, 5, 0));
}

/// True when the attribute *values* agree, whatever the names: tells decoding
/// problems (skitter's) apart from tokenizer naming quirks (lol_html's).
fn same_values(got: &[StartTag], expected: &[StartTag]) -> bool {
    let values = |tags: &[StartTag]| -> Vec<Vec<String>> {
        tags.iter()
            .map(|(_, attrs)| {
                attrs
                    .values()
                    .cloned()
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect()
            })
            .collect()
    };
    values(got) == values(expected)
}

/// Standard base64 (the one scrapy case stored as raw bytes); no dependency
/// for twenty lines.
fn base64_decode(input: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = input.bytes().filter(|&c| c != b'=').map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &d)| n | u32::from(d) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}
