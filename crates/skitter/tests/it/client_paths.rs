//! The two client paths fail alike. A plain-HTTP request with no proxy and no
//! cookie jar goes on hyper-util directly (`fetch::direct`); the same request
//! with a jar goes through reqwest. Against a raw server that misbehaves in
//! each way a crawler meets (no answer, a body that stops, one that trickles
//! past the total timeout, one cut short, a reset, a head that is not HTTP, a
//! port with nothing listening), both must give the same failure kind, and
//! the kind the crawl's retry rules expect.

use std::time::Duration;

use skitter::base::outcome::ErrorKind;
use skitter::fetch::{FetchConfig, Fetcher, Keep};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

/// Answers each request by its path; see the module header.
async fn misbehaving_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            tokio::spawn(serve(sock));
        }
    });
    origin
}

async fn serve(mut sock: TcpStream) {
    let Some(head) = crate::support::read_request_head(&mut sock).await else {
        return;
    };
    let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
    let html_head = |len: usize| {
        format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len}\r\n\r\n")
    };
    match path.as_str() {
        "/hang" => {
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
        "/stall" => {
            let _ = sock.write_all(html_head(1000).as_bytes()).await;
            let _ = sock.write_all(b"<html><p>part").await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
        "/trickle" => {
            let _ = sock.write_all(html_head(100_000).as_bytes()).await;
            for _ in 0..600 {
                if sock.write_all(&[b'x'; 64]).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        "/truncated" => {
            let _ = sock.write_all(html_head(1000).as_bytes()).await;
            let _ = sock.write_all(b"<html>").await;
        }
        "/reset" => {
            let _ = sock.set_zero_linger();
        }
        "/garbage" => {
            let _ = sock.write_all(b"HELLO THERE\r\n\r\n").await;
        }
        _ => {
            let _ = sock.write_all(html_head(6).as_bytes()).await;
            let _ = sock.write_all(b"<html>").await;
        }
    }
}

/// The failure kind of fetching `url` with the cookie jar on (reqwest) or off
/// (the direct path), or `None` for a success. The total timeout is `total`;
/// the read timeout is 300 ms. A fetch that is still waiting after 10 s
/// (when a timeout that should have fired did not) fails the test.
async fn kind(url: &str, origin: &str, cookies: bool, total: Duration) -> Option<ErrorKind> {
    let fetcher = Fetcher::new(FetchConfig {
        connect_timeout: Duration::from_secs(2),
        read_timeout: Duration::from_millis(300),
        total_timeout: total,
        // The trickle must meet the total timeout, not the rate floor.
        min_transfer_rate: 0,
        cookies,
        named_origins: vec![origin.to_owned()],
        ..FetchConfig::default()
    })
    .unwrap();
    let url = url::Url::parse(url).unwrap();
    let path = if cookies {
        "reqwest"
    } else {
        "the direct path"
    };
    tokio::time::timeout(Duration::from_secs(10), fetcher.get(&url, Keep::Html))
        .await
        .unwrap_or_else(|_| panic!("{url} on {path}: no timeout fired within 10 s"))
        .err()
        .map(|f| f.kind)
}

#[tokio::test]
async fn both_client_paths_fail_alike() {
    let origin = misbehaving_server().await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        drop(l);
        format!("http://127.0.0.1:{port}")
    };
    // A total timeout of a minute leaves the hang and the stall to the read
    // timeout (on the head, and between body reads); the trickle, never
    // silent for 300 ms, to the total timeout of 1.2 s.
    let (long, short) = (Duration::from_secs(60), Duration::from_millis(1200));
    let cases = [
        (format!("{origin}/"), long, None),
        (format!("{origin}/hang"), long, Some(ErrorKind::Timeout)),
        (format!("{origin}/stall"), long, Some(ErrorKind::Timeout)),
        (format!("{origin}/trickle"), short, Some(ErrorKind::Timeout)),
        (format!("{origin}/truncated"), long, Some(ErrorKind::Body)),
        (format!("{origin}/reset"), long, Some(ErrorKind::Body)),
        (format!("{origin}/garbage"), long, Some(ErrorKind::Protocol)),
        (format!("{closed}/"), long, Some(ErrorKind::Connect)),
    ];
    let runs = cases.iter().map(|(url, total, _)| {
        let origin = if url.starts_with(&origin) {
            &origin
        } else {
            &closed
        };
        async move {
            (
                kind(url, origin, false, *total).await,
                kind(url, origin, true, *total).await,
            )
        }
    });
    let got = futures_util::future::join_all(runs).await;
    for ((url, _, expected), (direct, reqwest)) in cases.iter().zip(got) {
        assert_eq!(direct, reqwest, "{url}: the direct path and reqwest differ");
        assert_eq!(direct, *expected, "{url}");
    }
}
