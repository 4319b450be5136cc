//! The per-host politeness of requests the frontier does not hand out — `fetch`'s
//! downloads and a render's browser requests — under the crawl's rules
//! ([`HostSlots`](crate::host::politeness), one home for all), behind an
//! async gate. At most `max_in_flight` requests to one host:port (reached by
//! slow start: the initial window for a host new to the gate, doubled per
//! clean answer), starts at
//! least `delay` (+ jitter, + any `Crawl-delay`-free distress gap) apart, a
//! `429` or `Retry-After` pausing the host and a distressed window cutting its
//! concurrency — exactly as a crawl does, with each attempt's feedback from
//! [`retry::judge`](crate::fetch::retry::judge).
//!
//! One gate per host, created on first use. A host is forgotten once it is
//! idle (nothing in flight, no gap or slow-down pending): at release when it
//! already is, else by a sweep that runs after as many new hosts as are known,
//! so a list spanning millions of hosts keeps only the busy ones and the sweep
//! costs O(1) per new host; it comes back in slow start (see
//! [`HostSlots::is_idle`](crate::host::politeness)). The map's and a gate's mutexes are held only for
//! a lookup or one state change, never across an `.await`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::host::politeness::HostSlots;
use crate::host::{HostFeedback, HostKey, HostPolicy, LivePolicy, random_up_to};

/// The per-host gates.
#[derive(Debug)]
pub(crate) struct HostLimits {
    /// The rules every gate reads at each request (a crawl's change live).
    policy: LivePolicy,
    map: Mutex<Hosts>,
}

#[derive(Debug, Default)]
struct Hosts {
    gates: HashMap<HostKey, Arc<HostGate>>,
    /// Hosts added since the last sweep.
    added: usize,
}

/// One host's politeness state and the wake-up of its waiters.
#[derive(Debug)]
struct HostGate {
    slots: Mutex<HostSlots>,
    changed: Notify,
}

/// A held per-host slot; [`HostSlot::finish`] reports what the attempt said
/// about the server (dropping it unfinished says nothing).
#[derive(Debug)]
pub(crate) struct HostSlot {
    limits: Arc<HostLimits>,
    key: HostKey,
    gate: Arc<HostGate>,
    feedback: HostFeedback,
}

/// Locks a mutex whose data stays consistent after any panic (every change is
/// one call).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl HostLimits {
    pub(crate) fn new(policy: HostPolicy) -> Arc<HostLimits> {
        HostLimits::live(LivePolicy::new(policy))
    }

    /// Gates that follow `policy` as it changes (a crawl's render path, whose
    /// rules are the frontier's).
    pub(crate) fn live(policy: LivePolicy) -> Arc<HostLimits> {
        Arc::new(HostLimits {
            policy,
            map: Mutex::default(),
        })
    }

    /// Waits until `key`'s host may take one more request, and takes it.
    pub(crate) async fn acquire(self: &Arc<Self>, key: HostKey) -> HostSlot {
        self.acquire_spaced(key, Duration::ZERO).await
    }

    /// [`HostLimits::acquire`] with starts at least `floor` apart (a robots.txt
    /// `Crawl-delay`) when that is more than the policy's delay. Given on every
    /// call, since an idle host's gate is forgotten.
    pub(crate) async fn acquire_spaced(
        self: &Arc<Self>,
        key: HostKey,
        floor: Duration,
    ) -> HostSlot {
        let gate = self.gate(&key);
        if !floor.is_zero() {
            lock(&gate.slots).set_delay_floor(floor);
        }
        loop {
            // Registered before the check, so a release between the check and
            // the wait is not missed.
            let changed = gate.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let wait = {
                let mut slots = lock(&gate.slots);
                let now = Instant::now();
                match slots.ready_at(now) {
                    Ok(()) => {
                        let jitter = random_up_to(slots.jitter());
                        slots.start(now, jitter);
                        None
                    }
                    Err(at) => Some(at),
                }
            };
            match wait {
                None => break,
                Some(Some(at)) => tokio::select! {
                    () = tokio::time::sleep_until(at) => {}
                    () = &mut changed => {}
                },
                Some(None) => changed.await,
            }
        }
        HostSlot {
            limits: self.clone(),
            key,
            gate,
            feedback: HostFeedback::Silent,
        }
    }

    fn gate(&self, key: &HostKey) -> Arc<HostGate> {
        let mut hosts = lock(&self.map);
        if let Some(gate) = hosts.gates.get(key) {
            return gate.clone();
        }
        hosts.added += 1;
        if hosts.added >= hosts.gates.len() {
            hosts.added = 0;
            let now = Instant::now();
            // Gates in use are held elsewhere too; only unheld idle ones go.
            hosts
                .gates
                .retain(|_, g| Arc::strong_count(g) > 1 || !lock(&g.slots).is_idle(now));
        }
        let gate = Arc::new(HostGate {
            slots: Mutex::new(HostSlots::new(self.policy.clone())),
            changed: Notify::new(),
        });
        hosts.gates.insert(key.clone(), gate.clone());
        gate
    }

    /// Hosts with a gate (in use, waited for, or not yet idle), for tests.
    #[cfg(test)]
    fn tracked(&self) -> usize {
        lock(&self.map).gates.len()
    }
}

impl HostSlot {
    /// Releases the slot with what the attempt said about the server.
    pub(crate) fn finish(mut self, feedback: HostFeedback) {
        self.feedback = feedback;
    }
}

impl Drop for HostSlot {
    fn drop(&mut self) {
        let idle = {
            let mut slots = lock(&self.gate.slots);
            let now = Instant::now();
            // The throttle is the report's business in a crawl; `fetch`
            // counts statuses, not slow-downs.
            let _throttle = slots.finish(now, self.feedback);
            slots.is_idle(now)
        };
        self.gate.changed.notify_waiters();
        if idle {
            let mut hosts = lock(&self.limits.map);
            // Ours and the map's: nobody else holds or waits for this host.
            if hosts
                .gates
                .get(&self.key)
                .is_some_and(|g| Arc::ptr_eq(g, &self.gate) && Arc::strong_count(g) == 2)
            {
                hosts.gates.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use url::Url;

    use super::*;
    use crate::host::ThrottleReason;

    fn key(s: &str) -> HostKey {
        HostKey::of(&Url::parse(s).unwrap())
    }

    fn policy(max_in_flight: usize, delay_ms: u64) -> HostPolicy {
        HostPolicy {
            max_in_flight,
            delay: Duration::from_millis(delay_ms),
            jitter: Duration::ZERO,
        }
    }

    #[tokio::test]
    async fn caps_per_host_and_forgets_idle_hosts() {
        use crate::host::politeness::INITIAL_WINDOW;
        let cap = INITIAL_WINDOW + 1;
        let limits = HostLimits::new(policy(cap, 0));
        let mut a = Vec::new();
        for _ in 0..INITIAL_WINDOW {
            a.push(limits.acquire(key("http://a/")).await);
        }
        // Slow start: the initial window to a new host until it answers.
        let next = limits.acquire(key("http://a:80/x"));
        tokio::pin!(next);
        assert!(futures_util::poll!(next.as_mut()).is_pending());
        let b = limits.acquire(key("http://b/")).await;
        a.pop().unwrap().finish(HostFeedback::Clean);
        a.push(next.await);
        a.push(limits.acquire(key("http://a/")).await);
        let over = limits.acquire(key("http://a/"));
        tokio::pin!(over);
        assert!(
            futures_util::poll!(over.as_mut()).is_pending(),
            "capped at {cap}"
        );
        a.pop().unwrap().finish(HostFeedback::Clean);
        a.push(over.await);
        assert_eq!(limits.tracked(), 2);
        drop((a, b));
        assert_eq!(limits.tracked(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn starts_are_spaced_by_the_delay() {
        let limits = HostLimits::new(policy(4, 500));
        let t0 = Instant::now();
        let mut starts = Vec::new();
        for _ in 0..3 {
            let slot = limits.acquire(key("http://a/")).await;
            starts.push(t0.elapsed());
            slot.finish(HostFeedback::Clean);
        }
        assert_eq!(
            starts,
            [0, 500, 1000].map(Duration::from_millis).to_vec(),
            "the gap is kept though the host's gate had no request in flight"
        );
        // Another host is not held up.
        let before = Instant::now();
        drop(limits.acquire(key("http://b/")).await);
        assert_eq!(before.elapsed(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn a_crawl_delay_floor_spaces_starts_beyond_the_delay() {
        let limits = HostLimits::new(policy(4, 100));
        let t0 = Instant::now();
        let mut starts = Vec::new();
        for floor in [300, 300, 0] {
            let slot = limits
                .acquire_spaced(key("http://a/"), Duration::from_millis(floor))
                .await;
            starts.push(t0.elapsed());
            slot.finish(HostFeedback::Clean);
        }
        // The floor stays with the host's gate while it is known.
        assert_eq!(starts, [0, 300, 600].map(Duration::from_millis).to_vec());
    }

    #[tokio::test(start_paused = true)]
    async fn a_429_pauses_the_host_for_every_waiter() {
        let limits = HostLimits::new(policy(4, 0));
        let t0 = Instant::now();
        let slot = limits.acquire(key("http://a/")).await;
        slot.finish(HostFeedback::SlowDown(
            Duration::from_secs(3),
            ThrottleReason::TooManyRequests,
        ));
        drop(limits.acquire(key("http://a/")).await);
        assert!(t0.elapsed() >= Duration::from_secs(3), "{:?}", t0.elapsed());
    }

    #[tokio::test(start_paused = true)]
    async fn a_host_with_a_pending_gap_is_kept_until_a_sweep_finds_it_idle() {
        let limits = HostLimits::new(policy(1, 1000));
        drop(limits.acquire(key("http://a/")).await);
        assert_eq!(limits.tracked(), 1, "its next start is still ahead");
        tokio::time::advance(Duration::from_secs(2)).await;
        // New hosts trigger a sweep once as many were added as are known.
        drop(limits.acquire(key("http://b/")).await);
        drop(limits.acquire(key("http://c/")).await);
        assert!(limits.tracked() <= 2, "a was swept: {}", limits.tracked());
    }
}
