//! skitter: a fast, polite, crash-safe asynchronous web crawler.
//!
//! The data flow, each arrow one call or one bounded channel:
//! roots → [`scope`] → [`frontier`] (seen set, per-host queues and politeness) →
//! scheduler (the global `max_tasks` cap) → [`fetch`] (with [`retry`]) →
//! [`outcome`] → [`sink`]s, and [`extract`]ed links → gate → back to the frontier.
//!
//! ```no_run
//! use skitter::Crawler;
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let report = Crawler::builder()
//!     .root("http://127.0.0.1:8080/")
//!     .max_tasks(50)
//!     .exclude(r"\.pdf$")
//!     .build()?
//!     .run(CancellationToken::new())
//!     .await?;
//! print!("{}", report.to_text());
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod body;
pub mod bulk;
pub mod config;
pub mod crawler;
pub mod discovery;
pub mod extract;
pub mod fetch;
pub mod frontier;
mod fsname;
mod gate;
mod handoff;
pub mod items;
mod limit;
pub mod outcome;
pub mod probe;
pub mod progress;
pub mod proxy_check;
pub mod report;
pub mod report_html;
pub mod retry;
pub mod robots;
mod scheduler;
pub mod scope;
pub mod sink;
pub mod sitemap;
mod slowdown;
pub mod store;
pub mod trap;
pub mod urlnorm;
mod varint;
mod worker;

pub use config::{BuildError, Config, CrawlerBuilder};
pub use crawler::{CrawlError, Crawler};
pub use report::Report;
