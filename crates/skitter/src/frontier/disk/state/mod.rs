//! The disk frontier's working state: the same turn-taking of hosts as the
//! memory frontier (the shared rota), with each host's queue in chunks (see `queue`) and every change
//! recorded as an op in the pending [`Batch`] that the next commit writes.
//!
//! Claiming writes only the URL's tries, marked held (see
//! `state::store::attempts`): a chunk is deleted only when its last request is
//! completed, and each completion leaves its fingerprint in `done`, so after a
//! crash every leased-but-unfinished URL is simply still queued, with its tries
//! and one lost lease more. Any failed write
//! stops the state (`failed`): memory may then be ahead of the disk, and only
//! reopening, which reloads the last commit, is safe.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::super::memory::fingerprint;
use super::super::retry_queue::RetryQueue;
use super::Db;
use crate::frontier::{Claim, FrontierCounts, Lease, Request};
use crate::host::politeness::HostSlots;
use crate::host::rota::{Place, Rota};
use crate::host::{HostFeedback, HostKey, LivePolicy, Throttle};

mod hosts;
mod restore;
use super::queue::HostQueue;
use crate::base::outcome::{OutcomeKind, PageRecord};
use crate::state::store::StoreError;
use crate::state::store::attempts::Attempts;
use crate::state::store::batch::{Batch, Op, Snapshot};
use crate::state::store::chunk::Chunk;
use crate::state::store::counters::{HostRow, Progress};
use crate::state::store::fpset::FpSet;

/// A rough in-memory size of one buffered request, for the chunk size.
const BUFFERED_REQUEST_BYTES: usize = 320;
/// Most requests one chunk holds, so one host's window stays small.
const MAX_CHUNK: usize = 64;

struct Host {
    row: HostRow,
    slots: HostSlots,
    place: Place,
    queue: HostQueue,
    /// Queued and not leased.
    waiting: u64,
    /// Leases handed back for another attempt. They stay in their chunk (not
    /// done), so a crash simply queues them again.
    retries: RetryQueue<(Request, Leased, u32)>,
    dirty: bool,
    /// Whether it is in the watch list (see `hosts`).
    watched: bool,
    /// The generation of the last commit that wrote its row.
    written: u64,
}

impl Host {
    fn work_at(&self, now: Instant) -> Option<Instant> {
        self.retries.work_at(self.waiting > 0, now)
    }
}

struct Leased {
    host: usize,
    chunk: i64,
    fp: u128,
    /// Its tries and lost leases as claimed, which a clean close records
    /// (the lease not lost: the run handed it back).
    attempts: Attempts,
}

/// Sizes derived from the memory budget.
pub(super) struct Limits {
    pub(super) seen_bytes: usize,
    pub(super) buffer_bytes: usize,
}

pub(super) struct State {
    /// The crawl's rules, shared with every host (see [`LivePolicy`]).
    policy: LivePolicy,
    limits: Limits,
    seen: FpSet,
    progress: Progress,
    hosts: Vec<Host>,
    by_key: HashMap<String, usize>,
    /// Forgotten hosts and the watch for idle ones (see `hosts`).
    forgotten: hosts::Forgotten,
    rota: Rota,
    leases: HashMap<u64, Leased>,
    /// Tries of queued URLs from before this run (see `attempts`), taken
    /// when each is claimed.
    attempts: HashMap<u128, Attempts>,
    /// Requests waiting in some host's retry queue.
    retrying: u64,
    next_lease: u64,
    failed: Option<String>,
    /// Hosts whose counters changed since the last snapshot.
    dirty: Vec<usize>,
    /// The counters as last snapshotted, to skip empty commits.
    committed: Progress,
    /// Writes not yet taken by a commit, and their generation.
    batch: Batch,
    pub(super) generation: u64,
    /// Hosts that may have requests in their open chunk.
    open_hosts: Vec<usize>,
    open_entries: usize,
    /// Sealed chunks kept in memory, oldest first, and their bytes.
    kept_order: VecDeque<(usize, i64)>,
    kept_bytes: usize,
    key_buf: String,
    /// Someone waits for the pending batch to be committed.
    pub(super) waiting: bool,
    /// The committer was told the pending batch is big.
    pub(super) nudged: bool,
    /// The frontier is closing: the committer stops.
    pub(super) stop: bool,
}

impl State {
    /// Refuses work once a write has failed.
    pub(super) fn check(&self) -> Result<(), StoreError> {
        match &self.failed {
            Some(why) => Err(StoreError::Stopped(why.clone())),
            None => Ok(()),
        }
    }

    /// Records a failure so nothing more is written, and passes it on.
    pub(super) fn guard<T>(&mut self, result: Result<T, StoreError>) -> Result<T, StoreError> {
        if let Err(e) = &result {
            self.fail(e.to_string());
        }
        result
    }

    pub(super) fn fail(&mut self, why: String) {
        self.failed.get_or_insert(why);
        self.batch = Batch::default();
    }

    fn place(&mut self, idx: usize, now: Instant) {
        let host = &mut self.hosts[idx];
        let work_at = host.work_at(now);
        self.rota
            .place(idx, &mut host.place, work_at, &host.slots, now);
    }

    /// Places a host again after it got work or its slots changed (a stale
    /// timed entry is harmless: it is re-checked when it comes up).
    fn replace(&mut self, idx: usize, now: Instant) {
        if !self.hosts[idx].place.is_ready() {
            self.hosts[idx].place = Place::Idle;
            self.place(idx, now);
        }
    }

    fn next_id(&mut self) -> i64 {
        self.progress.next_seq += 1;
        self.progress.next_seq
    }

    pub(super) fn offer(
        &mut self,
        requests: Vec<Request>,
        now: Instant,
        db: &Mutex<Db>,
    ) -> Result<usize, StoreError> {
        let mut new = 0;
        let mut disk = None;
        for request in requests {
            let fp = fingerprint(&request.url);
            if self.progress.spilled {
                if self.seen.contains(fp) {
                    continue;
                }
                let db = disk.get_or_insert_with(|| super::lock(db));
                if db.records.seen_on_disk(fp)? {
                    continue;
                }
                self.seen.insert(fp);
            } else if !self.seen.insert(fp) {
                continue;
            }
            let idx = self.host_of(&request.url, db)?;
            self.push(idx, fp, &request);
            self.progress.seen += 1;
            self.progress.queued += 1;
            let host = &mut self.hosts[idx];
            host.row.pending += 1;
            host.waiting += 1;
            let was_empty = host.waiting == 1;
            self.mark(idx);
            if was_empty && self.hosts[idx].place != Place::Full {
                self.replace(idx, now);
            }
            new += 1;
        }
        Ok(new)
    }

    /// Requests per chunk: the read-ahead budget shared by all hosts.
    fn chunk_cap(&self) -> usize {
        let per_host = self.limits.buffer_bytes / BUFFERED_REQUEST_BYTES / self.by_key.len().max(1);
        per_host.clamp(1, MAX_CHUNK)
    }

    fn push(&mut self, idx: usize, fp: u128, request: &Request) {
        let cap = self.chunk_cap();
        if self.hosts[idx].queue.open.is_empty() {
            self.open_hosts.push(idx);
        }
        let open = &mut self.hosts[idx].queue.open;
        open.push(fp, request);
        let full = open.len() >= cap;
        self.open_entries += 1;
        if full {
            let chunk = self.seal(idx);
            self.keep(idx, chunk);
        }
    }

    /// Seals a host's open chunk into the pending batch.
    fn seal(&mut self, idx: usize) -> Arc<Chunk> {
        let id = self.next_id();
        let host = &mut self.hosts[idx];
        let chunk = Arc::new(host.queue.open.seal(id, host.row.id));
        self.open_entries -= chunk.len();
        self.batch.push(Op::Chunk(Arc::clone(&chunk)));
        chunk
    }

    fn keep(&mut self, idx: usize, chunk: Arc<Chunk>) {
        self.kept_bytes += chunk.bytes();
        self.kept_order.push_back((idx, chunk.id));
        self.hosts[idx]
            .queue
            .kept
            .push_back((chunk, self.generation));
    }

    fn promote_due(&mut self, now: Instant) {
        while let Some(idx) = self.rota.pop_due(now) {
            self.hosts[idx].place = Place::Idle;
            self.place(idx, now);
        }
    }

    pub(super) fn claim(&mut self, now: Instant, db: &Mutex<Db>) -> Result<Claim, StoreError> {
        self.promote_due(now);
        self.sweep(now);
        while let Some((idx, ring)) = self.rota.pop_ready(|i| self.hosts[i].place) {
            self.hosts[idx].place = Place::Idle;
            let host = &mut self.hosts[idx];
            if host.slots.ready_at(now).is_err() || host.work_at(now).is_none_or(|t| t > now) {
                self.place(idx, now);
                continue;
            }
            // A due retry goes before new work: it has waited already.
            if let Some((request, mut leased, tries)) = host.retries.pop_due(now) {
                host.slots.start_claimed(now, ring);
                self.retrying -= 1;
                self.place(idx, now);
                let id = self.next_lease;
                self.next_lease += 1;
                leased.attempts.tries = tries;
                let lost = leased.attempts.lost;
                self.hold(&leased);
                self.leases.insert(id, leased);
                return Ok(Claim::Ready(Lease {
                    id,
                    request,
                    tries,
                    lost,
                }));
            }
            if self.hosts[idx].queue.window.is_empty() {
                self.refill(idx, db)?;
            }
            let host = &mut self.hosts[idx];
            let Some(entry) = host.queue.window.pop_front() else {
                let key = &host.row.key;
                return Err(StoreError::Corrupt(format!(
                    "host {key} counts queued URLs its queue does not hold"
                )));
            };
            host.slots.start_claimed(now, ring);
            host.waiting -= 1;
            self.progress.queued -= 1;
            self.place(idx, now);
            let id = self.next_lease;
            self.next_lease += 1;
            let attempts = self.attempts.remove(&entry.fp).unwrap_or_default();
            let leased = Leased {
                host: idx,
                chunk: entry.chunk,
                fp: entry.fp,
                attempts,
            };
            self.hold(&leased);
            self.leases.insert(id, leased);
            return Ok(Claim::Ready(Lease {
                id,
                request: entry.request,
                tries: attempts.tries,
                lost: attempts.lost,
            }));
        }
        if let Some(wait) = self.rota.next_wait(now) {
            return Ok(Claim::Wait(Some(wait)));
        }
        if self.progress.queued == 0 && self.leases.is_empty() && self.retrying == 0 {
            Ok(Claim::Exhausted)
        } else {
            Ok(Claim::Wait(None))
        }
    }

    /// Records that this run holds a claimed URL: should it die before
    /// handing the URL back, the next run counts a lost lease (see `attempts`).
    fn hold(&mut self, leased: &Leased) {
        self.batch.push(Op::Attempts {
            fp: leased.fp,
            attempts: leased.attempts,
            held: true,
        });
    }

    /// On a clean close: the URLs still claimed were handed back, not lost
    /// with a dying run; they keep their tries and are not charged.
    pub(super) fn release_leases(&mut self) {
        for leased in self.leases.values() {
            self.batch.push(Op::Attempts {
                fp: leased.fp,
                attempts: leased.attempts,
                held: false,
            });
        }
    }

    /// Loads a host's oldest unloaded chunk into its window.
    fn refill(&mut self, idx: usize, db: &Mutex<Db>) -> Result<(), StoreError> {
        let host_id = self.hosts[idx].row.id;
        let queue = &mut self.hosts[idx].queue;
        let chunk =
            if queue.on_disk > 0 {
                let found = super::lock(db).records.next_chunk(host_id, queue.cursor)?;
                queue.on_disk -= 1;
                Arc::new(found.ok_or_else(|| {
                    StoreError::Corrupt(format!("host {host_id} lost a queue chunk"))
                })?)
            } else if let Some((chunk, _)) = queue.kept.pop_front() {
                self.kept_bytes -= chunk.bytes();
                chunk
            } else if !queue.open.is_empty() {
                self.seal(idx)
            } else {
                return Ok(());
            };
        self.hosts[idx].queue.load(&chunk)
    }

    /// Completes a lease; `fetched` unless its URL was skipped before
    /// fetching, which the limits do not count (see `Progress::fetched`).
    pub(super) fn complete(
        &mut self,
        lease: u64,
        feedback: HostFeedback,
        fetched: bool,
        now: Instant,
    ) -> Result<Option<Option<Throttle>>, StoreError> {
        let Some(leased) = self.leases.remove(&lease) else {
            return Ok(None);
        };
        self.batch.push(Op::Done(leased.fp));
        if self.hosts[leased.host].queue.finish(leased.chunk)? {
            self.batch.push(Op::DropChunk(leased.chunk));
        }
        self.progress.done += 1;
        self.progress.fetched += u64::from(fetched);
        let host = &mut self.hosts[leased.host];
        host.row.pending -= 1;
        host.row.done += 1;
        host.row.fetched += u64::from(fetched);
        let throttle = host.slots.finish(now, feedback);
        if host.place == Place::Full || throttle.is_some() {
            self.replace(leased.host, now);
        } else {
            // A busy host has an idle connection again.
            self.rota
                .refresh(leased.host, &mut host.place, &host.slots, now);
        }
        self.mark(leased.host);
        self.watch(leased.host);
        self.sweep(now);
        Ok(Some(throttle))
    }

    /// Hands a lease back for another attempt at `now + wait` (see
    /// `Frontier::retry`); `None` when the lease is unknown.
    pub(super) fn retry(
        &mut self,
        lease: Lease,
        wait: Duration,
        feedback: HostFeedback,
        now: Instant,
    ) -> Option<Option<Throttle>> {
        let leased = self.leases.remove(&lease.id)?;
        let idx = leased.host;
        let host = &mut self.hosts[idx];
        let throttle = host.slots.finish(now, feedback);
        let tries = lease.tries.saturating_add(HostSlots::try_cost(feedback));
        self.batch.push(Op::Attempts {
            fp: leased.fp,
            attempts: Attempts {
                tries,
                lost: leased.attempts.lost,
            },
            held: false,
        });
        host.retries
            .push(now + wait, (lease.request, leased, tries));
        self.retrying += 1;
        self.replace(idx, now);
        Some(throttle)
    }

    /// Queues a URL's record, already encoded (outside the lock) by [`encode`].
    pub(super) fn record_outcome(
        &mut self,
        record: &crate::base::outcome::PageRecord,
        encoded: Encoded,
        leased: bool,
        db: &Mutex<Db>,
    ) -> Result<(), StoreError> {
        let url = &record.url;
        let host = self.host_id(url, db)?;
        self.batch.push(Op::Outcome {
            fp: fingerprint(url),
            host,
            failed: encoded.failed,
            json: encoded.json,
            leased,
            change: record.change,
        });
        Ok(())
    }

    pub(super) fn put(&mut self, op: Op) {
        self.batch.push(op);
    }

    pub(super) fn pending(&self) -> &Batch {
        &self.batch
    }

    pub(super) fn set_host_delay(
        &mut self,
        key: &HostKey,
        delay: Duration,
        db: &Mutex<Db>,
    ) -> Result<(), StoreError> {
        let idx = self.host_index(key, db)?;
        let host = &mut self.hosts[idx];
        host.slots.set_delay_floor(delay);
        host.row.delay_floor = delay;
        self.mark(idx);
        self.watch(idx);
        Ok(())
    }

    pub(super) fn counts(&self) -> FrontierCounts {
        FrontierCounts {
            queued: self.progress.queued,
            leased: self.leases.len() as u64 + self.retrying,
            seen: self.progress.seen,
            hosts: Some(self.host_counts().0 as u64),
            disk_bytes: None,
        }
    }

    fn mark(&mut self, idx: usize) {
        if !self.hosts[idx].dirty {
            self.hosts[idx].dirty = true;
            self.dirty.push(idx);
        }
    }

    /// Writes waiting for a commit: pending ops and requests in open chunks.
    pub(super) fn weight(&self) -> usize {
        self.batch.weight + self.open_entries
    }

    /// Whether the pending writes hold more than offers and claims.
    pub(super) fn settled(&self) -> bool {
        self.batch.settled
    }

    /// Whether anything, even just a counter a status reader shows, changed since
    /// the last snapshot.
    pub(super) fn has_uncommitted(&self) -> bool {
        !self.batch.is_empty()
            || self.open_entries > 0
            || !self.dirty.is_empty()
            || self.committed.leased != self.leases.len() as u64
            || self.committed.queued != self.progress.queued
    }

    /// Takes everything written so far for a commit: seals every open chunk,
    /// and snapshots the counters. Kept chunks whose batch was committed
    /// (`applied`) leave memory first while over the read-ahead budget.
    pub(super) fn take(&mut self, applied: u64) -> Option<(Batch, Snapshot, u64)> {
        self.forgotten.applied = applied;
        self.evict(applied);
        for idx in std::mem::take(&mut self.open_hosts) {
            if !self.hosts[idx].queue.open.is_empty() {
                let chunk = self.seal(idx);
                self.keep(idx, chunk);
            }
        }
        if !self.has_uncommitted() {
            return None;
        }
        self.progress.leased = self.leases.len() as u64;
        let generation = self.generation;
        let hosts = self
            .dirty
            .drain(..)
            .map(|idx| {
                self.hosts[idx].dirty = false;
                self.hosts[idx].written = generation;
                self.hosts[idx].row.clone()
            })
            .collect();
        let snapshot = Snapshot {
            progress: self.progress.clone(),
            hosts,
        };
        self.committed = self.progress.clone();
        self.generation += 1;
        self.waiting = false;
        self.nudged = false;
        Some((std::mem::take(&mut self.batch), snapshot, generation))
    }

    fn evict(&mut self, applied: u64) {
        while self.kept_bytes > self.limits.buffer_bytes {
            let Some(&(idx, id)) = self.kept_order.front() else {
                break;
            };
            let queue = &mut self.hosts[idx].queue;
            if let Some((chunk, generation)) = queue.kept.front()
                && chunk.id == id
                && *generation > applied
            {
                break; // Not on disk yet: it must stay readable from memory.
            }
            self.kept_order.pop_front();
            if let Some(bytes) = queue.evict(id) {
                self.kept_bytes -= bytes;
            }
        }
    }

    /// Whether the in-memory seen set outgrew its budget.
    pub(super) fn seen_over_budget(&self) -> bool {
        self.seen.bytes() > self.limits.seen_bytes
    }
}

/// A record as stored, with whether it counts as an error.
pub(super) struct Encoded {
    json: String,
    failed: bool,
}

/// Encodes a record; done before taking the lock, since it is per-page work.
pub(super) fn encode(record: &PageRecord) -> Result<Encoded, StoreError> {
    Ok(Encoded {
        json: serde_json::to_string(record).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        failed: matches!(record.kind, OutcomeKind::Failed | OutcomeKind::HttpError),
    })
}
