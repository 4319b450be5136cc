//! What the crawl tallies about its requests that did not finish a URL: how
//! often each host slowed the crawl down and why (see `frontier::politeness`),
//! and how many attempts were handed back for a retry. The report prints both.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::host::politeness::ThrottleReason;
use crate::host::{HostKey, Throttle};

/// Slow-downs per host and reason, and retries.
#[derive(Debug, Default)]
pub(crate) struct Slowdowns {
    throttles: Mutex<BTreeMap<(String, ThrottleReason), u64>>,
    retries: AtomicU64,
}

impl Slowdowns {
    /// Notes a slow-down a frontier reported for `host`.
    pub(crate) fn throttled(&self, host: &HostKey, throttle: Throttle) {
        let key = (host.as_str().to_owned(), throttle.reason);
        let mut map = self.throttles.lock().unwrap_or_else(|e| e.into_inner());
        *map.entry(key).or_default() += 1;
    }

    /// Notes an attempt handed back for another try.
    pub(crate) fn retried(&self) {
        self.retries.fetch_add(1, Ordering::Relaxed);
    }

    /// Per host, reason → count.
    pub(crate) fn by_host(&self) -> BTreeMap<String, BTreeMap<String, u64>> {
        let map = self.throttles.lock().unwrap_or_else(|e| e.into_inner());
        let mut hosts: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for ((host, reason), n) in map.iter() {
            *hosts
                .entry(host.clone())
                .or_default()
                .entry(reason.as_str().to_owned())
                .or_default() += n;
        }
        hosts
    }

    /// The crawl-wide counts: slow-downs by reason, and retries.
    pub(crate) fn counts(&self) -> (BTreeMap<ThrottleReason, u64>, u64) {
        let map = self.throttles.lock().unwrap_or_else(|e| e.into_inner());
        let mut reasons: BTreeMap<ThrottleReason, u64> = BTreeMap::new();
        for ((_, reason), n) in map.iter() {
            *reasons.entry(*reason).or_default() += n;
        }
        (reasons, self.retries.load(Ordering::Relaxed))
    }
}
