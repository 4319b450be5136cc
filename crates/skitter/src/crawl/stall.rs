//! A crawl held still by robots.txt outages: noticed, said, and given up on.
//!
//! An origin whose robots.txt is unavailable makes its URLs wait (RFC 9309:
//! 5xx means "disallowed for now"), up to `RobotsPolicy::max_outage`. While
//! other hosts have work that is right; when *only* such origins are left,
//! the crawl would sit silent for the whole outage limit. So the crawl is
//! *blocked* when nothing is in flight and the next thing due is an
//! unavailable robots.txt's next try; the first time a set of origins blocks
//! it, a warning says which, since when, the next try and the give-up time
//! (on the [`STALL_TARGET`] log target, which the CLI shows even with `-q`).
//! Blocked for `RobotsPolicy::max_blocked` without a request starting in
//! between, the blocked origins are given up: their URLs are skipped as
//! `robots_unavailable`, as after the full outage limit. Any request that
//! starts ends the spell.
//!
//! Times are tokio's, so tests run it on a paused clock.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// The log target of the blocked-crawl warnings (see the module header).
pub const STALL_TARGET: &str = "skitter::stall";

/// One origin whose URLs wait on its robots.txt.
#[derive(Clone, Debug)]
pub(crate) struct Waiting {
    /// When its robots.txt outage began.
    pub(crate) since: Instant,
    /// When the file is fetched again.
    pub(crate) next_try: Instant,
    /// When the full outage limit gives its URLs up.
    pub(crate) outage_end: Instant,
    /// The status or error of the last fetch.
    pub(crate) detail: String,
}

#[derive(Debug, Default)]
struct State {
    waiting: BTreeMap<String, Waiting>,
    /// Since when the crawl is blocked, if it is.
    blocked_since: Option<Instant>,
    /// The origins the last warning named (a spell naming no new one is not
    /// announced again).
    announced: BTreeSet<String>,
    given_up: BTreeSet<String>,
}

/// The robots.txt stall watch of one crawl.
#[derive(Debug)]
pub(crate) struct RobotsStall {
    max_blocked: Duration,
    state: Mutex<State>,
}

impl RobotsStall {
    /// A watch that gives blocked origins up after `max_blocked`.
    pub(crate) fn new(max_blocked: Duration) -> RobotsStall {
        RobotsStall {
            max_blocked,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A URL of `origin` waits for its robots.txt.
    pub(crate) fn waits(&self, origin: &str, waiting: Waiting) {
        self.lock().waiting.insert(origin.to_owned(), waiting);
    }

    /// Origins whose URLs wait for their robots.txt now.
    pub(crate) fn waiting(&self) -> usize {
        self.lock().waiting.len()
    }

    /// A request to `origin` starts: the crawl is moving, and the origin's
    /// robots.txt is in force again.
    pub(crate) fn started(&self, origin: &str) {
        let mut state = self.lock();
        state.blocked_since = None;
        state.waiting.remove(origin);
    }

    /// The scheduler found nothing to start, with nothing in flight, and will
    /// look again after `wait` (`None`: only when something changes). If the
    /// next thing due is a robots.txt retry, the crawl is blocked: the first
    /// time for these origins, the warning is logged. Returns when the blocked
    /// origins are given up, so the scheduler wakes then.
    pub(crate) fn idle(&self, now: Instant, wait: Option<Duration>) -> Option<Instant> {
        let mut state = self.lock();
        let first_try = state.waiting.values().map(|w| w.next_try).min()?;
        let next_work = wait.map(|w| now + w);
        // A host other than the waiting ones has work due before their retry.
        if next_work.is_some_and(|at| at < first_try) {
            return None;
        }
        let since = *state.blocked_since.get_or_insert(now);
        let give_up = since + self.max_blocked;
        let named: BTreeSet<String> = state.waiting.keys().cloned().collect();
        if !named.is_subset(&state.announced) {
            warn_blocked(&state.waiting, now, give_up);
            state.announced.extend(named);
        }
        Some(give_up)
    }

    /// Whether `origin`'s URLs are given up: the crawl has been blocked for
    /// `max_blocked`, with `origin` among those it waited on (then or at an
    /// earlier give-up).
    pub(crate) fn given_up(&self, origin: &str, now: Instant) -> bool {
        let mut state = self.lock();
        if state
            .blocked_since
            .is_some_and(|since| now.saturating_duration_since(since) >= self.max_blocked)
        {
            let waiting: Vec<String> = state.waiting.keys().cloned().collect();
            if !waiting.is_empty() {
                tracing::warn!(
                    target: STALL_TARGET,
                    origins = %waiting.join(" "),
                    "robots.txt still unavailable after the crawl was blocked for {}: \
                     giving their URLs up (skipped as robots_unavailable)",
                    secs(self.max_blocked)
                );
            }
            for origin in waiting {
                state.waiting.remove(&origin);
                state.given_up.insert(origin);
            }
        }
        state.given_up.contains(origin)
    }

    /// While the crawl is blocked: how long until the blocked origins are
    /// given up, so a deferral does not sleep past it.
    pub(crate) fn until_give_up(&self, now: Instant) -> Option<Duration> {
        let since = self.lock().blocked_since?;
        Some((since + self.max_blocked).saturating_duration_since(now))
    }
}

/// A duration as whole seconds, rounded up, for messages (`4s`).
fn secs(d: Duration) -> String {
    format!("{}s", d.as_secs() + u64::from(d.subsec_nanos() > 0))
}

fn warn_blocked(waiting: &BTreeMap<String, Waiting>, now: Instant, give_up: Instant) {
    for (origin, w) in waiting {
        let ends = w.outage_end.min(give_up).saturating_duration_since(now);
        tracing::warn!(
            target: STALL_TARGET,
            "the crawl is blocked: every URL left waits for the robots.txt of {origin}, \
             unavailable ({detail}) for {since}; next try in {next}; its URLs are skipped \
             as robots_unavailable in {ends} unless a request starts first",
            detail = w.detail,
            since = secs(now.saturating_duration_since(w.since)),
            next = secs(w.next_try.saturating_duration_since(now)),
            ends = secs(ends),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(now: Instant) -> Waiting {
        Waiting {
            since: now,
            next_try: now + Duration::from_secs(4),
            outage_end: now + Duration::from_secs(600),
            detail: "status 503".into(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn blocked_only_when_the_next_thing_due_is_a_robots_retry() {
        let stall = RobotsStall::new(Duration::from_secs(60));
        let now = Instant::now();
        assert_eq!(stall.idle(now, None), None, "nothing waits on robots.txt");
        stall.waits("http://a", waiting(now));
        assert_eq!(
            stall.idle(now, Some(Duration::from_secs(1))),
            None,
            "another host is due first"
        );
        let give_up = stall.idle(now, Some(Duration::from_secs(4)));
        assert_eq!(give_up, Some(now + Duration::from_secs(60)));
        assert!(!stall.given_up("http://a", now + Duration::from_secs(59)));
        assert!(stall.given_up("http://a", now + Duration::from_secs(60)));
        assert!(!stall.given_up("http://b", now + Duration::from_secs(60)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_starting_ends_the_spell() {
        let stall = RobotsStall::new(Duration::from_secs(60));
        let now = Instant::now();
        stall.waits("http://a", waiting(now));
        assert!(stall.idle(now, None).is_some());
        stall.started("http://b");
        assert_eq!(stall.until_give_up(now), None);
        assert!(!stall.given_up("http://a", now + Duration::from_secs(60)));
    }
}
