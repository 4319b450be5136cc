//! The in-memory frontier: a fingerprint seen set and per-host FIFO queues
//! taking turns, so one slow or rate-limited host never holds up the others.
//!
//! Hosts take turns through the shared [`Rota`] (hosts with an idle connection
//! first, see there), so `claim` is O(log hosts) however many hosts are
//! waiting.
//!
//! Memory stays within a budget: half of it for the seen set ([`SeenSet`], 16
//! bytes per URL, sorted run files beyond), a quarter for queued requests in
//! compact form, an eighth for encoded queue tails on their way to disk
//! ([`Queues`]). Below the budget nothing touches the disk. A failed spill write
//! (a full disk) stops the frontier: every later call reports it.

mod table;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use super::queue::Queues;
use super::seen::SeenSet;
use crate::frontier::{Claim, Frontier, FrontierCounts, FrontierError, Lease, Request};
use crate::host::politeness::HostSlots;
use crate::host::rota::{Place, Rota};
use crate::host::{HostFeedback, HostKey, HostPolicy, LivePolicy, Throttle};
use crate::state::spill::SpillDir;
use async_trait::async_trait;
use table::HostTable;

/// A 128-bit fingerprint of a normalised URL: 16 bytes per seen URL instead of the
/// whole string, with a collision chance that is negligible for any real crawl.
pub(crate) fn fingerprint(url: &url::Url) -> u128 {
    xxhash_rust::xxh3::xxh3_128(url.as_str().as_bytes())
}

/// The memory budget a frontier uses unless told otherwise (256 MiB).
pub const DEFAULT_MEMORY_BUDGET: usize = 256 << 20;
/// Smaller budgets are raised to this (64 KiB): below it every URL would spill.
const MIN_MEMORY_BUDGET: usize = 64 << 10;

/// How a [`MemoryFrontier`] uses memory and where it spills the rest.
#[derive(Clone, Debug)]
pub struct MemoryOptions {
    /// The politeness rules every host starts with.
    pub policy: HostPolicy,
    /// Bytes for the seen set and the queued requests together (default
    /// [`DEFAULT_MEMORY_BUDGET`], at least 64 KiB); beyond it they spill to disk.
    /// Per-host state (a few hundred bytes for each host with work queued, in
    /// flight or a gap still to wait; idle hosts are forgotten) and requests in
    /// flight are not counted.
    pub memory_budget: usize,
    /// Where spill files go (default: the system temporary directory). They are
    /// anonymous files, gone when the crawl ends however it ends.
    pub spill_dir: Option<PathBuf>,
}

impl Default for MemoryOptions {
    fn default() -> Self {
        MemoryOptions {
            policy: HostPolicy::default(),
            memory_budget: DEFAULT_MEMORY_BUDGET,
            spill_dir: None,
        }
    }
}

/// The frontier of a crawl that lives in this process only.
pub struct MemoryFrontier {
    inner: Mutex<State>,
    /// The hosts' rules, changeable while the crawl runs.
    policy: LivePolicy,
}

impl std::fmt::Debug for MemoryFrontier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("MemoryFrontier")
            .field("queued", &state.queued)
            .field("seen", &state.seen.len())
            .field("hosts", &state.hosts.live())
            .field("hosts_forgotten", &state.hosts.forgotten())
            .finish_non_exhaustive()
    }
}

struct State {
    /// The directory the seen set and the queues share, kept for its count.
    spill: SpillDir,
    seen: SeenSet,
    queues: Queues,
    tail_limit: usize,
    hosts: HostTable,
    rota: Rota,
    /// Lease id → host index.
    leases: HashMap<u64, usize>,
    /// Requests waiting in some host's retry queue.
    retrying: u64,
    /// Hosts whose queue may have an encoded tail in memory.
    tailed: Vec<usize>,
    next_lease: u64,
    queued: u64,
    failed: Option<std::sync::Arc<FrontierError>>,
}

impl MemoryFrontier {
    /// An empty frontier whose hosts all start with `policy`, within the default
    /// memory budget, spilling to the system temporary directory.
    pub fn new(policy: HostPolicy) -> Self {
        let options = MemoryOptions {
            policy,
            ..MemoryOptions::default()
        };
        let policy = LivePolicy::new(options.policy);
        MemoryFrontier {
            inner: Mutex::new(State::new(&options, policy.clone())),
            policy,
        }
    }

    /// An empty frontier with these options. Fails when a `spill_dir` is given
    /// and no spill file can be created in it, so a crawl does not find out only
    /// once it spills. (The default directory is not probed: a crawl that never
    /// outgrows the budget never touches the disk.)
    pub fn with_options(options: MemoryOptions) -> Result<Self, FrontierError> {
        if options.spill_dir.is_some() {
            SpillDir::new(options.spill_dir.clone()).check_writable()?;
        }
        let policy = LivePolicy::new(options.policy);
        Ok(MemoryFrontier {
            inner: Mutex::new(State::new(&options, policy.clone())),
            policy,
        })
    }

    /// Spill files created so far, seen-set runs and queue segments together:
    /// zero while the frontier has fitted in its budget.
    pub fn spill_files_created(&self) -> u64 {
        self.lock().spill.files_created()
    }

    /// Each ready ring's entries and live hosts (see `rota`).
    #[cfg(test)]
    pub(crate) fn ring_entries(&self) -> [(usize, usize); 3] {
        self.lock().rota.entries()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock leaves plain data behind; carry on with it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl State {
    fn new(options: &MemoryOptions, policy: LivePolicy) -> State {
        let budget = options.memory_budget.max(MIN_MEMORY_BUDGET);
        let dir = SpillDir::new(options.spill_dir.clone());
        State {
            spill: dir.clone(),
            seen: SeenSet::new(budget / 2, dir.clone()),
            queues: Queues::new(budget / 4, budget / 8, dir),
            tail_limit: budget / 8,
            hosts: HostTable::new(policy),
            rota: Rota::default(),
            leases: HashMap::new(),
            retrying: 0,
            tailed: Vec::new(),
            next_lease: 0,
            queued: 0,
            failed: None,
        }
    }

    /// Refuses work once a spill has failed: the queue may have lost requests.
    fn check(&self) -> Result<(), FrontierError> {
        match &self.failed {
            Some(first) => Err(FrontierError::Failed(first.clone())),
            None => Ok(()),
        }
    }

    /// Records a failure so that every later call reports it, and passes it on.
    fn guard<T>(&mut self, result: Result<T, FrontierError>) -> Result<T, FrontierError> {
        match result {
            Err(e) => {
                let first = std::sync::Arc::new(e);
                self.failed = Some(first.clone());
                Err(FrontierError::Failed(first))
            }
            ok => ok,
        }
    }

    /// Puts a host where its work and slots say it belongs.
    fn place(&mut self, idx: usize, now: Instant) {
        let host = &mut self.hosts[idx];
        let work_at = host.work_at(now);
        self.rota
            .place(idx, &mut host.place, work_at, &host.slots, now);
    }

    /// Places a host again after it got work that may be due sooner than the
    /// time it waits for (a stale timed entry is harmless: it is re-checked).
    fn replace(&mut self, idx: usize, now: Instant) {
        if matches!(self.hosts[idx].place, Place::Idle | Place::Timed) {
            self.hosts[idx].place = Place::Idle;
            self.place(idx, now);
        }
    }

    fn offer(&mut self, requests: Vec<Request>, now: Instant) -> Result<usize, FrontierError> {
        let mut last = None;
        let mut new = 0;
        for request in requests {
            if !self.seen.insert(fingerprint(&request.url))? {
                continue;
            }
            new += 1;
            self.queued += 1;
            let idx = self.hosts.index(HostKey::of(&request.url));
            // Tails shrink as hosts multiply, so all of them fit their share.
            let chunk_bytes = (self.tail_limit / self.hosts.live().max(1)).clamp(256, 16 << 10);
            let host = &mut self.hosts[idx];
            let was_empty = host.queue.len() == 0;
            let had_tail = host.queue.has_tail();
            self.queues
                .push(&mut host.queue, request, &mut last, chunk_bytes)?;
            if !had_tail && host.queue.has_tail() {
                self.tailed.push(idx);
            }
            if was_empty {
                self.replace(idx, now);
            }
        }
        if self.queues.tails_over() {
            for idx in std::mem::take(&mut self.tailed) {
                self.queues.flush(&mut self.hosts[idx].queue)?;
            }
        }
        Ok(new)
    }

    fn promote_due(&mut self, now: Instant) {
        while let Some(idx) = self.rota.pop_due(now) {
            self.hosts[idx].place = Place::Idle;
            self.place(idx, now);
        }
    }

    /// Forgets lease `id`; the index of its host.
    fn take_lease(&mut self, id: u64) -> Result<usize, FrontierError> {
        self.leases
            .remove(&id)
            .ok_or(FrontierError::UnknownLease(id))
    }

    /// Gives a lease's host slot back and applies the answer's feedback.
    fn release(&mut self, idx: usize, feedback: HostFeedback, now: Instant) -> Option<Throttle> {
        let host = &mut self.hosts[idx];
        let throttle = host.slots.finish(now, feedback);
        // A slow-down moves the host's next start later; a freed slot may make it
        // ready: either way its place is looked at again.
        if host.place == Place::Full || throttle.is_some() {
            self.replace_any(idx, now);
        } else {
            // A busy host has an idle connection again.
            self.rota.refresh(idx, &mut host.place, &host.slots, now);
        }
        throttle
    }

    /// Like `replace`, for a host that may also be full.
    fn replace_any(&mut self, idx: usize, now: Instant) {
        if !self.hosts[idx].place.is_ready() {
            self.hosts[idx].place = Place::Idle;
            self.place(idx, now);
        }
    }

    fn claim(&mut self, now: Instant) -> Result<Claim, FrontierError> {
        self.promote_due(now);
        self.hosts.sweep(now);
        while let Some((idx, ring)) = self.rota.pop_ready(|i| self.hosts[i].place) {
            let host = &mut self.hosts[idx];
            host.place = Place::Idle;
            if host.slots.ready_at(now).is_err() || host.work_at(now).is_none_or(|t| t > now) {
                self.place(idx, now);
                continue;
            }
            // A due retry goes before new work: it has waited already.
            let (request, tries) = match host.retries.pop_due(now) {
                Some(retry) => {
                    self.retrying -= 1;
                    retry
                }
                None => {
                    let request = self.queues.pop(&mut host.queue)?.ok_or_else(|| {
                        FrontierError::Malformed("a host's queue lost count of its requests".into())
                    })?;
                    self.queued -= 1;
                    (request, 0)
                }
            };
            let host = &mut self.hosts[idx];
            host.slots.start_claimed(now, ring);
            self.place(idx, now);
            let id = self.next_lease;
            self.next_lease += 1;
            self.leases.insert(id, idx);
            return Ok(Claim::Ready(Lease {
                id,
                request,
                tries,
                lost: 0,
            }));
        }
        if let Some(wait) = self.rota.next_wait(now) {
            return Ok(Claim::Wait(Some(wait)));
        }
        if self.queued == 0 && self.leases.is_empty() && self.retrying == 0 {
            Ok(Claim::Exhausted)
        } else {
            Ok(Claim::Wait(None))
        }
    }
}

#[async_trait]
impl Frontier for MemoryFrontier {
    async fn offer(&self, requests: Vec<Request>) -> Result<usize, FrontierError> {
        let now = Instant::now();
        let mut state = self.lock();
        state.check()?;
        let result = state.offer(requests, now);
        state.guard(result)
    }

    async fn claim(&self) -> Result<Claim, FrontierError> {
        let mut state = self.lock();
        state.check()?;
        let result = state.claim(Instant::now());
        state.guard(result)
    }

    async fn complete(
        &self,
        lease: Lease,
        feedback: HostFeedback,
    ) -> Result<Option<Throttle>, FrontierError> {
        let now = Instant::now();
        let mut state = self.lock();
        let idx = state.take_lease(lease.id)?;
        let throttle = state.release(idx, feedback, now);
        state.hosts.watch(idx);
        state.hosts.sweep(now);
        Ok(throttle)
    }

    async fn retry(
        &self,
        lease: Lease,
        wait: Duration,
        feedback: HostFeedback,
    ) -> Result<Option<Throttle>, FrontierError> {
        let now = Instant::now();
        let mut state = self.lock();
        let idx = state.take_lease(lease.id)?;
        let throttle = state.release(idx, feedback, now);
        let host = &mut state.hosts[idx];
        let tries = lease.tries.saturating_add(HostSlots::try_cost(feedback));
        host.retries.push(now + wait, (lease.request, tries));
        state.retrying += 1;
        state.replace(idx, now);
        state.hosts.sweep(now);
        Ok(throttle)
    }

    async fn set_host_delay(&self, host: &HostKey, delay: Duration) -> Result<(), FrontierError> {
        self.lock().hosts.set_delay_floor(host, delay);
        Ok(())
    }

    fn politeness(&self) -> Option<LivePolicy> {
        Some(self.policy.clone())
    }

    async fn counts(&self) -> Result<FrontierCounts, FrontierError> {
        let state = self.lock();
        Ok(FrontierCounts {
            queued: state.queued,
            leased: state.leases.len() as u64 + state.retrying,
            seen: state.seen.len(),
            hosts: Some(state.hosts.live() as u64),
            // What spilled past the memory budget and is still held.
            disk_bytes: Some(state.spill.live_bytes()),
        })
    }
}

#[cfg(test)]
pub(crate) mod tests;
