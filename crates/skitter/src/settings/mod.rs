//! The settings: one serialisable value per job — [`CrawlSettings`] for a
//! crawl, [`BulkSettings`] for a bulk fetch — sharing [`RequestSettings`]
//! (requests, retries, redirects, per-host politeness).
//!
//! Each is the single source its builder writes to
//! ([`CrawlerBuilder`](crate::CrawlerBuilder),
//! [`BulkFetcherBuilder`](crate::bulk::BulkFetcherBuilder)); `build` checks it
//! once into the private configuration the run reads. Every field has a
//! default and unknown fields are refused, so a stored or hand-written
//! settings document names only what it changes and a misspelt key is an
//! error. Live parts that cannot be written down (outputs, a frontier, an
//! observer) are given to the builders, not kept here.

mod bulk;
mod check;
mod crawl;
mod request;

pub use bulk::{BulkSettings, DEFAULT_CONCURRENCY, DEFAULT_MAX_PAGES, RecipeSettings};
pub use check::{CheckSettings, DEFAULT_MAX_CACHE_AGE, StatusSet};
pub use crawl::{
    CrawlSettings, DEFAULT_GRACE, DEFAULT_MAX_CRAWL_DELAY, DEFAULT_MAX_TASKS, Limits, RunSettings,
};
pub use request::{DEFAULT_MAX_REDIRECT, RequestSettings};
