//! The report counters of rendering: what the browser's requests came to and
//! how often the browser was restarted. Plain atomics, added to once per
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
    restarts: AtomicU64,
}

impl RenderStats {
    /// Adds one finished render's requests.
    pub(super) fn rendered(&self, r: &Rendered) {
        self.fetched.fetch_add(r.fetched, Ordering::Relaxed);
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

    /// The counters by report name.
    pub(super) fn snapshot(&self) -> Vec<(&'static str, u64)> {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mut out = vec![
            ("render_requests", get(&self.fetched)),
            ("render_restarts", get(&self.restarts)),
        ];
        for why in [
            Refusal::Scope,
            Refusal::Robots,
            Refusal::Address,
            Refusal::Method,
            Refusal::Failed(String::new()),
        ] {
            out.push((why.counter(), get(self.refused(&why))));
        }
        out
    }
}
