//! The way out a request takes: directly, or through one proxy of the pool.
//! One [`Route`] per proxy (reqwest fixes the proxy per client), each with its
//! clients, and the rule that tells a proxy's failure from the site's answer.
//!
//! A proxy failed a request when no response head came back through it (a
//! connect error, a timeout, a reset; a CONNECT tunnel the proxy refused,
//! which reqwest reports as a connect error, its 407 included), or when the
//! response is its own: a `407` always is; a `403` or `5xx` is when the proxy
//! marks it as its own error (an RFC 9209 `Proxy-Status` header with an
//! `error` parameter, or squid's `X-Squid-Error`), since a forwarded site may
//! answer 403 or 503 itself. Address-policy refusals and TLS errors with the
//! site are the site's. Such a failure becomes the [`ErrorKind::Proxy`]
//! failure of the request, retried through the crawl's usual retry path (on
//! another proxy, as the pool benches this one).

use std::sync::Arc;

use reqwest::header::HeaderMap;

use super::client::SharedTls;
use super::proxy_pool::{ProxyPool, scrub, shown_proxy};
use super::{FetchConfig, FetchSetupError, allow_internal, classify, client};
use crate::base::outcome::{ErrorKind, FetchFailure};

/// The clients of one way out: for named hosts, and for the others (built on
/// first use when the address policy tells them apart; see
/// [`Fetcher`](super::Fetcher)).
pub(super) struct Route {
    /// The proxy as given (credentials included), `None` for a direct route.
    proxy: Option<String>,
    /// The proxy as shown, credentials removed.
    pub(super) shown: Option<String>,
    pub(super) named: client::Clients,
    other: tokio::sync::OnceCell<client::Clients>,
    tls: Option<SharedTls>,
    dns: Arc<crate::fetch::dns::Dns>,
    sockets: super::sockets::Sockets,
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Route").field("proxy", &self.shown).finish()
    }
}

impl Route {
    /// The route through `proxy` (or the configured single proxy, or none).
    pub(super) fn new(
        config: &FetchConfig,
        proxy: Option<&str>,
        jar: Option<Arc<super::cookie_jar::CookieJar>>,
        tls: Option<SharedTls>,
        dns: Arc<crate::fetch::dns::Dns>,
        sockets: super::sockets::Sockets,
    ) -> Result<Route, FetchSetupError> {
        let named = client::build(
            config,
            allow_internal(config, true),
            jar,
            proxy,
            tls.as_ref(),
            &dns,
            &sockets,
        )?;
        let other = if allow_internal(config, true) == allow_internal(config, false) {
            tokio::sync::OnceCell::new_with(Some(named.clone()))
        } else {
            tokio::sync::OnceCell::new()
        };
        Ok(Route {
            proxy: proxy.map(str::to_owned),
            shown: proxy.map(shown_proxy),
            named,
            other,
            tls,
            dns,
            sockets,
        })
    }

    /// The client for a request to a named host or not.
    pub(super) async fn client(
        &self,
        config: &FetchConfig,
        jar: Option<Arc<super::cookie_jar::CookieJar>>,
        named: bool,
    ) -> Result<&client::Clients, FetchFailure> {
        if named {
            return Ok(&self.named);
        }
        let build = || async {
            client::build(
                config,
                allow_internal(config, false),
                jar,
                self.proxy.as_deref(),
                self.tls.as_ref(),
                &self.dns,
                &self.sockets,
            )
        };
        // The same settings built the first client, so this hardly can fail;
        // if it does, the request fails rather than falling back to that client.
        self.other
            .get_or_try_init(build)
            .await
            .map_err(|e| FetchFailure {
                kind: ErrorKind::Other,
                message: e.to_string(),
            })
    }
}

/// What a request sent through proxy `i` of `pool` came to, the pool told
/// (see the module header).
pub(super) fn judge(
    pool: &ProxyPool,
    route: &Route,
    i: usize,
    sent: Result<reqwest::Response, reqwest::Error>,
    latency: std::time::Duration,
) -> Result<reqwest::Response, FetchFailure> {
    let shown = pool.shown(i);
    match sent {
        Err(e) => {
            let failure = classify(&e);
            if matches!(failure.kind, ErrorKind::Blocked | ErrorKind::Tls) {
                return Err(failure);
            }
            pool.failed(i);
            let message = format!("proxy {shown}: {}: {}", failure.kind, failure.message);
            // reqwest never prints proxy credentials; this keeps it so.
            let message = match &route.proxy {
                Some(proxy) => scrub(&message, proxy),
                None => message,
            };
            Err(proxy_failure(message))
        }
        Ok(resp) if is_proxys_own(resp.status().as_u16(), resp.headers()) => {
            pool.failed(i);
            Err(proxy_failure(format!(
                "proxy {shown} answered {}",
                resp.status()
            )))
        }
        Ok(resp) => {
            pool.succeeded(i, latency);
            Ok(resp)
        }
    }
}

/// A request that every proxy failed or could not be tried on.
pub(super) fn proxy_failure(message: String) -> FetchFailure {
    FetchFailure {
        kind: ErrorKind::Proxy,
        message,
    }
}

/// Whether a response forwarded by an HTTP proxy is the proxy's own refusal.
pub(super) fn is_proxys_own(status: u16, headers: &HeaderMap) -> bool {
    if status == 407 {
        return true;
    }
    if status != 403 && !(500..600).contains(&status) {
        return false;
    }
    let marked = headers.get_all("proxy-status").iter().any(|v| {
        v.to_str().is_ok_and(|v| {
            v.split(';')
                .any(|param| param.trim().to_ascii_lowercase().starts_with("error="))
        })
    });
    marked || headers.contains_key("x-squid-error")
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn which_answers_are_the_proxys() {
        let with = |name: &'static str, value: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(name, HeaderValue::from_static(value));
            h
        };
        let plain = HeaderMap::new();
        let marked = with("proxy-status", "p1; error=http_request_denied");
        let detail_only = with("proxy-status", "p1; received-status=503");
        let squid = with("x-squid-error", "ERR_ACCESS_DENIED 0");
        let cases: &[(u16, &HeaderMap, bool)] = &[
            (407, &plain, true),
            (403, &plain, false),
            (503, &plain, false),
            (200, &marked, false),
            (404, &marked, false),
            (403, &marked, true),
            (502, &marked, true),
            (503, &detail_only, false),
            (403, &squid, true),
        ];
        for (status, headers, want) in cases {
            assert_eq!(
                is_proxys_own(*status, headers),
                *want,
                "{status} {headers:?}"
            );
        }
    }
}
