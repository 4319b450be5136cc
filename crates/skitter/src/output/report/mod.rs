//! The end-of-crawl report: the baseline's per-URL lines and counters, as text or
//! JSON.
//!
//! [`Tally`] consumes records as they finish (it is fed by the same task that feeds
//! the sinks) and [`Report`] is what [`crate::Crawler::run`] returns. The text form
//! keeps the baseline's layout line for line — `*** Report ***`, one line per URL
//! sorted by URL, `Finished …`, right-aligned counters, `Todo:`, `Done:`, `Date:` —
//! so scripts written for it keep working; the `Finished` line adds the total
//! urls/sec the baseline lacked.
//!
//! The per-URL records do not stay in memory: [`Tally`] hands them to a
//! spilling log (`pages.rs`) that sorts them into runs on disk past its share of
//! the memory budget, and [`Pages`] merges them back in URL order while the
//! report is written. Counters stay in memory (a few per distinct kind).

mod counters;
mod histogram;
mod pages;
mod runs;
#[cfg(test)]
mod tests;
mod top;

pub use counters::Counters;
pub use histogram::{Histogram, PAGE_BYTES, PageHistograms, RESPONSE_SECONDS};
use pages::PageLog;
pub use pages::{DEFAULT_REPORT_MEMORY, Pages, PagesIter, ReportOptions};
pub use top::HostCount;
use top::TopCounts;

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Write};
use std::time::Duration;

use serde::Serialize;

use crate::base::outcome::{OutcomeKind, PageRecord, SkipReason};
use crate::fetch::ProxyStats;

pub use crate::base::stop::{Limit, StopReason};
use crate::output::SinkSummary;

/// The report's per-URL records could not be kept or read back.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// No spill file could be created.
    #[error("report spill: {0}")]
    Spill(#[from] crate::state::spill::SpillError),
    /// A spill file could not be written or read.
    #[error("report spill: cannot {what} a report spill file: {source}")]
    Io {
        /// `read` or `write`.
        what: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A record could not be encoded for its spill file.
    #[error("report spill: cannot encode a record: {0}")]
    Encode(#[source] serde_json::Error),
    /// A spill file holds bytes that are not what was written (damaged or cut short).
    #[error("report spill: {0}")]
    Damaged(String),
}

/// Accumulates finished records into counters and per-URL lines.
#[derive(Debug)]
pub struct Tally {
    /// `None` when records are not kept, or no longer after a spill failed.
    log: Option<PageLog>,
    done: u64,
    counters: Counters,
    /// What [`Tally::add_unrecorded`] added to `counters`.
    unrecorded: Counters,
    throttled: BTreeMap<String, BTreeMap<String, u64>>,
    histograms: PageHistograms,
    /// The last [`RECENT_ERRORS`] failures, oldest first, for a watcher.
    recent_errors: VecDeque<RecentError>,
    /// The hosts with the most URLs fetched, for a watcher (bounded).
    busiest: TopCounts,
}

/// Failures a [`Tally`] keeps for a watcher (the live dashboard).
pub const RECENT_ERRORS: usize = 20;

/// Characters of a URL or a message a [`RecentError`] keeps.
const RECENT_TEXT: usize = 300;

/// One recent failure: a URL that failed, or got an error status.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RecentError {
    /// The URL (its first 300 characters).
    pub url: String,
    /// What went wrong: the error kind and message, or the status.
    pub what: String,
}

impl Default for Tally {
    /// Keeps records with [`ReportOptions::default`].
    fn default() -> Self {
        Tally::new(&ReportOptions::default())
    }
}

impl Tally {
    /// An empty tally keeping records as `options` say.
    pub fn new(options: &ReportOptions) -> Tally {
        Tally {
            log: options.records.then(|| PageLog::new(options)),
            done: 0,
            counters: Counters::default(),
            unrecorded: Counters::default(),
            throttled: BTreeMap::new(),
            histograms: PageHistograms::default(),
            recent_errors: VecDeque::with_capacity(RECENT_ERRORS),
            busiest: TopCounts::default(),
        }
    }

    /// A tally of counters only: no per-URL records at all.
    pub fn counting() -> Tally {
        Tally::new(&ReportOptions {
            records: false,
            ..ReportOptions::default()
        })
    }

    /// Counts one finished URL and keeps its record. Fails when the record
    /// could not be spilled; the URL is still counted, but from then on no
    /// records are kept (the report's lines would be incomplete).
    pub fn add(&mut self, record: &PageRecord) -> Result<(), ReportError> {
        self.counters.count(record);
        self.done += 1;
        // Only a URL that got a response has a response time and a size.
        if record.status.is_some() {
            let h = &mut self.histograms;
            h.response_seconds.observe(record.elapsed.as_secs_f64());
            h.page_bytes.observe(record.size as f64);
        }
        if record.kind != OutcomeKind::Skipped {
            self.busiest.observe(record.url.host_str().unwrap_or(""));
        }
        if let Some(what) = failure(record) {
            if self.recent_errors.len() == RECENT_ERRORS {
                self.recent_errors.pop_front();
            }
            let url = record.url.as_str().chars().take(RECENT_TEXT).collect();
            self.recent_errors.push_back(RecentError { url, what });
        }
        match self.log.as_mut().map(|log| log.add(record)) {
            Some(Err(e)) => {
                self.log = None;
                Err(e)
            }
            _ => Ok(()),
        }
    }

    /// Adds counts that no record accounts for (link skips, trap trips,
    /// slow-downs, the browser's requests…).
    pub fn add_unrecorded(&mut self, counts: &Counters) {
        self.counters.add(counts);
        self.unrecorded.add(counts);
    }

    /// Sets the per-host slow-downs: host → reason → how often.
    pub fn throttled(&mut self, throttled: BTreeMap<String, BTreeMap<String, u64>>) {
        self.throttled = throttled;
    }

    /// URLs recorded so far.
    pub fn done(&self) -> u64 {
        self.done
    }

    /// The counters so far, what no record accounts for included.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The last failures, oldest first (at most [`RECENT_ERRORS`]).
    pub fn recent_errors(&self) -> Vec<RecentError> {
        self.recent_errors.iter().cloned().collect()
    }

    /// The `n` hosts with the most URLs fetched so far (skips not counted),
    /// most first; counts may be over by a little in a crawl of very many
    /// hosts (see [`HostCount::over`]).
    pub fn busiest(&self, n: usize) -> Vec<HostCount> {
        self.busiest.top(n)
    }

    /// The response-time and page-size histograms so far.
    pub fn histograms(&self) -> &PageHistograms {
        &self.histograms
    }

    /// Closes the tally into a report.
    pub fn finish(self, summary: ReportSummary) -> Report {
        Report {
            done: self.done,
            pages: self.log.map(PageLog::finish).unwrap_or_default(),
            counters: self.counters,
            unrecorded: self.unrecorded,
            throttled: self.throttled,
            todo: summary.todo,
            elapsed: summary.elapsed,
            max_tasks: summary.max_tasks,
            date: chrono::Local::now(),
            stopped: summary.stopped,
            sinks: summary.sinks,
            proxies: summary.proxies,
        }
    }
}

/// What a failed or error-status record says went wrong; `None` for the others.
fn failure(record: &PageRecord) -> Option<String> {
    let what = match (record.kind, &record.error, record.status) {
        (OutcomeKind::Failed, Some(e), _) => format!("{}: {}", e.kind.as_str(), e.message),
        (OutcomeKind::Failed, None, _) => "failed".to_string(),
        (OutcomeKind::HttpError, _, Some(status)) => format!("status {status}"),
        (OutcomeKind::HttpError, _, None) => "error status".to_string(),
        _ => return None,
    };
    Some(what.chars().take(RECENT_TEXT).collect())
}

/// What the crawler knows at the end besides the records.
#[derive(Clone, Debug, Default)]
pub struct ReportSummary {
    /// URLs left queued or in flight.
    pub todo: u64,
    /// Wall time of the crawl.
    pub elapsed: Duration,
    /// The concurrency cap.
    pub max_tasks: usize,
    /// Why it stopped early, if it did.
    pub stopped: Option<StopReason>,
    /// What each output wrote.
    pub sinks: Vec<SinkSummary>,
    /// What each proxy of the pool did (empty without a pool).
    pub proxies: Vec<ProxyStats>,
}

/// The result of a crawl.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// One record per URL, sorted by URL, read from memory and spill files
    /// (empty when the crawl kept no records, see [`ReportOptions::records`]).
    pub pages: Pages,
    /// The baseline's counters (`html`, `html_bytes`, `status_404`, `fail_timeout`…)
    /// plus skitter's (`skipped_robots`, `links_skipped_scope`…).
    pub counters: Counters,
    /// The part of `counters` no record accounts for (link skips, trap trips,
    /// slow-downs, added by [`Tally::add_unrecorded`]): what a Redis worker adds to the
    /// crawl-wide totals at the end, its records' counts having gone there as
    /// they finished.
    #[serde(skip)]
    pub unrecorded: Counters,
    /// Hosts that slowed the crawl down: host → reason (`429`, `retry_after`,
    /// `distress`, `robots_unavailable`) → how often.
    pub throttled: BTreeMap<String, BTreeMap<String, u64>>,
    /// URLs left queued or in flight when the crawl stopped (0 when it completed).
    pub todo: u64,
    /// URLs with a record.
    pub done: u64,
    /// Wall time.
    #[serde(serialize_with = "secs")]
    pub elapsed: Duration,
    /// The concurrency cap.
    pub max_tasks: usize,
    /// When the crawl ended, local time.
    pub date: chrono::DateTime<chrono::Local>,
    /// Why it stopped early; absent when it completed.
    pub stopped: Option<StopReason>,
    /// What each output wrote.
    pub sinks: Vec<SinkSummary>,
    /// What each proxy of the pool did, credentials removed (absent from
    /// JSON without a pool).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub proxies: Vec<ProxyStats>,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl Report {
    /// URLs whose handling failed by a bug in skitter (a panic while handling them; see
    /// [`Counters::internal_errors`]): non-zero means the crawl did not go as
    /// it should.
    pub fn internal_errors(&self) -> u64 {
        self.counters.internal_errors
    }

    /// Whether the crawl ran until nothing was left.
    pub fn completed(&self) -> bool {
        self.stopped.is_none()
    }

    /// URLs per second over the whole crawl.
    pub fn urls_per_sec(&self) -> f64 {
        self.done as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Writes the baseline's text report, one record at a time. A spill file
    /// that cannot be read is an error of kind `Other` wrapping a [`ReportError`].
    pub fn write_text(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(w, "*** Report ***")?;
        for page in self.pages.iter() {
            writeln!(w, "{}", url_line(&page.map_err(io::Error::other)?))?;
        }
        let secs = self.elapsed.as_secs_f64();
        let per_task = self.urls_per_sec() / self.max_tasks.max(1) as f64;
        writeln!(
            w,
            "Finished {} urls in {:.3} secs (max_tasks={}) ({:.3} urls/sec/task) ({:.3} urls/sec)",
            self.done,
            secs,
            self.max_tasks,
            per_task,
            self.urls_per_sec()
        )?;
        write!(w, "{}", self.counters)?;
        for (host, reasons) in &self.throttled {
            let reasons: Vec<String> = reasons.iter().map(|(r, n)| format!("{r} x{n}")).collect();
            writeln!(w, "Throttled: {host} {}", reasons.join(", "))?;
        }
        for sink in &self.sinks {
            let refused = match sink.refused {
                0 => String::new(),
                n => format!(" ({n} refused)"),
            };
            writeln!(
                w,
                "Output: {} {} records{refused}, {} bytes, {}",
                sink.name,
                sink.records,
                sink.bytes,
                sink.files.join(" ")
            )?;
        }
        crate::fetch::proxy_pool::write_table(&self.proxies, w)?;
        match &self.stopped {
            Some(StopReason::Interrupted) => writeln!(w, "Stopped: interrupted")?,
            Some(StopReason::Limit(which)) => writeln!(w, "Stopped: limit {which}")?,
            Some(StopReason::Fatal(why)) => writeln!(w, "Stopped: error: {why}")?,
            Some(StopReason::OutputClosed(what)) => writeln!(w, "Stopped: output closed: {what}")?,
            None => {}
        }
        writeln!(w, "Todo: {}", self.todo)?;
        writeln!(w, "Done: {}", self.done)?;
        writeln!(
            w,
            "Date: {} local time",
            self.date.format("%a %b %e %H:%M:%S %Y")
        )
    }

    /// The text report as a string.
    pub fn to_text(&self) -> String {
        let mut out = Vec::new();
        self.write_text(&mut out)
            .expect("writing to a Vec cannot fail");
        String::from_utf8_lossy(&out).into_owned()
    }

    /// The report as one JSON value: the same records, counters and totals as
    /// the text. It holds every record in memory; [`Report::write_json`] does not.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(JsonReport::of(self)).unwrap_or(serde_json::Value::Null)
    }

    /// Writes the JSON of [`Report::to_json`] (no newline after it), record by
    /// record, without building it in memory.
    pub fn write_json(&self, w: &mut dyn Write) -> io::Result<()> {
        self.write_json_with(w, &serde_json::Map::new())
    }

    /// [`Report::write_json`] with more keys after the report's own (a Redis
    /// worker adds the crawl-wide totals).
    pub fn write_json_with(
        &self,
        w: &mut dyn Write,
        extra: &serde_json::Map<String, serde_json::Value>,
    ) -> io::Result<()> {
        let mut json = JsonReport::of(self);
        json.extra = extra;
        serde_json::to_writer(w, &json).map_err(io::Error::from)
    }
}

/// The report with the totals JSON adds to it.
#[derive(Serialize)]
struct JsonReport<'a> {
    #[serde(flatten)]
    report: &'a Report,
    urls_per_sec: f64,
    completed: bool,
    #[serde(flatten)]
    extra: &'a serde_json::Map<String, serde_json::Value>,
}

static NO_EXTRA: std::sync::LazyLock<serde_json::Map<String, serde_json::Value>> =
    std::sync::LazyLock::new(serde_json::Map::new);

impl JsonReport<'_> {
    fn of(report: &Report) -> JsonReport<'_> {
        JsonReport {
            report,
            urls_per_sec: report.urls_per_sec(),
            completed: report.completed(),
            extra: &NO_EXTRA,
        }
    }
}

fn opt(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or("None")
}

/// One URL's line, in the baseline's shapes.
fn url_line(p: &PageRecord) -> String {
    let status = p
        .status
        .map_or_else(|| "None".to_string(), |s| s.to_string());
    match p.kind {
        OutcomeKind::Failed => {
            let e = p.error.as_ref();
            format!(
                "{} error {}: {}",
                p.url,
                e.map_or("other", |e| e.kind.as_str()),
                e.map_or("", |e| e.message.as_str())
            )
        }
        OutcomeKind::Redirect => {
            let next = p.next_url.as_ref().map_or("None", |u| u.as_str());
            match &p.error {
                Some(e) => format!(
                    "{} {status} redirect {next} (not followed: {})",
                    p.url, e.kind
                ),
                None => format!("{} {status} redirect {next}", p.url),
            }
        }
        OutcomeKind::Html => format!(
            "{} {status} {} {} {} {}/{}",
            p.url,
            opt(&p.content_type),
            opt(&p.encoding),
            p.size,
            p.num_new_urls,
            p.num_urls
        ),
        OutcomeKind::Other | OutcomeKind::HttpError => {
            let mut line = format!(
                "{} {status} {} {} {}",
                p.url,
                opt(&p.content_type),
                opt(&p.encoding),
                p.size
            );
            if let Some(e) = &p.error {
                line.push_str(&format!(" ({}: {})", e.kind, e.message));
            }
            line
        }
        OutcomeKind::Skipped => format!(
            "{} skipped {}",
            p.url,
            p.skip.map_or("other", SkipReason::as_str)
        ),
    }
}
