//! Safe to point at the open internet: where requests may go (the address
//! policy, on literal addresses and on what names resolve to), robots.txt
//! redirects held to the crawl's scope, and the user's headers kept for the
//! hosts they were meant for.
//!
//! Only loopback is ever contacted. Link-local targets are refused before any
//! connection (the tests would otherwise hang on the connect timeout, not
//! pass); "another host" is a second server on 127.0.0.2, which Linux routes
//! to loopback, or the name `localhost`.

use std::sync::{Arc, Mutex};

use skitter::base::outcome::ErrorKind;
use skitter::bulk::{self, BulkFetcher, ItemReport, Outcome};
use skitter::fetch::{FetchConfig, Fetcher, Keep, PrivateAccess};
use skitter::{Crawler, CrawlerBuilder};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

type Heads = Arc<Mutex<Vec<String>>>;

/// A server on `ip` answering each path with `reply(path, own origin)` (a whole
/// HTTP response) and recording every request head.
async fn serve(ip: &str, reply: fn(&str, &str) -> String) -> (String, Heads) {
    let listener = TcpListener::bind((ip, 0)).await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let heads: Heads = Arc::default();
    let (seen, own) = (heads.clone(), origin.clone());
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let (seen, own) = (seen.clone(), own.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                    // A TLS handshake (an `https` URL on this plain server)
                    // fails at once rather than waiting for a head.
                    if buf.first() == Some(&0x16) {
                        return;
                    }
                }
                let head = String::from_utf8_lossy(&buf).into_owned();
                let path = head.split(' ').nth(1).unwrap_or("/").to_string();
                seen.lock().unwrap().push(head);
                let _ = sock.write_all(reply(&path, &own).as_bytes()).await;
            });
        }
    });
    (origin, heads)
}

fn ok(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn found(location: &str) -> String {
    format!(
        "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
}

/// The site on 127.0.0.2 (the "other host"): every path is a page.
fn other_site(_path: &str, _own: &str) -> String {
    ok("<html>secret</html>")
}

/// What became of one fetched item.
#[derive(Debug)]
struct Got {
    url: Option<String>,
    failure: Option<ErrorKind>,
    status: Option<u16>,
    final_url: Option<String>,
}

impl Got {
    fn of(item: &ItemReport) -> Got {
        let (failure, status) = match &item.outcome {
            Outcome::Failed(f) => (Some(f.kind), None),
            Outcome::Ok { status } => (None, Some(*status)),
            _ => (None, None),
        };
        let final_url = item.final_url.as_ref().map(|u| u.to_string());
        Got {
            url: item.url.as_ref().map(|u| u.to_string()),
            failure,
            status,
            final_url,
        }
    }
}

async fn fetch_one(fetch: FetchConfig, url: &str) -> Got {
    let items: Arc<Mutex<Vec<Got>>> = Arc::default();
    let seen = items.clone();
    let fetcher = BulkFetcher::builder()
        .fetch_config(fetch)
        .on_item(move |item| seen.lock().unwrap().push(Got::of(item)))
        .build()
        .unwrap();
    let urls = bulk::from_args(vec![url.to_string()], false);
    fetcher.run(urls, CancellationToken::new()).await;
    let mut items = items.lock().unwrap();
    assert_eq!(items.len(), 1, "{items:?}");
    items.remove(0)
}

fn allow_private() -> FetchConfig {
    FetchConfig {
        private_access: PrivateAccess::Allow,
        ..FetchConfig::default()
    }
}

#[tokio::test]
async fn link_local_and_metadata_literals_are_refused_before_connecting() {
    // Even with every private range allowed and the host named.
    let fetcher = Fetcher::new(FetchConfig {
        private_access: PrivateAccess::Allow,
        named_hosts: vec!["169.254.169.254".into()],
        ..FetchConfig::default()
    })
    .unwrap();
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/",
        "http://[::ffff:169.254.169.254]/",
        "http://100.100.100.200/latest/meta-data/",
        "http://[fd00:ec2::254]/",
    ] {
        let url = url::Url::parse(url).unwrap();
        let failure = fetcher.get(&url, Keep::Body).await.unwrap_err();
        assert_eq!(
            failure.kind,
            ErrorKind::Blocked,
            "{url}: {}",
            failure.message
        );
    }
}

#[tokio::test]
async fn a_redirect_to_cloud_metadata_is_blocked() {
    let (origin, _) = serve("127.0.0.1", |_, _| {
        found("http://169.254.169.254/latest/meta-data/")
    })
    .await;
    let item = fetch_one(allow_private(), &format!("{origin}/go")).await;
    assert_eq!(item.failure, Some(ErrorKind::Blocked), "{item:?}");
    assert_eq!(
        item.final_url.as_deref(),
        Some("http://169.254.169.254/latest/meta-data/")
    );
}

/// `/other` redirects to the server on 127.0.0.2, `/name` to this server by the
/// name `localhost`, `/self` to `/page` here; `/page` is a page.
fn redirector(path: &str, own: &str) -> String {
    match path {
        p if p.starts_with("/other") => found(&format!("http://{}/page", &p["/other=".len()..])),
        "/name" => found(&own.replace("127.0.0.1", "localhost")),
        "/self" => found("/page"),
        _ => ok("<html>page</html>"),
    }
}

#[tokio::test]
async fn private_addresses_are_only_for_named_hosts_by_default() {
    let (other, other_heads) = serve("127.0.0.2", other_site).await;
    let (origin, _) = serve("127.0.0.1", redirector).await;
    let to_other = format!("{origin}/other={}", other.trim_start_matches("http://"));

    // Default: the named host (127.0.0.1) is reachable, a redirect elsewhere
    // into a private range is not: a literal address, and a name (checked on
    // what it resolves to).
    let item = fetch_one(FetchConfig::default(), &format!("{origin}/self")).await;
    assert!(item.status == Some(200), "{item:?}");
    let item = fetch_one(FetchConfig::default(), &to_other).await;
    assert_eq!(item.failure, Some(ErrorKind::Blocked), "{item:?}");
    let item = fetch_one(FetchConfig::default(), &format!("{origin}/name")).await;
    assert_eq!(item.failure, Some(ErrorKind::Blocked), "{item:?}");
    assert!(other_heads.lock().unwrap().is_empty());

    // --allow-private: both followed.
    let item = fetch_one(allow_private(), &to_other).await;
    assert!(item.status == Some(200), "{item:?}");
    let item = fetch_one(allow_private(), &format!("{origin}/name")).await;
    assert!(item.status == Some(200), "{item:?}");

    // --deny-private: not even the named host.
    let deny = FetchConfig {
        private_access: PrivateAccess::Deny,
        ..FetchConfig::default()
    };
    let item = fetch_one(deny, &format!("{origin}/self")).await;
    assert_eq!(item.failure, Some(ErrorKind::Blocked), "{item:?}");
}

#[tokio::test]
async fn headers_stay_with_their_host() {
    let (other, other_heads) = serve("127.0.0.2", other_site).await;
    let (origin, heads) = serve("127.0.0.1", redirector).await;
    let to_other = format!("{origin}/other={}", other.trim_start_matches("http://"));
    let with_token = |everywhere: bool| FetchConfig {
        headers: vec![("Authorization".into(), "Bearer S3CRET".into())],
        headers_everywhere: everywhere,
        ..allow_private()
    };
    let has_token = |h: &String| {
        h.to_ascii_lowercase()
            .contains("authorization: bearer s3cret")
    };

    let item = fetch_one(with_token(false), &to_other).await;
    assert!(item.status == Some(200), "{item:?}");
    assert!(heads.lock().unwrap().iter().all(has_token));
    let sent_away = other_heads.lock().unwrap().clone();
    assert_eq!(sent_away.len(), 1);
    assert!(!has_token(&sent_away[0]), "{sent_away:?}");

    // A redirect on the same host keeps them.
    heads.lock().unwrap().clear();
    fetch_one(with_token(false), &format!("{origin}/self")).await;
    let here = heads.lock().unwrap().clone();
    assert_eq!(here.len(), 2);
    assert!(here.iter().all(has_token), "{here:?}");

    // --send-headers-everywhere.
    other_heads.lock().unwrap().clear();
    fetch_one(with_token(true), &to_other).await;
    assert!(other_heads.lock().unwrap().iter().all(has_token));
}

/// An input URL's own `user:pass@` is sent as Basic auth to its host only
/// (not across a redirect to another host) and never printed with the URL.
#[tokio::test]
async fn input_url_credentials_go_to_their_host_only_and_are_never_printed() {
    let (other, other_heads) = serve("127.0.0.2", other_site).await;
    let (origin, heads) = serve("127.0.0.1", redirector).await;
    let with_creds = origin.replacen("http://", "http://user:S3CRET@", 1);
    // base64("user:S3CRET")
    let has_auth = |h: &String| {
        h.lines().any(|l| {
            l.to_ascii_lowercase().starts_with("authorization:")
                && l.ends_with("Basic dXNlcjpTM0NSRVQ=")
        })
    };

    let item = fetch_one(
        allow_private(),
        &format!("{with_creds}/other={}", other.trim_start_matches("http://")),
    )
    .await;
    assert_eq!(item.status, Some(200), "{item:?}");
    let printed = format!("{:?} {:?}", item.url, item.final_url);
    assert!(
        !printed.contains("S3CRET") && !printed.contains("user@"),
        "{printed}"
    );
    assert!(heads.lock().unwrap().iter().all(has_auth));
    let sent_away = other_heads.lock().unwrap().clone();
    assert_eq!(sent_away.len(), 1);
    assert!(!sent_away[0].contains("S3CRET") && !has_auth(&sent_away[0]));
    assert!(!sent_away[0].to_ascii_lowercase().contains("authorization"));

    // Within the host, redirects keep them.
    heads.lock().unwrap().clear();
    fetch_one(allow_private(), &format!("{with_creds}/self")).await;
    let here = heads.lock().unwrap().clone();
    assert_eq!(here.len(), 2);
    assert!(here.iter().all(has_auth), "{here:?}");
}

/// Every `-H` value is redacted in archived request heads unless kept:
/// `--keep-credentials` for the credential headers, `--archive-header NAME`
/// for any one; what went on the wire is unchanged.
#[tokio::test]
async fn archived_request_heads_redact_user_headers() {
    let (origin, heads) = serve("127.0.0.1", redirector).await;
    let config = |keep: bool, archived: &[&str]| FetchConfig {
        headers: vec![
            ("Authorization".into(), "Bearer S3CRET".into()),
            ("Cookie".into(), "sid=S3CRET".into()),
            ("X-Api-Key".into(), "K3Y".into()),
            ("PRIVATE-TOKEN".into(), "T0KEN".into()),
        ],
        keep_credentials: keep,
        archive_headers: archived.iter().map(|s| s.to_string()).collect(),
        named_origins: vec![origin.clone()],
        ..allow_private()
    };
    let url = url::Url::parse(&format!("{origin}/page")).unwrap();
    // (--keep-credentials, --archive-header, shown, hidden)
    type Case<'a> = (bool, &'a [&'a str], &'a [&'a str], &'a [&'a str]);
    let cases: &[Case] = &[
        (false, &[], &[], &["S3CRET", "K3Y", "T0KEN"]),
        (
            true,
            &[],
            &["Bearer S3CRET", "sid=S3CRET"],
            &["K3Y", "T0KEN"],
        ),
        (
            false,
            &["x-api-key"],
            &["X-Api-Key: K3Y"],
            &["S3CRET", "T0KEN"],
        ),
    ];
    for (keep, archived, shown, hidden) in cases {
        let fetcher = Fetcher::new(config(*keep, archived)).unwrap();
        let resp = fetcher.get(&url, Keep::Everything).await.unwrap();
        let head = String::from_utf8(resp.exchange.unwrap().request_head.to_vec()).unwrap();
        for secret in *hidden {
            assert!(!head.contains(secret), "{secret}: {head}");
        }
        for value in *shown {
            assert!(head.contains(value), "{value}: {head}");
        }
        assert!(head.contains("PRIVATE-TOKEN: [redacted]\r\n"), "{head}");
        let sent = heads.lock().unwrap().pop().unwrap();
        assert!(sent.contains("K3Y") && sent.contains("T0KEN"), "{sent}");
    }
}

/// `/` links to `/page` on this server by another name (`localhost`), and
/// to `/here` under its own.
fn two_names(path: &str, own: &str) -> String {
    match path {
        "/" => ok(&format!(
            "<a href=\"{}/page\">a</a><a href=\"/here\">b</a>",
            own.replace("127.0.0.1", "localhost")
        )),
        _ => ok("<html>page</html>"),
    }
}

/// A crawl spanning hosts sends the user's headers to its roots' origins
/// only, unless they are sent everywhere.
#[tokio::test]
async fn a_crawl_keeps_headers_to_its_roots_origins() {
    let (origin, heads) = serve("127.0.0.1", two_names).await;
    let has_token = |h: &str| h.to_ascii_lowercase().contains("x-api-key: s3cret");
    for everywhere in [false, true] {
        heads.lock().unwrap().clear();
        let report = run(crawl(&format!("{origin}/"))
            .scope_mode(skitter::base::scope::ScopeMode::AnyHost)
            .ignore_robots(true)
            .fetch_config(FetchConfig {
                headers: vec![("X-Api-Key".into(), "S3CRET".into())],
                headers_everywhere: everywhere,
                ..allow_private()
            }))
        .await;
        assert!(report.completed(), "{}", report.to_text());
        let here = heads.lock().unwrap().clone();
        let to = |host: &str, path: &str| {
            here.iter()
                .find(|h| {
                    h.starts_with(&format!("GET {path} "))
                        && h.to_ascii_lowercase().contains(&format!("host: {host}"))
                })
                .unwrap_or_else(|| panic!("no {host}{path} in {here:?}"))
                .clone()
        };
        assert!(has_token(&to("127.0.0.1", "/")), "{here:?}");
        assert!(has_token(&to("127.0.0.1", "/here")), "{here:?}");
        assert_eq!(has_token(&to("localhost", "/page")), everywhere, "{here:?}");
    }
}

/// An `https` root's `user:pass@` is bound to its origin: an `http` root on
/// the same host and port does not get it.
#[tokio::test]
async fn root_credentials_do_not_cross_schemes() {
    let (origin, heads) = serve("127.0.0.1", redirector).await;
    let https = origin.replacen("http://", "https://user:S3CRET@", 1);
    let report = run(Crawler::builder()
        .root(format!("{https}/self"))
        .root(format!("{origin}/page"))
        .ignore_robots(true)
        .fetch_config(allow_private()))
    .await;
    assert!(report.completed(), "{}", report.to_text());
    let here = heads.lock().unwrap().clone();
    assert!(here.iter().any(|h| h.starts_with("GET /page ")), "{here:?}");
    assert!(
        !here
            .iter()
            .any(|h| h.to_ascii_lowercase().contains("authorization")),
        "{here:?}"
    );
}

/// `/` sets a cookie for all of `co.uk` and links to a page of another
/// `co.uk` site (on this server, by `--resolve`).
fn cookie_planter(path: &str, own: &str) -> String {
    match path {
        "/" => {
            let body = format!(
                "<a href=\"{}/page\">b</a>",
                own.replace("127.0.0.1", "b.other.co.uk")
            );
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nSet-Cookie: planted=1; Domain=co.uk; Path=/\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
        }
        _ => ok("<html>page</html>"),
    }
}

/// A cookie set for a public suffix is refused: the crawl's next site under
/// that suffix does not get it.
#[tokio::test]
async fn a_cookie_for_a_public_suffix_reaches_no_other_site() {
    let (origin, heads) = serve("127.0.0.1", cookie_planter).await;
    let ip = std::net::IpAddr::from([127, 0, 0, 1]);
    let report = run(crawl(&origin.replace("127.0.0.1", "a.example.co.uk"))
        .scope_mode(skitter::base::scope::ScopeMode::AnyHost)
        .ignore_robots(true)
        .fetch_config(FetchConfig {
            cookies: true,
            dns: skitter::fetch::dns::DnsConfig {
                overrides: vec![("a.example.co.uk".into(), ip), ("b.other.co.uk".into(), ip)],
                ..skitter::fetch::dns::DnsConfig::default()
            },
            ..FetchConfig::default()
        }))
    .await;
    assert!(report.completed(), "{}", report.to_text());
    let here = heads.lock().unwrap().clone();
    let page = here
        .iter()
        .find(|h| h.starts_with("GET /page "))
        .unwrap_or_else(|| panic!("{here:?}"));
    assert!(
        page.to_ascii_lowercase().contains("host: b.other.co.uk"),
        "{page}"
    );
    assert!(!page.contains("planted"), "{page}");
}

/// `/link=URL` is a page linking to `URL`.
fn linker(path: &str, _own: &str) -> String {
    match path.strip_prefix("/link=") {
        Some(to) => ok(&format!("<a href=\"{to}\">x</a>")),
        None => ok("<html>page</html>"),
    }
}

/// A named root's private address is allowed on its own port only: a page
/// of `127.0.0.1:P` cannot lead the crawler to another service on
/// `127.0.0.1:Q`.
#[tokio::test]
async fn a_named_host_is_named_on_its_own_port_only() {
    let (other, other_heads) = serve("127.0.0.1", other_site).await;
    let (origin, _) = serve("127.0.0.1", linker).await;
    let report = run(crawl(&format!("{origin}/link={other}/admin"))
        .scope_mode(skitter::base::scope::ScopeMode::AnyHost)
        .ignore_robots(true))
    .await;
    let text = report.to_text();
    assert!(report.completed(), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains("/admin") && l.contains("error blocked")),
        "{text}"
    );
    assert!(other_heads.lock().unwrap().is_empty());
}

fn crawl(root: &str) -> CrawlerBuilder {
    Crawler::builder().root(root).max_tasks(2)
}

/// Runs a crawl to its end.
async fn run(crawl: CrawlerBuilder) -> skitter::Report {
    crawl
        .build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap()
}

/// robots.txt redirects to [`TARGET`]; every other path is a page.
fn robots_redirector(path: &str, _own: &str) -> String {
    match path {
        "/robots.txt" => found(TARGET.lock().unwrap().as_str()),
        _ => ok("<html>page</html>"),
    }
}

/// Where robots.txt redirects to (one test uses it).
static TARGET: Mutex<String> = Mutex::new(String::new());

#[tokio::test]
async fn robots_redirects_stay_in_scope() {
    let (other, other_heads) = serve("127.0.0.2", other_site).await;
    let (origin, heads) = serve("127.0.0.1", robots_redirector).await;
    for target in [
        format!("{other}/robots.txt"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
    ] {
        *TARGET.lock().unwrap() = target.clone();
        heads.lock().unwrap().clear();
        let report = run(crawl(&format!("{origin}/")).fetch_config(FetchConfig {
            headers: vec![("Authorization".into(), "Bearer S3CRET".into())],
            ..allow_private()
        }))
        .await;
        assert!(report.completed(), "{target}");
        // Never followed: the file counts as missing, and the page is crawled.
        let here = heads.lock().unwrap().clone();
        assert!(
            here.iter().any(|h| h.starts_with("GET / ")),
            "{target}: {here:?}"
        );
        assert!(other_heads.lock().unwrap().is_empty(), "{target}");
    }
}

#[tokio::test]
async fn a_crawl_reaches_its_loopback_roots_unless_denied() {
    let (origin, heads) = serve("127.0.0.1", redirector).await;
    let run = |access: PrivateAccess| {
        crawl(&format!("{origin}/page"))
            .fetch_config(FetchConfig {
                private_access: access,
                ..FetchConfig::default()
            })
            .build()
            .unwrap()
            .run(CancellationToken::new())
    };
    let report = run(PrivateAccess::Named).await.unwrap();
    assert!(
        report.to_text().contains("/page 200"),
        "{}",
        report.to_text()
    );
    let seen = heads.lock().unwrap().len();
    assert!(seen >= 2, "robots.txt and the page");

    // Denied: a recorded failure, and nothing sent (robots.txt included).
    let report = run(PrivateAccess::Deny).await.unwrap();
    let text = report.to_text();
    assert!(
        text.contains("/page error blocked: 127.0.0.1 is a loopback"),
        "{text}"
    );
    assert_eq!(heads.lock().unwrap().len(), seen);
}

/// The site for the rebinding test: `/` links to two pages of `flip.test` on
/// the same port, and robots.txt disallows them.
fn rebinding_site(path: &str, own: &str) -> String {
    match path {
        "/robots.txt" => ok("User-agent: *\nDisallow: /private\n"),
        "/" => {
            let other = own.replace("127.0.0.1", "flip.test");
            ok(&format!(
                "<a href=\"{other}/private/a\">a</a><a href=\"{other}/private/b\">b</a>"
            ))
        }
        _ => ok("<html>private</html>"),
    }
}

/// robots.txt could not be asked for because the name's first answer was an
/// address the policy refuses; its next answers (with no time to live) are the
/// server's, whose robots.txt disallows the pages. Rules that were never
/// fetched must not let a page through, nor be kept for the host's next URL.
#[tokio::test]
async fn a_host_robots_txt_could_not_reach_gets_no_page_request() {
    use skitter_testsite::dns::{Record, Reply, Responder};
    let (origin, heads) = serve("127.0.0.1", rebinding_site).await;
    let dns = Responder::builder()
        .name(
            "flip.test",
            Reply::Records(vec![Record::A([127, 0, 0, 1].into())]),
        )
        .first(
            "flip.test",
            1,
            Reply::Records(vec![Record::A([169, 254, 0, 1].into())]),
        )
        .ttl(0)
        .bind()
        .await
        .unwrap();
    // One request at a time to the host, so its second page comes after
    // the first one's lookup: the case is the host's next URL.
    let report = run(crawl(&format!("{origin}/"))
        .scope_mode(skitter::base::scope::ScopeMode::AnyHost)
        .per_host(1)
        .fetch_config(FetchConfig {
            dns: skitter::fetch::dns::DnsConfig {
                servers: Some(vec![dns.addr()]),
                ..skitter::fetch::dns::DnsConfig::default()
            },
            ..allow_private()
        }))
    .await;
    let text = report.to_text();
    assert!(report.completed(), "{text}");
    assert!(
        dns.stats().per_name.get("flip.test").copied().unwrap_or(0) >= 2,
        "the name was asked for again: {:?}",
        dns.stats()
    );
    let here = heads.lock().unwrap().clone();
    let paths: Vec<&str> = here.iter().filter_map(|h| h.split(' ').nth(1)).collect();
    assert!(
        !paths.iter().any(|p| p.starts_with("/private")),
        "{paths:?}\n{text}"
    );
    // Each page either failed as its own fetch would have (the refused
    // address) or was skipped under the rules fetched once the name answered.
    for page in ["/private/a", "/private/b"] {
        let line = text.lines().find(|l| l.contains(page)).unwrap_or_default();
        assert!(
            line.contains("error blocked") || line.contains("robots"),
            "{page}: {line}\n{text}"
        );
    }
}
