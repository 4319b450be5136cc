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
//!   and the host goes on at full speed.
//! - **The server asking** — a `429`, or `Retry-After` on any response — pauses the
//!   whole host for the asked time (capped by `--max-retry-after` before it gets
//!   here) and slows it down (a *cut*, below).
//! - **The server showing distress**: responses are counted in windows of
//!   [`WINDOW`]; a window in which at least half failed is distress and causes a
//!   cut. A host is "in an outage" from the first distressed window until a
//!   window is healthy again; during an outage (up to `HostPolicy::max_outage`)
//!   its URLs' failures cost them no tries, so a server that is down for a while
//!   loses no pages.
//! - **A cut** halves the host's concurrency and doubles its pacing gap (at least
//!   to twice the recent average gap between starts, which halves the request
//!   rate, and at least [`MIN_DISTRESS_GAP`]; at most [`MAX_DISTRESS_GAP`]). At
//!   most one cut per window of responses, however many fail in it.
//! - **Recovery** is additive: each clean response shrinks the extra gap by
//!   1/[`RECOVERY_STEPS`] of its size at the last cut, and every `limit` clean
//!   responses give back one slot of concurrency.
//!
//! Times are tokio's ([`tokio::time::Instant`]), so tests run it on a paused clock.

use std::time::Duration;

use tokio::time::Instant;

use super::host::HostPolicy;

/// Responses per distress window, and the fewest responses between two cuts.
pub const WINDOW: u32 = 20;
/// The smallest pacing gap a cut sets.
pub const MIN_DISTRESS_GAP: Duration = Duration::from_millis(10);
/// The largest pacing gap distress can grow to.
pub const MAX_DISTRESS_GAP: Duration = Duration::from_secs(30);
/// Clean responses over which the extra gap falls back to zero.
pub const RECOVERY_STEPS: u32 = 32;

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
    policy: HostPolicy,
    /// Concurrency allowed right now: cut in distress, regained on clean answers.
    limit: usize,
    in_flight: usize,
    /// `Crawl-delay` from robots.txt, when larger than the policy's delay.
    delay_floor: Duration,
    /// Extra gap between starts while the server is (or was lately) in distress.
    distress_gap: Duration,
    /// `distress_gap` right after the last cut: recovery steps are a share of it.
    gap_at_cut: Duration,
    last_start: Option<Instant>,
    next_start: Option<Instant>,
    /// Recent average gap between starts (an exponential moving average).
    avg_interval: Duration,
    /// The current window: answers and failures counted.
    window_total: u32,
    window_failed: u32,
    /// Answers since the last cut (`WINDOW` or more: a cut may happen).
    since_cut: u32,
    /// Clean answers toward regaining one slot.
    credit: usize,
}

impl HostSlots {
    pub(crate) fn new(policy: HostPolicy) -> Self {
        HostSlots {
            policy,
            limit: policy.max_in_flight.max(1),
            in_flight: 0,
            delay_floor: Duration::ZERO,
            distress_gap: Duration::ZERO,
            gap_at_cut: Duration::ZERO,
            last_start: None,
            next_start: None,
            avg_interval: Duration::ZERO,
            window_total: 0,
            window_failed: 0,
            since_cut: WINDOW,
            credit: 0,
        }
    }

    /// When a request may start, if a slot is free: `Ok(())` now, `Err(Some(t))`
    /// at `t`, `Err(None)` only once a request completes.
    pub(crate) fn ready_at(&self, now: Instant) -> Result<(), Option<Instant>> {
        if self.in_flight >= self.limit {
            return Err(None);
        }
        match self.next_start {
            Some(t) if t > now => Err(Some(t)),
            _ => Ok(()),
        }
    }

    /// Takes a slot for a request starting at `now`.
    pub(crate) fn start(&mut self, now: Instant, jitter: Duration) {
        self.in_flight += 1;
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

    fn gap(&self) -> Duration {
        self.policy
            .delay
            .max(self.delay_floor)
            .max(self.distress_gap)
    }

    /// Releases a slot and applies what the answer says about the server; the
    /// slow-down it caused, if any.
    pub(crate) fn finish(&mut self, now: Instant, signal: HostFeedback) -> Option<Throttle> {
        self.in_flight = self.in_flight.saturating_sub(1);
        match signal {
            HostFeedback::Silent => None,
            HostFeedback::Clean => {
                self.recover();
                self.count(false)
            }
            HostFeedback::Failed => self.count(true),
            HostFeedback::SlowDown(wait, reason) => {
                let until = now + wait;
                self.next_start = Some(self.next_start.map_or(until, |t| t.max(until)));
                self.since_cut = self.since_cut.saturating_add(1);
                let cut = reason != ThrottleReason::RobotsUnavailable && self.since_cut >= WINDOW;
                if cut {
                    self.cut();
                }
                Some(self.throttle(reason, cut))
            }
        }
    }

    /// Counts an answer in the window; a distressed window causes a cut.
    fn count(&mut self, failed: bool) -> Option<Throttle> {
        self.window_total += 1;
        self.window_failed += u32::from(failed);
        self.since_cut = self.since_cut.saturating_add(1);
        if self.window_total < WINDOW {
            return None;
        }
        let distressed = self.window_failed * 2 >= self.window_total;
        self.window_total = 0;
        self.window_failed = 0;
        if !distressed {
            return None;
        }
        let cut = self.since_cut >= WINDOW;
        if cut {
            self.cut();
        }
        Some(self.throttle(ThrottleReason::Distress, cut))
    }

    fn cut(&mut self) {
        self.since_cut = 0;
        self.credit = 0;
        self.limit = (self.limit / 2).max(1);
        self.distress_gap = (self.distress_gap * 2)
            .max(self.avg_interval * 2)
            .clamp(MIN_DISTRESS_GAP, MAX_DISTRESS_GAP);
        self.gap_at_cut = self.distress_gap;
    }

    fn recover(&mut self) {
        if !self.distress_gap.is_zero() {
            let step = (self.gap_at_cut / RECOVERY_STEPS).max(Duration::from_micros(1));
            self.distress_gap = self.distress_gap.saturating_sub(step);
        }
        if self.limit < self.policy.max_in_flight {
            self.credit += 1;
            if self.credit >= self.limit {
                self.credit = 0;
                self.limit += 1;
            }
        }
    }

    fn throttle(&self, reason: ThrottleReason, cut: bool) -> Throttle {
        Throttle {
            reason,
            cut,
            limit: self.limit,
            gap: self.distress_gap,
        }
    }

    /// Whether a URL handed back for a retry with `feedback` used up one of its
    /// tries: only an attempt that failed does, not a deferral that sent nothing
    /// (a robots.txt outage).
    pub(crate) fn counts_try(feedback: HostFeedback) -> bool {
        match feedback {
            HostFeedback::Failed => true,
            HostFeedback::SlowDown(_, reason) => reason != ThrottleReason::RobotsUnavailable,
            HostFeedback::Silent | HostFeedback::Clean => false,
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

    /// The configured random extra gap.
    pub(crate) fn jitter(&self) -> Duration {
        self.policy.jitter
    }
}

#[cfg(test)]
mod tests;
