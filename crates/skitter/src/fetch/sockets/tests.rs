use std::sync::Arc;

use futures_util::{StreamExt, stream};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;

use super::{Sockets, key_of, key_of_debug};
use crate::fetch::{FetchConfig, Fetcher, Keep, PrivateAccess};

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

#[test]
fn keys_name_scheme_host_and_port() {
    let cases = [
        ("http://a.test/x?y", "http://a.test:80"),
        ("https://A.test:8443/", "https://a.test:8443"),
        ("http://[::1]:81/", "http://[::1]:81"),
    ];
    for (given, want) in cases {
        assert_eq!(key_of(&url(given)), want, "{given}");
    }
    // What reqwest hands a connector layer, printed.
    struct Shown(&'static str);
    impl std::fmt::Debug for Shown {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "Unnameable({})", self.0)
        }
    }
    assert_eq!(key_of_debug(&Shown("http://a.test/")), "http://a.test:80");
    assert_eq!(
        key_of_debug(&Shown("https://b.test:444/")),
        "https://b.test:444"
    );
}

#[tokio::test]
async fn a_full_cap_closes_the_host_idle_longest_never_a_busy_one() {
    let sockets = Sockets::new(2);
    let idle = sockets.register("http://a.test:80".into(), sockets.permit().await.unwrap());
    let _busy = sockets.busy(&url("http://b.test/"));
    let mut busy_conn =
        sockets.register("http://b.test:80".into(), sockets.permit().await.unwrap());
    assert_eq!(sockets.open(), 2);

    // The third connection waits; its wait closes a.test's connection.
    let waiter = tokio::spawn({
        let sockets = sockets.clone();
        async move { sockets.permit().await.unwrap() }
    });
    idle.await; // completes: told to close
    // b.test has a request in flight: its connection is not told to close.
    let polled = futures_util::poll!(&mut busy_conn);
    assert!(polled.is_pending());
    // The permit comes back only once the closed connection's guard is gone
    // (it was dropped with `idle`).
    let third = waiter.await.unwrap();
    assert_eq!(sockets.open(), 2);
    drop(third);
    drop(busy_conn);
    assert_eq!(sockets.open(), 0);
}

#[tokio::test]
async fn a_waiter_is_woken_when_a_host_goes_idle_later() {
    let sockets = Sockets::new(1);
    let busy = sockets.busy(&url("http://a.test/"));
    let conn = sockets.register("http://a.test:80".into(), sockets.permit().await.unwrap());
    let waiter = tokio::spawn({
        let sockets = sockets.clone();
        async move { sockets.permit().await.unwrap() }
    });
    tokio::task::yield_now().await;
    assert!(!waiter.is_finished());
    // The request ends: a.test is idle, the waiter closes its connection.
    drop(busy);
    conn.await;
    assert!(waiter.await.is_ok());
    // Nothing of a.test is kept once its connection is gone.
    assert_eq!(sockets.hosts(), 0);
}

/// A keep-alive HTTP/1.1 server answering "ok" to every request.
async fn serve() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 1024];
                loop {
                    match stream.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        buf.drain(..end + 4);
                        let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                        if stream.write_all(answer).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    port
}

/// This process's open client sockets to `ports` (from /proc: the sockets
/// of its file descriptors whose remote port is one of them, in state
/// ESTABLISHED). A socket the cap has closed can linger a moment in a
/// closing state before its descriptor goes; counting those failed the test
/// once in seven runs of the library's tests here.
fn client_sockets(ports: &[u16]) -> usize {
    let mut inodes = std::collections::HashSet::new();
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        if let Ok(target) = std::fs::read_link(entry.path()) {
            let target = target.to_string_lossy().into_owned();
            if let Some(inode) = target
                .strip_prefix("socket:[")
                .and_then(|s| s.strip_suffix(']'))
            {
                inodes.insert(inode.to_owned());
            }
        }
    }
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    table
        .lines()
        .skip(1)
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let remote_port = fields[2]
                .rsplit(':')
                .next()
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            let established = fields[3] == "01";
            established
                && remote_port.is_some_and(|p| ports.contains(&p))
                && inodes.contains(fields[9])
        })
        .count()
}

/// The client sockets open once those the cap has already let go of are gone.
/// A socket whose slot the cap released is closed by its connection task,
/// which may not have run yet on a busy machine: a count above `cap` is taken
/// again after that task had its turn, and only one that stays above is kept.
async fn settled_client_sockets(ports: &[u16], cap: usize) -> usize {
    let mut n = client_sockets(ports);
    for _ in 0..200 {
        if n <= cap {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        n = client_sockets(ports);
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_hosts_than_the_cap_all_fetched_and_sockets_stay_under_it() {
    const CAP: usize = 3;
    let mut ports = Vec::new();
    for _ in 0..12 {
        ports.push(serve().await);
    }
    let fetcher = Arc::new(
        Fetcher::new(FetchConfig {
            private_access: PrivateAccess::Allow,
            max_connections: Some(CAP),
            ..FetchConfig::default()
        })
        .unwrap(),
    );
    assert_eq!(fetcher.sockets.cap(), CAP);
    // Every host twice, eight at a time: more requests in flight than sockets.
    let urls: Vec<Url> = ports
        .iter()
        .chain(&ports)
        .enumerate()
        .map(|(i, port)| url(&format!("http://127.0.0.1:{port}/{i}")))
        .collect();
    let mut most = 0;
    let mut done = stream::iter(urls)
        .map(|u| {
            let fetcher = fetcher.clone();
            async move { fetcher.get(&u, Keep::Body).await.map(|r| (u, r.status)) }
        })
        .buffer_unordered(8);
    let mut fetched = 0;
    while let Some(result) = done.next().await {
        let (u, status) = result.unwrap_or_else(|e| panic!("a fetch failed: {e:?}"));
        assert_eq!(status, 200, "{u}");
        fetched += 1;
        most = most.max(settled_client_sockets(&ports, CAP).await);
        assert!(fetcher.sockets.open() <= CAP);
    }
    assert_eq!(fetched, 24);
    assert!(most >= 1, "the /proc count saw no socket at all");
    assert!(most <= CAP, "{most} client sockets open, cap {CAP}");
}
