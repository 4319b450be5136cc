//! Unit tests for formats, limits and hostile input; the other projects' cases are in
//! `tests/sitemap_corpus.rs`.

use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;

use super::*;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

fn urlset(urls: impl Iterator<Item = String>) -> String {
    let mut xml = String::from(r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#);
    for url in urls {
        xml.push_str(&format!("<url><loc>{url}</loc></url>\n"));
    }
    xml.push_str("</urlset>");
    xml
}

#[test]
fn formats_table() {
    // (body, kind, urls, truncated)
    #[rustfmt::skip]
    let cases: &[(&str, SitemapKind, &[&str], bool)] = &[
        ("https://a.example/1\r\n\n  https://a.example/2  \n", SitemapKind::Text, &["https://a.example/1", "https://a.example/2"], false),
        ("\u{feff}<urlset><url><loc>/a?x=1&amp;y=2</loc></url></urlset>", SitemapKind::UrlSet, &["/a?x=1&y=2"], false),
        ("<urlset><url><loc>/a?x=1&y=2</loc></url></urlset>", SitemapKind::UrlSet, &["/a?x=1&y=2"], false),
        ("<urlset><url><loc><![CDATA[/c?a&b]]></loc></url></urlset>", SitemapKind::UrlSet, &["/c?a&b"], false),
        ("<urlset><url><loc>/&#x41;&#66;</loc></url></urlset>", SitemapKind::UrlSet, &["/AB"], false),
        ("<urlset><url><loc>/p</loc><image:image><image:loc>/i.png</image:loc></image:image></url></urlset>", SitemapKind::UrlSet, &["/p"], false),
        ("<urlset><loc>/not-in-url</loc><url><loc></loc></url></urlset>", SitemapKind::UrlSet, &[], false),
        ("<sm:sitemapindex xmlns:sm='x'><sm:sitemap><sm:loc>/s1.xml.gz</sm:loc></sm:sitemap></sm:sitemapindex>", SitemapKind::Index, &["/s1.xml.gz"], false),
        ("<rss><channel><link>/</link><item><link>/i1</link><guid>/g1</guid></item><item><guid>/g2</guid></item><item><guid isPermaLink=\"false\">x</guid></item></channel></rss>", SitemapKind::Feed, &["/", "/i1", "/g2"], false),
        ("<rdf:RDF xmlns:rdf='r'><channel><link>/</link></channel><item><link>/i</link></item></rdf:RDF>", SitemapKind::Feed, &["/", "/i"], false),
        ("<feed><link rel='self' href='/feed'/><entry><link href='/e?a=1&amp;b=2'/><link rel='alternate' href='/alt'/><link rel='enclosure' href='/x.mp3'/></entry></feed>", SitemapKind::Feed, &["/e?a=1&b=2", "/alt"], false),
        ("<urlset><url><loc>/ok</loc></url><url><loc>/cut", SitemapKind::UrlSet, &["/ok"], true),
        ("<urlset><url><loc>/ok</loc></url>", SitemapKind::UrlSet, &["/ok"], true),
        ("<urlset><url><loc>/ok</loc></url><url></wrong></urlset>", SitemapKind::UrlSet, &["/ok"], true),
    ];
    for &(body, kind, urls, truncated) in cases {
        let got = parse_sitemap(body.as_bytes()).unwrap_or_else(|e| panic!("{body:?}: {e}"));
        assert_eq!(got.kind, kind, "{body:?}");
        assert_eq!(got.urls, urls, "{body:?}");
        assert_eq!(got.truncated, truncated, "{body:?}");
    }
}

#[test]
fn errors_table() {
    let cases: &[(&[u8], &str)] = &[
        (b"", "Empty"),
        (b" \n\t", "Empty"),
        (b"<html><body>Not found</body></html>", "NotASitemap"),
        (b"<urlset><url><loc>/cut", "Xml"),
        (b"<urlset><url></wrong>", "Xml"),
        (b"<?xml version='1.0'?><!-- nothing -->", "Xml"),
        (b"\x1f\x8b\x08garbage", "Gzip"),
    ];
    for &(body, want) in cases {
        let err = parse_sitemap(body).expect_err(&format!("{body:?} should fail"));
        assert!(format!("{err:?}").starts_with(want), "{body:?}: {err:?}");
    }
}

#[test]
fn gzip_is_detected_by_magic_bytes() {
    let xml = urlset((0..3).map(|i| format!("https://a.example/{i}")));
    let got = parse_sitemap(&gzip(xml.as_bytes())).unwrap();
    assert_eq!(got.kind, SitemapKind::UrlSet);
    assert_eq!(got.urls.len(), 3);
    assert!(!got.truncated);
    let text = parse_sitemap(&gzip(b"https://a.example/t\n")).unwrap();
    assert_eq!(text.urls, ["https://a.example/t"]);
}

#[test]
fn corrupt_gzip_keeps_what_was_inflated() {
    let mut body = gzip(urlset((0..500).map(|i| format!("https://a.example/{i}"))).as_bytes());
    let half = body.len() / 2;
    body.truncate(half);
    let got = parse_sitemap(&body).unwrap();
    assert!(got.truncated);
    assert!(!got.urls.is_empty() && got.urls.len() < 500);
}

#[test]
fn at_most_50_000_urls() {
    for (count, truncated) in [(MAX_URLS, false), (MAX_URLS + 1, true)] {
        let xml = urlset((0..count).map(|i| format!("/{i}")));
        let got = parse_sitemap(xml.as_bytes()).unwrap();
        assert_eq!(got.urls.len(), MAX_URLS);
        assert_eq!(got.truncated, truncated, "{count} URLs");
        assert_eq!(got.urls.last().map(String::as_str), Some("/49999"));

        let text: String = (0..count).map(|i| format!("/{i}\n")).collect();
        let got = parse_sitemap(text.as_bytes()).unwrap();
        assert_eq!((got.urls.len(), got.truncated), (MAX_URLS, truncated));
    }
}

#[test]
fn gzip_bomb_stops_at_the_limit() {
    // 60 gzip members of 1 MiB each: ~60 KiB that inflate to 60 MiB. Concatenated
    // members are valid gzip, so this is a real bomb, built cheaply. The filler is
    // XML whitespace inside the root, so the parse sees a document cut off at the
    // limit and keeps the URL read before it.
    let mut head = urlset(std::iter::once("https://a.example/first".to_owned()));
    head.truncate(head.len() - "</urlset>".len());
    let mut first = head.into_bytes();
    first.resize(1024 * 1024, b' ');
    let mut bomb = gzip(&first);
    let member = gzip(&vec![b' '; 1024 * 1024]);
    for _ in 1..60 {
        bomb.extend_from_slice(&member);
    }
    bomb.extend(gzip(
        b"<url><loc>https://a.example/past-the-limit</loc></url></urlset>",
    ));
    assert!(bomb.len() < 200 * 1024);
    let got = parse_sitemap(&bomb).unwrap();
    assert!(got.truncated);
    assert_eq!(got.urls, ["https://a.example/first"]);
}

#[test]
fn oversized_plain_body_is_cut() {
    let mut body = urlset(std::iter::once("https://a.example/1".to_owned())).into_bytes();
    body.truncate(body.len() - "</urlset>".len());
    body.resize(MAX_BYTES - 5, b' ');
    body.extend_from_slice(b"<url><loc>https://a.example/2</loc></url></urlset>");
    let got = parse_sitemap(&body).unwrap();
    assert!(got.truncated);
    assert_eq!(got.urls, ["https://a.example/1"]);
}

#[test]
fn cut_text_loses_only_its_last_line() {
    let got = parse_text("/a\n/b\n/partial-ur", true);
    assert_eq!(
        (got.urls, got.truncated),
        (vec!["/a".to_owned(), "/b".to_owned()], false)
    );
    assert!(parse_text("/only-a-fragment", true).urls.is_empty());
    assert_eq!(parse_text("/a\n/b", false).urls, ["/a", "/b"]);
}

#[test]
fn entities_are_not_expanded() {
    let billion_laughs = r#"<?xml version="1.0"?>
        <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>
        <urlset><url><loc>/a&lol2;b</loc></url></urlset>"#;
    let got = parse_sitemap(billion_laughs.as_bytes()).unwrap();
    assert_eq!(got.urls, ["/ab"]);
}

#[test]
fn sitemap_scope_table() {
    // (sitemap, target, from robots.txt, allowed)
    #[rustfmt::skip]
    let cases = [
        ("https://a.example/sitemap.xml", "https://a.example/any/page", false, true),
        ("https://a.example/blog/sitemap.xml", "https://a.example/blog/post", false, true),
        ("https://a.example/blog/sitemap.xml", "https://a.example/blog", false, false),
        ("https://a.example/blog/sitemap.xml", "https://a.example/shop/item", false, false),
        ("https://a.example/blog/sitemap.xml", "https://a.example/shop/item", true, true),
        ("https://a.example/sitemap.xml", "http://a.example/page", false, false),
        ("https://a.example/sitemap.xml", "https://www.a.example/page", false, false),
        ("https://a.example/sitemap.xml", "https://a.example:8443/page", false, false),
        ("https://a.example/sitemap.xml", "https://b.example/page", true, true),
    ];
    for (sitemap, target, from_robots, want) in cases {
        let (s, t) = (Url::parse(sitemap).unwrap(), Url::parse(target).unwrap());
        assert_eq!(
            sitemap_allows(&s, &t, from_robots),
            want,
            "{sitemap} → {target}"
        );
    }
}

#[test]
fn every_prefix_and_garbage_is_handled() {
    // Cut-off downloads are the common malformed input: every prefix of a sitemap,
    // plain and gzipped, must give a result or an error, never a panic.
    let xml = r#"<?xml version="1.0"?><!DOCTYPE x><urlset><url><loc>/a?b=1&amp;c=&#50;</loc><image:image><image:loc>/i</image:loc></image:image></url><url><loc><![CDATA[/d]]></loc></url></urlset>"#;
    let gz = gzip(xml.as_bytes());
    for end in 0..=xml.len() {
        let _ = parse_sitemap(&xml.as_bytes()[..end]);
    }
    for end in 0..=gz.len() {
        let _ = parse_sitemap(&gz[..end]);
    }
    // Deterministic pseudo-random bytes (an LCG), biased towards markup characters.
    const ALPHABET: &[u8] = b"<>/&;#x:=\"' urlsetloc\n\xff\x1f\x8b";
    let mut state: u32 = 7;
    for _ in 0..200 {
        let body: Vec<u8> = (0..256)
            .map(|_| {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                ALPHABET[(state >> 16) as usize % ALPHABET.len()]
            })
            .collect();
        let _ = parse_sitemap(&body);
    }
}
