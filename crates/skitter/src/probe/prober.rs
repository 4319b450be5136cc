//! The prober: configuration, the resolver it drives, and the bounded
//! concurrent stream of probes.
//!
//! Concurrency is bounded by `buffer_unordered`: at most `concurrency` names are
//! in flight, the input stream is pulled only when a slot frees (so a huge input
//! is never held in memory), and results come out in completion order. Each
//! probe runs as its own task so the work spreads over all cores; dropping the
//! result stream aborts the probes still in flight.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use hickory_resolver::TokioResolver;
use hickory_resolver::config::{ResolveHosts, ResolverOpts};
use hickory_resolver::proto::rr::Name;
use tokio::time::Instant;
use tokio_util::task::AbortOnDropHandle;

use super::outcome::{TypeOutcome, classify_error, combine};
use super::{FailureKind, ProbeOutcome, ProbeResult, Record, RecordData, RecordType, parse_name};

/// Names probed at once unless the builder says otherwise.
pub const DEFAULT_CONCURRENCY: usize = 100;
/// Time allowed for one attempt at one query unless the builder says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// Further attempts after a timeout or SERVFAIL unless the builder says otherwise.
pub const DEFAULT_RETRIES: u32 = 2;

/// Why a [`Prober`] could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// `concurrency(0)` would never probe anything.
    #[error("concurrency must be at least 1")]
    ZeroConcurrency,
    /// `timeout(Duration::ZERO)` would fail every query.
    #[error("timeout must be greater than zero")]
    ZeroTimeout,
    /// `record_types` was given an empty list.
    #[error("at least one record type is needed")]
    NoRecordTypes,
    /// `nameservers` was given an empty list.
    #[error("at least one name server is needed")]
    NoNameservers,
    /// The system resolver configuration (`/etc/resolv.conf`) could not be read.
    #[error("cannot read the system resolver configuration: {0}")]
    SystemConfig(#[source] hickory_resolver::net::NetError),
    /// The resolver rejected its configuration.
    #[error("cannot build the resolver: {0}")]
    Resolver(#[source] hickory_resolver::net::NetError),
}

/// Settings gathered by [`ProberBuilder`].
#[derive(Debug, Clone)]
struct Config {
    concurrency: usize,
    timeout: Duration,
    retries: u32,
    nameservers: Option<Vec<SocketAddr>>,
    record_types: Vec<RecordType>,
}

/// Builds a [`Prober`]; start from [`Prober::builder`].
#[derive(Debug, Clone)]
pub struct ProberBuilder {
    config: Config,
}

impl ProberBuilder {
    /// Most names in flight at once (default [`DEFAULT_CONCURRENCY`]). Each
    /// name sends one query per record type.
    pub fn concurrency(mut self, n: usize) -> Self {
        self.config.concurrency = n;
        self
    }

    /// Time allowed for each attempt at each query (default [`DEFAULT_TIMEOUT`]).
    /// A name takes at most `timeout × (retries + 1)`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.config.timeout = timeout;
        self
    }

    /// Further attempts after a timeout or SERVFAIL (default [`DEFAULT_RETRIES`]).
    /// Other outcomes are final on the first answer.
    pub fn retries(mut self, retries: u32) -> Self {
        self.config.retries = retries;
        self
    }

    /// Name servers to ask instead of the system's (`/etc/resolv.conf`).
    pub fn nameservers(mut self, servers: Vec<SocketAddr>) -> Self {
        self.config.nameservers = Some(servers);
        self
    }

    /// Record types to ask for (default A and AAAA); duplicates are dropped.
    pub fn record_types(mut self, types: impl IntoIterator<Item = RecordType>) -> Self {
        let mut list: Vec<RecordType> = Vec::new();
        for t in types {
            if !list.contains(&t) {
                list.push(t);
            }
        }
        self.config.record_types = list;
        self
    }

    /// Checks the settings and creates the resolver.
    pub fn build(self) -> Result<Prober, ProbeError> {
        let config = self.config;
        if config.concurrency == 0 {
            return Err(ProbeError::ZeroConcurrency);
        }
        if config.timeout.is_zero() {
            return Err(ProbeError::ZeroTimeout);
        }
        if config.record_types.is_empty() {
            return Err(ProbeError::NoRecordTypes);
        }
        let resolver = build_resolver(&config)?;
        Ok(Prober {
            inner: Arc::new(Inner { resolver, config }),
        })
    }
}

/// Creates the hickory resolver. Retries are left to [`Prober`] so that only
/// transient failures are retried and `retries` means exactly what it says;
/// the hosts file is skipped because a probe asks DNS, not the local machine.
fn build_resolver(config: &Config) -> Result<TokioResolver, ProbeError> {
    if config.nameservers.as_ref().is_some_and(Vec::is_empty) {
        return Err(ProbeError::NoNameservers);
    }
    let mut builder = crate::fetch::dns::resolver_builder(config.nameservers.as_deref())
        .map_err(ProbeError::SystemConfig)?;
    let opts: &mut ResolverOpts = builder.options_mut();
    opts.timeout = config.timeout;
    opts.attempts = 0;
    opts.use_hosts_file = ResolveHosts::Never;
    // TCP connections are multiplexed; let one carry every query we may have
    // in flight so that truncated answers are never refused as "busy".
    let in_flight = config.concurrency.saturating_mul(config.record_types.len());
    opts.max_active_requests = opts.max_active_requests.max(in_flight);
    builder.build().map_err(ProbeError::Resolver)
}

/// Resolves many names concurrently; cheap to clone.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use std::time::Duration;
/// use futures_util::StreamExt;
/// use skitter::probe::{ProbeOutcome, Prober};
/// use skitter_testsite::dns::{Record, Reply, Responder};
///
/// // A DNS server on loopback (from the test crate) that knows one name.
/// let a = Record::A("192.0.2.7".parse().unwrap());
/// let dns = Responder::builder()
///     .name("www.example.test", Reply::Records(vec![a]))
///     .fallback(Reply::NxDomain)
///     .bind()
///     .await
///     .unwrap();
///
/// let prober = Prober::builder()
///     .concurrency(10)
///     .timeout(Duration::from_millis(500))
///     .nameservers(vec![dns.addr()])
///     .build()
///     .unwrap();
/// let names = futures_util::stream::iter(["www.example.test", "nope.example.test"].map(String::from));
/// let mut results: Vec<_> = prober.probe_stream(names).collect().await;
/// results.sort_by(|a, b| a.name.cmp(&b.name));
/// assert_eq!(results[0].outcome, ProbeOutcome::NotFound);
/// assert!(matches!(results[1].outcome, ProbeOutcome::Resolved(_)));
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct Prober {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    resolver: TokioResolver,
    config: Config,
}

impl Prober {
    /// Starts a builder with the documented defaults and the system's name servers.
    pub fn builder() -> ProberBuilder {
        ProberBuilder {
            config: Config {
                concurrency: DEFAULT_CONCURRENCY,
                timeout: DEFAULT_TIMEOUT,
                retries: DEFAULT_RETRIES,
                nameservers: None,
                record_types: RecordType::ADDRESSES.to_vec(),
            },
        }
    }

    /// The most names this prober keeps in flight.
    pub fn concurrency(&self) -> usize {
        self.inner.config.concurrency
    }

    /// Probes every name from `names`, at most [`concurrency`](Self::concurrency)
    /// at a time, yielding each result as soon as it is known (not in input
    /// order). Dropping the returned stream aborts the probes in flight.
    pub fn probe_stream<S>(&self, names: S) -> impl Stream<Item = ProbeResult> + use<S>
    where
        S: Stream<Item = String>,
    {
        let prober = self.clone();
        names
            .map(move |name| {
                let task = AbortOnDropHandle::new(tokio::spawn({
                    let prober = prober.clone();
                    let name = name.clone();
                    async move { prober.probe(&name).await }
                }));
                async move {
                    task.await.unwrap_or_else(|e| ProbeResult {
                        name,
                        outcome: ProbeOutcome::Failed(FailureKind::Other(format!(
                            "probe task failed: {e}"
                        ))),
                        elapsed: Duration::ZERO,
                    })
                }
            })
            .buffer_unordered(self.inner.config.concurrency)
    }

    /// Probes one name: every configured record type at once, each retried
    /// on its own.
    pub async fn probe(&self, name: &str) -> ProbeResult {
        let start = Instant::now();
        let outcome = match parse_name(name) {
            Err(e) => ProbeOutcome::Failed(FailureKind::InvalidName(e)),
            Ok(query_name) => {
                let lookups = self
                    .inner
                    .config
                    .record_types
                    .iter()
                    .map(|t| self.lookup_with_retries(&query_name, *t));
                combine(futures_util::future::join_all(lookups).await)
            }
        };
        ProbeResult {
            name: name.trim().to_owned(),
            outcome,
            elapsed: start.elapsed(),
        }
    }

    async fn lookup_with_retries(&self, name: &Name, rtype: RecordType) -> TypeOutcome {
        let mut attempts_left = self.inner.config.retries;
        loop {
            let outcome = self.lookup_once(name, rtype).await;
            match &outcome {
                TypeOutcome::Failed(kind) if kind.is_transient() && attempts_left > 0 => {
                    attempts_left -= 1;
                }
                _ => return outcome,
            }
        }
    }

    async fn lookup_once(&self, name: &Name, rtype: RecordType) -> TypeOutcome {
        let config = &self.inner.config;
        let lookup = self.inner.resolver.lookup(name.clone(), rtype.to_hickory());
        // hickory applies the same timeout inside; this outer one guarantees
        // the bound even if a future inside it misbehaves.
        match tokio::time::timeout(config.timeout, lookup).await {
            Err(_elapsed) => TypeOutcome::Failed(FailureKind::Timeout),
            Ok(Err(e)) => classify_error(&e),
            Ok(Ok(lookup)) => {
                let records: Vec<Record> = lookup
                    .answers()
                    .iter()
                    .filter_map(|r| {
                        let data = RecordData::from_hickory(&r.data)?;
                        (data.record_type() == rtype).then_some(Record { ttl: r.ttl, data })
                    })
                    .collect();
                if records.is_empty() {
                    TypeOutcome::NoData
                } else {
                    TypeOutcome::Records(records)
                }
            }
        }
    }
}
