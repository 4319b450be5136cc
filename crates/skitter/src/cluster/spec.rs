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

use serde::{Deserialize, Serialize};

use crate::crawl::config::{BuildError, CrawlerBuilder};
use crate::parse::items::{Rules, RulesError};
use crate::settings::{CrawlSettings, RunSettings};

/// The spec format this skitter writes and reads. Version 2 nests the
/// library's [`CrawlSettings`] whole, so a setting added to a crawl is shared
/// with the workers without a second list here.
pub const SPEC_VERSION: u32 = 2;

/// What every worker of a shared crawl agrees on: the crawl's
/// [`CrawlSettings`] without its [`RunSettings`] (each worker chooses those).
/// [`CrawlSpec::builder`] turns it into a [`CrawlerBuilder`].
///
/// ```
/// use skitter::cluster::CrawlSpec;
/// use skitter::settings::CrawlSettings;
///
/// let mut settings = CrawlSettings::new(["http://127.0.0.1:8080/"]);
/// settings.limits.max_depth = Some(3);
/// let spec = CrawlSpec::new(settings);
/// let stored = spec.to_json().unwrap();
/// let back = CrawlSpec::from_json(&stored).unwrap();
/// assert_eq!(back.to_json().unwrap(), stored);
/// assert_eq!(back.crawl.limits.max_depth, Some(3));
/// // Each worker then adds its own settings and a frontier.
/// let builder = back.builder().unwrap().max_tasks(50);
/// # let _ = builder;
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrawlSpec {
    /// The format version ([`SPEC_VERSION`] when written by this skitter).
    pub version: u32,
    /// The crawl. Its politeness ([`RequestSettings::politeness`]) is given to
    /// the shared frontier, which enforces it for every worker; its
    /// [`CrawlSettings::run`] is always the default (left out of the stored
    /// text), since each worker chooses its own.
    ///
    /// [`RequestSettings::politeness`]: crate::settings::RequestSettings::politeness
    pub crawl: CrawlSettings,
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
    /// The spec of a crawl with these settings; their [`CrawlSettings::run`]
    /// is dropped (it is each worker's own).
    pub fn new(mut crawl: CrawlSettings) -> CrawlSpec {
        crawl.run = RunSettings::default();
        CrawlSpec {
            version: SPEC_VERSION,
            crawl,
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
        let spec: CrawlSpec = serde_json::from_str(text).map_err(SpecError::Malformed)?;
        Ok(CrawlSpec::new(spec.crawl))
    }

    /// The extraction rules, parsed; `None` without any.
    pub fn rules(&self) -> Result<Option<Rules>, SpecError> {
        self.crawl
            .extract
            .clone()
            .map(Rules::from_source)
            .transpose()
            .map_err(SpecError::Rules)
    }

    /// A builder with every setting of the spec; the caller adds its own run
    /// settings (concurrency, grace period), outputs and frontier, and the
    /// frontier enforces the politeness. Bad rules are refused here, bad
    /// roots or patterns by [`CrawlerBuilder::build`].
    pub fn builder(&self) -> Result<CrawlerBuilder, BuildError> {
        self.rules()
            .map_err(|e| BuildError::Value(format!("{e}: {}", source_text(&e))))?;
        Ok(CrawlerBuilder::from_settings(self.crawl.clone()))
    }

    /// The spec as it may be shown: header values, proxy and root
    /// credentials replaced by `[redacted]`.
    pub fn redacted(&self) -> CrawlSpec {
        CrawlSpec {
            version: self.version,
            crawl: self.crawl.redacted(),
        }
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
    use crate::parse::items::RulesSource;

    #[test]
    fn redacted_specs_hide_root_credentials() {
        let spec = CrawlSpec::new(CrawlSettings::new([
            "https://user:pw@a.test/x",
            "http://b.test/a@b",
        ]));
        let shown = spec.redacted();
        assert_eq!(
            shown.crawl.roots,
            ["https://[redacted]@a.test/x", "http://b.test/a@b"]
        );
        assert!(!shown.to_json().unwrap().contains("pw"));
    }

    #[test]
    fn a_spec_round_trips_and_keeps_the_rules_text() {
        let mut spec = CrawlSpec::new(CrawlSettings::new(["http://a.test/"]));
        spec.crawl.extract = Some(RulesSource {
            toml: None,
            fields: vec!["title=css:h1".into()],
        });
        spec.crawl.request.fetch.headers = vec![("Authorization".into(), "Bearer SECRET".into())];
        spec.crawl.limits.max_pages = Some(10);
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
        let spec = CrawlSpec::new(CrawlSettings::new(["http://a.test/"]));
        let text = spec.to_json().unwrap();
        let newer = text.replacen("\"version\":2", "\"version\":3", 1);
        assert!(matches!(
            CrawlSpec::from_json(&newer),
            Err(SpecError::Version { found: 3 })
        ));
        // Version 1 (flat fields) is refused by its number, not misread.
        assert!(matches!(
            CrawlSpec::from_json("{\"version\":1,\"roots\":[\"http://a.test/\"]}"),
            Err(SpecError::Version { found: 1 })
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
        let nested_extra = text.replacen("\"crawl\":{", "\"crawl\":{\"mystery\":1,", 1);
        assert!(matches!(
            CrawlSpec::from_json(&nested_extra),
            Err(SpecError::Malformed(_))
        ));
    }

    #[test]
    fn a_worker_choice_is_never_stored_or_read_back() {
        let mut settings = CrawlSettings::new(["http://a.test/"]);
        settings.run.max_tasks = 7;
        let spec = CrawlSpec::new(settings);
        let text = spec.to_json().unwrap();
        assert!(!text.contains("run"), "{text}");
        let with_run = text.replacen("\"crawl\":{", "\"crawl\":{\"run\":{\"max_tasks\":3},", 1);
        let back = CrawlSpec::from_json(&with_run).unwrap();
        assert_eq!(back.crawl.run, RunSettings::default());
    }

    #[test]
    fn bad_rules_are_a_build_error() {
        let mut spec = CrawlSpec::new(CrawlSettings::new(["http://a.test/"]));
        spec.crawl.extract = Some(RulesSource {
            toml: Some("[[[".into()),
            fields: Vec::new(),
        });
        assert!(spec.builder().is_err());
    }
}
