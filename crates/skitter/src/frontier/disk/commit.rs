//! Group commits, off the frontier's lock.
//!
//! The frontier's state and the database connection have separate locks. A
//! commit takes the pending batch under the state lock, takes the database lock
//! before letting the state go, and only then applies and `fsync`s: claims and
//! offers carry on meanwhile, into the next batch. Because every commit takes the
//! database lock while still holding the state lock, batches reach the database
//! in the order they were taken, so "writes commit in call order" holds across
//! commits as well as within one.
//!
//! Completions and records are committed by the first commit that starts after
//! them, and commits start one commit interval apart while there is such work,
//! so a caller waiting for durability (`complete_with`) waits about half an
//! interval plus one commit. Offers alone wait up to [`OFFER_INTERVAL`], since
//! they only have to be durable by the time the page that made them completes,
//! and that completion's commit covers them. `flush` commits at once.
//!
//! A commit does not `fsync`: once SQLite has written it to the WAL it is in
//! the OS's page cache and survives the process being killed, which is what a
//! waiting completion needs. The `fsync` that makes commits survive a power
//! cut as well runs on its own thread ([`sync_loop`]), at most
//! [`SYNC_INTERVAL`] after a commit, so a completion does not wait the disk's
//! flush time (4–8 ms on the development VM, more than the whole commit
//! otherwise): a kill loses no completed URL, a power cut at most those of
//! the last `SYNC_INTERVAL`, whose URLs are then fetched again (the state is
//! consistent either way: SQLite ignores WAL frames that did not reach the
//! disk whole). `flush` syncs before it returns.

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::state::State;
use crate::state::store::StoreError;
use crate::state::store::batch::{Batch, Snapshot};
use crate::state::store::records::Records;

/// Longest time offers alone (no completion, record or stored value) wait to
/// be committed; they bound what a status reader lags behind.
pub(super) const OFFER_INTERVAL: Duration = Duration::from_secs(1);

/// Longest time between a commit and the `fsync` that makes it survive a
/// power cut (a kill it survives at once).
pub(super) const SYNC_INTERVAL: Duration = Duration::from_millis(50);

/// The database side: the writer's connection, and the failure that stopped it.
pub(super) struct Db {
    pub(super) records: Records,
    pub(super) failed: Option<String>,
}

/// Where commits stand, for callers waiting on durability.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Committed {
    /// The newest batch generation committed (all older ones are too).
    pub(super) generation: u64,
    /// A commit failed: nothing more will be.
    pub(super) failed: bool,
}

pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    /// Wakes the committer (paired with `state`).
    pub(super) wake: Condvar,
    pub(super) db: Mutex<Db>,
    /// The newest generation applied to the database.
    applied: AtomicU64,
    pub(super) commits: tokio::sync::watch::Sender<Committed>,
    pub(super) commit_ops: usize,
    /// The newest generation known to be on disk (durable stores), and the
    /// syncer's stop flag with its wake-up.
    synced: Mutex<(u64, bool)>,
    sync_wake: Condvar,
}

/// Locks a mutex; a panic while it was held leaves plain data behind, so carry on.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    pub(super) fn new(state: State, records: Records, commit_ops: usize) -> Shared {
        Shared {
            state: Mutex::new(state),
            wake: Condvar::new(),
            db: Mutex::new(Db {
                records,
                failed: None,
            }),
            applied: AtomicU64::new(0),
            commits: tokio::sync::watch::Sender::new(Committed::default()),
            commit_ops,
            synced: Mutex::new((0, false)),
            sync_wake: Condvar::new(),
        }
    }

    /// `fsync`s the WAL if a commit was applied since the last sync; a
    /// failure stops the store like a failed commit.
    pub(super) fn sync(&self, wal: &Path) -> Result<(), StoreError> {
        let mut synced = lock(&self.synced);
        let applied = self.applied.load(Ordering::Acquire);
        if applied <= synced.0 {
            return Ok(());
        }
        // Any descriptor of the file flushes its data; SQLite never replaces
        // the WAL while its writer has it open, it only rewrites it in place.
        let result = File::open(wal).and_then(|f| f.sync_data());
        if let Err(e) = result {
            let why = format!("cannot sync {}: {e}", wal.display());
            lock(&self.db).failed = Some(why.clone());
            self.commits.send_modify(|c| c.failed = true);
            self.lock().fail(why.clone());
            return Err(StoreError::Stopped(why));
        }
        synced.0 = applied;
        Ok(())
    }

    /// Tells the syncer to stop.
    pub(super) fn stop_syncing(&self) {
        lock(&self.synced).1 = true;
        self.sync_wake.notify_all();
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Commits everything written so far, releasing the state lock as soon as
    /// the batch is taken; returns once it (and any commit before it) is durable.
    pub(super) fn commit(&self, mut state: MutexGuard<'_, State>) -> Result<(), StoreError> {
        state.check()?;
        let taken = state.take(self.applied.load(Ordering::Acquire));
        let mut db = lock(&self.db);
        drop(state);
        let Err(e) = self.apply(&mut db, taken) else {
            return Ok(());
        };
        drop(db);
        self.lock().fail(e.to_string());
        Err(e)
    }

    /// Commits everything written so far while keeping the state lock, for work
    /// that must follow the commit before anything else changes (a spill).
    pub(super) fn commit_holding(
        &self,
        state: &mut State,
    ) -> Result<MutexGuard<'_, Db>, StoreError> {
        state.check()?;
        let taken = state.take(self.applied.load(Ordering::Acquire));
        let mut db = lock(&self.db);
        let result = self.apply(&mut db, taken);
        state.guard(result).map(|()| db)
    }

    fn apply(&self, db: &mut Db, taken: Option<(Batch, Snapshot, u64)>) -> Result<(), StoreError> {
        if let Some(why) = &db.failed {
            return Err(StoreError::Stopped(why.clone()));
        }
        let Some((batch, snapshot, generation)) = taken else {
            return Ok(());
        };
        match db.records.apply(batch, &snapshot) {
            Ok(()) => {
                self.applied.fetch_max(generation, Ordering::AcqRel);
                self.commits
                    .send_modify(|c| c.generation = c.generation.max(generation));
                Ok(())
            }
            Err(e) => {
                db.failed = Some(e.to_string());
                self.commits.send_modify(|c| c.failed = true);
                Err(e)
            }
        }
    }
}

/// The committer thread: commits whenever someone waits, the batch is big, or
/// pending writes are old enough; otherwise sleeps until woken.
///
/// Commits start at least `interval` apart unless the batch is big: each costs
/// an `fsync` and rewrites every page it touches, so spacing them groups more
/// completions into each (on the 2-core development machine, 3 ms gave the
/// crawl bench its best pages/s; back-to-back commits did worst).
pub(super) fn commit_loop(shared: &Shared, interval: Duration) {
    let mut last = Instant::now();
    let mut state = shared.lock();
    loop {
        if state.stop {
            return;
        }
        let since = last.elapsed();
        let due = state.check().is_ok()
            && state.has_uncommitted()
            && (state.weight() >= shared.commit_ops
                || ((state.waiting || state.settled()) && since >= interval)
                || since >= OFFER_INTERVAL);
        if due {
            last = Instant::now();
            // A failure is kept in the state and reported by the next call.
            let _ = shared.commit(state);
            state = shared.lock();
            continue;
        }
        let pause = match interval.checked_sub(since) {
            Some(left) if !left.is_zero() => left,
            _ => interval,
        };
        let (guard, _) = shared
            .wake
            .wait_timeout(state, pause)
            .unwrap_or_else(|e| e.into_inner());
        state = guard;
    }
}

/// The syncer thread of a durable store: `fsync`s the WAL every
/// [`SYNC_INTERVAL`] while commits are applied, until told to stop.
pub(super) fn sync_loop(shared: &Shared, wal: &Path) {
    loop {
        {
            let stop = lock(&shared.synced);
            if stop.1 {
                return;
            }
            let (stop, _) = shared
                .sync_wake
                .wait_timeout(stop, SYNC_INTERVAL)
                .unwrap_or_else(|e| e.into_inner());
            if stop.1 {
                return;
            }
        }
        if shared.sync(wal).is_err() {
            return;
        }
    }
}
