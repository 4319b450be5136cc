//! Wiring: turns a [`CrawlerBuilder`]'s settings into a [`Crawler`] — checks
//! them (roots, patterns, the HTTP client), reports the first problem as a
//! typed [`BuildError`], and builds the parts a crawl runs on (the fetcher, the
//! built-in frontier unless one is given).

use std::sync::Arc;

use regex::Regex;
use url::Url;

use crate::base::scope::Scope;
use crate::base::urlnorm;
use crate::crawl::config::{BuildError, Config, CrawlerBuilder};
use crate::crawl::crawler::{Crawler, Parts};
use crate::fetch::{FetchSetupError, Fetcher, OpenFileLimit};
use crate::frontier::{DEFAULT_MEMORY_BUDGET, Frontier, MemoryFrontier, MemoryOptions};
use crate::parse::items::{Rules, RulesSource};

impl CrawlerBuilder {
    /// Checks the settings once and builds the crawler.
    pub fn build(self) -> Result<Crawler, BuildError> {
        let CrawlerBuilder {
            mut settings,
            frontier_settings,
            rules,
            sinks,
            frontier,
            outcomes,
            robots_store,
        } = self;
        settings.check().map_err(BuildError::Value)?;
        if let (Some(_), Some(setting)) = (&frontier, frontier_settings.first()) {
            return Err(BuildError::FrontierSetting(setting));
        }
        let fetch = &mut settings.request.fetch;
        let mut roots = parse_roots(&settings.roots)?;
        // Credentials in a root URL go to that host as Basic auth and leave
        // the URL, so nothing that prints URLs can print them.
        for root in &mut roots {
            if let Some(credentials) = crate::fetch::take_credentials(root) {
                fetch.site_credentials.push(credentials);
            }
        }
        let mut distinct: Vec<Url> = Vec::with_capacity(roots.len());
        for root in roots {
            if !distinct.contains(&root) {
                distinct.push(root);
            }
        }
        let roots = distinct;
        // The roots' origins get the user's headers, and their hosts and
        // ports are the ones the user named (see `PrivateAccess::Named`): not
        // another port of the same host.
        for root in &roots {
            let origin = root.origin().ascii_serialization();
            if !fetch.named_origins.contains(&origin) {
                fetch.named_origins.push(origin);
            }
        }
        let extract = match rules {
            Some(rules) => Some(rules),
            None => parse_rules(settings.extract.clone())?,
        };
        let run = settings.run;
        let config = Config {
            scope: Scope::new(&roots, settings.scope)
                .with_domains(&settings.domains, &settings.exclude_domains),
            roots,
            max_tasks: run.max_tasks,
            max_redirect: settings.request.max_redirect,
            retry: settings.request.retry,
            exclude: compile(&settings.exclude)?,
            include: compile(&settings.include)?,
            limits: settings.limits,
            trap_rules: settings.traps,
            robots: (!settings.ignore_robots).then_some(settings.robots),
            max_crawl_delay: settings.max_crawl_delay,
            url_deadline: settings
                .url_deadline
                .unwrap_or(settings.request.fetch.total_timeout.saturating_mul(2)),
            extract_mode: settings.extract_mode,
            max_links_per_page: settings.max_links_per_page,
            sitemaps: settings.sitemaps,
            host_policy: settings.request.politeness,
            grace: run.grace,
            fetch: settings.request.fetch.clone(),
            extract,
            report: run.report,
            render: settings.render,
            content: Arc::new(crate::content::Extractor::new(&settings.content)?),
        };
        if let (true, Some(dir)) = (config.report.records, &config.report.spill_dir) {
            // Fails now rather than when the report first outgrows its memory.
            crate::state::spill::SpillDir::new(Some(dir.clone())).check_writable()?;
        }
        // Every request in flight may need a connection: room for them all
        // within the open-file limit, or an error saying what to change.
        let mut fetch = settings.request.fetch;
        fetch.max_connections = Some(
            OpenFileLimit::current()
                .connection_cap(fetch.max_connections, run.max_tasks)
                .map_err(FetchSetupError::from)?,
        );
        let fetcher = Fetcher::new(fetch)?;
        let frontier: Arc<dyn Frontier> = match frontier {
            Some(frontier) => frontier,
            None => Arc::new(MemoryFrontier::with_options(MemoryOptions {
                policy: config.host_policy,
                memory_budget: run.memory_budget.unwrap_or(DEFAULT_MEMORY_BUDGET),
                spill_dir: run.spill_dir,
            })?),
        };
        let parts = Parts {
            sinks,
            outcomes,
            robots_store,
        };
        Ok(Crawler::new(config, fetcher, frontier, parts))
    }
}

/// Rules given as text, parsed; `None` without any.
fn parse_rules(source: Option<RulesSource>) -> Result<Option<Arc<Rules>>, BuildError> {
    match source {
        None => Ok(None),
        Some(source) => Rules::from_source(source)
            .map(|rules| Some(Arc::new(rules)))
            .map_err(BuildError::Rules),
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

/// The `--include`/`--exclude` patterns compiled, the first bad one named.
pub(crate) fn compile(patterns: &[String]) -> Result<Vec<Regex>, BuildError> {
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
    use std::time::Duration;

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
    fn the_builder_writes_its_settings_and_a_later_setter_wins() {
        let policy = RetryPolicy {
            max_tries: 9,
            ..RetryPolicy::default()
        };
        let limits = Limits {
            max_depth: Some(9),
            max_pages: Some(5),
            ..Limits::default()
        };
        let b = Crawler::builder()
            .root("http://127.0.0.1:1/")
            .max_tries(2)
            .retry_policy(policy)
            .limits(limits)
            .max_depth(1);
        assert_eq!(b.settings().request.retry.max_tries, 9);
        assert_eq!(b.settings().limits.max_depth, Some(1));
        let config = b.build().unwrap().config().clone();
        assert_eq!(config.retry.max_tries, 9);
        assert_eq!(config.limits.max_depth, Some(1));
        assert_eq!(config.limits.max_pages, Some(5));
    }

    #[test]
    fn settings_are_checked_once_whichever_way_they_came() {
        let mut settings = crate::settings::CrawlSettings::new(["http://127.0.0.1:1/"]);
        settings.run.max_tasks = 0;
        let from_value = Crawler::from_settings(settings.clone()).build();
        let from_setter = Crawler::builder()
            .root("http://127.0.0.1:1/")
            .max_tasks(0)
            .build();
        for built in [from_value, from_setter] {
            match built {
                Err(BuildError::Value(why)) => assert!(why.contains("max_tasks"), "{why}"),
                Err(e) => panic!("{e}"),
                Ok(_) => panic!("max_tasks 0 was accepted"),
            }
        }
        settings.run.max_tasks = 3;
        settings.extract = Some(RulesSource {
            toml: None,
            fields: vec!["title=css:h1".into()],
        });
        let crawler = Crawler::from_settings(settings).build().unwrap();
        assert!(crawler.config().extract.is_some());
    }
}
