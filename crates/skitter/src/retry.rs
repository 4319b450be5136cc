//! The retry policy: which failures are transient, and how long to wait before the
//! next attempt.
//!
//! One function decides "is this worth another try?" ([`RetryPolicy::verdict`]), so
//! the rule is in one place and tested table-driven. Transport errors (connect,
//! timeout, broken body, DNS, protocol) and the statuses 408, 429, 500, 502, 503 and
//! 504 are retried; every other status is an answer and is recorded as it is.
//! Waits grow fourfold per attempt from `base_delay` with "equal jitter" (half fixed, half
//! random), capped at `max_delay`; a `Retry-After` header is honoured up to
//! `max_retry_after`.

use std::time::{Duration, SystemTime};

use rand::RngExt;

use crate::fetch::Response;
use crate::frontier::{HostFeedback, ThrottleReason};
use crate::outcome::{ErrorKind, FetchFailure};

/// Statuses that mean "try again later" rather than "this is the answer".
pub const RETRYABLE_STATUSES: [u16; 6] = [408, 429, 500, 502, 503, 504];

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
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_tries: 4,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

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

impl RetryPolicy {
    /// Decides what to do after attempt number `attempt` (1-based).
    pub fn verdict(&self, attempt: u32, result: AttemptResult) -> Verdict {
        let retry_after = match result {
            AttemptResult::Status(code, retry_after) if is_retryable_status(code) => retry_after,
            AttemptResult::Failed(kind) if is_transient(kind) => None,
            _ => return Verdict::Done,
        };
        if attempt >= self.max_tries {
            return Verdict::Done;
        }
        Verdict::Retry(self.wait(attempt, retry_after))
    }

    /// The wait after attempt number `attempt`: the back-off, or the server's
    /// `Retry-After` (capped) when that is longer.
    pub fn wait(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
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
    attempt: u32,
    result: &Result<Response, FetchFailure>,
) -> (Verdict, HostFeedback) {
    match result {
        Ok(resp) => {
            let retry_after = resp
                .header("retry-after")
                .and_then(|v| parse_retry_after(v, SystemTime::now()));
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
            let verdict = policy.verdict(attempt, AttemptResult::Status(resp.status, retry_after));
            (verdict, feedback)
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
            (
                policy.verdict(attempt, AttemptResult::Failed(failure.kind)),
                feedback,
            )
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
