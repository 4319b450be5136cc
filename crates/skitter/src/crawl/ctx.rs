//! What every worker of one crawl shares: the settings, the fetcher, the
//! frontier, the way to the outputs, the stop signal and the per-crawl guards.
//! Built by the crawler for one run; the scheduler and the per-URL pipeline
//! take it by reference.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use crate::base::trap::TrapGuard;
use crate::crawl::admission::{Gate, LinkSkips};
use crate::crawl::body::CpuPool;
use crate::crawl::config::Config;
use crate::crawl::halt::Halt;
use crate::crawl::handoff::ToSinks;
use crate::crawl::progress::Progress;
use crate::fetch::{Fetcher, Keep};
use crate::frontier::{Frontier, Request};
use crate::host::quota::{HostQuota, PageBudget};
use crate::host::slots::HostLimits;
use crate::host::slowdown::Slowdowns;
use crate::host::{HostKey, Throttle};
use crate::parse::discovery::SitemapRegistry;
use crate::robots::RobotsCache;

/// What every worker shares.
pub(crate) struct Ctx {
    pub(crate) config: Config,
    pub(crate) fetcher: Fetcher,
    pub(crate) frontier: Arc<dyn Frontier>,
    pub(crate) pages: mpsc::Sender<ToSinks>,
    /// Outputs write a page before its lease completes (see `handoff`).
    pub(crate) outputs_first: bool,
    pub(crate) keep: Keep,
    /// Whether a sink wants the decoded copy of compressed HTML pages.
    pub(crate) keep_decoded: bool,
    /// The rules every discovered URL passes.
    pub(crate) gate: Gate,
    pub(crate) link_skips: Arc<LinkSkips>,
    /// Woken when a lease completes or URLs are offered, so a waiting scheduler
    /// looks at the frontier again.
    pub(crate) changed: Notify,
    pub(crate) halt: Arc<Halt>,
    /// Aborts in-flight fetches once the grace period is over.
    pub(crate) hard_stop: CancellationToken,
    pub(crate) progress: Progress,
    pub(crate) robots: Option<RobotsCache>,
    /// Hosts whose robots `Crawl-delay` was already handed to the frontier.
    pub(crate) delays_applied: Mutex<HashSet<HostKey>>,
    pub(crate) budget: PageBudget,
    pub(crate) quota: HostQuota,
    pub(crate) traps: Arc<TrapGuard>,
    pub(crate) sitemaps: SitemapRegistry,
    pub(crate) slowdowns: Arc<Slowdowns>,
    /// Runs the decoding and link extraction of large bodies off the async threads.
    pub(crate) cpu: CpuPool,
    /// The browser, when pages may be rendered (`--render auto|always`).
    pub(crate) renderer: Option<Arc<crate::render::Renderer>>,
    /// Per-host politeness of the browser's requests, under the crawl's
    /// rules (see `worker::render`).
    pub(crate) render_hosts: Arc<HostLimits>,
}

impl Ctx {
    /// The recrawl pass, when the frontier remembers visits (see `recrawl`).
    /// Asked each time: a worker joining a shared crawl learns it from its
    /// first claim.
    pub(crate) fn pass(&self) -> Option<crate::state::recrawl::PassInfo> {
        self.frontier.pass()
    }

    /// Notes what a frontier answered to a hand-back: a slow-down of `host`,
    /// tallied for the report and passed to the outputs.
    pub(crate) async fn throttled(&self, host: &HostKey, throttle: Option<Throttle>) {
        if let Some(t) = throttle {
            tracing::debug!(%host, reason = t.reason.as_str(), cut = t.cut, limit = t.limit, gap = ?t.gap, "host slowed down");
            self.slowdowns.throttled(host, t);
            // The sink task only ends early after a fatal error, which already
            // stopped the crawl.
            let _ = self
                .pages
                .send(ToSinks::Throttle(host.as_str().to_owned(), t))
                .await;
        }
    }

    /// Offers URLs to the frontier; a frontier failure stops the crawl.
    pub(crate) async fn offer(&self, requests: Vec<Request>) -> usize {
        if requests.is_empty() {
            return 0;
        }
        match self.frontier.offer(requests).await {
            Ok(n) => {
                self.progress.discovered(n);
                n
            }
            Err(e) => {
                self.halt.fail(format!("frontier: {e}"));
                0
            }
        }
    }
}
