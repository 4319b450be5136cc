//! The guards and limits of one crawl: which discovered links are followed
//! (the gate, the trap rules), how many pages it fetches in all and per
//! host, and how often hosts slowed it down; with their counts for the report.

use std::collections::BTreeMap;

use url::Url;

use crate::base::trap::TrapGuard;
use crate::crawl::admission::{Admission, Gate, LinkSkips, Memo};
use crate::crawl::config::Config;
use crate::crawl::deadline::UrlDeadlines;
use crate::crawl::stall::RobotsStall;
use crate::frontier::Fetched;
use crate::host::quota::{HostQuota, PageBudget};
use crate::host::slowdown::Slowdowns;
use crate::output::report::Counters;

/// What the crawl lets through, and what it turned away or was slowed by.
pub(crate) struct Guards {
    /// The rules every discovered URL passes.
    pub(crate) gate: Gate,
    /// The gate's answers for links met on earlier pages.
    memo: Memo,
    pub(crate) traps: TrapGuard,
    /// Links the gate or the sitemap limits turned away, by reason.
    pub(crate) link_skips: LinkSkips,
    /// `--max-pages`.
    pub(crate) budget: PageBudget,
    /// `--max-per-host`.
    pub(crate) quota: HostQuota,
    /// Slow-downs per host and retries, for the report.
    pub(crate) slowdowns: Slowdowns,
    /// A crawl held still by robots.txt outages.
    pub(crate) stall: RobotsStall,
    /// What each URL's attempts have taken of its deadline.
    pub(crate) deadlines: UrlDeadlines,
}

impl Guards {
    /// The guards of one run, from its settings and what earlier runs of
    /// the crawl fetched (the limits count on from there).
    pub(crate) fn new(config: &Config, fetched: Fetched) -> Guards {
        Guards {
            gate: Gate {
                scope: config.scope.clone(),
                exclude: config.exclude.clone(),
                include: config.include.clone(),
                max_depth: config.limits.max_depth,
            },
            memo: Memo::default(),
            traps: TrapGuard::new(config.trap_rules.clone()),
            link_skips: LinkSkips::default(),
            budget: PageBudget::new(config.limits.max_pages, fetched.pages),
            quota: HostQuota::new(config.limits.max_per_host, fetched.per_host),
            slowdowns: Slowdowns::default(),
            stall: RobotsStall::new(config.robots.as_ref().map_or_else(
                || crate::robots::RobotsPolicy::default().max_blocked,
                |r| r.max_blocked,
            )),
            deadlines: UrlDeadlines::new(config.url_deadline),
        }
    }

    /// Whether a discovered URL may be queued at `depth` (see [`Gate::admit`]).
    pub(crate) fn admit(&self, url: Result<Url, String>, depth: u32) -> Admission {
        self.gate.admit(&self.traps, url, depth)
    }

    /// [`Guards::admit`] for a link found on a page, with the gate's answers
    /// for the links of earlier pages remembered (see [`Gate::admit_link`]).
    pub(crate) fn admit_link(&self, url: Result<Url, String>, depth: u32) -> Admission {
        self.gate.admit_link(&self.memo, &self.traps, url, depth)
    }

    /// Adds what the guards counted to the report's counters: links not
    /// followed, trap trips, slow-downs and retries.
    pub(crate) fn count_into(&self, counts: &mut Counters) {
        counts.links_skipped = self.link_skips.snapshot();
        counts.links_cut = self.link_skips.cut_total();
        counts.traps = self.traps.trips().into_iter().collect();
        let (throttles, retries) = self.slowdowns.counts();
        counts.throttles = throttles;
        counts.retries = retries;
        counts.url_deadline_exceeded = self.deadlines.exceeded_count();
    }

    /// The hosts that slowed the crawl down: host → reason → how often.
    pub(crate) fn throttled(&self) -> BTreeMap<String, BTreeMap<String, u64>> {
        self.slowdowns.by_host()
    }
}
