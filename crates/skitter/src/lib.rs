//! skitter: a fast, polite, crash-safe asynchronous web crawler.
//!
//! The data flow, each arrow one call or one bounded channel:
//! roots → [`scope`](base::scope) → [`frontier`] (seen set, per-host queues) →
//! scheduler (the global `max_tasks` cap, [`host`] politeness) → [`fetch`] (with
//! [`retry`](fetch::retry)) → [`outcome`](base::outcome) → [`output`]s, and
//! [`links`](parse::links) → admission → back to the frontier.
//!
//! ```
//! use skitter::Crawler;
//! use skitter_testsite::{SiteConfig, TestSite};
//! use tokio_util::sync::CancellationToken;
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A test site of 20 linked pages on loopback; any http(s) root works the same way.
//! let site = TestSite::start(SiteConfig { pages: 20, ..SiteConfig::default() })?;
//! let report = Crawler::builder()
//!     .root(site.url("/"))
//!     .max_tasks(50)
//!     .exclude(r"\.pdf$")
//!     .build()?
//!     .run(CancellationToken::new())
//!     .await?;
//! print!("{}", report.to_text());
//! assert!(report.completed());
//! // The 20 pages and the site's index.
//! assert_eq!(report.counters.html, 21);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

// The layers, bottom to top; a folder imports only from the ones below it
// (the allowed edges are checked by scripts/module-deps.py in CI, and drawn in
// docs/src/architecture.md).
pub mod base;
pub mod bulk;
pub mod check;
pub mod cluster;
pub mod content;
pub mod crawl;
pub mod fetch;
pub mod frontier;
pub mod host;
pub mod output;
pub mod parse;
pub mod probe;
pub mod render;
pub mod robots;
pub mod settings;
pub mod state;
pub mod watch;

pub use crawl::config::{BuildError, Config, CrawlerBuilder};
pub use crawl::crawler::{CrawlError, Crawler};
pub use output::report::Report;
pub use settings::{BulkSettings, CrawlSettings, RequestSettings};
