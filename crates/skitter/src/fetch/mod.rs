//! Fetching one URL: one shared HTTP client, one request, a streamed and capped body.
//!
//! The client never follows redirects (the crawler does, so every hop goes through
//! scope and the seen set) and never decodes content itself (so archives can keep
//! wire bytes; see [`decode`]). A body nothing needs is counted and dropped chunk
//! by chunk, never held in memory.
//!
//! Requests go through reqwest, except plain-HTTP ones with no proxy and no
//! cookie jar, which take hyper-util's client directly (`direct`): the same
//! request on the wire for a fraction of the memory while it waits.

pub mod address;
mod answer;
pub(crate) mod client;
mod config;
mod cookie_jar;
pub mod decode;
mod direct;
pub mod dns;
mod error;
pub(crate) mod exchange;
pub mod head;
mod origin;
mod pace;
pub mod proxy_check;
pub mod proxy_ledger;
pub mod proxy_pool;
pub mod proxy_stats;
pub(crate) mod redirect;
pub mod retry;
mod route;
mod sockets;

use std::net::SocketAddr;

use bytes::{Bytes, BytesMut};
use reqwest::header::{self, HeaderMap, HeaderValue};
use url::Url;

use crate::base::outcome::FetchFailure;

pub use crate::base::request::Validators;
pub use address::{Blocked, PrivateAccess};
pub use config::{DEFAULT_MIN_TRANSFER_RATE, DEFAULT_POOL_IDLE_TIMEOUT, FetchConfig};
pub(crate) use error::{classify, classify_direct};
pub use exchange::{Exchange, Revisit, RevisitProfile};
use head::{request_head, response_head};
pub(crate) use origin::take_credentials;
use origin::{NamedOrigins, basic_auth, credentials_of};
pub use proxy_ledger::{ProxyLedger, ProxyTally};
pub use proxy_pool::{ProxyBench, Rotation};
pub use proxy_stats::ProxyStats;
pub use sockets::{
    FILES_RESERVED, OpenFileLimit, OpenFilesError, Wanted as OpenFilesWanted,
    default_max_connections,
};

/// The client could not be built from the configuration.
#[derive(Debug, thiserror::Error)]
pub enum FetchSetupError {
    /// A `--header` is not a valid header (its name is kept, never its value).
    #[error("invalid header {0:?}: expected 'Name: value' with a valid name and value")]
    Header(String),
    /// The proxy URL was rejected.
    #[error("invalid proxy {url:?}: {source}")]
    Proxy {
        /// The proxy given, its credentials redacted.
        url: String,
        /// Why it was rejected (the HTTP client's error; its type is not part
        /// of this API, so a new client version is no breaking change).
        source: BoxError,
    },
    /// A named origin is not an absolute `http(s)` URL.
    #[error("invalid named origin {0:?}: expected an absolute URL such as https://host:port")]
    Origin(String),
    /// Name resolution could not be set up (no usable name server).
    #[error(transparent)]
    Dns(#[from] crate::fetch::dns::DnsSetupError),
    /// The HTTP client failed to start (TLS setup).
    #[error("cannot start the HTTP client: {0}")]
    Client(#[source] BoxError),
    /// The TLS settings could not be built (no usable root certificates).
    #[error("cannot set up TLS: {0}")]
    Tls(String),
    /// Both `http1_only` and `http2_prior_knowledge` were asked for.
    #[error("HTTP/1.1 only and HTTP/2 with prior knowledge both asked for: choose one")]
    Versions,
    /// More connections were asked for (or more requests in flight, with no
    /// connection cap given) than the open-file limit leaves room for.
    #[error(transparent)]
    OpenFiles(#[from] OpenFilesError),
}

/// An error from a library skitter uses, boxed so its type stays out of
/// skitter's API; read it through `Display` and `source()`.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

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
    /// The proxy that served it (a pool member, or the single configured
    /// proxy), credentials removed (`http://proxy1:3128`); `None` when direct.
    pub proxy: Option<String>,
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

    /// The response's validators (`ETag`, `Last-Modified`), for making the
    /// next fetch of the URL conditional ([`Fetcher::get_if`]).
    pub fn validators(&self) -> Validators {
        Validators {
            etag: self.header("etag").map(str::to_string),
            last_modified: self.header("last-modified").map(str::to_string),
        }
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

/// A cheap-to-clone HTTP fetcher over a shared connection pool (two, when
/// named hosts may reach private addresses and other hosts may not; the second
/// is built on first use, as building one costs milliseconds of certificate
/// parsing a crawl of its roots alone never needs). With a proxy pool, one
/// such pair per proxy, the pool choosing which serves each request.
#[derive(Clone, Debug)]
pub struct Fetcher {
    /// One way out, or one per proxy of the pool (in the pool's order).
    routes: std::sync::Arc<[route::Route]>,
    /// The proxy pool's rotation and health, when there is a pool.
    pool: Option<std::sync::Arc<proxy_pool::ProxyPool>>,
    /// The cookie jar both clients share, if cookies are kept.
    jar: Option<std::sync::Arc<cookie_jar::CookieJar>>,
    /// The user's extra headers, parsed once.
    headers: std::sync::Arc<HeaderMap>,
    /// [`FetchConfig::named_origins`], parsed once.
    origins: std::sync::Arc<NamedOrigins>,
    /// Origin → its Basic `Authorization` value (see
    /// [`FetchConfig::site_credentials`]).
    site_auth: std::sync::Arc<std::collections::HashMap<String, HeaderValue>>,
    config: std::sync::Arc<FetchConfig>,
    /// The cap on open connections every client of every route shares.
    sockets: sockets::Sockets,
}

impl Fetcher {
    /// Builds the shared client.
    pub fn new(config: FetchConfig) -> Result<Fetcher, FetchSetupError> {
        let tls = client::SharedTls::new(&config)?;
        Self::with_tls(config, tls)
    }

    /// [`Fetcher::new`] with TLS settings built before (shared by many
    /// fetchers, as the proxy check's one per proxy).
    pub(crate) fn with_tls(
        mut config: FetchConfig,
        tls: Option<client::SharedTls>,
    ) -> Result<Fetcher, FetchSetupError> {
        // One resolver (and its cache) for every client of every route.
        let dns = std::sync::Arc::new(crate::fetch::dns::Dns::new(&config.dns)?);
        let sockets = sockets::Sockets::new(
            config
                .max_connections
                .unwrap_or_else(sockets::default_max_connections),
        );
        // Hosts given fixed addresses were named by the user.
        for host in dns.overridden() {
            if !config.named_hosts.iter().any(|h| h == host) {
                config.named_hosts.push(host.to_owned());
            }
        }
        let mut headers = HeaderMap::new();
        for (name, value) in &config.headers {
            let bad = || FetchSetupError::Header(name.trim().to_string());
            let name = header::HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| bad())?;
            let mut value = HeaderValue::from_str(value.trim()).map_err(|_| bad())?;
            // Kept out of `Debug` output and out of HTTP/2 header compression tables.
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let origins = NamedOrigins::parse(&config.named_origins)?;
        let mut site_auth = std::collections::HashMap::new();
        for (host, userpass) in &config.site_credentials {
            let value = basic_auth(userpass)
                .map_err(|_| FetchSetupError::Header("Authorization".into()))?;
            site_auth.insert(host.to_ascii_lowercase(), value);
        }
        // One jar for both clients: a host's cookies do not depend on which
        // client reached it.
        let jar = config
            .cookies
            .then(|| std::sync::Arc::new(cookie_jar::CookieJar::default()));
        let (routes, pool) = if config.proxy_list.is_empty() {
            let route = route::Route::new(
                &config,
                config.proxy.as_deref(),
                jar.clone(),
                tls.clone(),
                dns.clone(),
                sockets.clone(),
            )?;
            (vec![route], None)
        } else {
            let routes = config
                .proxy_list
                .iter()
                .map(|p| {
                    let (tls, dns) = (tls.clone(), dns.clone());
                    route::Route::new(&config, Some(p), jar.clone(), tls, dns, sockets.clone())
                })
                .collect::<Result<Vec<_>, _>>()?;
            let pool = proxy_pool::ProxyPool::new(
                &config.proxy_list,
                config.proxy_rotation,
                config.proxy_bench,
            )
            .with_ledger(config.proxy_ledger.clone());
            (routes, Some(std::sync::Arc::new(pool)))
        };
        Ok(Fetcher {
            routes: routes.into(),
            pool,
            jar,
            headers: std::sync::Arc::new(headers),
            origins: std::sync::Arc::new(origins),
            site_auth: std::sync::Arc::new(site_auth),
            config: std::sync::Arc::new(config),
            sockets,
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &FetchConfig {
        &self.config
    }

    /// What each proxy of the pool did so far (empty without a pool).
    pub fn proxy_stats(&self) -> Vec<ProxyStats> {
        self.pool.as_ref().map_or_else(Vec::new, |p| p.stats())
    }

    /// Makes one GET request and reads its body per `keep`. The user's
    /// headers go with it when its origin is one of
    /// [`FetchConfig::named_origins`] (or with
    /// [`FetchConfig::headers_everywhere`]); it may reach private addresses
    /// per [`FetchConfig::private_access`] when it is on the host and port of
    /// a named origin or on one of [`FetchConfig::named_hosts`].
    pub async fn get(&self, url: &Url, keep: Keep) -> Result<Response, FetchFailure> {
        self.send(
            url,
            keep,
            self.is_named(url),
            self.headers_for(url),
            None,
            Ask::default(),
        )
        .await
    }

    /// Makes one HEAD request to `url`, as [`Fetcher::get`] would send its
    /// GET: a link checker's first, cheap question (`skitter check`). The
    /// response has no body.
    pub async fn head(&self, url: &Url) -> Result<Response, FetchFailure> {
        let ask = Ask {
            head: true,
            ..Ask::default()
        };
        let (named, with_headers) = (self.is_named(url), self.headers_for(url));
        self.send(url, Keep::Html, named, with_headers, None, ask)
            .await
    }

    /// [`Fetcher::get`], made conditional on what an earlier fetch returned:
    /// `If-None-Match` for an `ETag`, `If-Modified-Since` for a
    /// `Last-Modified`. A `304` comes back as a [`Response`] with status 304
    /// and no body, not as an error.
    pub async fn get_if(
        &self,
        url: &Url,
        keep: Keep,
        validators: &Validators,
    ) -> Result<Response, FetchFailure> {
        let with_headers = self.headers_for(url);
        self.send(
            url,
            keep,
            self.is_named(url),
            with_headers,
            None,
            Ask {
                validators: Some(validators),
                head: false,
            },
        )
        .await
    }

    /// Whether the user's headers go with a request to `url` made by
    /// [`Fetcher::get`]: only to the named origins, unless sent everywhere.
    fn headers_for(&self, url: &Url) -> bool {
        self.config.headers_everywhere || self.origins.contains(url)
    }

    /// Whether `url` is on a host and port the user named (one of
    /// [`FetchConfig::named_origins`]), or on a host named for every port
    /// ([`FetchConfig::named_hosts`]).
    fn is_named(&self, url: &Url) -> bool {
        self.origins.has_socket(url)
            || url
                .host_str()
                .is_some_and(|h| self.config.named_hosts.iter().any(|n| n == h))
    }

    /// Makes one GET request on behalf of `origin`, the URL the user named (a
    /// redirect hop of a fetch input): only a request to `origin`'s own host and
    /// port is named, and only one to its origin (scheme too) carries the
    /// user's headers (unless [`FetchConfig::headers_everywhere`]) and its
    /// `user:pass@`, as curl drops credentials on a redirect that changes any
    /// of the three.
    pub async fn get_from(
        &self,
        url: &Url,
        keep: Keep,
        origin: &Url,
    ) -> Result<Response, FetchFailure> {
        self.get_from_if(url, keep, origin, None).await
    }

    /// [`Fetcher::get_from`], conditional on `validators` when given (see
    /// [`Fetcher::get_if`]).
    pub async fn get_from_if(
        &self,
        url: &Url,
        keep: Keep,
        origin: &Url,
        validators: Option<&Validators>,
    ) -> Result<Response, FetchFailure> {
        // Its host and port may reach private addresses (the same service);
        // only its origin gets the user's secrets: a redirect from `https`
        // to `http` on the same host and port would send them in clear.
        let same_socket = url.host() == origin.host()
            && url.port_or_known_default() == origin.port_or_known_default();
        let same = url.origin() == origin.origin();
        // An input's own `user:pass@` goes to its origin only, never across
        // a redirect elsewhere, and never in a URL that is printed.
        let own_auth = same
            .then(|| credentials_of(origin))
            .flatten()
            .and_then(|(_, userpass)| basic_auth(&userpass).ok());
        // Callers normally pass `url` without credentials already; strip
        // (and copy) only when it has some.
        let stripped;
        let url = if credentials_of(url).is_some() {
            let mut bare = url.clone();
            let _ = take_credentials(&mut bare);
            stripped = bare;
            &stripped
        } else {
            url
        };
        self.send(
            url,
            keep,
            same_socket,
            same || self.config.headers_everywhere,
            own_auth.as_ref(),
            Ask {
                validators,
                head: false,
            },
        )
        .await
    }

    async fn send(
        &self,
        url: &Url,
        keep: Keep,
        named: bool,
        with_headers: bool,
        own_auth: Option<&HeaderValue>,
        ask: Ask<'_>,
    ) -> Result<Response, FetchFailure> {
        let validators = ask.validators;
        let started = chrono::Utc::now();
        address::check_url(url, allow_internal(&self.config, named)).map_err(blocked)?;
        let index = match &self.pool {
            Some(pool) => pool
                // host[:port]: a sticky host keeps its proxy per port, as
                // the politeness rules count hosts.
                .acquire(url.authority())
                .await
                .map_err(route::proxy_failure)?,
            None => 0,
        };
        let route = &self.routes[index];
        let clients = route.client(&self.config, self.jar.clone(), named).await?;
        let conditional = validators.map_or_else(Vec::new, conditional_headers);
        // Until the body is read: this host's connections stay open meanwhile.
        let _busy = self.sockets.busy(url);
        let sent_at = tokio::time::Instant::now();
        let resp = match &clients.direct {
            // Plain HTTP with no proxy and no jar: see `direct`. The future
            // is made in a statement of its own, so the task waiting on it
            // keeps no room for the headers it was given.
            Some(direct) if url.scheme() == "http" => {
                let sending = direct.send(
                    url,
                    ask.head,
                    self.extra_headers(url, with_headers, own_auth, &conditional),
                );
                answer::Answer::Direct(sending.await?)
            }
            _ => {
                let client = &clients.reqwest;
                let request = if ask.head {
                    client.head(url.as_str())
                } else {
                    client.get(url.as_str())
                };
                let extra = self.extra_headers(url, with_headers, own_auth, &conditional);
                let sent = request.headers(extra).send().await;
                answer::Answer::Reqwest(match &self.pool {
                    Some(pool) => route::judge(pool, route, index, sent, sent_at.elapsed())?,
                    None => sent.map_err(|e| classify(&e))?,
                })
            }
        };
        // Boxed: while a request waits for its response head (the long wait on a
        // slow server) its task need not keep room for reading the body.
        let sent = Sent {
            started,
            with_headers,
            conditional,
        };
        let mut response = Box::pin(self.receive(url, keep, sent, resp)).await?;
        response.proxy = route.shown.clone();
        Ok(response)
    }

    /// A request's own headers, before the client's defaults: the user's
    /// (when `with_headers`), `Authorization` (an input's own credentials or
    /// the site's, unless the user's headers set one), then `conditional`.
    fn extra_headers(
        &self,
        url: &Url,
        with_headers: bool,
        own_auth: Option<&HeaderValue>,
        conditional: &[(header::HeaderName, HeaderValue)],
    ) -> HeaderMap {
        let mut extra = if with_headers && !self.headers.is_empty() {
            HeaderMap::clone(&self.headers)
        } else {
            HeaderMap::new()
        };
        if let Some(auth) = own_auth.or_else(|| self.site_auth_for(url))
            && !(with_headers && self.headers.contains_key(header::AUTHORIZATION))
        {
            extra.append(header::AUTHORIZATION, auth.clone());
        }
        for (name, value) in conditional {
            extra.append(name, value.clone());
        }
        extra
    }

    /// The Basic credentials a root URL gave for `url`'s origin (an input's
    /// own `user:pass@` is `send`'s `own_auth`).
    fn site_auth_for(&self, url: &Url) -> Option<&HeaderValue> {
        if self.site_auth.is_empty() {
            return None;
        }
        self.site_auth.get(&origin::origin_key(url))
    }

    /// The rest of [`Fetcher::get`], once the response head has arrived.
    async fn receive(
        &self,
        url: &Url,
        keep: Keep,
        sent: Sent,
        resp: answer::Answer,
    ) -> Result<Response, FetchFailure> {
        let status = resp.status();
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
            request_head: request_head(url, &self.config, sent.with_headers, &sent.conditional),
            response_head: response_head(status, version, &headers),
            body_sha1: Some(exchange::sha1_of(body.as_deref().unwrap_or_default())),
            body: body.clone().unwrap_or_default(),
            decoded_body: None,
            truncated,
            remote_addr,
            http_version: version,
            started: sent.started,
            revisit: None,
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
            proxy: None,
        })
    }

    /// Streams the body up to the size cap; keeps it only when asked. A longer
    /// body is cut at the cap (the rest is never read): the part read is still
    /// a page with links, as with Googlebot's first 15 MB and Heritrix's
    /// `WARC-Truncated: length`.
    async fn read_body(&self, mut resp: answer::Answer, keep: bool) -> Result<Body, FetchFailure> {
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
        let mut pace = pace::Pace::new(self.config.min_transfer_rate, self.config.read_timeout);
        while let Some(chunk) = resp.chunk().await? {
            pace.arrived(chunk.len())?;
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

/// What a request asks beyond a plain GET.
#[derive(Clone, Copy, Default)]
struct Ask<'a> {
    /// Made conditional on an earlier fetch's validators.
    validators: Option<&'a Validators>,
    /// A HEAD instead of a GET.
    head: bool,
}

/// What [`Fetcher::send`] put on the wire that the archived request head
/// must show.
struct Sent {
    /// When the request was sent.
    started: chrono::DateTime<chrono::Utc>,
    /// The user's headers went with it.
    with_headers: bool,
    /// The conditional headers it carried (see [`conditional_headers`]).
    conditional: Vec<(header::HeaderName, HeaderValue)>,
}

/// The conditional headers `validators` make: `If-None-Match` for an `ETag`,
/// `If-Modified-Since` for a `Last-Modified`. A value that is not a valid
/// header (it came from a header, so only a damaged store gives one) is left
/// out, which just makes the request plain. Built once, so the request and
/// its archived head carry the same ones.
fn conditional_headers(v: &Validators) -> Vec<(header::HeaderName, HeaderValue)> {
    let valid = |name, value: &Option<String>| {
        let value = HeaderValue::from_str(value.as_deref()?).ok()?;
        Some((name, value))
    };
    [
        valid(header::IF_NONE_MATCH, &v.etag),
        valid(header::IF_MODIFIED_SINCE, &v.last_modified),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Whether a request may reach loopback and private addresses.
pub(super) fn allow_internal(config: &FetchConfig, named: bool) -> bool {
    match config.private_access {
        PrivateAccess::Allow => true,
        PrivateAccess::Deny => false,
        PrivateAccess::Named => named,
    }
}

/// A refused request as a recorded failure.
fn blocked(b: Blocked) -> FetchFailure {
    FetchFailure {
        kind: crate::base::outcome::ErrorKind::Blocked,
        message: b.to_string(),
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

    /// The wiring of the direct path (`direct`): a fetcher's clients for
    /// named and other hosts both carry it when nothing needs reqwest, and
    /// neither does with a cookie jar or a proxy. Without this test the
    /// other tests of both paths would pass if plain HTTP quietly went
    /// through reqwest again, and only the memory benchmark would notice.
    #[tokio::test]
    async fn plain_http_goes_direct_unless_a_jar_or_a_proxy_needs_reqwest() {
        let has_direct = |config: FetchConfig| async {
            let fetcher = Fetcher::new(config).unwrap();
            let route = &fetcher.routes[0];
            let other = route.client(&fetcher.config, None, false).await.unwrap();
            (route.named.direct.is_some(), other.direct.is_some())
        };
        // The default address policy tells named hosts from others, so the
        // second client is built too.
        let plain = FetchConfig::default();
        if direct::applies(&plain) {
            assert_eq!(has_direct(plain).await, (true, true));
        } else {
            eprintln!(
                "NOTE: a proxy variable is set in this environment, so plain HTTP \
                 goes through reqwest here; the direct path's wiring is checked \
                 with a jar and a proxy only"
            );
        }
        let jar = FetchConfig {
            cookies: true,
            ..FetchConfig::default()
        };
        assert_eq!(has_direct(jar).await, (false, false));
        let proxy = FetchConfig {
            proxy: Some("http://127.0.0.1:9".into()),
            ..FetchConfig::default()
        };
        assert_eq!(has_direct(proxy).await, (false, false));
    }
}
