//! The gate every discovered URL passes before it reaches the frontier: it must
//! parse, be http(s), be in scope, pass the include/exclude patterns, be within
//! the depth limit and trip no crawler-trap rule. A URL that fails is counted by reason, never silently lost.

use std::sync::atomic::{AtomicU64, Ordering};

use url::Url;

use crate::config::Config;
use crate::outcome::SkipReason;
use crate::trap::TrapGuard;
use crate::urlnorm;

/// What the gate decided for one URL.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Admission {
    /// Queue this (normalised) URL.
    Admit(Url),
    /// Do not follow it, for this reason.
    Skip(SkipReason),
}

/// Decides whether a discovered URL (already resolved against its page) may be
/// queued at `depth`.
pub(crate) fn admit(
    config: &Config,
    traps: &TrapGuard,
    url: Result<Url, String>,
    depth: u32,
) -> Admission {
    let Ok(url) = url else {
        return Admission::Skip(SkipReason::Malformed);
    };
    if !urlnorm::is_crawlable_scheme(&url) {
        return Admission::Skip(SkipReason::Scheme);
    }
    let url = urlnorm::normalize(url);
    if !config.scope.allows(&url) {
        return Admission::Skip(SkipReason::Scope);
    }
    if !pattern_allows(config, &url) {
        return Admission::Skip(SkipReason::Exclude);
    }
    if config.limits.max_depth.is_some_and(|max| depth > max) {
        return Admission::Skip(SkipReason::Limit);
    }
    // Last, so URLs the crawl would not follow anyway never use up trap budgets.
    if traps.check(&url).is_err() {
        return Admission::Skip(SkipReason::Trap);
    }
    Admission::Admit(url)
}

/// `--exclude` wins over `--include`; with no include pattern everything is included.
pub(crate) fn pattern_allows(config: &Config, url: &Url) -> bool {
    let s = url.as_str();
    if config.exclude.iter().any(|re| re.is_match(s)) {
        return false;
    }
    config.include.is_empty() || config.include.iter().any(|re| re.is_match(s))
}

/// Counts of discovered links that were not followed, by reason.
#[derive(Debug, Default)]
pub(crate) struct LinkSkips {
    scope: AtomicU64,
    scheme: AtomicU64,
    exclude: AtomicU64,
    malformed: AtomicU64,
    robots: AtomicU64,
    trap: AtomicU64,
    limit: AtomicU64,
}

impl LinkSkips {
    fn counter(&self, reason: SkipReason) -> &AtomicU64 {
        match reason {
            SkipReason::Scope => &self.scope,
            SkipReason::Scheme => &self.scheme,
            SkipReason::Exclude => &self.exclude,
            SkipReason::Malformed => &self.malformed,
            SkipReason::Robots | SkipReason::RobotsUnavailable => &self.robots,
            SkipReason::Trap => &self.trap,
            SkipReason::Limit => &self.limit,
        }
    }

    pub(crate) fn count(&self, reason: SkipReason) {
        self.counter(reason).fetch_add(1, Ordering::Relaxed);
    }

    /// `(links_skipped_<reason>, n)` for every reason seen.
    pub(crate) fn snapshot(&self) -> Vec<(String, u64)> {
        [
            SkipReason::Scope,
            SkipReason::Scheme,
            SkipReason::Exclude,
            SkipReason::Malformed,
            SkipReason::Robots,
            SkipReason::Trap,
            SkipReason::Limit,
        ]
        .into_iter()
        .map(|r| {
            (
                format!("links_skipped_{r}"),
                self.counter(r).load(Ordering::Relaxed),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect()
    }
}
