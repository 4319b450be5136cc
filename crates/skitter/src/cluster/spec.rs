//! The spec of a shared crawl: the settings every worker of a crawl must agree
//! on, as one typed, versioned document that the crawl's starter stores in
//! Redis and each worker reads back to build its [`Crawler`](crate::Crawler).
//!
//! It holds what defines the crawl — roots, scope, limits, traps, robots,
//! sitemaps, retries, politeness, request options, extraction rules — and
//! nothing a worker chooses for itself (its concurrency, grace period, lease,
//! outputs). Versioned so a worker of another skitter refuses a spec it cannot
//! read correctly rather than guessing: [`SPEC_VERSION`] is bumped when a
//! field changes meaning; new fields with defaults keep the version.
//!
//! The spec carries request headers and proxy credentials in the clear, since
//! workers need them; [`CrawlSpec::redacted`] is the form to show.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::base::scope::ScopeMode;
use crate::base::trap::TrapRules;
use crate::crawl::config::{
    BuildError, CrawlerBuilder, DEFAULT_MAX_CRAWL_DELAY, DEFAULT_MAX_REDIRECT, Limits,
};
use crate::fetch::FetchConfig;
use crate::fetch::retry::RetryPolicy;
use crate::host::HostPolicy;
use crate::parse::discovery::SitemapMode;
use crate::parse::items::{Rules, RulesError, RulesSource};
use crate::parse::links::ExtractMode;
use crate::robots::RobotsPolicy;

/// The spec format this skitter writes and reads.
pub const SPEC_VERSION: u32 = 1;

/// What every worker of a shared crawl agrees on. Build one with
/// [`CrawlSpec::new`] and set its public fields; [`CrawlSpec::builder`] turns
/// it into a [`CrawlerBuilder`].
///
/// ```
/// use skitter::cluster::CrawlSpec;
///
/// let mut spec = CrawlSpec::new(["http://127.0.0.1:8080/"]);
/// spec.limits.max_depth = Some(3);
/// let stored = spec.to_json().unwrap();
/// let back = CrawlSpec::from_json(&stored).unwrap();
/// assert_eq!(back.to_json().unwrap(), stored);
/// // Each worker then adds its own settings and a frontier.
/// let builder = back.builder().unwrap().max_tasks(50);
/// # let _ = builder;
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrawlSpec {
    /// The format version ([`SPEC_VERSION`] when written by this skitter).
    pub version: u32,
    /// The root URLs, as given.
    pub roots: Vec<String>,
    /// Which hosts are in scope.
    #[serde(default)]
    pub scope: ScopeMode,
    /// With [`ScopeMode::AnyHost`]: only these domains (and their subdomains).
    #[serde(default)]
    pub domains: Vec<String>,
    /// Never these domains (and their subdomains).
    #[serde(default)]
    pub exclude_domains: Vec<String>,
    /// URL regexes that must match (any of them).
    #[serde(default)]
    pub include: Vec<String>,
    /// URL regexes that must not match.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Depth, pages, time and per-host limits.
    #[serde(default)]
    pub limits: Limits,
    /// Redirect hops followed per chain.
    pub max_redirect: u32,
    /// Which failures are retried, how often and how far apart.
    #[serde(default)]
    pub retry: RetryPolicy,
    /// Links of pages only, or of resources too.
    pub extract_mode: ExtractMode,
    /// The crawler-trap rules.
    #[serde(default)]
    pub traps: TrapRules,
    /// Where sitemaps are looked for.
    #[serde(default)]
    pub sitemaps: SitemapMode,
    /// robots.txt is not fetched or obeyed.
    #[serde(default)]
    pub ignore_robots: bool,
    /// The longest `Crawl-delay` obeyed.
    pub max_crawl_delay: Duration,
    /// How long a host's robots.txt may stay unavailable before its URLs fail.
    pub max_outage: Duration,
    /// Per-host politeness. Given to the shared frontier, which enforces it
    /// for every worker, not to the builder.
    #[serde(default)]
    pub politeness: HostPolicy,
    /// Request options: timeouts, headers, proxies, address policy, DNS.
    #[serde(default)]
    pub fetch: FetchConfig,
    /// Extraction rules, as text (the workers may not have the rules file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extract: Option<RulesSource>,
    /// Which pages are rendered in a browser (`--render`); each worker uses
    /// its own Chromium (the path is not shared), and one that has none fails
    /// at start.
    #[serde(default, skip_serializing_if = "is_never")]
    pub render: crate::render::RenderSettings,
}

fn is_never(r: &crate::render::RenderSettings) -> bool {
    r.mode == crate::render::RenderMode::Never
}

/// A stored spec that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// Written by a skitter whose format this one does not read.
    #[error("the crawl's spec is version {found}; this skitter reads version {SPEC_VERSION}")]
    Version {
        /// The version found.
        found: u32,
    },
    /// Not a spec (or a damaged one).
    #[error("the crawl's spec cannot be read")]
    Malformed(#[source] serde_json::Error),
    /// The extraction rules in it do not parse.
    #[error("the crawl's extraction rules are invalid")]
    Rules(#[source] RulesError),
}

impl CrawlSpec {
    /// A spec crawling `roots` with every other setting at its default.
    pub fn new<I, S>(roots: I) -> CrawlSpec
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        CrawlSpec {
            version: SPEC_VERSION,
            roots: roots.into_iter().map(Into::into).collect(),
            scope: ScopeMode::default(),
            domains: Vec::new(),
            exclude_domains: Vec::new(),
            include: Vec::new(),
            exclude: Vec::new(),
            limits: Limits::default(),
            max_redirect: DEFAULT_MAX_REDIRECT,
            retry: RetryPolicy::default(),
            extract_mode: ExtractMode::Pages,
            traps: TrapRules::default(),
            sitemaps: SitemapMode::default(),
            ignore_robots: false,
            max_crawl_delay: DEFAULT_MAX_CRAWL_DELAY,
            max_outage: RobotsPolicy::default().max_outage,
            politeness: HostPolicy::default(),
            fetch: FetchConfig::default(),
            extract: None,
            render: crate::render::RenderSettings::default(),
        }
    }

    /// The spec as stored: compact JSON. Two equal specs give the same text,
    /// so a starter can tell whether a crawl already stored is the same one.
    pub fn to_json(&self) -> Result<String, SpecError> {
        serde_json::to_string(self).map_err(SpecError::Malformed)
    }

    /// Reads a stored spec, refusing one of another format version before
    /// reading anything else from it.
    pub fn from_json(text: &str) -> Result<CrawlSpec, SpecError> {
        #[derive(Deserialize)]
        struct VersionOnly {
            version: u32,
        }
        let head: VersionOnly = serde_json::from_str(text).map_err(SpecError::Malformed)?;
        if head.version != SPEC_VERSION {
            return Err(SpecError::Version {
                found: head.version,
            });
        }
        serde_json::from_str(text).map_err(SpecError::Malformed)
    }

    /// The extraction rules, parsed; `None` without any.
    pub fn rules(&self) -> Result<Option<Rules>, SpecError> {
        self.extract
            .clone()
            .map(Rules::from_source)
            .transpose()
            .map_err(SpecError::Rules)
    }

    /// A builder with every setting of the spec but [`CrawlSpec::politeness`]
    /// (the frontier's); the caller adds its own concurrency, grace period,
    /// outputs and frontier. Bad roots or patterns are reported by
    /// [`CrawlerBuilder::build`].
    pub fn builder(&self) -> Result<CrawlerBuilder, BuildError> {
        let mut b = CrawlerBuilder::default()
            .roots(self.roots.iter().cloned())
            .scope_mode(self.scope)
            .domains(self.domains.iter().cloned())
            .exclude_domains(self.exclude_domains.iter().cloned())
            .max_redirect(self.max_redirect)
            .retry_policy(self.retry)
            .extract_mode(self.extract_mode)
            .max_outage(self.max_outage)
            .fetch_config(self.fetch.clone())
            .limits(self.limits)
            .trap_rules(self.traps.clone())
            .sitemaps(self.sitemaps)
            .ignore_robots(self.ignore_robots)
            .max_crawl_delay(self.max_crawl_delay)
            .render(self.render.clone());
        for p in &self.exclude {
            b = b.exclude(p.clone());
        }
        for p in &self.include {
            b = b.include(p.clone());
        }
        if let Some(rules) = self
            .rules()
            .map_err(|e| BuildError::Value(format!("{e}: {}", source_text(&e))))?
        {
            b = b.extract(rules);
        }
        Ok(b)
    }

    /// The spec as it may be shown: header values and proxy credentials
    /// replaced by `[redacted]`.
    pub fn redacted(&self) -> CrawlSpec {
        let mut shown = self.clone();
        shown.fetch = self.fetch.redacted();
        // A root's own credentials (`https://user:pw@host/`) are as secret as
        // a header's: `skitter status` showed them.
        shown.roots = self
            .roots
            .iter()
            .map(|r| crate::fetch::head::redact_proxy(r))
            .collect();
        shown
    }
}

/// The innermost cause's text, for a one-line message.
fn source_text(e: &dyn std::error::Error) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacted_specs_hide_root_credentials() {
        let spec = CrawlSpec::new(["https://user:pw@a.test/x", "http://b.test/a@b"]);
        let shown = spec.redacted();
        assert_eq!(
            shown.roots,
            ["https://[redacted]@a.test/x", "http://b.test/a@b"]
        );
        assert!(!shown.to_json().unwrap().contains("pw"));
    }

    #[test]
    fn a_spec_round_trips_and_keeps_the_rules_text() {
        let mut spec = CrawlSpec::new(["http://a.test/"]);
        spec.extract = Some(RulesSource {
            toml: None,
            fields: vec!["title=css:h1".into()],
        });
        spec.fetch.headers = vec![("Authorization".into(), "Bearer SECRET".into())];
        spec.limits.max_pages = Some(10);
        let text = spec.to_json().unwrap();
        assert_eq!(
            CrawlSpec::from_json(&text).unwrap().to_json().unwrap(),
            text
        );
        assert!(spec.rules().unwrap().is_some());
        assert!(!format!("{:?}", spec.redacted().to_json()).contains("SECRET"));
        spec.builder().unwrap().build().unwrap();
    }

    #[test]
    fn another_version_or_an_unknown_field_is_refused() {
        let spec = CrawlSpec::new(["http://a.test/"]);
        let text = spec.to_json().unwrap();
        let newer = text.replacen("\"version\":1", "\"version\":2", 1);
        assert!(matches!(
            CrawlSpec::from_json(&newer),
            Err(SpecError::Version { found: 2 })
        ));
        let extra = text.replacen('{', "{\"mystery\":true,", 1);
        assert!(matches!(
            CrawlSpec::from_json(&extra),
            Err(SpecError::Malformed(_))
        ));
        // The CLI options JSON of older skitters is not a spec.
        assert!(matches!(
            CrawlSpec::from_json("{\"roots\":[\"x\"],\"max_tasks\":5}"),
            Err(SpecError::Malformed(_))
        ));
    }

    #[test]
    fn bad_rules_are_a_build_error() {
        let mut spec = CrawlSpec::new(["http://a.test/"]);
        spec.extract = Some(RulesSource {
            toml: Some("[[[".into()),
            fields: Vec::new(),
        });
        assert!(spec.builder().is_err());
    }
}
