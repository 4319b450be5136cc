//! The frontier: the crawl's seen set, its queue, and per-host politeness slots.
//!
//! The scheduler only talks to the [`Frontier`] trait, so the in-memory frontier
//! here, a crash-safe on-disk one and a Redis one shared by many workers can slot in
//! without touching the scheduler or the fetcher. Politeness (at most N in flight
//! per host, a minimum gap between request starts, back-off) lives behind the same
//! trait because, for a shared frontier, "claim a URL of a host whose slot is free"
//! has to be one atomic step.
//!
//! Work is claimed with a [`Lease`] and acknowledged with [`Frontier::complete`]:
//! the crawl is over when [`Frontier::claim`] answers [`Claim::Exhausted`], i.e. no
//! URL is queued and no lease is outstanding.

pub(crate) mod memory;
mod queue;
mod queued;
mod redis;
mod retry_queue;
mod seen;

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::base::outcome::PageRecord;
use crate::host::{HostFeedback, HostKey, LivePolicy, Throttle};
use crate::state::recrawl::{PassInfo, Visit};

pub use memory::{DEFAULT_MEMORY_BUDGET, MemoryFrontier, MemoryOptions};
pub use redis::{RedisFrontier, RedisOptions};
// A leaf of its own, so that the stores below the frontier can hold requests
// without depending on the frontier.
pub use crate::base::request::{Request, RequestKind};
pub use crate::host::THROTTLED_TRY;

/// A claimed request. It must be handed back through [`Frontier::complete`].
#[derive(Debug)]
pub struct Lease {
    /// Identifies the lease to the frontier that issued it.
    pub id: u64,
    /// What to fetch.
    pub request: Request,
    /// The attempts this URL has made so far (0 on its first claim; see
    /// [`Frontier::retry`]), packed as frontiers store them: the ones that
    /// failed in the low 16 bits, the ones answered `429` above
    /// ([`THROTTLED_TRY`]). Read them with [`Lease::failed_tries`] and
    /// [`Lease::throttled_tries`].
    pub tries: u32,
    /// How often this URL was claimed before and its lease lost, the worker
    /// holding it gone without handing it back (it died, was killed, or
    /// stalled past its lease): a frontier that outlives a worker (Redis, the
    /// crash-safe store) counts them, each also as a failed try in
    /// [`Lease::tries`]. The crawler quarantines a URL lost too often
    /// ([`RetryPolicy::quarantine_after`](crate::fetch::retry::RetryPolicy::quarantine_after)).
    pub lost: u32,
}

impl Lease {
    /// The earlier attempts that failed (a transport error, a 5xx, a 408).
    pub fn failed_tries(&self) -> u32 {
        self.tries % THROTTLED_TRY
    }

    /// The earlier attempts the server answered `429`.
    pub fn throttled_tries(&self) -> u32 {
        self.tries / THROTTLED_TRY
    }
}

/// The answer to [`Frontier::claim`].
#[derive(Debug)]
pub enum Claim {
    /// Fetch this now; its host slot is taken.
    Ready(Lease),
    /// Work remains but none may start now (politeness, or all of it leased).
    /// Ask again after at most this long, or sooner when a lease completes or
    /// URLs are offered; `None` means "only when something changes".
    Wait(Option<Duration>),
    /// Nothing is queued and no lease is outstanding: the crawl is over.
    Exhausted,
}

/// Counts for progress lines and the report's `Todo:`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrontierCounts {
    /// URLs waiting in the queue.
    pub queued: u64,
    /// Leases outstanding (URLs being fetched).
    pub leased: u64,
    /// Distinct URLs ever offered (the seen set's size).
    pub seen: u64,
    /// Hosts the frontier keeps live state for now (work queued or in
    /// flight, or a gap still owed; idle ones are forgotten); `None` when it
    /// does not count them (Redis).
    #[serde(default)]
    pub hosts: Option<u64>,
    /// Bytes the frontier's files take on disk: the crash-safe store's
    /// directory, or what the memory frontier spilled past its budget and
    /// still holds; `None` for a frontier that keeps no files (Redis).
    #[serde(default)]
    pub disk_bytes: Option<u64>,
}

/// What earlier runs of a resumed crawl fetched, as the limits count
/// fetches: every completed URL except those skipped before fetching
/// (robots.txt, `max_per_host`). A run's `max_pages` and `max_per_host`
/// start from it, so they hold for the whole crawl, not each run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fetched {
    /// URLs fetched in all.
    pub pages: u64,
    /// URLs fetched per host; hosts with none are left out.
    pub per_host: Vec<(HostKey, u64)>,
}

/// A frontier operation failed; the crawl cannot go on safely. Each kind
/// carries what caused it ([`std::error::Error::source`]).
#[derive(Debug, thiserror::Error)]
pub enum FrontierError {
    /// A setting the frontier cannot work with (a crawl name, a lease too
    /// short to renew, a shard count).
    #[error("{0}")]
    Setting(String),
    /// Redis refused or failed an operation, or stayed unreachable past
    /// `--max-outage`.
    #[error("{what}: {source}")]
    Redis {
        /// What the frontier was doing.
        what: String,
        /// The Redis client's error.
        #[source]
        source: ::redis::RedisError,
    },
    /// The crawl store of `--state` failed.
    #[error("frontier storage failed: {0}")]
    Store(#[from] crate::state::store::StoreError),
    /// The crawl store stopped committing (its writer failed or hung).
    #[error("frontier storage failed: the crawl store stopped committing")]
    StoreStopped,
    /// A spill file of the bounded memory frontier failed.
    #[error("frontier storage failed: {0}")]
    Spill(#[from] crate::state::spill::SpillError),
    /// Stored crawl data is not what was written: damaged, cut short, or
    /// changed by something else. The text says which and where.
    #[error("malformed crawl data: {0}")]
    Malformed(String),
    /// A queued URL no longer parses (stored data from another version).
    #[error("malformed crawl data: queued URL {url} no longer parses: {source}")]
    BadUrl {
        /// The stored text.
        url: String,
        /// Why it does not parse.
        #[source]
        source: url::ParseError,
    },
    /// The frontier failed (this failure, or an earlier one) and refuses work
    /// since: its queue may have lost requests. It reads as the first failure.
    #[error(transparent)]
    Failed(std::sync::Arc<FrontierError>),
    /// A lease the frontier does not know was completed.
    #[error("unknown lease {0}")]
    UnknownLease(u64),
}

/// The seen set, queue and per-host politeness of one crawl.
///
/// The crawler offers what it finds, claims what it may fetch now, and hands
/// every lease back; a frontier of your own (a queue in another store) passes
/// the same contract tests as the built-in ones (`tests/memory_frontier.rs`).
///
/// ```
/// use skitter::frontier::{Claim, Frontier, MemoryFrontier, Request, RequestKind};
/// use skitter::host::{HostFeedback, HostPolicy};
///
/// # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let frontier = MemoryFrontier::new(HostPolicy::default());
/// let request = |url: &str| Request {
///     url: url.parse().unwrap(),
///     depth: 0,
///     redirects_left: 10,
///     parent: None,
///     kind: RequestKind::Page,
/// };
/// // The second offer of a URL is a duplicate: one is new.
/// let new = frontier
///     .offer(vec![request("http://a.test/"), request("http://a.test/")])
///     .await?;
/// assert_eq!(new, 1);
/// let Claim::Ready(lease) = frontier.claim().await? else {
///     panic!("one URL is ready");
/// };
/// assert_eq!(lease.request.url.as_str(), "http://a.test/");
/// frontier.complete(lease, HostFeedback::Clean).await?;
/// assert!(matches!(frontier.claim().await?, Claim::Exhausted));
/// # Ok(())
/// # }
/// ```
#[async_trait]
pub trait Frontier: Send + Sync {
    /// Offers URLs to the crawl. Each URL not seen before is queued; the rest are
    /// dropped. Returns how many were new.
    async fn offer(&self, requests: Vec<Request>) -> Result<usize, FrontierError>;

    /// Claims the next URL that may be fetched now, taking its host's slot.
    async fn claim(&self) -> Result<Claim, FrontierError>;

    /// Hands a lease back once its outcome is recorded, releasing the host slot
    /// and applying what the answer says about the server (see [`politeness`](crate::host::politeness)).
    /// Returns the slow-down that caused, if any.
    async fn complete(
        &self,
        lease: Lease,
        feedback: HostFeedback,
    ) -> Result<Option<Throttle>, FrontierError>;

    /// Hands a lease back for another attempt: its host slot is released (with
    /// `feedback`, as for [`Frontier::complete`]), and the request is claimed
    /// again no earlier than `wait` from now, through its host's slot and gap like
    /// any other request. Until then it counts as outstanding, so the crawl is not
    /// over. Its [`Lease::tries`] go up by one failed try, or one
    /// [`THROTTLED_TRY`] for a `429`, unless its host is in an outage
    /// (a server down as a whole costs its URLs no tries, up to
    /// [`RobotsPolicy::max_outage`](crate::robots::RobotsPolicy::max_outage)). A frontier that outlives its process (Redis, the
    /// crash-safe store) keeps the tries across a crash and a resume, and
    /// counts a URL held by a worker that died as one [`Lease::lost`] more;
    /// the memory frontier forgets them with its process.
    async fn retry(
        &self,
        lease: Lease,
        wait: Duration,
        feedback: HostFeedback,
    ) -> Result<Option<Throttle>, FrontierError>;

    /// Completes a lease together with its URL's record. A frontier that keeps
    /// outcomes (the crash-safe store) commits both at once, so after a crash a URL
    /// is either done with its record or queued again; others ignore the record.
    async fn complete_with(
        &self,
        lease: Lease,
        feedback: HostFeedback,
        record: &PageRecord,
    ) -> Result<Option<Throttle>, FrontierError> {
        let _ = record;
        self.complete(lease, feedback).await
    }

    /// Whether completed leases outlive this process (a crash-safe store, a shared
    /// server). The crawler then writes a page's outputs before completing its
    /// lease, so a crash never leaves a completed URL missing from the outputs.
    fn durable(&self) -> bool {
        false
    }

    /// Whether completions also survive a power cut (the store `fsync`s its
    /// commits). The crawler then syncs what the outputs wrote for a page
    /// before completing its lease (see [`crate::output::Sink::unsynced`]).
    fn syncs(&self) -> bool {
        false
    }

    /// Hands a lease back like [`Frontier::complete_with`], together with
    /// what the crawl remembers of the URL for its next pass (see
    /// [`crate::state::recrawl`]); a frontier that remembers nothing ignores it.
    async fn complete_visit(
        &self,
        lease: Lease,
        feedback: HostFeedback,
        record: &PageRecord,
        visit: Option<&Visit>,
    ) -> Result<Option<Throttle>, FrontierError> {
        let _ = visit;
        self.complete_with(lease, feedback, record).await
    }

    /// The recrawl pass this frontier is in, when it remembers visits (a
    /// crash-safe store, a shared server); `None` when it does not.
    fn pass(&self) -> Option<PassInfo> {
        None
    }

    /// The URL's visit from an earlier pass, if this frontier remembers one.
    async fn recall(&self, url: &url::Url) -> Result<Option<Visit>, FrontierError> {
        let _ = url;
        Ok(None)
    }

    /// Sets a host's minimum gap between request starts (e.g. robots `Crawl-delay`),
    /// when it is larger than the configured delay.
    async fn set_host_delay(&self, host: &HostKey, delay: Duration) -> Result<(), FrontierError>;

    /// Current counts.
    async fn counts(&self) -> Result<FrontierCounts, FrontierError>;

    /// The politeness rules this frontier's hosts read at each claim, to
    /// change them while the crawl runs (`--per-host`, `--delay`); `None`
    /// (the default) when this frontier keeps its rules fixed.
    fn politeness(&self) -> Option<LivePolicy> {
        None
    }

    /// Takes one fetch of `host`'s crawl-wide quota of `max` (`max_per_host`):
    /// `Some(true)` if taken, `Some(false)` when it is used up. `None` (the
    /// default) when this frontier keeps no shared count, and the crawler
    /// counts the run's fetches itself from [`Frontier::fetched`]. A
    /// frontier shared by several workers (Redis) counts here, atomically,
    /// so the quota holds for all of them together.
    async fn take_host_quota(
        &self,
        host: &HostKey,
        max: u64,
    ) -> Result<Option<bool>, FrontierError> {
        let _ = (host, max);
        Ok(None)
    }

    /// What this crawl fetched before this run (see [`Fetched`]); nothing
    /// for a frontier that does not outlive its run.
    async fn fetched(&self) -> Result<Fetched, FrontierError> {
        Ok(Fetched::default())
    }
}
mod disk;
pub use disk::{DiskFrontier, DiskOptions, RecrawlStart};
