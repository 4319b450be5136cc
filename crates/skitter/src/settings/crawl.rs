//! [`CrawlSettings`]: every setting of a crawl as one serialisable value — what
//! a [`CrawlerBuilder`](crate::CrawlerBuilder) writes to, what a shared crawl
//! stores for its workers (inside a [`CrawlSpec`](crate::cluster::CrawlSpec)),
//! and what `build` checks once into the crawl's private configuration.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::RequestSettings;
use crate::base::scope::ScopeMode;
use crate::base::trap::TrapRules;
use crate::content::ContentOptions;
use crate::output::report::ReportOptions;
use crate::parse::discovery::SitemapMode;
use crate::parse::items::RulesSource;
use crate::parse::links::{DEFAULT_MAX_LINKS, ExtractMode};
use crate::render::RenderSettings;
use crate::robots::RobotsPolicy;

/// The longest `Crawl-delay` obeyed unless set.
pub const DEFAULT_MAX_CRAWL_DELAY: Duration = Duration::from_secs(30);
/// Concurrent fetches of one crawl process unless set.
pub const DEFAULT_MAX_TASKS: usize = 100;
/// How long in-flight fetches may run on after a stop unless set.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(5);

/// Limits that make every crawl end; `None` means no limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Links deeper than this are not followed (roots are depth 0).
    pub max_depth: Option<u32>,
    /// At most this many URLs are fetched; the crawl then stops with `Todo` left.
    pub max_pages: Option<u64>,
    /// The crawl stops after this long (in-flight fetches get the grace period).
    pub max_time: Option<Duration>,
    /// At most this many URLs are fetched per host; further ones are skipped.
    pub max_per_host: Option<u64>,
}

/// Every setting of a crawl. The fields above [`CrawlSettings::run`] define
/// the crawl, and every worker of a shared crawl agrees on them; `run` is
/// what each process chooses for itself.
///
/// ```
/// use skitter::Crawler;
/// use skitter::settings::CrawlSettings;
///
/// let mut settings = CrawlSettings::new(["http://127.0.0.1:8080/"]);
/// settings.limits.max_depth = Some(2);
/// settings.request.politeness.max_in_flight = 4;
/// // A settings value round-trips through JSON (or TOML) unchanged...
/// let text = serde_json::to_string(&settings).unwrap();
/// let back: CrawlSettings = serde_json::from_str(&text).unwrap();
/// // ...and the builder is a thin layer over it.
/// let builder = Crawler::from_settings(back).max_tasks(20);
/// assert_eq!(builder.settings().run.max_tasks, 20);
/// assert_eq!(builder.settings().limits.max_depth, Some(2));
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CrawlSettings {
    /// The root URLs, as given (`http://` is assumed without a scheme).
    pub roots: Vec<String>,
    /// Which hosts are in scope.
    pub scope: ScopeMode,
    /// Only hosts equal to or under one of these domains.
    pub domains: Vec<String>,
    /// Never hosts equal to or under one of these domains.
    pub exclude_domains: Vec<String>,
    /// URL regexes of which one must match (roots always pass).
    pub include: Vec<String>,
    /// URL regexes none of which may match.
    pub exclude: Vec<String>,
    /// Depth, pages, time and per-host limits.
    pub limits: Limits,
    /// The crawler-trap rules (`TrapRules::off()` disables them).
    pub traps: TrapRules,
    /// Links of pages only, or of subresources too.
    pub extract_mode: ExtractMode,
    /// Links read from one page at most (default [`DEFAULT_MAX_LINKS`]); the
    /// rest are dropped unread and counted (`links_cut`).
    pub max_links_per_page: usize,
    /// Where sitemaps are looked for.
    pub sitemaps: SitemapMode,
    /// robots.txt is neither fetched nor obeyed.
    pub ignore_robots: bool,
    /// How robots.txt is cached, retried and waited for.
    pub robots: RobotsPolicy,
    /// The longest `Crawl-delay` obeyed (default
    /// [`DEFAULT_MAX_CRAWL_DELAY`]); a longer one is cut to this.
    pub max_crawl_delay: Duration,
    /// How long all of one URL's attempts may take together (default: `None`,
    /// twice `request.fetch.total_timeout`). Each attempt gets at most what
    /// is left, and a timed-out attempt is not retried when what is left
    /// cannot hold another full one; such URLs fail as timeouts saying the
    /// deadline ran out (counted as `url_deadline_exceeded`). Only attempts
    /// count, not the waits between them.
    pub url_deadline: Option<Duration>,
    /// Requests, retries, redirects and per-host politeness. The politeness
    /// is the built-in frontier's: with a frontier of the caller's (a shared
    /// crawl's), that frontier enforces its own.
    pub request: RequestSettings,
    /// Extraction rules, as text (parsed by `build`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extract: Option<RulesSource>,
    /// Which pages are rendered in a browser, and how.
    pub render: RenderSettings,
    /// What of each HTML page its Markdown and text keep (main content or
    /// the whole body, selectors), for the outputs that ask for them
    /// (`--markdown`, `--content`, `--llms-txt`, `--chunks`).
    pub content: ContentOptions,
    /// What this process chooses for itself; never part of a shared crawl's
    /// spec. Left out of the serialised text while at its default.
    #[serde(skip_serializing_if = "RunSettings::is_default")]
    pub run: RunSettings,
}

/// The settings one crawl process chooses for itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunSettings {
    /// Concurrent fetches at most (default [`DEFAULT_MAX_TASKS`], at least 1).
    pub max_tasks: usize,
    /// How long in-flight fetches may run after a stop is requested (default
    /// [`DEFAULT_GRACE`]).
    pub grace: Duration,
    /// Memory for the built-in frontier's seen set and queue (default
    /// 256 MiB); beyond it they spill to files.
    pub memory_budget: Option<usize>,
    /// Where the built-in frontier spills (default: the system temporary
    /// directory).
    pub spill_dir: Option<PathBuf>,
    /// How the report keeps its per-URL records.
    pub report: ReportOptions,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            max_tasks: DEFAULT_MAX_TASKS,
            grace: DEFAULT_GRACE,
            memory_budget: None,
            spill_dir: None,
            report: ReportOptions::default(),
        }
    }
}

impl RunSettings {
    fn is_default(&self) -> bool {
        *self == RunSettings::default()
    }
}

impl Default for CrawlSettings {
    fn default() -> Self {
        CrawlSettings::new(Vec::<String>::new())
    }
}

impl CrawlSettings {
    /// Settings crawling `roots` with every other setting at its default.
    pub fn new<I, S>(roots: I) -> CrawlSettings
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        CrawlSettings {
            roots: roots.into_iter().map(Into::into).collect(),
            scope: ScopeMode::default(),
            domains: Vec::new(),
            exclude_domains: Vec::new(),
            include: Vec::new(),
            exclude: Vec::new(),
            limits: Limits::default(),
            traps: TrapRules::default(),
            extract_mode: ExtractMode::default(),
            max_links_per_page: DEFAULT_MAX_LINKS,
            sitemaps: SitemapMode::default(),
            ignore_robots: false,
            robots: RobotsPolicy::default(),
            max_crawl_delay: DEFAULT_MAX_CRAWL_DELAY,
            url_deadline: None,
            request: RequestSettings::default(),
            extract: None,
            render: RenderSettings::default(),
            content: ContentOptions::default(),
            run: RunSettings::default(),
        }
    }

    /// The first setting that cannot work, as the message a build error
    /// carries. Roots, patterns and rules are checked where they are parsed.
    pub(crate) fn check(&self) -> Result<(), String> {
        self.request.check()?;
        if self.max_links_per_page == 0 {
            return Err("max_links_per_page must be at least 1".into());
        }
        if self.run.max_tasks == 0 {
            return Err("max_tasks must be at least 1".into());
        }
        if self.render.tasks == 0 || self.render.tries == 0 {
            return Err("render tasks and render tries must be at least 1".into());
        }
        Ok(())
    }

    /// These settings as they may be shown: header values, proxy and root
    /// credentials replaced by `[redacted]`.
    pub fn redacted(&self) -> CrawlSettings {
        CrawlSettings {
            request: self.request.redacted(),
            // A root's own credentials (`https://user:pw@host/`) are as
            // secret as a header's.
            roots: self
                .roots
                .iter()
                .map(|r| crate::fetch::head::redact_proxy(r))
                .collect(),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::DEFAULT_MAX_REDIRECT;

    // The document of the library guide ("Settings as one value").
    const GUIDE: &str = r#"
        roots = ["https://example.com/"]
        exclude = ['\.pdf$']
        [limits]
        max_depth = 3
        [request.politeness]
        max_in_flight = 2
    "#;

    #[test]
    fn a_document_names_only_what_it_changes() {
        let s: CrawlSettings = toml::from_str(GUIDE).unwrap();
        assert_eq!(s.roots, ["https://example.com/"]);
        assert_eq!(s.limits.max_depth, Some(3));
        assert_eq!(s.request.politeness.max_in_flight, 2);
        assert_eq!(s.request.max_redirect, DEFAULT_MAX_REDIRECT);
        assert_eq!(s.run, RunSettings::default());
        s.check().unwrap();
    }

    #[test]
    fn a_misspelt_key_is_an_error_at_any_depth() {
        for bad in [
            "max_dept = 3",
            "[limits]\nmax_dept = 3",
            "[request]\nmax_redirects = 1",
        ] {
            assert!(toml::from_str::<CrawlSettings>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn settings_that_cannot_work_say_which() {
        let mut s = CrawlSettings::new(["http://a.test/"]);
        s.run.max_tasks = 0;
        assert!(s.check().unwrap_err().contains("max_tasks"));
        let mut s = CrawlSettings::new(["http://a.test/"]);
        s.request.retry.max_tries = 0;
        assert!(s.check().unwrap_err().contains("max_tries"));
    }

    #[test]
    fn redacted_settings_hide_headers_and_root_credentials() {
        let mut s = CrawlSettings::new(["https://u:secret@a.test/"]);
        s.request.fetch.headers = vec![("Authorization".into(), "Bearer TOKEN".into())];
        let shown = serde_json::to_string(&s.redacted()).unwrap();
        assert!(
            !shown.contains("secret") && !shown.contains("TOKEN"),
            "{shown}"
        );
    }
}
