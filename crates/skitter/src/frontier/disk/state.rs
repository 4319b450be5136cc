//! The disk frontier's working state: the same host round-robin as the memory
//! frontier, with the queue itself in the database and only a small window of
//! each host's next requests in memory.
//!
//! Claiming writes nothing: a queue row is deleted only when its lease completes,
//! so after a crash every leased-but-unfinished URL is simply still queued. Any
//! failed write stops the state (`failed`): memory may then be ahead of the disk,
//! and only reopening, which reloads the last commit, is safe.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use rand::RngExt;

use super::super::host::HostSlots;
use super::super::memory::fingerprint;
use super::super::{Claim, FrontierCounts, HostFeedback, HostKey, HostPolicy, Lease, Request};
use crate::outcome::{OutcomeKind, PageRecord};
use crate::store::StoreError;
use crate::store::fpset::FpSet;
use crate::store::records::{HostRow, Progress, QueuedRow, Records};

/// A rough in-memory size of one buffered request, for the refill budget.
const BUFFERED_REQUEST_BYTES: usize = 320;
/// Most requests one host keeps in memory at once.
const MAX_REFILL: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Idle,
    Ready,
    Timed,
    Full,
}

struct Host {
    row: HostRow,
    slots: HostSlots,
    place: Place,
    /// The next requests, read ahead from the queue table.
    buffer: VecDeque<QueuedRow>,
    /// The highest sequence number buffered so far.
    cursor: i64,
    /// Queued and not leased.
    waiting: u64,
    dirty: bool,
}

struct Leased {
    host: usize,
    seq: i64,
    fp: u128,
}

/// Sizes derived from the memory budget.
pub(super) struct Limits {
    pub(super) seen_bytes: usize,
    pub(super) buffer_bytes: usize,
    pub(super) commit_ops: usize,
}

pub(super) struct State {
    pub(super) records: Records,
    policy: HostPolicy,
    limits: Limits,
    seen: FpSet,
    pub(super) progress: Progress,
    hosts: Vec<Host>,
    by_key: HashMap<String, usize>,
    ready: VecDeque<usize>,
    timed: BinaryHeap<Reverse<(Instant, usize)>>,
    leases: HashMap<u64, Leased>,
    next_lease: u64,
    failed: Option<String>,
    /// Hosts whose counters changed since the last commit.
    dirty: Vec<usize>,
    /// The counters as last committed, to skip empty commits.
    committed: Progress,
    /// Commits made so far, published for callers waiting on durability.
    pub(super) commits: tokio::sync::watch::Sender<u64>,
}

impl State {
    /// Rebuilds the working state from the last commit: every queue row is
    /// waiting again, and the in-memory seen set is reloaded.
    pub(super) fn load(
        records: Records,
        policy: HostPolicy,
        limits: Limits,
    ) -> Result<State, StoreError> {
        let mut progress = records.load_progress()?;
        let mut state = State {
            policy,
            limits,
            seen: FpSet::default(),
            progress: Progress::default(),
            hosts: Vec::new(),
            by_key: HashMap::new(),
            ready: VecDeque::new(),
            timed: BinaryHeap::new(),
            leases: HashMap::new(),
            next_lease: 0,
            failed: None,
            dirty: Vec::new(),
            committed: Progress::default(),
            commits: tokio::sync::watch::Sender::new(0),
            records,
        };
        let now = Instant::now();
        progress.queued = 0;
        progress.leased = 0;
        for row in state.records.load_hosts()? {
            progress.queued += row.pending;
            let mut slots = HostSlots::new(policy);
            slots.set_delay_floor(row.delay_floor);
            let idx = state.hosts.len();
            state.by_key.insert(row.key.clone(), idx);
            state.hosts.push(Host {
                waiting: row.pending,
                row,
                slots,
                place: Place::Idle,
                buffer: VecDeque::new(),
                cursor: 0,
                dirty: false,
            });
            state.place(idx, now);
        }
        state.committed = progress.clone();
        state.progress = progress;
        let mut fps = Vec::new();
        state.records.for_each_live_fp(|fp| fps.push(fp))?;
        for fp in fps {
            state.seen.insert(fp);
        }
        state.spill_if_over()?;
        Ok(state)
    }

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
            self.failed = Some(e.to_string());
            self.records.rollback();
        }
        result
    }

    fn place(&mut self, idx: usize, now: Instant) {
        let host = &mut self.hosts[idx];
        if matches!(host.place, Place::Ready | Place::Timed) {
            return; // Already scheduled; it is re-checked when taken out.
        }
        host.place = if host.waiting == 0 {
            Place::Idle
        } else {
            match host.slots.ready_at(now) {
                Ok(()) => {
                    self.ready.push_back(idx);
                    Place::Ready
                }
                Err(Some(at)) => {
                    self.timed.push(Reverse((at, idx)));
                    Place::Timed
                }
                Err(None) => Place::Full,
            }
        };
    }

    fn host_index(&mut self, key: &str) -> Result<usize, StoreError> {
        if let Some(&idx) = self.by_key.get(key) {
            return Ok(idx);
        }
        let id = self.records.insert_host(key)?;
        let idx = self.hosts.len();
        self.hosts.push(Host {
            row: HostRow {
                id,
                key: key.to_owned(),
                ..HostRow::default()
            },
            slots: HostSlots::new(self.policy),
            place: Place::Idle,
            buffer: VecDeque::new(),
            cursor: 0,
            waiting: 0,
            dirty: false,
        });
        self.by_key.insert(key.to_owned(), idx);
        self.mark(idx);
        Ok(idx)
    }

    pub(super) fn offer(
        &mut self,
        requests: Vec<Request>,
        now: Instant,
    ) -> Result<usize, StoreError> {
        let mut new = 0;
        for request in requests {
            let fp = fingerprint(&request.url);
            if self.seen.contains(fp) || (self.progress.spilled && self.records.seen_on_disk(fp)?) {
                continue;
            }
            self.seen.insert(fp);
            let idx = self.host_index(HostKey::of(&request.url).as_str())?;
            let seq = self.progress.next_seq;
            self.records
                .push(self.hosts[idx].row.id, seq, fp, &request)?;
            self.progress.next_seq += 1;
            self.progress.seen += 1;
            self.progress.queued += 1;
            let host = &mut self.hosts[idx];
            host.row.pending += 1;
            host.waiting += 1;
            self.mark(idx);
            if self.hosts[idx].place == Place::Idle {
                self.place(idx, now);
            }
            new += 1;
        }
        self.spill_if_over()?;
        Ok(new)
    }

    /// Moves the in-memory seen set to disk once it outgrows its budget.
    fn spill_if_over(&mut self) -> Result<(), StoreError> {
        if self.seen.bytes() <= self.limits.seen_bytes {
            return Ok(());
        }
        let sorted = self.seen.take_sorted();
        self.records.spill(&sorted)?;
        self.progress.spilled = true;
        self.commit()
    }

    fn promote_due(&mut self, now: Instant) {
        while let Some(Reverse((at, idx))) = self.timed.peek().copied() {
            if at > now {
                break;
            }
            self.timed.pop();
            self.hosts[idx].place = Place::Idle;
            self.place(idx, now);
        }
    }

    pub(super) fn claim(&mut self, now: Instant) -> Result<Claim, StoreError> {
        self.promote_due(now);
        while let Some(idx) = self.ready.pop_front() {
            self.hosts[idx].place = Place::Idle;
            let host = &self.hosts[idx];
            if host.slots.ready_at(now).is_err() || host.waiting == 0 {
                self.place(idx, now);
                continue;
            }
            let row = self.next_row(idx)?;
            let host = &mut self.hosts[idx];
            let jitter = random_up_to(host.slots.jitter());
            host.slots.start(now, jitter);
            host.waiting -= 1;
            self.progress.queued -= 1;
            self.place(idx, now);
            let id = self.next_lease;
            self.next_lease += 1;
            let leased = Leased {
                host: idx,
                seq: row.seq,
                fp: row.fp,
            };
            self.leases.insert(id, leased);
            return Ok(Claim::Ready(Lease {
                id,
                request: row.request,
            }));
        }
        if let Some(Reverse((at, _))) = self.timed.peek() {
            return Ok(Claim::Wait(Some(at.saturating_duration_since(now))));
        }
        if self.progress.queued == 0 && self.leases.is_empty() {
            Ok(Claim::Exhausted)
        } else {
            Ok(Claim::Wait(None))
        }
    }

    /// The host's next request, reading ahead from the queue table when its
    /// window is empty. The window shrinks as hosts multiply, bounding memory.
    fn next_row(&mut self, idx: usize) -> Result<QueuedRow, StoreError> {
        if self.hosts[idx].buffer.is_empty() {
            let per_host =
                self.limits.buffer_bytes / BUFFERED_REQUEST_BYTES / self.hosts.len().max(1);
            let limit = per_host.clamp(1, MAX_REFILL);
            let host = &self.hosts[idx];
            let rows = self.records.next_batch(host.row.id, host.cursor, limit)?;
            let host = &mut self.hosts[idx];
            if let Some(last) = rows.last() {
                host.cursor = last.seq;
            }
            host.buffer.extend(rows);
        }
        let host = &mut self.hosts[idx];
        host.buffer.pop_front().ok_or_else(|| {
            let key = &host.row.key;
            StoreError::Corrupt(format!(
                "host {key} counts queued URLs its queue does not hold"
            ))
        })
    }

    pub(super) fn complete(
        &mut self,
        lease: u64,
        feedback: HostFeedback,
        now: Instant,
    ) -> Result<bool, StoreError> {
        let Some(leased) = self.leases.remove(&lease) else {
            return Ok(false);
        };
        let host_id = self.hosts[leased.host].row.id;
        self.records.remove(host_id, leased.seq, leased.fp)?;
        self.progress.done += 1;
        let host = &mut self.hosts[leased.host];
        host.row.pending -= 1;
        host.row.done += 1;
        host.slots.finish(now, feedback.back_off);
        if host.place == Place::Full {
            host.place = Place::Idle;
            self.place(leased.host, now);
        }
        self.mark(leased.host);
        Ok(true)
    }

    pub(super) fn record_outcome(&mut self, record: &PageRecord) -> Result<(), StoreError> {
        let json = serde_json::to_string(record).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let failed = matches!(record.kind, OutcomeKind::Failed | OutcomeKind::HttpError);
        let previous = self
            .records
            .put_outcome(fingerprint(&record.url), failed, &json)?;
        let delta = i64::from(failed) - i64::from(previous == Some(true));
        if previous.is_none() {
            self.progress.outcomes += 1;
        }
        self.progress.errors = self.progress.errors.saturating_add_signed(delta);
        if let Some(&idx) = self.by_key.get(HostKey::of(&record.url).as_str()) {
            let host = &mut self.hosts[idx];
            host.row.errors = host.row.errors.saturating_add_signed(delta);
            self.mark(idx);
        }
        Ok(())
    }

    pub(super) fn set_host_delay(
        &mut self,
        key: &HostKey,
        delay: Duration,
    ) -> Result<(), StoreError> {
        let idx = self.host_index(key.as_str())?;
        let host = &mut self.hosts[idx];
        host.slots.set_delay_floor(delay);
        host.row.delay_floor = delay;
        self.mark(idx);
        Ok(())
    }

    /// Commits once enough writes have piled up; the committer thread takes care
    /// of the time-based commits.
    pub(super) fn commit_if_full(&mut self) -> Result<(), StoreError> {
        if self.records.pending_ops() >= self.limits.commit_ops {
            self.commit()?;
        }
        Ok(())
    }

    pub(super) fn counts(&self) -> FrontierCounts {
        FrontierCounts {
            queued: self.progress.queued,
            leased: self.leases.len() as u64,
            seen: self.progress.seen,
        }
    }

    fn mark(&mut self, idx: usize) {
        if !self.hosts[idx].dirty {
            self.hosts[idx].dirty = true;
            self.dirty.push(idx);
        }
    }

    pub(super) fn commit(&mut self) -> Result<(), StoreError> {
        self.progress.leased = self.leases.len() as u64;
        let hosts = &self.hosts;
        let dirty = self.dirty.iter().map(|&i| &hosts[i].row);
        self.records.commit(&self.progress, dirty)?;
        for idx in self.dirty.drain(..) {
            self.hosts[idx].dirty = false;
        }
        self.committed = self.progress.clone();
        self.commits.send_modify(|n| *n += 1);
        Ok(())
    }

    /// Whether anything, even just a counter a status reader shows, changed since
    /// the last commit.
    pub(super) fn has_uncommitted(&self) -> bool {
        self.records.pending_ops() > 0
            || !self.dirty.is_empty()
            || self.committed.leased != self.leases.len() as u64
            || self.committed.queued != self.progress.queued
    }
}

fn random_up_to(max: Duration) -> Duration {
    if max.is_zero() {
        return Duration::ZERO;
    }
    Duration::from_nanos(rand::rng().random_range(0..=max.as_nanos() as u64))
}
