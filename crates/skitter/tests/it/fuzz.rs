//! Property tests over every parser that reads what a server sends or a user
//! types: HTML and CSS link extraction, srcset and link headers, robots.txt,
//! sitemaps, URL normalisation, the glob parser and WARC repair.
//!
//! Inputs mix random bytes with the tokens each parser cares about (tags,
//! `url(`, `*`, `<loc>`, `[1-9]`, `WARC/1.1`), so cases reach deep paths
//! instead of failing on the first byte. The seed is fixed and failures are
//! not persisted, so every run checks the same cases; the case counts keep
//! the whole file to a few seconds. An input that once failed goes into the
//! `regressions` test below, which runs on every `cargo test`.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use skitter::bulk::Glob;
use skitter::parse::links::{self, ExtractMode};
use skitter::robots::Robots;
use url::Url;

fn config(cases: u32) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(0x5eed_5c17),
        failure_persistence: None,
        ..Config::default()
    }
}

/// Text made of `tokens` and short random runs, up to `max` pieces.
fn text_of(tokens: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => proptest::sample::select(tokens).prop_map(str::to_owned),
        1 => any::<String>().prop_map(|s| s.chars().take(6).collect()),
    ];
    proptest::collection::vec(piece, 0..max).prop_map(|v| v.concat())
}

const HTML: &[&str] = &[
    "<a href=",
    "<a href=\"",
    "\">",
    ">",
    "/x",
    "http://h/",
    "../",
    "&amp;",
    "&#x",
    "<noscript>",
    "</noscript>",
    "<style>",
    "</style>",
    "<script>",
    "</script>",
    "<!--",
    "-->",
    "<base href=",
    "<img srcset=\"",
    " 1x, ",
    "<meta http-equiv=refresh content=\"0;url=",
    "<div style=\"background:url(",
    ")\">",
    "<svg>",
    "<template>",
    "<textarea>",
    "\0",
    "'",
];

const CSS: &[&str] = &[
    "url(", ")", "@import ", "\"", "'", "\\", "/*", "*/", "a.png", "\n", ";", "{", "}",
];

const ROBOTS: &[&str] = &[
    "User-agent: ",
    "skitter",
    "*",
    "\n",
    "Disallow: ",
    "Allow: ",
    "/a",
    "$",
    "%2F",
    "%e3",
    "Crawl-delay: ",
    "1e9",
    "Sitemap: ",
    "#",
    "\r",
];

const SITEMAP: &[&str] = &[
    "<?xml version=\"1.0\"?>",
    "<urlset>",
    "</urlset>",
    "<sitemapindex>",
    "</sitemapindex>",
    "<url>",
    "</url>",
    "<sitemap>",
    "</sitemap>",
    "<loc>",
    "</loc>",
    "http://h/p",
    "&amp;",
    "<![CDATA[",
    "]]>",
    "<rss>",
    "<feed>",
    "<link href=\"",
    "\"/>",
    "\n",
];

const GLOB: &[&str] = &[
    "http://h/",
    "[",
    "]",
    "{",
    "}",
    ",",
    "-",
    ":",
    "0",
    "9",
    "a",
    "z",
    "\\",
    "18446744073709551615",
];

const URLS: &[&str] = &[
    "http://", "HTTPS://", "h", "ex.COM", ":80", ":8080", "/", "./", "../", "%2f", "%7E", "%37",
    "%", "?", "#", "@", "[::1]", "xn--", "é", " ", "\\", "+", "=",
];

fn page() -> Url {
    Url::parse("http://example.com/dir/page.html").unwrap()
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn html_extraction_never_fails_and_is_deterministic(text in text_of(HTML, 48)) {
        for mode in [ExtractMode::Pages, ExtractMode::Resources] {
            let a = links::extract_html(text.as_bytes(), None, &page(), mode);
            let b = links::extract_html(text.as_bytes(), None, &page(), mode);
            prop_assert_eq!(a.links, b.links);
        }
    }

    #[test]
    fn html_extraction_takes_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        links::extract_html(&bytes, Some("shift_jis"), &page(), ExtractMode::Resources);
    }

    #[test]
    fn css_and_header_parsers_take_anything(text in text_of(CSS, 32)) {
        let links = links::extract_css(&text, &page());
        prop_assert!(links.len() <= text.len());
        links::parse_srcset(&text);
        links::refresh_target(&text);
        links::link_header_targets(&text);
    }

    #[test]
    fn robots_rules_hold_for_literal_paths(text in text_of(ROBOTS, 32), path in "/[a-z]{0,6}") {
        let robots = Robots::parse(text.as_bytes());
        robots.allowed_path("skitter", &path);
        robots.crawl_delay("skitter");
        // A literal Disallow in the only group always applies.
        let own = Robots::parse(format!("User-agent: *\nDisallow: {path}\n").as_bytes());
        prop_assert_eq!(own.allowed_path("skitter", &format!("{path}x")), path.is_empty());
    }

    #[test]
    fn sitemaps_parse_or_fail_cleanly(text in text_of(SITEMAP, 32)) {
        if let Ok(sitemap) = skitter::parse::sitemap::parse_sitemap(text.as_bytes()) {
            prop_assert!(sitemap.urls.len() <= text.len());
        }
    }

    #[test]
    fn normalisation_is_idempotent(text in text_of(URLS, 12)) {
        if let Ok(url) = skitter::base::urlnorm::resolve(&text, &page()) {
            let once = skitter::base::urlnorm::normalize(url);
            let twice = skitter::base::urlnorm::normalize(once.clone());
            prop_assert_eq!(once, twice);
        }
    }

    #[test]
    fn globs_expand_to_what_they_count(text in text_of(GLOB, 10)) {
        if let Ok(glob) = Glob::parse(&text) {
            if glob.len() <= 200 {
                let all: Vec<String> = glob.clone().into_iter().collect();
                prop_assert_eq!(all.len() as u64, glob.len());
                for (k, url) in all.iter().enumerate() {
                    prop_assert_eq!(glob.get(k as u64), Some(url.clone()));
                }
            }
            prop_assert_eq!(glob.get(glob.len()), None);
        }
    }
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn warc_repair_cuts_to_whole_records_once(cut in 0usize..2000, noise in proptest::collection::vec(any::<u8>(), 0..64)) {
        let good = include_bytes!("../corpora/warc/good.warc");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.warc");
        let mut bytes = good[..cut.min(good.len())].to_vec();
        bytes.extend_from_slice(&noise);
        std::fs::write(&path, &bytes).unwrap();
        let first = skitter::output::repair_warc(&path, 4).unwrap();
        let second = skitter::output::repair_warc(&path, 4).unwrap();
        prop_assert_eq!(second.cut, 0);
        prop_assert_eq!(second.records, first.records);
        prop_assert_eq!(first.cut as usize + std::fs::metadata(&path).unwrap().len() as usize, bytes.len());
    }
}

/// Inputs that once crashed or stalled a parser, kept so they never do again.
#[test]
fn regressions() {
    // 2 MB of nested <noscript> overflowed the stack (one pass per level).
    let deep = "<noscript>".repeat(200_000);
    links::extract_html(deep.as_bytes(), None, &page(), ExtractMode::Pages);
    // A numeric range one past u64 overflowed the count.
    assert!(Glob::parse("http://h/[0-18446744073709551615]").is_err());
}
