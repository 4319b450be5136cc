//! The behaviour every frontier owes the scheduler, written once and run against
//! each implementation (`memory_frontier.rs`, `disk_frontier.rs`,
//! `redis_frontier.rs`): dedup, the end condition, per-host caps that never block
//! other hosts, slow start for a new host, delays, leases, retries through the host's slot, and the
//! politeness rule's reaction to a server that asks to slow down.
//!
//! Each check takes a function that opens a fresh, empty frontier with the given
//! host policy, so a persistent frontier can put it in a temporary directory.

use std::time::Duration;

use skitter::frontier::{Claim, Frontier, Lease, Request, RequestKind};
use skitter::host::{HostFeedback, HostPolicy, ThrottleReason};
use url::Url;

/// A depth-0 request for `u`.
pub fn req(u: &str) -> Request {
    Request {
        url: Url::parse(u).unwrap(),
        depth: 0,
        redirects_left: 10,
        parent: None,
        kind: RequestKind::Page,
    }
}

/// A policy that caps nothing the checks do.
pub fn unlimited() -> HostPolicy {
    HostPolicy {
        max_in_flight: 100,
        ..HostPolicy::default()
    }
}

/// Claims a lease, failing the test if the frontier has none ready.
pub async fn take(f: &dyn Frontier) -> Lease {
    match f.claim().await.unwrap() {
        Claim::Ready(lease) => lease,
        other => panic!("expected a lease, got {other:?}"),
    }
}

/// Each URL is queued once; the frontier is exhausted only when the queue is
/// empty and no lease is out.
pub async fn dedups_and_exhausts(f: &dyn Frontier) {
    let n = f
        .offer(vec![
            req("http://a/1"),
            req("http://a/1"),
            req("http://a/2"),
        ])
        .await
        .unwrap();
    assert_eq!(n, 2);
    assert_eq!(f.offer(vec![req("http://a/2")]).await.unwrap(), 0);
    // A host's URLs come out in the order they were offered.
    let l1 = take(f).await;
    assert_eq!(l1.request.url.path(), "/1");
    f.complete(l1, HostFeedback::Clean).await.unwrap();
    let l2 = take(f).await;
    assert!(matches!(f.claim().await.unwrap(), Claim::Wait(None)));
    f.complete(l2, HostFeedback::default()).await.unwrap();
    assert!(matches!(f.claim().await.unwrap(), Claim::Exhausted));
}

/// A host at its cap waits while another host's URL is handed out.
pub async fn full_host_does_not_block_others(f: &dyn Frontier) {
    f.offer(vec![
        req("http://slow/1"),
        req("http://slow/2"),
        req("http://fast/1"),
    ])
    .await
    .unwrap();
    let a = take(f).await;
    let b = take(f).await;
    assert_eq!(a.request.url.host_str(), Some("slow"));
    assert_eq!(b.request.url.host_str(), Some("fast"));
    assert!(matches!(f.claim().await.unwrap(), Claim::Wait(None)));
    f.complete(a, HostFeedback::default()).await.unwrap();
    assert_eq!(take(f).await.request.url.path(), "/2");
}

/// The policy for [`full_host_does_not_block_others`].
pub fn one_per_host() -> HostPolicy {
    HostPolicy {
        max_in_flight: 1,
        ..HostPolicy::default()
    }
}

/// A host with a delay asks the scheduler to wait about that long.
pub async fn delayed_host_asks_to_wait(f: &dyn Frontier) {
    f.offer(vec![req("http://a/1"), req("http://a/2")])
        .await
        .unwrap();
    // Answered, so the host has slots free: only the delay holds it.
    let lease = take(f).await;
    f.complete(lease, HostFeedback::Clean).await.unwrap();
    match f.claim().await.unwrap() {
        Claim::Wait(Some(d)) => assert!(d > Duration::from_secs(4)),
        other => panic!("expected a timed wait, got {other:?}"),
    }
}

/// Slow start: a host not heard from yet gets the initial window of six
/// leases (the documented `--per-host` behaviour); each clean answer doubles
/// what it may have out, up to its cap.
pub async fn new_host_starts_with_the_initial_window(f: &dyn Frontier) {
    let urls: Vec<_> = (1..=40).map(|i| req(&format!("http://a/{i}"))).collect();
    f.offer(urls).await.unwrap();
    let mut out = Vec::new();
    for _ in 0..6 {
        out.push(take(f).await);
    }
    assert!(
        matches!(f.claim().await.unwrap(), Claim::Wait(_)),
        "six leases until the host answers"
    );
    // One clean answer: 6 → 12, five still out.
    f.complete(out.pop().unwrap(), HostFeedback::Clean)
        .await
        .unwrap();
    for _ in 0..7 {
        out.push(take(f).await);
    }
    assert_eq!(out.len(), 12);
    assert!(matches!(f.claim().await.unwrap(), Claim::Wait(_)));
    // Another: 12 → 24, capped at 16.
    f.complete(out.pop().unwrap(), HostFeedback::Clean)
        .await
        .unwrap();
    for _ in 0..5 {
        out.push(take(f).await);
    }
    assert!(
        matches!(f.claim().await.unwrap(), Claim::Wait(_)),
        "capped at the policy's max_in_flight"
    );
    // An answer that says nothing about the server does not widen it.
    f.complete(out.pop().unwrap(), HostFeedback::Silent)
        .await
        .unwrap();
    out.push(take(f).await);
    assert!(matches!(f.claim().await.unwrap(), Claim::Wait(_)));
}

/// The policy for [`new_host_starts_with_the_initial_window`].
pub fn sixteen_per_host() -> HostPolicy {
    HostPolicy {
        max_in_flight: 16,
        ..HostPolicy::default()
    }
}

/// The policy for [`delayed_host_asks_to_wait`].
pub fn five_second_delay() -> HostPolicy {
    HostPolicy {
        max_in_flight: 4,
        delay: Duration::from_secs(5),
        ..HostPolicy::default()
    }
}

/// Completing a lease the frontier never handed out is an error.
pub async fn unknown_lease_is_an_error(f: &dyn Frontier) {
    let bogus = Lease {
        id: 42,
        request: req("http://a/"),
        tries: 0,
        lost: 0,
    };
    assert!(f.complete(bogus, HostFeedback::default()).await.is_err());
}

/// Claims until a lease comes, sleeping through short waits (a distress gap,
/// a retry falling due); fails after `limit` so a bug fails instead of hanging.
pub async fn take_within(f: &dyn Frontier, limit: Duration) -> Lease {
    let start = std::time::Instant::now();
    loop {
        match f.claim().await.unwrap() {
            Claim::Ready(lease) => return lease,
            Claim::Wait(wait) if start.elapsed() < limit => {
                let nap = wait.unwrap_or(Duration::from_millis(5));
                tokio::time::sleep(nap.min(Duration::from_millis(50))).await
            }
            other => panic!("no lease within {limit:?}: {other:?}"),
        }
    }
}

/// A URL that failed goes back with its own wait; its host goes on with the
/// others at full speed, and the crawl is not over while the retry waits.
pub async fn retry_waits_alone(f: &dyn Frontier) {
    f.offer(vec![req("http://a/1"), req("http://a/2")])
        .await
        .unwrap();
    let first = take(f).await;
    assert_eq!(first.tries, 0);
    let minute = Duration::from_secs(60);
    let throttle = f.retry(first, minute, HostFeedback::Failed).await.unwrap();
    assert_eq!(throttle, None, "one failure is not distress");
    let second = take(f).await;
    assert_eq!(second.request.url.path(), "/2", "the host is not paused");
    f.complete(second, HostFeedback::Clean).await.unwrap();
    match f.claim().await.unwrap() {
        Claim::Wait(_) => {}
        other => panic!("a waiting retry must keep the crawl alive, got {other:?}"),
    }
    assert_eq!(f.counts().await.unwrap().leased, 1, "the retry is to do");
}

/// A retry that is due is claimed again, with its try counted.
pub async fn retry_comes_back_with_its_tries(f: &dyn Frontier) {
    f.offer(vec![req("http://a/1")]).await.unwrap();
    let lease = take(f).await;
    f.retry(lease, Duration::ZERO, HostFeedback::Failed)
        .await
        .unwrap();
    let again = take_within(f, Duration::from_secs(5)).await;
    assert_eq!(again.request.url.path(), "/1");
    assert_eq!(again.tries, 1);
    f.retry(again, Duration::ZERO, HostFeedback::Silent)
        .await
        .unwrap();
    let third = take_within(f, Duration::from_secs(5)).await;
    assert_eq!(third.tries, 1, "a deferral without an attempt costs no try");
    // A 429 is counted apart from the failures (the policy allows more of them).
    let pause = HostFeedback::SlowDown(Duration::ZERO, ThrottleReason::TooManyRequests);
    f.retry(third, Duration::ZERO, pause).await.unwrap();
    let third = take_within(f, Duration::from_secs(5)).await;
    assert_eq!((third.failed_tries(), third.throttled_tries()), (1, 1));
    f.complete(third, HostFeedback::Clean).await.unwrap();
    assert!(matches!(f.claim().await.unwrap(), Claim::Exhausted));
}

/// A 429 pauses its whole host (and cuts it), never another host.
pub async fn slow_down_pauses_only_its_host(f: &dyn Frontier) {
    f.offer(vec![
        req("http://a/1"),
        req("http://a/2"),
        req("http://b/1"),
    ])
    .await
    .unwrap();
    let lease = take(f).await;
    let host = lease.request.url.host_str().unwrap().to_owned();
    let pause = HostFeedback::SlowDown(Duration::from_secs(60), ThrottleReason::TooManyRequests);
    let throttle = f
        .retry(lease, Duration::from_secs(60), pause)
        .await
        .unwrap();
    let throttle = throttle.expect("a 429 is a slow-down");
    assert_eq!(throttle.reason, ThrottleReason::TooManyRequests);
    assert!(throttle.cut);
    // Only the other host's URLs may start now (one or two of them: which
    // host the first claim served depends on the frontier's order, which a
    // sharded one rotates), then nothing while the pause lasts.
    let other = take(f).await;
    assert_ne!(other.request.url.host_str().unwrap(), host);
    f.complete(other, HostFeedback::Clean).await.unwrap();
    loop {
        match f.claim().await.unwrap() {
            Claim::Wait(_) => break,
            Claim::Ready(other) if other.request.url.host_str() != Some(host.as_str()) => {
                f.complete(other, HostFeedback::Clean).await.unwrap();
            }
            other => panic!("host {host} is paused, got {other:?}"),
        }
    }
}
