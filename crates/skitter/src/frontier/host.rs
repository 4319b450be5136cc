//! Per-host politeness state: how many requests one host has in flight, when the
//! next may start, and how hard it has asked us to back off.
//!
//! A "host" is an authority — host name plus effective port — so two test servers
//! on one address but different ports are two hosts, as they are two servers.

use std::fmt;
use std::time::{Duration, Instant};

use url::Url;

/// The politeness key of a URL: lowercased host and effective port.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostKey(String);

impl HostKey {
    /// The key for a URL (`host:port`, port always present).
    pub fn of(url: &Url) -> HostKey {
        let host = url.host_str().unwrap_or("");
        let port = url.port_or_known_default().unwrap_or(0);
        HostKey(format!("{host}:{port}"))
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for HostKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The politeness rules every host starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostPolicy {
    /// At most this many requests in flight to one host.
    pub max_in_flight: usize,
    /// Minimum gap between the starts of two requests to one host.
    pub delay: Duration,
    /// Up to this much random extra gap is added to `delay` (0 = none).
    pub jitter: Duration,
}

impl Default for HostPolicy {
    fn default() -> Self {
        HostPolicy {
            max_in_flight: 8,
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
        }
    }
}

/// One host's live politeness state, shared by the in-memory frontier.
#[derive(Debug)]
pub(crate) struct HostSlots {
    policy: HostPolicy,
    /// Concurrency allowed right now: lowered on back-off, regained on success.
    limit: usize,
    in_flight: usize,
    /// `Crawl-delay` from robots.txt, when larger than the policy's delay.
    delay_floor: Duration,
    last_start: Option<Instant>,
    next_start: Option<Instant>,
}

impl HostSlots {
    pub(crate) fn new(policy: HostPolicy) -> Self {
        HostSlots {
            policy,
            limit: policy.max_in_flight.max(1),
            in_flight: 0,
            delay_floor: Duration::ZERO,
            last_start: None,
            next_start: None,
        }
    }

    /// When a request may start, if a slot is free: `Ok(())` now, `Err(Some(t))`
    /// at `t`, `Err(None)` only once a request completes.
    pub(crate) fn ready_at(&self, now: Instant) -> Result<(), Option<Instant>> {
        if self.in_flight >= self.limit {
            return Err(None);
        }
        match self.next_start {
            Some(t) if t > now => Err(Some(t)),
            _ => Ok(()),
        }
    }

    /// Takes a slot for a request starting at `now`.
    pub(crate) fn start(&mut self, now: Instant, jitter: Duration) {
        self.in_flight += 1;
        self.last_start = Some(now);
        let gap = self.policy.delay.max(self.delay_floor) + jitter;
        if !gap.is_zero() {
            self.next_start = Some(now + gap);
        }
    }

    /// Releases a slot; a back-off pushes the next start out and halves the
    /// concurrency, a clean completion regains one step of it.
    pub(crate) fn finish(&mut self, now: Instant, back_off: Option<Duration>) {
        self.in_flight = self.in_flight.saturating_sub(1);
        match back_off {
            Some(wait) => {
                self.limit = (self.limit / 2).max(1);
                let until = now + wait;
                self.next_start = Some(self.next_start.map_or(until, |t| t.max(until)));
            }
            None if self.limit < self.policy.max_in_flight => self.limit += 1,
            None => {}
        }
    }

    /// Sets the `Crawl-delay` floor; it also spaces the next start from the last
    /// one, since the delay usually arrives while the host's first request runs.
    pub(crate) fn set_delay_floor(&mut self, delay: Duration) {
        self.delay_floor = delay;
        if let Some(last) = self.last_start {
            let at = last + delay;
            self.next_start = Some(self.next_start.map_or(at, |t| t.max(at)));
        }
    }

    /// The configured random extra gap.
    pub(crate) fn jitter(&self) -> Duration {
        self.policy.jitter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(max: usize, delay_ms: u64) -> HostPolicy {
        HostPolicy {
            max_in_flight: max,
            delay: Duration::from_millis(delay_ms),
            jitter: Duration::ZERO,
        }
    }

    #[test]
    fn key_includes_effective_port() {
        let a = HostKey::of(&Url::parse("http://Example.com/x").unwrap());
        let b = HostKey::of(&Url::parse("https://example.com/x").unwrap());
        let c = HostKey::of(&Url::parse("http://example.com:8080/").unwrap());
        assert_eq!(a.as_str(), "example.com:80");
        assert_eq!(b.as_str(), "example.com:443");
        assert_eq!(c.as_str(), "example.com:8080");
    }

    #[test]
    fn slots_cap_concurrency() {
        let now = Instant::now();
        let mut h = HostSlots::new(policy(2, 0));
        assert_eq!(h.ready_at(now), Ok(()));
        h.start(now, Duration::ZERO);
        h.start(now, Duration::ZERO);
        assert_eq!(h.ready_at(now), Err(None));
        h.finish(now, None);
        assert_eq!(h.ready_at(now), Ok(()));
    }

    #[test]
    fn delay_spaces_starts() {
        let now = Instant::now();
        let mut h = HostSlots::new(policy(4, 100));
        h.start(now, Duration::ZERO);
        assert_eq!(h.ready_at(now), Err(Some(now + Duration::from_millis(100))));
        assert_eq!(h.ready_at(now + Duration::from_millis(100)), Ok(()));
    }

    #[test]
    fn back_off_halves_then_recovers() {
        let now = Instant::now();
        let mut h = HostSlots::new(policy(4, 0));
        h.start(now, Duration::ZERO);
        h.finish(now, Some(Duration::from_secs(1)));
        assert_eq!(h.limit, 2);
        assert_eq!(h.ready_at(now), Err(Some(now + Duration::from_secs(1))));
        h.finish(now, None);
        h.finish(now, None);
        assert_eq!(h.limit, 4);
    }

    #[test]
    fn crawl_delay_floor_applies() {
        let now = Instant::now();
        let mut h = HostSlots::new(policy(4, 0));
        h.set_delay_floor(Duration::from_secs(2));
        h.start(now, Duration::ZERO);
        assert_eq!(h.ready_at(now), Err(Some(now + Duration::from_secs(2))));
    }
}
