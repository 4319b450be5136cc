//! What goes on the wire: extra headers, the User-Agent, cookies, a proxy, and
//! resources mode's wider link discovery. A tiny raw HTTP server records each
//! request head, so the tests see exactly what skitter sent.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use skitter::fetch::FetchConfig;
use skitter::parse::links::ExtractMode;
use skitter::{Crawler, CrawlerBuilder};
use skitter_testsite::{SiteConfig, TestSite};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Serves `/` (setting a cookie, linking `/next`) and `/next`; records request heads.
async fn recording_server() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let Some(head) = crate::support::read_request_head(&mut sock).await else {
                    return;
                };
                let first = head.lines().next().unwrap_or("").to_string();
                seen.lock().unwrap().push(head);
                let (extra, body) = if first.contains("/next") {
                    ("", "<html>next</html>")
                } else if first.contains("/robots.txt") {
                    ("", "")
                } else {
                    (
                        "Set-Cookie: session=abc123; Path=/\r\n",
                        "<html><a href=\"/next\">n</a></html>",
                    )
                };
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(resp.as_bytes()).await;
            });
        }
    });
    (origin, heads)
}

async fn crawl(b: CrawlerBuilder) -> skitter::Report {
    b.ignore_robots(true)
        .build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap()
}

fn head_for<'a>(heads: &'a [String], path: &str) -> &'a str {
    heads
        .iter()
        .find(|h| h.lines().next().is_some_and(|l| l.contains(path)))
        .unwrap_or_else(|| panic!("no request for {path} in {heads:?}"))
}

#[tokio::test]
async fn headers_user_agent_and_cookies_are_sent() {
    let (origin, heads) = recording_server().await;
    let fetch = FetchConfig {
        user_agent: "skitter-test/9 (+http://example.invalid/bot)".into(),
        headers: vec![("X-Trace".into(), "42".into())],
        cookies: true,
        ..FetchConfig::default()
    };
    crawl(
        Crawler::builder()
            .root(format!("{origin}/"))
            .fetch_config(fetch),
    )
    .await;
    let heads = heads.lock().unwrap().clone();
    let root = head_for(&heads, "GET / ").to_ascii_lowercase();
    assert!(
        root.contains("user-agent: skitter-test/9 (+http://example.invalid/bot)"),
        "{root}"
    );
    assert!(root.contains("x-trace: 42"));
    assert!(root.contains("accept-encoding: gzip, deflate, br, zstd"));
    let next = head_for(&heads, "/next").to_ascii_lowercase();
    assert!(next.contains("cookie: session=abc123"), "{next}");
}

#[tokio::test]
async fn cookies_are_off_by_default() {
    let (origin, heads) = recording_server().await;
    crawl(Crawler::builder().root(format!("{origin}/"))).await;
    let heads = heads.lock().unwrap().clone();
    assert!(
        !head_for(&heads, "/next")
            .to_ascii_lowercase()
            .contains("cookie:")
    );
}

#[tokio::test]
async fn requests_go_through_the_proxy() {
    let (proxy, heads) = recording_server().await;
    let fetch = FetchConfig {
        proxy: Some(proxy),
        ..FetchConfig::default()
    };
    // The target does not exist: only the proxy can answer.
    let report = crawl(
        Crawler::builder()
            .root("http://target.invalid/")
            .fetch_config(fetch)
            .max_tries(1),
    )
    .await;
    let heads = heads.lock().unwrap().clone();
    assert!(
        heads
            .iter()
            .any(|h| h.starts_with("GET http://target.invalid/ HTTP/1.1")),
        "{heads:?}"
    );
    assert_eq!(report.pages.to_vec().unwrap()[0].status, Some(200));
}

#[tokio::test]
async fn resources_mode_fetches_page_requisites_and_css_imports() {
    let site = TestSite::start(SiteConfig {
        pages: 3,
        specials: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let fetch = FetchConfig {
        read_timeout: Duration::from_millis(300),
        total_timeout: Duration::from_secs(2),
        ..FetchConfig::default()
    };
    let base = || {
        Crawler::builder()
            .root(site.url("/"))
            .max_tries(1)
            .fetch_config(fetch.clone())
            .exclude("/hang|/slowbody")
    };
    crawl(base()).await;
    assert_eq!(
        site.stats().requests("/asset/style.css"),
        0,
        "pages mode follows a/area only"
    );
    let report = crawl(base().extract_mode(ExtractMode::Resources)).await;
    let stats = site.stats();
    assert_eq!(
        stats.requests("/asset/style.css"),
        1,
        "<link rel=stylesheet>"
    );
    assert_eq!(
        stats.requests("/asset/extra.css"),
        1,
        "@import inside the stylesheet"
    );
    assert!(
        stats.requests("/asset/logo.png") >= 1,
        "<img src> and CSS url()"
    );
    assert!(report.completed());
}

/// Credentials in a root URL go to its host as Basic auth, and never appear in
/// the report (or anything else that prints URLs).
#[tokio::test]
async fn root_credentials_are_sent_as_basic_auth_and_never_printed() {
    let (origin, heads) = recording_server().await;
    let root = origin.replacen("http://", "http://user:s3cret@", 1) + "/";
    let report = crawl(Crawler::builder().root(root)).await;
    let heads = heads.lock().unwrap().clone();
    assert_eq!(heads.len(), 2, "{heads:?}");
    for head in &heads {
        // base64("user:s3cret")
        assert!(
            head.to_ascii_lowercase()
                .contains("authorization: basic dxnlcjpzm2nyzxq="),
            "{head}"
        );
    }
    let text = report.to_text();
    assert!(
        !text.contains("s3cret") && !text.contains("user:"),
        "{text}"
    );
    assert!(!report.to_json().to_string().contains("s3cret"));
    assert_eq!(report.counters.html, 2);
}

/// A conditional fetch sends the validators a first fetch returned; the
/// server's `304` comes back as a response (no body), not as a failure.
#[tokio::test]
async fn a_conditional_fetch_sends_the_validators_and_takes_a_304() {
    use skitter::fetch::{Fetcher, Keep};
    use skitter_testsite::{ValidatorMode, Versions};
    let site = TestSite::start(SiteConfig {
        pages: 5,
        versions: Some(Versions {
            change: 0.0,
            validators: ValidatorMode::Honour,
            ..Versions::default()
        }),
        ..SiteConfig::default()
    })
    .unwrap();
    let fetcher = Fetcher::new(FetchConfig {
        private_access: skitter::fetch::PrivateAccess::Allow,
        ..FetchConfig::default()
    })
    .unwrap();
    let url = url::Url::parse(&site.url("/p/1")).unwrap();
    let first = fetcher.get(&url, Keep::Html).await.unwrap();
    assert_eq!(first.status, 200);
    let validators = first.validators();
    assert!(validators.etag.is_some() && validators.last_modified.is_some());
    let again = fetcher.get_if(&url, Keep::Html, &validators).await.unwrap();
    assert_eq!(again.status, 304);
    assert_eq!(again.size, 0);
    // The date alone revalidates too.
    let by_date = skitter::fetch::Validators {
        etag: None,
        ..validators
    };
    let again = fetcher.get_if(&url, Keep::Html, &by_date).await.unwrap();
    assert_eq!(again.status, 304);
    assert_eq!(site.stats().not_modified, 2);
}

/// A plain-HTTP request with no proxy and no cookie jar goes on the direct
/// path (hyper-util without reqwest, for memory); one with a jar goes through
/// reqwest. Both must put the same head on the wire, headers in the same
/// order (the user's, then `Accept`, `User-Agent`, `Accept-Encoding`, then
/// `Host`), and read the same response: status, headers, body, the peer's
/// address and the version for the archive.
#[tokio::test]
async fn the_direct_path_sends_and_reads_what_reqwest_does() {
    use skitter::fetch::{Fetcher, Keep, Validators};
    let (origin, heads) = recording_server().await;
    let url = url::Url::parse(&format!("{origin}/next")).unwrap();
    let validators = Validators {
        etag: Some("\"v1\"".into()),
        last_modified: None,
    };
    let mut got = Vec::new();
    for cookies in [false, true] {
        let fetcher = Fetcher::new(FetchConfig {
            user_agent: "skitter-test/9".into(),
            headers: vec![("X-Trace".into(), "42".into())],
            cookies,
            named_origins: vec![origin.clone()],
            ..FetchConfig::default()
        })
        .unwrap();
        let plain = fetcher.get(&url, Keep::Everything).await.unwrap();
        let conditional = fetcher
            .get_if(&url, Keep::Everything, &validators)
            .await
            .unwrap();
        let head = fetcher.head(&url).await.unwrap();
        got.push((plain, conditional, head));
    }
    let heads = heads.lock().unwrap().clone();
    assert_eq!(heads.len(), 6, "{heads:?}");
    let (direct, reqwest) = heads.split_at(3);
    assert_eq!(direct, reqwest, "the two paths' request heads differ");
    let names: Vec<&str> = direct[1]
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':').map(|(name, _)| name))
        .collect();
    assert_eq!(
        names,
        [
            "x-trace",
            "if-none-match",
            "accept",
            "user-agent",
            "accept-encoding",
            "host"
        ],
        "{}",
        direct[1]
    );
    assert!(
        direct[2].starts_with("HEAD /next HTTP/1.1\r\n"),
        "{}",
        direct[2]
    );
    let shown = |r: &skitter::fetch::Response| {
        let exchange = r.exchange.as_ref().map(|e| {
            (
                e.remote_addr,
                e.http_version,
                e.request_head.clone(),
                e.response_head.clone(),
            )
        });
        (
            r.status,
            r.headers.clone(),
            r.body.clone(),
            r.size,
            exchange,
        )
    };
    let (a, b) = (&got[0], &got[1]);
    assert_eq!(shown(&a.0), shown(&b.0));
    assert_eq!(shown(&a.1), shown(&b.1));
    assert_eq!(shown(&a.2), shown(&b.2));
    assert_eq!(a.0.body.as_deref(), Some(&b"<html>next</html>"[..]));
    assert!(a.0.exchange.as_ref().unwrap().remote_addr.is_some());
}
