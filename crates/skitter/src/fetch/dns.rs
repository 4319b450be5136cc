//! Name resolution: one asynchronous, caching resolver (hickory) behind every
//! request of `crawl` and `fetch`, with its own cap on lookups in flight, and
//! the one place that tells DNS failures apart (NXDOMAIN, no data, SERVFAIL,
//! REFUSED, timeout) for them and for `probe`.
//!
//! The system's resolver (`getaddrinfo`) blocks a thread per lookup and caches
//! nothing; a broad crawl meeting thousands of new hosts would tie up the
//! blocking pool and ask the same names again and again. hickory talks to the
//! name servers of `/etc/resolv.conf` (or [`DnsConfig::servers`]) itself, caches
//! answers for their TTL (negative ones too), and reads `/etc/hosts`.
//! [`DnsConfig::overrides`] (curl's `--resolve`) answer for a host without
//! asking anyone, so tests and benchmarks can give any name a loopback address.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use hickory_resolver::TokioResolver;
use hickory_resolver::config::{ConnectionConfig, NameServerConfig, ResolverConfig};
use hickory_resolver::lookup_ip::LookupIp;
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::net::{DnsError, NetError, NoRecords};
use hickory_resolver::proto::op::ResponseCode;
use tokio::sync::Semaphore;

/// How names are resolved.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct DnsConfig {
    /// Name servers to ask (`IP:port`); `None` uses the system's
    /// (`/etc/resolv.conf`).
    pub servers: Option<Vec<SocketAddr>>,
    /// Fixed answers, host (lowercase) → addresses, asked of no server (curl's
    /// `--resolve`). The user named these hosts, so the address policy treats
    /// them as named (see [`crate::fetch::PrivateAccess::Named`]).
    pub overrides: Vec<(String, IpAddr)>,
    /// Lookups in flight at most (default 64); more wait their turn.
    pub max_lookups: usize,
    /// How long one lookup may take (default 5 s).
    pub timeout: Duration,
    /// Names the cache keeps (default 32,768; answers expire with their TTL).
    pub cache_size: u64,
}

impl Default for DnsConfig {
    fn default() -> Self {
        DnsConfig {
            servers: None,
            overrides: Vec::new(),
            max_lookups: 64,
            timeout: Duration::from_secs(5),
            cache_size: 32_768,
        }
    }
}

/// Why a name gave no address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// NXDOMAIN: the name does not exist.
    NxDomain,
    /// The name exists but has no address records.
    NoData,
    /// No answer within the timeout.
    Timeout,
    /// SERVFAIL: the server could not answer (often transient).
    ServFail,
    /// REFUSED: the server will not answer us.
    Refused,
    /// Anything else: another response code, a network or protocol error.
    Other(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::NxDomain => f.write_str("no such domain (NXDOMAIN)"),
            Failure::NoData => f.write_str("the name has no address records"),
            Failure::Timeout => f.write_str("no answer from the name server (timeout)"),
            Failure::ServFail => f.write_str("the name server failed (SERVFAIL)"),
            Failure::Refused => f.write_str("the name server refused the query (REFUSED)"),
            Failure::Other(why) => f.write_str(why),
        }
    }
}

/// A lookup that gave no address; a page's failure of kind `dns`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot resolve {host}: {failure}")]
pub struct LookupError {
    /// The name looked up.
    pub host: String,
    /// Why it gave no address.
    pub failure: Failure,
}

/// What hickory's error says about the name.
pub(crate) fn classify(err: &NetError) -> Failure {
    match err {
        NetError::Timeout => Failure::Timeout,
        NetError::Dns(DnsError::NoRecordsFound(NoRecords { response_code, .. })) => {
            match *response_code {
                ResponseCode::NXDomain => Failure::NxDomain,
                ResponseCode::NoError => Failure::NoData,
                code => classify_code(code),
            }
        }
        NetError::Dns(DnsError::ResponseCode(code)) => classify_code(*code),
        other => Failure::Other(other.to_string()),
    }
}

fn classify_code(code: ResponseCode) -> Failure {
    match code {
        ResponseCode::ServFail => Failure::ServFail,
        ResponseCode::Refused => Failure::Refused,
        other => Failure::Other(format!("server answered {}", other.to_str())),
    }
}

/// A resolver builder asking `servers`, or the system's name servers.
pub(crate) fn resolver_builder(
    servers: Option<&[SocketAddr]>,
) -> Result<hickory_resolver::ResolverBuilder<TokioRuntimeProvider>, NetError> {
    Ok(match servers {
        Some(servers) => TokioResolver::builder_with_config(
            ResolverConfig::from_name_servers(servers.iter().map(|a| nameserver(*a)).collect()),
            TokioRuntimeProvider::default(),
        ),
        None => TokioResolver::builder_tokio()?,
    })
}

/// UDP first, TCP for truncated answers, on the given port.
fn nameserver(addr: SocketAddr) -> NameServerConfig {
    let mut udp = ConnectionConfig::udp();
    udp.port = addr.port();
    let mut tcp = ConnectionConfig::tcp();
    tcp.port = addr.port();
    NameServerConfig::new(addr.ip(), true, vec![udp, tcp])
}

/// The resolver of a fetcher: hickory behind a cap on lookups in flight, with
/// the fixed answers first.
#[derive(Debug)]
pub(crate) struct Dns {
    resolver: TokioResolver,
    overrides: HashMap<String, Vec<IpAddr>>,
    permits: Semaphore,
    timeout: Duration,
    /// One lookup per name at a time: a burst of links to a new host asks
    /// once, and the others find the answer in the cache.
    inflight: std::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// A lookup's share of a name's entry in [`Dns::inflight`]: dropped, it
/// removes the entry when no one else waits on the name, so a cancelled
/// lookup leaves nothing behind.
struct InflightEntry<'a> {
    dns: &'a Dns,
    key: &'a str,
    turn: Arc<tokio::sync::Mutex<()>>,
}

impl Drop for InflightEntry<'_> {
    fn drop(&mut self) {
        let mut inflight = self.dns.inflight.lock().unwrap_or_else(|e| e.into_inner());
        // The map's own clone and ours: no one else waits on this name.
        if Arc::strong_count(&self.turn) <= 2 {
            inflight.remove(self.key);
        }
    }
}

/// The resolver could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("cannot set up name resolution: {0}")]
pub struct DnsSetupError(#[source] NetError);

impl Dns {
    pub(crate) fn new(config: &DnsConfig) -> Result<Dns, DnsSetupError> {
        let mut builder = match resolver_builder(config.servers.as_deref()) {
            Ok(builder) => builder,
            // A machine without a usable /etc/resolv.conf (a bare container)
            // still resolves its hosts file and the fixed answers; other names
            // fail as pages, not the whole run.
            Err(e) if config.servers.is_none() => {
                tracing::warn!(
                    "no system name servers ({e}); only /etc/hosts and --resolve answer"
                );
                resolver_builder(Some(&[])).map_err(DnsSetupError)?
            }
            Err(e) => return Err(DnsSetupError(e)),
        };
        let opts = builder.options_mut();
        opts.timeout = config.timeout;
        opts.cache_size = config.cache_size;
        // A first, AAAA only for names without an IPv4 address: one query per
        // name for most of the web, where asking both would double the load.
        opts.ip_strategy = hickory_resolver::config::LookupIpStrategy::Ipv4thenIpv6;
        // An answer without a negative TTL (no SOA) would not be cached at all,
        // and a broad crawl would ask again for every connection.
        opts.negative_min_ttl = Some(Duration::from_secs(30));
        opts.max_active_requests = opts.max_active_requests.max(config.max_lookups);
        let resolver = builder.build().map_err(DnsSetupError)?;
        let mut overrides: HashMap<String, Vec<IpAddr>> = HashMap::new();
        for (host, addr) in &config.overrides {
            overrides
                .entry(host.trim_end_matches('.').to_ascii_lowercase())
                .or_default()
                .push(*addr);
        }
        Ok(Dns {
            resolver,
            overrides,
            permits: Semaphore::new(config.max_lookups.max(1)),
            timeout: config.timeout,
            inflight: std::sync::Mutex::new(HashMap::new()),
        })
    }

    /// The addresses of `host` (a domain name, not an IP literal).
    pub(crate) async fn lookup(&self, host: &str) -> Result<Vec<IpAddr>, LookupError> {
        let key = host.trim_end_matches('.').to_ascii_lowercase();
        if let Some(fixed) = self.overrides.get(&key) {
            return Ok(fixed.clone());
        }
        let turn = self
            .inflight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key.clone())
            .or_default()
            .clone();
        // Cleans up whether the lookup ends or is dropped half-way (its
        // request timed out or was stopped).
        let entry = InflightEntry {
            dns: self,
            key: &key,
            turn,
        };
        let _turn = entry.turn.lock().await;
        self.resolve(&key, host).await
    }

    async fn resolve(&self, key: &str, host: &str) -> Result<Vec<IpAddr>, LookupError> {
        let fail = |failure| LookupError {
            host: host.to_owned(),
            failure,
        };
        // The semaphore is never closed.
        let _permit = self.permits.acquire().await;
        match self.addresses(self.resolver.lookup_ip(key)).await {
            Err(Failure::NoData) => {}
            done => return done.map_err(fail),
        }
        // "No address records" is hickory's answer to the AAAA query it asks
        // after a failed A query, and hides why the A query failed. A
        // transient failure of A (SERVFAIL, a timeout) must stay transient —
        // retried, and a robots.txt unavailable rather than absent — not
        // become a host that does not exist. Asking A once more tells them
        // apart, and costs a query only for names that gave no address.
        let a_only = async { Ok(LookupIp::from(self.resolver.ipv4_lookup(key).await?)) };
        self.addresses(a_only).await.map_err(|failure| {
            fail(match failure {
                Failure::NxDomain => Failure::NoData,
                other => other,
            })
        })
    }

    /// The addresses a lookup found, or why it found none. hickory applies
    /// the timeout per query; this bounds the whole lookup.
    async fn addresses(
        &self,
        lookup: impl Future<Output = Result<LookupIp, NetError>>,
    ) -> Result<Vec<IpAddr>, Failure> {
        match tokio::time::timeout(self.timeout * 2, lookup).await {
            Err(_) => Err(Failure::Timeout),
            Ok(Err(e)) => Err(classify(&e)),
            Ok(Ok(found)) => {
                let addrs: Vec<IpAddr> = found.iter().collect();
                if addrs.is_empty() {
                    Err(Failure::NoData)
                } else {
                    Ok(addrs)
                }
            }
        }
    }

    /// The hosts with fixed answers (the user named them).
    pub(crate) fn overridden(&self) -> impl Iterator<Item = &str> {
        self.overrides.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inflight(dns: &Dns) -> usize {
        dns.inflight.lock().unwrap().len()
    }

    /// A lookup dropped while it waits (its request timed out) leaves no
    /// entry behind, and the name is looked up again as usual.
    #[tokio::test(start_paused = true)]
    async fn a_cancelled_lookup_leaves_no_inflight_entry() {
        let dns = Dns::new(&DnsConfig {
            servers: Some(Vec::new()),
            max_lookups: 1,
            ..DnsConfig::default()
        })
        .unwrap();
        // Every permit taken: the lookups below wait until cancelled.
        let permit = dns.permits.acquire().await.unwrap();
        let first = tokio::time::timeout(Duration::from_secs(1), dns.lookup("localhost"));
        assert!(first.await.is_err(), "the lookup waits for a permit");
        assert_eq!(inflight(&dns), 0);
        // One cancelled while another waits for the same name.
        let waiting = dns.lookup("localhost");
        let cancelled = dns.lookup("localhost");
        let both = async {
            tokio::join!(waiting, async {
                let _ = tokio::time::timeout(Duration::from_secs(1), cancelled).await;
            })
        };
        let outcome = tokio::time::timeout(Duration::from_secs(2), both).await;
        assert!(outcome.is_err());
        assert_eq!(inflight(&dns), 0);
        drop(permit);
        // With no name server, only /etc/hosts answers; either way it ends.
        let _ = dns.lookup("localhost").await;
        assert_eq!(inflight(&dns), 0);
    }
}
