//! A `--state` crawl keeps a URL's tries across runs, and counts a run that
//! died holding the URL (a child process killed with SIGKILL) as a lost lease
//! and a failed try, so the crawler can quarantine a URL that kills its runs.
//! A run that closes cleanly hands its claimed URLs back uncharged.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use skitter::frontier::{Claim, DiskFrontier, DiskOptions, Frontier, Lease};
use skitter::host::HostFeedback;
use skitter::state::store::CrawlMeta;

use crate::support::frontier_contract::{req, unlimited};

const CHILD: &str = "disk_lost::claim_and_die_child";
const URL: &str = "http://a.test/kills";

fn open(dir: &Path) -> DiskFrontier {
    let meta = CrawlMeta {
        roots: vec![URL.into()],
        scope: "same-host".into(),
        settings: Default::default(),
    };
    let options = DiskOptions {
        policy: unlimited(),
        durable: false,
        ..DiskOptions::default()
    };
    DiskFrontier::open(dir, &meta, options).expect("state opens")
}

async fn take(f: &DiskFrontier) -> Lease {
    match f.claim().await.unwrap() {
        Claim::Ready(lease) => lease,
        other => panic!("expected a lease, got {other:?}"),
    }
}

/// The child side: claims the URL, makes the claim durable, says what it
/// got, and waits to be killed. It does nothing unless the parent started it.
#[tokio::test]
#[ignore = "run only as the child of a_run_that_dies_holding_a_url_costs_it_a_try"]
async fn claim_and_die_child() {
    let Some(dir) = std::env::var_os("SKITTER_LOST_DIR") else {
        return;
    };
    let f = open(Path::new(&dir));
    let lease = take(&f).await;
    f.flush().unwrap();
    println!("claimed {} {}", lease.failed_tries(), lease.lost);
    std::thread::sleep(Duration::from_secs(60));
}

/// Starts the child, reads what it claimed, kills it: (failed tries, lost).
fn run_and_kill(dir: &Path) -> (u32, u32) {
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args(["--exact", CHILD, "--ignored", "--nocapture", "--quiet"])
        .env("SKITTER_LOST_DIR", dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let line = out
        .lines()
        .map(Result::unwrap)
        .find(|l| l.starts_with("claimed "));
    child.kill().unwrap(); // SIGKILL on Unix: no clean close.
    child.wait().unwrap();
    let line = line.expect("the child claimed the URL");
    let mut n = line["claimed ".len()..]
        .split(' ')
        .map(|n| n.parse().unwrap());
    (n.next().unwrap(), n.next().unwrap())
}

#[tokio::test]
async fn a_run_that_dies_holding_a_url_costs_it_a_try() {
    let dir = tempfile::tempdir().unwrap();
    {
        let f = open(dir.path());
        f.offer(vec![req(URL)]).await.unwrap();
        let lease = take(&f).await;
        // One ordinary failed attempt: the retry waits in memory, and this
        // run closes cleanly before it is due.
        f.retry(lease, Duration::from_secs(3600), HostFeedback::Failed)
            .await
            .unwrap();
    }
    for lost in 0..3 {
        assert_eq!(
            run_and_kill(dir.path()),
            (1 + lost, lost),
            "run {lost}: the tries survive the restart, each death adds one"
        );
    }
    {
        let f = open(dir.path());
        let lease = take(&f).await;
        assert_eq!((lease.failed_tries(), lease.lost), (4, 3));
        // Closed cleanly with the URL still claimed: handed back, not lost.
    }
    let f = open(dir.path());
    let lease = take(&f).await;
    assert_eq!((lease.failed_tries(), lease.lost), (4, 3));
    f.complete(lease, HostFeedback::Clean).await.unwrap();
    drop(f);
    let f = open(dir.path());
    assert!(
        matches!(f.claim().await.unwrap(), Claim::Exhausted),
        "completed: gone, tries and all"
    );
}
