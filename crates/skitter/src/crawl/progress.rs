//! Live counters of a running crawl, for progress lines and dashboards.
//!
//! Workers bump a handful of named atomics; a reader takes a [`ProgressSnapshot`]
//! whenever it likes, without locks and without touching the frontier.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A cheap-to-clone handle on a crawl's live counters.
#[derive(Clone, Debug)]
pub struct Progress {
    inner: Arc<Counters>,
}

#[derive(Debug)]
struct Counters {
    started: Instant,
    discovered: AtomicU64,
    done: AtomicU64,
    in_flight: AtomicU64,
    in_flight_peak: AtomicU64,
    bytes: AtomicU64,
    errors: AtomicU64,
}

/// The counters at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProgressSnapshot {
    /// URLs finished (fetched, failed or skipped).
    pub done: u64,
    /// URLs queued and not yet started.
    pub queued: u64,
    /// URLs being fetched.
    pub in_flight: u64,
    /// The most URLs in flight at once so far (what a benchmark of many
    /// requests in flight reports, exactly where a gauge read now and then
    /// may miss the top).
    pub in_flight_peak: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Failed fetches and error statuses.
    pub errors: u64,
    /// Time since the crawl started.
    pub elapsed: Duration,
}

impl ProgressSnapshot {
    /// Finished URLs per second so far.
    pub fn rate(&self) -> f64 {
        self.done as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            inner: Arc::new(Counters {
                started: Instant::now(),
                discovered: AtomicU64::new(0),
                done: AtomicU64::new(0),
                in_flight: AtomicU64::new(0),
                in_flight_peak: AtomicU64::new(0),
                bytes: AtomicU64::new(0),
                errors: AtomicU64::new(0),
            }),
        }
    }
}

impl Progress {
    /// Reads the counters.
    pub fn snapshot(&self) -> ProgressSnapshot {
        let c = &self.inner;
        let done = c.done.load(Ordering::Relaxed);
        let in_flight = c.in_flight.load(Ordering::Relaxed);
        let discovered = c.discovered.load(Ordering::Relaxed);
        ProgressSnapshot {
            done,
            queued: discovered.saturating_sub(done + in_flight),
            in_flight,
            in_flight_peak: c.in_flight_peak.load(Ordering::Relaxed),
            bytes: c.bytes.load(Ordering::Relaxed),
            errors: c.errors.load(Ordering::Relaxed),
            elapsed: c.started.elapsed(),
        }
    }

    pub(crate) fn discovered(&self, n: usize) {
        self.inner.discovered.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// URLs being fetched now.
    pub(crate) fn in_flight(&self) -> u64 {
        self.inner.in_flight.load(Ordering::Relaxed)
    }

    pub(crate) fn started(&self) {
        let now = self.inner.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        self.inner.in_flight_peak.fetch_max(now, Ordering::Relaxed);
    }

    /// A request ended without finishing its URL (handed back for a retry).
    pub(crate) fn deferred(&self) {
        self.inner.in_flight.fetch_sub(1, Ordering::Relaxed);
    }

    pub(crate) fn finished(&self, bytes: u64, error: bool) {
        let c = &self.inner;
        c.in_flight.fetch_sub(1, Ordering::Relaxed);
        c.done.fetch_add(1, Ordering::Relaxed);
        c.bytes.fetch_add(bytes, Ordering::Relaxed);
        if error {
            c.errors.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_derives_queued() {
        let p = Progress::default();
        p.discovered(10);
        p.started();
        p.started();
        p.finished(100, false);
        p.finished(5, true);
        p.started();
        let s = p.snapshot();
        assert_eq!(
            (s.done, s.in_flight, s.queued, s.bytes, s.errors),
            (2, 1, 7, 105, 1)
        );
    }
}
