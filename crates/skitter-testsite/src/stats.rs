//! Request counters that tests assert on, and their snapshot [`Stats`].
//!
//! The hot path touches two atomics and one of [`SHARDS`] short-held mutexes,
//! so counting never becomes the server's bottleneck under a benchmark.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Per-path count maps; enough that two cores rarely meet on one lock.
const SHARDS: usize = 16;

/// Arrival times kept at most when `record_starts` is on (bounds memory on
/// long benchmarks; tests that use starts make far fewer requests).
pub const MAX_RECORDED_STARTS: usize = 100_000;

/// Live counters shared by all connections of one site.
pub(crate) struct Counters {
    total: AtomicU64,
    in_flight: AtomicU64,
    in_flight_peak: AtomicU64,
    not_modified: AtomicU64,
    http2: AtomicU64,
    hasher: RandomState,
    shards: Box<[Mutex<HashMap<String, u64>>]>,
    starts: Option<Mutex<Vec<(String, Duration)>>>,
    started: Instant,
}

/// Counts one request as in flight until dropped.
///
/// The guard travels inside the response body, so the request stays counted
/// until hyper has taken the last byte (or dropped the body).
pub(crate) struct InFlight(Arc<Counters>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Locks a mutex whose data stays consistent even if a holder panicked
/// (every critical section is a single insert or increment).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Counters {
    pub(crate) fn new(record_starts: bool) -> Self {
        Counters {
            total: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            in_flight_peak: AtomicU64::new(0),
            not_modified: AtomicU64::new(0),
            http2: AtomicU64::new(0),
            hasher: RandomState::new(),
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            starts: record_starts.then(Mutex::default),
            started: Instant::now(),
        }
    }

    /// Counts a request for `path` (path and query) as arrived and in flight;
    /// returns how many requests `path` has had, this one included.
    pub(crate) fn arrive(self: &Arc<Self>, path: &str) -> (u64, InFlight) {
        self.total.fetch_add(1, Ordering::Relaxed);
        let now = self.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        self.in_flight_peak.fetch_max(now, Ordering::Relaxed);
        let guard = InFlight(Arc::clone(self));
        if let Some(starts) = &self.starts {
            let mut starts = lock(starts);
            if starts.len() < MAX_RECORDED_STARTS {
                starts.push((path.to_string(), self.started.elapsed()));
            }
        }
        let shard = &self.shards[self.hasher.hash_one(path) as usize % SHARDS];
        let mut counts = lock(shard);
        let count = match counts.get_mut(path) {
            Some(n) => {
                *n += 1;
                *n
            }
            None => {
                counts.insert(path.to_string(), 1);
                1
            }
        };
        (count, guard)
    }

    /// Counts a request made over HTTP/2.
    pub(crate) fn http2(&self) {
        self.http2.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a `304 Not Modified` answer (see `versions`).
    pub(crate) fn not_modified(&self) {
        self.not_modified.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self, config: &crate::SiteConfig) -> Stats {
        let mut paths = BTreeMap::new();
        for shard in self.shards.iter() {
            paths.extend(lock(shard).iter().map(|(p, n)| (p.clone(), *n)));
        }
        let starts = self
            .starts
            .as_ref()
            .map(|s| lock(s).clone())
            .unwrap_or_default();
        Stats {
            total_requests: self.total.load(Ordering::Relaxed),
            in_flight_peak: self.in_flight_peak.load(Ordering::Relaxed),
            not_modified: self.not_modified.load(Ordering::Relaxed),
            http2_requests: self.http2.load(Ordering::Relaxed),
            paths,
            starts,
            page_paths: config.page_paths(),
        }
    }
}

/// A snapshot of a site's counters, taken by [`crate::RunningSite::stats`].
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Requests received, every path counted.
    pub total_requests: u64,
    /// Most requests handled at the same time, each counted from arrival
    /// (latency included) until its response body was fully handed over.
    pub in_flight_peak: u64,
    /// `304 Not Modified` answers given (pages that change between passes,
    /// see [`crate::Versions`]).
    pub not_modified: u64,
    /// Requests received over HTTP/2 (h2c), every path counted.
    pub http2_requests: u64,
    paths: BTreeMap<String, u64>,
    starts: Vec<(String, Duration)>,
    /// The generated pages' paths (host-prefixed with virtual hosts).
    page_paths: Vec<String>,
}

impl Stats {
    /// Requests for exactly this path and query (e.g. `/p/3`, `/session?sid=1`).
    pub fn requests(&self, path: &str) -> u64 {
        self.paths.get(path).copied().unwrap_or(0)
    }

    /// Request count of every path and query requested, sorted by path.
    pub fn paths(&self) -> &BTreeMap<String, u64> {
        &self.paths
    }

    /// Arrival times (since the server started) of requests whose path starts
    /// with `prefix`, in arrival order. Empty unless `record_starts` was on;
    /// at most [`MAX_RECORDED_STARTS`] requests are recorded.
    pub fn starts(&self, prefix: &str) -> Vec<Duration> {
        let mut times: Vec<Duration> = self
            .starts
            .iter()
            .filter(|(path, _)| path.starts_with(prefix))
            .map(|(_, at)| *at)
            .collect();
        // Pushes race between the clock read and the lock; sort to restore order.
        times.sort_unstable();
        times
    }

    /// Arrival times of requests for exactly `path`, in arrival order (see
    /// [`Stats::starts`]).
    pub fn starts_of(&self, path: &str) -> Vec<Duration> {
        let mut times: Vec<Duration> = self
            .starts
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, at)| *at)
            .collect();
        times.sort_unstable();
        times
    }

    /// The paths a complete crawl from `/` must fetch (see [`crate::SiteConfig::page_paths`]).
    pub fn page_paths(&self) -> Vec<String> {
        self.page_paths.clone()
    }

    /// The generated pages never requested: empty after a complete crawl.
    pub fn missing_pages(&self) -> Vec<String> {
        let mut missing = self.page_paths();
        missing.retain(|p| self.requests(p) == 0);
        missing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_paths_and_in_flight_peak() {
        let counters = Arc::new(Counters::new(true));
        let (first, a) = counters.arrive("/p/1");
        let (second, b) = counters.arrive("/p/1");
        drop((a, b));
        let (_, c) = counters.arrive("/x?y=1");
        let stats = counters.snapshot(&two_pages());
        assert_eq!((first, second), (1, 2));
        assert_eq!(stats.total_requests, 3);
        assert_eq!(stats.in_flight_peak, 2);
        assert_eq!(stats.requests("/p/1"), 2);
        assert_eq!(stats.requests("/x?y=1"), 1);
        assert_eq!(stats.requests("/p/0"), 0);
        assert_eq!(stats.starts("/p/").len(), 2);
        assert_eq!(stats.missing_pages(), vec!["/", "/p/0"]);
        drop(c);
    }

    fn two_pages() -> crate::SiteConfig {
        crate::SiteConfig {
            pages: 2,
            ..crate::SiteConfig::default()
        }
    }

    #[test]
    fn starts_empty_unless_recorded() {
        let counters = Arc::new(Counters::new(false));
        drop(counters.arrive("/p/1"));
        assert!(counters.snapshot(&two_pages()).starts("/").is_empty());
    }
}
