//! The in-memory frontier: a fingerprint seen set and per-host FIFO queues served
//! round-robin, so one slow or rate-limited host never holds up the others.
//!
//! Each host is in exactly one state: idle (nothing queued), ready (in the
//! round-robin ring), timed (in the heap, waiting for its next allowed start), or
//! full (all its slots busy; it comes back when a lease completes). `claim` is then
//! O(log hosts) however many hosts are waiting.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use rand::RngExt;

use super::host::HostSlots;
use super::{
    Claim, Frontier, FrontierCounts, FrontierError, HostFeedback, HostKey, HostPolicy, Lease,
    Request,
};

/// A 128-bit fingerprint of a normalised URL: 16 bytes per seen URL instead of the
/// whole string, with a collision chance that is negligible for any real crawl.
pub(crate) fn fingerprint(url: &url::Url) -> u128 {
    xxhash_rust::xxh3::xxh3_128(url.as_str().as_bytes())
}

/// The frontier of a crawl that lives in this process only.
#[derive(Debug)]
pub struct MemoryFrontier {
    policy: HostPolicy,
    inner: Mutex<State>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Idle,
    Ready,
    Timed,
    Full,
}

#[derive(Debug)]
struct Host {
    queue: VecDeque<Request>,
    slots: HostSlots,
    place: Place,
}

#[derive(Debug, Default)]
struct State {
    seen: HashSet<u128>,
    hosts: HashMap<HostKey, Host>,
    ready: VecDeque<HostKey>,
    timed: BinaryHeap<Reverse<(Instant, HostKey)>>,
    leases: HashMap<u64, HostKey>,
    next_lease: u64,
    queued: u64,
}

impl MemoryFrontier {
    /// An empty frontier whose hosts all start with `policy`.
    pub fn new(policy: HostPolicy) -> Self {
        MemoryFrontier {
            policy,
            inner: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock leaves plain data behind; carry on with it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl State {
    /// Puts a host where its queue and slots say it belongs.
    fn place(&mut self, key: &HostKey, now: Instant) {
        let Some(host) = self.hosts.get_mut(key) else {
            return;
        };
        if matches!(host.place, Place::Ready | Place::Timed) {
            return; // Already scheduled; it is re-checked when taken out.
        }
        host.place = if host.queue.is_empty() {
            Place::Idle
        } else {
            match host.slots.ready_at(now) {
                Ok(()) => {
                    self.ready.push_back(key.clone());
                    Place::Ready
                }
                Err(Some(at)) => {
                    self.timed.push(Reverse((at, key.clone())));
                    Place::Timed
                }
                Err(None) => Place::Full,
            }
        };
    }

    fn promote_due(&mut self, now: Instant) {
        while let Some(Reverse((at, _))) = self.timed.peek() {
            if *at > now {
                break;
            }
            let Reverse((_, key)) = self.timed.pop().expect("peeked");
            if let Some(host) = self.hosts.get_mut(&key) {
                host.place = Place::Idle;
            }
            self.place(&key, now);
        }
    }

    fn claim(&mut self, now: Instant) -> Claim {
        self.promote_due(now);
        while let Some(key) = self.ready.pop_front() {
            let host = self.hosts.get_mut(&key).expect("ready host exists");
            host.place = Place::Idle;
            if host.slots.ready_at(now).is_err() || host.queue.is_empty() {
                self.place(&key, now);
                continue;
            }
            let request = host.queue.pop_front().expect("non-empty");
            let jitter = random_up_to(host.slots.jitter());
            host.slots.start(now, jitter);
            self.queued -= 1;
            self.place(&key, now);
            let id = self.next_lease;
            self.next_lease += 1;
            self.leases.insert(id, key);
            return Claim::Ready(Lease { id, request });
        }
        if let Some(Reverse((at, _))) = self.timed.peek() {
            return Claim::Wait(Some(at.saturating_duration_since(now)));
        }
        if self.queued == 0 && self.leases.is_empty() {
            Claim::Exhausted
        } else {
            Claim::Wait(None)
        }
    }
}

fn random_up_to(max: Duration) -> Duration {
    if max.is_zero() {
        return Duration::ZERO;
    }
    Duration::from_nanos(rand::rng().random_range(0..=max.as_nanos() as u64))
}

#[async_trait]
impl Frontier for MemoryFrontier {
    async fn offer(&self, requests: Vec<Request>) -> Result<usize, FrontierError> {
        let now = Instant::now();
        let mut state = self.lock();
        let mut new = 0;
        for request in requests {
            if !state.seen.insert(fingerprint(&request.url)) {
                continue;
            }
            new += 1;
            state.queued += 1;
            let key = HostKey::of(&request.url);
            let policy = self.policy;
            let host = state.hosts.entry(key.clone()).or_insert_with(|| Host {
                queue: VecDeque::new(),
                slots: HostSlots::new(policy),
                place: Place::Idle,
            });
            host.queue.push_back(request);
            if host.place == Place::Idle {
                state.place(&key, now);
            }
        }
        Ok(new)
    }

    async fn claim(&self) -> Result<Claim, FrontierError> {
        Ok(self.lock().claim(Instant::now()))
    }

    async fn complete(&self, lease: Lease, feedback: HostFeedback) -> Result<(), FrontierError> {
        let now = Instant::now();
        let mut state = self.lock();
        let key = state
            .leases
            .remove(&lease.id)
            .ok_or(FrontierError::UnknownLease(lease.id))?;
        if let Some(host) = state.hosts.get_mut(&key) {
            host.slots.finish(now, feedback.back_off);
            if host.place == Place::Full {
                host.place = Place::Idle;
                state.place(&key, now);
            }
        }
        Ok(())
    }

    async fn set_host_delay(&self, host: &HostKey, delay: Duration) -> Result<(), FrontierError> {
        let mut state = self.lock();
        let policy = self.policy;
        let entry = state.hosts.entry(host.clone()).or_insert_with(|| Host {
            queue: VecDeque::new(),
            slots: HostSlots::new(policy),
            place: Place::Idle,
        });
        entry.slots.set_delay_floor(delay);
        Ok(())
    }

    async fn counts(&self) -> Result<FrontierCounts, FrontierError> {
        let state = self.lock();
        Ok(FrontierCounts {
            queued: state.queued,
            leased: state.leases.len() as u64,
            seen: state.seen.len() as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use url::Url;

    fn req(u: &str) -> Request {
        Request {
            url: Url::parse(u).unwrap(),
            depth: 0,
            redirects_left: 10,
            parent: None,
        }
    }

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

    #[tokio::test]
    async fn dedups_and_exhausts() {
        let f = MemoryFrontier::new(unlimited());
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
        let l1 = take(&f).await;
        let l2 = take(&f).await;
        assert_eq!(l1.request.url.path(), "/1");
        assert!(matches!(f.claim().await.unwrap(), Claim::Wait(None)));
        f.complete(l1, HostFeedback::default()).await.unwrap();
        f.complete(l2, HostFeedback::default()).await.unwrap();
        assert!(matches!(f.claim().await.unwrap(), Claim::Exhausted));
    }

    #[tokio::test]
    async fn full_host_does_not_block_others() {
        let f = MemoryFrontier::new(HostPolicy {
            max_in_flight: 1,
            ..HostPolicy::default()
        });
        f.offer(vec![
            req("http://slow/1"),
            req("http://slow/2"),
            req("http://fast/1"),
        ])
        .await
        .unwrap();
        let a = take(&f).await;
        let b = take(&f).await;
        assert_eq!(a.request.url.host_str(), Some("slow"));
        assert_eq!(b.request.url.host_str(), Some("fast"));
        assert!(matches!(f.claim().await.unwrap(), Claim::Wait(None)));
        f.complete(a, HostFeedback::default()).await.unwrap();
        assert_eq!(take(&f).await.request.url.path(), "/2");
    }

    #[tokio::test]
    async fn delayed_host_asks_to_wait() {
        let f = MemoryFrontier::new(HostPolicy {
            max_in_flight: 4,
            delay: Duration::from_secs(5),
            jitter: Duration::ZERO,
        });
        f.offer(vec![req("http://a/1"), req("http://a/2")])
            .await
            .unwrap();
        let _l = take(&f).await;
        match f.claim().await.unwrap() {
            Claim::Wait(Some(d)) => assert!(d > Duration::from_secs(4)),
            other => panic!("expected a timed wait, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn unknown_lease_is_an_error() {
        let f = MemoryFrontier::new(unlimited());
        let bogus = Lease {
            id: 42,
            request: req("http://a/"),
        };
        assert!(f.complete(bogus, HostFeedback::default()).await.is_err());
    }
}
