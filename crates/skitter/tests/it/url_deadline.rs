//! One deadline for all of a URL's attempts: a server that accepts and never
//! answers, or trickles a byte every few seconds, costs a URL at most its
//! deadline (twice `--timeout` by default), not `--max-tries` × `--timeout`.
//! On tokio's paused clock, against a server run on the test's own runtime.

use std::time::Duration;

use skitter::base::outcome::{ErrorKind, OutcomeKind};
use skitter::fetch::FetchConfig;
use skitter::fetch::retry::RetryPolicy;
use skitter::{Crawler, Report};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// A server on 127.0.0.1:0: `/robots.txt` is 404, `/silent` is never
/// answered, `/trickle` sends its headers and then a byte every 2 s.
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
        _ => {
            let reply = "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n";
            let _ = stream.write_all(reply.as_bytes()).await;
            // Held open, as a keep-alive connection would be.
            std::future::pending::<()>().await;
        }
    }
}

async fn crawl(roots: Vec<String>) -> Report {
    Crawler::builder()
        .roots(roots)
        .retry_policy(RetryPolicy {
            max_tries: 4,
            ..RetryPolicy::default()
        })
        .fetch_config(FetchConfig {
            total_timeout: Duration::from_secs(10),
            // Longer than the timeout: the total timeout is what cuts both.
            read_timeout: Duration::from_secs(60),
            ..FetchConfig::default()
        })
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
