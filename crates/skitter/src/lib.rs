//! skitter: a fast, polite, crash-safe asynchronous web crawler.
//!
//! The data flow, each arrow one call or one bounded channel:
//! roots → [`scope`] → [`frontier`] → scheduler → fetch → [`outcome`] →
//! [`sink`]s and link extraction → back to [`scope`].
#![deny(missing_docs)]

pub mod fetch;
pub mod frontier;
pub mod outcome;
pub mod retry;
pub mod sink;
pub mod report;

pub mod store;
