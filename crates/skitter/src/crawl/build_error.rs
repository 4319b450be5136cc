//! The one error of the builders: a setting that cannot be used, found
//! before anything runs.

use std::path::PathBuf;

use crate::base::urlnorm::UrlError;
use crate::fetch::FetchSetupError;
use crate::frontier::FrontierError;
use crate::parse::items::RulesError;
use crate::state::spill::SpillError;

/// A setting was invalid; nothing was started. One type for both builders:
/// [`CrawlerBuilder`](crate::CrawlerBuilder) and
/// [`BulkFetcherBuilder`](crate::bulk::BulkFetcherBuilder).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// No root URL was given.
    #[error("no root URL given")]
    NoRoots,
    /// A root could not be used.
    #[error("bad root URL {arg:?}: {source}")]
    Root {
        /// The root as given.
        arg: String,
        /// Why it was rejected.
        source: UrlError,
    },
    /// An `--exclude`/`--include` pattern is not a valid regex.
    #[error("bad pattern {pattern:?}: {source}")]
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// The regex error.
        source: regex::Error,
    },
    /// A numeric setting is out of range.
    #[error("{0}")]
    Value(String),
    /// The extraction rules given as text do not parse.
    #[error("bad extraction rules")]
    Rules(#[source] RulesError),
    /// The content options (`include`/`exclude` selectors) cannot be used.
    #[error(transparent)]
    Content(#[from] crate::content::ContentError),
    /// The HTTP client could not be set up.
    #[error(transparent)]
    Fetch(#[from] FetchSetupError),
    /// The in-memory frontier cannot create spill files where it was told to.
    #[error(transparent)]
    Frontier(#[from] FrontierError),
    /// The report's spill directory cannot hold files.
    #[error("report spill directory: {0}")]
    ReportSpill(#[from] SpillError),
    /// A setting of the built-in frontier was given together with a frontier
    /// of the caller's ([`CrawlerBuilder::frontier`](crate::CrawlerBuilder::frontier)), which it would not reach.
    #[error(
        "{0} configures the built-in frontier and would be ignored with .frontier(): give it to that frontier instead"
    )]
    FrontierSetting(&'static str),
    /// The bulk fetcher's file-name template is invalid.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// The bulk fetcher's output directory cannot be created or is not a directory.
    #[error("cannot use output directory {}", path.display())]
    OutputDir {
        /// The directory given.
        path: PathBuf,
        /// Why it cannot be used.
        source: std::io::Error,
    },
    /// The bulk fetcher's fetch index of the output directory cannot be
    /// opened (`if_modified`).
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The bulk fetcher's recipe (values, later steps, pagination) cannot
    /// work.
    #[error(transparent)]
    Recipe(#[from] RecipeError),
}

/// A recipe of dependent requests that cannot work, found before anything
/// runs.
#[derive(Debug, thiserror::Error)]
pub enum RecipeError {
    /// A value (`NAME=SPEC`) or the next-page rule does not parse.
    #[error("bad value {spec:?}")]
    Pick {
        /// The value as given.
        spec: String,
        /// Why the selector was refused.
        #[source]
        source: RulesError,
    },
    /// A later step's URL template does not parse.
    #[error("bad step URL template {template:?}: {why}")]
    Step {
        /// The template as given.
        template: String,
        /// What is wrong with it.
        why: String,
    },
    /// The parts do not fit together (a value read too late to be used, a
    /// chain whose pages would share one file…).
    #[error("{0}")]
    Shape(String),
}

/// A template placeholder is unknown or unclosed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad name template {template:?}: {why}")]
pub struct TemplateError {
    /// The template as given.
    pub template: String,
    /// What is wrong with it.
    pub why: String,
}

/// The fetch index of a bulk fetch's output directory (`fetch
/// --if-modified`) could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
#[error("fetch index {}: {source}", path.display())]
pub struct IndexError {
    /// The index file.
    pub path: PathBuf,
    /// What went wrong.
    #[source]
    pub source: IndexCause,
}

/// Why the fetch index failed.
#[derive(Debug, thiserror::Error)]
pub enum IndexCause {
    /// SQLite refused.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// The index's name is a symbolic link: refused, since writing through it
    /// would change a file elsewhere.
    #[error("it is a symbolic link, which is never opened through (remove it)")]
    SymbolicLink,
    /// The blocking task that writes the index did not finish (it panicked
    /// or the runtime is shutting down).
    #[error("the index task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}
