//! Unit tests for the parser and group selection; the matching rules themselves are
//! exercised by Google's corpus in `tests/robots_corpus.rs`.

use super::*;

fn allowed(body: &str, token: &str, path: &str) -> bool {
    Robots::parse(body.as_bytes()).allowed_path(token, path)
}

#[test]
fn group_and_line_table() {
    // (robots.txt, token, path, allowed, why)
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str, bool, &str)] = &[
        ("", "skitter", "/x", true, "empty file"),
        ("User-agent: *\nDisallow: /", "skitter", "/x", false, "global"),
        ("User-agent: *\nDisallow: /", "skitter", "/robots.txt", true, "robots.txt"),
        ("User-agent: *\nDisallow: /", "skitter", "/robots.txt?x=1", true, "robots.txt?q"),
        ("User-agent: *\nDisallow: /\n\nUser-agent: skitter\nDisallow:", "skitter", "/x", true, "empty disallow"),
        ("User-agent: skitter\n\nUser-agent: *\nDisallow: /", "skitter", "/x", false, "blank line does not end a group"),
        ("User-agent: skitter\nSitemap: /s.xml\nUser-agent: other\nDisallow: /", "skitter", "/x", false, "sitemap does not end a group"),
        ("User-agent: skitter\nCrawl-delay: 1\nUser-agent: other\nDisallow: /", "skitter", "/x", false, "crawl-delay does not end a group"),
        ("User-agent: skitter\nDisallow: /a\nUser-agent: other\nDisallow: /b\nUser-agent: SKITTER\nDisallow: /c", "skitter", "/c", false, "merged groups"),
        ("User-agent: skitter\nDisallow: /a\nUser-agent: other\nDisallow: /b", "skitter", "/b", true, "other group"),
        ("User-agent: skitter/1.0\nDisallow: /", "skitter", "/x", false, "version in the file"),
        ("User-agent: * extra words\nDisallow: /", "skitter", "/x", false, "star with trailing words"),
        ("User-agent: *bot\nDisallow: /", "skitter", "/x", true, "not a star line"),
        ("Disallow: /\nUser-agent: *\nAllow: /", "skitter", "/x", true, "rules before any group"),
        ("User-agent: *\r\nDisallow: /a\r\n", "skitter", "/a", false, "CRLF"),
        ("User-agent: *\rDisallow: /a\r", "skitter", "/a", false, "CR"),
        ("\u{feff}User-agent: *\nDisallow: /a", "skitter", "/a", false, "BOM"),
        ("User-agent: *\nDisallow: /a # secret\n", "skitter", "/a%20", false, "comment"),
        ("User-agent: *\nDisallow: /a b c\n", "skitter", "/a", true, "three words, no colon"),
        ("User-agent: *\nDisallow: /%e3%83%84", "skitter", "/%E3%83%84", false, "hex case"),
        ("User-agent: *\nDisallow: /ツ", "skitter", "/%e3%83%84", false, "utf-8 pattern"),
    ];
    for &(body, token, path, want, why) in cases {
        assert_eq!(allowed(body, token, path), want, "{why}: {body:?} {path:?}");
    }
}

#[test]
fn invalid_utf8_is_tolerated() {
    let body = b"User-agent: *\nDisallow: /\xff\xfe\n\xc3\nDisallow: /b";
    let robots = Robots::parse(body);
    assert!(!robots.allowed_path("x", "/%FF%FE"));
    assert!(!robots.allowed_path("x", "/b"));
    assert!(robots.allowed_path("x", "/c"));
}

#[test]
fn only_the_first_500_kib_count() {
    let mut body = String::from("User-agent: *\n");
    while body.len() < MAX_BYTES - 20 {
        body.push_str("Disallow: /filler\n");
    }
    // This line straddles the limit and must be dropped, not cut to `/`.
    body.push_str("Disallow: /straddling-the-limit\nDisallow: /after\n");
    let robots = Robots::parse(body.as_bytes());
    assert!(!robots.allowed_path("x", "/filler"));
    assert!(robots.allowed_path("x", "/s"));
    assert!(robots.allowed_path("x", "/straddling-the-limit"));
    assert!(robots.allowed_path("x", "/after"));
}

#[test]
fn crawl_delay_and_sitemaps() {
    let body = "Sitemap: https://a.example/s1.xml\nUser-agent: skitter\nCrawl-delay: 2.5\n\
                User-agent: *\nCrawl-delay: 10\nDisallow: /x\nsitemap:/s2.xml # rel\n\
                User-agent: bad\nCrawl-delay: -1\nCrawl-delay: nan";
    let robots = Robots::parse(body.as_bytes());
    assert_eq!(
        robots.crawl_delay("SKITTER"),
        Some(Duration::from_millis(10_000)),
        "skitter and * share a group (no rule line between them)"
    );
    assert_eq!(robots.crawl_delay("bad"), None);
    assert_eq!(robots.crawl_delay("other"), Some(Duration::from_secs(10)));
    assert_eq!(robots.sitemaps(), ["https://a.example/s1.xml", "/s2.xml"]);
    let separate =
        Robots::parse(b"User-agent: a\nCrawl-delay: 0.5\nDisallow:\nUser-agent: *\nCrawl-delay: 3");
    assert_eq!(separate.crawl_delay("a"), Some(Duration::from_millis(500)));
}

#[test]
fn constructors() {
    let url = Url::parse("https://a.example/private?x").unwrap();
    assert!(Robots::allow_all().allowed("skitter", &url));
    assert!(!Robots::disallow_all().allowed("skitter", &url));
    let robots_txt = Url::parse("https://a.example/robots.txt").unwrap();
    assert!(Robots::disallow_all().allowed("skitter", &robots_txt));
    assert!(Robots::allow_all().sitemaps().is_empty());
}

#[test]
fn product_tokens() {
    let cases = [
        ("skitter/0.1.0 (+https://example.com/bot)", "skitter"),
        ("Foo_Bar-Baz", "Foo_Bar-Baz"),
        ("Mozilla/5.0 (compatible; skitter)", "Mozilla"),
        (" leading-space", ""),
        ("", ""),
    ];
    for (ua, want) in cases {
        assert_eq!(product_token(ua), want, "{ua:?}");
    }
}

#[test]
fn path_and_query_table() {
    let cases = [
        ("http://a.example", "/"),
        ("http://a.example/p?q=1#frag", "/p?q=1"),
        ("http://a.example/p?", "/p?"),
        ("http://a.example/ツ", "/%E3%83%84"),
    ];
    for (url, want) in cases {
        assert_eq!(path_and_query(&Url::parse(url).unwrap()), want, "{url}");
    }
}

#[test]
fn every_prefix_and_garbage_is_handled() {
    let body = "\u{feff}User-agent: a\r\nDisallow: /%e3%8\nAllow: /*x$\nCrawl-delay: 1e400\n\
                Sitemap: /s\nUser-agent: *\nDisallow: /ツ*$";
    for end in 0..=body.len() {
        let robots = Robots::parse(&body.as_bytes()[..end]);
        let _ = robots.allowed_path("a", "/%E3%83%84x");
        let _ = robots.crawl_delay("a");
    }
    const ALPHABET: &[u8] = b"user-agent:disallow*$%/# \n\r\xe3\x83\xff";
    let mut state: u32 = 11;
    for _ in 0..200 {
        let bytes: Vec<u8> = (0..256)
            .map(|_| {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                ALPHABET[(state >> 16) as usize % ALPHABET.len()]
            })
            .collect();
        let robots = Robots::parse(&bytes);
        let _ = robots.allowed_path("user", &String::from_utf8_lossy(&bytes));
    }
}
