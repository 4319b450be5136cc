//! Crawl limits that need live state: the page budget (`max_pages`) and the
//! per-host quota (`max_per_host`). Depth is checked by the gate, time by the
//! scheduler. Both start from what earlier runs of a resumed crawl fetched,
//! so a limit holds for the whole crawl, however often it is resumed. A
//! frontier shared by several workers counts the per-host quota itself
//! (`Frontier::take_host_quota`), for all of them; this one is then unused.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::host::HostKey;

/// Counts fetches against `max_pages`. A claim takes one unit; a claim that ends
/// up not fetching (robots, quota) gives it back, so the limit counts fetches.
#[derive(Debug)]
pub(crate) struct PageBudget {
    max: Option<u64>,
    used: AtomicU64,
}

impl PageBudget {
    /// A budget of `max` fetches, `used` of them by earlier runs.
    pub(crate) fn new(max: Option<u64>, used: u64) -> Self {
        PageBudget {
            max,
            used: AtomicU64::new(used),
        }
    }

    /// Whether another claim may be made now.
    pub(crate) fn available(&self) -> bool {
        self.max
            .is_none_or(|max| self.used.load(Ordering::Relaxed) < max)
    }

    pub(crate) fn take(&self) {
        self.used.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn give_back(&self) {
        self.used.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Counts fetches per host against `max_per_host`: one per URL, taken
/// before its first request (its retries take none).
#[derive(Debug)]
pub(crate) struct HostQuota {
    max: Option<u64>,
    used: Mutex<HashMap<HostKey, u64>>,
}

impl HostQuota {
    /// A quota of `max` fetches per host, `used` of them by earlier runs.
    pub(crate) fn new(max: Option<u64>, used: impl IntoIterator<Item = (HostKey, u64)>) -> Self {
        HostQuota {
            max,
            used: Mutex::new(used.into_iter().collect()),
        }
    }

    /// Takes one fetch of `host`'s quota; false when it is used up.
    pub(crate) fn try_take(&self, host: &HostKey) -> bool {
        let Some(max) = self.max else {
            return true;
        };
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        let n = used.entry(host.clone()).or_default();
        if *n >= max {
            return false;
        }
        *n += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_counts_fetches_not_skips() {
        let b = PageBudget::new(Some(2), 0);
        assert!(b.available());
        b.take();
        b.take();
        assert!(!b.available());
        b.give_back();
        assert!(b.available());
        assert!(PageBudget::new(None, 0).available());
    }

    #[test]
    fn budget_starts_from_earlier_runs() {
        let b = PageBudget::new(Some(3), 2);
        assert!(b.available());
        b.take();
        assert!(!b.available());
        assert!(!PageBudget::new(Some(3), 5).available());
    }

    #[test]
    fn quota_is_per_host() {
        let q = HostQuota::new(Some(1), []);
        let a = HostKey::of(&url::Url::parse("http://a/").unwrap());
        let b = HostKey::of(&url::Url::parse("http://b/").unwrap());
        assert!(q.try_take(&a));
        assert!(!q.try_take(&a));
        assert!(q.try_take(&b));
        assert!(HostQuota::new(None, []).try_take(&a));
    }

    #[test]
    fn quota_starts_from_earlier_runs() {
        let a = HostKey::of(&url::Url::parse("http://a/").unwrap());
        let b = HostKey::of(&url::Url::parse("http://b/").unwrap());
        let q = HostQuota::new(Some(2), [(a.clone(), 1)]);
        assert!(q.try_take(&a));
        assert!(!q.try_take(&a));
        assert!(q.try_take(&b));
        assert!(q.try_take(&b));
    }
}
