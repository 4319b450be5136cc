//! The disk frontier's host table: finding a URL's host, and forgetting hosts
//! that owe nothing, so a broad crawl keeps in memory the hosts it is working
//! on, not every host it ever met (as the memory frontier's table does).
//!
//! A host with nothing queued, no retry waiting, nothing in flight, no start
//! for the rota's linger time, no gap or slow-down still owed
//! ([`HostSlots::is_forgettable`]) and its row committed is forgotten: its slot is reused. Its row stays in the database (its counters,
//! its robots.txt `Crawl-delay`), and a 64-bit hash of its key stays in memory,
//! so that a URL of a host never met needs no database lookup while one of a
//! forgotten host reads its row back.
//!
//! Hosts that may have become idle are watched in a FIFO, a few looked at per
//! claim or completion, so forgetting never scans all hosts.

use std::collections::{HashSet, VecDeque};
use std::fmt::Write as _;
use std::sync::Mutex;

use tokio::time::Instant;
use url::Url;

use super::super::Db;
use super::{Host, HostKey, HostQueue, HostSlots, Op, Place, RetryQueue, State};
use crate::state::store::StoreError;
use crate::state::store::counters::HostRow;

/// Watched hosts looked at per sweep: more than one, so the watch list drains
/// faster than a request can add to it.
const SWEEP_STEPS: usize = 2;

/// What the table keeps of hosts it is not working on.
#[derive(Default)]
pub(in crate::frontier::disk) struct Forgotten {
    /// Hashes of forgotten hosts' keys (a false match costs one lookup).
    keys: HashSet<u64>,
    /// Free slots of `State::hosts`, reused before the table grows.
    free: Vec<usize>,
    /// Hosts that may have become idle, oldest first.
    watch: VecDeque<usize>,
    /// The newest commit generation applied to the database.
    pub(super) applied: u64,
    /// Hosts forgotten so far.
    count: u64,
}

fn key_hash(key: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(key.as_bytes())
}

impl State {
    /// The host of `url`, brought back or added if not known now. The key is
    /// built in a reused buffer (the same text as [`HostKey::of`]) since this
    /// runs for every offered URL.
    pub(super) fn host_of(&mut self, url: &Url, db: &Mutex<Db>) -> Result<usize, StoreError> {
        match self.find_host(url) {
            Some(idx) => Ok(idx),
            None => self.bring_back(self.key_buf.clone(), db),
        }
    }

    /// The known host of `url`, leaving its key in `key_buf`.
    fn find_host(&mut self, url: &Url) -> Option<usize> {
        self.key_buf.clear();
        let port = url.port_or_known_default().unwrap_or(0);
        let _ = write!(self.key_buf, "{}:{port}", url.host_str().unwrap_or(""));
        self.by_key.get(self.key_buf.as_str()).copied()
    }

    pub(super) fn host_index(
        &mut self,
        key: &HostKey,
        db: &Mutex<Db>,
    ) -> Result<usize, StoreError> {
        match self.by_key.get(key.as_str()) {
            Some(&idx) => Ok(idx),
            None => self.bring_back(key.as_str().to_owned(), db),
        }
    }

    /// The row id of `url`'s host, for its outcome; a forgotten host's is read
    /// back without bringing the host back.
    pub(super) fn host_id(&mut self, url: &Url, db: &Mutex<Db>) -> Result<Option<i64>, StoreError> {
        if let Some(idx) = self.find_host(url) {
            return Ok(Some(self.hosts[idx].row.id));
        }
        if !self.forgotten.keys.contains(&key_hash(&self.key_buf)) {
            return Ok(None);
        }
        let row = super::super::lock(db).records.host_row(&self.key_buf)?;
        Ok(row.map(|r| r.id))
    }

    /// The forgotten host `key` with its committed row, or a new host.
    fn bring_back(&mut self, key: String, db: &Mutex<Db>) -> Result<usize, StoreError> {
        let hash = key_hash(&key);
        if self.forgotten.keys.remove(&hash)
            && let Some(mut row) = super::super::lock(db).records.host_row(&key)?
        {
            // Forgotten only with nothing queued.
            row.pending = 0;
            return Ok(self.insert_host(row));
        }
        let id = self.next_id();
        self.batch.push(Op::Host {
            id,
            key: key.clone(),
        });
        let idx = self.insert_host(HostRow {
            id,
            key,
            ..HostRow::default()
        });
        self.mark(idx);
        Ok(idx)
    }

    fn insert_host(&mut self, row: HostRow) -> usize {
        let mut slots = HostSlots::new(self.policy.clone());
        slots.set_delay_floor(row.delay_floor);
        let key = row.key.clone();
        let host = Host {
            row,
            slots,
            place: Place::Idle,
            queue: HostQueue::default(),
            waiting: 0,
            retries: RetryQueue::default(),
            dirty: false,
            watched: false,
            written: 0,
        };
        let idx = match self.forgotten.free.pop() {
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

    /// Watches host `idx` if it has no work: it may be forgotten once idle.
    pub(super) fn watch(&mut self, idx: usize) {
        let host = &mut self.hosts[idx];
        if !host.watched && host.waiting == 0 && host.retries.next_due().is_none() {
            host.watched = true;
            self.forgotten.watch.push_back(idx);
        }
    }

    /// Looks at a few watched hosts: forgets the idle ones, drops the ones that
    /// got work (watched again when it is done), puts back the others.
    pub(super) fn sweep(&mut self, now: Instant) {
        for _ in 0..SWEEP_STEPS {
            let Some(idx) = self.forgotten.watch.pop_front() else {
                return;
            };
            let applied = self.forgotten.applied;
            let host = &mut self.hosts[idx];
            host.watched = false;
            if host.waiting > 0 || host.retries.next_due().is_some() || host.place.is_ready() {
                continue;
            }
            let q = &host.queue;
            let empty = q.window.is_empty()
                && q.open.is_empty()
                && q.kept.is_empty()
                && q.on_disk == 0
                && q.live.is_empty();
            let committed = !host.dirty && host.written <= applied;
            if empty && committed && host.slots.is_forgettable(now) {
                self.forget(idx);
            } else {
                host.watched = true;
                self.forgotten.watch.push_back(idx);
            }
        }
    }

    /// Forgets host `idx`. Its rota entries, if any are left, are stale and
    /// harmless: the rota re-checks a host's place and work when it takes it
    /// out, and a reused slot has its own.
    fn forget(&mut self, idx: usize) {
        let vacant = Host {
            row: HostRow::default(),
            slots: HostSlots::new(self.policy.clone()),
            place: Place::Idle,
            queue: HostQueue::default(),
            waiting: 0,
            retries: RetryQueue::default(),
            dirty: false,
            watched: false,
            written: 0,
        };
        let host = std::mem::replace(&mut self.hosts[idx], vacant);
        self.by_key.remove(&host.row.key);
        self.forgotten.keys.insert(key_hash(&host.row.key));
        self.forgotten.free.push(idx);
        self.forgotten.count += 1;
    }

    /// Hosts known now, and hosts forgotten so far.
    pub(in crate::frontier::disk) fn host_counts(&self) -> (usize, u64) {
        (self.by_key.len(), self.forgotten.count)
    }
}
