//! What became of each input item, and the tally of a whole run.
//!
//! Every item ends as exactly one [`ItemReport`] (however many redirects or
//! retries it took); [`Summary`] counts them by [`Outcome`]. Failures are split the
//! way people act on them: not found (404/410, usually "the item does not exist"),
//! other HTTP statuses, network errors by kind, bodies that could not be saved,
//! and malformed input. Items skipped because their file already exists (or a
//! state file says an earlier run finished them) are not failures.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use url::Url;

use super::input::{InputError, Location};
use super::recipe::ValueError;
use super::save::SaveError;
use crate::base::outcome::{Change, ErrorKind, FetchFailure};
use crate::base::stop::StopReason;
use crate::output::SinkSummary;

/// How one item ended.
#[derive(Debug)]
pub enum Outcome {
    /// A 2xx response (after redirects), saved when an output directory is set.
    Ok {
        /// The final status.
        status: u16,
    },
    /// A final response with another status (404, 500, an unfollowed 3xx…).
    HttpError {
        /// The final status.
        status: u16,
    },
    /// No usable response: transport error, timeout, too large, bad redirect…
    Failed(FetchFailure),
    /// The response was fine but its body could not be saved.
    SaveFailed(SaveError),
    /// Not fetched: its file already exists (`skip_existing`).
    Exists,
    /// Not fetched: the state file says an earlier run finished it.
    Done,
    /// Not fetched: the input line or pattern was unusable.
    Malformed(InputError),
    /// A value a later request or the file name needed could not be read
    /// from a response of the item (missing, not parsable, the wrong type).
    Value(ValueError),
}

impl Outcome {
    /// Whether this counts against the run (everything but `Ok` and `Exists`).
    pub fn is_failure(&self) -> bool {
        !matches!(self, Outcome::Ok { .. } | Outcome::Exists | Outcome::Done)
    }
}

/// The end of one input item.
#[derive(Debug)]
pub struct ItemReport {
    /// The item's 1-based position in the input (what `{n}` names).
    pub n: u64,
    /// Where it came from.
    pub location: Location,
    /// The URL requested (absent for malformed input).
    pub url: Option<Url>,
    /// Where redirects led, when they did.
    pub final_url: Option<Url>,
    /// How it ended.
    pub outcome: Outcome,
    /// The file written, if any.
    pub saved: Option<PathBuf>,
    /// Body bytes received for the final response.
    pub bytes: u64,
    /// Requests made, retries and redirects included.
    pub requests: u32,
    /// How it compares with the last run, with
    /// [`if_modified`](super::BulkFetcherBuilder::if_modified).
    pub change: Option<Change>,
    /// Files written (more than one for a chain of pages).
    pub files: u32,
    /// Pages of its chain fetched, with a next-page rule (else 0).
    pub pages: u32,
    /// Why its chain stopped before a last page, when it did.
    pub chain_stop: Option<ChainStop>,
}

/// Why a chain of pages ended although its last page named a next one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChainStop {
    /// The next page was one the chain had fetched already.
    Loop(Url),
    /// The chain reached its page limit.
    MaxPages(u32),
}

impl fmt::Display for ChainStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChainStop::Loop(url) => write!(
                f,
                "the chain loops: its next page {url} was fetched already"
            ),
            ChainStop::MaxPages(n) => write!(f, "the chain stopped at its limit of {n} pages"),
        }
    }
}

impl fmt::Display for ItemReport {
    /// One line for logs: `LOCATION URL: what happened`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.location)?;
        if let Some(url) = &self.url {
            write!(f, " {url}")?;
        }
        match &self.outcome {
            Outcome::Ok { status } => write!(f, ": {status}"),
            Outcome::HttpError { status } => write!(f, ": HTTP {status}"),
            Outcome::Failed(e) => write!(f, ": {}: {}", e.kind, e.message),
            Outcome::SaveFailed(e) => write!(f, ": {e}"),
            Outcome::Exists => write!(f, ": skipped, file exists"),
            Outcome::Done => write!(f, ": skipped, done in an earlier run"),
            Outcome::Malformed(e) => write!(f, ": skipped: {e}"),
            Outcome::Value(e) => write!(f, ": {e}"),
        }?;
        if self.pages > 0 {
            write!(f, " ({} pages)", self.pages)?;
        }
        if let Some(stop) = &self.chain_stop {
            write!(f, " ({stop})")?;
        }
        match self.change {
            Some(change) => write!(f, " ({})", change.as_str()),
            None => Ok(()),
        }
    }
}

/// Counts of a finished run.
#[derive(Debug, Default)]
pub struct Summary {
    /// 2xx responses.
    pub ok: u64,
    /// 404 and 410 responses.
    pub not_found: u64,
    /// Other final statuses, by status.
    pub http_errors: BTreeMap<u16, u64>,
    /// Failures without a usable response, by kind.
    pub network_errors: BTreeMap<ErrorKind, u64>,
    /// Bodies that could not be saved.
    pub save_errors: u64,
    /// Items skipped because their file exists.
    pub skipped_existing: u64,
    /// Items skipped because the state file says an earlier run finished
    /// them.
    pub skipped_done: u64,
    /// Input lines or patterns that gave no URL.
    pub malformed: u64,
    /// Body bytes received (final responses).
    pub bytes: u64,
    /// Files written.
    pub files: u64,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// What each output wrote.
    pub sinks: Vec<SinkSummary>,
    /// Set when the run ended early.
    pub stopped: Option<StopReason>,
    /// Records extraction rules found (see [`crate::parse::items`]).
    pub items: u64,
    /// Pages on which some extraction rule failed.
    pub extract_errors: u64,
    /// What each proxy of the pool did (empty without a pool).
    pub proxies: Vec<crate::fetch::ProxyStats>,
    /// Items by how they compare with the last run (only with
    /// [`if_modified`](super::BulkFetcherBuilder::if_modified)).
    pub changes: BTreeMap<Change, u64>,
    /// Items failed because a value could not be read ([`Outcome::Value`]).
    pub value_errors: u64,
    /// Pages fetched by chains (with a next-page rule).
    pub pages: u64,
    /// Chains stopped because they came back to a page ([`ChainStop::Loop`]).
    pub loops: u64,
    /// Chains stopped at their page limit ([`ChainStop::MaxPages`]).
    pub cut_chains: u64,
}

impl Summary {
    /// Counts one item.
    pub fn add(&mut self, item: &ItemReport) {
        self.bytes += item.bytes;
        self.files += u64::from(item.files);
        self.pages += u64::from(item.pages);
        match item.chain_stop {
            Some(ChainStop::Loop(_)) => self.loops += 1,
            Some(ChainStop::MaxPages(_)) => self.cut_chains += 1,
            None => {}
        }
        if let Some(change) = item.change {
            *self.changes.entry(change).or_default() += 1;
        }
        match &item.outcome {
            Outcome::Ok { .. } => self.ok += 1,
            Outcome::HttpError { status: 404 | 410 } => self.not_found += 1,
            Outcome::HttpError { status } => *self.http_errors.entry(*status).or_default() += 1,
            Outcome::Failed(e) => *self.network_errors.entry(e.kind).or_default() += 1,
            Outcome::SaveFailed(_) => self.save_errors += 1,
            Outcome::Exists => self.skipped_existing += 1,
            Outcome::Done => self.skipped_done += 1,
            Outcome::Malformed(_) => self.malformed += 1,
            Outcome::Value(_) => self.value_errors += 1,
        }
    }

    /// Items that failed (see [`Outcome::is_failure`]).
    pub fn failed(&self) -> u64 {
        self.not_found
            + self.http_errors.values().sum::<u64>()
            + self.network_errors.values().sum::<u64>()
            + self.save_errors
            + self.malformed
            + self.value_errors
    }

    /// Items finished, of every kind.
    pub fn total(&self) -> u64 {
        self.ok + self.skipped_existing + self.skipped_done + self.failed()
    }
}

impl fmt::Display for Summary {
    /// The end-of-run summary: one header line, then one line per non-zero count.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.elapsed.as_secs_f64();
        writeln!(
            f,
            "{} URLs in {secs:.2}s ({:.1}/s), {} body bytes, {} files written",
            self.total(),
            self.total() as f64 / secs.max(1e-9),
            self.bytes,
            self.files
        )?;
        let mut line = |label: String, n: u64| writeln!(f, "  {label:<24}{n:>10}");
        line("ok".into(), self.ok)?;
        if self.not_found > 0 {
            line("not found (404/410)".into(), self.not_found)?;
        }
        for (status, n) in &self.http_errors {
            line(format!("http {status}"), *n)?;
        }
        for (kind, n) in &self.network_errors {
            line(format!("error {kind}"), *n)?;
        }
        if self.save_errors > 0 {
            line("save failed".into(), self.save_errors)?;
        }
        if self.value_errors > 0 {
            line("value not read".into(), self.value_errors)?;
        }
        if self.pages > 0 {
            line("chain pages".into(), self.pages)?;
        }
        if self.loops > 0 {
            line("chains that looped".into(), self.loops)?;
        }
        if self.cut_chains > 0 {
            line("chains at --max-pages".into(), self.cut_chains)?;
        }
        if self.skipped_existing > 0 {
            line("skipped (file exists)".into(), self.skipped_existing)?;
        }
        if self.skipped_done > 0 {
            line("skipped (done before)".into(), self.skipped_done)?;
        }
        if self.malformed > 0 {
            line("skipped (malformed)".into(), self.malformed)?;
        }
        for (change, n) in &self.changes {
            line(format!("change: {}", change.as_str()), *n)?;
        }
        if self.items > 0 {
            line("items extracted".into(), self.items)?;
        }
        if self.extract_errors > 0 {
            line("pages with extract errors".into(), self.extract_errors)?;
        }
        let mut table = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = crate::fetch::proxy_pool::write_table(&self.proxies, &mut table);
        for row in String::from_utf8_lossy(&table).lines() {
            writeln!(f, "  {row}")?;
        }
        match &self.stopped {
            Some(StopReason::Interrupted) => writeln!(f, "  stopped: interrupted"),
            Some(StopReason::Fatal(why)) => writeln!(f, "  stopped: output {why}"),
            Some(StopReason::OutputClosed(what)) => writeln!(f, "  stopped: {what} closed"),
            Some(StopReason::Limit(which)) => writeln!(f, "  stopped: limit {which}"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn item(outcome: Outcome) -> ItemReport {
        ItemReport {
            n: 1,
            location: Location {
                source: Arc::from("f"),
                line: 1,
            },
            url: None,
            final_url: None,
            outcome,
            saved: None,
            bytes: 10,
            requests: 1,
            change: None,
            files: 0,
            pages: 0,
            chain_stop: None,
        }
    }

    #[test]
    fn tallies_and_prints_by_outcome() {
        let mut s = Summary::default();
        let timeout = FetchFailure {
            kind: ErrorKind::Timeout,
            message: "t".into(),
        };
        for o in [
            Outcome::Ok { status: 200 },
            Outcome::Ok { status: 204 },
            Outcome::HttpError { status: 404 },
            Outcome::HttpError { status: 410 },
            Outcome::HttpError { status: 500 },
            Outcome::Failed(timeout),
            Outcome::Exists,
            Outcome::Malformed(InputError::LineTooLong),
        ] {
            s.add(&item(o));
        }
        assert_eq!((s.ok, s.not_found, s.failed(), s.total()), (2, 2, 5, 8));
        s.elapsed = Duration::from_secs(2);
        let text = s.to_string();
        let want = "8 URLs in 2.00s (4.0/s), 80 body bytes, 0 files written\n\
            \x20 ok                               2\n\
            \x20 not found (404/410)              2\n\
            \x20 http 500                         1\n\
            \x20 error timeout                    1\n\
            \x20 skipped (file exists)            1\n\
            \x20 skipped (malformed)              1\n";
        assert_eq!(text, want);
    }
}
