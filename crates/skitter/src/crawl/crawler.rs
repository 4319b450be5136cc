//! The crawler: wires the frontier, the scheduler, the fetcher and the sinks
//! together for one run, and owns its shutdown.
//!
//! `run` seeds the frontier with the roots, starts one task that feeds every
//! finished page to the report tally and the sinks (through a bounded channel),
//! drives the scheduler until the frontier is exhausted or a stop is requested,
//! then closes the sinks and builds the [`Report`].

use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::crawl::config::{Config, CrawlerBuilder};
use crate::crawl::ctx::{Ctx, Outputs, Pipeline, Signals};
use crate::crawl::halt::Halt;
use crate::crawl::progress::Progress;
use crate::crawl::{handoff, scheduler};
use crate::fetch::Fetcher;
use crate::frontier::{Frontier, FrontierError, Request};
use crate::output::Sink;
use crate::output::report::{Report, ReportSummary, StopReason, Tally};
use crate::parse::discovery::SitemapRegistry;
use crate::robots::RobotsStore;
use crate::state::store::OutcomeStore;

/// A configured crawl, ready to run. Build one with [`Crawler::builder`].
pub struct Crawler {
    config: Config,
    fetcher: Fetcher,
    frontier: Arc<dyn Frontier>,
    sinks: Vec<Box<dyn Sink>>,
    progress: Progress,
    outcomes: Option<Arc<dyn OutcomeStore + Send + Sync>>,
    robots_store: Option<Arc<dyn RobotsStore>>,
}

/// The optional parts a builder hands over besides the configuration.
pub(crate) struct Parts {
    pub(crate) sinks: Vec<Box<dyn Sink>>,
    pub(crate) outcomes: Option<Arc<dyn OutcomeStore + Send + Sync>>,
    pub(crate) robots_store: Option<Arc<dyn RobotsStore>>,
}

/// The crawl could not start.
#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    /// The frontier refused the roots.
    #[error("cannot seed the frontier: {0}")]
    Frontier(#[from] FrontierError),
    /// The crawl asks for rendering and the browser did not start.
    #[error("cannot render pages: {0}")]
    Render(#[from] crate::render::RenderError),
}

impl Crawler {
    /// Starts configuring a crawl.
    pub fn builder() -> CrawlerBuilder {
        CrawlerBuilder::default()
    }

    pub(crate) fn new(
        config: Config,
        fetcher: Fetcher,
        frontier: Arc<dyn Frontier>,
        parts: Parts,
    ) -> Self {
        Crawler {
            config,
            fetcher,
            frontier,
            sinks: parts.sinks,
            progress: Progress::default(),
            outcomes: parts.outcomes,
            robots_store: parts.robots_store,
        }
    }

    /// A handle on the live counters, readable while [`Crawler::run`] works.
    pub fn progress(&self) -> Progress {
        self.progress.clone()
    }

    /// The validated configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Crawls until nothing is left or `cancel` fires, then reports. Page failures
    /// are in the report; a failing output or frontier stops the crawl early with
    /// [`StopReason::Fatal`] in the report.
    pub async fn run(self, cancel: CancellationToken) -> Result<Report, CrawlError> {
        let started = Instant::now();
        let roots = self.config.roots.iter().map(|url| Request {
            url: url.clone(),
            depth: 0,
            redirects_left: self.config.max_redirect,
            parent: None,
        });
        let sitemaps = SitemapRegistry::new(self.config.sitemaps);
        let probes = sitemaps
            .probes(&self.config.roots)
            .into_iter()
            .map(|url| Request {
                url,
                depth: 0,
                redirects_left: self.config.max_redirect,
                parent: None,
            });
        // Before the roots are offered: a crawl that cannot render fails
        // without having changed a durable frontier.
        let renderer = match self.config.render.mode {
            crate::render::RenderMode::Never => None,
            _ => Some(Arc::new(
                crate::render::Renderer::start(self.config.render.clone()).await?,
            )),
        };
        let seeded = self.frontier.offer(roots.chain(probes).collect()).await?;
        self.progress.discovered(seeded);
        let pipeline = Pipeline::new(
            &self.config,
            self.fetcher.clone(),
            self.robots_store.clone(),
            sitemaps,
            renderer.clone(),
            &self.sinks,
        );
        let halt = Arc::new(Halt::default());
        let (tx, rx) = mpsc::channel(self.config.max_tasks.clamp(64, 4096));
        let outputs_first = self.frontier.durable() && !self.sinks.is_empty();
        // With an outcome store the report is rebuilt from it at the end, so the
        // live tally need not keep records (it used to: twice the memory).
        let tally = Arc::new(Mutex::new(match self.outcomes {
            Some(_) => Tally::counting(),
            None => Tally::new(&self.config.report),
        }));
        let sink_task = tokio::spawn(handoff::drive_sinks(
            rx,
            self.sinks,
            halt.clone(),
            tally.clone(),
        ));
        let max_tasks = self.config.max_tasks;
        let report_options = self.config.report.clone();
        let grace = self.config.grace;
        let ctx = Arc::new(Ctx::new(
            self.config,
            self.frontier.clone(),
            pipeline,
            Signals::new(halt.clone(), self.progress.clone()),
            Outputs {
                pages: tx,
                first: outputs_first,
            },
        ));
        // Their counts go to the report once the workers are done.
        let guards = ctx.guards.clone();
        let watcher = {
            let halt = halt.clone();
            tokio::spawn(async move {
                tokio::select! {
                    _ = cancel.cancelled() => halt.set(StopReason::Interrupted),
                    _ = halt.stopped() => {}
                }
            })
        };
        let mut stop = scheduler::run(ctx).await;
        watcher.abort();
        if let Some(renderer) = &renderer {
            renderer.shutdown().await;
        }
        // After Ctrl-C the whole stop fits in one grace period from the signal:
        // fetches had three quarters of it (see `scheduler`), the outputs get
        // what is left. After a limit, the outputs get a grace period of their own.
        let grace = match &stop {
            None => None,
            Some(StopReason::Interrupted) => Some(grace.saturating_sub(halt.since())),
            Some(_) => Some(grace),
        };
        let sinks = match finish_outputs(sink_task, grace).await {
            Ok(sinks) => sinks,
            Err(why) => {
                tracing::error!("{why}");
                // An interrupted crawl stays interrupted; a limit stop that
                // loses output is an error.
                if let Some(StopReason::Limit(_)) | None = stop {
                    stop = Some(StopReason::Fatal(why.clone()));
                }
                halt.fail(why);
                Vec::new()
            }
        };
        let mut tally = std::mem::take(&mut *tally.lock().unwrap_or_else(|e| e.into_inner()));
        if let Some(store) = &self.outcomes {
            // A resumed crawl reports every URL of every run, each exactly once.
            let mut all = Tally::new(&report_options);
            let mut spill = Ok(());
            let read = store.for_each_outcome(&mut |record| {
                if let Err(e) = all.add(&record) {
                    spill = Err(e);
                }
            });
            match (read, spill) {
                (Ok(()), Ok(())) => tally = all,
                (Err(e), _) => halt.fail(format!("crawl store: {e}")),
                (_, Err(e)) => halt.fail(e.to_string()),
            }
        }
        if let Some(pass) = self.frontier.pass().filter(|p| p.number > 1) {
            tally.bump("recrawl_pass", u64::from(pass.number));
            tally.bump("recrawl_not_due", pass.not_due);
        }
        guards.count_into(&mut tally);
        for (key, n) in renderer.iter().flat_map(|r| r.stats()) {
            tally.bump(key, n);
        }
        let counts = self.frontier.counts().await.unwrap_or_default();
        let stopped = stop.or_else(|| halt.is_set().then(|| halt.reason()));
        Ok(tally.finish(ReportSummary {
            todo: counts.queued + counts.leased,
            elapsed: started.elapsed(),
            max_tasks,
            stopped,
            sinks,
            proxies: self.fetcher.proxy_stats(),
        }))
    }
}

/// Waits for the outputs to write what is left and close. After an early stop
/// (`grace` given) they get one grace period of their own, since they may have
/// had to wait for the last fetches; one still busy then is abandoned, so a
/// stuck output cannot hold the crawl.
async fn finish_outputs(
    mut task: tokio::task::JoinHandle<Vec<crate::output::SinkSummary>>,
    grace: Option<std::time::Duration>,
) -> Result<Vec<crate::output::SinkSummary>, String> {
    let joined = match grace {
        None => (&mut task).await,
        Some(grace) => match tokio::time::timeout(grace, &mut task).await {
            Ok(joined) => joined,
            Err(_) => {
                task.abort();
                return Err(
                    "outputs did not finish within the grace period and may be incomplete".into(),
                );
            }
        },
    };
    joined.map_err(|e| format!("output task panicked: {e}"))
}
