//! Wiring: turns a [`CrawlerBuilder`]'s settings into a [`Crawler`] — checks
//! them (roots, patterns, the HTTP client), reports the first problem as a
//! typed [`BuildError`], and builds the parts a crawl runs on (the fetcher, the
//! built-in frontier unless one is given).

use std::sync::Arc;
use std::time::Duration;

use regex::Regex;
use url::Url;

use crate::base::scope::Scope;
use crate::base::urlnorm;
use crate::crawl::config::{BuildError, Config, CrawlerBuilder};
use crate::crawl::crawler::{Crawler, Parts};
use crate::fetch::Fetcher;
use crate::frontier::{DEFAULT_MEMORY_BUDGET, Frontier, MemoryFrontier, MemoryOptions};
use crate::parse::links::ExtractMode;

impl CrawlerBuilder {
    /// Validates everything and builds the crawler.
    pub fn build(mut self) -> Result<Crawler, BuildError> {
        let mut roots = parse_roots(&self.roots)?;
        // Credentials in a root URL go to that host as Basic auth and leave
        // the URL, so nothing that prints URLs can print them.
        for root in &mut roots {
            if let Some(credentials) = crate::fetch::take_credentials(root) {
                self.fetch.site_credentials.push(credentials);
            }
        }
        let mut distinct: Vec<Url> = Vec::with_capacity(roots.len());
        for root in roots {
            if !distinct.contains(&root) {
                distinct.push(root);
            }
        }
        let roots = distinct;
        // The roots' hosts are the ones the user named (see `PrivateAccess::Named`).
        for host in roots.iter().filter_map(Url::host_str) {
            if !self.fetch.named_hosts.iter().any(|h| h == host) {
                self.fetch.named_hosts.push(host.to_owned());
            }
        }
        if let (Some(_), Some(setting)) = (&self.frontier, self.frontier_settings.first()) {
            return Err(BuildError::FrontierSetting(setting));
        }
        if let Some(n) = self.max_tries {
            self.retry.max_tries = n;
        }
        if let Some(depth) = self.max_depth {
            self.limits.max_depth = Some(depth);
        }
        let max_tasks = self.max_tasks.unwrap_or(100);
        if max_tasks == 0 {
            return Err(BuildError::Value("max_tasks must be at least 1".into()));
        }
        if self.retry.max_tries == 0 {
            return Err(BuildError::Value("max_tries must be at least 1".into()));
        }
        if self.render.tasks == 0 || self.render.tries == 0 {
            return Err(BuildError::Value(
                "render tasks and render tries must be at least 1".into(),
            ));
        }
        if self.host_policy.max_in_flight == 0 {
            return Err(BuildError::Value("per_host must be at least 1".into()));
        }
        let config = Config {
            scope: Scope::new(&roots, self.scope_mode)
                .with_domains(&self.domains, &self.exclude_domains),
            roots,
            max_tasks,
            max_redirect: self
                .max_redirect
                .unwrap_or(crate::crawl::config::DEFAULT_MAX_REDIRECT),
            retry: self.retry,
            exclude: compile(&self.exclude)?,
            include: compile(&self.include)?,
            limits: self.limits,
            trap_rules: self.trap_rules.unwrap_or_default(),
            robots: (!self.ignore_robots).then_some(self.robots_policy),
            max_crawl_delay: self
                .max_crawl_delay
                .unwrap_or(crate::crawl::config::DEFAULT_MAX_CRAWL_DELAY),
            extract_mode: self.extract_mode.unwrap_or(ExtractMode::Pages),
            sitemaps: self.sitemaps,
            host_policy: self.host_policy,
            grace: self.grace.unwrap_or(Duration::from_secs(5)),
            fetch: self.fetch.clone(),
            extract: self.extract,
            report: self.report,
            render: self.render,
        };
        if let (true, Some(dir)) = (config.report.records, &config.report.spill_dir) {
            // Fails now rather than when the report first outgrows its memory.
            crate::state::spill::SpillDir::new(Some(dir.clone())).check_writable()?;
        }
        let fetcher = Fetcher::new(self.fetch)?;
        let frontier: Arc<dyn Frontier> = match self.frontier {
            Some(frontier) => frontier,
            None => Arc::new(MemoryFrontier::with_options(MemoryOptions {
                policy: config.host_policy,
                memory_budget: self.memory_budget.unwrap_or(DEFAULT_MEMORY_BUDGET),
                spill_dir: self.spill_dir,
            })?),
        };
        let parts = Parts {
            sinks: self.sinks,
            outcomes: self.outcomes,
            robots_store: self.robots_store,
        };
        Ok(Crawler::new(config, fetcher, frontier, parts))
    }
}

fn parse_roots(args: &[String]) -> Result<Vec<Url>, BuildError> {
    let mut roots: Vec<Url> = Vec::new();
    for arg in args {
        let url = urlnorm::parse_root(arg).map_err(|source| BuildError::Root {
            arg: arg.clone(),
            source,
        })?;
        if !roots.contains(&url) {
            roots.push(url);
        }
    }
    if roots.is_empty() {
        return Err(BuildError::NoRoots);
    }
    Ok(roots)
}

fn compile(patterns: &[String]) -> Result<Vec<Regex>, BuildError> {
    patterns
        .iter()
        .map(|p| {
            Regex::new(p).map_err(|source| BuildError::Pattern {
                pattern: p.clone(),
                source,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crawl::config::Limits;
    use crate::fetch::retry::RetryPolicy;

    fn own_frontier() -> Arc<dyn Frontier> {
        Arc::new(MemoryFrontier::with_options(MemoryOptions::default()).unwrap())
    }

    #[test]
    fn settings_of_the_built_in_frontier_are_refused_beside_another() {
        type Set = fn(CrawlerBuilder) -> CrawlerBuilder;
        let cases: [(&str, Set); 4] = [
            ("per_host", |b| b.per_host(3)),
            ("host_delay", |b| {
                b.host_delay(Duration::from_secs(1), Duration::ZERO)
            }),
            ("memory_budget", |b| b.memory_budget(1 << 20)),
            ("spill_dir", |b| b.spill_dir("/tmp")),
        ];
        for (name, set) in cases {
            let b = set(Crawler::builder().root("http://127.0.0.1:1/"));
            match b.frontier(own_frontier()).build() {
                Err(BuildError::FrontierSetting(s)) => assert_eq!(s, name),
                Err(e) => panic!("{name}: {e}"),
                Ok(_) => panic!("{name} was silently ignored"),
            }
            // Without a frontier of the caller's, the same setting is used.
            assert!(
                set(Crawler::builder().root("http://127.0.0.1:1/"))
                    .build()
                    .is_ok()
            );
        }
    }

    #[test]
    fn a_shorthand_wins_over_the_whole_setting_in_either_order() {
        let policy = RetryPolicy {
            max_tries: 9,
            ..RetryPolicy::default()
        };
        let limits = Limits {
            max_depth: Some(9),
            max_pages: Some(5),
            ..Limits::default()
        };
        let before = Crawler::builder()
            .root("http://127.0.0.1:1/")
            .max_tries(2)
            .max_depth(1)
            .retry_policy(policy)
            .limits(limits);
        let after = Crawler::builder()
            .root("http://127.0.0.1:1/")
            .retry_policy(policy)
            .limits(limits)
            .max_tries(2)
            .max_depth(1);
        for b in [before, after] {
            let crawler = b.build().unwrap();
            let config = crawler.config();
            assert_eq!(config.retry.max_tries, 2);
            assert_eq!(config.limits.max_depth, Some(1));
            assert_eq!(config.limits.max_pages, Some(5));
        }
    }
}
