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
//! puts their URLs back as retries due at once, each with one failed try and
//! one loss more ([`Lease::lost`]), so a URL that kills its workers is
//! quarantined after a few losses instead of looping. Delivery is therefore at
//! least once.
//!
//! # Key layout
//!
//! A crawl is split into S shards (see `shard`; S is fixed when the crawl is
//! created, 1 unless asked otherwise). Each host belongs to one shard, and the
//! shard's keys all start with one prefix holding a Redis Cluster hash tag:
//! `skitter:{NAME}:` for shard 0 and `skitter:{NAME#k}:` for shard k, so a
//! cluster spreads the shards over its masters while every script touches one
//! slot. A discovered URL is deduplicated and queued in its own host's shard.
//! The crawl-wide `stats` and `meta` hashes (and `claims`, the reservation
//! counter of `max_claims` when S > 1) live under `skitter:{NAME}:`. A one-shard
//! crawl has exactly the layout skitter used before shards.
//!
//! Keys of one shard:
//!
//! | key | type | holds |
//! |-----|------|-------|
//! | `seen:<b>` | hash | seen set of the shard's hosts: field = low 14 bytes of the URL's xxh3-128 fingerprint, `<b>` = top 18 bits in hex (2^18 buckets, compact listpacks); with S > 1, 2^18 buckets over all shards (fewer bits per shard, a 15-byte field below 16) |
//! | `q:<host:port>` | list | that host's queue; entries are tab-separated `depth redirects_left url parent` |
//! | `r:<host:port>` | zset | that host's retries: `tries<TAB>entry`, or `tries/lost<TAB>entry` once its lease was lost, → when it may go again (ms); an expired lease comes back here, due at once, with one failed try and one loss more |
//! | `h:<host:port>` | hash | host politeness (the Lua twin of `frontier::politeness`): `inflight`, `limit` (concurrency, cut in distress), `floor` (Crawl-delay ms), `next` (next allowed start, ms), `gap`/`gcut`/`cat` (distress gap now and at the last cut, and when that was, ms), `avg`/`last` (recent pace, last start), `wt`/`wf` (window answers, failures), `sc` (answers since the last cut) |
//! | `ready` | zset | hosts with queued URLs and a free slot → next allowed start (ms) |
//! | `leases` | zset | lease id → deadline (ms) |
//! | `lease` | hash | lease id → host, a tab, the queue entry: to requeue it if it expires; `t<id>` → that URL's `tries/lost` so far, when not both 0, so it goes back with them |
//! | `fetched` | hash | host:port → URLs of that host fetched in this pass (taken before each URL's first request), for `max_per_host` over all workers |
//! | `quarantine` | hash | URLs workers quarantined (their leases lost too often, see [`Lease::lost`]) → times lost |
//! | `count` | hash | the shard's `queued`, `retrying`, `seen`, `claimed`, `lease_seq` (crawl-wide figures are their sums) |
//! | `v:<b>` | hash | each fetched URL's visit for a recrawl, bucketed like `seen` (see `visit`) |
//!
//! Crawl-wide, under `skitter:{NAME}:`:
//!
//! | key | type | holds |
//! |-----|------|-------|
//! | `stats` | hash | crawl-wide totals the workers add to (of the current pass) |
//! | `stats:p<N>` | hash | the totals of finished recrawl pass `N` |
//! | `meta` | hash | crawl-wide metadata (roots, options, `shards`) for joining workers; the recrawl pass (`pass`, `pass_not_due`, and `pass_seeding`/`pass_wiped` while one starts, see `pass`) |
//! | `claims` | string | with S > 1 and `max_claims`: claims reserved so far |
//! | `workers` | hash | worker id → its last published line (JSON) for the watchers of `--metrics`; each line carries its time, and a line not renewed for a while is dropped by the next reader |
//!
//! Lease ids are `seq * S + k` for lease `seq` of shard k.
//!
//! # The end of a crawl across shards
//!
//! A crawl is over when every shard is empty with no lease out at one
//! instant. Shards are separate slots, so that is checked in two passes (see
//! `claim`): every shard empty and without leases in both, and no shard's
//! `seen` or `lease_seq` moved in between. Anything that could make an empty
//! shard busy again is an offer (moves `seen`) or a claim (moves
//! `lease_seq`), so at any instant between the passes every shard was idle.
//!
//! Buckets stay listpacks while they hold at most `hash-max-listpack-entries`
//! (default 128) fields, i.e. up to about 25 million seen URLs; raise that
//! setting for bigger crawls.

mod claim;
mod layout;
mod link;
mod pass;
mod quarantine;
mod shard;
mod visit;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ::redis::Script;
use async_trait::async_trait;
use rand::RngExt;
use tokio::task::JoinHandle;
use url::Url;

use crate::frontier::{Claim, Frontier, FrontierCounts, FrontierError, Lease, Request};
use crate::host::{
    HostFeedback, HostKey, HostPolicy, LivePolicy, Throttle, ThrottleReason, politeness,
};
use layout::{Keys, encode_request, host_of};
use link::Link;
use shard::Shards;

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
    /// For a new crawl, how many shards to split it into (1 to 1024): a Redis
    /// Cluster spreads the shards over its masters. A crawl that exists keeps
    /// the count it was created with; `None` joins with that count (1 for a
    /// crawl that has none).
    pub shards: Option<u16>,
}

impl Default for RedisOptions {
    fn default() -> Self {
        RedisOptions {
            policy: HostPolicy::default(),
            lease: Duration::from_secs(60),
            poll: Duration::from_millis(100),
            max_outage: Duration::from_secs(600),
            max_claims: None,
            shards: None,
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
    reserve: Script,
    quota: Script,
}

impl Scripts {
    /// The scripts, each with the shared prelude and the politeness rule's
    /// constants (from `politeness`, so the Lua twin cannot drift from them).
    fn new() -> Scripts {
        let constants = format!(
            "local WINDOW, MIN_GAP, MAX_GAP, RECOVERY_MS, RECOVERY_ROUNDS, MIN_RECOVERY_STEP, INITIAL_WINDOW = {}, {}, {}, {}, {}, {}, {}",
            politeness::WINDOW,
            politeness::MIN_DISTRESS_GAP.as_secs_f64() * 1000.0,
            millis(politeness::MAX_DISTRESS_GAP),
            millis(politeness::RECOVERY_TIME),
            politeness::RECOVERY_ROUNDS,
            politeness::MIN_RECOVERY_STEP,
            politeness::INITIAL_WINDOW,
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
            reserve: claim::reserve_script(),
            quota: claim::quota_script(),
        }
    }
}

/// What the worker and its heartbeat task share.
struct Shared {
    link: Link,
    /// The crawl-wide keys (`stats`, `meta`).
    keys: Keys,
    shards: Shards,
    /// Where the next claim starts looking, so no shard starves.
    rotor: AtomicUsize,
    options: RedisOptions,
    /// This worker's politeness rules, passed to each script call (so a live
    /// change takes effect at the next one); `options.policy` is where
    /// they started.
    policy: LivePolicy,
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
    pass: Mutex<crate::state::recrawl::PassInfo>,
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
    /// Joins crawl `crawl` on the Redis server at `url` (`redis://host:port/db`,
    /// or `redis+cluster://host:port,host:port` for a Redis Cluster, named by
    /// any of its nodes), creating it if it is new. Waits up to
    /// `options.max_outage` for a server that is not reachable yet. Must be
    /// called within a Tokio runtime: it starts the lease heartbeat.
    pub async fn connect(
        url: &str,
        crawl: &str,
        options: RedisOptions,
    ) -> Result<RedisFrontier, FrontierError> {
        if options.lease < Duration::from_millis(3) {
            return Err(FrontierError::Setting(format!(
                "lease {:?} is too short to renew",
                options.lease
            )));
        }
        let link = Link::new(url, options.max_outage)?;
        let keys = Keys::new(crawl)?;
        let shards = shard::resolve(&link, &keys, options.shards).await?;
        let shared = Arc::new(Shared {
            link,
            keys,
            shards: Shards::new(crawl, shards)?,
            rotor: AtomicUsize::new(rand::rng().random_range(0..usize::from(shards))),
            options,
            policy: LivePolicy::new(options.policy),
            scripts: Scripts::new(),
            mine: Mutex::new(HashSet::new()),
            limit_reached: AtomicBool::new(false),
            pass: Mutex::default(),
            pass_settled: AtomicBool::new(false),
        });
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
        let shards = Shards::new(crawl, shard::resolve(&link, &keys, None).await?)?;
        let mut removed = 0;
        // Shard 0 shares the crawl-wide tag, so its pattern also finds `meta`.
        for (_, keys) in shards.all() {
            removed += clean_slot(&link, keys).await?;
        }
        Ok(removed)
    }

    /// `skitter:{NAME}:`, the start of the crawl-wide keys and shard 0's (for
    /// messages); shard k > 0 is under `skitter:{NAME#k}:`.
    pub fn key_prefix(&self) -> &str {
        self.shared.keys.prefix()
    }

    /// How many URLs all workers together have claimed so far (for a
    /// crawl-wide page limit). A reclaimed lease counts again.
    pub async fn claimed(&self) -> Result<u64, FrontierError> {
        let mut total = 0;
        for (_, keys) in self.shared.shards.all() {
            let mut get = ::redis::cmd("HGET");
            get.arg(keys.key("count")).arg("claimed");
            let n: Option<u64> = self.shared.link.query("claimed", &get).await?;
            total += n.unwrap_or(0);
        }
        Ok(total)
    }

    /// How many shards the crawl is split into.
    pub fn shards(&self) -> u16 {
        self.shared.shards.len()
    }

    /// Adds `n` to the crawl-wide total `name` and returns the new total.
    pub async fn incr_stat(&self, name: &str, n: u64) -> Result<u64, FrontierError> {
        let n = i64::try_from(n)
            .map_err(|_| FrontierError::Setting(format!("stat increment {n} too large")))?;
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
                .map_err(|_| FrontierError::Setting(format!("stat increment {n} too large")))?;
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

    /// Publishes worker `id`'s line for the crawl's watchers (a small JSON
    /// document that `cluster::ClusterWatch` writes and reads).
    pub async fn put_worker(&self, id: &str, line: &str) -> Result<(), FrontierError> {
        let mut set = ::redis::cmd("HSET");
        set.arg(self.shared.keys.key("workers")).arg(id).arg(line);
        self.shared.link.query("put_worker", &set).await
    }

    /// Every worker's last published line, by worker id.
    pub async fn workers(&self) -> Result<BTreeMap<String, String>, FrontierError> {
        let mut all = ::redis::cmd("HGETALL");
        all.arg(self.shared.keys.key("workers"));
        self.shared.link.query("workers", &all).await
    }

    /// Forgets worker `id`'s line (one that stopped publishing).
    pub async fn drop_worker(&self, id: &str) -> Result<(), FrontierError> {
        let mut del = ::redis::cmd("HDEL");
        del.arg(self.shared.keys.key("workers")).arg(id);
        self.shared.link.query::<i64>("drop_worker", &del).await?;
        Ok(())
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
        let mut by_shard: BTreeMap<u16, Vec<(String, Vec<u8>)>> = BTreeMap::new();
        for url in urls {
            let (k, bucket, field) = self.shared.shards.seen_slot(url);
            by_shard.entry(k).or_default().push((bucket, field));
        }
        let mut new = 0;
        for (k, slots) in by_shard {
            for chunk in slots.chunks(OFFER_BATCH) {
                let mut call = self.invocation(k, &self.shared.scripts.seen);
                for (bucket, field) in chunk {
                    call.arg(bucket).arg(&field[..]);
                }
                new += self.run_script::<usize>("mark_seen", &call).await?;
            }
        }
        Ok(new)
    }

    fn invocation<'a>(&self, shard: u16, script: &'a Script) -> ::redis::ScriptInvocation<'a> {
        self.shared.invocation(shard, script)
    }

    async fn run_script<T: ::redis::FromRedisValue + Send>(
        &self,
        what: &str,
        call: &::redis::ScriptInvocation<'_>,
    ) -> Result<T, FrontierError> {
        self.shared.link.invoke(what, call).await
    }

    /// Acks lease `id` in Redis, or hands it back for another attempt (see
    /// [`Hand`]); `None` if it was no longer there.
    async fn ack(
        &self,
        id: u64,
        feedback: HostFeedback,
        hand: Hand<'_>,
    ) -> Result<Option<Option<Throttle>>, FrontierError> {
        let (signal, wait, reason) = match feedback {
            HostFeedback::Silent => (0, 0, 0),
            HostFeedback::Clean => (1, 0, 0),
            HostFeedback::Failed => (2, 0, 0),
            HostFeedback::FailedAgain => (5, 0, 0),
            HostFeedback::SlowDown(wait, reason) => (3, millis(wait), reason_code(reason)),
        };
        let script = match hand {
            Hand::Retry(..) => &self.shared.scripts.retry,
            Hand::Complete(_) => &self.shared.scripts.complete,
        };
        let (shard, seq) = self.shared.shards.split_lease(id);
        let mut call = self.invocation(shard, script);
        call.arg(self.shared.policy.get().max_in_flight.max(1))
            .arg(seq)
            .arg(signal)
            .arg(wait)
            .arg(reason);
        match hand {
            Hand::Retry(wait, tries) => {
                call.arg(millis(wait)).arg(tries);
            }
            Hand::Complete(Some(url)) => {
                call.arg(url.as_str());
            }
            Hand::Complete(None) => {}
        }
        let (found, why, cut, limit, gap): (u8, u8, u8, u64, u64) =
            self.run_script("complete", &call).await?;
        if found == 0 {
            return Ok(None);
        }
        if found == 2 {
            tracing::warn!(
                "{} {seq}: dropped a malformed lease record (its host slot could not be released)",
                self.shared.shards.keys(shard).key("lease")
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
        hand: Hand<'_>,
    ) -> Result<Option<Throttle>, FrontierError> {
        if !self.own_leases().contains(&lease.id) {
            return Err(FrontierError::UnknownLease(lease.id));
        }
        let acked = self.ack(lease.id, feedback, hand).await?;
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

/// How a lease is handed back.
#[derive(Clone, Copy, Debug)]
enum Hand<'a> {
    /// Done with; with the URL when the worker quarantined it (kept in the
    /// shard's `quarantine` hash).
    Complete(Option<&'a Url>),
    /// For another attempt after this wait, with the tries so far.
    Retry(Duration, u32),
}

fn lock(mine: &Mutex<HashSet<u64>>) -> std::sync::MutexGuard<'_, HashSet<u64>> {
    // The set holds plain ids; after a panic elsewhere it is still consistent.
    mine.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// A script call on shard `shard`, with its fixed keys and prefix filled in.
    fn invocation<'a>(&self, shard: u16, script: &'a Script) -> ::redis::ScriptInvocation<'a> {
        let keys = self.shards.keys(shard);
        let mut call = script.prepare_invoke();
        for key in keys.script_keys() {
            call.key(key);
        }
        call.arg(keys.prefix());
        call
    }
}

/// Deletes every key under one slot's prefix (SCAN + UNLINK on the node that
/// holds the slot) and returns how many there were.
async fn clean_slot(link: &Link, keys: &Keys) -> Result<u64, FrontierError> {
    let pattern = keys.scan_pattern();
    let slot_key = keys.key("count");
    let (mut cursor, mut removed) = (0u64, 0u64);
    loop {
        let mut scan = ::redis::cmd("SCAN");
        scan.arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(1000);
        let (next, batch): (u64, Vec<Vec<u8>>) =
            link.query_at("clean: scan", &slot_key, &scan).await?;
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

/// Keeps this worker's leases alive while it runs, so a fetch longer than the
/// lease is not taken over by another worker.
async fn heartbeat(shared: Arc<Shared>) {
    let every = shared.options.lease / 3;
    loop {
        tokio::time::sleep(every).await;
        let mut by_shard: BTreeMap<u16, Vec<u64>> = BTreeMap::new();
        for id in lock(&shared.mine).iter() {
            let (k, seq) = shared.shards.split_lease(*id);
            by_shard.entry(k).or_default().push(seq);
        }
        for (k, seqs) in by_shard {
            let mut call = shared.invocation(k, &shared.scripts.renew);
            call.arg(millis(shared.options.lease)).arg(&seqs);
            let renewed = shared.link.invoke::<usize>("renew leases", &call).await;
            if let Err(e) = renewed {
                tracing::warn!(error = %e, "could not renew leases; other workers may take them over");
            }
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

    /// This worker's rules: a change holds for its own claims (the other
    /// workers' keep theirs).
    fn politeness(&self) -> Option<LivePolicy> {
        Some(self.shared.policy.clone())
    }

    async fn offer(&self, requests: Vec<Request>) -> Result<usize, FrontierError> {
        // Each URL is deduplicated and queued in its own host's shard.
        let mut by_shard: BTreeMap<u16, Vec<(String, Vec<u8>, Request)>> = BTreeMap::new();
        for request in requests {
            let (k, bucket, field) = self.shared.shards.seen_slot(&request.url);
            by_shard
                .entry(k)
                .or_default()
                .push((bucket, field, request));
        }
        let calls = by_shard.iter().flat_map(|(k, group)| {
            group
                .chunks(OFFER_BATCH)
                .map(move |chunk| self.offer_chunk(*k, chunk))
        });
        let counts = futures_util::future::try_join_all(calls).await?;
        Ok(counts.into_iter().sum())
    }

    async fn claim(&self) -> Result<Claim, FrontierError> {
        self.claim_any().await
    }

    async fn complete(
        &self,
        lease: Lease,
        feedback: HostFeedback,
    ) -> Result<Option<Throttle>, FrontierError> {
        self.hand_back(lease, feedback, Hand::Complete(None)).await
    }

    async fn complete_with(
        &self,
        lease: Lease,
        feedback: HostFeedback,
        record: &crate::base::outcome::PageRecord,
    ) -> Result<Option<Throttle>, FrontierError> {
        let quarantined = record
            .error
            .as_ref()
            .is_some_and(|e| e.kind == crate::base::outcome::ErrorKind::Quarantined);
        let hand = Hand::Complete(quarantined.then_some(&record.url));
        self.hand_back(lease, feedback, hand).await
    }

    async fn retry(
        &self,
        lease: Lease,
        wait: Duration,
        feedback: HostFeedback,
    ) -> Result<Option<Throttle>, FrontierError> {
        let tries = lease.tries;
        self.hand_back(lease, feedback, Hand::Retry(wait, tries))
            .await
    }

    async fn complete_visit(
        &self,
        lease: Lease,
        feedback: HostFeedback,
        record: &crate::base::outcome::PageRecord,
        visit: Option<&crate::state::recrawl::Visit>,
    ) -> Result<Option<Throttle>, FrontierError> {
        if let Some(visit) = visit {
            self.put_visit(&record.url, lease.request.depth, visit)
                .await?;
        }
        self.complete_with(lease, feedback, record).await
    }

    /// The pass read when this worker joined, or the one
    /// [`RedisFrontier::begin_pass`] started.
    fn pass(&self) -> Option<crate::state::recrawl::PassInfo> {
        Some(*self.shared.pass.lock().unwrap_or_else(|e| e.into_inner()))
    }

    async fn recall(
        &self,
        url: &Url,
    ) -> Result<Option<crate::state::recrawl::Visit>, FrontierError> {
        self.get_visit(url).await
    }

    async fn set_host_delay(&self, host: &HostKey, delay: Duration) -> Result<(), FrontierError> {
        let keys = self.shared.shards.keys(self.shared.shards.of_host(host));
        let mut set = ::redis::cmd("HSET");
        set.arg(keys.key(&format!("h:{host}")))
            .arg("floor")
            .arg(millis(delay));
        self.shared.link.query("set_host_delay", &set).await
    }

    async fn take_host_quota(
        &self,
        host: &HostKey,
        max: u64,
    ) -> Result<Option<bool>, FrontierError> {
        self.take_quota(host, max).await.map(Some)
    }

    async fn counts(&self) -> Result<FrontierCounts, FrontierError> {
        let mut total = FrontierCounts::default();
        for (k, _) in self.shared.shards.all() {
            let shard = self.shard_state(k).await?;
            total.queued += shard.queued;
            total.leased += shard.leased;
            total.seen += shard.seen;
        }
        Ok(total)
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
    FrontierError::Malformed(format!(
        "field {field} of {key} holds {shown:?}, not an integer (repair or delete it)"
    ))
}
