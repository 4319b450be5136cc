//! One deadline for all of a URL's attempts: a server that accepts and never
//! answers, or trickles a byte every few seconds, costs a URL at most its
//! deadline (twice `--timeout` by default), not `--max-tries` × `--timeout`;
//! a URL that timed out twice is given up; a body slower than the minimum
//! transfer rate fails its attempt long before `--timeout`, and a slow but
//! steady one does not. On tokio's paused clock, against a server run on the
//! test's own runtime.

use std::time::Duration;

use skitter::base::outcome::{ErrorKind, OutcomeKind};
use skitter::fetch::FetchConfig;
use skitter::fetch::retry::RetryPolicy;
use skitter::{Crawler, Report};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// A server on 127.0.0.1:0: `/robots.txt` is 404, `/silent` is never
/// answered, `/trickle` sends its headers and then a byte every 2 s,
/// `/steady` sends 2,000 bytes as 200 every second.
async fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(answer(stream));
        }
    });
    origin
}

async fn answer(mut stream: TcpStream) {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    match path.as_str() {
        "/silent" => std::future::pending().await,
        "/trickle" => {
            let start =
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 100000\r\n\r\n";
            if stream.write_all(start.as_bytes()).await.is_err() {
                return;
            }
            loop {
                tokio::time::sleep(Duration::from_secs(2)).await;
                if stream.write_all(b"x").await.is_err() {
                    return;
                }
            }
        }
        "/steady" => {
            let start =
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2000\r\n\r\n";
            if stream.write_all(start.as_bytes()).await.is_err() {
                return;
            }
            for _ in 0..10 {
                tokio::time::sleep(Duration::from_secs(1)).await;
                if stream.write_all(&[b'x'; 200]).await.is_err() {
                    return;
                }
            }
            std::future::pending::<()>().await;
        }
        _ => {
            // Closed after the answer: this server reads one request per
            // connection, so a kept-alive one would leave the next unanswered.
            let reply = "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
            let _ = stream.write_all(reply.as_bytes()).await;
        }
    }
}

async fn crawl(roots: Vec<String>) -> Report {
    crawl_with(
        roots,
        FetchConfig {
            total_timeout: Duration::from_secs(10),
            // Longer than the timeout: the total timeout is what cuts both.
            read_timeout: Duration::from_secs(60),
            ..FetchConfig::default()
        },
    )
    .await
}

async fn crawl_with(roots: Vec<String>, fetch: FetchConfig) -> Report {
    Crawler::builder()
        .roots(roots)
        .retry_policy(RetryPolicy {
            max_tries: 4,
            ..RetryPolicy::default()
        })
        .fetch_config(fetch)
        .build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn silent_and_trickling_urls_end_at_their_deadline() {
    let origin = serve().await;
    let report = crawl(vec![
        format!("{origin}/silent"),
        format!("{origin}/trickle"),
    ])
    .await;
    let pages = report.pages.to_vec().unwrap();
    assert_eq!(pages.len(), 2, "{pages:?}");
    for page in &pages {
        let error = page.error.as_ref().expect("a failure");
        assert_eq!(page.kind, OutcomeKind::Failed, "{}", page.url);
        assert_eq!(error.kind, ErrorKind::Timeout, "{}", page.url);
        assert!(
            error.message.contains("deadline"),
            "{}: {}",
            page.url,
            error.message
        );
        // Twice --timeout by default: two attempts, not --max-tries (4).
        assert_eq!(page.attempts, 2, "{}", page.url);
    }
    assert_eq!(report.counters.url_deadline_exceeded, 2);
}

/// The default timeouts' shape (read timeout a quarter of the total): the
/// silent URL is cut by the read timeout, the trickling one by the minimum
/// rate, each twice and then given up, well inside the deadline.
#[tokio::test(start_paused = true)]
async fn a_url_that_timed_out_twice_is_given_up_and_a_trickle_is_too_slow() {
    let origin = serve().await;
    let report = crawl_with(
        vec![format!("{origin}/silent"), format!("{origin}/trickle")],
        FetchConfig {
            total_timeout: Duration::from_secs(120),
            read_timeout: Duration::from_secs(5),
            ..FetchConfig::default()
        },
    )
    .await;
    let pages = report.pages.to_vec().unwrap();
    assert_eq!(pages.len(), 2, "{pages:?}");
    for page in &pages {
        let error = page.error.as_ref().expect("a failure");
        assert_eq!(error.kind, ErrorKind::Timeout, "{}", page.url);
        assert!(
            error.message.contains("timed out 2 times"),
            "{}: {}",
            page.url,
            error.message
        );
        // Not --max-tries (4): a third wait would be as long as the first two.
        assert_eq!(page.attempts, 2, "{}", page.url);
    }
    let trickle = pages.iter().find(|p| p.url.path() == "/trickle").unwrap();
    let message = &trickle.error.as_ref().unwrap().message;
    assert!(message.contains("body too slow"), "{message}");
}

/// 200 bytes a second is slow but steady: above the default minimum rate
/// (100 bytes/s) in every window, so the page is fetched whole.
#[tokio::test(start_paused = true)]
async fn a_slow_but_steady_body_is_not_cut() {
    let origin = serve().await;
    let report = crawl_with(
        vec![format!("{origin}/steady")],
        FetchConfig {
            total_timeout: Duration::from_secs(120),
            read_timeout: Duration::from_secs(2),
            ..FetchConfig::default()
        },
    )
    .await;
    let pages = report.pages.to_vec().unwrap();
    assert_eq!(pages.len(), 1, "{pages:?}");
    assert_eq!(pages[0].kind, OutcomeKind::Other, "{:?}", pages[0].error);
    assert_eq!(pages[0].size, 2000);
    assert_eq!(pages[0].attempts, 1);
}

/// A timed-out URL waits as long as its attempt took before the next one (its
/// host's slot was held all that time), not the 100 ms back-off: the silent
/// URL's two 5 s attempts are 5 s apart, on the paused clock.
#[tokio::test(start_paused = true)]
async fn a_timed_out_url_waits_as_long_as_its_attempt_took() {
    let origin = serve().await;
    let began = tokio::time::Instant::now();
    let report = crawl_with(
        vec![format!("{origin}/silent")],
        FetchConfig {
            total_timeout: Duration::from_secs(120),
            read_timeout: Duration::from_secs(5),
            ..FetchConfig::default()
        },
    )
    .await;
    assert_eq!(report.pages.to_vec().unwrap()[0].attempts, 2);
    let took = began.elapsed();
    assert!(took >= Duration::from_secs(15), "{took:?}");
}
