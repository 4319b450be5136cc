//! One deadline for all of a URL's attempts (`--url-deadline`, by default
//! twice `--timeout`): the time its attempts have taken is added up, each
//! attempt may only use what is left, and a timed-out attempt is not retried
//! when what is left cannot hold another full attempt. Without it a server
//! that accepts and never answers, or trickles a byte every few seconds,
//! holds a finished crawl for `--max-tries` × `--timeout` per URL.
//!
//! The account also counts a URL's timed-out attempts: a URL that timed out
//! [`TIMEOUT_TRIES`] times is given up whatever is left. A timeout costs the
//! whole wait where a `503` or a reset costs one round trip, so the retries
//! that pay for themselves on quick failures only hold the crawl's end on a
//! server that hangs; one retry still rides out a single lost response.
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

/// Most attempts of one URL that may time out: the second timeout gives the
/// URL up (see the module header).
pub(crate) const TIMEOUT_TRIES: u32 = 2;

/// What a URL's attempts have taken so far, for the URLs being retried.
#[derive(Debug)]
pub(crate) struct UrlDeadlines {
    deadline: Duration,
    spent: Mutex<HashMap<Url, Account>>,
    exceeded: AtomicU64,
}

/// One URL's attempts so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Account {
    /// Time its attempts took.
    pub(crate) spent: Duration,
    /// How many of them timed out.
    pub(crate) timeouts: u32,
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

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Url, Account>> {
        self.spent.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What is left of `url`'s deadline.
    pub(crate) fn left(&self, url: &Url) -> Duration {
        let spent = self.lock().get(url).map(|a| a.spent).unwrap_or_default();
        self.deadline.saturating_sub(spent)
    }

    /// Adds an attempt that took `took` (and `timed_out` or not) to `url`'s
    /// account; returns what is left of the deadline, and the timeouts so far.
    pub(crate) fn spend(&self, url: &Url, took: Duration, timed_out: bool) -> (Duration, u32) {
        let mut accounts = self.lock();
        let account = accounts.entry(url.clone()).or_default();
        account.spent = account.spent.saturating_add(took);
        account.timeouts = account.timeouts.saturating_add(u32::from(timed_out));
        (
            self.deadline.saturating_sub(account.spent),
            account.timeouts,
        )
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
            d.spend(&a, Duration::from_secs(120), true),
            (Duration::from_secs(120), 1)
        );
        assert_eq!(d.left(&b), Duration::from_secs(240), "each URL its own");
        assert_eq!(
            d.spend(&a, Duration::from_secs(30), false),
            (Duration::from_secs(90), 1),
            "only timed-out attempts count as timeouts"
        );
        assert_eq!(
            d.spend(&a, Duration::from_secs(200), true),
            (Duration::ZERO, 2)
        );
        d.forget(&a);
        assert_eq!(d.left(&a), Duration::from_secs(240));
        assert_eq!(
            d.spend(&a, Duration::ZERO, false),
            (Duration::from_secs(240), 0)
        );
    }
}
