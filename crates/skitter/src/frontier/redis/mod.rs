//! The Redis frontier: one crawl shared by many worker processes on many
//! machines. All workers of crawl `NAME` share the seen set, the per-host
//! queues, per-host politeness (in-flight cap, start delay, back-off), the
//! leases and a few crawl-wide counters, so together they crawl as one.
//!
//! Every step that must not race — dedup-and-enqueue, claim (with the host
//! slot and the lease), ack, lease reclaim — is one Lua script run atomically by
//! Redis (EVALSHA, cached). Times come from the Redis server's clock, so
//! workers with skewed clocks still agree on delays and lease deadlines.
//! A worker that dies leaves leases that expire (60 s by default, renewed every
//! lease/3 by a heartbeat while the worker lives); the next claim by any worker
//! puts their URLs back at the front of their host queues. Delivery is
//! therefore at least once.
//!
//! # Key layout
//!
//! All keys of crawl `NAME` start with `skitter:{NAME}:`; the braces are a
//! Redis Cluster hash tag, so one crawl lives on one slot.
//!
//! | key | type | holds |
//! |-----|------|-------|
//! | `seen:<b>` | hash | seen set: field = low 14 bytes of the URL's xxh3-128 fingerprint, `<b>` = top 18 bits in hex (2^18 buckets, compact listpacks) |
//! | `q:<host:port>` | list | that host's queue; entries are tab-separated `depth redirects_left url parent` |
//! | `r:<host:port>` | zset | that host's retries: `tries<TAB>entry` → when it may go again (ms) |
//! | `h:<host:port>` | hash | host politeness (the Lua twin of `frontier::politeness`): `inflight`, `limit` (concurrency, cut in distress), `floor` (Crawl-delay ms), `next` (next allowed start, ms), `gap`/`gcut`/`cat` (distress gap now and at the last cut, and when that was, ms), `avg`/`last` (recent pace, last start), `wt`/`wf` (window answers, failures), `sc` (answers since the last cut) |
//! | `ready` | zset | hosts with queued URLs and a free slot → next allowed start (ms) |
//! | `leases` | zset | lease id → deadline (ms) |
//! | `lease` | hash | lease id → host, a tab, the queue entry: to requeue it if it expires |
//! | `count` | hash | `queued`, `retrying`, `seen`, `claimed`, `lease_seq` |
//! | `stats` | hash | crawl-wide totals the workers add to (of the current pass) |
//! | `stats:p<N>` | hash | the totals of finished recrawl pass `N` |
//! | `meta` | hash | crawl-wide metadata (roots, options) for joining workers; the recrawl pass (`pass`, `pass_not_due`, and `pass_seeding`/`pass_wiped` while one starts, see `pass`) |
//! | `v:<b>` | hash | each fetched URL's visit for a recrawl, bucketed like `seen` (see `visit`) |
//!
//! Buckets stay listpacks while they hold at most `hash-max-listpack-entries`
//! (default 128) fields, i.e. up to about 25 million seen URLs; raise that
//! setting for bigger crawls.

mod layout;
mod link;
mod pass;
mod visit;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ::redis::Script;
use async_trait::async_trait;
use rand::RngExt;
use tokio::task::JoinHandle;
use url::Url;

use super::memory::fingerprint;
use super::{
    Claim, Frontier, FrontierCounts, FrontierError, HostFeedback, HostKey, HostPolicy, Lease,
    Request, Throttle, ThrottleReason, politeness,
};
use layout::{Keys, decode_request, encode_request, host_of, seen_slot};
use link::Link;

/// URLs per offer script call: big enough to amortise the round trip, small
/// enough that one call never blocks Redis for long.
const OFFER_BATCH: usize = 1000;
/// Expired leases requeued per claim, bounding a claim's work after a crash.
const RECLAIM_BATCH: usize = 100;

/// How a worker uses the shared frontier. Every worker of a crawl should use
/// the same policy (publish it with [`RedisFrontier::put_meta`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedisOptions {
    /// Per-host politeness, enforced across all workers together.
    pub policy: HostPolicy,
    /// How long a claimed URL stays leased without a heartbeat before any worker
    /// may take it again.
    pub lease: Duration,
    /// How long to wait before asking again when no URL is ready: other
    /// workers' offers and acks are not signalled, so claims poll.
    pub poll: Duration,
    /// How long Redis may be unreachable before operations fail; until then
    /// they retry and the crawl pauses.
    pub max_outage: Duration,
    /// A crawl-wide page limit: once all workers together have claimed this
    /// many URLs, claims hand out nothing more and answer [`Claim::Exhausted`]
    /// as soon as no lease is outstanding (see
    /// [`RedisFrontier::claim_limit_reached`]). A reclaimed lease counts again.
    pub max_claims: Option<u64>,
}

impl Default for RedisOptions {
    fn default() -> Self {
        RedisOptions {
            policy: HostPolicy::default(),
            lease: Duration::from_secs(60),
            poll: Duration::from_millis(100),
            max_outage: Duration::from_secs(600),
            max_claims: None,
        }
    }
}

/// The scripts, compiled once; `redis::Script` sends EVALSHA and loads the
/// script only when the server does not have it (e.g. after a restart).
struct Scripts {
    offer: Script,
    seen: Script,
    claim: Script,
    complete: Script,
    retry: Script,
    renew: Script,
}

impl Scripts {
    /// The scripts, each with the shared prelude and the politeness rule's
    /// constants (from `politeness`, so the Lua twin cannot drift from them).
    fn new() -> Scripts {
        let constants = format!(
            "local WINDOW, MIN_GAP, MAX_GAP, RECOVERY_MS, RECOVERY_ROUNDS, MIN_RECOVERY_STEP = {}, {}, {}, {}, {}, {}",
            politeness::WINDOW,
            politeness::MIN_DISTRESS_GAP.as_secs_f64() * 1000.0,
            millis(politeness::MAX_DISTRESS_GAP),
            millis(politeness::RECOVERY_TIME),
            politeness::RECOVERY_ROUNDS,
            politeness::MIN_RECOVERY_STEP,
        );
        let with_prelude = |body: &str| {
            Script::new(&format!(
                "{constants}\n{}\n{body}",
                include_str!("common.lua")
            ))
        };
        Scripts {
            offer: with_prelude(include_str!("offer.lua")),
            seen: with_prelude(include_str!("seen.lua")),
            claim: with_prelude(include_str!("claim.lua")),
            complete: with_prelude(include_str!("complete.lua")),
            retry: with_prelude(include_str!("retry.lua")),
            renew: with_prelude(include_str!("renew.lua")),
        }
    }
}

/// What the worker and its heartbeat task share.
struct Shared {
    link: Link,
    keys: Keys,
    options: RedisOptions,
    scripts: Scripts,
    /// Leases this worker holds, for the heartbeat and to tell a lease it never
    /// issued (an error) from one that expired meanwhile (a warning).
    mine: Mutex<HashSet<u64>>,
    /// Set once a claim found the crawl-wide claim limit used up.
    limit_reached: AtomicBool,
    /// The recrawl pass this worker is in: read when it joined, and again
    /// with its first URL (a `--recrawl` may have started the next pass in
    /// between; a pass cannot change again before this worker runs out of
    /// URLs, since a new one starts only on a finished crawl).
    pass: Mutex<crate::recrawl::PassInfo>,
    /// Whether `pass` is known to be the pass of the URLs claimed.
    pass_settled: AtomicBool,
}

/// A frontier kept in Redis and shared by every worker of one crawl.
pub struct RedisFrontier {
    shared: Arc<Shared>,
    heartbeat: JoinHandle<()>,
}

impl std::fmt::Debug for RedisFrontier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisFrontier")
            .field("crawl", &self.shared.keys.prefix())
            .field("options", &self.shared.options)
            .finish()
    }
}

impl Drop for RedisFrontier {
    fn drop(&mut self) {
        // Leases still held stop being renewed and expire, so other workers take them.
        self.heartbeat.abort();
    }
}

impl RedisFrontier {
    /// Joins crawl `crawl` on the Redis server at `url` (`redis://host:port/db`),
    /// creating it if it is new. Waits up to `options.max_outage` for a server
    /// that is not reachable yet. Must be called within a Tokio runtime: it
    /// starts the lease heartbeat.
    pub async fn connect(
        url: &str,
        crawl: &str,
        options: RedisOptions,
    ) -> Result<RedisFrontier, FrontierError> {
        if options.lease < Duration::from_millis(3) {
            return Err(FrontierError::Storage(format!(
                "lease {:?} is too short to renew",
                options.lease
            )));
        }
        let shared = Arc::new(Shared {
            link: Link::new(url, options.max_outage)?,
            keys: Keys::new(crawl)?,
            options,
            scripts: Scripts::new(),
            mine: Mutex::new(HashSet::new()),
            limit_reached: AtomicBool::new(false),
            pass: Mutex::default(),
            pass_settled: AtomicBool::new(false),
        });
        shared
            .link
            .query::<()>("connect", &::redis::cmd("PING"))
            .await?;
        let heartbeat = tokio::spawn(heartbeat(Arc::clone(&shared)));
        let frontier = RedisFrontier { shared, heartbeat };
        frontier.set_pass(frontier.load_pass().await?);
        Ok(frontier)
    }

    /// Deletes every key of crawl `crawl` (SCAN + UNLINK by prefix) and returns
    /// how many there were. Workers still running on it would recreate keys.
    pub async fn clean(url: &str, crawl: &str) -> Result<u64, FrontierError> {
        let keys = Keys::new(crawl)?;
        let link = Link::new(url, RedisOptions::default().max_outage)?;
        let pattern = keys.scan_pattern();
        let (mut cursor, mut removed) = (0u64, 0u64);
        loop {
            let mut scan = ::redis::cmd("SCAN");
            scan.arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(1000);
            let (next, batch): (u64, Vec<Vec<u8>>) = link.query("clean: scan", &scan).await?;
            if !batch.is_empty() {
                let unlink = ::redis::cmd("UNLINK").arg(&batch).to_owned();
                removed += link.query::<u64>("clean: unlink", &unlink).await?;
            }
            if next == 0 {
                return Ok(removed);
            }
            cursor = next;
        }
    }

    /// `skitter:{NAME}:`, the start of every key of this crawl (for messages).
    pub fn key_prefix(&self) -> &str {
        self.shared.keys.prefix()
    }

    /// How many URLs all workers together have claimed so far (for a
    /// crawl-wide page limit). A reclaimed lease counts again.
    pub async fn claimed(&self) -> Result<u64, FrontierError> {
        let mut get = ::redis::cmd("HGET");
        get.arg(self.shared.keys.key("count")).arg("claimed");
        let n: Option<u64> = self.shared.link.query("claimed", &get).await?;
        Ok(n.unwrap_or(0))
    }

    /// Adds `n` to the crawl-wide total `name` and returns the new total.
    pub async fn incr_stat(&self, name: &str, n: u64) -> Result<u64, FrontierError> {
        let n = i64::try_from(n)
            .map_err(|_| FrontierError::Storage(format!("stat increment {n} too large")))?;
        let mut incr = ::redis::cmd("HINCRBY");
        incr.arg(self.shared.keys.key("stats")).arg(name).arg(n);
        self.shared.link.query("incr_stat", &incr).await
    }

    /// Adds several crawl-wide totals in one atomic round trip (a MULTI
    /// pipeline of HINCRBYs). If Redis fails after applying it but before
    /// answering, the retry applies it again: totals are at least once.
    pub async fn add_stats(&self, counts: &BTreeMap<String, u64>) -> Result<(), FrontierError> {
        if counts.is_empty() {
            return Ok(());
        }
        let key = self.shared.keys.key("stats");
        let mut pipe = ::redis::pipe();
        pipe.atomic();
        for (name, n) in counts {
            let n = i64::try_from(*n)
                .map_err(|_| FrontierError::Storage(format!("stat increment {n} too large")))?;
            pipe.cmd("HINCRBY").arg(&key).arg(name).arg(n).ignore();
        }
        match self.shared.link.query_pipe("add_stats", &pipe).await {
            Err(e) if e.to_string().contains("not an integer") => {
                let garbled = self
                    .stats_raw()
                    .await?
                    .into_iter()
                    .find(|(name, v)| counts.contains_key(name) && v.parse::<i64>().is_err());
                Err(match garbled {
                    Some((name, v)) => malformed_stat(&key, &name, &v),
                    None => e,
                })
            }
            other => other,
        }
    }

    async fn stats_raw(&self) -> Result<BTreeMap<String, String>, FrontierError> {
        let all = ::redis::cmd("HGETALL")
            .arg(self.shared.keys.key("stats"))
            .to_owned();
        self.shared.link.query("stats", &all).await
    }

    /// Whether a claim of this worker found the crawl-wide claim limit
    /// ([`RedisOptions::max_claims`]) used up, i.e. whether the last
    /// [`Claim::Exhausted`] meant "limit reached" rather than "nothing left".
    pub fn claim_limit_reached(&self) -> bool {
        self.shared.limit_reached.load(Ordering::Relaxed)
    }

    /// The crawl-wide totals added with [`RedisFrontier::incr_stat`].
    /// A total that is not a number (written by something other than skitter)
    /// is left out and reported with its key and field.
    pub async fn stats(&self) -> Result<BTreeMap<String, u64>, FrontierError> {
        let mut totals = BTreeMap::new();
        for (name, v) in self.stats_raw().await? {
            match v.parse::<u64>() {
                Ok(n) => {
                    totals.insert(name, n);
                }
                Err(_) => tracing::warn!(
                    "{}",
                    malformed_stat(&self.shared.keys.key("stats"), &name, &v)
                ),
            }
        }
        Ok(totals)
    }

    /// Stores crawl-wide metadata (e.g. roots and options as JSON) so a worker
    /// can join knowing only the Redis URL and the crawl name.
    pub async fn put_meta(&self, name: &str, value: &str) -> Result<(), FrontierError> {
        let mut set = ::redis::cmd("HSET");
        set.arg(self.shared.keys.key("meta")).arg(name).arg(value);
        self.shared.link.query("put_meta", &set).await
    }

    /// Stores metadata only if `name` has none yet (HSETNX), so two workers
    /// starting the same crawl at once agree on one value; `true` if stored.
    pub async fn put_meta_if_absent(&self, name: &str, value: &str) -> Result<bool, FrontierError> {
        let mut set = ::redis::cmd("HSETNX");
        set.arg(self.shared.keys.key("meta")).arg(name).arg(value);
        self.shared.link.query("put_meta_if_absent", &set).await
    }

    /// Reads metadata stored with [`RedisFrontier::put_meta`].
    pub async fn get_meta(&self, name: &str) -> Result<Option<String>, FrontierError> {
        let mut get = ::redis::cmd("HGET");
        get.arg(self.shared.keys.key("meta")).arg(name);
        self.shared.link.query("get_meta", &get).await
    }

    /// Adds URLs to the seen set without queueing them (e.g. URLs an earlier
    /// crawl already fetched); returns how many were new.
    pub async fn mark_seen(&self, urls: &[Url]) -> Result<usize, FrontierError> {
        let mut new = 0;
        for chunk in urls.chunks(OFFER_BATCH) {
            let mut call = self.invocation(&self.shared.scripts.seen);
            for url in chunk {
                let (bucket, field) = seen_slot(fingerprint(url));
                call.arg(bucket).arg(&field[..]);
            }
            new += self.run_script::<usize>("mark_seen", &call).await?;
        }
        Ok(new)
    }

    fn invocation<'a>(&self, script: &'a Script) -> ::redis::ScriptInvocation<'a> {
        self.shared.invocation(script)
    }

    async fn run_script<T: ::redis::FromRedisValue + Send>(
        &self,
        what: &str,
        call: &::redis::ScriptInvocation<'_>,
    ) -> Result<T, FrontierError> {
        self.shared.link.invoke(what, call).await
    }

    /// Acks lease `id` in Redis, or with `retry` (wait, tries so far) hands it
    /// back for another attempt; `None` if it was no longer there.
    async fn ack(
        &self,
        id: u64,
        feedback: HostFeedback,
        retry: Option<(Duration, u32)>,
    ) -> Result<Option<Option<Throttle>>, FrontierError> {
        let (signal, wait, reason) = match feedback {
            HostFeedback::Silent => (0, 0, 0),
            HostFeedback::Clean => (1, 0, 0),
            HostFeedback::Failed => (2, 0, 0),
            HostFeedback::FailedAgain => (5, 0, 0),
            HostFeedback::SlowDown(wait, reason) => (3, millis(wait), reason_code(reason)),
        };
        let script = match retry {
            Some(_) => &self.shared.scripts.retry,
            None => &self.shared.scripts.complete,
        };
        let mut call = self.invocation(script);
        call.arg(self.shared.options.policy.max_in_flight.max(1))
            .arg(id)
            .arg(signal)
            .arg(wait)
            .arg(reason);
        if let Some((wait, tries)) = retry {
            call.arg(millis(wait)).arg(tries);
        }
        let (found, why, cut, limit, gap): (u8, u8, u8, u64, u64) =
            self.run_script("complete", &call).await?;
        if found == 0 {
            return Ok(None);
        }
        if found == 2 {
            tracing::warn!(
                "{} {id}: dropped a malformed lease record (its host slot could not be released)",
                self.shared.keys.key("lease")
            );
            return Ok(Some(None));
        }
        let reason = match why {
            1 => ThrottleReason::TooManyRequests,
            2 => ThrottleReason::RetryAfter,
            3 => ThrottleReason::Distress,
            4 => ThrottleReason::RobotsUnavailable,
            _ => return Ok(Some(None)),
        };
        Ok(Some(Some(Throttle {
            reason,
            cut: cut == 1,
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            gap: Duration::from_millis(gap),
        })))
    }

    /// Hands a lease back, checking it is this worker's.
    async fn hand_back(
        &self,
        lease: Lease,
        feedback: HostFeedback,
        retry: Option<Duration>,
    ) -> Result<Option<Throttle>, FrontierError> {
        if !self.own_leases().contains(&lease.id) {
            return Err(FrontierError::UnknownLease(lease.id));
        }
        let acked = self
            .ack(lease.id, feedback, retry.map(|w| (w, lease.tries)))
            .await?;
        self.own_leases().remove(&lease.id);
        if acked.is_none() {
            tracing::warn!(url = %lease.request.url, "lease expired before completion; the URL was requeued and may be fetched twice");
        }
        Ok(acked.flatten())
    }

    fn own_leases(&self) -> std::sync::MutexGuard<'_, HashSet<u64>> {
        lock(&self.shared.mine)
    }
}

fn lock(mine: &Mutex<HashSet<u64>>) -> std::sync::MutexGuard<'_, HashSet<u64>> {
    // The set holds plain ids; after a panic elsewhere it is still consistent.
    mine.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// A script call with the crawl's fixed keys and prefix filled in.
    fn invocation<'a>(&self, script: &'a Script) -> ::redis::ScriptInvocation<'a> {
        let mut call = script.prepare_invoke();
        for key in self.keys.script_keys() {
            call.key(key);
        }
        call.arg(self.keys.prefix());
        call
    }
}

/// Keeps this worker's leases alive while it runs, so a fetch longer than the
/// lease is not taken over by another worker.
async fn heartbeat(shared: Arc<Shared>) {
    let every = shared.options.lease / 3;
    loop {
        tokio::time::sleep(every).await;
        let ids: Vec<u64> = lock(&shared.mine).iter().copied().collect();
        if ids.is_empty() {
            continue;
        }
        let mut call = shared.invocation(&shared.scripts.renew);
        call.arg(millis(shared.options.lease)).arg(&ids);
        let renewed = shared.link.invoke::<usize>("renew leases", &call).await;
        if let Err(e) = renewed {
            tracing::warn!(error = %e, "could not renew leases; other workers may take them over");
        }
    }
}

/// The Lua twin's code for a slow-down reason.
fn reason_code(reason: ThrottleReason) -> u8 {
    match reason {
        ThrottleReason::TooManyRequests => 1,
        ThrottleReason::RetryAfter => 2,
        ThrottleReason::Distress => 3,
        ThrottleReason::RobotsUnavailable => 4,
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn random_up_to(max: Duration) -> Duration {
    if max.is_zero() {
        return Duration::ZERO;
    }
    Duration::from_millis(rand::rng().random_range(0..=millis(max)))
}

#[async_trait]
impl Frontier for RedisFrontier {
    fn durable(&self) -> bool {
        true
    }

    async fn offer(&self, requests: Vec<Request>) -> Result<usize, FrontierError> {
        let mut new = 0;
        for chunk in requests.chunks(OFFER_BATCH) {
            let mut call = self.invocation(&self.shared.scripts.offer);
            call.arg(self.shared.options.policy.max_in_flight.max(1));
            for request in chunk {
                let (bucket, field) = seen_slot(fingerprint(&request.url));
                call.arg(bucket)
                    .arg(&field[..])
                    .arg(host_of(request).as_str())
                    .arg(encode_request(request));
            }
            new += self.run_script::<usize>("offer", &call).await?;
        }
        Ok(new)
    }

    async fn claim(&self) -> Result<Claim, FrontierError> {
        let options = self.shared.options;
        loop {
            let mut call = self.invocation(&self.shared.scripts.claim);
            call.arg(options.policy.max_in_flight.max(1))
                .arg(millis(options.policy.delay))
                .arg(millis(random_up_to(options.policy.jitter)))
                .arg(millis(options.lease))
                .arg(millis(options.poll).max(1))
                .arg(RECLAIM_BATCH)
                .arg(options.max_claims.unwrap_or(0));
            let (kind, n, entry, tries): (u8, u64, Vec<u8>, u32) =
                self.run_script("claim", &call).await?;
            match kind {
                1 => {
                    let decoded = std::str::from_utf8(&entry).ok().and_then(decode_request);
                    let Some(request) = decoded else {
                        // Not ours to crash on: drop the entry and hand the slot back.
                        tracing::warn!(
                            "{} {n}: dropping a queue entry that is not a request: {:.200}",
                            self.shared.keys.key("lease"),
                            String::from_utf8_lossy(&entry)
                        );
                        self.ack(n, HostFeedback::Silent, None).await?;
                        continue;
                    };
                    self.own_leases().insert(n);
                    if !self.shared.pass_settled.swap(true, Ordering::Relaxed) {
                        self.set_pass(self.load_pass().await?);
                    }
                    return Ok(Claim::Ready(Lease {
                        id: n,
                        request,
                        tries,
                    }));
                }
                2 => return Ok(Claim::Exhausted),
                // The script dropped malformed data (named in `entry`) and
                // changed nothing else; each call drops one, so this ends.
                4 => {
                    tracing::warn!(
                        "dropped malformed data in Redis: {}",
                        String::from_utf8_lossy(&entry)
                    );
                    continue;
                }
                3 => {
                    self.shared.limit_reached.store(true, Ordering::Relaxed);
                    return Ok(Claim::Exhausted);
                }
                _ => return Ok(Claim::Wait(Some(Duration::from_millis(n)))),
            }
        }
    }

    async fn complete(
        &self,
        lease: Lease,
        feedback: HostFeedback,
    ) -> Result<Option<Throttle>, FrontierError> {
        self.hand_back(lease, feedback, None).await
    }

    async fn retry(
        &self,
        lease: Lease,
        wait: Duration,
        feedback: HostFeedback,
    ) -> Result<Option<Throttle>, FrontierError> {
        self.hand_back(lease, feedback, Some(wait)).await
    }

    async fn complete_visit(
        &self,
        lease: Lease,
        feedback: HostFeedback,
        record: &crate::outcome::PageRecord,
        visit: Option<&crate::recrawl::Visit>,
    ) -> Result<Option<Throttle>, FrontierError> {
        if let Some(visit) = visit {
            self.put_visit(&record.url, lease.request.depth, visit)
                .await?;
        }
        self.complete_with(lease, feedback, record).await
    }

    /// The pass read when this worker joined, or the one
    /// [`RedisFrontier::begin_pass`] started.
    fn pass(&self) -> Option<crate::recrawl::PassInfo> {
        Some(*self.shared.pass.lock().unwrap_or_else(|e| e.into_inner()))
    }

    async fn recall(&self, url: &Url) -> Result<Option<crate::recrawl::Visit>, FrontierError> {
        self.get_visit(url).await
    }

    async fn set_host_delay(&self, host: &HostKey, delay: Duration) -> Result<(), FrontierError> {
        let mut set = ::redis::cmd("HSET");
        set.arg(self.shared.keys.key(&format!("h:{host}")))
            .arg("floor")
            .arg(millis(delay));
        self.shared.link.query("set_host_delay", &set).await
    }

    async fn counts(&self) -> Result<FrontierCounts, FrontierError> {
        let keys = &self.shared.keys;
        let mut pipe = ::redis::pipe();
        pipe.atomic()
            .cmd("HMGET")
            .arg(keys.key("count"))
            .arg("queued")
            .arg("seen")
            .arg("retrying")
            .cmd("ZCARD")
            .arg(keys.key("leases"));
        let ((queued, seen, retrying), leased): ((Option<i64>, Option<u64>, Option<i64>), u64) =
            self.shared.link.query_pipe("counts", &pipe).await?;
        let positive = |n: Option<i64>| n.map_or(0, |q| q.max(0).unsigned_abs());
        Ok(FrontierCounts {
            queued: positive(queued),
            leased: leased + positive(retrying),
            seen: seen.unwrap_or(0),
        })
    }
}

/// Workers of one crawl share each origin's robots.txt through the crawl's
/// `meta` hash (`robots:<origin>` → JSON), so it is fetched once per crawl.
#[async_trait]
impl crate::robots::RobotsStore for RedisFrontier {
    async fn get_robots(&self, origin: &str) -> Option<crate::robots::StoredRobots> {
        let raw = self.get_meta(&format!("robots:{origin}")).await.ok()??;
        serde_json::from_str(&raw).ok()
    }

    async fn put_robots(&self, origin: &str, robots: &crate::robots::StoredRobots) {
        let Ok(json) = serde_json::to_string(robots) else {
            return;
        };
        if let Err(e) = self.put_meta(&format!("robots:{origin}"), &json).await {
            tracing::warn!(%origin, error = %e, "cannot share robots.txt with the other workers");
        }
    }
}

/// The error for a crawl total that is not an integer.
fn malformed_stat(key: &str, field: &str, value: &str) -> FrontierError {
    let shown: String = value.chars().take(40).collect();
    FrontierError::Storage(format!(
        "malformed crawl data: field {field} of {key} holds {shown:?}, not an integer (repair or delete it)"
    ))
}
