//! [`BulkSettings`]: every setting of a bulk fetch (`skitter fetch`) as one
//! serialisable value, sharing [`RequestSettings`] with the crawl.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::RequestSettings;
use super::crawl::DEFAULT_GRACE;
use crate::content::ContentOptions;
use crate::parse::items::RulesSource;

/// Requests in flight over all hosts of a bulk fetch unless set.
pub const DEFAULT_CONCURRENCY: usize = 50;

/// Every setting of a bulk fetch; build one with
/// [`BulkFetcher::from_settings`](crate::bulk::BulkFetcher::from_settings)
/// or through its builder's setters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BulkSettings {
    /// Requests, retries, redirects and per-host politeness, as a crawl's.
    pub request: RequestSettings,
    /// Requests in flight at most, over all hosts (default
    /// [`DEFAULT_CONCURRENCY`]).
    pub concurrency: usize,
    /// After a stop is requested, how long in-flight requests may take
    /// (default 5 s).
    pub grace: Duration,
    /// Where 2xx bodies are saved (created if needed); none by default.
    pub output_dir: Option<PathBuf>,
    /// A template naming saved files (see
    /// [`NameTemplate::parse`](crate::bulk::NameTemplate::parse)) instead
    /// of the mirror's `host/path` layout.
    pub name_template: Option<String>,
    /// Items whose file already exists are not fetched.
    pub skip_existing: bool,
    /// Files that exist are fetched again conditionally (see
    /// [`BulkFetcherBuilder::if_modified`](crate::bulk::BulkFetcherBuilder::if_modified)).
    pub if_modified: bool,
    /// Extraction rules, as text (parsed by `build`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extract: Option<RulesSource>,
    /// Requests that depend on other responses: values read from one
    /// response, later steps of each item, pages followed to the end.
    #[serde(skip_serializing_if = "RecipeSettings::is_empty")]
    pub recipe: RecipeSettings,
    /// A state file recording where each item of a recipe has got to, so a
    /// run started again resumes there (needs a recipe).
    pub state: Option<PathBuf>,
    /// What of each final HTML page its Markdown and text keep, for the
    /// sinks that read them (see [`crate::content`]).
    pub content: ContentOptions,
}

/// Pages one chain may have unless set.
pub const DEFAULT_MAX_PAGES: u32 = 10_000;

/// What each item of a bulk fetch does beyond fetching its URL: the steps
/// after it, the values read on the way, the pages followed (see
/// [`BulkFetcherBuilder::then`](crate::bulk::BulkFetcherBuilder::then)).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecipeSettings {
    /// Values read from responses, `NAME=SPEC` from the item's first
    /// response or `STEP:NAME=SPEC` from step `STEP` (counted from 1), SPEC
    /// in the language of extraction fields plus `header:NAME` and
    /// `link:REL`.
    #[serde(rename = "let")]
    pub lets: Vec<String>,
    /// URL templates of the steps after the item's URL, in order, each
    /// resolved against the URL of the step before.
    pub then: Vec<String>,
    /// Where the next page of the last step is (`link:next`,
    /// `json:/next`, `css:a[rel=next]@href`…, or `PARAM=SPEC` for a cursor
    /// put into the query parameter PARAM); none: no pagination.
    pub next: Option<String>,
    /// Pages one chain may have (default [`DEFAULT_MAX_PAGES`]).
    pub max_pages: Option<u32>,
}

impl RecipeSettings {
    /// Whether it asks for nothing beyond one request per item.
    pub fn is_empty(&self) -> bool {
        self == &RecipeSettings::default()
    }
}

impl Default for BulkSettings {
    fn default() -> Self {
        BulkSettings {
            request: RequestSettings::default(),
            concurrency: DEFAULT_CONCURRENCY,
            grace: DEFAULT_GRACE,
            output_dir: None,
            name_template: None,
            skip_existing: false,
            if_modified: false,
            extract: None,
            recipe: RecipeSettings::default(),
            state: None,
            content: ContentOptions::default(),
        }
    }
}

impl BulkSettings {
    /// The first setting that cannot work, as the message a build error
    /// carries.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.concurrency == 0 {
            return Err("concurrency must be at least 1".into());
        }
        self.request.check()?;
        if self.output_dir.is_none()
            && (self.skip_existing || self.if_modified || self.name_template.is_some())
        {
            return Err(
                "skip-existing, if-modified and name templates need an output directory".into(),
            );
        }
        if self.recipe.max_pages == Some(0) {
            return Err("max_pages must be at least 1".into());
        }
        if self.state.is_some() && self.recipe.is_empty() {
            return Err(
                "a state file records the steps of a recipe (--then, --let, --next); \
                 to resume plain downloads use skip-existing or if-modified"
                    .into(),
            );
        }
        if !self.recipe.is_empty() && self.if_modified {
            return Err(
                "if-modified cannot revalidate the steps of a recipe (--then, --let, --next)"
                    .into(),
            );
        }
        Ok(())
    }
}
