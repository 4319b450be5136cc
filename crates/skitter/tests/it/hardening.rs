//! Regression tests for what a reading of the code found hostile servers could
//! do (the Hardening issue): each serves the input from a local server on port
//! 0 and checks the crawl survives it as documented.

use std::io::Write as _;
use std::time::Duration;

use flate2::Compression;
use flate2::write::GzEncoder;
use skitter::Crawler;
use skitter::base::outcome::{ErrorKind, OutcomeKind};
use skitter::fetch::decode::MAX_CODINGS;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// `data` gzipped `n` times, and the `Content-Encoding` that says so.
fn stacked(data: &[u8], n: usize) -> (Vec<u8>, String) {
    let mut body = data.to_vec();
    for _ in 0..n {
        body = gzip(&body);
    }
    (body, vec!["gzip"; n].join(", "))
}

/// One response: status 200, the type, an optional coding, the body.
fn response(kind: &str, coding: Option<&str>, body: &[u8]) -> Vec<u8> {
    let coding = coding.map_or(String::new(), |c| format!("Content-Encoding: {c}\r\n"));
    let mut out = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\n{coding}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

/// Serves a paginated listing linked only by `<link rel=next>` (`/p/1` …
/// `/p/5`), a page and a robots.txt with one coding past the cap, and a page
/// with exactly the cap's number of codings.
async fn hostile_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Some(head) = crate::support::read_request_head(&mut sock).await else {
                    return;
                };
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let html = "text/html";
                let resp = match path.as_str() {
                    "/robots.txt" => {
                        let (body, coding) =
                            stacked(b"User-agent: *\nDisallow: /p/\n", MAX_CODINGS + 1);
                        response("text/plain", Some(&coding), &body)
                    }
                    "/" => response(
                        html,
                        None,
                        b"<html><head><link rel=next href=/p/1></head>\
                          <body><a href=/stacked>s</a><a href=/five>f</a></body></html>",
                    ),
                    "/stacked" => {
                        let (body, coding) = stacked(b"<a href=/never-seen>x</a>", MAX_CODINGS + 1);
                        response(html, Some(&coding), &body)
                    }
                    "/five" => {
                        let (body, coding) = stacked(b"<a href=/from-five>x</a>", MAX_CODINGS);
                        response(html, Some(&coding), &body)
                    }
                    p if p.starts_with("/p/") => {
                        let n: u32 = p[3..].parse().unwrap_or(99);
                        let next = if n < 5 {
                            format!("<link rel=\"next\" href=\"/p/{}\">", n + 1)
                        } else {
                            String::new()
                        };
                        response(
                            html,
                            None,
                            format!("<html><head>{next}</head>page {n}</html>").as_bytes(),
                        )
                    }
                    _ => response(html, None, b"<html>leaf</html>"),
                };
                let _ = sock.write_all(&resp).await;
            });
        }
    });
    origin
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stacked_codings_past_the_cap_fail_their_page_and_rel_next_is_followed() {
    let origin = hostile_server().await;
    let run = Crawler::builder()
        .root(format!("{origin}/"))
        .build()
        .unwrap()
        .run(CancellationToken::new());
    let report = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the crawl ended")
        .unwrap();
    let page = |path: &str| {
        let url = format!("{origin}{path}");
        report
            .pages
            .iter()
            .map(Result::unwrap)
            .find(|p| p.url.as_str() == url)
            .unwrap_or_else(|| panic!("{url} not in the report"))
    };
    // robots.txt with one coding too many is a file without rules: /p/ is
    // crawled, and the chain of <link rel=next> is followed to its end.
    for n in 1..=5 {
        assert_eq!(page(&format!("/p/{n}")).kind, OutcomeKind::Html, "/p/{n}");
    }
    let stacked = page("/stacked");
    let error = stacked.error.as_ref().expect("a decode failure");
    assert_eq!(error.kind, ErrorKind::Decode, "{error:?}");
    assert!(
        error.message.contains("content codings stacked"),
        "{error:?}"
    );
    // Exactly the cap still decodes, and its links are read.
    assert_eq!(page("/five").kind, OutcomeKind::Html);
    page("/from-five");
    assert!(
        !report
            .pages
            .iter()
            .map(Result::unwrap)
            .any(|p| p.url.path() == "/never-seen"),
        "nothing of the refused body was read"
    );
}
