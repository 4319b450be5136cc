//! What the crawl tallies about its requests that did not finish a URL: how
//! often each host slowed the crawl down and why (see `frontier::politeness`),
//! and how many attempts were handed back for a retry. The report prints both.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::host::{HostKey, Throttle};

/// Slow-downs per host and reason, and retries.
#[derive(Debug, Default)]
pub(crate) struct Slowdowns {
    throttles: Mutex<BTreeMap<(String, &'static str), u64>>,
    retries: AtomicU64,
}

impl Slowdowns {
    /// Notes a slow-down a frontier reported for `host`.
    pub(crate) fn throttled(&self, host: &HostKey, throttle: Throttle) {
        let key = (host.as_str().to_owned(), throttle.reason.as_str());
        let mut map = self.throttles.lock().unwrap_or_else(|e| e.into_inner());
        *map.entry(key).or_default() += 1;
    }

    /// Notes an attempt handed back for another try.
    pub(crate) fn retried(&self) {
        self.retries.fetch_add(1, Ordering::Relaxed);
    }

    /// Per host, reason → count; and the crawl-wide counters
    /// (`throttle_<reason>`, `retries`).
    pub(crate) fn snapshot(
        &self,
    ) -> (
        BTreeMap<String, BTreeMap<String, u64>>,
        BTreeMap<String, u64>,
    ) {
        let map = self.throttles.lock().unwrap_or_else(|e| e.into_inner());
        let mut hosts: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        let mut counters = BTreeMap::new();
        for ((host, reason), n) in map.iter() {
            *hosts
                .entry(host.clone())
                .or_default()
                .entry((*reason).to_owned())
                .or_default() += n;
            *counters.entry(format!("throttle_{reason}")).or_default() += n;
        }
        let retries = self.retries.load(Ordering::Relaxed);
        if retries > 0 {
            counters.insert("retries".to_owned(), retries);
        }
        (hosts, counters)
    }
}
