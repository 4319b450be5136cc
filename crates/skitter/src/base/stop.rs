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
    /// A crawl limit was reached. Bulk fetches have no run-wide limits, so
    /// never stop for this.
    Limit(Limit),
    /// An output or the frontier failed (the message says what).
    Fatal(String),
    /// An output is a pipe whose reader went away (`skitter crawl --jsonl - |
    /// head`): the crawl stops, as a command does when its reader leaves; not
    /// an error.
    OutputClosed(String),
}

/// The run-wide limit a crawl stopped at. Shown and serialised as the flag's
/// name (`max-pages`), as before it was a type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Limit {
    /// `--max-pages`, counted by this process.
    #[serde(rename = "max-pages")]
    MaxPages,
    /// `--max-pages` of a crawl shared through Redis, counted over every worker.
    #[serde(rename = "max-pages (crawl-wide)")]
    MaxPagesCrawlWide,
    /// `--max-time`.
    #[serde(rename = "max-time")]
    MaxTime,
}

impl Limit {
    /// The flag's name, as reports show it.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::MaxPages => "max-pages",
            Limit::MaxPagesCrawlWide => "max-pages (crawl-wide)",
            Limit::MaxTime => "max-time",
        }
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_read_and_serialise_as_their_flags() {
        for (limit, name) in [
            (Limit::MaxPages, "max-pages"),
            (Limit::MaxPagesCrawlWide, "max-pages (crawl-wide)"),
            (Limit::MaxTime, "max-time"),
        ] {
            assert_eq!(limit.to_string(), name);
            let json = serde_json::to_value(StopReason::Limit(limit)).unwrap();
            assert_eq!(json, serde_json::json!({ "limit": name }));
        }
    }
}
