//! Fetching one URL: one shared HTTP client, one request, a streamed and capped body.
//!
//! The client never follows redirects (the crawler does, so every hop goes through
//! scope and the seen set) and never decodes content itself (so archives can keep
//! wire bytes; see [`decode`]). A body nothing needs is counted and dropped chunk
//! by chunk, never held in memory.

pub mod decode;
mod error;

use std::io::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use reqwest::header::{self, HeaderMap, HeaderValue};
use url::Url;

use crate::outcome::FetchFailure;
use crate::sink::Exchange;

pub use error::classify;

/// Everything that shapes how requests are made. Defaults are documented per field.
#[derive(Clone, Debug)]
pub struct FetchConfig {
    /// `User-Agent` header (default `skitter/<version>`).
    pub user_agent: String,
    /// Time allowed to open a connection, TLS included (default 10 s).
    pub connect_timeout: Duration,
    /// Longest silence while waiting for response bytes (default 30 s).
    pub read_timeout: Duration,
    /// Whole-attempt limit, body included (default 120 s).
    pub total_timeout: Duration,
    /// Bodies are read up to this many bytes and the rest cut off (the response
    /// is then marked truncated); decoded bodies are capped at the same size
    /// (default 10 MiB).
    pub max_body_size: u64,
    /// Speak only HTTP/1.1 (default false: HTTP/2 when the server offers it by ALPN).
    pub http1_only: bool,
    /// Accept invalid TLS certificates (default false).
    pub insecure: bool,
    /// A proxy for all requests (`http://`, `https://`, `socks5://`).
    pub proxy: Option<String>,
    /// Keep a cookie jar for the crawl (default false).
    pub cookies: bool,
    /// Extra headers sent with every request.
    pub headers: Vec<(String, String)>,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            user_agent: concat!("skitter/", env!("CARGO_PKG_VERSION")).to_string(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            total_timeout: Duration::from_secs(120),
            max_body_size: 10 * 1024 * 1024,
            http1_only: false,
            insecure: false,
            proxy: None,
            cookies: false,
            headers: Vec::new(),
        }
    }
}

/// The client could not be built from the configuration.
#[derive(Debug, thiserror::Error)]
pub enum FetchSetupError {
    /// A `--header` value is not a valid header.
    #[error("invalid header {0:?}: expected 'Name: value'")]
    Header(String),
    /// The proxy URL was rejected.
    #[error("invalid proxy {url:?}: {source}")]
    Proxy {
        /// The proxy given.
        url: String,
        /// Why it was rejected.
        source: reqwest::Error,
    },
    /// The HTTP client failed to start (TLS setup).
    #[error("cannot start the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

/// A response whose body has been read (or counted and dropped).
#[derive(Debug)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The response headers.
    pub headers: HeaderMap,
    /// The media type, lowercased, without parameters.
    pub media_type: Option<String>,
    /// The `charset` parameter of `Content-Type`, if any.
    pub charset: Option<String>,
    /// Body bytes received (after transfer decoding, before content decoding).
    pub size: u64,
    /// The body as received, when it was kept.
    pub body: Option<Bytes>,
    /// The body was longer than [`FetchConfig::max_body_size`] and only its
    /// first `max_body_size` bytes were read.
    pub truncated: bool,
    /// The exchange, when bodies are being archived.
    pub exchange: Option<Exchange>,
}

impl Response {
    /// The `Location` header, if present and valid text.
    pub fn location(&self) -> Option<&str> {
        self.headers.get(header::LOCATION)?.to_str().ok()
    }

    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)?.to_str().ok()
    }

    /// Whether the body is HTML by its declared type (`text/html`, XHTML).
    pub fn is_html(&self) -> bool {
        matches!(
            self.media_type.as_deref(),
            Some("text/html" | "application/xhtml+xml")
        )
    }
}

/// Which bodies the caller wants kept in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Keep HTML (for link extraction), drop the rest after counting it.
    Html,
    /// Keep HTML and CSS (resources mode extracts links from stylesheets).
    HtmlAndCss,
    /// Keep the body whatever its type, without building an exchange (robots.txt,
    /// sitemaps).
    Body,
    /// Keep every body and build the [`Exchange`] (for archiving sinks).
    Everything,
}

/// A cheap-to-clone HTTP fetcher over one shared connection pool.
#[derive(Clone, Debug)]
pub struct Fetcher {
    client: reqwest::Client,
    config: std::sync::Arc<FetchConfig>,
}

impl Fetcher {
    /// Builds the shared client.
    pub fn new(config: FetchConfig) -> Result<Fetcher, FetchSetupError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static(decode::ACCEPT_ENCODING),
        );
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/html,application/xhtml+xml,*/*;q=0.8"),
        );
        for (name, value) in &config.headers {
            let bad = || FetchSetupError::Header(format!("{name}: {value}"));
            let name = header::HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| bad())?;
            let value = HeaderValue::from_str(value.trim()).map_err(|_| bad())?;
            headers.insert(name, value);
        }
        let mut builder = reqwest::Client::builder()
            .user_agent(config.user_agent.clone())
            .default_headers(headers)
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(config.connect_timeout)
            .read_timeout(config.read_timeout)
            .timeout(config.total_timeout)
            .tcp_nodelay(true)
            .pool_idle_timeout(Duration::from_secs(30))
            .danger_accept_invalid_certs(config.insecure)
            .cookie_store(config.cookies)
            // skitter retries on its own (backoff, Retry-After, attempts in the
            // record). reqwest's layer would resend HTTP/2 refusals unrecorded, and
            // it keeps a copy of every request in flight in case it does.
            .retry(reqwest::retry::never().max_retries_per_request(0));
        if config.http1_only {
            builder = builder.http1_only();
        }
        if let Some(proxy) = &config.proxy {
            let p = reqwest::Proxy::all(proxy).map_err(|source| FetchSetupError::Proxy {
                url: proxy.clone(),
                source,
            })?;
            builder = builder.proxy(p);
        }
        Ok(Fetcher {
            client: builder.build()?,
            config: std::sync::Arc::new(config),
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &FetchConfig {
        &self.config
    }

    /// Makes one GET request and reads its body per `keep`.
    pub async fn get(&self, url: &Url, keep: Keep) -> Result<Response, FetchFailure> {
        let started = chrono::Utc::now();
        let resp = self
            .client
            .get(url.as_str())
            .send()
            .await
            .map_err(|e| classify(&e))?;
        // Boxed: while a request waits for its response head (the long wait on a
        // slow server) its task need not keep room for reading the body.
        Box::pin(self.receive(url, keep, started, resp)).await
    }

    /// The rest of [`Fetcher::get`], once the response head has arrived.
    async fn receive(
        &self,
        url: &Url,
        keep: Keep,
        started: chrono::DateTime<chrono::Utc>,
        resp: reqwest::Response,
    ) -> Result<Response, FetchFailure> {
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let (media_type, charset) = content_type(&headers);
        let version = http_version(resp.version());
        let remote_addr: Option<SocketAddr> = resp.remote_addr();
        let is_css = media_type.as_deref() == Some("text/css");
        let is_html = matches!(
            media_type.as_deref(),
            Some("text/html" | "application/xhtml+xml")
        );
        let keep_body = match keep {
            Keep::Html => is_html,
            Keep::HtmlAndCss => is_html || is_css,
            Keep::Body | Keep::Everything => true,
        };
        let Body {
            size,
            bytes: body,
            truncated,
        } = self.read_body(resp, keep_body).await?;
        let exchange = (keep == Keep::Everything).then(|| Exchange {
            request_head: request_head(url, &self.config),
            response_head: response_head(status, version, &headers),
            body_sha1: Some(crate::sink::sha1_of(body.as_deref().unwrap_or_default())),
            body: body.clone().unwrap_or_default(),
            decoded_body: None,
            truncated,
            remote_addr,
            http_version: version,
            started,
        });
        Ok(Response {
            status,
            headers,
            media_type,
            charset,
            size,
            body,
            truncated,
            exchange,
        })
    }

    /// Streams the body up to the size cap; keeps it only when asked. A longer
    /// body is cut at the cap (the rest is never read): the part read is still
    /// a page with links, as with Googlebot's first 15 MB and Heritrix's
    /// `WARC-Truncated: length`.
    async fn read_body(
        &self,
        mut resp: reqwest::Response,
        keep: bool,
    ) -> Result<Body, FetchFailure> {
        let max = self.config.max_body_size;
        // A declared length is only a hint: a lying server must not make us
        // reserve more than a modest first buffer.
        let capacity = resp.content_length().unwrap_or(0).min(max).min(1 << 20);
        let mut body = Body {
            size: 0,
            bytes: None,
            truncated: false,
        };
        let mut buf = keep.then(|| BytesMut::with_capacity(capacity as usize));
        while let Some(chunk) = resp.chunk().await.map_err(|e| classify(&e))? {
            let room = max - body.size;
            let take = if chunk.len() as u64 > room {
                body.truncated = true;
                room as usize
            } else {
                chunk.len()
            };
            body.size += take as u64;
            if let Some(buf) = buf.as_mut() {
                buf.extend_from_slice(&chunk[..take]);
            }
            if body.truncated {
                break;
            }
        }
        body.bytes = buf.map(BytesMut::freeze);
        Ok(body)
    }
}

/// A body as read by [`Fetcher::read_body`].
struct Body {
    size: u64,
    bytes: Option<Bytes>,
    truncated: bool,
}

/// The media type (lowercased, no parameters) and charset of a response.
fn content_type(headers: &HeaderMap) -> (Option<String>, Option<String>) {
    let Some(value) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return (None, None);
    };
    let mut parts = value.split(';');
    let media = parts
        .next()
        .map(|m| m.trim().to_ascii_lowercase())
        .filter(|m| !m.is_empty());
    let charset = parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches('"').to_ascii_lowercase())
    });
    (media, charset)
}

fn http_version(v: reqwest::Version) -> &'static str {
    match v {
        reqwest::Version::HTTP_09 => "HTTP/0.9",
        reqwest::Version::HTTP_10 => "HTTP/1.0",
        reqwest::Version::HTTP_2 => "HTTP/2",
        reqwest::Version::HTTP_3 => "HTTP/3",
        _ => "HTTP/1.1",
    }
}

/// The request head as an HTTP/1.1 message: the client does not expose the bytes it
/// wrote, so this is rebuilt from what skitter sends (the same headers, in order).
fn request_head(url: &Url, config: &FetchConfig) -> Bytes {
    let mut path = url.path().to_string();
    if let Some(q) = url.query() {
        path.push('?');
        path.push_str(q);
    }
    let host = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or("")),
        None => url.host_str().unwrap_or("").to_string(),
    };
    let mut head = format!(
        "GET {path} HTTP/1.1\r\nhost: {host}\r\nuser-agent: {}\r\naccept-encoding: {}\r\naccept: text/html,application/xhtml+xml,*/*;q=0.8\r\n",
        config.user_agent,
        decode::ACCEPT_ENCODING
    );
    for (name, value) in &config.headers {
        head.push_str(&format!("{}: {}\r\n", name.trim(), value.trim()));
    }
    head.push_str("\r\n");
    Bytes::from(head)
}

fn response_head(status: u16, version: &str, headers: &HeaderMap) -> Bytes {
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    // WARC readers parse the head as HTTP/1.x, so HTTP/2 responses are written with
    // an HTTP/1.1 status line (WARC-Protocol records the real version).
    let line_version = if version == "HTTP/1.0" {
        "HTTP/1.0"
    } else {
        "HTTP/1.1"
    };
    let mut head = Vec::with_capacity(256);
    // Writing to a Vec cannot fail.
    let _ = write!(head, "{line_version} {status} {reason}\r\n");
    for (name, value) in headers {
        head.extend_from_slice(name.as_str().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    Bytes::from(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_content_type() {
        let cases: &[(&str, Option<&str>, Option<&str>)] = &[
            ("text/html", Some("text/html"), None),
            ("Text/HTML; Charset=UTF-8", Some("text/html"), Some("utf-8")),
            (
                "text/html; charset=\"iso-8859-1\"",
                Some("text/html"),
                Some("iso-8859-1"),
            ),
            (
                "application/xhtml+xml;q=1;charset=utf-8",
                Some("application/xhtml+xml"),
                Some("utf-8"),
            ),
            (";charset=utf-8", None, Some("utf-8")),
        ];
        for (value, media, charset) in cases {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_str(value).unwrap());
            let (m, c) = content_type(&h);
            assert_eq!((m.as_deref(), c.as_deref()), (*media, *charset), "{value}");
        }
        assert_eq!(content_type(&HeaderMap::new()), (None, None));
    }

    #[test]
    fn heads_are_crlf_terminated() {
        let url = Url::parse("http://h:8080/a?b=1").unwrap();
        let req = request_head(&url, &FetchConfig::default());
        assert!(req.starts_with(b"GET /a?b=1 HTTP/1.1\r\nhost: h:8080\r\n"));
        assert!(req.ends_with(b"\r\n\r\n"));
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_LENGTH, HeaderValue::from_static("3"));
        let resp = response_head(404, "HTTP/2", &h);
        assert_eq!(
            &resp[..],
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 3\r\n\r\n"
        );
    }

    #[test]
    fn bad_header_is_a_setup_error() {
        let config = FetchConfig {
            headers: vec![("bad name".into(), "v".into())],
            ..FetchConfig::default()
        };
        assert!(matches!(
            Fetcher::new(config),
            Err(FetchSetupError::Header(_))
        ));
    }
}
