//! One request with retries: the policy decides, `Retry-After` is honoured, and a
//! cancellation cuts a back-off wait short (the last result is kept).
//!
//! Not tied to the bulk runner: the crawler's worker makes the same loop (plus its
//! per-host back-off feedback) and could share this one.

use std::time::SystemTime;

use tokio_util::sync::CancellationToken;
use url::Url;

use crate::fetch::{Fetcher, Keep, Response, Validators};
use crate::outcome::{ErrorKind, FetchFailure};
use crate::retry::{self, AttemptResult, RetryPolicy, Verdict};

/// The result of [`fetch_with_retries`].
#[derive(Debug)]
pub(crate) struct Attempted {
    /// Attempts made (at least 1).
    pub attempts: u32,
    /// The last attempt's result.
    pub result: Result<Response, FetchFailure>,
}

/// Fetches `url` (a hop of the input `origin`, see [`Fetcher::get_from`]),
/// conditionally on `validators` when given, until it succeeds, fails for good,
/// runs out of tries, or `cancel` fires during a wait. A `304` is an answer
/// like a `200` (the policy never retries it), not a failure.
pub(crate) async fn fetch_with_retries(
    fetcher: &Fetcher,
    policy: &RetryPolicy,
    (url, origin, validators): (&Url, &Url, Option<&Validators>),
    keep: Keep,
    cancel: &CancellationToken,
) -> Attempted {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let result = fetcher
            .get_from_if(url, keep, origin, validators)
            .await
            .and_then(|resp| {
                // A download is the whole file or nothing: a body cut at the cap
                // (which a crawl still reads links from) is a failure here.
                if resp.truncated {
                    let max = fetcher.config().max_body_size;
                    return Err(FetchFailure {
                        kind: ErrorKind::BodyTooLarge,
                        message: format!("body exceeds the {max}-byte limit"),
                    });
                }
                Ok(resp)
            });
        let verdict_input = match &result {
            Ok(resp) => {
                let retry_after = resp
                    .header("retry-after")
                    .and_then(|v| retry::parse_retry_after(v, SystemTime::now()));
                AttemptResult::Status(resp.status, retry_after)
            }
            Err(failure) => AttemptResult::Failed(failure.kind),
        };
        let done = Attempted {
            attempts: attempt,
            result,
        };
        match policy.verdict(attempt, verdict_input) {
            Verdict::Done => return done,
            Verdict::Retry(wait) => {
                tracing::debug!(%url, attempt, ?wait, "retrying");
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = cancel.cancelled() => return done,
                }
            }
        }
    }
}
