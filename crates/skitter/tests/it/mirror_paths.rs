//! The mirror: URL → file naming (including hostile URLs that try to escape the
//! mirror directory), and the sink end to end with `--convert-links`.

use std::io::Write;
use std::path::{Component, Path};

use bytes::Bytes;
use skitter::base::outcome::{OutcomeKind, PageRecord, SkipReason};
use skitter::output::{Exchange, MirrorOptions, MirrorSink, Page, Sink, mirror_path};
use url::Url;

const HTML: Option<&str> = Some("text/html");

fn rel(url: &str, media: Option<&str>) -> String {
    let dir = Path::new("/m/dir");
    let url = Url::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
    let path = mirror_path(dir, &url, media);
    assert_safe(dir, &path);
    let rel = path.strip_prefix(dir).unwrap();
    rel.to_str().unwrap().replace('\\', "/")
}

/// Under `dir`, plain names only, none over 200 bytes, none Windows would refuse.
fn assert_safe(dir: &Path, path: &Path) {
    let rel = path.strip_prefix(dir).expect("under the mirror dir");
    for c in rel.components() {
        let Component::Normal(name) = c else {
            panic!("{path:?}: {c:?}")
        };
        let name = name.to_str().unwrap();
        assert!(!name.is_empty() && name.len() <= 200, "{path:?}");
        assert!(!name.ends_with(['.', ' ']), "{path:?}");
        assert!(
            !name
                .chars()
                .any(|c| c.is_control() || "/\\:*?\"<>|".contains(c)),
            "{path:?}"
        );
    }
}

#[test]
fn naming_table() {
    let css = Some("text/css");
    let cases: &[(&str, Option<&str>, &str)] = &[
        ("http://example.com/", HTML, "example.com/index.html"),
        ("http://example.com", HTML, "example.com/index.html"),
        (
            "http://example.com/a/b/",
            HTML,
            "example.com/a/b/index.html",
        ),
        (
            "http://example.com/dir/",
            None,
            "example.com/dir/index.html",
        ),
        (
            "http://example.com/api/",
            Some("application/json"),
            "example.com/api/index.json",
        ),
        ("http://example.com/page", HTML, "example.com/page.html"),
        (
            "http://example.com/page.html",
            HTML,
            "example.com/page.html",
        ),
        ("http://example.com/page.HTM", HTML, "example.com/page.HTM"),
        (
            "http://example.com/index.php",
            HTML,
            "example.com/index.php.html",
        ),
        ("http://example.com/s.css", css, "example.com/s.css"),
        ("http://example.com/style", css, "example.com/style.css"),
        (
            "http://example.com/app.js?v=2",
            Some("text/javascript"),
            "example.com/app.js%3Fv=2.js",
        ),
        (
            "http://example.com/page?a=1&b=2",
            HTML,
            "example.com/page%3Fa=1&b=2.html",
        ),
        (
            "http://example.com/?p=1",
            HTML,
            "example.com/index%3Fp=1.html",
        ),
        (
            "http://example.com/q?a=%2F..%2F",
            HTML,
            "example.com/q%3Fa=%2F..%2F.html",
        ),
        (
            "http://example.com/img",
            Some("image/png"),
            "example.com/img.png",
        ),
        (
            "http://example.com/img.gif",
            Some("image/png"),
            "example.com/img.gif",
        ),
        ("http://example.com/data", None, "example.com/data"),
        ("http://example.com/f%20g", None, "example.com/f g"),
        (
            "http://example.com/caf%C3%A9",
            HTML,
            "example.com/café.html",
        ),
        ("http://example.com/日本", HTML, "example.com/日本.html"),
        ("http://127.0.0.1:8080/x", HTML, "127.0.0.1_8080/x.html"),
        ("https://example.com:443/x", HTML, "example.com/x.html"),
        (
            "http://my_host.example/",
            HTML,
            "my%5Fhost.example/index.html",
        ),
        ("http://[::1]:8080/", HTML, "[%3A%3A1]_8080/index.html"),
    ];
    for (url, media, want) in cases {
        assert_eq!(rel(url, *media), *want, "{url} {media:?}");
    }
}

#[test]
fn hostile_urls_stay_inside() {
    let cases: &[(&str, &str)] = &[
        ("http://h/../../etc/passwd", "h/etc/passwd"),
        ("http://h/a/%2e%2e/%2E%2e/x", "h/x"),
        ("http://h/%2e%2e", "h/index.html"),
        ("http://h/a%2F..%2F..%2Fb", "h/a%2F..%2F..%2Fb"),
        ("http://h/a%5C..%5C..%5Cb", "h/a%5C..%5C..%5Cb"),
        ("http://h/a\\..\\b", "h/b"),
        ("http://h//etc/passwd", "h/etc/passwd"),
        ("http://h/a//b", "h/a/b"),
        ("http://h/C:/Windows/x", "h/C%3A/Windows/x"),
        ("http://h/%2Fetc%2Fpasswd", "h/%2Fetc%2Fpasswd"),
        ("http://h/a%00b", "h/a%00b"),
        ("http://h/a%0Ab%0D%1F%7F", "h/a%0Ab%0D%1F%7F"),
        ("http://h/%C2%85", "h/%C2%85"),
        ("http://h/%25", "h/%25"),
        ("http://h/%252e%252e", "h/%252e%252e"),
        ("http://h/%FF%FE", "h/%FF%FE"),
        ("http://h/a*b%3Cc%3Ed%22e|f", "h/a%2Ab%3Cc%3Ed%22e%7Cf"),
        ("http://h/CON", "h/%43ON"),
        ("http://h/nul.txt", "h/%6Eul.txt"),
        ("http://h/aux/x", "h/%61ux/x"),
        ("http://h/Com1", "h/%43om1"),
        ("http://h/lpt9.log", "h/%6Cpt9.log"),
        ("http://h/a.", "h/a%2E"),
        ("http://h/a%20", "h/a%20"),
        ("http://h/dir.%20/x", "h/dir%2E%20/x"),
        ("http://h/...", "h/%2E%2E%2E"),
    ];
    for (url, want) in cases {
        assert_eq!(rel(url, None), *want, "{url}");
    }
}

#[test]
fn long_names_are_cut_with_a_hash() {
    let a = rel(&format!("http://h/{}", "a".repeat(300)), HTML);
    let b = rel(&format!("http://h/{}b", "a".repeat(300)), HTML);
    assert_ne!(a, b, "different URLs, same file");
    assert!(a.ends_with(".html") && a.contains('~'), "{a}");
    // A %XX escape can triple a name's length; the cap is on the encoded name.
    let c = rel(&format!("http://h/{}", "%01".repeat(300)), None);
    assert!(c.len() <= 202, "{c}");
    // Too deep: the whole path collapses to a hash.
    let deep = format!("http://h/{}x", format!("{}/", "d".repeat(100)).repeat(20));
    let d = rel(&deep, HTML);
    assert!(d.starts_with("h/_long/") && d.ends_with(".html"), "{d}");
}

fn page(url: &str, status: u16, mime: Option<&str>, headers: &str, body: &[u8]) -> Page {
    let mut record = PageRecord::skipped(Url::parse(url).unwrap(), SkipReason::Scope, 0, None);
    record.skip = None;
    record.status = Some(status);
    record.content_type = mime.map(str::to_string);
    record.kind = match (status, mime) {
        (300..=399, _) => OutcomeKind::Redirect,
        (400.., _) => OutcomeKind::HttpError,
        (_, Some("text/html")) => OutcomeKind::Html,
        _ => OutcomeKind::Other,
    };
    Page {
        rendered: None,
        record,
        exchange: Some(Exchange {
            request_head: Bytes::from_static(b"GET / HTTP/1.1\r\n\r\n"),
            response_head: Bytes::from(format!("HTTP/1.1 {status} X\r\n{headers}\r\n")),
            body: Bytes::copy_from_slice(body),
            decoded_body: None,
            truncated: false,
            body_sha1: None,
            remote_addr: None,
            http_version: "HTTP/1.1",
            started: chrono::Utc::now(),
            revisit: None,
        }),
        items: None,
        content: None,
        links: None,
        text: None,
    }
}

fn redirect(from: &str, to: &str) -> Page {
    let mut p = page(from, 301, None, "", b"");
    p.record.next_url = Some(Url::parse(to).unwrap());
    p
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

const INDEX: &str = r##"<html><head><link rel=stylesheet href="/style.css"></head><body>
<a href="/a">a</a> <a href="sub/">sub</a> <a href="/old#top">old</a>
<a href="https://elsewhere.example/x">out</a> <a href="#frag">frag</a>
<a href="/a?x=1&amp;y=2">q</a> <a href="/missing">404</a> <img src="img.png" srcset="img.png 1x, /big.png 2x">
<a href="/data.json">data</a><source srcset="/v?a=1&amp;b=2  1x"><style>p{background:url('/img.png')}</style></body></html>"##;

const H: &str = "http://127.0.0.1:8080";

async fn mirror(convert_links: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = MirrorSink::create(
        dir.path(),
        MirrorOptions {
            convert_links,
            ..MirrorOptions::default()
        },
    )
    .unwrap();
    assert!(sink.wants_bodies());
    let css = gzip(b"body{background:url(img.png)} @import '/sub/';");
    let pages = [
        page(
            &format!("{H}/"),
            200,
            HTML,
            "content-type: text/html\r\n",
            INDEX.as_bytes(),
        ),
        page(&format!("{H}/a"), 200, HTML, "", b"<a href=../>up</a>"),
        page(&format!("{H}/a?x=1&y=2"), 200, HTML, "", b"q"),
        page(
            &format!("{H}/sub/"),
            200,
            HTML,
            "",
            b"<a href='../'>home</a><a href=/style.css>s</a>",
        ),
        page(
            &format!("{H}/style.css"),
            200,
            Some("text/css"),
            "Content-Encoding: gzip\r\n",
            &css,
        ),
        page(
            &format!("{H}/img.png"),
            200,
            Some("image/png"),
            "",
            b"\x89PNG\r\n",
        ),
        redirect(&format!("{H}/old"), &format!("{H}/a")),
        page(&format!("{H}/missing"), 404, HTML, "", b"gone"),
        page(
            &format!("{H}/data.json"),
            200,
            Some("application/json"),
            "",
            b"{}",
        ),
        page(
            &format!("{H}/data.json/more"),
            200,
            Some("application/json"),
            "",
            b"[]",
        ),
        Page {
            rendered: None,
            record: PageRecord::skipped(
                Url::parse(&format!("{H}/s")).unwrap(),
                SkipReason::Robots,
                1,
                None,
            ),
            exchange: None,
            items: None,
            content: None,
            links: None,
            text: None,
        },
    ];
    for p in &pages {
        sink.record(p).await.unwrap();
    }
    let summary = sink.finish().await.unwrap();
    assert_eq!((summary.name.as_str(), summary.records), ("mirror", 8));
    dir
}

fn read(dir: &Path, rel: &str) -> String {
    let path = dir.join("127.0.0.1_8080").join(rel);
    String::from_utf8(std::fs::read(&path).unwrap_or_else(|e| panic!("{rel}: {e}"))).unwrap()
}

#[tokio::test]
async fn saves_decoded_bodies_and_resolves_clashes() {
    let dir = mirror(false).await;
    let d = dir.path();
    assert_eq!(
        read(d, "index.html"),
        INDEX,
        "no conversion without the option"
    );
    assert_eq!(
        read(d, "style.css"),
        "body{background:url(img.png)} @import '/sub/';"
    );
    assert_eq!(read(d, "a%3Fx=1&y=2.html"), "q");
    // `/data.json` was a file until `/data.json/more` needed the directory.
    assert_eq!(read(d, "data.json/index.json"), "{}");
    assert_eq!(read(d, "data.json/more.json"), "[]");
    for absent in ["missing.html", "old.html", "s"] {
        assert!(!d.join("127.0.0.1_8080").join(absent).exists(), "{absent}");
    }
}

#[tokio::test]
async fn convert_links_points_at_saved_files() {
    let dir = mirror(true).await;
    let d = dir.path();
    let index = read(d, "index.html");
    for want in [
        r#"href="style.css""#,
        r#"href="a.html">a<"#,
        r#"href="sub/index.html""#,
        r#"href="a.html#top""#,
        r#"href="https://elsewhere.example/x""#,
        r##"href="#frag""##,
        r#"href="a%253Fx=1%26y=2.html""#,
        r#"href="http://127.0.0.1:8080/missing""#,
        r#"src="img.png" srcset="img.png 1x, http://127.0.0.1:8080/big.png 2x""#,
        r#"href="data.json/index.json""#,
        r#"srcset="http://127.0.0.1:8080/v?a=1&amp;b=2 1x""#,
        r#"url("img.png")"#,
    ] {
        assert!(index.contains(want), "missing {want} in\n{index}");
    }
    assert!(read(d, "a.html").contains(r#"href="index.html""#));
    let sub = read(d, "sub/index.html");
    assert!(
        sub.contains(r#"href="../index.html""#) && sub.contains(r#"href="../style.css""#),
        "{sub}"
    );
    let css = read(d, "style.css");
    assert_eq!(
        css,
        r#"body{background:url("img.png")} @import "sub/index.html";"#
    );
}

#[tokio::test]
async fn base_href_is_honoured_then_removed() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = MirrorSink::create(
        dir.path(),
        MirrorOptions {
            convert_links: true,
            ..MirrorOptions::default()
        },
    )
    .unwrap();
    let html = br#"<head><base href="/docs/"></head><a href="p">p</a>"#;
    sink.record(&page(&format!("{H}/"), 200, HTML, "", html))
        .await
        .unwrap();
    sink.record(&page(&format!("{H}/docs/p"), 200, HTML, "", b"p"))
        .await
        .unwrap();
    sink.finish().await.unwrap();
    let index = read(dir.path(), "index.html");
    assert!(index.contains(r#"<a href="docs/p.html">"#), "{index}");
    assert!(!index.contains("/docs/\""), "{index}");
}

/// A recrawl's `304` (a revisit, empty body) leaves the saved copy alone.
#[tokio::test]
async fn a_304_never_overwrites_the_saved_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = MirrorSink::create(dir.path(), MirrorOptions::default()).unwrap();
    let url = format!("{H}/doc");
    sink.record(&page(&url, 200, HTML, "", b"<p>saved</p>"))
        .await
        .unwrap();
    let mut again = page(&url, 304, HTML, "etag: \"v1\"\r\n", b"");
    if let Some(ex) = again.exchange.as_mut() {
        ex.revisit = Some(skitter::fetch::Revisit {
            profile: skitter::fetch::RevisitProfile::ServerNotModified,
            refers_to_uri: Url::parse(&url).unwrap(),
            refers_to_date: chrono::Utc::now(),
            payload_sha1: None,
        });
    }
    sink.record(&again).await.unwrap();
    sink.finish().await.unwrap();
    assert_eq!(read(dir.path(), "doc.html"), "<p>saved</p>");
}

#[test]
fn create_fails_when_the_directory_cannot_be_made() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let err = MirrorSink::create(file.path().join("sub"), MirrorOptions::default())
        .err()
        .unwrap();
    assert_eq!(err.sink(), "mirror");
}
