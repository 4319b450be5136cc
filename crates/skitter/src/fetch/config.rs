//! [`FetchConfig`]: every setting that shapes how requests are made, with
//! its defaults, and a `Debug` form that leaves secrets out.

use std::time::Duration;

use super::{PrivateAccess, ProxyBench, Rotation, head, proxy_pool};

/// How long an idle connection is kept for reuse unless told otherwise (5 s).
pub const DEFAULT_POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// Everything that shapes how requests are made. Defaults are documented per field.
/// Its `Debug` output leaves out header values and proxy credentials.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct FetchConfig {
    /// `User-Agent` header (default `skitter/<version>`).
    pub user_agent: String,
    /// Time allowed to open a connection, TLS included (default 10 s).
    pub connect_timeout: Duration,
    /// Longest silence while waiting for response bytes (default 30 s).
    pub read_timeout: Duration,
    /// Whole-attempt limit, body included (default 120 s).
    pub total_timeout: Duration,
    /// Slowest body accepted, in bytes per second, judged over each
    /// `read_timeout` of the body (default 100; 0 turns it off). A body that
    /// brings less than `min_transfer_rate × read_timeout` bytes in one such
    /// window fails the attempt as a timeout: a tarpit that sends a byte every
    /// few seconds is never silent long enough for `read_timeout`, and would
    /// otherwise hold its URL for the whole `total_timeout`, attempt after
    /// attempt.
    pub min_transfer_rate: u64,
    /// Bodies are read up to this many bytes and the rest cut off (the response
    /// is then marked truncated); decoded bodies are capped at the same size
    /// (default 10 MiB).
    pub max_body_size: u64,
    /// Speak only HTTP/1.1 (default false: HTTP/2 when the server offers it by ALPN).
    pub http1_only: bool,
    /// Speak HTTP/2 from the first byte, without asking (default false): over
    /// plain `http://` that is h2c with prior knowledge (RFC 9113 §3.3), which
    /// a server must have said it speaks, since one that does not fails every
    /// request. Many requests then share each connection, so
    /// [`FetchConfig::max_connections`] may be far below the requests in flight
    /// (an internal API, a service mesh, a test site). Not with `http1_only`.
    pub http2_prior_knowledge: bool,
    /// Accept invalid TLS certificates (default false).
    pub insecure: bool,
    /// A proxy for all requests (`http://`, `https://`, `socks5://`);
    /// ignored when [`FetchConfig::proxy_list`] is not empty.
    pub proxy: Option<String>,
    /// A pool of proxies requests rotate over (see [`proxy_pool`]); empty by
    /// default. Each request goes through one of them; one that fails is
    /// benched and the request fails as [`ErrorKind::Proxy`](crate::base::outcome::ErrorKind::Proxy),
    /// to be retried on another.
    pub proxy_list: Vec<String>,
    /// How requests are spread over [`FetchConfig::proxy_list`] (default round-robin).
    pub proxy_rotation: Rotation,
    /// How long a failing proxy of the pool is benched (default 1 s doubling to 60 s).
    pub proxy_bench: ProxyBench,
    /// Where the pool also adds each proxy's counts, for a reporter outside
    /// this process's report (a shared crawl's crawl-wide totals); none by default.
    // Wiring of this process, not a setting: never stored in a spec.
    #[serde(skip)]
    pub proxy_ledger: Option<std::sync::Arc<super::ProxyLedger>>,
    /// Keep a cookie jar for the crawl (default false).
    pub cookies: bool,
    /// Extra headers, sent only with requests to the origins the user named:
    /// [`FetchConfig::named_origins`] for [`Fetcher::get`](super::Fetcher::get),
    /// the input's own for [`Fetcher::get_from`](super::Fetcher::get_from).
    pub headers: Vec<(String, String)>,
    /// Send [`FetchConfig::headers`] with every request, other hosts (a
    /// crawl spanning hosts, a redirect elsewhere) included (default false).
    pub headers_everywhere: bool,
    /// Keep `Authorization`, `Proxy-Authorization` and `Cookie` values of
    /// [`FetchConfig::headers`] in archived request heads (default false:
    /// they read `[redacted]`).
    pub keep_credentials: bool,
    /// Names of [`FetchConfig::headers`] (any case) whose values archived
    /// request heads keep; every other one reads `[redacted]` there (default
    /// none). The headers skitter sends itself (`User-Agent`, `Accept`,
    /// conditional headers) are always archived as sent.
    pub archive_headers: Vec<String>,
    /// Who may reach loopback and private addresses (default
    /// [`PrivateAccess::Named`]). Link-local and metadata addresses are never
    /// reached (see [`address`](super::address)).
    pub private_access: PrivateAccess,
    /// The origins the user named (a crawl's roots), as URLs whose scheme,
    /// host and port count (`https://example.com`, `http://127.0.0.1:8080/`):
    /// [`Fetcher::get`](super::Fetcher::get) sends [`FetchConfig::headers`]
    /// to them only (unless [`FetchConfig::headers_everywhere`]), and with
    /// [`PrivateAccess::Named`] requests to their host and port (any scheme)
    /// may reach private addresses. Empty by default: no request carries the
    /// headers.
    pub named_origins: Vec<String>,
    /// Hosts (lowercase) named for every port: with [`PrivateAccess::Named`],
    /// requests to any port of them may reach private addresses. `--resolve`
    /// hosts are added here (the user gave the address); a crawl's roots go
    /// in [`FetchConfig::named_origins`], which allows only their own ports.
    pub named_hosts: Vec<String>,
    /// Credentials a root URL carried (`https://user:pass@host/`), as `(origin,
    /// "user:pass")` with the origin as `https://host[:port]` (the port left
    /// out when it is the scheme's default): sent as HTTP Basic
    /// `Authorization` with requests to that origin only, scheme included
    /// (unless a `--header` sets `Authorization` itself),
    /// and never kept in a URL, so no report, output or log can print them.
    pub site_credentials: Vec<(String, String)>,
    /// How names are resolved (name servers, fixed answers, lookups in flight).
    pub dns: crate::fetch::dns::DnsConfig,
    /// How long a connection is kept open, idle, for the next request to its
    /// host (default [`DEFAULT_POOL_IDLE_TIMEOUT`]). A busy host reuses its
    /// connections long before; in a broad crawl, where most hosts are done
    /// after a few pages, each idle connection holds a socket and its buffers
    /// (several KB) until then.
    pub pool_idle_timeout: Duration,
    /// Most connections open at once, idle pooled ones included (default
    /// `None`: [`default_max_connections`](super::default_max_connections),
    /// from the open-file limit; the crawler's and the bulk fetcher's builders
    /// grow it to their requests in flight, and refuse more than the limit
    /// leaves room for: [`OpenFileLimit::connection_cap`](super::OpenFileLimit::connection_cap)).
    /// At the cap, a new connection first closes
    /// the idle connections of the host idle longest, or waits for one to
    /// close; the wait counts in [`FetchConfig::connect_timeout`].
    pub max_connections: Option<usize>,
}

impl FetchConfig {
    /// These settings as they may be shown: header values, site credentials
    /// and proxy credentials replaced by `[redacted]`.
    pub fn redacted(&self) -> FetchConfig {
        let mut shown = self.clone();
        for (_, value) in &mut shown.headers {
            *value = head::REDACTED.to_string();
        }
        for (_, secret) in &mut shown.site_credentials {
            *secret = head::REDACTED.to_string();
        }
        shown.proxy = self.proxy.as_deref().map(head::redact_proxy);
        shown.proxy_list = self
            .proxy_list
            .iter()
            .map(|p| head::redact_proxy(p))
            .collect();
        shown
    }
}

impl std::fmt::Debug for FetchConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(name, _)| (name.as_str(), head::REDACTED))
            .collect();
        f.debug_struct("FetchConfig")
            .field("user_agent", &self.user_agent)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("total_timeout", &self.total_timeout)
            .field("min_transfer_rate", &self.min_transfer_rate)
            .field("max_body_size", &self.max_body_size)
            .field("http1_only", &self.http1_only)
            .field("http2_prior_knowledge", &self.http2_prior_knowledge)
            .field("insecure", &self.insecure)
            .field("proxy", &self.proxy.as_deref().map(head::redact_proxy))
            .field(
                "proxy_list",
                &self
                    .proxy_list
                    .iter()
                    .map(|p| proxy_pool::shown_proxy(p))
                    .collect::<Vec<_>>(),
            )
            .field("proxy_rotation", &self.proxy_rotation)
            .field("proxy_bench", &self.proxy_bench)
            .field("proxy_ledger", &self.proxy_ledger.is_some())
            .field("cookies", &self.cookies)
            .field("headers", &headers)
            .field("headers_everywhere", &self.headers_everywhere)
            .field("keep_credentials", &self.keep_credentials)
            .field("archive_headers", &self.archive_headers)
            .field("private_access", &self.private_access)
            .field("pool_idle_timeout", &self.pool_idle_timeout)
            .field("max_connections", &self.max_connections)
            .field("named_origins", &self.named_origins)
            .field("named_hosts", &self.named_hosts)
            .field("dns", &self.dns)
            .finish()
    }
}

/// The default [`FetchConfig::min_transfer_rate`], in bytes per second: far
/// below any real link (a 56k modem brings 7,000), far above a tarpit's byte
/// every few seconds.
pub const DEFAULT_MIN_TRANSFER_RATE: u64 = 100;

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            user_agent: concat!("skitter/", env!("CARGO_PKG_VERSION")).to_string(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            total_timeout: Duration::from_secs(120),
            min_transfer_rate: DEFAULT_MIN_TRANSFER_RATE,
            max_body_size: 10 * 1024 * 1024,
            http1_only: false,
            http2_prior_knowledge: false,
            insecure: false,
            proxy: None,
            proxy_list: Vec::new(),
            proxy_rotation: Rotation::default(),
            proxy_bench: ProxyBench::default(),
            proxy_ledger: None,
            cookies: false,
            headers: Vec::new(),
            headers_everywhere: false,
            keep_credentials: false,
            archive_headers: Vec::new(),
            private_access: PrivateAccess::Named,
            named_origins: Vec::new(),
            named_hosts: Vec::new(),
            site_credentials: Vec::new(),
            dns: crate::fetch::dns::DnsConfig::default(),
            pool_idle_timeout: DEFAULT_POOL_IDLE_TIMEOUT,
            max_connections: None,
        }
    }
}
