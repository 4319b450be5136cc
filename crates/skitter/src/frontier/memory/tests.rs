//! Tests of what only the in-memory frontier does: staying within its budget by
//! spilling. The behaviour every frontier owes (dedup, host caps, delays, leases)
//! is tested once for all in `tests/support/frontier_contract.rs`.

use super::*;
use url::Url;

fn unlimited() -> HostPolicy {
    HostPolicy {
        max_in_flight: 100,
        ..HostPolicy::default()
    }
}

async fn take(f: &MemoryFrontier) -> Lease {
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
    // Everything already queued is rejected, from memory or from disk.
    let again: Vec<Request> = (0..per_host).step_by(13).map(|i| page(7, i)).collect();
    assert_eq!(f.offer(again).await.unwrap(), 0);
    let mut next = vec![0; hosts];
    let mut last_host = None;
    for n in 0..hosts * per_host {
        let lease = take(&f).await;
        let r = &lease.request;
        let h: usize = r.url.host_str().unwrap()[4..]
            .trim_end_matches(".test")
            .parse()
            .unwrap();
        assert_eq!(*r, page(h, next[h]), "host {h} out of order at claim {n}");
        assert_ne!(last_host, Some(h), "round-robin over hosts");
        last_host = Some(h);
        next[h] += 1;
        f.complete(lease, HostFeedback::default()).await.unwrap();
    }
    assert!(matches!(f.claim().await.unwrap(), Claim::Exhausted));
    assert_eq!(f.lock().queues.segments(), 0, "read segments are freed");
    let counts = f.counts().await.unwrap();
    assert_eq!((counts.seen, counts.queued), ((hosts * per_host) as u64, 0));
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
    assert!(matches!(f.claim().await, Err(FrontierError::Storage(_))));
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
