//! Claiming across shards and telling when a sharded crawl is over: each
//! claim tries the shards in turn from a rotating start (so no shard starves),
//! each try one single-slot claim script; the crawl-wide end is the two-pass
//! idle check described in the module header of `redis`; and with more than
//! one shard the crawl-wide claim limit is a reservation counter in the
//! crawl-wide slot.

use std::sync::atomic::Ordering;
use std::time::Duration;

use ::redis::Script;

use super::layout::decode_request;
use super::{
    Claim, FrontierError, Hand, HostFeedback, Lease, RECLAIM_BATCH, RedisFrontier, Request, millis,
    random_up_to,
};
use crate::host::HostKey;

/// Takes one claim of the crawl-wide limit if any is left (KEYS[1] `claims`,
/// ARGV[1] the limit): 1 if taken, 0 if the limit is used up.
pub(super) const RESERVE_LUA: &str = r"
local n = redis.call('INCR', KEYS[1])
if n > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return 0
end
return 1
";

/// Takes one fetch of a host's crawl-wide quota (KEYS[1] the shard's
/// `fetched` hash, ARGV[1] the host, ARGV[2] the quota): 1 if taken, 0 if
/// the host has used it up.
pub(super) const QUOTA_LUA: &str = r"
local n = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
if n > tonumber(ARGV[2]) then
  redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
  return 0
end
return 1
";

/// One shard's figures, read atomically.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ShardState {
    /// URLs queued.
    pub(super) queued: u64,
    /// Leases out plus retries waiting.
    pub(super) leased: u64,
    /// URLs ever seen.
    pub(super) seen: u64,
    /// Leases ever issued (moves with every claim).
    lease_seq: u64,
    /// Leases out.
    leases: u64,
}

impl ShardState {
    fn idle(&self) -> bool {
        self.queued == 0 && self.leased == 0
    }
}

impl RedisFrontier {
    /// One claim over all shards (see the module header).
    pub(super) async fn claim_any(&self) -> Result<Claim, FrontierError> {
        let shards = self.shared.shards.len();
        let limited = shards > 1 && self.shared.options.max_claims.is_some();
        if limited && !self.reserve_claim().await? {
            return self.limit_used_up().await;
        }
        let poll = self.shared.options.poll.max(Duration::from_millis(1));
        let start = self.shared.rotor.fetch_add(1, Ordering::Relaxed);
        let mut wait: Option<Duration> = None;
        for i in 0..usize::from(shards) {
            let k = u16::try_from((start.wrapping_add(i)) % usize::from(shards)).unwrap_or(0);
            match self
                .claim_in(k, script_limit(shards, self.shared.options.max_claims))
                .await?
            {
                Claim::Ready(lease) => return Ok(Claim::Ready(lease)),
                Claim::Wait(w) => {
                    let w = w.unwrap_or(poll);
                    wait = Some(wait.map_or(w, |soonest| soonest.min(w)));
                }
                Claim::Exhausted if shards == 1 => return Ok(Claim::Exhausted),
                Claim::Exhausted => {}
            }
        }
        if limited {
            self.unreserve_claim().await?;
        }
        match wait {
            Some(w) => Ok(Claim::Wait(Some(w))),
            None if self.all_idle().await? => Ok(Claim::Exhausted),
            None => Ok(Claim::Wait(Some(poll))),
        }
    }

    /// One claim script on shard `k` with the script's own claim limit
    /// (0: none), dropping malformed entries it meets.
    async fn claim_in(&self, k: u16, script_limit: u64) -> Result<Claim, FrontierError> {
        let options = self.shared.options;
        let shards = &self.shared.shards;
        loop {
            let policy = self.shared.policy.get();
            let mut call = self.invocation(k, &self.shared.scripts.claim);
            call.arg(policy.max_in_flight.max(1))
                .arg(millis(policy.delay))
                .arg(millis(random_up_to(policy.jitter)))
                .arg(millis(options.lease))
                .arg(millis(options.poll).max(1))
                .arg(RECLAIM_BATCH)
                .arg(script_limit);
            let (kind, n, entry, tries, lost): (u8, u64, Vec<u8>, u32, u32) =
                self.run_script("claim", &call).await?;
            match kind {
                1 => {
                    let id = shards.lease_id(k, n);
                    let Some(request) = decode_entry(&entry) else {
                        // Not ours to crash on: drop the entry and hand the slot back.
                        tracing::warn!(
                            "{} {n}: dropping a queue entry that is not a request: {:.200}",
                            shards.keys(k).key("lease"),
                            String::from_utf8_lossy(&entry)
                        );
                        self.ack(id, HostFeedback::Silent, Hand::Complete(None))
                            .await?;
                        continue;
                    };
                    self.own_leases().insert(id);
                    if !self.shared.pass_settled.swap(true, Ordering::Relaxed) {
                        self.set_pass(self.load_pass().await?);
                    }
                    return Ok(Claim::Ready(Lease {
                        id,
                        request,
                        tries,
                        lost,
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

    /// Shard `k`'s figures, in one atomic read of its slot.
    pub(super) async fn shard_state(&self, k: u16) -> Result<ShardState, FrontierError> {
        let keys = self.shared.shards.keys(k);
        let mut pipe = ::redis::pipe();
        pipe.atomic()
            .cmd("HMGET")
            .arg(keys.key("count"))
            .arg("queued")
            .arg("seen")
            .arg("retrying")
            .arg("lease_seq")
            .cmd("ZCARD")
            .arg(keys.key("leases"));
        type Counts = (Option<i64>, Option<u64>, Option<i64>, Option<u64>);
        let ((queued, seen, retrying, lease_seq), leases): (Counts, u64) =
            self.shared.link.query_pipe("counts", &pipe).await?;
        let positive = |n: Option<i64>| n.map_or(0, |q| q.max(0).unsigned_abs());
        Ok(ShardState {
            queued: positive(queued),
            leased: leases + positive(retrying),
            seen: seen.unwrap_or(0),
            lease_seq: lease_seq.unwrap_or(0),
            leases,
        })
    }

    /// Whether at one instant every shard was empty with no lease out: two
    /// passes over the shards, both all idle, with nothing offered or claimed
    /// in between (see the module header of `redis`).
    async fn all_idle(&self) -> Result<bool, FrontierError> {
        let mut first = Vec::with_capacity(usize::from(self.shared.shards.len()));
        for (k, _) in self.shared.shards.all() {
            let state = self.shard_state(k).await?;
            if !state.idle() {
                return Ok(false);
            }
            first.push(state);
        }
        for ((k, _), before) in self.shared.shards.all().zip(first) {
            if self.shard_state(k).await? != before {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Takes one fetch of `host`'s quota of `max`, counted for the whole
    /// crawl in its shard's `fetched` hash; `false` when it is used up.
    pub(super) async fn take_quota(&self, host: &HostKey, max: u64) -> Result<bool, FrontierError> {
        let keys = self.shared.shards.keys(self.shared.shards.of_host(host));
        let mut call = self.shared.scripts.quota.prepare_invoke();
        call.key(keys.key("fetched")).arg(host.as_str()).arg(max);
        let taken: u8 = self.run_script("take host quota", &call).await?;
        Ok(taken == 1)
    }

    /// Takes one claim of the crawl-wide limit; `false` when it is used up.
    async fn reserve_claim(&self) -> Result<bool, FrontierError> {
        let max = self.shared.options.max_claims.unwrap_or(u64::MAX);
        let mut call = self.shared.scripts.reserve.prepare_invoke();
        call.key(self.shared.keys.key("claims")).arg(max);
        let taken: u8 = self.run_script("reserve claim", &call).await?;
        Ok(taken == 1)
    }

    /// Gives back a reservation no claim used.
    async fn unreserve_claim(&self) -> Result<(), FrontierError> {
        let mut decr = ::redis::cmd("DECR");
        decr.arg(self.shared.keys.key("claims"));
        self.shared
            .link
            .query::<i64>("unreserve claim", &decr)
            .await?;
        Ok(())
    }

    /// The limit is used up: the crawl ends for everyone once no lease is out.
    /// Retries waiting are not counted: nothing more will claim them.
    async fn limit_used_up(&self) -> Result<Claim, FrontierError> {
        for (k, _) in self.shared.shards.all() {
            if self.shard_state(k).await?.leases == 0 {
                continue;
            }
            // A shard with a lease out has claimed at least once, so its claim
            // script with a limit of one requeues its expired leases (a dead
            // worker's) and answers without claiming: exhausted once none is out.
            if !matches!(self.claim_in(k, 1).await?, Claim::Exhausted) {
                return Ok(Claim::Wait(Some(self.shared.options.poll)));
            }
        }
        self.shared.limit_reached.store(true, Ordering::Relaxed);
        Ok(Claim::Exhausted)
    }

    /// Dedup-and-enqueue of one batch of URLs whose hosts are all in shard `k`.
    pub(super) async fn offer_chunk(
        &self,
        k: u16,
        chunk: &[(String, Vec<u8>, Request)],
    ) -> Result<usize, FrontierError> {
        let mut call = self.invocation(k, &self.shared.scripts.offer);
        call.arg(self.shared.policy.get().max_in_flight.max(1));
        for (bucket, field, request) in chunk {
            call.arg(bucket)
                .arg(&field[..])
                .arg(super::host_of(request).as_str())
                .arg(super::encode_request(request));
        }
        self.run_script::<usize>("offer", &call).await
    }
}

/// The claim limit a shard's claim script enforces: the crawl's with one
/// shard; none with several, where the reservation counter holds it.
fn script_limit(shards: u16, max_claims: Option<u64>) -> u64 {
    if shards == 1 {
        max_claims.unwrap_or(0)
    } else {
        0
    }
}

/// A queue entry read back, `None` if it is not one skitter wrote.
fn decode_entry(entry: &[u8]) -> Option<Request> {
    std::str::from_utf8(entry).ok().and_then(decode_request)
}

/// The reservation script, compiled once with the others.
pub(super) fn reserve_script() -> Script {
    Script::new(RESERVE_LUA)
}

/// The per-host quota script, compiled once with the others.
pub(super) fn quota_script() -> Script {
    Script::new(QUOTA_LUA)
}
