//! The report counters of rendering: what the browser's requests came to and
//! how often the browser was restarted (how often it ran without its sandbox
//! the browser host counts). Plain atomics, added to once per
//! render, read once at the end.

use std::sync::atomic::{AtomicU64, Ordering};

use super::{Refusal, Rendered};

/// Counters shared by every render of a crawl.
#[derive(Debug, Default)]
pub(super) struct RenderStats {
    fetched: AtomicU64,
    scope: AtomicU64,
    robots: AtomicU64,
    address: AtomicU64,
    method: AtomicU64,
    failed: AtomicU64,
    budget: AtomicU64,
    restarts: AtomicU64,
}

impl RenderStats {
    /// Adds one finished render's requests.
    pub(super) fn rendered(&self, r: &Rendered) {
        self.fetched.fetch_add(r.fetched, Ordering::Relaxed);
        self.budget.fetch_add(r.over_budget, Ordering::Relaxed);
        for (_, why) in &r.refused {
            self.refused(why).fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts one browser restart.
    pub(super) fn restarted(&self) {
        self.restarts.fetch_add(1, Ordering::Relaxed);
    }

    fn refused(&self, why: &Refusal) -> &AtomicU64 {
        match why {
            Refusal::Scope => &self.scope,
            Refusal::Robots => &self.robots,
            Refusal::Address => &self.address,
            Refusal::Method => &self.method,
            Refusal::Failed(_) => &self.failed,
        }
    }

    /// The counters as they stand.
    pub(super) fn snapshot(&self) -> RenderCounts {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        RenderCounts {
            requests: get(&self.fetched),
            restarts: get(&self.restarts),
            refused_scope: get(&self.scope),
            refused_robots: get(&self.robots),
            refused_address: get(&self.address),
            refused_method: get(&self.method),
            request_failed: get(&self.failed),
            refused_budget: get(&self.budget),
            unsandboxed: 0,
        }
    }
}

/// What the browser's requests came to, for the report's `render_*` counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderCounts {
    /// Requests the crawl fetched for the browser.
    pub requests: u64,
    /// Browser restarts.
    pub restarts: u64,
    /// Requests refused as out of scope.
    pub refused_scope: u64,
    /// Requests refused by robots.txt.
    pub refused_robots: u64,
    /// Requests refused by the address policy.
    pub refused_address: u64,
    /// Requests refused for their method.
    pub refused_method: u64,
    /// Requests that failed.
    pub request_failed: u64,
    /// Requests refused past their render's budget of requests or bytes.
    pub refused_budget: u64,
    /// Browser starts without Chromium's sandbox.
    pub unsandboxed: u64,
}
