//! The retry policy: which failures are transient, and how long to wait before the
//! next attempt.
//!
//! One function decides "is this worth another try?" ([`RetryPolicy::verdict`]), so
//! the rule is in one place and tested table-driven. Transport errors (connect,
//! timeout, broken body, DNS, protocol) and the statuses 408, 429, 500, 502, 503 and
//! 504 are retried; every other status is an answer and is recorded as it is.
//! A `429` is the server pacing the whole host, not news about the URL: the
//! host is slowed down (`frontier::politeness`), a `429` does not use up one
//! of the URL's `max_tries` (those count failures only), and a URL is given up
//! for `429`s only after [`THROTTLED_TRIES_FACTOR`] times `max_tries` attempts
//! in all. So a rate-limited host is finished, even with transient failures
//! besides, rather than losing the URLs that happened to arrive in its
//! exhausted windows, and a URL refused for ever still ends.
//! Waits grow fourfold per attempt from `base_delay` with "equal jitter" (half fixed, half
//! random), capped at `max_delay`; a `Retry-After` header is honoured up to
//! `max_retry_after`.

use std::time::{Duration, SystemTime};

use rand::RngExt;

use crate::base::outcome::{ErrorKind, FetchFailure};
use crate::fetch::Response;
use crate::host::{HostFeedback, ThrottleReason};

/// Statuses that mean "try again later" rather than "this is the answer".
pub const RETRYABLE_STATUSES: [u16; 6] = [408, 429, 500, 502, 503, 504];

/// A URL answered `429` is given up after this many times `max_tries`
/// attempts in all (see the module header).
pub const THROTTLED_TRIES_FACTOR: u32 = 3;

/// How many attempts, and how far apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (the baseline's `max_tries`, default 4).
    pub max_tries: u32,
    /// The wait before the second attempt (default 100 ms); four times as long
    /// each time after (so the default tries go 0.1, 0.4, 1.6 s apart, with
    /// jitter). The first retry of one URL comes soon because protecting the
    /// server is the host rule's job (`frontier::politeness`: a 429, a
    /// `Retry-After` or a distressed window slow the whole host down); this wait
    /// only spreads one URL's own attempts.
    pub base_delay: Duration,
    /// The longest computed wait (default 30 s).
    pub max_delay: Duration,
    /// The longest `Retry-After` honoured (default 60 s); a longer one is cut to this.
    pub max_retry_after: Duration,
    /// A URL whose lease was lost this many times (default 3: its worker
    /// died, was killed or stalled past the lease while holding it, in a
    /// Redis crawl or a `--state` crawl that resumed) is not fetched again
    /// but ends as a failure of kind
    /// [`ErrorKind::Quarantined`]. Each loss also counts as a failed try.
    pub quarantine_after: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_tries: 4,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
            quarantine_after: DEFAULT_QUARANTINE_AFTER,
        }
    }
}

/// The default of [`RetryPolicy::quarantine_after`].
pub const DEFAULT_QUARANTINE_AFTER: u32 = 3;

/// What one attempt came to, as far as retrying is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptResult {
    /// A response with this status, and its `Retry-After`, if any.
    Status(u16, Option<Duration>),
    /// No response: a transport failure of this kind.
    Failed(ErrorKind),
}

/// The policy's decision after an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Keep this result.
    Done,
    /// Wait this long, then try again.
    Retry(Duration),
}

/// The attempts a URL made so far, as the policy counts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tries {
    /// Attempts that failed: a transport error or a retryable status other
    /// than `429`.
    pub failed: u32,
    /// Attempts answered `429`.
    pub throttled: u32,
}

impl Tries {
    /// All attempts so far.
    pub fn attempts(self) -> u32 {
        self.failed.saturating_add(self.throttled)
    }

    /// These tries and one more that came to `result` (a success changes nothing).
    pub fn after(self, result: AttemptResult) -> Tries {
        match result {
            AttemptResult::Status(429, _) => Tries {
                throttled: self.throttled.saturating_add(1),
                ..self
            },
            AttemptResult::Status(code, _) if !is_retryable_status(code) => self,
            _ => Tries {
                failed: self.failed.saturating_add(1),
                ..self
            },
        }
    }

    /// The number [`RetryPolicy::verdict`] judges an attempt coming to
    /// `result` by, after these tries: for a `429` every attempt so far and
    /// this one; otherwise the failed ones and this one.
    pub fn number_for(self, result: AttemptResult) -> u32 {
        match result {
            AttemptResult::Status(429, _) => self.attempts(),
            _ => self.failed,
        }
        .saturating_add(1)
    }
}

impl RetryPolicy {
    /// Decides what to do after an attempt that came to `result`; `attempt`
    /// is its 1-based number as [`Tries::number_for`] gives it (failed
    /// attempts only, or all of them for a `429`).
    pub fn verdict(&self, attempt: u32, result: AttemptResult) -> Verdict {
        let retry_after = match result {
            AttemptResult::Status(code, retry_after) if is_retryable_status(code) => retry_after,
            AttemptResult::Failed(kind) if is_transient(kind) => None,
            _ => return Verdict::Done,
        };
        let tries = match result {
            AttemptResult::Status(429, _) => self.max_tries.saturating_mul(THROTTLED_TRIES_FACTOR),
            _ => self.max_tries,
        };
        if attempt >= tries {
            return Verdict::Done;
        }
        Verdict::Retry(self.wait(attempt, retry_after))
    }

    /// The wait after attempt number `attempt`: the back-off, or the server's
    /// `Retry-After` (capped) when that is longer.
    /// The waits stop growing after `max_tries`: only a rate-limited URL's
    /// extra attempts go further, and the host's slow-down paces those.
    pub fn wait(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let attempt = attempt.min(self.max_tries.max(1));
        let exp = self
            .base_delay
            .saturating_mul(1u32 << (2 * attempt.saturating_sub(1).min(15)))
            .min(self.max_delay);
        let half = exp / 2;
        let jittered = half + random_up_to(exp - half);
        match retry_after {
            Some(ra) => ra.min(self.max_retry_after).max(jittered),
            None => jittered,
        }
    }
}

/// Whether a status asks for another attempt.
pub fn is_retryable_status(code: u16) -> bool {
    RETRYABLE_STATUSES.contains(&code)
}

/// Whether a transport failure may go away on its own (a proxy's failure: the
/// next attempt goes through another proxy of the pool).
pub fn is_transient(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::Connect
            | ErrorKind::Timeout
            | ErrorKind::Dns
            | ErrorKind::Body
            | ErrorKind::Protocol
            | ErrorKind::Proxy
            | ErrorKind::Other
    )
}

/// Parses a `Retry-After` value: delay-seconds or an HTTP-date (RFC 9110 §10.2.3).
/// A date in the past means "now"; anything unparseable is ignored.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

fn random_up_to(max: Duration) -> Duration {
    if max.is_zero() {
        return Duration::ZERO;
    }
    Duration::from_nanos(rand::rng().random_range(0..=max.as_nanos().min(u64::MAX as u128) as u64))
}

/// The retry policy's verdict on one attempt, and what it says about the server
/// (see `frontier::politeness`): a `429` or a `Retry-After` slows the whole host
/// down; any other transient failure is this URL's alone.
///
/// One home for crawl and `fetch`: the crawl hands the feedback to its
/// frontier, `fetch` to its per-host gate (`frontier::gate`).
pub(crate) fn judge(
    policy: &RetryPolicy,
    tries: Tries,
    result: &Result<Response, FetchFailure>,
) -> (Verdict, HostFeedback) {
    match result {
        Ok(resp) => {
            let retry_after = resp
                .header("retry-after")
                .and_then(|v| parse_retry_after(v, SystemTime::now()));
            let result = AttemptResult::Status(resp.status, retry_after);
            let attempt = tries.number_for(result);
            let feedback = match (resp.status, retry_after) {
                (429, _) => HostFeedback::SlowDown(
                    policy.wait(attempt, retry_after),
                    ThrottleReason::TooManyRequests,
                ),
                (_, Some(ra)) => HostFeedback::SlowDown(
                    ra.min(policy.max_retry_after),
                    ThrottleReason::RetryAfter,
                ),
                (status, None) if is_retryable_status(status) => HostFeedback::Failed,
                _ => HostFeedback::Clean,
            };
            (policy.verdict(attempt, result), feedback)
        }
        Err(failure) => {
            // A proxy's failure says nothing of the site: the pool benches the
            // proxy; the URL uses up a try, as a URL failing again does,
            // without counting toward its host's distress.
            let feedback = if failure.kind == ErrorKind::Proxy {
                HostFeedback::FailedAgain
            } else if is_transient(failure.kind) {
                HostFeedback::Failed
            } else {
                HostFeedback::Silent
            };
            let result = AttemptResult::Failed(failure.kind);
            (policy.verdict(tries.number_for(result), result), feedback)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_tries: 4,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
            max_retry_after: Duration::from_secs(5),
            quarantine_after: DEFAULT_QUARANTINE_AFTER,
        }
    }

    #[test]
    fn which_results_are_retried() {
        let p = policy();
        let cases: &[(AttemptResult, bool)] = &[
            (AttemptResult::Status(200, None), false),
            (AttemptResult::Status(301, None), false),
            // A conditional fetch's answer that the copy held is current: done.
            (AttemptResult::Status(304, None), false),
            (AttemptResult::Status(404, None), false),
            (AttemptResult::Status(410, None), false),
            (AttemptResult::Status(501, None), false),
            (AttemptResult::Status(408, None), true),
            (AttemptResult::Status(429, None), true),
            (AttemptResult::Status(500, None), true),
            (AttemptResult::Status(502, None), true),
            (AttemptResult::Status(503, None), true),
            (AttemptResult::Status(504, None), true),
            (AttemptResult::Failed(ErrorKind::Connect), true),
            (AttemptResult::Failed(ErrorKind::Timeout), true),
            (AttemptResult::Failed(ErrorKind::Dns), true),
            (AttemptResult::Failed(ErrorKind::Body), true),
            (AttemptResult::Failed(ErrorKind::Protocol), true),
            (AttemptResult::Failed(ErrorKind::Tls), false),
            (AttemptResult::Failed(ErrorKind::BodyTooLarge), false),
            (AttemptResult::Failed(ErrorKind::Decode), false),
        ];
        for (result, retried) in cases {
            let got = matches!(p.verdict(1, *result), Verdict::Retry(_));
            assert_eq!(got, *retried, "{result:?}");
        }
    }

    #[test]
    fn a_rate_limited_url_gets_more_tries_but_not_for_ever() {
        let p = policy();
        let limited = AttemptResult::Status(429, None);
        let failed = AttemptResult::Status(503, None);
        let retried =
            |tries: Tries, r| matches!(p.verdict(tries.number_for(r), r), Verdict::Retry(_));
        // 429s do not use up the failures' tries...
        let mut tries = Tries::default();
        for _ in 0..3 {
            tries = tries.after(failed);
        }
        for _ in 0..5 {
            assert!(retried(tries, limited));
            tries = tries.after(limited);
        }
        assert!(!retried(tries, failed), "the fourth failure ends it");
        // ...and a URL answered 429 for ever ends after three times the tries.
        let mut tries = Tries::default();
        for n in 1..12 {
            assert!(retried(tries, limited), "{n}");
            tries = tries.after(limited);
        }
        assert!(!retried(tries, limited));
        assert_eq!(tries.attempts(), 11);
        // A success is no try.
        assert_eq!(tries.after(AttemptResult::Status(200, None)), tries);
    }

    #[test]
    fn stops_at_max_tries() {
        let p = policy();
        let r = AttemptResult::Status(503, None);
        assert!(matches!(p.verdict(3, r), Verdict::Retry(_)));
        assert_eq!(p.verdict(4, r), Verdict::Done);
        let once = RetryPolicy { max_tries: 1, ..p };
        assert_eq!(once.verdict(1, r), Verdict::Done);
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = policy();
        for attempt in 1..=10u32 {
            // Fourfold per attempt: 100 ms, 400 ms, then the 1 s cap.
            let exp = (Duration::from_millis(100) * 4u32.pow((attempt - 1).min(8)))
                .min(Duration::from_secs(1));
            for _ in 0..20 {
                let w = p.wait(attempt, None);
                assert!(
                    w >= exp / 2 && w <= exp,
                    "attempt {attempt}: {w:?} vs {exp:?}"
                );
            }
        }
    }

    #[test]
    fn retry_after_is_honoured_up_to_cap() {
        let p = policy();
        assert_eq!(
            p.wait(1, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(
            p.wait(1, Some(Duration::from_secs(3600))),
            Duration::from_secs(5)
        );
        // A Retry-After shorter than the back-off does not shorten it.
        assert!(p.wait(5, Some(Duration::ZERO)) >= Duration::from_millis(500));
    }

    #[test]
    fn parses_retry_after_forms() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        let cases: &[(&str, Option<Duration>)] = &[
            ("120", Some(Duration::from_secs(120))),
            (" 0 ", Some(Duration::ZERO)),
            (
                "Sun, 06 Nov 1994 08:49:47 GMT",
                Some(Duration::from_secs(10)),
            ),
            ("Sun, 06 Nov 1994 08:49:00 GMT", Some(Duration::ZERO)),
            ("soon", None),
            ("-5", None),
            ("", None),
        ];
        for (value, want) in cases {
            assert_eq!(parse_retry_after(value, now), *want, "{value:?}");
        }
    }
}
