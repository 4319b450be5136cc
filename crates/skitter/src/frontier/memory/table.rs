//! The in-memory frontier's host table: the live state of each host it knows,
//! and the forgetting of hosts that owe nothing, so that a broad crawl keeps
//! state for the hosts it is working on, not for every host it ever met.
//!
//! A host with nothing queued, no retry waiting, nothing in flight, no start
//! for the rota's linger time (it counts as warm until then) and no gap or
//! slow-down still owed ([`HostSlots::is_forgettable`]) is forgotten; its slot
//! in the table is reused. Offering its URLs again builds it afresh, which loses
//! nothing: a fresh host may start at once, as the forgotten one could. The one
//! rule a fresh host cannot know, the robots.txt `Crawl-delay` the crawler
//! hands over once per host, is kept aside for the hosts that have one.
//!
//! Hosts that may have become idle are watched in a FIFO: each call to
//! [`HostTable::sweep`] looks at a few of them, forgets those that are idle and
//! puts back those still owing a gap, so forgetting costs O(1) per request and
//! never a scan of all hosts.

use std::collections::{HashMap, VecDeque};
use std::ops::{Index, IndexMut};
use std::time::Duration;

use tokio::time::Instant;

use super::super::queue::HostQueue;
use super::super::retry_queue::RetryQueue;
use crate::frontier::Request;
use crate::host::politeness::HostSlots;
use crate::host::rota::Place;
use crate::host::{HostKey, LivePolicy};

/// Watched hosts looked at per sweep: more than one, so the watch list drains
/// faster than a request can add to it.
const SWEEP_STEPS: usize = 2;

/// One host's queue, retries and politeness.
#[derive(Debug)]
pub(super) struct Host {
    pub(super) queue: HostQueue,
    /// Requests handed back for another attempt, with their tries so far.
    pub(super) retries: RetryQueue<(Request, u32)>,
    pub(super) slots: HostSlots,
    pub(super) place: Place,
    /// Its key, to forget it by (`None` for a free slot).
    key: Option<HostKey>,
    /// Whether it is in the watch list.
    watched: bool,
}

impl Host {
    fn new(policy: LivePolicy, key: Option<HostKey>) -> Host {
        Host {
            queue: HostQueue::default(),
            retries: RetryQueue::default(),
            slots: HostSlots::new(policy),
            place: Place::Idle,
            key,
            watched: false,
        }
    }

    /// When this host has something to start, if it has anything.
    pub(super) fn work_at(&self, now: Instant) -> Option<Instant> {
        self.retries.work_at(self.queue.len() > 0, now)
    }
}

/// The hosts, by index (the rota's names for them) and by key.
#[derive(Debug)]
pub(super) struct HostTable {
    /// The crawl's rules, shared with every host (see [`LivePolicy`]).
    policy: LivePolicy,
    hosts: Vec<Host>,
    by_key: HashMap<HostKey, usize>,
    /// Free slots of `hosts`, reused before the table grows.
    free: Vec<usize>,
    /// Hosts that may have become idle, oldest first.
    watch: VecDeque<usize>,
    /// Robots.txt `Crawl-delay`s, kept across forgetting.
    delay_floors: HashMap<HostKey, Duration>,
    forgotten: u64,
}

impl HostTable {
    pub(super) fn new(policy: LivePolicy) -> HostTable {
        HostTable {
            policy,
            hosts: Vec::new(),
            by_key: HashMap::new(),
            free: Vec::new(),
            watch: VecDeque::new(),
            delay_floors: HashMap::new(),
            forgotten: 0,
        }
    }

    /// Hosts known now (forgotten ones not counted).
    pub(super) fn live(&self) -> usize {
        self.by_key.len()
    }

    /// Slots in the table: the most hosts ever live at once.
    #[cfg(test)]
    pub(super) fn slots(&self) -> usize {
        self.hosts.len()
    }

    /// Hosts forgotten so far.
    pub(super) fn forgotten(&self) -> u64 {
        self.forgotten
    }

    /// The index of `key`'s host, building it if it is not known (any more).
    pub(super) fn index(&mut self, key: HostKey) -> usize {
        if let Some(&idx) = self.by_key.get(&key) {
            return idx;
        }
        let mut host = Host::new(self.policy.clone(), Some(key.clone()));
        if let Some(&delay) = self.delay_floors.get(&key) {
            host.slots.set_delay_floor(delay);
        }
        let idx = match self.free.pop() {
            Some(idx) => {
                self.hosts[idx] = host;
                idx
            }
            None => {
                self.hosts.push(host);
                self.hosts.len() - 1
            }
        };
        self.by_key.insert(key, idx);
        idx
    }

    /// Sets `key`'s robots.txt `Crawl-delay`, remembered even once the host is
    /// forgotten.
    pub(super) fn set_delay_floor(&mut self, key: &HostKey, delay: Duration) {
        if delay.is_zero() {
            self.delay_floors.remove(key);
        } else {
            self.delay_floors.insert(key.clone(), delay);
        }
        let idx = self.index(key.clone());
        self.hosts[idx].slots.set_delay_floor(delay);
        self.watch(idx);
    }

    /// Watches host `idx` if it has no work: it may be forgotten once idle.
    pub(super) fn watch(&mut self, idx: usize) {
        let host = &mut self.hosts[idx];
        let no_work = host.queue.len() == 0 && host.retries.next_due().is_none();
        if !host.watched && host.key.is_some() && no_work {
            host.watched = true;
            self.watch.push_back(idx);
        }
    }

    /// Looks at a few watched hosts: forgets the idle ones, drops the ones that
    /// got work (they are watched again when it is done), and puts back the
    /// ones still owing a gap or a slow-down.
    pub(super) fn sweep(&mut self, now: Instant) {
        for _ in 0..SWEEP_STEPS {
            let Some(idx) = self.watch.pop_front() else {
                return;
            };
            let host = &mut self.hosts[idx];
            host.watched = false;
            if host.work_at(now).is_some() || host.place.is_ready() {
                continue;
            }
            if host.slots.is_forgettable(now) {
                self.forget(idx);
            } else {
                host.watched = true;
                self.watch.push_back(idx);
            }
        }
    }

    /// Forgets host `idx`. Its rota entries, if any are left, are stale and
    /// harmless: the rota re-checks a host's place and work when it takes it
    /// out, and a free or reused slot has its own.
    fn forget(&mut self, idx: usize) {
        let host = std::mem::replace(&mut self.hosts[idx], Host::new(self.policy.clone(), None));
        if let Some(key) = host.key {
            self.by_key.remove(&key);
        }
        self.free.push(idx);
        self.forgotten += 1;
    }
}

impl Index<usize> for HostTable {
    type Output = Host;

    fn index(&self, idx: usize) -> &Host {
        &self.hosts[idx]
    }
}

impl IndexMut<usize> for HostTable {
    fn index_mut(&mut self, idx: usize) -> &mut Host {
        &mut self.hosts[idx]
    }
}
