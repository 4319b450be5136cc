//! [`ProxyLedger`]: what each proxy of the pool did since someone last asked,
//! for a caller that adds it up somewhere else than this process's report
//! (a shared Redis crawl's workers add theirs to the crawl-wide totals).
//!
//! The pool keeps its own totals for the report; the ledger only holds the
//! counts not yet taken, keyed by the proxy's shown name (never its
//! credentials), as [`ProxyTally`]s, which add up exactly: counts are sums
//! and latencies a histogram whose buckets are sums too, so totals merged
//! from many workers give the same mean and median as one process would.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use super::proxy_stats::{Latency, ProxyStats};

/// One proxy's counts, mergeable with another worker's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProxyTally {
    /// Requests that got a response through it.
    pub successes: u64,
    /// Requests it failed.
    pub failures: u64,
    /// Times it was benched.
    pub benchings: u64,
    /// Latencies of its successes.
    pub latency: Latency,
}

impl ProxyTally {
    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: &ProxyTally) {
        self.successes = self.successes.saturating_add(other.successes);
        self.failures = self.failures.saturating_add(other.failures);
        self.benchings = self.benchings.saturating_add(other.benchings);
        self.latency.merge(&other.latency);
    }

    /// The report's line for proxy `shown`.
    pub fn stats(&self, shown: &str) -> ProxyStats {
        ProxyStats {
            proxy: shown.to_string(),
            successes: self.successes,
            failures: self.failures,
            benchings: self.benchings,
            mean_ms: self.latency.mean_ms(),
            p50_ms: self.latency.quantile_ms(0.5),
        }
    }
}

/// Counts the pool adds as it goes and a reporter takes in batches; see the
/// module header. Shared between them in an `Arc`.
#[derive(Debug, Default)]
pub struct ProxyLedger {
    /// Never held across an await.
    pending: Mutex<BTreeMap<String, ProxyTally>>,
}

impl ProxyLedger {
    /// An empty ledger.
    pub fn new() -> ProxyLedger {
        ProxyLedger::default()
    }

    fn with(&self, shown: &str, f: impl FnOnce(&mut ProxyTally)) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        match pending.get_mut(shown) {
            Some(tally) => f(tally),
            None => f(pending.entry(shown.to_string()).or_default()),
        }
    }

    pub(crate) fn succeeded(&self, shown: &str, latency: Duration) {
        self.with(shown, |t| {
            t.successes += 1;
            t.latency.add(latency);
        });
    }

    pub(crate) fn failed(&self, shown: &str) {
        self.with(shown, |t| t.failures += 1);
    }

    pub(crate) fn benched(&self, shown: &str) {
        self.with(shown, |t| t.benchings += 1);
    }

    /// The counts added since the last `take`, by shown proxy name; the
    /// ledger is empty after.
    pub fn take(&self) -> BTreeMap<String, ProxyTally> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()))
    }
}
