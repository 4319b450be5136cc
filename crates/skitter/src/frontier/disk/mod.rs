//! The crash-safe frontier: [`DiskFrontier`] keeps the crawl's queue, seen set,
//! per-URL outcomes, robots cache and output positions in a state directory, so a
//! crawl killed at any moment resumes where its last group commit left it.
//!
//! Writes are grouped: they accumulate in one transaction that a committer thread
//! commits every `commit_interval`, or sooner once `commit_ops` writes pile up.
//! Writes commit in call order, so the crawler's "offer a page's links, then
//! complete its lease" can never be seen half-done: after a crash, a completed
//! URL's links are queued, and a URL whose completion was lost is fetched again.
//! Nothing else is ever refetched.

mod state;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;

use super::{
    Claim, Frontier, FrontierCounts, FrontierError, HostFeedback, HostKey, HostPolicy, Lease,
    Request,
};
use crate::outcome::PageRecord;
use crate::store::records::Records;
use crate::store::schema::{OpenSpec, open_reader, open_writer};
use crate::store::{CrawlMeta, OutcomeCounts, OutcomeStore, StoreError};
use state::{Limits, State};

/// How a [`DiskFrontier`] uses memory, disk and time.
#[derive(Clone, Debug)]
pub struct DiskOptions {
    /// The politeness rules every host starts with.
    pub policy: HostPolicy,
    /// Memory for the seen set, the per-host read-ahead windows and SQLite's page
    /// cache together (default 256 MiB, at least 1 MiB): 3/4 for the seen set
    /// (about 16 bytes per URL, so 12 million URLs by default), 1/8 each for the
    /// others. Past its share the seen set moves to disk, where each new URL then
    /// costs a B-tree lookup.
    pub memory_budget: usize,
    /// Longest time a write waits to be committed (default 5 ms). A crawl's
    /// completion waits for the commit that covers it, so this bounds the added
    /// latency per page; bulk loads that do not wait may prefer longer intervals,
    /// since small commits cost more per write.
    pub commit_interval: Duration,
    /// Commit as soon as this many writes are pending (default 50,000).
    pub commit_ops: usize,
    /// `fsync` every commit, so it also survives power loss; without it a commit
    /// survives the process being killed, not the machine (default true).
    pub durable: bool,
    /// Open even when the directory holds a crawl with a different definition,
    /// recording the new one (default false).
    pub force: bool,
    /// Refuse to grow the database beyond this many bytes (default: no limit).
    /// Reaching it is a write failure like a full disk.
    pub max_size: Option<u64>,
}

impl Default for DiskOptions {
    fn default() -> Self {
        DiskOptions {
            policy: HostPolicy::default(),
            memory_budget: 256 << 20,
            commit_interval: Duration::from_millis(5),
            commit_ops: 50_000,
            durable: true,
            force: false,
            max_size: None,
        }
    }
}

/// A frontier whose state lives in a directory and survives crashes.
pub struct DiskFrontier {
    shared: Arc<Shared>,
    committer: Option<JoinHandle<()>>,
    dir: PathBuf,
    /// Held for the frontier's life: one writer per directory.
    _lock: File,
}

struct Shared {
    state: Mutex<State>,
    stop: Mutex<bool>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock leaves plain data behind; carry on with it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for DiskFrontier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskFrontier")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl DiskFrontier {
    /// Opens (creating if needed) the crawl state in `dir`. URLs that were leased
    /// but not completed when the last run stopped are queued again.
    ///
    /// Fails with [`StoreError::Conflict`] when `dir` holds a crawl with another
    /// definition (unless `options.force`), [`StoreError::Version`] when it was
    /// written in an incompatible format, and [`StoreError::Busy`] when another
    /// process has it open.
    pub fn open(
        dir: &Path,
        meta: &CrawlMeta,
        options: DiskOptions,
    ) -> Result<DiskFrontier, StoreError> {
        let budget = options.memory_budget.max(1 << 20);
        let spec = OpenSpec {
            meta,
            force: options.force,
            durable: options.durable,
            max_size: options.max_size,
            cache_bytes: budget / 8,
        };
        let (conn, lock) = open_writer(dir, &spec)?;
        let limits = Limits {
            seen_bytes: budget / 8 * 6,
            buffer_bytes: budget / 8,
            commit_ops: options.commit_ops.max(1),
        };
        let state = State::load(Records::new(conn), options.policy, limits)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            stop: Mutex::new(false),
            wake: Condvar::new(),
        });
        let committer = {
            let shared = Arc::clone(&shared);
            let interval = options.commit_interval.max(Duration::from_millis(1));
            std::thread::Builder::new()
                .name("skitter-commit".into())
                .spawn(move || commit_loop(&shared, interval))
                .map_err(|source| StoreError::Io {
                    path: dir.to_path_buf(),
                    source,
                })?
        };
        Ok(DiskFrontier {
            shared,
            committer: Some(committer),
            dir: dir.to_path_buf(),
            _lock: lock,
        })
    }

    /// The state directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Runs `f` on the state unless an earlier write failed; a failure inside
    /// stops the state.
    fn with<T>(
        &self,
        f: impl FnOnce(&mut State) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut state = self.shared.lock();
        state.check()?;
        let result = f(&mut state).and_then(|value| state.commit_if_full().map(|()| value));
        state.guard(result)
    }

    /// Commits everything written so far, now. Call it before telling the world
    /// something the state must already reflect (say, an output file's position).
    pub fn flush(&self) -> Result<(), StoreError> {
        self.with(|state| state.commit())
    }

    /// Stores a fetched URL's record and completes its lease in one commit, so
    /// after a crash a URL is either done with its record or queued again.
    pub fn finish(
        &self,
        lease: Lease,
        feedback: HostFeedback,
        record: &PageRecord,
    ) -> Result<(), StoreError> {
        let now = Instant::now();
        let known = self.with(|state| {
            state.record_outcome(record)?;
            state.complete(lease.id, feedback, now)
        })?;
        if known {
            Ok(())
        } else {
            Err(StoreError::Corrupt(format!("unknown lease {}", lease.id)))
        }
    }

    /// Stores a small value under `key` (for example where an output file stands).
    pub fn put_meta(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.with(|state| state.records.put_kv(key, value))
    }

    /// The value stored under `key`, including ones not committed yet.
    pub fn get_meta(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.with(|state| state.records.get_kv(key))
    }

    /// Caches an origin's robots.txt body as fetched at `fetched_at`.
    pub fn put_robots(
        &self,
        origin: &str,
        body: &[u8],
        fetched_at: SystemTime,
    ) -> Result<(), StoreError> {
        self.with(|state| state.records.put_robots(origin, body, fetched_at))
    }

    /// The cached robots.txt of an origin and when it was fetched.
    pub fn get_robots(&self, origin: &str) -> Result<Option<(Vec<u8>, SystemTime)>, StoreError> {
        self.with(|state| state.records.get_robots(origin))
    }
}

impl OutcomeStore for DiskFrontier {
    fn record_outcome(&self, record: &PageRecord) -> Result<(), StoreError> {
        self.with(|state| state.record_outcome(record))
    }

    /// Reads through a separate connection after a flush, so a long report does
    /// not hold up the crawl.
    fn for_each_outcome(&self, f: &mut dyn FnMut(PageRecord)) -> Result<(), StoreError> {
        self.flush()?;
        let conn = open_reader(&self.dir)?;
        let mut stmt = conn
            .prepare("SELECT record FROM outcome ORDER BY id")
            .map_err(StoreError::sql("reading outcomes"))?;
        let mut rows = stmt
            .query([])
            .map_err(StoreError::sql("reading outcomes"))?;
        while let Some(row) = rows.next().map_err(StoreError::sql("reading outcomes"))? {
            let json: String = row.get(0).map_err(StoreError::sql("reading outcomes"))?;
            let record = serde_json::from_str(&json)
                .map_err(|e| StoreError::Corrupt(format!("outcome record: {e}")))?;
            f(record);
        }
        Ok(())
    }

    fn outcome_counts(&self) -> Result<OutcomeCounts, StoreError> {
        self.with(|state| {
            Ok(OutcomeCounts {
                records: state.progress.outcomes,
                errors: state.progress.errors,
            })
        })
    }
}

/// Commits pending writes every `interval` until told to stop.
fn commit_loop(shared: &Shared, interval: Duration) {
    let mut stop = shared.stop.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let (guard, _) = shared
            .wake
            .wait_timeout(stop, interval)
            .unwrap_or_else(|e| e.into_inner());
        stop = guard;
        if *stop {
            return;
        }
        let mut state = shared.lock();
        if state.check().is_ok() && state.has_uncommitted() {
            // A failure is kept in the state and reported by the next call.
            let result = state.commit();
            let _ = state.guard(result);
        }
    }
}

impl Drop for DiskFrontier {
    /// Stops the committer and commits what is left; outstanding leases stay
    /// queued for the next run.
    fn drop(&mut self) {
        *self.shared.stop.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.shared.wake.notify_all();
        if let Some(handle) = self.committer.take() {
            let _ = handle.join();
        }
        let mut state = self.shared.lock();
        if state.check().is_ok() && state.has_uncommitted() {
            let result = state.commit();
            let _ = state.guard(result);
        }
    }
}

impl From<StoreError> for FrontierError {
    fn from(e: StoreError) -> Self {
        FrontierError::Storage(e.to_string())
    }
}

#[async_trait]
impl Frontier for DiskFrontier {
    fn durable(&self) -> bool {
        true
    }

    async fn offer(&self, requests: Vec<Request>) -> Result<usize, FrontierError> {
        let now = Instant::now();
        Ok(self.with(|state| state.offer(requests, now))?)
    }

    async fn claim(&self) -> Result<Claim, FrontierError> {
        let now = Instant::now();
        Ok(self.with(|state| state.claim(now))?)
    }

    async fn complete(&self, lease: Lease, feedback: HostFeedback) -> Result<(), FrontierError> {
        let now = Instant::now();
        match self.with(|state| state.complete(lease.id, feedback, now))? {
            true => Ok(()),
            false => Err(FrontierError::UnknownLease(lease.id)),
        }
    }

    /// Records and completes, then waits until a commit covers both: until then the
    /// URL still counts as in flight, so a crash refetches at most `max_tasks` URLs.
    async fn complete_with(
        &self,
        lease: Lease,
        feedback: HostFeedback,
        record: &PageRecord,
    ) -> Result<(), FrontierError> {
        let mut commits = self.shared.lock().commits.subscribe();
        self.finish(lease, feedback, record)?;
        // Any commit counted after the write returned started after it, so covers
        // it (at worst this waits one group commit more than it must).
        let after = *commits.borrow_and_update();
        let covered = commits.wait_for(|n| *n > after);
        match tokio::time::timeout(Duration::from_secs(30), covered).await {
            Ok(Ok(_)) => Ok(()),
            _ => Err(FrontierError::Storage(
                "the crawl store stopped committing".into(),
            )),
        }
    }

    async fn set_host_delay(&self, host: &HostKey, delay: Duration) -> Result<(), FrontierError> {
        Ok(self.with(|state| state.set_host_delay(host, delay))?)
    }

    async fn counts(&self) -> Result<FrontierCounts, FrontierError> {
        Ok(self.with(|state| Ok(state.counts()))?)
    }
}
