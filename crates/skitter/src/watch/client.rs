//! The other end of the control API, for `skitter ctl` and the tests: one
//! HTTP/1.1 request to a [`WatchServer`](super::WatchServer), its answer read
//! up to [`MAX_ANSWER`] bytes.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::Request;
use hyper::header;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::control::Command;

/// The longest answer read (a status document is a few KB).
pub const MAX_ANSWER: usize = 4 << 20;

/// How long one request may take, connection included.
const TIMEOUT: Duration = Duration::from_secs(30);

/// A request to the server failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No connection, or it broke.
    #[error("cannot reach the crawl at {addr}: {source}")]
    Connect {
        /// The server's address.
        addr: SocketAddr,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// The HTTP exchange failed.
    #[error("request to {addr} failed: {source}")]
    Http {
        /// The server's address.
        addr: SocketAddr,
        /// hyper's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// No answer in time.
    #[error("the crawl at {0} did not answer within {TIMEOUT:?}")]
    Timeout(SocketAddr),
}

/// An answer: its status code and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The body, as text (lossy).
    pub body: String,
}

/// Sends `command` with `token` (none: to see the refusal).
pub async fn send(
    addr: SocketAddr,
    token: Option<&str>,
    command: &Command,
) -> Result<Answer, ClientError> {
    request(addr, "POST", &command.path(), token).await
}

/// `GET path`.
pub async fn get(addr: SocketAddr, path: &str) -> Result<Answer, ClientError> {
    request(addr, "GET", path, None).await
}

async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
) -> Result<Answer, ClientError> {
    tokio::time::timeout(TIMEOUT, exchange(addr, method, path, token))
        .await
        .map_err(|_| ClientError::Timeout(addr))?
}

async fn exchange(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
) -> Result<Answer, ClientError> {
    let http =
        |source: Box<dyn std::error::Error + Send + Sync>| ClientError::Http { addr, source };
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|source| ClientError::Connect { addr, source })?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| http(e.into()))?;
    let driver = tokio::spawn(conn);
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header(header::HOST, addr.to_string());
    if let Some(token) = token {
        req = req.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let req = req
        .body(Empty::<Bytes>::new())
        .map_err(|e| http(e.into()))?;
    let res = sender.send_request(req).await.map_err(|e| http(e.into()))?;
    let status = res.status().as_u16();
    let body = Limited::new(res.into_body(), MAX_ANSWER)
        .collect()
        .await
        .map_err(http)?
        .to_bytes();
    driver.abort();
    Ok(Answer {
        status,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}
