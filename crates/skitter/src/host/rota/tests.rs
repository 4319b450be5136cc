//! The order the rota serves ready hosts in, through the in-memory frontier
//! (the disk frontier runs the same rota): warm hosts first, fresh hosts
//! before a busy host's next connection, the session budget, and rings that
//! stay small however often hosts move between them.

use std::time::Duration;

use crate::frontier::memory::tests::{at, take};
use crate::frontier::{Claim, Frontier, Lease, MemoryFrontier};
use crate::host::ring::{LINGER, SESSION_BUDGET};
use crate::host::{HostFeedback, HostPolicy};

fn frontier(max_in_flight: usize, delay: Duration) -> MemoryFrontier {
    MemoryFrontier::new(HostPolicy {
        max_in_flight,
        delay,
        ..HostPolicy::default()
    })
}

async fn offer(f: &MemoryFrontier, host: &str, n: usize) {
    let batch = (0..n).map(|i| at(host, i)).collect();
    assert_eq!(f.offer(batch).await.unwrap(), n);
}

fn host(lease: &Lease) -> String {
    lease
        .request
        .url
        .host_str()
        .unwrap()
        .trim_end_matches(".test")
        .to_owned()
}

/// Claims and completes one request at a time until nothing is ready; the
/// hosts in the order they were served.
async fn serve_one_by_one(f: &MemoryFrontier) -> Vec<String> {
    let mut order = Vec::new();
    while let Claim::Ready(lease) = f.claim().await.unwrap() {
        order.push(host(&lease));
        f.complete(lease, HostFeedback::Clean).await.unwrap();
    }
    order
}

#[tokio::test(start_paused = true)]
async fn a_host_whose_connection_is_idle_goes_before_fresh_hosts() {
    let f = frontier(8, Duration::ZERO);
    offer(&f, "a", 3).await;
    offer(&f, "b", 1).await;
    offer(&f, "c", 1).await;
    // A round-robin would go a, b, c, a, a: three connections to a's server
    // in turn with two others. a's connection is free again after each answer.
    assert_eq!(serve_one_by_one(&f).await, ["a", "a", "a", "b", "c"]);
}

#[tokio::test(start_paused = true)]
async fn a_host_goes_cold_after_lingering() {
    let f = frontier(8, Duration::ZERO);
    offer(&f, "a", 1).await;
    assert_eq!(serve_one_by_one(&f).await, ["a"]);
    tokio::time::advance(LINGER).await;
    // a's new URL was found after its connection went quiet: it waits its
    // turn behind b, which was queued first.
    offer(&f, "b", 1).await;
    f.offer(vec![at("a", 7)]).await.unwrap();
    assert_eq!(serve_one_by_one(&f).await, ["b", "a"]);
}

#[tokio::test(start_paused = true)]
async fn fresh_hosts_go_before_a_busy_hosts_next_connection() {
    let f = frontier(8, Duration::ZERO);
    offer(&f, "a", 4).await;
    let first = take(&f).await;
    f.complete(first, HostFeedback::Clean).await.unwrap(); // a may now have 2 in flight
    offer(&f, "b", 1).await;
    offer(&f, "c", 1).await;
    let a1 = take(&f).await;
    assert_eq!(host(&a1), "a", "a's connection is idle");
    // a has one in flight on its only connection: another request to it
    // would open a second. The fresh hosts need one anyway.
    let next: Vec<String> = [take(&f).await, take(&f).await].iter().map(host).collect();
    assert_eq!(next, ["b", "c"]);
    // With nothing else ready, a busy host is still served: the crawl never
    // idles while a host may start.
    let a2 = take(&f).await;
    assert_eq!(host(&a2), "a");
}

#[tokio::test(start_paused = true)]
async fn a_spent_session_lets_waiting_hosts_in() {
    let f = frontier(8, Duration::ZERO);
    let budget = SESSION_BUDGET as usize;
    offer(&f, "big", budget + 5).await;
    offer(&f, "small", 1).await;
    let order = serve_one_by_one(&f).await;
    let small = order.iter().position(|h| h == "small").unwrap();
    assert_eq!(small, budget, "{order:?}");
    assert_eq!(order.len(), budget + 6);
}

#[tokio::test(start_paused = true)]
async fn a_delay_past_the_linger_time_is_a_plain_round_robin() {
    let gap = LINGER + Duration::from_secs(1);
    let f = frontier(1, gap);
    offer(&f, "a", 2).await;
    offer(&f, "b", 2).await;
    let mut order = Vec::new();
    while order.len() < 4 {
        match f.claim().await.unwrap() {
            Claim::Ready(lease) => {
                order.push(host(&lease));
                f.complete(lease, HostFeedback::Clean).await.unwrap();
            }
            Claim::Wait(Some(wait)) => tokio::time::advance(wait).await,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(order, ["a", "b", "a", "b"]);
}

#[tokio::test(start_paused = true)]
async fn rings_stay_small_when_hosts_move_between_them() {
    let f = frontier(8, Duration::ZERO);
    offer(&f, "a", 5_000).await;
    // Each claim leaves a busy (all connections in use); each answer moves it
    // to the warm ring and leaves its busy entry behind, in a ring nothing
    // is taken from while a warm host is ready.
    for _ in 0..5_000 {
        let lease = take(&f).await;
        f.complete(lease, HostFeedback::Clean).await.unwrap();
    }
    for (ring, (entries, live)) in f.ring_entries().into_iter().enumerate() {
        assert!(entries <= 2 * live + 65, "ring {ring}: {entries} entries");
    }
}
