//! The classifier against real failures: each row starts a loopback server that
//! misbehaves one way, fetches from it, and checks the kind and whether skitter
//! retries it. Causes that are hard to provoke (HTTP/2 resets, wrapped TLS
//! errors) are checked on built chains below.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use url::Url;

use super::*;
use crate::fetch::retry::is_transient;
use crate::fetch::{FetchConfig, Fetcher, Keep};

/// How a test server treats each connection after reading the request head.
#[derive(Clone, Copy, Debug)]
enum Misbehave {
    /// Answer plain HTTP at once, without reading (a TLS client's hello never
    /// ends in a blank line).
    PlainAtOnce,
    /// Close without answering.
    Close,
    /// Reset the connection (SO_LINGER 0).
    Reset,
    /// Answer with bytes that are not HTTP.
    Garbage,
    /// Promise 100 bytes of body, send 5, close.
    ShortBody,
    /// Never answer, keep the connection open.
    Silent,
}

async fn serve(how: Misbehave) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(misbehave(stream, how));
        }
    });
    addr
}

async fn misbehave(mut stream: TcpStream, how: Misbehave) {
    if let Misbehave::PlainAtOnce = how {
        let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
        return;
    }
    let mut buf = [0u8; 4096];
    let mut got = Vec::new();
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    let reply: &[u8] = match how {
        Misbehave::PlainAtOnce | Misbehave::Close => return,
        Misbehave::Reset => {
            stream.set_zero_linger().unwrap();
            return;
        }
        Misbehave::Garbage => b"HTTP/1.1 two hundred OK\r\n\r\n",
        Misbehave::ShortBody => b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort",
        Misbehave::Silent => {
            std::future::pending::<()>().await;
            return;
        }
    };
    let _ = stream.write_all(reply).await;
}

/// A port nothing listens on (bound, then released).
async fn closed_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap()
}

/// The test servers' host is named, so their loopback address may be reached.
fn loopback_named() -> FetchConfig {
    FetchConfig {
        named_hosts: vec!["127.0.0.1".into()],
        ..FetchConfig::default()
    }
}

async fn fetch_failure(url: &str) -> FetchFailure {
    let fetcher = Fetcher::new(loopback_named()).unwrap();
    let url = Url::parse(url).unwrap();
    match fetcher.get(&url, Keep::Body).await {
        Ok(resp) => panic!("{url}: expected a failure, got status {}", resp.status),
        Err(failure) => failure,
    }
}

#[tokio::test]
async fn real_failures_get_their_kind() {
    let refused = closed_port().await;
    let plain = serve(Misbehave::PlainAtOnce).await;
    let garbage = serve(Misbehave::Garbage).await;
    let cases = [
        // (what, url, kind, retried)
        (
            "refused",
            format!("http://{refused}/"),
            ErrorKind::Connect,
            true,
        ),
        (
            "TLS to a plain server",
            format!("https://{plain}/"),
            ErrorKind::Tls,
            false,
        ),
        (
            "not HTTP",
            format!("http://{garbage}/"),
            ErrorKind::Protocol,
            true,
        ),
        (
            "closed before answering",
            format!("http://{}/", serve(Misbehave::Close).await),
            ErrorKind::Body,
            true,
        ),
        (
            "reset",
            format!("http://{}/", serve(Misbehave::Reset).await),
            ErrorKind::Body,
            true,
        ),
        (
            "body cut short",
            format!("http://{}/", serve(Misbehave::ShortBody).await),
            ErrorKind::Body,
            true,
        ),
    ];
    for (what, url, kind, retried) in cases {
        let failure = fetch_failure(&url).await;
        assert_eq!(
            (failure.kind, is_transient(failure.kind)),
            (kind, retried),
            "{what}: {}",
            failure.message
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_silent_server_times_out() {
    let addr = serve(Misbehave::Silent).await;
    let fetcher = Fetcher::new(FetchConfig {
        read_timeout: Duration::from_secs(5),
        ..loopback_named()
    })
    .unwrap();
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let failure = fetcher.get(&url, Keep::Body).await.unwrap_err();
    assert_eq!(failure.kind, ErrorKind::Timeout, "{}", failure.message);
    assert!(is_transient(failure.kind));
}

/// Resolves through hickory against a loopback DNS server.
struct LoopbackDns(hickory_resolver::TokioResolver);

impl reqwest::dns::Resolve for LoopbackDns {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let resolver = self.0.clone();
        Box::pin(async move {
            let found = resolver.lookup_ip(name.as_str()).await?;
            let addrs: Vec<SocketAddr> = found.iter().map(|ip| SocketAddr::new(ip, 0)).collect();
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[tokio::test]
async fn an_unknown_name_is_dns() {
    use hickory_resolver::config::{ConnectionConfig, NameServerConfig, ResolverConfig};
    use hickory_resolver::net::runtime::TokioRuntimeProvider;
    use skitter_testsite::dns::Responder;

    // Answers NXDOMAIN for every name.
    let dns = Responder::builder().bind().await.unwrap();
    let mut udp = ConnectionConfig::udp();
    udp.port = dns.addr().port();
    let server = NameServerConfig::new(dns.addr().ip(), true, vec![udp]);
    let resolver = hickory_resolver::TokioResolver::builder_with_config(
        ResolverConfig::from_name_servers(vec![server]),
        TokioRuntimeProvider::default(),
    )
    .build()
    .unwrap();
    let client = reqwest::Client::builder()
        .dns_resolver(Arc::new(LoopbackDns(resolver)))
        .build()
        .unwrap();
    let err = client
        .get("http://no-such-host.test/")
        .send()
        .await
        .unwrap_err();
    let failure = classify(&err);
    assert_eq!(failure.kind, ErrorKind::Dns, "{}", failure.message);
    assert!(is_transient(failure.kind));
}

/// An error that only carries a cause, like the wrappers between reqwest and
/// the cause that tells.
#[derive(Debug)]
struct Wrap(Box<dyn StdError + Send + Sync>);

impl fmt::Display for Wrap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("wrapper")
    }
}

impl StdError for Wrap {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&*self.0)
    }
}

fn wrap(e: impl StdError + Send + Sync + 'static) -> Wrap {
    Wrap(Box::new(e))
}

#[test]
fn causes_down_the_chain_decide() {
    use io::ErrorKind as Io;
    let untrusted = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
    let cases: Vec<(&str, Box<dyn StdError>, Option<ErrorKind>)> = vec![
        ("plain text", "no idea".into(), None),
        ("io Other", Box::new(io::Error::other("x")), None),
        (
            "refused",
            Box::new(wrap(io::Error::from(Io::ConnectionRefused))),
            Some(ErrorKind::Connect),
        ),
        (
            "unreachable",
            Box::new(io::Error::from(Io::HostUnreachable)),
            Some(ErrorKind::Connect),
        ),
        (
            "reset",
            Box::new(wrap(wrap(io::Error::from(Io::ConnectionReset)))),
            Some(ErrorKind::Body),
        ),
        (
            "eof",
            Box::new(io::Error::from(Io::UnexpectedEof)),
            Some(ErrorKind::Body),
        ),
        (
            "io timeout",
            Box::new(wrap(io::Error::from(Io::TimedOut))),
            Some(ErrorKind::Timeout),
        ),
        // tokio-rustls hands rustls errors up inside io::Error(InvalidData).
        (
            "rustls in io",
            Box::new(wrap(io::Error::new(Io::InvalidData, untrusted.clone()))),
            Some(ErrorKind::Tls),
        ),
        ("rustls", Box::new(untrusted), Some(ErrorKind::Tls)),
        (
            "h2 protocol",
            Box::new(wrap(h2::Error::from(h2::Reason::PROTOCOL_ERROR))),
            Some(ErrorKind::Protocol),
        ),
        (
            "h2 refused stream",
            Box::new(h2::Error::from(h2::Reason::REFUSED_STREAM)),
            Some(ErrorKind::Body),
        ),
        (
            "hickory",
            Box::new(wrap(hickory_resolver::net::NetError::Timeout)),
            Some(ErrorKind::Dns),
        ),
    ];
    for (what, err, want) in cases {
        assert_eq!(chain_kind(&*err), want, "{what}: {err}");
    }
}

#[test]
fn the_message_keeps_each_cause_once() {
    let err = wrap(io::Error::other("connection reset by peer"));
    assert_eq!(chain(&err), "wrapper: connection reset by peer");
}
