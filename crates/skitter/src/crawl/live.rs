//! A running crawl's numbers for whoever watches it (a metrics endpoint, a
//! dashboard): [`Live::snapshot`] gathers, on demand, what the crawl keeps
//! anyway — the report tally's counters and histograms, the live progress
//! counters, the guards' counts, the frontier's counts, the browser's and the
//! proxies' — into one [`LiveSnapshot`].
//!
//! Nothing is counted twice for it: reading costs one short lock of the tally
//! (a clone of its counters, a few dozen numbers) and one `counts` call of the
//! frontier, and nothing at all while nobody reads.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::crawl::ctx::Guards;
use crate::crawl::progress::{Progress, ProgressSnapshot};
use crate::crawl::steer::{Steer, SteerState};
use crate::fetch::{Fetcher, ProxyStats};
use crate::frontier::{Frontier, FrontierCounts};
use crate::host::HostPolicy;
use crate::output::report::{Counters, HostCount, PageHistograms, RecentError, Tally};
use crate::render::Renderer;

/// A cheap-to-clone handle on a crawl's live numbers ([`crate::Crawler::live`]).
#[derive(Clone)]
pub struct Live {
    inner: Arc<Inner>,
}

struct Inner {
    progress: Progress,
    steer: Steer,
    tally: Arc<Mutex<Tally>>,
    frontier: Arc<dyn Frontier>,
    fetcher: Fetcher,
    /// Set once the run has made them.
    run: OnceLock<RunParts>,
    /// The tally's numbers when the run took it for the report (after
    /// which the shared tally is empty).
    ended: OnceLock<Taken>,
}

/// Hosts a snapshot lists as the busiest.
pub const BUSIEST_HOSTS: usize = 10;

/// What a snapshot reads from the tally.
#[derive(Clone)]
struct Taken {
    counters: Counters,
    histograms: PageHistograms,
    recent_errors: Vec<RecentError>,
    busiest: Vec<HostCount>,
}

impl Taken {
    fn of(tally: &Tally) -> Taken {
        Taken {
            counters: tally.counters().clone(),
            histograms: tally.histograms().clone(),
            recent_errors: tally.recent_errors(),
            busiest: tally.busiest(BUSIEST_HOSTS),
        }
    }
}

struct RunParts {
    guards: Arc<Guards>,
    renderer: Option<Arc<Renderer>>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live").finish_non_exhaustive()
    }
}

/// A crawl's numbers at one moment.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct LiveSnapshot {
    /// URLs done, queued and in flight, bytes, errors, time since start.
    pub progress: ProgressSnapshot,
    /// Paused or not, and the cap on concurrent fetches.
    pub steer: SteerState,
    /// The per-host rules now (`None` when the frontier keeps them fixed).
    pub politeness: Option<HostPolicy>,
    /// The report's counters so far (the finished URLs', and those no record
    /// accounts for: retries, link skips, slow-downs, the browser's requests).
    pub counters: Counters,
    /// Response times and page sizes of the URLs fetched so far.
    pub histograms: PageHistograms,
    /// The last URLs that failed or got an error status, oldest first.
    pub recent_errors: Vec<RecentError>,
    /// The frontier's counts; `None` when it could not say.
    pub frontier: Option<FrontierCounts>,
    /// Hosts that slowed the crawl down so far: host → reason → how often.
    pub throttled: BTreeMap<String, BTreeMap<String, u64>>,
    /// The hosts with the most URLs fetched, most first (at most
    /// [`BUSIEST_HOSTS`], from a bounded counter: see [`HostCount::over`]).
    pub busiest: Vec<HostCount>,
    /// Origins whose URLs wait now because their robots.txt is
    /// unavailable (benched until it answers or the outage limit passes).
    pub hosts_benched: usize,
    /// What each proxy of the pool did (empty without a pool).
    pub proxies: Vec<ProxyStats>,
    /// `(tabs rendering, tabs at most)` when pages may be rendered.
    pub render_tabs: Option<(usize, usize)>,
    /// Whether the run is over (its report is being made or made).
    pub ended: bool,
}

impl Live {
    pub(crate) fn new(
        progress: Progress,
        steer: Steer,
        tally: Arc<Mutex<Tally>>,
        frontier: Arc<dyn Frontier>,
        fetcher: Fetcher,
    ) -> Live {
        Live {
            inner: Arc::new(Inner {
                progress,
                steer,
                tally,
                frontier,
                fetcher,
                run: OnceLock::new(),
                ended: OnceLock::new(),
            }),
        }
    }

    /// The parts the run makes, once it has made them.
    pub(crate) fn running(&self, guards: Arc<Guards>, renderer: Option<Arc<Renderer>>) {
        let _ = self.inner.run.set(RunParts { guards, renderer });
    }

    /// Takes the tally out for the report, keeping its numbers for later
    /// snapshots (under the tally's lock, so no snapshot sees it empty).
    pub(crate) fn take_tally(&self) -> Tally {
        let mut tally = self.inner.tally.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self.inner.ended.set(Taken::of(&tally));
        std::mem::take(&mut *tally)
    }

    /// The tally the outputs' task feeds.
    pub(crate) fn tally(&self) -> Arc<Mutex<Tally>> {
        self.inner.tally.clone()
    }

    /// The crawl's numbers now.
    pub async fn snapshot(&self) -> LiveSnapshot {
        let inner = &self.inner;
        // Asked first: the frontier's answer may take a moment (a disk or
        // Redis frontier), and the tally's lock is held for no await.
        let frontier = inner.frontier.counts().await.ok();
        let Taken {
            mut counters,
            histograms,
            recent_errors,
            busiest,
        } = {
            let tally = inner.tally.lock().unwrap_or_else(|e| e.into_inner());
            match inner.ended.get() {
                Some(taken) => taken.clone(),
                None => Taken::of(&tally),
            }
        };
        let mut throttled = BTreeMap::new();
        let mut render_tabs = None;
        let mut hosts_benched = 0;
        if let Some(run) = inner.run.get() {
            hosts_benched = run.guards.stall.waiting();
            let mut kept = Counters::default();
            run.guards.count_into(&mut kept);
            if let Some(r) = &run.renderer {
                render_counts(r, &mut kept);
                render_tabs = Some(r.tabs_in_use());
            }
            counters.add(&kept);
            throttled = run.guards.throttled();
        }
        LiveSnapshot {
            progress: inner.progress.snapshot(),
            steer: inner.steer.state(),
            politeness: inner.steer.politeness(),
            counters,
            histograms,
            recent_errors,
            frontier,
            throttled,
            busiest,
            hosts_benched,
            proxies: inner.fetcher.proxy_stats(),
            render_tabs,
            ended: inner.ended.get().is_some(),
        }
    }

    /// The handle that pauses, resumes and re-caps this crawl.
    pub fn steer(&self) -> &Steer {
        &self.inner.steer
    }
}

/// Sets the browser's counters: its requests fetched and refused, restarts,
/// starts without the sandbox.
pub(crate) fn render_counts(renderer: &Renderer, counts: &mut Counters) {
    let r = renderer.stats();
    counts.render_requests = r.requests;
    counts.render_restarts = r.restarts;
    counts.render_refused_scope = r.refused_scope;
    counts.render_refused_robots = r.refused_robots;
    counts.render_refused_address = r.refused_address;
    counts.render_refused_method = r.refused_method;
    counts.render_request_failed = r.request_failed;
    counts.render_refused_budget = r.refused_budget;
    counts.render_unsandboxed = r.unsandboxed;
}
