//! The gate every discovered URL passes before it reaches the frontier: it must
//! parse, be http(s), be in scope, pass the include/exclude patterns, be within
//! the depth limit and trip no crawler-trap rule. A URL that fails is counted by reason, never silently lost.

mod memo;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use regex::Regex;
use url::Url;

use crate::base::outcome::SkipReason;
use crate::base::scope::Scope;
use crate::base::trap::TrapGuard;
use crate::base::urlnorm;

pub(crate) use memo::{Memo, Remembered};

/// What the gate decided for one URL.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Admission {
    /// Queue this (normalised) URL.
    Admit(Url),
    /// Do not follow it, for this reason.
    Skip(SkipReason),
}

/// The rules a discovered URL must pass, taken from the crawl's settings once.
#[derive(Debug)]
pub(crate) struct Gate {
    pub(crate) scope: Scope,
    pub(crate) exclude: Vec<Regex>,
    pub(crate) include: Vec<Regex>,
    pub(crate) max_depth: Option<u32>,
}

impl Gate {
    /// Decides whether a discovered URL (already resolved against its page) may
    /// be queued at `depth`.
    pub(crate) fn admit(
        &self,
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
        if !self.scope.allows(&url) {
            return Admission::Skip(SkipReason::Scope);
        }
        if !self.patterns_allow(&url) {
            return Admission::Skip(SkipReason::Exclude);
        }
        if self.max_depth.is_some_and(|max| depth > max) {
            return Admission::Skip(SkipReason::Limit);
        }
        // Last, so URLs the crawl would not follow anyway never use up trap budgets.
        if traps.check(&url).is_err() {
            return Admission::Skip(SkipReason::Trap);
        }
        Admission::Admit(url)
    }

    /// [`Gate::admit`] for a link found on a page, with the answers of
    /// earlier pages remembered in `memo` (see [`Memo`]): an admitted URL
    /// is checked again only against the depth limit.
    pub(crate) fn admit_link(
        &self,
        memo: &Memo,
        traps: &TrapGuard,
        url: Result<Url, String>,
        depth: u32,
    ) -> Admission {
        let Ok(url) = url else {
            return Admission::Skip(SkipReason::Malformed);
        };
        match memo.get(url.as_str()) {
            Some(Remembered::Skip(reason)) => return Admission::Skip(reason),
            Some(Remembered::Admit(_)) if self.max_depth.is_some_and(|max| depth > max) => {
                return Admission::Skip(SkipReason::Limit);
            }
            Some(Remembered::Admit(normal)) => return Admission::Admit(normal),
            None => {}
        }
        let key = url.as_str().to_owned();
        let answer = self.admit(traps, Ok(url), depth);
        match &answer {
            Admission::Admit(normal) => memo.put(&key, Remembered::Admit(normal.clone())),
            Admission::Skip(reason) if Remembered::lasts(*reason) => {
                memo.put(&key, Remembered::Skip(*reason));
            }
            Admission::Skip(_) => {}
        }
        answer
    }

    /// `--exclude` wins over `--include`; with no include pattern everything is included.
    pub(crate) fn patterns_allow(&self, url: &Url) -> bool {
        let s = url.as_str();
        if self.exclude.iter().any(|re| re.is_match(s)) {
            return false;
        }
        self.include.is_empty() || self.include.iter().any(|re| re.is_match(s))
    }
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
    /// Links past `--max-links-per-page`, never read.
    cut: AtomicU64,
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

    /// Counts `n` links a page had past the cap.
    pub(crate) fn cut(&self, n: u64) {
        if n > 0 {
            self.cut.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Links pages had past the cap, in all.
    pub(crate) fn cut_total(&self) -> u64 {
        self.cut.load(Ordering::Relaxed)
    }

    /// How many links each reason kept out, for every reason seen.
    pub(crate) fn snapshot(&self) -> BTreeMap<SkipReason, u64> {
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
        .map(|r| (r, self.counter(r).load(Ordering::Relaxed)))
        .filter(|(_, n)| *n > 0)
        .collect()
    }
}
