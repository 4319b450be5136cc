//! What every worker of one crawl shares, in groups with one job each: the
//! per-URL [`Pipeline`], the [`Guards`] and limits, the stop [`Signals`] and
//! the way to the [`Outputs`], beside the settings and the frontier that
//! nearly every step reads. Built by the crawler for one run; the scheduler
//! and the per-URL pipeline take it by reference, and a step that needs only
//! one group takes only that.

use std::sync::Arc;

use crate::crawl::config::Config;
use crate::crawl::handoff::ToSinks;
use crate::frontier::{Fetched, Frontier, Request};
use crate::host::{HostKey, Throttle};

mod guards;
mod outputs;
mod pipeline;
mod signals;

pub(crate) use guards::Guards;
pub(crate) use outputs::Outputs;
pub(crate) use pipeline::Pipeline;
pub(crate) use signals::Signals;

/// What every worker shares.
pub(crate) struct Ctx {
    pub(crate) config: Config,
    pub(crate) frontier: Arc<dyn Frontier>,
    pub(crate) pipeline: Pipeline,
    /// Shared with the crawler, which reads their counts for the report once
    /// the workers are done.
    pub(crate) guards: Arc<Guards>,
    pub(crate) signals: Signals,
    pub(crate) outputs: Outputs,
}

impl Ctx {
    /// The context of one run: its guards are made from `config` and what
    /// earlier runs `fetched`, the other
    /// groups were made by the crawler, which needed parts of them first (the
    /// sitemaps and the browser to seed the frontier, the outputs' channel to
    /// start their task).
    pub(crate) fn new(
        config: Config,
        frontier: Arc<dyn Frontier>,
        pipeline: Pipeline,
        signals: Signals,
        outputs: Outputs,
        fetched: Fetched,
    ) -> Ctx {
        Ctx {
            guards: Arc::new(Guards::new(&config, fetched)),
            config,
            frontier,
            pipeline,
            signals,
            outputs,
        }
    }

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
            self.guards.slowdowns.throttled(host, t);
            // The sink task only ends early after a fatal error, which already
            // stopped the crawl.
            let _ = self
                .outputs
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
                self.signals.progress.discovered(n);
                n
            }
            Err(e) => {
                self.signals.stop_signal.fail(format!("frontier: {e}"));
                0
            }
        }
    }
}
