//! Checking one link the crawl does not answer for (a link to another site,
//! mostly): HEAD first, GET when HEAD is refused or unreliable (any error
//! status to a HEAD is asked again with GET, as servers answer HEAD with
//! 404, 405 or 403 where GET works) or when the link's fragment needs the
//! page's anchors. Redirects are followed by hand, so a loop is told from a
//! long chain and a permanent redirect is noted. Each request waits for its
//! host's politeness gate (`host::slots`: slots, gaps, 429 and
//! `Retry-After` slowing the host down) and a global slot; transient
//! failures are retried by the crawl's retry policy, and a link that
//! answers after a failure is flaky, not broken.

use std::collections::HashSet;
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::base::outcome::FetchFailure;
use crate::crawl::body::{CpuPool, INLINE_MAX};
use crate::fetch::decode::decode_prefix;
use crate::fetch::retry::{self, RetryPolicy, Verdict};
use crate::fetch::{Fetcher, Keep, Response};
use crate::host::HostKey;
use crate::host::slots::HostLimits;
use crate::parse::links::{DEFAULT_MAX_ANCHORS, extract_anchored};

/// What the checker needs, shared by every link it checks.
pub(crate) struct Remote {
    pub fetcher: Fetcher,
    pub hosts: Arc<HostLimits>,
    pub global: Arc<Semaphore>,
    pub retry: RetryPolicy,
    pub max_redirect: u32,
    pub cpu: Arc<CpuPool>,
}

/// How a chain of requests ended.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum End {
    /// The last response's status.
    Status(u16),
    /// No response after the retries.
    Failed(FetchFailure),
    /// A redirect back to a URL of the chain.
    Loop,
    /// More hops than `max_redirect`.
    TooMany,
}

/// What checking one URL found.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Answer {
    pub end: End,
    /// The target of the first hop, when it was a permanent redirect.
    pub moved_to: Option<Url>,
    /// The most attempts one request of the chain took, when some attempt
    /// failed before it answered.
    pub retried: Option<u32>,
    /// The final page's anchors, when asked for and it is HTML.
    pub anchors: Option<HashSet<String>>,
    /// Taken from the cache of an earlier check.
    pub cached: bool,
}

impl Remote {
    /// Checks `url`; with `anchors`, by GET, reading the final page's anchors.
    /// `None` when `cancel` fired first.
    pub(crate) async fn check(
        &self,
        url: &Url,
        anchors: bool,
        cancel: &CancellationToken,
    ) -> Option<Answer> {
        let mut here = url.clone();
        let mut seen = HashSet::from([here.clone()]);
        let mut answer = Answer {
            end: End::TooMany,
            moved_to: None,
            retried: None,
            anchors: None,
            cached: false,
        };
        for hop in 0..=self.max_redirect {
            let (result, tries) = self.ask(&here, anchors, cancel).await?;
            if tries > 1 && result.is_ok() {
                answer.retried = Some(answer.retried.unwrap_or(0).max(tries));
            }
            let resp = match result {
                Ok(resp) => resp,
                Err(failure) => {
                    answer.end = End::Failed(failure);
                    return Some(answer);
                }
            };
            let next = is_redirect(resp.status)
                .then(|| resp.location().and_then(|l| here.join(l).ok()))
                .flatten();
            let Some(mut next) = next else {
                answer.end = End::Status(resp.status);
                if anchors && resp.is_html() {
                    answer.anchors = Some(self.anchors_of(&here, resp).await);
                }
                return Some(answer);
            };
            next.set_fragment(None);
            if hop == 0 && matches!(resp.status, 301 | 308) {
                answer.moved_to = Some(next.clone());
            }
            if !seen.insert(next.clone()) {
                answer.end = End::Loop;
                return Some(answer);
            }
            here = next;
        }
        Some(answer)
    }

    /// One request with retries: HEAD, then GET when HEAD got an error
    /// status (or straight GET with `get`). The result and the attempts the
    /// last request took.
    async fn ask(
        &self,
        url: &Url,
        get: bool,
        cancel: &CancellationToken,
    ) -> Option<(Result<Response, FetchFailure>, u32)> {
        if !get {
            let (result, tries) = self.with_retries(url, false, cancel).await?;
            match &result {
                Ok(resp) if resp.status >= 400 => {}
                _ => return Some((result, tries)),
            }
        }
        self.with_retries(url, true, cancel).await
    }

    /// Attempts until the retry policy is satisfied, each under the host's
    /// gate and a global slot (held for the attempt only).
    async fn with_retries(
        &self,
        url: &Url,
        get: bool,
        cancel: &CancellationToken,
    ) -> Option<(Result<Response, FetchFailure>, u32)> {
        let key = HostKey::of(url);
        let mut tries = retry::Tries::default();
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let slots = async {
                let host = self.hosts.acquire(key.clone()).await;
                let global = self.global.clone().acquire_owned().await.ok()?;
                Some((host, global))
            };
            // `biased`: a stop wins over a ready slot (unbiased, `select!`
            // picks at random among ready branches).
            let (host, _global) = tokio::select! {
                biased;
                () = cancel.cancelled() => return None,
                slots = slots => slots?,
            };
            let result = if get {
                self.fetcher.get(url, Keep::Html).await
            } else {
                self.fetcher.head(url).await
            };
            let (verdict, feedback) = retry::judge(&self.retry, tries, &result);
            tries = tries.after(match &result {
                Ok(resp) => retry::AttemptResult::Status(resp.status, None),
                Err(failure) => retry::AttemptResult::Failed(failure.kind),
            });
            host.finish(feedback);
            match verdict {
                Verdict::Done => return Some((result, attempts)),
                Verdict::Retry(wait) => {
                    tracing::debug!(%url, ?wait, "link check: retrying");
                    tokio::select! {
                        biased;
                        () = cancel.cancelled() => return None,
                        () = tokio::time::sleep(wait) => {}
                    }
                }
            }
        }
    }

    /// The anchors of an HTML response (decoded first), read on the CPU
    /// pool when large.
    async fn anchors_of(&self, url: &Url, resp: Response) -> HashSet<String> {
        let Some(body) = resp.body else {
            return HashSet::new();
        };
        let coding = resp
            .headers
            .get("content-encoding")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let max = self.fetcher.config().max_body_size;
        let (url, charset, large) = (url.clone(), resp.charset.clone(), body.len() > INLINE_MAX);
        let read = move || {
            let Ok(decoded) = decode_prefix(coding.as_deref(), &body, max, resp.truncated) else {
                return HashSet::new();
            };
            extract_anchored(
                &decoded.body,
                charset.as_deref(),
                &url,
                1,
                DEFAULT_MAX_ANCHORS,
            )
            .anchors
            .into_iter()
            .collect()
        };
        if large || coding_is_set(&resp.headers) {
            self.cpu.run(read).await
        } else {
            self.cpu.run_inline(read).await
        }
    }
}

fn coding_is_set(headers: &reqwest::header::HeaderMap) -> bool {
    headers.contains_key("content-encoding")
}

/// Statuses whose `Location` is followed.
fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}
