//! The special cases: redirects, statuses, assets, odd bodies and traps.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

use hyper::StatusCode;
use skitter_testsite::{SPECIALS, SiteConfig, TestSite};

use crate::support::{get, h1, hrefs};

#[tokio::test]
async fn redirects_answer_with_their_codes_and_locations() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let client = h1();
    let cases = [
        ("/r/301", 301, Some("/p/1")),
        ("/r/302", 302, Some("/p/1")),
        ("/r/303", 303, Some("/p/1")),
        ("/r/307", 307, Some("/p/1")),
        ("/r/308", 308, Some("/p/1")),
        ("/r/chain/3", 302, Some("/r/chain/2")),
        ("/r/chain/1", 302, Some("/r/chain/0")),
        ("/r/chain/0", 302, Some("/p/2")),
        ("/r/chain/01", 404, None),
        ("/r/loop/a", 302, Some("/r/loop/b")),
        ("/r/loop/b", 302, Some("/r/loop/a")),
        ("/r/nolocation", 302, None),
        ("/r/badlocation", 302, Some("http://[bad/")),
        ("/r/offsite", 302, Some("http://offsite.invalid/")),
        ("/r/other", 404, None),
    ];
    for (path, code, location) in cases {
        let got = get(&client, &site.url(path)).await;
        assert_eq!(
            (got.status.as_u16(), got.header("location")),
            (code, location),
            "{path}"
        );
    }
    site.shutdown().await;
}

#[tokio::test]
async fn statuses_and_first_request_failures() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let client = h1();
    let cases = [
        ("/missing", 404),
        ("/gone", 410),
        ("/error", 500),
        ("/error", 500),
        ("/flaky", 503),
        ("/flaky", 200),
        ("/flaky", 200),
        ("/ratelimited", 429),
        ("/ratelimited", 200),
    ];
    for (path, code) in cases {
        let got = get(&client, &site.url(path)).await;
        assert_eq!(got.status.as_u16(), code, "{path}");
        let retry_after = if code == 429 { Some("1") } else { None };
        assert_eq!(got.header("retry-after"), retry_after, "{path}");
    }
    site.shutdown().await;
}

#[tokio::test]
async fn assets_and_odd_encodings() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let client = h1();
    let png = get(&client, &site.url("/asset/logo.png")).await;
    assert_eq!(png.header("content-type"), Some("image/png"));
    assert!(png.body.starts_with(b"\x89PNG\r\n\x1a\n"));
    let big = get(&client, &site.url("/asset/big.bin")).await;
    assert_eq!(big.header("content-type"), Some("application/octet-stream"));
    assert_eq!(big.header("content-length"), Some("5242880"));
    assert_eq!(big.body.len(), 5 * 1024 * 1024);
    let css = get(&client, &site.url("/asset/style.css")).await.text();
    assert!(css.contains("url(/asset/logo.png)") && css.contains("@import \"/asset/extra.css\""));
    assert_eq!(
        get(&client, &site.url("/asset/extra.css")).await.status,
        StatusCode::OK
    );
    let bad = get(&client, &site.url("/badutf8")).await;
    assert!(std::str::from_utf8(&bad.body).is_err());
    assert!(hrefs(&bad.text()).contains(&"/p/3".to_string()));
    let latin1 = get(&client, &site.url("/latin1")).await;
    assert_eq!(
        latin1.header("content-type"),
        Some("text/html; charset=iso-8859-1")
    );
    assert!(latin1.body.windows(4).any(|w| w == b"Caf\xe9"));
    let untyped = get(&client, &site.url("/nocontenttype")).await;
    assert_eq!(
        (untyped.status, untyped.header("content-type")),
        (StatusCode::OK, None)
    );
    site.shutdown().await;
}

#[tokio::test]
async fn link_pages_list_what_a_crawler_must_sort_out() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let client = h1();
    let specials = get(&client, &site.url("/specials")).await.text();
    for path in SPECIALS {
        assert!(
            specials.contains(&format!("=\"{path}\"")),
            "{path} not linked"
        );
    }
    let malformed = hrefs(&get(&client, &site.url("/links/malformed")).await.text());
    assert_eq!(malformed.len(), 6);
    assert!(
        malformed.contains(&"http://[bad/".to_string()) && malformed.contains(&"/p/4".to_string())
    );
    let offsite = hrefs(&get(&client, &site.url("/offsite")).await.text());
    assert_eq!(
        offsite,
        ["http://offsite.invalid/x", "https://other.invalid/"]
    );
    let cal = hrefs(&get(&client, &site.url("/cal/2024/12")).await.text());
    assert_eq!(cal, ["/cal/2024/11", "/cal/2025/1", "/"]);
    let deeper = hrefs(&get(&client, &site.url("/loop/a/a/")).await.text());
    assert_eq!(deeper, ["a/", "/"]);
    let session = hrefs(&get(&client, &site.url("/session?sid=7")).await.text());
    assert_eq!(session, ["/session?sid=8", "/"]);
    site.shutdown().await;
}

#[tokio::test]
async fn truncated_sends_ten_of_a_thousand_bytes_then_closes() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let addr = site.addr();
    let raw = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .write_all(b"GET /truncated HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        raw
    })
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").expect("no header end");
    assert!(
        head.to_ascii_lowercase().contains("content-length: 1000"),
        "{head}"
    );
    assert_eq!(body, "<!DOCTYPE ");
    site.shutdown().await;
}

#[test]
fn binary_prints_its_url_and_exits_when_stdin_closes() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skitter-testsite"))
        .args(["--pages", "3", "--page-size", "100"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    let url = String::from_utf8(line).unwrap();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with('/'),
        "{url}"
    );
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let mut stream = TcpStream::connect(&addr).unwrap();
    stream
        .write_all(b"GET /p/2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("<h1>Page 2</h1>"));
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
}

#[tokio::test]
async fn hostile_pages_have_the_sizes_their_paths_name() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let client = h1();
    let body = |path: &'static str| {
        let (client, url) = (&client, site.url(path));
        async move { get(client, &url).await }
    };
    let noscript = body("/hostile/noscript/64").await;
    assert!(noscript.body.len() >= 64 * 1024);
    assert_eq!(hrefs(&noscript.text()), ["/hostile/leaf/0"]);
    let links = body("/hostile/links/300").await;
    let found = hrefs(&links.text());
    assert_eq!(found.len(), 300);
    assert_eq!(found[299], "/hostile/leaf/299");
    let big = body("/hostile/big/100").await;
    assert!(big.body.len() <= 100 * 1024 && big.body.len() > 99 * 1024);
    assert_eq!(hrefs(&big.text()), ["/hostile/leaf/0", "/hostile/leaf/1"]);
    let attr = body("/hostile/attr/8").await;
    assert!(attr.body.len() > 16 * 1024);
    let bomb = body("/hostile/gzipbomb/4").await;
    assert_eq!(bomb.header("content-encoding"), Some("gzip"));
    let mut inflated = Vec::new();
    flate2::read::MultiGzDecoder::new(&bomb.body[..])
        .read_to_end(&mut inflated)
        .unwrap();
    assert_eq!(inflated.len(), 4 << 20);
    assert!(bomb.body.len() < 64 * 1024, "{}", bomb.body.len());
    let stacked = body("/hostile/stacked/3").await;
    assert_eq!(stacked.header("content-encoding"), Some("gzip, gzip, gzip"));
    let mut layer = stacked.body.to_vec();
    for _ in 0..3 {
        let mut inflated = Vec::new();
        flate2::read::GzDecoder::new(&layer[..])
            .read_to_end(&mut inflated)
            .unwrap();
        layer = inflated;
    }
    assert_eq!(layer.len(), 1 << 20);
    assert!(stacked.body.len() > 1 << 20, "stored, not compressed");
    let page = body("/hostile/linkpage/2").await;
    let found = hrefs(&page.text());
    assert_eq!(
        (found.len(), found[0].as_str()),
        (1000, "/hostile/leaf/2000")
    );
    let index = body("/hostile/sitemapindex/7").await;
    assert!(index.text().contains("<loc>/hostile/sitemapindex/8</loc>"));
    assert_eq!(
        body("/hostile/links/99999999").await.status,
        StatusCode::NOT_FOUND
    );
}

/// `/hostile/trickle/1` sends its head, then one space a second and never
/// ends: the test reads the head and one space after it, then hangs up.
#[tokio::test]
async fn the_trickle_sends_a_byte_at_a_time_without_end() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let mut stream = tokio::net::TcpStream::connect(site.addr()).await.unwrap();
    stream
        .write_all(b"GET /hostile/trickle/1 HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let head = b"<p>Trickle";
    while !got.windows(head.len()).any(|w| w == head) {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(
        text.contains("transfer-encoding: chunked"),
        "no end announced: {text}"
    );
    // The next read is one chunk holding a single space.
    let n = stream.read(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"1\r\n \r\n");
}
