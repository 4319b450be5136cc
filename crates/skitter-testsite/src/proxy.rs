//! Test proxies on loopback: an HTTP forward proxy (absolute-form `GET`
//! forwarding and `CONNECT` tunnels) and a SOCKS5 server (no auth, or
//! user/password per RFC 1929), each counting the requests it served, with
//! modes that misbehave (slow, refusing with 403) and optional credentials.
//!
//! They forward only to loopback addresses: a test proxy must not be a way
//! off the machine. Forwarded HTTP requests go upstream with
//! `Connection: close` and come back with it, one request per connection, so
//! the proxy never has to find where a response ends.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::loopback::connect_loopback;
use crate::proxy_mode::ProxyMode;

/// A running test proxy; stops when dropped.
#[derive(Debug)]
pub struct TestProxy {
    addr: SocketAddr,
    scheme: &'static str,
    credentials: Option<(String, String)>,
    served: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl Drop for TestProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TestProxy {
    /// Starts an HTTP forward proxy on `127.0.0.1:0`; with `credentials`, a
    /// request without the matching Basic `Proxy-Authorization` gets `407`.
    pub fn http(mode: ProxyMode, credentials: Option<(&str, &str)>) -> io::Result<TestProxy> {
        Self::start("http", mode, credentials)
    }

    /// Starts a SOCKS5 server on `127.0.0.1:0`; with `credentials`, only
    /// user/password authentication with them is accepted.
    pub fn socks5(mode: ProxyMode, credentials: Option<(&str, &str)>) -> io::Result<TestProxy> {
        Self::start("socks5", mode, credentials)
    }

    fn start(
        scheme: &'static str,
        mode: ProxyMode,
        credentials: Option<(&str, &str)>,
    ) -> io::Result<TestProxy> {
        let runtime = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
        let std_listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let listener = {
            let _entered = runtime.enter();
            TcpListener::from_std(std_listener)?
        };
        let credentials = credentials.map(|(u, p)| (u.to_string(), p.to_string()));
        let served = Arc::new(AtomicU64::new(0));
        let conf = Arc::new(Conf {
            mode,
            credentials: credentials.clone(),
            served: served.clone(),
            socks: scheme == "socks5",
        });
        let task = runtime.spawn(accept_loop(listener, conf));
        Ok(TestProxy {
            addr,
            scheme,
            credentials,
            served,
            task,
        })
    }

    /// The proxy's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The proxy URL, with its credentials when it has any
    /// (`http://user:pass@127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        match &self.credentials {
            Some((u, p)) => format!("{}://{u}:{p}@{}", self.scheme, self.addr),
            None => format!("{}://{}", self.scheme, self.addr),
        }
    }

    /// Requests forwarded or tunnels opened so far.
    pub fn served(&self) -> u64 {
        self.served.load(Ordering::Relaxed)
    }
}

/// The URL of an HTTP proxy that is not there: a loopback port that was free
/// a moment ago and has nothing listening (connections are refused).
pub fn dead_proxy_url() -> io::Result<String> {
    let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    let addr = listener.local_addr()?;
    drop(listener);
    Ok(format!("http://{addr}"))
}

struct Conf {
    mode: ProxyMode,
    credentials: Option<(String, String)>,
    served: Arc<AtomicU64>,
    socks: bool,
}

async fn accept_loop(listener: TcpListener, conf: Arc<Conf>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors, for instance: try again shortly.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let conf = conf.clone();
        tokio::spawn(async move {
            if let ProxyMode::Slow(d) = conf.mode {
                tokio::time::sleep(d).await;
            }
            // A client that goes away is no error of the proxy's.
            let _ = if conf.socks {
                crate::socks::serve(stream, &conf.credentials, conf.mode, &conf.served).await
            } else {
                serve_http(stream, &conf).await
            };
        });
    }
}

/// The longest request head accepted.
const MAX_HEAD: usize = 64 * 1024;

/// Reads up to the end of a head (`\r\n\r\n`); returns the head and any bytes after it.
async fn read_head(stream: &mut TcpStream) -> io::Result<(String, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Ok((String::from_utf8_lossy(&buf).into_owned(), rest));
        }
        if buf.len() > MAX_HEAD {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "head too long"));
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

async fn serve_http(mut client: TcpStream, conf: &Conf) -> io::Result<()> {
    let (head, rest) = read_head(&mut client).await?;
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if let Some((user, pass)) = &conf.credentials {
        let want = format!("Basic {}", base64(format!("{user}:{pass}").as_bytes()));
        let given = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("proxy-authorization"));
        if given.is_none_or(|(_, v)| *v != want) {
            return refuse(&mut client, "407 Proxy Authentication Required").await;
        }
    }
    if conf.mode == ProxyMode::Refuse {
        return refuse(&mut client, "403 Forbidden").await;
    }
    if method.eq_ignore_ascii_case("CONNECT") {
        let Some(mut upstream) = connect_loopback(target).await else {
            return refuse(&mut client, "502 Bad Gateway").await;
        };
        conf.served.fetch_add(1, Ordering::Relaxed);
        client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await?;
        upstream.write_all(&rest).await?;
        tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
        return Ok(());
    }
    let Some((authority, path)) = target.strip_prefix("http://").map(|t| {
        t.split_once('/')
            .map_or((t, "/".to_string()), |(a, p)| (a, format!("/{p}")))
    }) else {
        return refuse(&mut client, "400 Bad Request").await;
    };
    let Some(mut upstream) = connect_loopback(authority).await else {
        return refuse(&mut client, "502 Bad Gateway").await;
    };
    conf.served.fetch_add(1, Ordering::Relaxed);
    let mut forwarded = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in &headers {
        let hop = [
            "proxy-authorization",
            "proxy-connection",
            "connection",
            "keep-alive",
        ];
        if !hop.iter().any(|h| name.eq_ignore_ascii_case(h)) {
            forwarded.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    forwarded.push_str("Connection: close\r\n\r\n");
    upstream.write_all(forwarded.as_bytes()).await?;
    upstream.write_all(&rest).await?;
    let (resp_head, body) = read_head(&mut upstream).await?;
    let mut out = String::new();
    for line in resp_head.trim_end().split("\r\n") {
        let is_conn = line
            .split_once(':')
            .is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case("connection"));
        if !is_conn {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out.push_str("Connection: close\r\n\r\n");
    client.write_all(out.as_bytes()).await?;
    client.write_all(&body).await?;
    tokio::io::copy(&mut upstream, &mut client).await?;
    client.shutdown().await
}

/// Answers with the proxy's own error (marked as such, RFC 9209) and closes.
async fn refuse(client: &mut TcpStream, status: &str) -> io::Result<()> {
    let resp = format!(
        "HTTP/1.1 {status}\r\nProxy-Status: skitter-testproxy; error=http_request_denied\r\n\
         Proxy-Authenticate: Basic realm=\"test\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    client.write_all(resp.as_bytes()).await?;
    client.shutdown().await
}

/// Standard base64 with padding (for Basic credentials).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_matches_rfc4648() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("user:pass", "dXNlcjpwYXNz"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(super::base64(plain.as_bytes()), encoded);
        }
    }
}
