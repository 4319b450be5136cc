//! Building the reqwest client a [`Fetcher`](super::Fetcher) sends through: no
//! redirects, no retries, no content decoding of its own, and a resolver that
//! applies the address policy (see [`address`](super::address)), and every
//! connection under the fetcher's cap (see `sockets`).

use super::{FetchConfig, FetchSetupError, address, head};

/// The clients of one way out for one address policy: reqwest's, and the
/// direct path's for plain-HTTP requests when it applies (no proxy, no
/// cookie jar; see [`direct`](super::direct)).
#[derive(Clone, Debug)]
pub(super) struct Clients {
    pub(super) reqwest: reqwest::Client,
    pub(super) direct: Option<super::direct::Direct>,
}

/// One client of a [`Fetcher`](super::Fetcher): its resolver allows internal
/// addresses or not; it sends through `proxy` (a pool member or the single
/// configured proxy), or directly when `None`.
pub(super) fn build(
    config: &FetchConfig,
    allow_internal: bool,
    jar: Option<std::sync::Arc<super::cookie_jar::CookieJar>>,
    proxy: Option<&str>,
    tls: Option<&SharedTls>,
    dns: &std::sync::Arc<crate::fetch::dns::Dns>,
    sockets: &super::sockets::Sockets,
) -> Result<Clients, FetchSetupError> {
    let defaults = super::direct::default_headers(&config.user_agent)?;
    // Every proxy the user gave, not only this client's: the resolver is
    // per client, the rule ("proxies are the user's choice") is not.
    let given = config
        .proxy
        .iter()
        .chain(&config.proxy_list)
        .map(String::as_str);
    let proxy_hosts = address::proxy_hosts(given);
    let resolver = address::GuardedResolver::new(allow_internal, proxy_hosts, dns.clone());
    // `applies` also says no for a proxy (this client's comes from the
    // config) or a jar (given when the config keeps cookies).
    let direct = super::direct::applies(config)
        .then(|| super::direct::Direct::new(config, resolver.clone(), defaults.clone(), sockets));
    let mut builder = reqwest::Client::builder()
        .default_headers(defaults)
        .dns_resolver(resolver)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(config.connect_timeout)
        .read_timeout(config.read_timeout)
        .timeout(config.total_timeout)
        .tcp_nodelay(true)
        .pool_idle_timeout(config.pool_idle_timeout)
        .connector_layer(super::sockets::CapLayer::new(sockets.clone()))
        .danger_accept_invalid_certs(config.insecure)
        // skitter retries on its own (backoff, Retry-After, attempts in the
        // record). reqwest's layer would resend HTTP/2 refusals unrecorded, and
        // it keeps a copy of every request in flight in case it does.
        .retry(reqwest::retry::never().max_retries_per_request(0));
    if let Some(jar) = jar {
        builder = builder.cookie_provider(jar);
    }
    match (config.http1_only, config.http2_prior_knowledge) {
        (true, true) => return Err(FetchSetupError::Versions),
        (true, false) => builder = builder.http1_only(),
        (false, true) => builder = builder.http2_prior_knowledge(),
        (false, false) => {}
    }
    if let Some(tls) = tls {
        builder = builder.tls_backend_preconfigured(tls.0.clone());
    }
    if let Some(proxy) = proxy {
        let p = reqwest::Proxy::all(proxy).map_err(|source| FetchSetupError::Proxy {
            url: head::redact_proxy(proxy),
            source: Box::new(source),
        })?;
        builder = builder.proxy(p);
    }
    let reqwest = builder
        .build()
        .map_err(|e| FetchSetupError::Client(Box::new(e)))?;
    Ok(Clients { reqwest, direct })
}

/// The TLS settings the clients of a fetcher share, as reqwest would build
/// them: the platform's verifier (root certificates loaded once: it takes
/// milliseconds, and a proxy pool or a proxy check builds a client per proxy)
/// and ALPN for HTTP/2 and HTTP/1.1 (or HTTP/1.1 alone).
#[derive(Clone)]
pub(crate) struct SharedTls(rustls::ClientConfig);

impl std::fmt::Debug for SharedTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedTls")
    }
}

impl SharedTls {
    /// The shared settings for `config`; `None` with `insecure`, whose
    /// no-verification settings reqwest builds per client.
    pub(crate) fn new(config: &FetchConfig) -> Result<Option<SharedTls>, FetchSetupError> {
        use std::sync::Arc;
        if config.insecure {
            return Ok(None);
        }
        let provider = rustls::crypto::CryptoProvider::get_default()
            .cloned()
            .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
        let fail = |e: rustls::Error| FetchSetupError::Tls(e.to_string());
        let verifier = rustls_platform_verifier::Verifier::new(provider.clone()).map_err(fail)?;
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(fail)?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        tls.alpn_protocols = if config.http1_only {
            vec![b"http/1.1".to_vec()]
        } else {
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        };
        Ok(Some(SharedTls(tls)))
    }
}
