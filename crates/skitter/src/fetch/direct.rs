//! The direct path: a plain-HTTP request with no proxy and no cookie jar goes
//! on hyper-util's client over a TCP connector of our own, not through
//! reqwest.
//!
//! Why: the crawler's thesis is that a request in flight is cheap, and on
//! reqwest each one kept about 4.7 KB it never needs here (heaptrack, 5,000
//! in flight): its boxed `Pending` with a copy of the headers, the redirect
//! layer's own copy of the request and of the client's service stack (this
//! client follows no redirects), a second box around hyper-util's future, and
//! each connection's stream boxed at the size of a TLS one. What reqwest does
//! for such a request is done here the same way: the default headers
//! (user agent, `Accept`, `Accept-Encoding`) after the request's own, the
//! resolver with the address policy ([`GuardedResolver`]), the connection
//! cap ([`Capped`]) inside the connect timeout, TCP keepalive and no Nagle, a
//! read timeout for the head and between body frames, and a total timeout
//! over head and body. HTTPS, proxies (given or from the environment) and
//! cookies stay on reqwest: its TLS, tunnels and jar are the reason to use
//! it, and a TLS connection's own state outweighs what this saves.
//!
//! Failures are read from the same typed causes as reqwest's
//! ([`super::classify_direct`]), so a refused connection, a reset, a timeout
//! or a blocked address is the same [`ErrorKind`](crate::base::outcome::ErrorKind)
//! on either path.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Empty;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use reqwest::header::{self, HeaderMap, HeaderValue};
use tokio::time::{Instant, Sleep};
use url::Url;

use super::address::GuardedResolver;
use super::sockets::{CapLayer, Capped, Sockets};
use super::{FetchConfig, FetchSetupError, classify_direct, decode};
use crate::base::outcome::FetchFailure;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The proxy variables reqwest reads for a plain-HTTP request; when one is
/// set, such requests go through reqwest, which honours it.
const HTTP_PROXY_VARS: [&str; 4] = ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];

/// Whether plain-HTTP requests may go direct under `config` (no proxy, no
/// cookie jar, no proxy in the environment).
pub(super) fn applies(config: &FetchConfig) -> bool {
    applies_with(config, |name| std::env::var_os(name))
}

/// [`applies`], with the environment read through `env`.
fn applies_with(config: &FetchConfig, env: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    config.proxy.is_none()
        && config.proxy_list.is_empty()
        && !config.cookies
        && !HTTP_PROXY_VARS
            .iter()
            .any(|v| env(v).is_some_and(|value| !value.is_empty()))
}

/// A client for plain-HTTP requests (see the module header).
#[derive(Clone)]
pub(super) struct Direct {
    client: Client<Timed<Capped<HttpConnector<Resolve>>>, Empty<Bytes>>,
    /// User agent, `Accept`, `Accept-Encoding`: added where a request has none.
    defaults: HeaderMap,
    read_timeout: Duration,
    total_timeout: Duration,
}

impl std::fmt::Debug for Direct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Direct").finish_non_exhaustive()
    }
}

impl Direct {
    /// The client for requests whose resolver allows internal addresses or
    /// not, as [`client::build`](super::client::build)'s.
    pub(super) fn new(
        config: &FetchConfig,
        resolver: GuardedResolver,
        defaults: HeaderMap,
        sockets: &Sockets,
    ) -> Direct {
        let mut http = HttpConnector::new_with_resolver(Resolve(std::sync::Arc::new(resolver)));
        http.set_nodelay(true);
        // reqwest's defaults, so both paths treat a silent peer alike.
        http.set_keepalive(Some(Duration::from_secs(15)));
        http.set_keepalive_interval(Some(Duration::from_secs(15)));
        http.set_keepalive_retries(Some(3));
        let capped = tower_layer::Layer::layer(&CapLayer::new(sockets.clone()), http);
        let connector = Timed {
            inner: capped,
            timeout: config.connect_timeout,
        };
        let mut builder = Client::builder(TokioExecutor::new());
        builder
            .timer(TokioTimer::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(config.pool_idle_timeout)
            .http2_only(config.http2_prior_knowledge);
        Direct {
            client: builder.build(connector),
            defaults,
            read_timeout: config.read_timeout,
            total_timeout: config.total_timeout,
        }
    }

    /// Sends a GET (or HEAD) for `url` with `headers` (the request's own; the
    /// defaults are added where missing) and returns the response, its body
    /// under the read and total timeouts.
    ///
    /// The request is built and handed to the client before the returned
    /// future is first polled, so that future keeps only the client's
    /// response future and the deadlines while the answer is awaited (an
    /// `async fn` would also keep room for the headers and the request).
    pub(super) fn send(
        &self,
        url: &Url,
        head: bool,
        headers: HeaderMap,
    ) -> impl Future<Output = Result<hyper::Response<DirectBody>, FetchFailure>> + Send + 'static
    {
        let started = Instant::now();
        let total = started + self.total_timeout;
        let head_by = total.min(started + self.read_timeout);
        let read = self.read_timeout;
        let sent = self
            .request(url, head, headers)
            .map(|request| self.client.request(request));
        async move {
            let response = match tokio::time::timeout_at(head_by, sent?).await {
                Ok(Ok(response)) => response,
                Ok(Err(e)) => return Err(classify_direct(&e, false)),
                Err(_) => return Err(timed_out("no response head within the timeout")),
            };
            Ok(response.map(|body| DirectBody {
                inner: body,
                sleep: Box::pin(tokio::time::sleep_until(total.min(Instant::now() + read))),
                total,
                read,
            }))
        }
    }

    /// The request for `url` with `headers`, the defaults added where
    /// missing.
    fn request(
        &self,
        url: &Url,
        head: bool,
        mut headers: HeaderMap,
    ) -> Result<hyper::Request<Empty<Bytes>>, FetchFailure> {
        for (name, value) in &self.defaults {
            if let header::Entry::Vacant(entry) = headers.entry(name) {
                entry.insert(value.clone());
            }
        }
        let uri: hyper::http::Uri =
            url.as_str()
                .parse()
                .map_err(|e: hyper::http::uri::InvalidUri| FetchFailure {
                    kind: crate::base::outcome::ErrorKind::Other,
                    message: format!("invalid URL for HTTP: {e}"),
                })?;
        let mut request = hyper::Request::new(Empty::new());
        *request.method_mut() = if head {
            hyper::http::Method::HEAD
        } else {
            hyper::http::Method::GET
        };
        *request.uri_mut() = uri;
        *request.headers_mut() = headers;
        Ok(request)
    }
}

/// The default headers of both paths (see [`client::build`](super::client::build)),
/// in the order reqwest's client keeps them.
pub(super) fn default_headers(user_agent: &str) -> Result<HeaderMap, FetchSetupError> {
    let mut defaults = HeaderMap::new();
    defaults.insert(
        header::ACCEPT,
        HeaderValue::from_static("text/html,application/xhtml+xml,*/*;q=0.8"),
    );
    defaults.insert(
        header::USER_AGENT,
        HeaderValue::from_str(user_agent)
            .map_err(|_| FetchSetupError::Header("User-Agent".into()))?,
    );
    defaults.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static(decode::ACCEPT_ENCODING),
    );
    Ok(defaults)
}

fn timed_out(what: &'static str) -> FetchFailure {
    classify_direct(
        &std::io::Error::new(std::io::ErrorKind::TimedOut, what),
        false,
    )
}

/// The address-policy resolver as hyper-util's connector asks for one.
#[derive(Clone)]
struct Resolve(std::sync::Arc<GuardedResolver>);

impl tower_service::Service<Name> for Resolve {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let resolver = self.0.clone();
        Box::pin(async move {
            let addrs = resolver
                .lookup(name.as_str())
                .await
                .map_err(|source| Box::new(ResolveFailed(source)) as BoxError)?;
            Ok(addrs.into_iter())
        })
    }
}

/// A failed name lookup, as reqwest's `is_dns` tells one (its cause says
/// more: a refusal of the address policy, or the resolver's answer).
#[derive(Debug, thiserror::Error)]
#[error("dns error")]
pub(super) struct ResolveFailed(#[source] BoxError);

/// The connect timeout over the whole connector, the wait for a place under
/// the cap included (as reqwest's).
#[derive(Clone)]
struct Timed<S> {
    inner: S,
    timeout: Duration,
}

impl<S> tower_service::Service<hyper::http::Uri> for Timed<S>
where
    S: tower_service::Service<hyper::http::Uri, Error = BoxError>,
    S::Future: Send + 'static,
    S::Response: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, uri: hyper::http::Uri) -> Self::Future {
        let connect = self.inner.call(uri);
        let timeout = self.timeout;
        Box::pin(async move {
            match tokio::time::timeout(timeout, connect).await {
                Ok(done) => done,
                Err(_) => Err(Box::new(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "connect timed out",
                )) as BoxError),
            }
        })
    }
}

/// A response body under the read timeout (between frames) and the total
/// timeout (since the request was sent); either ends it with a `TimedOut`
/// I/O error, which the failure's kind reads as a timeout.
pub(super) struct DirectBody {
    inner: Incoming,
    sleep: Pin<Box<Sleep>>,
    total: Instant,
    read: Duration,
}

impl Body for DirectBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let next = this.total.min(Instant::now() + this.read);
                this.sleep.as_mut().reset(next);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(Box::new(e)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => match this.sleep.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    let what = if Instant::now() >= this.total {
                        "the body did not arrive within the total timeout"
                    } else {
                        "no body data within the read timeout"
                    };
                    Poll::Ready(Some(Err(Box::new(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        what,
                    )))))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A proxy given, a proxy pool, a cookie jar or a plain-HTTP proxy in the
    /// environment each keep requests on reqwest; an empty variable and an
    /// HTTPS-only proxy (which plain HTTP does not use) do not.
    #[test]
    fn the_direct_path_applies_only_without_proxy_or_jar() {
        let none = |_: &str| None;
        let set = |var: &'static str, value: &'static str| {
            move |name: &str| (name == var).then(|| value.into())
        };
        assert!(applies_with(&FetchConfig::default(), none));
        let proxy = FetchConfig {
            proxy: Some("http://127.0.0.1:3128".into()),
            ..FetchConfig::default()
        };
        assert!(!applies_with(&proxy, none));
        let pool = FetchConfig {
            proxy_list: vec!["http://127.0.0.1:3128".into()],
            ..FetchConfig::default()
        };
        assert!(!applies_with(&pool, none));
        let jar = FetchConfig {
            cookies: true,
            ..FetchConfig::default()
        };
        assert!(!applies_with(&jar, none));
        for var in HTTP_PROXY_VARS {
            assert!(
                !applies_with(&FetchConfig::default(), set(var, "http://p:1")),
                "{var}"
            );
        }
        assert!(applies_with(&FetchConfig::default(), set("http_proxy", "")));
        assert!(applies_with(
            &FetchConfig::default(),
            set("HTTPS_PROXY", "http://p:1")
        ));
    }
}
