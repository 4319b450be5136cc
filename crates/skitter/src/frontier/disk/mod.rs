//! The crash-safe frontier: [`DiskFrontier`] keeps the crawl's queue, seen set,
//! per-URL outcomes, robots cache and output positions in a state directory, so a
//! crawl killed at any moment resumes where its last group commit left it.
//!
//! Every change is recorded as an op in a pending batch; a committer thread
//! commits batches in the order they were made, off the frontier's lock (see
//! `commit`). So the crawler's "offer a page's links, then complete its lease"
//! can never be seen half-done: after a crash, a completed URL's links are
//! queued, and a URL whose completion was lost is fetched again. Nothing else is
//! ever refetched: `complete_with` returns only once its commit is written (it
//! then survives a kill; `commit` says when it also survives a power cut), so
//! the URLs done but not yet written are among those in flight.

mod commit;
mod queue;
mod state;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use tokio::time::Instant;

use async_trait::async_trait;

use crate::base::outcome::{OutcomeKind, PageRecord};
use crate::frontier::{
    Claim, Fetched, Frontier, FrontierCounts, FrontierError, Lease, Request, RequestKind,
};
use crate::host::{HostFeedback, HostKey, HostPolicy, LivePolicy, Throttle};
use crate::state::recrawl::{PassInfo, RecrawlOrder, Visit};
use crate::state::store::batch::Op;
use crate::state::store::epoch::unix_ms;
use crate::state::store::pass::{self, PassStart};
use crate::state::store::records::Records;
use crate::state::store::schema::{OpenSpec, open_reader, open_writer};
use crate::state::store::{CrawlMeta, OutcomeCounts, OutcomeStore, StoreError};
use commit::{Db, Shared, commit_loop, lock, sync_loop};
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
    /// Time between the starts of two commits while completions or records are
    /// pending (default 3 ms): a completion waits about half of it plus one
    /// commit. Shorter means less latency per page but an `fsync` more often.
    /// Offers alone wait up to a second or `commit_ops`, since only the completion
    /// of the page that made them needs them durable, and its commit covers them.
    pub commit_interval: Duration,
    /// Commit as soon as this many writes (queued URLs count one each) are
    /// pending (default 50,000); at twice as many, writers wait for the commit.
    pub commit_ops: usize,
    /// `fsync` the commits (on a thread of their own, at most 50 ms after
    /// each), so they also survive power loss, all but the last 50 ms; without
    /// it a commit survives the process being killed, not the machine (default
    /// true). Either way a completion waits for its commit to be written, not
    /// synced, and [`DiskFrontier::flush`] of a durable store syncs. A
    /// durable store also makes the crawler sync the outputs' bytes before
    /// completing their pages ([`Frontier::syncs`]), so a power cut never
    /// keeps a URL done whose output bytes it lost.
    pub durable: bool,
    /// Open even when the directory holds a crawl with a different definition,
    /// recording the new one (default false).
    pub force: bool,
    /// Refuse to grow the database beyond this many bytes (default: no limit).
    /// Reaching it is a write failure like a full disk.
    pub max_size: Option<u64>,
    /// Start a new recrawl pass if the stored crawl finished (default: no;
    /// see [`crate::state::recrawl`]).
    pub recrawl: Option<RecrawlStart>,
}

/// How [`DiskFrontier::open`] starts a recrawl pass.
#[derive(Clone, Copy, Debug)]
pub struct RecrawlStart {
    /// Which known URLs are queued, in which order.
    pub order: RecrawlOrder,
    /// The redirects each queued URL may follow.
    pub max_redirect: u32,
}

impl Default for DiskOptions {
    fn default() -> Self {
        DiskOptions {
            policy: HostPolicy::default(),
            memory_budget: 256 << 20,
            commit_interval: Duration::from_millis(3),
            commit_ops: 50_000,
            durable: true,
            force: false,
            max_size: None,
            recrawl: None,
        }
    }
}

/// Due URLs a starting pass moves into the queue at a time.
const SEED_PAGE: usize = 10_000;

/// A frontier whose state lives in a directory and survives crashes.
pub struct DiskFrontier {
    shared: Arc<Shared>,
    committer: Option<JoinHandle<()>>,
    /// The WAL syncer of a durable store.
    syncer: Option<JoinHandle<()>>,
    /// The WAL a durable store syncs.
    wal: Option<PathBuf>,
    dir: PathBuf,
    /// Held for the frontier's life: one writer per directory.
    _lock: File,
    pass: PassInfo,
    /// In a recrawl pass, a reader of the last commit for the earlier visits:
    /// WAL readers never wait for the writer, so a revisit does not queue
    /// behind a group commit's `fsync` on the writer's lock.
    visits: Option<std::sync::Mutex<rusqlite::Connection>>,
    /// The hosts' rules, changeable while the crawl runs.
    policy: LivePolicy,
}

impl std::fmt::Debug for DiskFrontier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (hosts, forgotten) = self.host_counts();
        f.debug_struct("DiskFrontier")
            .field("dir", &self.dir)
            .field("hosts", &hosts)
            .field("hosts_forgotten", &forgotten)
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
            max_size: options.max_size,
            cache_bytes: budget / 8,
        };
        let (conn, lock) = open_writer(dir, &spec)?;
        // A pass whose seeding was cut short is seeded again even without
        // --recrawl: its queue may be incomplete.
        let seeding = pass::current(&conn)?.1 == "seeding";
        let recrawl = options.recrawl.or_else(|| {
            seeding.then_some(RecrawlStart {
                order: RecrawlOrder::Oldest,
                max_redirect: 10,
            })
        });
        let start = match recrawl {
            Some(r) => Some((
                pass::begin(&conn, r.order, unix_ms(SystemTime::now()))?,
                r.max_redirect,
            )),
            None => None,
        };
        let limits = Limits {
            seen_bytes: budget / 8 * 6,
            buffer_bytes: budget / 8,
        };
        let mut records = Records::new(conn)?;
        let policy = LivePolicy::new(options.policy);
        let state = State::load(&mut records, policy.clone(), limits)?;
        let shared = Arc::new(Shared::new(state, records, options.commit_ops.max(1)));
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
        let wal = options
            .durable
            .then(|| dir.join(format!("{}-wal", crate::state::store::schema::DB_FILE)));
        let syncer = if let Some(wal) = &wal {
            let shared = Arc::clone(&shared);
            let path = wal.clone();
            let handle = std::thread::Builder::new()
                .name("skitter-sync".into())
                .spawn(move || sync_loop(&shared, &path))
                .map_err(|source| StoreError::Io {
                    path: dir.to_path_buf(),
                    source,
                })?;
            Some(handle)
        } else {
            None
        };
        let number = commit::lock(&shared.db).records.pass();
        let visits = if number > 1 {
            Some(std::sync::Mutex::new(open_reader(dir)?))
        } else {
            None
        };
        let frontier = DiskFrontier {
            shared,
            committer: Some(committer),
            syncer,
            wal,
            dir: dir.to_path_buf(),
            _lock: lock,
            pass: PassInfo {
                number,
                not_due: start.as_ref().map_or(0, |(s, _)| s.not_due),
            },
            visits,
            policy,
        };
        if let Some((start, max_redirect)) = start {
            frontier.seed_pass(start, max_redirect)?;
        }
        Ok(frontier)
    }

    /// Queues a new pass's URLs a page at a time (the queue spills under
    /// its budget), commits them, then marks the pass running.
    fn seed_pass(&self, start: PassStart, max_redirect: u32) -> Result<(), StoreError> {
        if start.seeding {
            let mut after = 0;
            loop {
                let page = lock(&self.shared.db).records.due_page(after, SEED_PAGE)?;
                let Some(&(last, _, _)) = page.last() else {
                    break;
                };
                after = last;
                let requests = page
                    .into_iter()
                    .filter_map(|(_, url, depth)| {
                        Some(Request {
                            url: url::Url::parse(&url).ok()?,
                            depth,
                            redirects_left: max_redirect,
                            parent: None,
                            kind: RequestKind::Page,
                        })
                    })
                    .collect();
                self.with(|state| state.offer(requests, Instant::now(), &self.shared.db))?;
            }
            lock(&self.shared.db).records.drop_due()?;
        }
        self.flush()?;
        lock(&self.shared.db).records.mark_running(start.number)
    }

    /// The state directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Hosts whose state is in memory now, and hosts forgotten so far (idle
    /// ones: their rows stay in the database).
    pub fn host_counts(&self) -> (usize, u64) {
        self.shared.lock().host_counts()
    }

    /// Runs `f` on the state unless an earlier write failed; a failure inside
    /// stops the state. Afterwards a seen set over budget is spilled, and a big
    /// pending batch is committed (by the committer, or here once it is twice
    /// `commit_ops`, so writers cannot outrun the disk).
    fn with<T>(
        &self,
        f: impl FnOnce(&mut State) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut state = self.shared.lock();
        state.check()?;
        let result = f(&mut state);
        let value = state.guard(result)?;
        let ops = self.shared.commit_ops;
        if state.seen_over_budget() {
            let mut db = self.shared.commit_holding(&mut state)?;
            let result = state.spill(&mut db.records);
            state.guard(result)?;
        } else if state.weight() >= 2 * ops {
            self.shared.commit(state)?;
        } else if state.weight() >= ops && !state.nudged {
            state.nudged = true;
            self.shared.wake.notify_one();
        }
        Ok(value)
    }

    /// Commits everything written so far, now. Call it before telling the world
    /// something the state must already reflect (say, an output file's position).
    pub fn flush(&self) -> Result<(), StoreError> {
        self.shared.commit(self.shared.lock())?;
        match &self.wal {
            Some(wal) => self.shared.sync(wal),
            None => Ok(()),
        }
    }

    /// Stores a fetched URL's record and completes its lease in one commit, so
    /// after a crash a URL is either done with its record or queued again.
    pub fn finish(
        &self,
        lease: Lease,
        feedback: HostFeedback,
        record: &PageRecord,
    ) -> Result<Option<Throttle>, StoreError> {
        self.finish_in(lease, feedback, record, None, false)
            .map(|(_, t)| t)
    }

    /// [`DiskFrontier::finish`], answering the generation of the batch holding
    /// it; with `wait`, the committer is told someone waits for that batch.
    fn finish_in(
        &self,
        lease: Lease,
        feedback: HostFeedback,
        record: &PageRecord,
        visit: Option<&Visit>,
        wait: bool,
    ) -> Result<(u64, Option<Throttle>), StoreError> {
        let now = Instant::now();
        let encoded = state::encode(record)?;
        let visit = visit.map(|v| Op::Visit {
            fp: crate::frontier::memory::fingerprint(&record.url),
            url: record.url.to_string(),
            depth: lease.request.depth,
            visit: crate::state::recrawl::encode(v),
        });
        self.with(|state| {
            state.record_outcome(record, encoded, true, &self.shared.db)?;
            if let Some(op) = visit {
                state.put(op);
            }
            let fetched = record.kind != OutcomeKind::Skipped;
            let Some(throttle) = state.complete(lease.id, feedback, fetched, now)? else {
                return Err(StoreError::Corrupt(format!("unknown lease {}", lease.id)));
            };
            if wait && !state.waiting {
                state.waiting = true;
                self.shared.wake.notify_one();
            }
            Ok((state.generation, throttle))
        })
    }

    /// Stores a small value under `key` (for example where an output file stands).
    pub fn put_meta(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let op = Op::Kv {
            key: key.to_owned(),
            value: value.to_vec(),
        };
        self.with(|state| {
            state.put(op);
            Ok(())
        })
    }

    /// The value stored under `key`, including ones not committed yet.
    pub fn get_meta(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.with(|state| match state.pending().kv(key) {
            Some(value) => Ok(Some(value.to_vec())),
            None => lock(&self.shared.db).records.get_kv(key),
        })
    }

    /// Caches an origin's robots.txt body as fetched at `fetched_at`.
    pub fn put_robots(
        &self,
        origin: &str,
        body: &[u8],
        fetched_at: SystemTime,
    ) -> Result<(), StoreError> {
        let op = Op::Robots {
            origin: origin.to_owned(),
            body: body.to_vec(),
            fetched_at,
        };
        self.with(|state| {
            state.put(op);
            Ok(())
        })
    }

    /// The cached robots.txt of an origin and when it was fetched.
    pub fn get_robots(&self, origin: &str) -> Result<Option<(Vec<u8>, SystemTime)>, StoreError> {
        self.with(|state| match state.pending().robots(origin) {
            Some(found) => Ok(Some(found)),
            None => lock(&self.shared.db).records.get_robots(origin),
        })
    }
}

impl OutcomeStore for DiskFrontier {
    fn record_outcome(&self, record: &PageRecord) -> Result<(), StoreError> {
        let encoded = state::encode(record)?;
        self.with(|state| state.record_outcome(record, encoded, false, &self.shared.db))
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

    /// Counted by the database as records are committed, so this flushes first.
    fn outcome_counts(&self) -> Result<OutcomeCounts, StoreError> {
        self.flush()?;
        Ok(lock(&self.shared.db).records.outcome_counts())
    }
}

impl Drop for DiskFrontier {
    /// Stops the committer and commits what is left; outstanding leases stay
    /// queued for the next run, handed back (not lost: their tries are kept,
    /// no lost lease is counted).
    fn drop(&mut self) {
        {
            let mut state = self.shared.lock();
            state.release_leases();
            state.stop = true;
        }
        self.shared.wake.notify_all();
        if let Some(handle) = self.committer.take() {
            let _ = handle.join();
        }
        self.shared.stop_syncing();
        if let Some(handle) = self.syncer.take() {
            let _ = handle.join();
        }
        let _ = self.flush();
    }
}

/// The bytes of the regular files directly in `dir` (the database, its WAL
/// and shared memory, the robots and outcome stores beside them); what
/// cannot be read counts 0.
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

#[async_trait]
impl Frontier for DiskFrontier {
    fn durable(&self) -> bool {
        true
    }

    /// With [`DiskOptions::durable`], which `fsync`s the commits.
    fn syncs(&self) -> bool {
        self.wal.is_some()
    }

    fn politeness(&self) -> Option<LivePolicy> {
        Some(self.policy.clone())
    }

    async fn offer(&self, requests: Vec<Request>) -> Result<usize, FrontierError> {
        let now = Instant::now();
        Ok(self.with(|state| state.offer(requests, now, &self.shared.db))?)
    }

    async fn claim(&self) -> Result<Claim, FrontierError> {
        let now = Instant::now();
        Ok(self.with(|state| state.claim(now, &self.shared.db))?)
    }

    async fn complete(
        &self,
        lease: Lease,
        feedback: HostFeedback,
    ) -> Result<Option<Throttle>, FrontierError> {
        let now = Instant::now();
        let id = lease.id;
        // Without a record, whether it fetched is unknown: counted, so a
        // resumed crawl's limits err on the side of fetching less.
        self.with(|state| state.complete(id, feedback, true, now))?
            .ok_or(FrontierError::UnknownLease(id))
    }

    async fn retry(
        &self,
        lease: Lease,
        wait: Duration,
        feedback: HostFeedback,
    ) -> Result<Option<Throttle>, FrontierError> {
        let now = Instant::now();
        let id = lease.id;
        self.with(|state| Ok(state.retry(lease, wait, feedback, now)))?
            .ok_or(FrontierError::UnknownLease(id))
    }

    /// Records and completes, then waits until a commit covers both: until then the
    /// URL still counts as in flight, so a crash refetches at most `max_tasks` URLs.
    async fn complete_with(
        &self,
        lease: Lease,
        feedback: HostFeedback,
        record: &PageRecord,
    ) -> Result<Option<Throttle>, FrontierError> {
        self.complete_visit(lease, feedback, record, None).await
    }

    /// [`Frontier::complete_with`], the URL's visit committed with it.
    async fn complete_visit(
        &self,
        lease: Lease,
        feedback: HostFeedback,
        record: &PageRecord,
        visit: Option<&Visit>,
    ) -> Result<Option<Throttle>, FrontierError> {
        let mut commits = self.shared.commits.subscribe();
        let (generation, throttle) = self.finish_in(lease, feedback, record, visit, true)?;
        let covered = commits.wait_for(|c| c.failed || c.generation >= generation);
        match tokio::time::timeout(Duration::from_secs(30), covered).await {
            Ok(Ok(c)) if !c.failed => Ok(throttle),
            _ => Err(FrontierError::StoreStopped),
        }
    }

    fn pass(&self) -> Option<PassInfo> {
        Some(self.pass)
    }

    /// Read from the last commit: a URL's earlier visit was committed in an
    /// earlier pass, long before it is claimed again.
    async fn recall(&self, url: &url::Url) -> Result<Option<Visit>, FrontierError> {
        let fp = crate::frontier::memory::fingerprint(url);
        let blob = match &self.visits {
            Some(reader) => {
                let conn = reader.lock().unwrap_or_else(|e| e.into_inner());
                crate::state::store::records::visit_of(&conn, fp)?
            }
            None => lock(&self.shared.db).records.get_visit(fp)?,
        };
        Ok(blob.and_then(|b| crate::state::recrawl::decode(&b)))
    }

    async fn set_host_delay(&self, host: &HostKey, delay: Duration) -> Result<(), FrontierError> {
        Ok(self.with(|state| state.set_host_delay(host, delay, &self.shared.db))?)
    }

    async fn counts(&self) -> Result<FrontierCounts, FrontierError> {
        let mut counts = self.with(|state| Ok(state.counts()))?;
        // Outside the state's lock: a few `stat`s of the directory's files.
        counts.disk_bytes = Some(dir_bytes(&self.dir));
        Ok(counts)
    }

    /// As last committed: asked at the start of a run, when that is all
    /// the earlier runs did.
    async fn fetched(&self) -> Result<Fetched, FrontierError> {
        let (pages, hosts) = lock(&self.shared.db).records.fetched()?;
        let per_host = hosts
            .into_iter()
            .map(|(key, n)| (HostKey::from_stored(key), n))
            .collect();
        Ok(Fetched { pages, per_host })
    }
}
