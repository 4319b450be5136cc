//! One request with retries: each attempt under its host's politeness gate
//! and a global slot, the retry policy and the host feedback from
//! [`retry::judge`] (the crawl's, one home), `Retry-After` honoured, and a
//! cancellation cutting a back-off wait short (the last result is kept).
//!
//! Between attempts the URL holds no slot, as in a crawl: a URL in back-off
//! does not keep its host or the run from other work.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::base::outcome::{ErrorKind, FetchFailure};
use crate::fetch::retry::{self, RetryPolicy, Verdict};
use crate::fetch::{Fetcher, Keep, Response, Validators};
use crate::host::HostKey;
use crate::host::slots::HostLimits;

/// The result of [`fetch_with_retries`].
#[derive(Debug)]
pub(crate) struct Attempted {
    /// Attempts made (at least 1).
    pub attempts: u32,
    /// The last attempt's result.
    pub result: Result<Response, FetchFailure>,
    /// When the first attempt started (slots taken), on both clocks.
    pub started: (tokio::time::Instant, chrono::DateTime<chrono::Utc>),
    /// The global slot the last attempt ran under, kept while its body is
    /// handled; `None` when a stop came during a back-off.
    pub global: Option<OwnedSemaphorePermit>,
}

/// The caps an attempt waits for.
pub(crate) struct Gates<'a> {
    pub hosts: &'a Arc<HostLimits>,
    pub global: &'a Arc<Semaphore>,
}

/// Fetches `url` (a hop of the input `origin`, see [`Fetcher::get_from`]),
/// conditionally on `validators` when given, until it succeeds, fails for
/// good, runs out of tries, or `cancel` fires; `None` when it fired before the
/// first attempt could start. A `304` is an answer like a `200` (the policy
/// never retries it), not a failure.
pub(crate) async fn fetch_with_retries(
    fetcher: &Fetcher,
    policy: &RetryPolicy,
    gates: Gates<'_>,
    (url, origin, validators): (&Url, &Url, Option<&Validators>),
    keep: Keep,
    cancel: &CancellationToken,
) -> Option<Attempted> {
    let key = HostKey::of(url);
    let mut tries = retry::Tries::default();
    let mut last: Option<Attempted> = None;
    let mut started = None;
    loop {
        let slots = async {
            let host = gates.hosts.acquire(key.clone()).await;
            let global = gates.global.clone().acquire_owned().await.ok()?;
            Some((host, global))
        };
        // `biased`, the stop first: unbiased, `select!` picks at random
        // among ready branches, so a stop already requested lost to a free
        // slot half the time and a chain went on fetching (a flaky resume
        // test found it).
        let (host, global) = tokio::select! {
            biased;
            () = cancel.cancelled() => return last,
            slots = slots => match slots {
                Some(slots) => slots,
                None => return last,
            },
        };
        let attempt = tries.attempts() + 1;
        let started =
            *started.get_or_insert_with(|| (tokio::time::Instant::now(), chrono::Utc::now()));
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
        let (verdict, feedback) = retry::judge(policy, tries, &result);
        tries = tries.after(match &result {
            Ok(resp) => retry::AttemptResult::Status(resp.status, None),
            Err(failure) => retry::AttemptResult::Failed(failure.kind),
        });
        host.finish(feedback);
        let mut done = Attempted {
            attempts: attempt,
            result,
            started,
            global: Some(global),
        };
        match verdict {
            Verdict::Done => return Some(done),
            Verdict::Retry(wait) => {
                tracing::debug!(%url, attempt, ?wait, "retrying");
                done.global = None;
                last = Some(done);
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => return last,
                    () = tokio::time::sleep(wait) => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::FetchConfig;
    use crate::host::HostPolicy;

    /// A stop already requested wins over a slot that is free: the request
    /// is not made. Unbiased, `select!` chose at random between the two
    /// ready branches, so each try below would have fetched half the time.
    #[tokio::test]
    async fn a_stop_already_requested_wins_over_a_free_slot() {
        let fetcher = Fetcher::new(FetchConfig::default()).unwrap();
        let hosts = HostLimits::new(HostPolicy::default());
        let global = Arc::new(Semaphore::new(4));
        let cancel = CancellationToken::new();
        cancel.cancel();
        // Nothing listens there; a request made would end as a failure,
        // which is `Some` too.
        let url = Url::parse("http://127.0.0.1:9/").unwrap();
        for _ in 0..32 {
            let gates = Gates {
                hosts: &hosts,
                global: &global,
            };
            let got = fetch_with_retries(
                &fetcher,
                &RetryPolicy::default(),
                gates,
                (&url, &url, None),
                Keep::Html,
                &cancel,
            )
            .await;
            assert!(got.is_none());
        }
    }
}
