//! One deadline for all of a URL's attempts (`--url-deadline`, by default
//! twice `--timeout`): the time its attempts have taken is added up, each
//! attempt may only use what is left, and a timed-out attempt is not retried
//! when what is left cannot hold another full attempt. Without it a server
//! that accepts and never answers, or trickles a byte every few seconds,
//! holds a finished crawl for `--max-tries` × `--timeout` per URL.
//!
//! Only time spent in attempts counts: the waits between them (back-off, the
//! host's gap, a robots.txt outage) cost the URL nothing. The account lives
//! in this process, like the retry queue: a URL retried by another process
//! of a shared crawl, or after a restart, starts a fresh one.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use url::Url;

/// What a URL's attempts have taken so far, for the URLs being retried.
#[derive(Debug)]
pub(crate) struct UrlDeadlines {
    deadline: Duration,
    spent: Mutex<HashMap<Url, Duration>>,
    exceeded: AtomicU64,
}

impl UrlDeadlines {
    /// Deadlines of `deadline` per URL.
    pub(crate) fn new(deadline: Duration) -> UrlDeadlines {
        UrlDeadlines {
            deadline,
            spent: Mutex::new(HashMap::new()),
            exceeded: AtomicU64::new(0),
        }
    }

    /// The deadline every URL gets.
    pub(crate) fn deadline(&self) -> Duration {
        self.deadline
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Url, Duration>> {
        self.spent.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What is left of `url`'s deadline.
    pub(crate) fn left(&self, url: &Url) -> Duration {
        let spent = self.lock().get(url).copied().unwrap_or_default();
        self.deadline.saturating_sub(spent)
    }

    /// Adds an attempt that took `took` to `url`'s account; returns what is left.
    pub(crate) fn spend(&self, url: &Url, took: Duration) -> Duration {
        let mut spent = self.lock();
        let total = spent.entry(url.clone()).or_default();
        *total = total.saturating_add(took);
        self.deadline.saturating_sub(*total)
    }

    /// `url` is finished: its account is closed.
    pub(crate) fn forget(&self, url: &Url) {
        self.lock().remove(url);
    }

    /// A URL was given up because its deadline ran out.
    pub(crate) fn exceeded(&self) {
        self.exceeded.fetch_add(1, Ordering::Relaxed);
    }

    /// How many URLs were given up so, for the report.
    pub(crate) fn exceeded_count(&self) -> u64 {
        self.exceeded.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_share_one_account_until_the_url_is_done() {
        let d = UrlDeadlines::new(Duration::from_secs(240));
        let a = Url::parse("http://h/a").unwrap();
        let b = Url::parse("http://h/b").unwrap();
        assert_eq!(
            d.spend(&a, Duration::from_secs(120)),
            Duration::from_secs(120)
        );
        assert_eq!(d.left(&b), Duration::from_secs(240), "each URL its own");
        assert_eq!(d.spend(&a, Duration::from_secs(200)), Duration::ZERO);
        d.forget(&a);
        assert_eq!(d.left(&a), Duration::from_secs(240));
    }
}
