//! Tests of what only the in-memory frontier does: staying within its budget by
//! spilling. The behaviour every frontier owes (dedup, host caps, delays, leases)
//! is tested once for all in `tests/support/frontier_contract.rs`.

use super::*;
use crate::host::ThrottleReason;
use crate::host::ring::{LINGER, SESSION_BUDGET};
use url::Url;

use crate::frontier::RequestKind;

fn unlimited() -> HostPolicy {
    HostPolicy {
        max_in_flight: 100,
        ..HostPolicy::default()
    }
}

/// Claims a lease that must be ready (also for the rota's tests).
pub(crate) async fn take(f: &MemoryFrontier) -> Lease {
    match f.claim().await.unwrap() {
        Claim::Ready(lease) => lease,
        other => panic!("expected a lease, got {other:?}"),
    }
}

fn tiny(spill_dir: Option<PathBuf>) -> MemoryFrontier {
    MemoryFrontier::with_options(MemoryOptions {
        policy: unlimited(),
        memory_budget: 64 << 10,
        spill_dir,
    })
    .unwrap()
}

/// Page `i` of host `h`, found on page `i - 1` (so parents are shared and spilled).
fn page(h: usize, i: usize) -> Request {
    Request {
        url: Url::parse(&format!("http://host{h}.test/some/longer/path/{i}")).unwrap(),
        depth: i as u32,
        redirects_left: 3,
        parent: (i > 0).then(|| Url::parse(&format!("http://host{h}.test/p/{}", i / 10)).unwrap()),
        // Some sitemaps among them, whose kind must survive the spill.
        kind: if i % 7 == 3 {
            RequestKind::Sitemap {
                trusted: i.is_multiple_of(2),
                nesting: 1,
            }
        } else {
            RequestKind::Page
        },
    }
}

#[tokio::test]
async fn spilled_queues_keep_per_host_fifo_and_every_url_once() {
    let f = tiny(None);
    let (hosts, per_host) = (50, 400);
    for i in 0..per_host {
        let batch: Vec<Request> = (0..hosts).map(|h| page(h, i)).collect();
        assert_eq!(f.offer(batch).await.unwrap(), hosts);
    }
    {
        let state = f.lock();
        assert!(state.queues.segments() > 0, "a 64 KiB budget must spill");
        assert!(state.seen.runs() > 0, "the seen set must spill");
        assert!(
            state.queues.bytes() < 64 << 10,
            "{} bytes",
            state.queues.bytes()
        );
    }
    // What spilled is the frontier's size on disk (`skitter_frontier_disk_bytes`).
    let spilled = f.counts().await.unwrap().disk_bytes.unwrap();
    assert!(spilled > 0, "spilled files count on disk");
    // Everything already queued is rejected, from memory or from disk.
    let again: Vec<Request> = (0..per_host).step_by(13).map(|i| page(7, i)).collect();
    assert_eq!(f.offer(again).await.unwrap(), 0);
    let mut next = vec![0; hosts];
    let (mut last_host, mut run) = (None, 0);
    for n in 0..hosts * per_host {
        let lease = take(&f).await;
        let r = &lease.request;
        let h: usize = r.url.host_str().unwrap()[4..]
            .trim_end_matches(".test")
            .parse()
            .unwrap();
        assert_eq!(*r, page(h, next[h]), "host {h} out of order at claim {n}");
        // A host keeps its turn while warm, for one session at most.
        run = if last_host == Some(h) { run + 1 } else { 1 };
        assert!(run <= SESSION_BUDGET as usize, "host {h} kept its turn");
        last_host = Some(h);
        next[h] += 1;
        f.complete(lease, HostFeedback::default()).await.unwrap();
    }
    assert!(matches!(f.claim().await.unwrap(), Claim::Exhausted));
    assert_eq!(f.lock().queues.segments(), 0, "read segments are freed");
    let counts = f.counts().await.unwrap();
    assert_eq!((counts.seen, counts.queued), ((hosts * per_host) as u64, 0));
    // The freed queue segments no longer count; the seen set's runs still do.
    let left = counts.disk_bytes.unwrap();
    assert!(left > 0 && left < spilled, "{left} of {spilled} bytes left");
}

#[tokio::test]
async fn offers_interleaved_with_claims_stay_in_order() {
    let f = tiny(None);
    let mut offered = 0;
    let mut claimed = 0;
    while claimed < 3000 {
        if offered < 3000 {
            let batch: Vec<Request> = (offered..offered + 50).map(|i| page(0, i)).collect();
            f.offer(batch).await.unwrap();
            offered += 50;
        }
        for _ in 0..30 {
            let Claim::Ready(lease) = f.claim().await.unwrap() else {
                break;
            };
            assert_eq!(lease.request, page(0, claimed));
            claimed += 1;
            f.complete(lease, HostFeedback::default()).await.unwrap();
        }
    }
    assert!(matches!(f.claim().await.unwrap(), Claim::Exhausted));
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_failed_spill_write_stops_the_frontier_with_an_error() {
    let f = tiny(None);
    // Every spill file is /dev/full: writes fail as on a full disk.
    f.lock().queues = Queues::new(0, 0, SpillDir::failing_for_tests());
    let err = f
        .offer((0..10).map(|i| page(0, i)).collect())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("No space left"), "{err}");
    assert!(matches!(f.claim().await, Err(FrontierError::Failed(_))));
}

#[test]
fn an_unwritable_spill_dir_is_refused_up_front() {
    let err = MemoryFrontier::with_options(MemoryOptions {
        spill_dir: Some("/nonexistent/spill-dir".into()),
        ..MemoryOptions::default()
    })
    .unwrap_err();
    assert!(err.to_string().contains("/nonexistent/spill-dir"), "{err}");
}

/// URL `i` of `host.test` (also for the rota's tests).
pub(crate) fn at(host: &str, i: usize) -> Request {
    Request {
        url: Url::parse(&format!("http://{host}.test/{i}")).unwrap(),
        depth: 0,
        redirects_left: 3,
        parent: None,
        kind: RequestKind::Page,
    }
}

/// Claims everything claimable now and completes it cleanly.
async fn drain(f: &MemoryFrontier) -> usize {
    let mut n = 0;
    while let Claim::Ready(lease) = f.claim().await.unwrap() {
        f.complete(lease, HostFeedback::Clean).await.unwrap();
        n += 1;
    }
    n
}

fn wait_of(claim: Claim) -> Duration {
    match claim {
        Claim::Wait(Some(wait)) => wait,
        other => panic!("expected a timed wait, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn idle_hosts_are_forgotten_and_their_slots_reused() {
    let f = MemoryFrontier::new(unlimited());
    let (rounds, hosts) = (20, 100);
    for round in 0..rounds {
        let batch = (0..hosts).map(|h| at(&format!("h{round}-{h}"), 0));
        f.offer(batch.collect()).await.unwrap();
        assert_eq!(drain(&f).await, hosts);
        // Still warm, they are kept; then they may go.
        tokio::time::advance(LINGER).await;
    }
    assert!(matches!(f.claim().await.unwrap(), Claim::Exhausted));
    let state = f.lock();
    // Each round's hosts are forgotten while the next round runs.
    assert!(state.hosts.slots() <= 2 * hosts, "{}", state.hosts.slots());
    assert!(
        state.hosts.forgotten() >= ((rounds - 1) * hosts) as u64,
        "{}",
        state.hosts.forgotten()
    );
}

#[tokio::test(start_paused = true)]
async fn a_host_owing_a_gap_is_kept_and_a_forgotten_one_comes_back_fresh() {
    let delay = Duration::from_secs(10);
    let f = MemoryFrontier::new(HostPolicy {
        max_in_flight: 1,
        delay,
        jitter: Duration::ZERO,
    });
    f.offer(vec![at("a", 0)]).await.unwrap();
    assert_eq!(drain(&f).await, 1);
    // Many other hosts come and go while `a` owes its gap: it is not forgotten.
    for h in 0..50 {
        f.offer(vec![at(&format!("b{h}"), 0)]).await.unwrap();
        assert_eq!(drain(&f).await, 1);
    }
    assert_eq!(f.lock().hosts.forgotten(), 0);
    f.offer(vec![at("a", 1)]).await.unwrap();
    assert_eq!(wait_of(f.claim().await.unwrap()), delay);
    tokio::time::advance(delay).await;
    assert_eq!(drain(&f).await, 1);

    // Once the gap has passed, every host is forgotten, a sweep at a time.
    tokio::time::advance(delay).await;
    for _ in 0..100 {
        assert!(matches!(f.claim().await.unwrap(), Claim::Exhausted));
    }
    assert_eq!(f.lock().hosts.live(), 0);
    assert_eq!(f.lock().hosts.forgotten(), 51);
    // Coming back, `a` starts at once and owes the gap again after that.
    f.offer(vec![at("a", 2), at("a", 3)]).await.unwrap();
    assert_eq!(drain(&f).await, 1);
    assert_eq!(wait_of(f.claim().await.unwrap()), delay);
}

#[tokio::test(start_paused = true)]
async fn crawl_delay_and_slow_downs_survive_the_sweeps() {
    let f = MemoryFrontier::new(unlimited());
    let crawl_delay = Duration::from_secs(30);
    let pause = Duration::from_secs(60);
    let (a, b) = (HostKey::of(&at("a", 0).url), HostKey::of(&at("b", 0).url));
    f.set_host_delay(&a, crawl_delay).await.unwrap();
    f.offer(vec![at("a", 0), at("b", 0)]).await.unwrap();
    let mut leases = Vec::new();
    while let Claim::Ready(lease) = f.claim().await.unwrap() {
        leases.push(lease);
    }
    assert_eq!(leases.len(), 2);
    for lease in leases {
        let feedback = if HostKey::of(&lease.request.url) == b {
            HostFeedback::SlowDown(pause, ThrottleReason::TooManyRequests)
        } else {
            HostFeedback::Clean
        };
        f.complete(lease, feedback).await.unwrap();
    }
    // Past the crawl-delay, `a` is forgotten; `b` is still paused.
    tokio::time::advance(crawl_delay).await;
    for _ in 0..10 {
        f.claim().await.unwrap();
    }
    assert_eq!(f.lock().hosts.live(), 1);
    f.offer(vec![at("b", 1)]).await.unwrap();
    assert_eq!(wait_of(f.claim().await.unwrap()), pause - crawl_delay);
    tokio::time::advance(pause).await;
    assert_eq!(drain(&f).await, 1);
    // `a` comes back with its crawl-delay, which the crawler hands over once.
    f.offer(vec![at("a", 1), at("a", 2)]).await.unwrap();
    assert_eq!(drain(&f).await, 1);
    assert_eq!(wait_of(f.claim().await.unwrap()), crawl_delay);
}
