//! The crawler: wires the frontier, the scheduler, the fetcher and the sinks
//! together for one run, and owns its shutdown.
//!
//! `run` seeds the frontier with the roots, starts one task that feeds every
//! finished page to the report tally and the sinks (through a bounded channel),
//! drives the scheduler until the frontier is exhausted or a stop is requested,
//! then closes the sinks and builds the [`Report`].

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::crawl::config::{Config, CrawlerBuilder};
use crate::crawl::ctx::{Ctx, Guards, Outputs, Pipeline, Signals};
use crate::crawl::live::{self, Live};
use crate::crawl::progress::Progress;
use crate::crawl::steer::Steer;
use crate::crawl::stop_signal::StopSignal;
use crate::crawl::{handoff, scheduler};
use crate::fetch::Fetcher;
use crate::frontier::{Frontier, FrontierError, Request, RequestKind};
use crate::output::report::{Counters, Report, ReportOptions, ReportSummary, StopReason, Tally};
use crate::output::{Sink, SinkSummary};
use crate::parse::discovery::SitemapRegistry;
use crate::render::Renderer;
use crate::robots::RobotsStore;
use crate::state::recrawl::PassInfo;
use crate::state::store::OutcomeStore;

/// A configured crawl, ready to run. Build one with [`Crawler::builder`].
pub struct Crawler {
    config: Config,
    fetcher: Fetcher,
    frontier: Arc<dyn Frontier>,
    sinks: Vec<Box<dyn Sink>>,
    progress: Progress,
    live: Live,
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

    /// Starts configuring a crawl from a whole settings value (read from a
    /// file, or a shared crawl's spec); the builder's setters change it
    /// further.
    pub fn from_settings(settings: crate::settings::CrawlSettings) -> CrawlerBuilder {
        CrawlerBuilder::from_settings(settings)
    }

    pub(crate) fn new(
        config: Config,
        fetcher: Fetcher,
        frontier: Arc<dyn Frontier>,
        parts: Parts,
    ) -> Self {
        let progress = Progress::default();
        // With an outcome store the report is rebuilt from it at the end, so the
        // live tally need not keep records (it used to: twice the memory).
        let tally = Arc::new(Mutex::new(if parts.outcomes.is_some() {
            Tally::counting()
        } else {
            Tally::new(&config.report)
        }));
        let live = Live::new(
            progress.clone(),
            Steer::new(config.max_tasks, frontier.politeness()),
            tally,
            frontier.clone(),
            fetcher.clone(),
        );
        Crawler {
            config,
            fetcher,
            frontier,
            sinks: parts.sinks,
            progress,
            live,
            outcomes: parts.outcomes,
            robots_store: parts.robots_store,
        }
    }

    /// A handle on the live counters, readable while [`Crawler::run`] works.
    pub fn progress(&self) -> Progress {
        self.progress.clone()
    }

    /// A handle on the crawl's numbers for a metrics endpoint or a dashboard,
    /// readable while [`Crawler::run`] works and after.
    pub fn live(&self) -> Live {
        self.live.clone()
    }

    /// The handle that pauses, resumes and re-caps the crawl while it runs
    /// (a stop is the cancellation token given to [`Crawler::run`]).
    pub fn steer(&self) -> Steer {
        self.live.steer().clone()
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
        let config = self.config;
        let sitemaps = SitemapRegistry::new(config.sitemaps);
        // Before the roots are offered: a crawl that cannot render fails
        // without having changed a durable frontier.
        let renderer = start_renderer(&config).await?;
        seed(&config, &sitemaps, &*self.frontier, &self.progress).await?;
        // A resumed crawl's limits count on from what its earlier runs fetched.
        let fetched = self.frontier.fetched().await?;
        // Before the sinks go to their task: they say which bodies to keep.
        let pipeline = Pipeline::new(
            &config,
            self.fetcher.clone(),
            self.robots_store,
            sitemaps,
            renderer.clone(),
            &self.sinks,
            self.live.steer().live_policy(),
        );
        let stop_signal = Arc::new(StopSignal::default());
        let live = self.live;
        let (outputs, output_task) =
            OutputTask::start(self.sinks, &config, &*self.frontier, &stop_signal, &live);
        let (grace, max_tasks, options) = (config.grace, config.max_tasks, config.report.clone());
        let signals = Signals::new(stop_signal.clone(), self.progress, live.steer().clone());
        let ctx = Ctx::new(
            config,
            self.frontier.clone(),
            pipeline,
            signals,
            outputs,
            fetched,
        );
        // Their counts go to the report once the workers are done.
        let guards = ctx.guards.clone();
        live.running(guards.clone(), renderer.clone());
        let mut stop = schedule(Arc::new(ctx), &stop_signal, cancel).await;
        if let Some(renderer) = &renderer {
            renderer.shutdown().await;
        }
        let (sinks, tally) = output_task
            .finish(&mut stop, grace, &stop_signal, &live)
            .await;
        let tally = match &self.outcomes {
            Some(store) => rebuild(&**store, tally, &options, &stop_signal),
            None => tally,
        };
        let counts = self.frontier.counts().await.unwrap_or_default();
        let summary = ReportSummary {
            todo: counts.queued + counts.leased,
            elapsed: started.elapsed(),
            max_tasks,
            stopped: stop.or_else(|| stop_signal.is_set().then(|| stop_signal.reason())),
            sinks,
            proxies: self.fetcher.proxy_stats(),
        };
        let pass = self.frontier.pass();
        Ok(report(tally, &guards, renderer.as_deref(), pass, summary))
    }
}

/// Starts the browser when pages may be rendered (or photographed).
async fn start_renderer(config: &Config) -> Result<Option<Arc<Renderer>>, CrawlError> {
    if !config.render.needs_browser() {
        return Ok(None);
    }
    Ok(Some(Arc::new(
        Renderer::start(config.render.clone()).await?,
    )))
}

/// Offers the roots, and the sitemaps to probe for them, to the frontier.
async fn seed(
    config: &Config,
    sitemaps: &SitemapRegistry,
    frontier: &dyn Frontier,
    progress: &Progress,
) -> Result<(), CrawlError> {
    let request = |kind: RequestKind| {
        move |url: Url| Request {
            url,
            depth: 0,
            redirects_left: config.max_redirect,
            parent: None,
            kind,
        }
    };
    let roots = config.roots.iter().cloned().map(request(RequestKind::Page));
    let guess = RequestKind::Sitemap {
        trusted: false,
        nesting: 0,
    };
    let guesses = sitemaps
        .guesses(&config.roots)
        .into_iter()
        .map(request(guess));
    let seeded = frontier.offer(roots.chain(guesses).collect()).await?;
    progress.discovered(seeded);
    Ok(())
}

/// Runs the scheduler to the end of the crawl, with `cancel` (Ctrl-C) as
/// one more way to stop it; returns why it stopped early, if it did.
async fn schedule(
    ctx: Arc<Ctx>,
    stop_signal: &Arc<StopSignal>,
    cancel: CancellationToken,
) -> Option<StopReason> {
    let watcher = {
        let stop_signal = stop_signal.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = cancel.cancelled() => stop_signal.set(StopReason::Interrupted),
                _ = stop_signal.stopped() => {}
            }
        })
    };
    let stop = scheduler::run(ctx).await;
    watcher.abort();
    stop
}

/// The task that feeds every finished page to the report tally and the
/// sinks, while the crawl runs. The tally lives outside it, so the report
/// survives an output that never returns and is abandoned.
struct OutputTask {
    task: JoinHandle<Vec<SinkSummary>>,
}

impl OutputTask {
    /// Starts the task, feeding `live`'s tally; answers the workers' side
    /// of its channel with it.
    fn start(
        sinks: Vec<Box<dyn Sink>>,
        config: &Config,
        frontier: &dyn Frontier,
        stop_signal: &Arc<StopSignal>,
        live: &Live,
    ) -> (Outputs, OutputTask) {
        let (tx, rx) = mpsc::channel(config.max_tasks.clamp(64, 4096));
        let first = frontier.durable() && !sinks.is_empty();
        let task = tokio::spawn(handoff::drive_sinks(
            rx,
            sinks,
            stop_signal.clone(),
            live.tally(),
            first && frontier.syncs(),
        ));
        (Outputs { pages: tx, first }, OutputTask { task })
    }

    /// Once the workers are done (their side of the channel dropped), waits
    /// for the outputs to write what is left and close (see
    /// [`finish_outputs`]); answers their summaries and the live tally. An
    /// output that fails or is abandoned stops the crawl, and makes a crawl
    /// stopped by a limit, or not at all, end as failed.
    async fn finish(
        self,
        stop: &mut Option<StopReason>,
        grace: Duration,
        stop_signal: &StopSignal,
        live: &Live,
    ) -> (Vec<SinkSummary>, Tally) {
        // After Ctrl-C the whole stop fits in one grace period from the signal:
        // fetches had three quarters of it (see `scheduler`), the outputs get
        // what is left. After a limit, the outputs get a grace period of their own.
        let grace = match &stop {
            None => None,
            Some(StopReason::Interrupted) => Some(grace.saturating_sub(stop_signal.since())),
            Some(_) => Some(grace),
        };
        let sinks = match finish_outputs(self.task, grace).await {
            Ok(sinks) => sinks,
            Err(why) => {
                tracing::error!("{why}");
                // An interrupted crawl stays interrupted; a limit stop that
                // loses output is an error.
                if let Some(StopReason::Limit(_)) | None = stop {
                    *stop = Some(StopReason::Fatal(why.clone()));
                }
                stop_signal.fail(why);
                Vec::new()
            }
        };
        (sinks, live.take_tally())
    }
}

/// The tally of every URL of every run of a resumed crawl, each exactly
/// once, from the outcome store; the live `tally` if the store cannot be read
/// (which stops the crawl as failed).
fn rebuild(
    store: &(dyn OutcomeStore + Send + Sync),
    tally: Tally,
    options: &ReportOptions,
    stop_signal: &StopSignal,
) -> Tally {
    let mut all = Tally::new(options);
    let mut spill = Ok(());
    let read = store.for_each_outcome(&mut |record| {
        if let Err(e) = all.add(&record) {
            spill = Err(e);
        }
    });
    match (read, spill) {
        (Ok(()), Ok(())) => return all,
        (Err(e), _) => stop_signal.fail(format!("crawl store: {e}")),
        (_, Err(e)) => stop_signal.fail(e.to_string()),
    }
    tally
}

/// The report: the tally, with the counters kept outside it during the run
/// (the guards', the browser's, the recrawl pass), and the run's summary.
fn report(
    mut tally: Tally,
    guards: &Guards,
    renderer: Option<&Renderer>,
    pass: Option<PassInfo>,
    summary: ReportSummary,
) -> Report {
    let mut counts = Counters::default();
    if let Some(pass) = pass.filter(|p| p.number > 1) {
        counts.recrawl_pass = u64::from(pass.number);
        counts.recrawl_not_due = pass.not_due;
    }
    if let Some(r) = renderer {
        live::render_counts(r, &mut counts);
    }
    guards.count_into(&mut counts);
    tally.add_unrecorded(&counts);
    tally.throttled(guards.throttled());
    tally.finish(summary)
}

/// Waits for the outputs to write what is left and close. After an early stop
/// (`grace` given) they get one grace period of their own, since they may have
/// had to wait for the last fetches; one still busy then is abandoned, so a
/// stuck output cannot hold the crawl.
async fn finish_outputs(
    mut task: JoinHandle<Vec<SinkSummary>>,
    grace: Option<Duration>,
) -> Result<Vec<SinkSummary>, String> {
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
