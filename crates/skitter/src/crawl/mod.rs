//! The crawl engine on top of every other layer: the builder's settings
//! ([`config`]) and their wiring (`assemble`), the [`Crawler`] that runs them,
//! the scheduler's global cap, one URL's steps (`worker`, `deliver`), which
//! discovered links are followed (`admission`), the CPU pool for parsing
//! (`body`), the crash-safe hand-off to the outputs (`handoff`), the stop
//! signal (`stop_signal`), live counters ([`progress`]), the numbers a
//! watcher reads ([`live`]), pausing and re-capping a running crawl
//! ([`steer`]) and the watch for a crawl held still by robots.txt outages
//! ([`stall`]).
//!
//! [`Crawler`]: crawler::Crawler

pub(crate) mod admission;
pub(crate) mod assemble;
pub(crate) mod body;
pub(crate) mod build_error;
pub mod config;
pub mod crawler;
pub(crate) mod ctx;
pub(crate) mod deadline;
pub(crate) mod deliver;
pub(crate) mod handoff;
pub mod live;
pub mod progress;
pub(crate) mod scheduler;
pub mod stall;
pub mod steer;
pub(crate) mod stop_signal;
pub(crate) mod worker;
