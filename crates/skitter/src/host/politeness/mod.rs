//! The politeness rule: one host's live state — requests in flight, when the next
//! may start — and how it reacts to what the server says. The memory and disk
//! frontiers run this code; the Redis frontier runs its Lua twin
//! (`redis/common.lua`), held to the same contract tests.
//!
//! The rule tells one URL's failure apart from a server in distress, as TCP tells
//! a lost packet apart from congestion:
//!
//! - **One URL failing** (a 5xx without `Retry-After`, a timeout, a reset) is that
//!   URL's business: it is retried on its own schedule (see `Frontier::retry`),
//!   and the host goes on at full speed. A URL that fails *again* says nothing
//!   more about the server ([`HostFeedback::FailedAgain`]): a crawl's last
//!   minutes are mostly such retries, and must not look like distress.
//! - **The server asking** — a `429`, or `Retry-After` on any response — pauses the
//!   whole host for the asked time (capped by `--max-retry-after` before it gets
//!   here) and slows it down (a *cut*, below).
//! - **The server showing distress**: answers are counted in windows of at least
//!   [`WINDOW`] answers and at least two rounds of what the host has in flight (as
//!   TCP reacts once per round trip); a window in which at least half the first
//!   attempts failed is distress and causes a cut.
//! - **A cut** halves the host's concurrency and halves its request rate: the gap
//!   between starts becomes twice its recent average (and at least twice the last
//!   cut's, at least [`MIN_DISTRESS_GAP`], at most [`MAX_DISTRESS_GAP`]). At most
//!   one cut per window, however many answers in it fail.
//! - **Recovery** is additive in rate, as TCP's congestion avoidance: after a cut
//!   the allowed rate grows back linearly, by the rate at the cut (at least
//!   [`MIN_RECOVERY_STEP`] requests/s) every [`RECOVERY_TIME`], and the extra gap
//!   is dropped once the rate is sixteen times the rate at the cut; each clean
//!   answer gives back one slot of concurrency (two-fold growth, below, is
//!   only for a host never cut). A host
//!   that answers 429 above N requests/s thus settles in a saw-tooth between
//!   about N/2 and N.
//! - **Slow start**, as TCP's: a host the crawl has not heard from yet gets
//!   [`INITIAL_WINDOW`] requests in flight (or `--per-host`, if lower), and
//!   each clean answer doubles that, up to `--per-host`; the first cut ends
//!   slow start, and from then on each clean answer gives back one slot. A
//!   host the crawl does not know yet is not hit with a `--per-host` of
//!   hundreds at once. Only a clean answer widens a host: one whose answers
//!   all fail stays at its initial window. The host's robots.txt
//!   is fetched before its first page anyway, so the ramp costs a few round
//!   trips once per host. A host forgotten while idle (see
//!   `HostSlots::is_idle`) starts in slow start again when it comes back, as
//!   TCP restarts slow start after an idle spell: that is never less polite
//!   than what was forgotten, and its pooled connections may have closed.
//! - **A server that is down** is told apart from URLs that are broken by a
//!   health probe, not here: after a failure the crawler checks the origin's
//!   robots.txt again, and while that is unavailable the host's URLs wait
//!   without using up tries (see `robots::RobotsCache`).
//!
//! Times are tokio's ([`tokio::time::Instant`]), so tests run it on a paused clock.

use std::time::Duration;

/// What an attempt answered `429` adds to `Lease::tries`: those are counted
/// apart, since the retry policy gives them a larger allowance (see
/// `retry::THROTTLED_TRIES_FACTOR`).
pub const THROTTLED_TRY: u32 = 1 << 16;

use tokio::time::Instant;

use super::jitter::random_up_to;
use super::ring::{LINGER, Ring, SESSION_BUDGET};
use crate::host::key::LivePolicy;

/// The fewest answers in a distress window (and between two cuts); a host with
/// more than half as many in flight has windows of two rounds instead.
pub const WINDOW: u32 = 20;
/// The smallest pacing gap a cut sets.
pub const MIN_DISTRESS_GAP: Duration = Duration::from_micros(100);
/// Requests in flight a host new to the crawl gets before its first answer
/// (capped by `--per-host`): as many as a browser opens to one host, the way
/// TCP's initial window grew from one segment to ten (RFC 6928) once a window
/// of one was measured to cost round trips for nothing.
///
/// With one, a host whose first pages link a dozen URLs had its second level
/// cut in two rounds, and every page below it came one round later: a bench
/// at 10,000 in flight and 1 s latency lost a whole second to it.
pub const INITIAL_WINDOW: usize = 6;

/// The largest pacing gap distress can grow to.
pub const MAX_DISTRESS_GAP: Duration = Duration::from_secs(30);
/// After a cut, the allowed rate grows by the rate at the cut every this long.
pub const RECOVERY_TIME: Duration = Duration::from_secs(1);
/// Once the rate has grown this many times the rate at the cut, the extra gap
/// is dropped.
pub const RECOVERY_ROUNDS: u32 = 16;
/// The least the allowed rate grows by per [`RECOVERY_TIME`] (requests/s).
pub const MIN_RECOVERY_STEP: f64 = 10.0;
/// A host quiet this long after its last cut has recovered from it in full
/// (the rate grows back to [`RECOVERY_ROUNDS`] times the rate at the cut in at
/// most `RECOVERY_ROUNDS - 1` steps of [`RECOVERY_TIME`]), so its state may be
/// forgotten.
pub const SETTLE_TIME: Duration = RECOVERY_TIME.saturating_mul(RECOVERY_ROUNDS);

/// What one finished request says about its server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HostFeedback {
    /// Nothing reached the server, or the answer says nothing about its health
    /// (a skip, a URL deferred for robots.txt).
    #[default]
    Silent,
    /// An answer: the server is working (any status not listed below).
    Clean,
    /// This URL failed in a way that may pass: a 5xx without `Retry-After`, a
    /// timeout, a reset, a connection refused.
    Failed,
    /// A URL that had failed before failed again: it uses up a try, but says
    /// nothing new about the server, so it does not count toward distress.
    FailedAgain,
    /// The server asked everyone to slow down (`429`, or `Retry-After` on any
    /// response): pause the host this long and cut.
    SlowDown(Duration, ThrottleReason),
}

/// Why a host was slowed down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ThrottleReason {
    /// A `429 Too Many Requests`.
    TooManyRequests,
    /// A `Retry-After` header on another response.
    RetryAfter,
    /// Half or more of a window of responses failed.
    Distress,
    /// The host's robots.txt could not be fetched: its URLs wait.
    RobotsUnavailable,
}

impl ThrottleReason {
    /// Every reason, in counter order.
    pub const ALL: [ThrottleReason; 4] = [
        ThrottleReason::TooManyRequests,
        ThrottleReason::RetryAfter,
        ThrottleReason::Distress,
        ThrottleReason::RobotsUnavailable,
    ];

    /// The name used in reports and JSONL (`429`, `retry_after`, `distress`,
    /// `robots_unavailable`).
    pub fn as_str(self) -> &'static str {
        match self {
            ThrottleReason::TooManyRequests => "429",
            ThrottleReason::RetryAfter => "retry_after",
            ThrottleReason::Distress => "distress",
            ThrottleReason::RobotsUnavailable => "robots_unavailable",
        }
    }
}

/// A slow-down that took effect, for the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throttle {
    /// Why.
    pub reason: ThrottleReason,
    /// Whether concurrency and pacing were cut (else only a pause).
    pub cut: bool,
    /// The concurrency allowed after it.
    pub limit: usize,
    /// The extra pacing gap after it.
    pub gap: Duration,
}

/// One host's live politeness state.
#[derive(Debug)]
pub(crate) struct HostSlots {
    /// The crawl's rules, read at each use (they change live), not copied.
    policy: LivePolicy,
    /// Concurrency allowed right now: starts at [`INITIAL_WINDOW`], cut in
    /// distress, regained on clean answers.
    limit: usize,
    /// Whether the host is in slow start (never cut since it became known):
    /// a clean answer doubles `limit` instead of adding one.
    slow_start: bool,
    in_flight: usize,
    /// `Crawl-delay` from robots.txt, when larger than the policy's delay.
    delay_floor: Duration,
    /// Extra gap between starts while the server is (or was lately) in distress.
    distress_gap: Duration,
    /// `distress_gap` right after the last cut, and when: recovery grows the
    /// rate from there.
    gap_at_cut: Duration,
    cut_at: Option<Instant>,
    last_start: Option<Instant>,
    next_start: Option<Instant>,
    /// Recent average gap between starts (an exponential moving average).
    avg_interval: Duration,
    /// The current window: answers and failures counted.
    window_total: u32,
    window_failed: u32,
    /// Answers since the last cut (`WINDOW` or more: a cut may happen).
    since_cut: u32,
    /// Requests started since the host last came out of the cold ring (see
    /// `rota`): past [`SESSION_BUDGET`] it is cold however recently it ran.
    session: u32,
    /// The most requests in flight at once since the host was last quiet
    /// for [`LINGER`]: about the connections it has open.
    conns: usize,
}

impl HostSlots {
    pub(crate) fn new(policy: LivePolicy) -> Self {
        let limit = INITIAL_WINDOW.min(policy.get().max_in_flight).max(1);
        HostSlots {
            policy,
            limit,
            slow_start: true,
            in_flight: 0,
            delay_floor: Duration::ZERO,
            distress_gap: Duration::ZERO,
            gap_at_cut: Duration::ZERO,
            cut_at: None,
            last_start: None,
            next_start: None,
            avg_interval: Duration::ZERO,
            window_total: 0,
            window_failed: 0,
            since_cut: u32::MAX,
            session: 0,
            conns: 0,
        }
    }

    /// The ready ring this host belongs in (see `rota`): warm while a
    /// connection of its is likely idle, busy while all are in use, cold when
    /// it has none or its session is spent.
    pub(crate) fn ring(&self, now: Instant) -> Ring {
        // A recent host has started a request since `conns` was reset, so
        // with nothing in flight it is warm.
        if !self.is_recent(now) || self.session >= SESSION_BUDGET {
            Ring::Cold
        } else if self.in_flight < self.conns {
            Ring::Warm
        } else {
            Ring::Busy
        }
    }

    /// A request in flight, or one started within [`LINGER`].
    fn is_recent(&self, now: Instant) -> bool {
        self.in_flight > 0
            || self
                .last_start
                .is_some_and(|t| now.saturating_duration_since(t) < LINGER)
    }

    /// Takes a slot for a request a frontier claimed from `ring`, with the
    /// configured jitter: one taken from the cold ring starts a new session.
    pub(crate) fn start_claimed(&mut self, now: Instant, ring: Ring) {
        if ring == Ring::Cold {
            self.session = 0;
        }
        let jitter = random_up_to(self.policy.get().jitter);
        self.start(now, jitter);
    }

    /// When a request may start, if a slot is free: `Ok(())` now, `Err(Some(t))`
    /// at `t`, `Err(None)` only once a request completes.
    pub(crate) fn ready_at(&self, now: Instant) -> Result<(), Option<Instant>> {
        if self.in_flight >= self.limit.min(self.max_in_flight()) {
            return Err(None);
        }
        match self.next_start {
            Some(t) if t > now => Err(Some(t)),
            _ => Ok(()),
        }
    }

    /// Takes a slot for a request starting at `now`.
    pub(crate) fn start(&mut self, now: Instant, jitter: Duration) {
        if !self.is_recent(now) {
            self.conns = 0;
        }
        self.in_flight += 1;
        self.conns = self.conns.max(self.in_flight);
        self.session = self.session.saturating_add(1);
        if let Some(last) = self.last_start {
            // An idle spell is not a pace: cap what one interval can add.
            let cap = self.gap().max(Duration::from_secs(1)) * 2;
            let interval = now.saturating_duration_since(last).min(cap);
            self.avg_interval = (self.avg_interval * 7 + interval) / 8;
        }
        self.last_start = Some(now);
        let gap = self.gap() + jitter;
        if !gap.is_zero() {
            self.next_start = Some(now + gap);
        }
    }

    /// The `--per-host` cap now (a live change may have lowered it below
    /// `limit`).
    fn max_in_flight(&self) -> usize {
        self.policy.get().max_in_flight.max(1)
    }

    fn gap(&self) -> Duration {
        self.policy
            .get()
            .delay
            .max(self.delay_floor)
            .max(self.distress_gap)
    }

    /// Releases a slot and applies what the answer says about the server; the
    /// slow-down it caused, if any.
    pub(crate) fn finish(&mut self, now: Instant, signal: HostFeedback) -> Option<Throttle> {
        self.in_flight = self.in_flight.saturating_sub(1);
        match signal {
            HostFeedback::Silent | HostFeedback::FailedAgain => None,
            HostFeedback::Clean => {
                self.recover(now);
                self.count(now, false)
            }
            HostFeedback::Failed => self.count(now, true),
            HostFeedback::SlowDown(wait, reason) => {
                let until = now + wait;
                self.next_start = Some(self.next_start.map_or(until, |t| t.max(until)));
                self.since_cut = self.since_cut.saturating_add(1);
                let cut = reason != ThrottleReason::RobotsUnavailable
                    && self.since_cut >= self.window_len();
                if cut {
                    self.cut(now);
                }
                Some(self.throttle(reason, cut))
            }
        }
    }

    /// Answers per window: at least [`WINDOW`], and two rounds of what the host
    /// may have in flight.
    fn window_len(&self) -> u32 {
        WINDOW.max(u32::try_from(self.limit.saturating_mul(2)).unwrap_or(u32::MAX))
    }

    /// Counts an answer in the window; a distressed window causes a cut.
    fn count(&mut self, now: Instant, failed: bool) -> Option<Throttle> {
        self.window_total += 1;
        self.window_failed += u32::from(failed);
        self.since_cut = self.since_cut.saturating_add(1);
        if self.window_total < self.window_len() {
            return None;
        }
        let distressed = self.window_failed * 2 >= self.window_total;
        self.window_total = 0;
        self.window_failed = 0;
        if !distressed {
            return None;
        }
        let cut = self.since_cut >= self.window_len();
        if cut {
            self.cut(now);
        }
        Some(self.throttle(ThrottleReason::Distress, cut))
    }

    fn cut(&mut self, now: Instant) {
        self.since_cut = 0;
        self.slow_start = false;
        self.limit = (self.limit / 2).max(1);
        self.distress_gap = (self.distress_gap * 2)
            .max(self.avg_interval * 2)
            .clamp(MIN_DISTRESS_GAP, MAX_DISTRESS_GAP);
        self.gap_at_cut = self.distress_gap;
        self.cut_at = Some(now);
    }

    /// Additive recovery in rate: `rate(t) = rate_at_cut + step × t /
    /// RECOVERY_TIME`, the step being the rate at the cut but at least
    /// [`MIN_RECOVERY_STEP`] (so a host cut to a trickle during an outage is
    /// back at speed within seconds of answering again).
    fn recover(&mut self, now: Instant) {
        if let Some(at) = self.cut_at {
            let rounds =
                now.saturating_duration_since(at).as_secs_f64() / RECOVERY_TIME.as_secs_f64();
            let cut_rate = 1.0 / self.gap_at_cut.as_secs_f64().max(1e-6);
            let rate = cut_rate + cut_rate.max(MIN_RECOVERY_STEP) * rounds;
            if rate >= cut_rate * f64::from(RECOVERY_ROUNDS) {
                self.distress_gap = Duration::ZERO;
                self.gap_at_cut = Duration::ZERO;
                self.cut_at = None;
            } else {
                self.distress_gap = Duration::from_secs_f64(1.0 / rate);
            }
        }
        let grown = if self.slow_start {
            self.limit.saturating_mul(2)
        } else {
            self.limit + 1
        };
        // Never above the cap, which may have been lowered live.
        self.limit = grown.min(self.max_in_flight());
    }

    fn throttle(&self, reason: ThrottleReason, cut: bool) -> Throttle {
        Throttle {
            reason,
            cut,
            limit: self.limit,
            gap: self.distress_gap,
        }
    }

    /// What a URL handed back for a retry with `feedback` adds to its
    /// [`Lease::tries`](crate::frontier::Lease::tries): an attempt that failed is one
    /// failed try, one answered `429` one [`THROTTLED_TRY`],
    /// a deferral that sent nothing (a robots.txt outage) nothing.
    pub(crate) fn try_cost(feedback: HostFeedback) -> u32 {
        match feedback {
            HostFeedback::Failed | HostFeedback::FailedAgain => 1,
            HostFeedback::SlowDown(_, ThrottleReason::TooManyRequests) => THROTTLED_TRY,
            HostFeedback::SlowDown(_, ThrottleReason::RobotsUnavailable) => 0,
            HostFeedback::SlowDown(..) => 1,
            HostFeedback::Silent | HostFeedback::Clean => 0,
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

    /// Whether forgetting this host now loses nothing: no request in flight,
    /// no gap still to wait, and no slow-down still in effect — none ever, or
    /// the last cut and the last start both [`SETTLE_TIME`] ago (by then the
    /// rate would have recovered on the next clean answer). A host rebuilt
    /// afresh starts in slow start from its initial window: never more
    /// than a host still in slow start or at full concurrency had, and it
    /// doubles back within a few answers; a host recovering additively from a
    /// cut is kept until quiet, since slow start would regain its concurrency
    /// faster than that recovery.
    pub(crate) fn is_idle(&self, now: Instant) -> bool {
        let settled =
            self.cut_at.is_none() && (self.slow_start || self.limit >= self.max_in_flight());
        let quiet = || {
            [self.cut_at, self.last_start]
                .into_iter()
                .flatten()
                .all(|t| now.saturating_duration_since(t) >= SETTLE_TIME)
        };
        self.in_flight == 0 && self.next_start.is_none_or(|t| t <= now) && (settled || quiet())
    }

    /// Whether a frontier may forget this host: idle ([`HostSlots::is_idle`])
    /// and no start within [`LINGER`] — forgotten while warm, it would come
    /// back cold, and wait behind every other host for a connection it
    /// still has.
    pub(crate) fn is_forgettable(&self, now: Instant) -> bool {
        !self.is_recent(now) && self.is_idle(now)
    }

    /// The configured random extra gap.
    pub(crate) fn jitter(&self) -> Duration {
        self.policy.get().jitter
    }
}

#[cfg(test)]
mod tests;
