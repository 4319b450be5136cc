//! skitter: a fast, polite, crash-safe asynchronous web crawler.
//!
//! The data flow, each arrow one call or one bounded channel:
//! roots → [`scope`] → [`frontier`] (seen set, per-host queues and politeness) →
//! scheduler (the global `max_tasks` cap) → [`fetch`] (with [`retry`]) →
//! [`outcome`] → [`sink`]s, and [`extract`]ed links → gate → back to the frontier.
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
//! assert_eq!(report.counters["html"], 21);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod assemble;
mod body;
mod build_error;
pub mod bulk;
pub mod config;
pub mod crawler;
mod ctx;
mod deliver;
pub mod discovery;
pub mod dns;
pub mod extract;
pub mod fetch;
pub mod frontier;
mod fsname;
mod gate;
mod halt;
mod handoff;
pub mod items;
mod limit;
pub mod outcome;
pub mod probe;
pub mod progress;
pub mod proxy_check;
pub mod recrawl;
pub mod render;
pub mod report;
pub mod report_html;
mod request;
pub mod retry;
pub mod robots;
mod scheduler;
pub mod scope;
pub mod shared;
pub mod sink;
pub mod sitemap;
mod slowdown;
mod stop;
pub mod store;
pub mod trap;
pub mod urlnorm;
mod varint;
mod worker;

pub use config::{BuildError, Config, CrawlerBuilder};
pub use crawler::{CrawlError, Crawler};
pub use report::Report;
