//! The end-of-crawl report: the baseline's per-URL lines and counters, as text or
//! JSON.
//!
//! [`Tally`] consumes records as they finish (it is fed by the same task that feeds
//! the sinks) and [`Report`] is what [`crate::Crawler::run`] returns. The text form
//! keeps the baseline's layout line for line — `*** Report ***`, one line per URL
//! sorted by URL, `Finished …`, right-aligned counters, `Todo:`, `Done:`, `Date:` —
//! so scripts written for it keep working; the `Finished` line adds the total
//! urls/sec the baseline lacked.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::time::Duration;

use serde::Serialize;

use crate::fetch::ProxyStats;
use crate::outcome::{FetchFailure, OutcomeKind, PageRecord, SkipReason};

/// The counter of URLs that failed by a bug in skitter (a panic while handling
/// them); non-zero means the crawl did not go as it should.
pub const INTERNAL_COUNTER: &str = "internal_errors";
use crate::sink::SinkSummary;

/// Why a crawl stopped before its queue ran dry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Ctrl-C, SIGTERM, or the caller's cancellation token.
    Interrupted,
    /// A crawl limit was reached (which one is named).
    Limit(String),
    /// An output or the frontier failed (the message says what).
    Fatal(String),
    /// An output is a pipe whose reader went away (`skitter crawl --jsonl - |
    /// head`): the crawl stops, as a command does when its reader leaves; not
    /// an error.
    OutputClosed(String),
}

/// Accumulates finished records into counters and report lines.
#[derive(Debug, Default)]
pub struct Tally {
    pages: Vec<PageRecord>,
    counters: BTreeMap<String, u64>,
    throttled: BTreeMap<String, BTreeMap<String, u64>>,
}

impl Tally {
    /// Counts one finished URL.
    pub fn add(&mut self, record: &PageRecord) {
        for (key, n) in counter_keys(record) {
            *self.counters.entry(key).or_default() += n;
        }
        let mut kept = record.clone();
        // The parent is only needed by streaming outputs; the report does not print it.
        kept.parent = None;
        self.pages.push(kept);
    }

    /// Adds `n` to a named counter (link skips, robots fetches…).
    pub fn bump(&mut self, key: &str, n: u64) {
        if n > 0 {
            *self.counters.entry(key.to_string()).or_default() += n;
        }
    }

    /// Sets the per-host slow-downs: host → reason → how often.
    pub fn throttled(&mut self, throttled: BTreeMap<String, BTreeMap<String, u64>>) {
        self.throttled = throttled;
    }

    /// URLs recorded so far.
    pub fn done(&self) -> u64 {
        self.pages.len() as u64
    }

    /// Closes the tally into a report.
    pub fn finish(mut self, summary: ReportSummary) -> Report {
        self.pages
            .sort_by(|a, b| a.url.as_str().cmp(b.url.as_str()));
        Report {
            done: self.pages.len() as u64,
            pages: self.pages,
            counters: self.counters,
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
    /// One record per URL, sorted by URL.
    pub pages: Vec<PageRecord>,
    /// The baseline's counters (`html`, `html_bytes`, `status_404`, `fail_timeout`…)
    /// plus skitter's (`skipped_robots`, `links_skipped_scope`…).
    pub counters: BTreeMap<String, u64>,
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
    /// URLs whose handling failed by a bug in skitter (see [`INTERNAL_COUNTER`]).
    pub fn internal_errors(&self) -> u64 {
        self.counters.get(INTERNAL_COUNTER).copied().unwrap_or(0)
    }

    /// Whether the crawl ran until nothing was left.
    pub fn completed(&self) -> bool {
        self.stopped.is_none()
    }

    /// URLs per second over the whole crawl.
    pub fn urls_per_sec(&self) -> f64 {
        self.done as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Writes the baseline's text report.
    pub fn write_text(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(w, "*** Report ***")?;
        for page in &self.pages {
            writeln!(w, "{}", url_line(page))?;
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
        for (key, value) in &self.counters {
            writeln!(w, "{value:>10} {key}")?;
        }
        for (host, reasons) in &self.throttled {
            let reasons: Vec<String> = reasons.iter().map(|(r, n)| format!("{r} x{n}")).collect();
            writeln!(w, "Throttled: {host} {}", reasons.join(", "))?;
        }
        for sink in &self.sinks {
            writeln!(
                w,
                "Output: {} {} records, {} bytes, {}",
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

    /// The report as JSON: the same records, counters and totals as the text.
    pub fn to_json(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        if let Some(obj) = value.as_object_mut() {
            obj.insert("urls_per_sec".into(), self.urls_per_sec().into());
            obj.insert("completed".into(), self.completed().into());
        }
        value
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

/// The counters one record adds to, per the baseline's rules.
fn counter_keys(p: &PageRecord) -> Vec<(String, u64)> {
    let mut keys = Vec::with_capacity(3);
    if p.items > 0 {
        keys.push(("items".into(), p.items));
    }
    if p.extract_failed {
        keys.push(("extract_errors".into(), 1));
    }
    match p.kind {
        OutcomeKind::Failed => {
            keys.push(("fail".into(), 1));
            let kind = p.error.as_ref().map_or("other", |e| e.kind.as_str());
            keys.push((format!("fail_{kind}"), 1));
            if p.error.as_ref().is_some_and(FetchFailure::is_internal) {
                keys.push((INTERNAL_COUNTER.into(), 1));
            }
        }
        OutcomeKind::Redirect => {
            keys.push(("redirect".into(), 1));
            if let Some(e) = &p.error {
                keys.push((format!("redirect_{}", e.kind), 1));
            }
        }
        OutcomeKind::Html => {
            keys.push(("html".into(), 1));
            keys.push(("html_bytes".into(), p.size));
        }
        OutcomeKind::Other => {
            keys.push(("other".into(), 1));
            keys.push(("other_bytes".into(), p.size));
        }
        OutcomeKind::HttpError => {
            keys.push(("error".into(), 1));
            keys.push(("error_bytes".into(), p.size));
            if let Some(s) = p.status {
                keys.push((format!("status_{s}"), 1));
            }
            if let Some(e) = &p.error {
                keys.push((format!("error_{}", e.kind), 1));
            }
        }
        OutcomeKind::Skipped => {
            keys.push(("skipped".into(), 1));
            let why = p.skip.map_or("other", SkipReason::as_str);
            keys.push((format!("skipped_{why}"), 1));
        }
    }
    if p.truncated {
        keys.push(("truncated".into(), 1));
    }
    if let Some(change) = p.change {
        keys.push((format!("change_{}", change.as_str()), 1));
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{ErrorKind, FetchFailure};
    use url::Url;

    fn rec(url: &str, kind: OutcomeKind) -> PageRecord {
        let mut r = PageRecord::skipped(Url::parse(url).unwrap(), SkipReason::Robots, 0, None);
        r.kind = kind;
        r.skip = None;
        r.attempts = 1;
        r
    }

    fn sample() -> Report {
        let mut t = Tally::default();
        let mut html = rec("http://h/", OutcomeKind::Html);
        html.status = Some(200);
        html.content_type = Some("text/html".into());
        html.encoding = Some("utf-8".into());
        html.size = 908;
        html.num_urls = 4;
        html.num_new_urls = 3;
        t.add(&html);
        let mut missing = rec("http://h/missing", OutcomeKind::HttpError);
        missing.status = Some(404);
        missing.size = 14;
        t.add(&missing);
        let mut redirect = rec("http://h/old", OutcomeKind::Redirect);
        redirect.status = Some(301);
        redirect.next_url = Some(Url::parse("http://h/new").unwrap());
        t.add(&redirect);
        let mut fail = rec("http://h:1/", OutcomeKind::Failed);
        fail.error = Some(FetchFailure {
            kind: ErrorKind::Connect,
            message: "connection refused".into(),
        });
        t.add(&fail);
        t.add(&PageRecord::skipped(
            Url::parse("http://h/private").unwrap(),
            SkipReason::Robots,
            1,
            None,
        ));
        t.finish(ReportSummary {
            todo: 0,
            elapsed: Duration::from_millis(500),
            max_tasks: 4,
            stopped: None,
            sinks: vec![],
            proxies: vec![],
        })
    }

    #[test]
    fn text_report_has_the_baseline_shape() {
        let text = sample().to_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "*** Report ***");
        assert_eq!(lines[1], "http://h/ 200 text/html utf-8 908 3/4");
        assert_eq!(lines[2], "http://h/missing 404 None None 14");
        assert_eq!(lines[3], "http://h/old 301 redirect http://h/new");
        assert_eq!(lines[4], "http://h/private skipped robots");
        assert_eq!(lines[5], "http://h:1/ error connect: connection refused");
        assert_eq!(
            lines[6],
            "Finished 5 urls in 0.500 secs (max_tasks=4) (2.500 urls/sec/task) (10.000 urls/sec)"
        );
        assert!(lines.contains(&"         1 status_404"));
        assert!(lines.contains(&"       908 html_bytes"));
        assert!(lines.contains(&"         1 fail_connect"));
        assert!(lines.contains(&"         1 skipped_robots"));
        assert!(lines.contains(&"Todo: 0"));
        assert!(lines.contains(&"Done: 5"));
        assert!(lines.last().unwrap().starts_with("Date: ") && text.ends_with("local time\n"));
    }

    #[test]
    fn json_report_matches_text_totals() {
        let json = sample().to_json();
        assert_eq!(json["done"], 5);
        assert_eq!(json["todo"], 0);
        assert_eq!(json["completed"], true);
        assert_eq!(json["counters"]["html"], 1);
        assert_eq!(json["pages"].as_array().unwrap().len(), 5);
        assert_eq!(json["pages"][0]["url"], "http://h/");
    }
}
