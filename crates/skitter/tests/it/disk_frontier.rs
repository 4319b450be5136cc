//! The disk frontier: the memory frontier's behaviour, plus what only a
//! persistent one can promise (resume after a crash, refusal of a foreign or
//! incompatible state directory, clear failures when the disk fills up).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use skitter::base::outcome::{FetchFailure, OutcomeKind, PageRecord, SkipReason};
use skitter::frontier::{Claim, DiskFrontier, DiskOptions, Frontier, Lease, Request, RequestKind};
use skitter::host::{HostFeedback, HostPolicy};
use skitter::state::store::{CrawlMeta, OutcomeStore, StoreError, status};
use url::Url;

use crate::support::frontier_contract::{self as contract, req};

fn meta() -> CrawlMeta {
    CrawlMeta {
        roots: vec!["http://a/".into()],
        scope: "same-host".into(),
        settings: BTreeMap::from([("max_depth".into(), "3".into())]),
    }
}

fn options(policy: HostPolicy) -> DiskOptions {
    DiskOptions {
        policy,
        durable: false,
        ..DiskOptions::default()
    }
}

fn unlimited() -> DiskOptions {
    options(HostPolicy {
        max_in_flight: 100,
        ..HostPolicy::default()
    })
}

fn open(dir: &Path, opts: DiskOptions) -> DiskFrontier {
    DiskFrontier::open(dir, &meta(), opts).expect("state opens")
}

async fn take(f: &DiskFrontier) -> Lease {
    match f.claim().await.unwrap() {
        Claim::Ready(lease) => lease,
        other => panic!("expected a lease, got {other:?}"),
    }
}

fn record(url: &Url, kind: OutcomeKind) -> PageRecord {
    let mut r = PageRecord::skipped(url.clone(), SkipReason::Limit, 0, None);
    r.kind = kind;
    r.skip = None;
    r.attempts = 1;
    if kind == OutcomeKind::Failed {
        r.error = Some(FetchFailure {
            kind: skitter::base::outcome::ErrorKind::Timeout,
            message: "timed out".into(),
        });
    }
    r
}

// The contract every frontier owes the scheduler (support/frontier_contract.rs).

#[tokio::test]
async fn dedups_and_exhausts() {
    let dir = tempfile::tempdir().unwrap();
    contract::dedups_and_exhausts(&open(dir.path(), unlimited())).await;
}

#[tokio::test]
async fn full_host_does_not_block_others() {
    let dir = tempfile::tempdir().unwrap();
    let f = open(dir.path(), options(contract::one_per_host()));
    contract::full_host_does_not_block_others(&f).await;
}

#[tokio::test]
async fn new_host_starts_with_the_initial_window() {
    let dir = tempfile::tempdir().unwrap();
    let f = open(dir.path(), options(contract::sixteen_per_host()));
    contract::new_host_starts_with_the_initial_window(&f).await;
}

#[tokio::test]
async fn delayed_host_asks_to_wait() {
    let dir = tempfile::tempdir().unwrap();
    let f = open(dir.path(), options(contract::five_second_delay()));
    contract::delayed_host_asks_to_wait(&f).await;
}

#[tokio::test]
async fn unknown_lease_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    contract::unknown_lease_is_an_error(&open(dir.path(), unlimited())).await;
}

#[tokio::test]
async fn retry_waits_alone() {
    let dir = tempfile::tempdir().unwrap();
    contract::retry_waits_alone(&open(dir.path(), unlimited())).await;
}

#[tokio::test]
async fn retry_comes_back_with_its_tries() {
    let dir = tempfile::tempdir().unwrap();
    contract::retry_comes_back_with_its_tries(&open(dir.path(), unlimited())).await;
}

#[tokio::test]
async fn slow_down_pauses_only_its_host() {
    let dir = tempfile::tempdir().unwrap();
    contract::slow_down_pauses_only_its_host(&open(dir.path(), unlimited())).await;
}

#[tokio::test]
async fn reopen_requeues_only_unfinished_leases() {
    let dir = tempfile::tempdir().unwrap();
    {
        let f = open(dir.path(), unlimited());
        f.offer(vec![
            req("http://a/1"),
            req("http://a/2"),
            req("http://b/3"),
        ])
        .await
        .unwrap();
        let done = take(&f).await;
        let _lost = take(&f).await; // Never completed: the "crash".
        f.complete(done, HostFeedback::default()).await.unwrap();
    }
    let f = open(dir.path(), unlimited());
    let counts = f.counts().await.unwrap();
    assert_eq!((counts.queued, counts.leased, counts.seen), (2, 0, 3));
    // Two hosts with work; the files' bytes for the watch's gauge.
    assert_eq!(counts.hosts, Some(2));
    assert!(counts.disk_bytes.is_some_and(|b| b > 0), "{counts:?}");
    let mut again: Vec<String> = vec![take(&f).await, take(&f).await]
        .into_iter()
        .map(|l| l.request.url.to_string())
        .collect();
    again.sort();
    assert_eq!(again, ["http://a/2", "http://b/3"]);
    assert!(matches!(f.claim().await.unwrap(), Claim::Wait(None)));
    // The seen set survived too: nothing old is new again.
    let n = f
        .offer(vec![req("http://a/1"), req("http://a/2")])
        .await
        .unwrap();
    assert_eq!(n, 0);
}

#[test]
fn another_crawl_definition_is_refused_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path(), unlimited()));
    let other = CrawlMeta {
        roots: vec!["http://elsewhere/".into()],
        ..meta()
    };
    match DiskFrontier::open(dir.path(), &other, unlimited()) {
        Err(StoreError::Conflict { stored, given }) => {
            assert!(stored.contains("http://a/"), "{stored}");
            assert!(given.contains("http://elsewhere/"), "{given}");
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    let forced = DiskOptions {
        force: true,
        ..unlimited()
    };
    drop(DiskFrontier::open(dir.path(), &other, forced).expect("force reuses"));
    // The forced definition is now the stored one.
    drop(DiskFrontier::open(dir.path(), &other, unlimited()).expect("same definition"));
}

#[test]
fn incompatible_format_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path(), unlimited()));
    let conn = rusqlite::Connection::open(dir.path().join("state.sqlite")).unwrap();
    conn.execute_batch("PRAGMA user_version = 99").unwrap();
    drop(conn);
    match DiskFrontier::open(dir.path(), &meta(), unlimited()) {
        Err(e @ StoreError::Version { found: 99, .. }) => {
            assert!(e.to_string().contains("version 99"), "{e}");
        }
        other => panic!("expected a version error, got {other:?}"),
    }
    assert!(matches!(
        status(dir.path()),
        Err(StoreError::Version { .. })
    ));
}

#[tokio::test]
async fn a_state_from_before_queue_kinds_resumes_and_is_marked_newer() {
    let dir = tempfile::tempdir().unwrap();
    let queued = req("http://a/queued");
    {
        let f = open(dir.path(), unlimited());
        f.offer(vec![queued.clone()]).await.unwrap();
    }
    // Format 3 wrote page entries exactly as they are written now, and had
    // no fetch counts.
    let db = dir.path().join("state.sqlite");
    let version = |conn: &rusqlite::Connection| -> i64 {
        conn.query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap()
    };
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "ALTER TABLE progress DROP COLUMN fetched; ALTER TABLE host DROP COLUMN fetched;
         PRAGMA user_version = 3;",
    )
    .unwrap();
    drop(conn);
    let f = open(dir.path(), unlimited());
    let lease = take(&f).await;
    assert_eq!(lease.request, queued);
    assert_eq!(lease.request.kind, RequestKind::Page);
    drop(f);
    let conn = rusqlite::Connection::open(&db).unwrap();
    // An older build, which would misread a queued sitemap, now refuses it.
    assert!(version(&conn) > 3);
}

#[test]
fn a_second_writer_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let _first = open(dir.path(), unlimited());
    assert!(matches!(
        DiskFrontier::open(dir.path(), &meta(), unlimited()),
        Err(StoreError::Busy(_))
    ));
}

/// A full disk, simulated with SQLite's page limit (`max_size`): the write fails
/// through the same path as ENOSPC, without needing a tiny mounted filesystem.
#[tokio::test]
async fn full_disk_is_a_clear_error_and_the_state_still_opens() {
    let dir = tempfile::tempdir().unwrap();
    let tight = DiskOptions {
        max_size: Some(1 << 20),
        commit_ops: 100,
        ..unlimited()
    };
    let f = open(dir.path(), tight);
    let mut failure = None;
    for batch in 0..200 {
        let urls = (0..100)
            .map(|i| req(&format!("http://a/{batch}/{i}/{}", "x".repeat(200))))
            .collect();
        if let Err(e) = f.offer(urls).await {
            failure = Some(e.to_string());
            break;
        }
    }
    let failure = failure.expect("the size limit was hit");
    assert!(failure.contains("full"), "{failure}");
    // Once stopped, the frontier refuses work rather than diverging from disk.
    assert!(f.claim().await.is_err());
    drop(f);
    let f = open(dir.path(), unlimited());
    let counts = f.counts().await.unwrap();
    assert!(counts.seen > 0, "earlier commits survive");
    assert_eq!(counts.seen, counts.queued);
    assert_eq!(f.offer(vec![req("http://a/new")]).await.unwrap(), 1);
}

#[tokio::test]
async fn outcomes_robots_and_meta_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let fetched_at = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    {
        let f = open(dir.path(), unlimited());
        f.offer(vec![req("http://a/1"), req("http://a/2")])
            .await
            .unwrap();
        let l1 = take(&f).await;
        let ok = record(&l1.request.url, OutcomeKind::Html);
        f.finish(l1, HostFeedback::default(), &ok).unwrap();
        let l2 = take(&f).await;
        let bad = record(&l2.request.url, OutcomeKind::Failed);
        f.finish(l2, HostFeedback::default(), &bad).unwrap();
        let skipped = PageRecord::skipped(
            Url::parse("http://other/").unwrap(),
            SkipReason::Scope,
            1,
            None,
        );
        f.record_outcome(&skipped).unwrap();
        f.put_robots("http://a", b"User-agent: *\nDisallow: /x", fetched_at)
            .unwrap();
        f.put_meta("warc", b"offset=1234").unwrap();
        assert_eq!(
            f.get_meta("warc").unwrap().as_deref(),
            Some(&b"offset=1234"[..])
        );
    }
    let f = open(dir.path(), unlimited());
    let counts = f.outcome_counts().unwrap();
    assert_eq!((counts.records, counts.errors), (3, 1));
    let mut urls = Vec::new();
    f.for_each_outcome(&mut |r| urls.push((r.url.to_string(), r.kind)))
        .unwrap();
    assert_eq!(
        urls,
        [
            ("http://a/1".to_string(), OutcomeKind::Html),
            ("http://a/2".to_string(), OutcomeKind::Failed),
            ("http://other/".to_string(), OutcomeKind::Skipped),
        ]
    );
    let (body, at) = f.get_robots("http://a").unwrap().expect("cached");
    assert_eq!(body, b"User-agent: *\nDisallow: /x");
    assert_eq!(at, fetched_at);
    assert_eq!(f.get_robots("http://b").unwrap(), None);
    assert_eq!(
        f.get_meta("warc").unwrap().as_deref(),
        Some(&b"offset=1234"[..])
    );
    // Re-recording a URL replaces its record instead of counting it twice.
    f.record_outcome(&record(
        &Url::parse("http://a/2").unwrap(),
        OutcomeKind::Html,
    ))
    .unwrap();
    let counts = f.outcome_counts().unwrap();
    assert_eq!((counts.records, counts.errors), (3, 0));
    assert!(matches!(f.claim().await.unwrap(), Claim::Exhausted));
}

#[tokio::test]
async fn status_is_readable_while_the_crawl_runs() {
    let dir = tempfile::tempdir().unwrap();
    let f = open(dir.path(), unlimited());
    f.offer(vec![
        req("http://a/1"),
        req("http://a/2"),
        req("http://b/1"),
    ])
    .await
    .unwrap();
    let lease = take(&f).await;
    let url = lease.request.url.clone();
    f.finish(
        lease,
        HostFeedback::default(),
        &record(&url, OutcomeKind::HttpError),
    )
    .unwrap();
    let _leased = take(&f).await;
    f.flush().unwrap();
    let s = status(dir.path()).unwrap();
    assert!(s.running);
    assert_eq!((s.seen, s.queued, s.leased, s.done), (3, 1, 1, 1));
    assert_eq!((s.outcomes, s.errors), (1, 1));
    let a = s.hosts.iter().find(|h| h.host == "a:80").expect("host a");
    assert_eq!((a.pending, a.done, a.errors), (1, 1, 1));
    drop(f);
    assert!(!status(dir.path()).unwrap().running);
}

#[tokio::test]
async fn seen_set_spills_to_disk_beyond_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    // The smallest budget gives the seen set 768 KiB: about 48,000 fingerprints.
    let small = DiskOptions {
        memory_budget: 1 << 20,
        ..unlimited()
    };
    let urls = |range: std::ops::Range<u32>| -> Vec<Request> {
        range
            .map(|i| req(&format!("http://h{}/{i}", i % 7)))
            .collect()
    };
    {
        let f = open(dir.path(), small.clone());
        assert_eq!(f.offer(urls(0..70_000)).await.unwrap(), 70_000);
        assert_eq!(
            f.offer(urls(0..70_000)).await.unwrap(),
            0,
            "dedup across the spill"
        );
        assert_eq!(f.offer(urls(69_000..71_000)).await.unwrap(), 1_000);
    }
    let f = open(dir.path(), small);
    assert_eq!(
        f.offer(urls(0..71_000)).await.unwrap(),
        0,
        "dedup after reopening"
    );
    assert_eq!(f.counts().await.unwrap().seen, 71_000);
}

/// Deterministic URLs for the kill test: page `n` of host `h` links to `2n+1`
/// and `2n+2`, up to `KILL_LIMIT`.
const KILL_LIMIT: u64 = 1_000_000;
const KILL_HOSTS: u64 = 4;

fn kill_url(host: u64, n: u64) -> Url {
    Url::parse(&format!("http://h{host}.test/{n}")).unwrap()
}

fn kill_children(url: &Url) -> Vec<Url> {
    let host: u64 = url.host_str().unwrap()[1..]
        .trim_end_matches(".test")
        .parse()
        .unwrap();
    let n: u64 = url.path()[1..].parse().unwrap();
    [2 * n + 1, 2 * n + 2]
        .into_iter()
        .filter(|&c| c < KILL_LIMIT)
        .map(|c| kill_url(host, c))
        .collect()
}

/// The kill test's child, by the name the harness gives it: its module path
/// inside the `it` test binary.
const KILL9_CHILD: &str = "disk_frontier::kill9_child_worker";

/// The child side of the kill test: crawls the synthetic site until killed.
/// It does nothing unless the parent test started it.
#[tokio::test]
#[ignore = "run only as the child of kill_9_at_random_moments_keeps_the_state_consistent"]
async fn kill9_child_worker() {
    let Some(dir) = std::env::var_os("SKITTER_KILL9_DIR") else {
        return;
    };
    let opts = DiskOptions {
        commit_interval: Duration::from_millis(2),
        commit_ops: 500,
        ..unlimited()
    };
    let f = open(Path::new(&dir), opts);
    let roots = (0..KILL_HOSTS)
        .map(|h| req(kill_url(h, 0).as_str()))
        .collect();
    f.offer(roots).await.unwrap();
    loop {
        match f.claim().await.unwrap() {
            Claim::Ready(lease) => {
                let links = kill_children(&lease.request.url)
                    .into_iter()
                    .map(|u| Request {
                        url: u,
                        depth: lease.request.depth + 1,
                        redirects_left: 10,
                        parent: Some(lease.request.url.clone()),
                        kind: RequestKind::Page,
                    })
                    .collect();
                f.offer(links).await.unwrap();
                let rec = record(&lease.request.url, OutcomeKind::Html);
                f.finish(lease, HostFeedback::default(), &rec).unwrap();
            }
            Claim::Wait(_) => tokio::task::yield_now().await,
            Claim::Exhausted => std::thread::sleep(Duration::from_secs(60)),
        }
    }
}

/// Checks the state after a kill: nothing completed is queued again, and every
/// completed page's links were kept (queued or completed themselves).
async fn check_invariants(dir: &Path) -> u64 {
    // Claimed on a copy of the state, each lease handed back as a clean answer
    // with a retry far off: the host's slow start opens up so claiming drains
    // the whole queue, and the crawl's own state is left as the kill left it.
    let scratch = tempfile::tempdir().unwrap();
    copy_dir(dir, scratch.path());
    let all = options(HostPolicy {
        max_in_flight: usize::MAX,
        ..HostPolicy::default()
    });
    let f = open(scratch.path(), all);
    let mut done = HashSet::new();
    f.for_each_outcome(&mut |r| {
        assert!(done.insert(r.url.to_string()), "two records for {}", r.url);
    })
    .unwrap();
    let mut queued = HashSet::new();
    let mut claim = f.claim().await.unwrap();
    while let Claim::Ready(lease) = claim {
        let url = lease.request.url.to_string();
        assert!(!done.contains(&url), "completed URL {url} was queued again");
        assert!(queued.insert(url), "queued twice");
        let later = Duration::from_secs(3600);
        f.retry(lease, later, HostFeedback::Clean).await.unwrap();
        claim = f.claim().await.unwrap();
    }
    let later = |d: Option<Duration>| d.is_none_or(|d| d > Duration::from_secs(60));
    assert!(
        matches!(claim, Claim::Wait(d) if later(d)) || matches!(claim, Claim::Exhausted),
        "{claim:?}"
    );
    let s = status(dir).unwrap();
    assert_eq!(s.done, done.len() as u64, "each completion has its record");
    let counts = f.counts().await.unwrap();
    assert_eq!(
        counts.seen,
        (done.len() + queued.len()) as u64,
        "offered = queued + done"
    );
    for url in &done {
        for child in kill_children(&Url::parse(url).unwrap()) {
            let child = child.to_string();
            assert!(
                done.contains(&child) || queued.contains(&child),
                "{child}, found on completed {url}, was lost"
            );
        }
    }
    done.len() as u64
}

/// Copies the files of `from` (a frontier's state directory) into `to`.
fn copy_dir(from: &Path, to: &Path) {
    let mut dirs = vec![(from.to_path_buf(), to.to_path_buf())];
    while let Some((from, to)) = dirs.pop() {
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(&from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                dirs.push((entry.path(), target));
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }
}

#[tokio::test]
async fn kill_9_at_random_moments_keeps_the_state_consistent() {
    use rand::RngExt;
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut progress = Vec::new();
    for round in 0..6 {
        let mut child = std::process::Command::new(&exe)
            .args(["--exact", KILL9_CHILD, "--ignored", "--quiet"])
            .env("SKITTER_KILL9_DIR", dir.path())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let wait = rand::rng().random_range(150..600);
        tokio::time::sleep(Duration::from_millis(wait)).await;
        child.kill().unwrap(); // SIGKILL on Unix.
        child.wait().unwrap();
        let done = check_invariants(dir.path()).await;
        eprintln!("round {round}: killed after {wait} ms, {done} pages done");
        progress.push(done);
    }
    assert!(progress.windows(2).all(|w| w[0] <= w[1]), "{progress:?}");
    assert!(
        progress.last() > Some(&0),
        "the crawl made progress: {progress:?}"
    );
}
