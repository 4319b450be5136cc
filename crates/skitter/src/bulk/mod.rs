//! Bulk fetching: a (possibly huge) list of URLs and URL patterns, fetched
//! concurrently, each body optionally saved to a file, every result tallied.
//!
//! The data flow, each arrow one call or one bounded channel:
//! input stream ([`input`]: arguments or lines, [`glob`] patterns expanded lazily)
//! → dispatcher (a window of pending items) → per-item task (per-host slot, global
//! slot, `attempt::fetch_with_retries`, redirects followed, body saved by
//! [`save`](SaveError) on the blocking pool) → one collector task (sinks, the
//! [`Summary`], the observer). With a recipe ([`BulkFetcherBuilder::then`],
//! [`value`](BulkFetcherBuilder::value),
//! [`next_page`](BulkFetcherBuilder::next_page)), an item is several such
//! requests in order, each built from values read from the ones before.
//!
//! Memory stays flat whatever the input size: the input is read as it is needed,
//! at most `4 × concurrency` items are pending, and a body lives only while its
//! request holds one of the `concurrency` global slots; the slot travels with
//! the page to the collector and is released once the sinks have it, so no more
//! than `concurrency` bodies (each at most `max_body_size`) exist at once.
//!
//! ```
//! use skitter::bulk::{self, BulkFetcher};
//! use skitter_testsite::{SiteConfig, TestSite};
//! use tokio_util::sync::CancellationToken;
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let site = TestSite::start(SiteConfig::default())?;
//! let dir = tempfile::tempdir()?;
//! let fetcher = BulkFetcher::builder()
//!     .concurrency(20)
//!     .output_dir(dir.path())
//!     .build()?;
//! // A pattern: pages 1 to 3 of the site, one URL each.
//! let urls = bulk::from_args([site.url("/p/[1-3]")], true);
//! let summary = fetcher.run(urls, CancellationToken::new()).await;
//! eprint!("{summary}");
//! assert_eq!(summary.ok, 3);
//! # Ok(())
//! # }
//! ```

mod attempt;
mod chain;
mod collector;
mod context;
pub mod glob;
mod hop;
mod index;
pub mod input;
mod journal;
pub mod name;
mod placeholder;
mod read;
mod recipe;
mod revalidate;
mod runner;
mod save;
mod summary;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::Stream;
use tokio_util::sync::CancellationToken;

use crate::fetch::retry::RetryPolicy;
use crate::fetch::{FetchConfig, FetchSetupError, Fetcher, Keep, OpenFileLimit};
use crate::host::HostPolicy;
use crate::output::Sink;
use crate::parse::items::Rules;

pub use crate::base::stop::StopReason;
pub use glob::{Glob, GlobError};
pub use index::{INDEX_FILE, IndexCause, IndexError};
pub use input::{InputError, InputItem, Location, count_args, from_args, from_reader};
pub use name::{NameTemplate, Naming, TemplateError};
pub use placeholder::Values;
pub use recipe::ValueError;
pub use save::SaveError;
pub use summary::{ChainStop, ItemReport, Outcome, Summary};

pub use crate::crawl::build_error::RecipeError;
pub use crate::host::DEFAULT_PER_HOST;
pub use crate::settings::{
    BulkSettings, DEFAULT_CONCURRENCY, DEFAULT_MAX_PAGES, DEFAULT_MAX_REDIRECT, RecipeSettings,
};

/// Called once per finished item, in finishing order, from one task.
pub type Observer = Arc<dyn Fn(&ItemReport) + Send + Sync>;

pub use crate::crawl::build_error::BuildError;

/// Where and how bodies are saved.
#[derive(Clone, Debug)]
pub(crate) struct Output {
    pub dir: PathBuf,
    pub naming: Naming,
    pub skip_existing: bool,
}

/// The validated settings of a bulk fetch.
pub(crate) struct Config {
    pub concurrency: usize,
    /// The crawl's per-host rules (see `hosts`).
    pub politeness: HostPolicy,
    pub max_redirect: u32,
    pub retry: RetryPolicy,
    pub grace: Duration,
    pub keep: Keep,
    pub output: Option<Output>,
    pub extract: Option<Arc<Rules>>,
    /// The output directory's fetch index, with `if_modified`.
    pub index: Option<index::FetchIndex>,
    /// What each item does beyond one request, when it does.
    pub recipe: Option<Arc<recipe::Recipe>>,
    /// Where each recipe item has got to, with a state file.
    pub journal: Option<journal::Journal>,
    /// How final HTML pages become Markdown and text, when a sink reads them.
    pub content: Option<Arc<crate::content::Extractor>>,
}

/// Builds a [`BulkFetcher`]: `BulkFetcher::builder().concurrency(100).build()?`.
///
/// A thin layer over one [`BulkSettings`] value: each setter writes its field
/// (a later call wins), [`BulkFetcher::from_settings`] starts from a whole
/// value, and [`build`](BulkFetcherBuilder::build) checks it once. What cannot
/// be written down — parsed rules, sinks, the observer — is kept beside it.
#[derive(Default)]
pub struct BulkFetcherBuilder {
    settings: BulkSettings,
    rules: Option<Rules>,
    sinks: Vec<Box<dyn Sink>>,
    observer: Option<Observer>,
}

impl BulkFetcherBuilder {
    /// The settings as the setters have left them.
    pub fn settings(&self) -> &BulkSettings {
        &self.settings
    }

    /// Extracts structured records from final 2xx bodies whose URL a rule set
    /// matches (HTML, or JSON with JSON pointer rules); each page's items reach
    /// the sinks with it and are counted in the [`Summary`]. Replaces any
    /// rules text of the settings.
    pub fn extract(mut self, rules: Rules) -> Self {
        self.settings.extract = None;
        self.rules = Some(rules);
        self
    }

    /// What of each final HTML page its Markdown and text keep (default:
    /// the main content; see [`crate::content`]), for the sinks that read
    /// them ([`Sink::wants_content`]).
    pub fn content(mut self, options: crate::content::ContentOptions) -> Self {
        self.settings.content = options;
        self
    }

    /// Requests in flight at most, over all hosts (default
    /// [`DEFAULT_CONCURRENCY`]).
    pub fn concurrency(mut self, n: usize) -> Self {
        self.settings.concurrency = n;
        self
    }

    /// Requests in flight at most to one host:port (default
    /// [`DEFAULT_PER_HOST`]), from six (or `n`, if lower) for a new host,
    /// doubled per clean answer (slow start).
    pub fn per_host(mut self, n: usize) -> Self {
        self.settings.request.politeness.max_in_flight = n;
        self
    }

    /// At least `delay` (plus up to `jitter` at random) between the starts of
    /// two requests to one host:port (default none) — the crawl's rule, as
    /// are the slow-downs on `429`, `Retry-After` and distress, which always
    /// apply.
    pub fn host_delay(mut self, delay: Duration, jitter: Duration) -> Self {
        self.settings.request.politeness.delay = delay;
        self.settings.request.politeness.jitter = jitter;
        self
    }

    /// Redirect hops followed per item (default [`DEFAULT_MAX_REDIRECT`];
    /// 0 = none).
    pub fn max_redirect(mut self, n: u32) -> Self {
        self.settings.request.max_redirect = n;
        self
    }

    /// Attempts and back-off for transient failures.
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.settings.request.retry = policy;
        self
    }

    /// After a stop is requested, how long in-flight requests may take (default 5 s).
    pub fn grace(mut self, grace: Duration) -> Self {
        self.settings.grace = grace;
        self
    }

    /// How requests are made (timeouts, headers, proxy, body cap…).
    pub fn fetch_config(mut self, fetch: FetchConfig) -> Self {
        self.settings.request.fetch = fetch;
        self
    }

    /// Save each 2xx body (content-decoded) to a file under `dir`, created if needed.
    pub fn output_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.settings.output_dir = Some(dir.into());
        self
    }

    /// Name saved files with a template (see [`NameTemplate::parse`]) instead of
    /// the mirror's `host/path` layout.
    pub fn name_template(mut self, template: impl Into<String>) -> Self {
        self.settings.name_template = Some(template.into());
        self
    }

    /// Do not fetch items whose file already exists (needs an output directory).
    pub fn skip_existing(mut self, yes: bool) -> Self {
        self.settings.skip_existing = yes;
        self
    }

    /// Re-download conditionally (needs an output directory): keep an index of
    /// what was saved ([`INDEX_FILE`] in the directory), send its validators
    /// (`If-None-Match`, `If-Modified-Since`) for files that exist, and leave a
    /// file untouched when the server answers `304` or sends the same payload
    /// again. Each item's [`ItemReport::change`] and the page's
    /// `PageRecord::change` say new, changed, unchanged, gone or failed, and
    /// an archiving sink gets unchanged pages as revisits.
    pub fn if_modified(mut self, yes: bool) -> Self {
        self.settings.if_modified = yes;
        self
    }

    /// Reads a value from each item's responses, `NAME=SPEC` from its first
    /// response or `STEP:NAME=SPEC` from step STEP (from 1), for the URLs of
    /// later steps ([`then`](Self::then)) and the file-name template
    /// (`{NAME}`). SPEC is an extraction field (`json:/country`,
    /// `css:a.next@href`, `regex:…`) or `header:NAME` or `link:REL`. A value
    /// that is missing or not a single scalar fails its item
    /// ([`Outcome::Value`]).
    pub fn value(mut self, spec: impl Into<String>) -> Self {
        self.settings.recipe.lets.push(spec.into());
        self
    }

    /// Adds a step to each item: after the steps before it, fetch this URL
    /// template (`{NAME}` values, `{1}`, `{2}`… the input pattern's ranges,
    /// percent-encoded), resolved against the URL of the step before. The
    /// last step's body is the one saved.
    pub fn then(mut self, url_template: impl Into<String>) -> Self {
        self.settings.recipe.then.push(url_template.into());
        self
    }

    /// Follows the last step's pages: `rule` names the next page
    /// (`link:next`, `json:/next`, `css:a[rel=next]@href`, or `PARAM=SPEC`
    /// for a cursor put into query parameter PARAM) until a page names none,
    /// names one its chain has fetched ([`ChainStop::Loop`]) or the chain has
    /// [`max_pages`](Self::max_pages) pages. Pages of one item are fetched
    /// in order; items run side by side.
    pub fn next_page(mut self, rule: impl Into<String>) -> Self {
        self.settings.recipe.next = Some(rule.into());
        self
    }

    /// Pages one chain may have (default [`DEFAULT_MAX_PAGES`]).
    pub fn max_pages(mut self, n: u32) -> Self {
        self.settings.recipe.max_pages = Some(n);
        self
    }

    /// Records in the SQLite file `path` where each item of the recipe has
    /// got to (after each step and page), so a run started again with the
    /// same recipe skips finished items ([`Outcome::Done`]) and resumes the
    /// others at their last step or page, without fetching again what was
    /// finished. Needs a recipe.
    pub fn state(mut self, path: impl Into<PathBuf>) -> Self {
        self.settings.state = Some(path.into());
        self
    }

    /// Also feed every response (each redirect hop included) to this sink.
    pub fn sink(mut self, sink: Box<dyn Sink>) -> Self {
        self.sinks.push(sink);
        self
    }

    /// Call `f` for every finished item (for progress bars and logs).
    pub fn on_item(mut self, f: impl Fn(&ItemReport) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(f));
        self
    }

    /// Checks the settings, creates the output directory and the HTTP client.
    pub fn build(self) -> Result<BulkFetcher, BuildError> {
        let BulkFetcherBuilder {
            settings,
            rules,
            sinks,
            observer,
        } = self;
        settings.check().map_err(BuildError::Value)?;
        // Room for a connection per request at once, or an error saying what
        // to change, before the output directory is made.
        let connections = OpenFileLimit::current()
            .connection_cap(settings.request.fetch.max_connections, settings.concurrency)
            .map_err(FetchSetupError::from)?;
        let recipe = recipe::Recipe::compile(&settings.recipe)?;
        let names = recipe.as_ref().map(|r| r.names()).unwrap_or_default();
        let naming = match &settings.name_template {
            Some(t) => Naming::Template(NameTemplate::parse_with(t, &names)?),
            None => Naming::Mirror,
        };
        if let Some(recipe) = &recipe {
            recipe.check_naming(&naming)?;
        }
        let extract = match (rules, settings.extract) {
            (Some(rules), _) => Some(rules),
            (None, Some(source)) => Some(Rules::from_source(source).map_err(BuildError::Rules)?),
            (None, None) => None,
        };
        let output = match settings.output_dir {
            Some(dir) => Some(Output {
                dir: prepare_dir(dir)?,
                naming,
                skip_existing: settings.skip_existing,
            }),
            None => None,
        };
        let index = match (&output, settings.if_modified) {
            (Some(o), true) => Some(index::FetchIndex::open(&o.dir)?),
            _ => None,
        };
        let journal = match &settings.state {
            Some(path) => Some(journal::Journal::open(path)?),
            None => None,
        };
        let keep = if output.is_some() || sinks.iter().any(|s| s.wants_bodies()) {
            Keep::Everything
        } else if extract.is_some() || recipe.is_some() {
            // Extraction and recipes read JSON and other bodies too, not only HTML.
            Keep::Body
        } else {
            Keep::Html
        };
        let content = crate::content::Extractor::new(&settings.content)?;
        let content = sinks
            .iter()
            .any(|s| s.wants_content())
            .then(|| Arc::new(content));
        let mut request = settings.request;
        request.fetch.max_connections = Some(connections);
        Ok(BulkFetcher {
            config: Config {
                concurrency: settings.concurrency,
                politeness: request.politeness,
                max_redirect: request.max_redirect,
                retry: request.retry,
                grace: settings.grace,
                keep,
                output,
                extract: extract.map(Arc::new),
                index,
                recipe: recipe.map(Arc::new),
                journal,
                content,
            },
            fetcher: Fetcher::new(request.fetch)?,
            sinks,
            observer,
        })
    }
}

/// Creates the output directory and checks it is one.
fn prepare_dir(dir: PathBuf) -> Result<PathBuf, BuildError> {
    let checked = std::fs::create_dir_all(&dir).and_then(|()| {
        if std::fs::metadata(&dir)?.is_dir() {
            Ok(())
        } else {
            Err(std::io::Error::other("not a directory"))
        }
    });
    match checked {
        Ok(()) => Ok(dir),
        Err(source) => Err(BuildError::OutputDir { path: dir, source }),
    }
}

/// Fetches streams of URLs; built by [`BulkFetcher::builder`], used once.
pub struct BulkFetcher {
    config: Config,
    fetcher: Fetcher,
    sinks: Vec<Box<dyn Sink>>,
    observer: Option<Observer>,
}

impl BulkFetcher {
    /// Starts configuring a bulk fetch.
    pub fn builder() -> BulkFetcherBuilder {
        BulkFetcherBuilder::default()
    }

    /// Starts from a whole settings value (read from a file, say); the
    /// builder's setters then change single fields of it.
    pub fn from_settings(settings: BulkSettings) -> BulkFetcherBuilder {
        BulkFetcherBuilder {
            settings,
            ..BulkFetcherBuilder::default()
        }
    }

    /// Fetches every item of `urls` (read as it is needed) until the stream ends or
    /// `cancel` fires, then closes the sinks and returns the tally. One item's
    /// failure never stops the run; a failing sink does ([`StopReason::Fatal`]; a reader that left, [`StopReason::OutputClosed`]).
    pub async fn run(
        self,
        urls: impl Stream<Item = InputItem> + Send,
        cancel: CancellationToken,
    ) -> Summary {
        runner::run(self, urls, cancel).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::items::RulesSource;

    #[test]
    fn the_builder_writes_its_settings_and_a_later_setter_wins() {
        let mut settings = BulkSettings {
            concurrency: 3,
            ..BulkSettings::default()
        };
        settings.request.max_redirect = 2;
        let text = serde_json::to_string(&settings).unwrap();
        let back: BulkSettings = serde_json::from_str(&text).unwrap();
        let b = BulkFetcher::from_settings(back)
            .per_host(1)
            .concurrency(9)
            .max_redirect(4);
        assert_eq!(b.settings().concurrency, 9);
        assert_eq!(b.settings().request.max_redirect, 4);
        assert_eq!(b.settings().request.politeness.max_in_flight, 1);
        b.build().unwrap();
    }

    #[test]
    fn settings_that_cannot_work_are_refused_with_the_reason() {
        let cases: [(BulkFetcherBuilder, &str); 4] = [
            (BulkFetcher::builder().concurrency(0), "concurrency"),
            (BulkFetcher::builder().per_host(0), "per_host"),
            (
                BulkFetcher::builder().skip_existing(true),
                "output directory",
            ),
            (
                BulkFetcher::builder().retry_policy(RetryPolicy {
                    max_tries: 0,
                    ..RetryPolicy::default()
                }),
                "max_tries",
            ),
        ];
        for (b, words) in cases {
            match b.build() {
                Err(BuildError::Value(m)) => assert!(m.contains(words), "{m}"),
                Err(e) => panic!("{words}: {e}"),
                Ok(_) => panic!("{words} was accepted"),
            }
        }
    }

    #[test]
    fn rules_text_in_the_settings_is_parsed_by_build() {
        let mut settings = BulkSettings {
            extract: Some(RulesSource {
                toml: Some("[[[".into()),
                fields: Vec::new(),
            }),
            ..BulkSettings::default()
        };
        assert!(matches!(
            BulkFetcher::from_settings(settings.clone()).build(),
            Err(BuildError::Rules(_))
        ));
        settings.extract = Some(RulesSource {
            toml: None,
            fields: vec!["title=css:h1".into()],
        });
        BulkFetcher::from_settings(settings).build().unwrap();
    }
}
