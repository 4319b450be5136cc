//! The disk frontier forgets idle hosts: their state leaves memory, their rows
//! stay in the database, and a host whose URLs come back is read back with its
//! counters and its `Crawl-delay`.

use std::collections::BTreeMap;
use std::time::Duration;

use skitter::base::outcome::{OutcomeKind, PageRecord, SkipReason};
use skitter::frontier::{Claim, DiskFrontier, DiskOptions, Frontier};
use skitter::host::{HostFeedback, HostKey, LINGER};
use skitter::state::store::{CrawlMeta, status};
use url::Url;

use crate::support::frontier_contract::req;

const HOSTS: usize = 200;

fn open(dir: &std::path::Path) -> DiskFrontier {
    let meta = CrawlMeta {
        roots: vec!["http://h0.test/".into()],
        scope: "span-hosts".into(),
        settings: BTreeMap::new(),
    };
    let options = DiskOptions {
        durable: false,
        ..DiskOptions::default()
    };
    DiskFrontier::open(dir, &meta, options).expect("state opens")
}

fn done(url: &Url) -> PageRecord {
    let mut r = PageRecord::skipped(url.clone(), SkipReason::Limit, 0, None);
    r.kind = OutcomeKind::Html;
    r.skip = None;
    r.attempts = 1;
    r
}

/// Claims and finishes every URL ready now.
async fn drain(f: &DiskFrontier) -> usize {
    let mut n = 0;
    while let Claim::Ready(lease) = f.claim().await.unwrap() {
        let record = done(&lease.request.url);
        f.finish(lease, HostFeedback::default(), &record).unwrap();
        n += 1;
    }
    n
}

/// Lets the table look at every watched host once its rows are committed.
async fn settle(f: &DiskFrontier) {
    // Two commits: a host is forgotten once the commit that wrote its row is
    // known to be applied, which the next commit learns.
    f.flush().unwrap();
    f.flush().unwrap();
    for _ in 0..HOSTS {
        let _ = f.claim().await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn idle_hosts_are_forgotten_and_come_back_with_their_counts() {
    let dir = tempfile::tempdir().unwrap();
    let f = open(dir.path());
    let roots: Vec<_> = (0..HOSTS)
        .map(|i| req(&format!("http://h{i}.test/")))
        .collect();
    f.offer(roots).await.unwrap();
    f.set_host_delay(
        &HostKey::of(&Url::parse("http://h3.test/").unwrap()),
        Duration::from_millis(500),
    )
    .await
    .unwrap();
    assert_eq!(drain(&f).await, HOSTS);
    assert_eq!(
        f.host_counts().0,
        HOSTS,
        "every host known while its page is done"
    );
    // Past h3's delay, and past the time a host counts as warm (kept).
    tokio::time::advance(LINGER.max(Duration::from_secs(1))).await;
    settle(&f).await;
    assert_eq!(f.host_counts(), (0, HOSTS as u64), "idle hosts forgotten");

    // h3 comes back: its row, its count of pages done and its Crawl-delay.
    f.offer(vec![req("http://h3.test/a"), req("http://h3.test/b")])
        .await
        .unwrap();
    assert_eq!(f.host_counts().0, 1);
    // Answered (back in slow start, it has one request out until then), so
    // only its Crawl-delay holds the next.
    let Claim::Ready(first) = f.claim().await.unwrap() else {
        panic!("h3's first URL is ready");
    };
    let record = done(&first.request.url);
    f.finish(first, HostFeedback::Clean, &record).unwrap();
    match f.claim().await.unwrap() {
        Claim::Wait(Some(wait)) => assert!(wait > Duration::from_millis(400), "{wait:?}"),
        other => panic!("h3's Crawl-delay was lost: {other:?}"),
    }
    drop(f);

    let report = status(dir.path()).unwrap();
    assert_eq!(
        report.hosts.len(),
        HOSTS,
        "one row per host, none added twice"
    );
    let h3 = report
        .hosts
        .iter()
        .find(|h| h.host == "h3.test:80")
        .unwrap();
    assert_eq!((h3.done, h3.pending), (2, 1));
    // Reopening still works, and finds h3's last URL queued.
    let f = open(dir.path());
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(drain(&f).await, 1);
}
