//! Why a run stopped early: one type for the crawler's [`Report`](crate::Report)
//! and the bulk fetcher's [`Summary`](crate::bulk::Summary).

use serde::Serialize;

/// Why a crawl stopped before its queue ran dry, or a bulk fetch before its
/// input ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Ctrl-C, SIGTERM, or the caller's cancellation token.
    Interrupted,
    /// A crawl limit was reached (which one is named). Bulk fetches have no
    /// run-wide limits, so never stop for this.
    Limit(String),
    /// An output or the frontier failed (the message says what).
    Fatal(String),
    /// An output is a pipe whose reader went away (`skitter crawl --jsonl - |
    /// head`): the crawl stops, as a command does when its reader leaves; not
    /// an error.
    OutputClosed(String),
}
