//! The report's sections, each appending its HTML to the page. Numbers are written
//! for reading (`1,234`, `4.2 MiB`) with the raw value in `data-v` so the table
//! sorter compares numbers, not text.

use std::fmt::Write;
use std::time::Duration;

use super::format::{bytes, clip, duration, esc, number, rate};
use super::stats::{LATENCY_BOUNDS_MS, Stats};
use super::svg::{self, Column};
use super::timeaxis;
use super::timeline::{SINK_NAME, Timeline};
use crate::base::outcome::OutcomeKind;
use crate::output::report::{Report, StopReason};

/// Error messages are cut to this many characters; the JSON report has them whole.
const MAX_MESSAGE: usize = 300;

/// Title, how the crawl ended, and when.
pub fn header(out: &mut String, report: &Report) {
    let (class, text) = match &report.stopped {
        None => ("done", "Completed".to_string()),
        Some(StopReason::Interrupted) => ("stopped", "Interrupted".to_string()),
        Some(StopReason::Limit(which)) => ("stopped", format!("Stopped: limit {which}")),
        Some(StopReason::Fatal(why)) => ("fatal", format!("Stopped: {}", clip(why, 120))),
        Some(StopReason::OutputClosed(what)) => (
            "stopped",
            format!("Stopped: output closed: {}", clip(what, 120)),
        ),
    };
    let _ = write!(
        out,
        r#"<header><h1>skitter crawl report</h1><span class="badge {class}">{}</span><span class="sub">{}</span></header>"#,
        esc(&text),
        esc(&report.date.format("%Y-%m-%d %H:%M:%S %:z").to_string()),
    );
}

/// The headline totals, one card each.
pub fn cards(out: &mut String, report: &Report, stats: &Stats) {
    let k = |kind| stats.kind(kind);
    let failed = k(OutcomeKind::Failed);
    let http = k(OutcomeKind::HttpError);
    let cards: [(&str, String, &str); 12] = [
        ("URLs done", number(report.done), ""),
        ("HTML pages", number(k(OutcomeKind::Html)), ""),
        ("Other files", number(k(OutcomeKind::Other)), ""),
        ("Redirects", number(k(OutcomeKind::Redirect)), ""),
        (
            "HTTP errors",
            number(http),
            if http > 0 { "warn" } else { "" },
        ),
        (
            "Failures",
            number(failed),
            if failed > 0 { "bad" } else { "" },
        ),
        ("Skipped", number(k(OutcomeKind::Skipped)), ""),
        ("Downloaded", bytes(stats.bytes), ""),
        ("Wall time", duration(report.elapsed), ""),
        ("URLs / second", rate(report.urls_per_sec()), ""),
        ("Left in queue", number(report.todo), ""),
        ("Concurrency", number(report.max_tasks as u64), ""),
    ];
    out.push_str(r#"<div class="cards">"#);
    for (key, value, class) in cards {
        let _ = write!(
            out,
            r#"<div class="card {class}"><div class="k">{key}</div><div class="v">{value}</div></div>"#
        );
    }
    out.push_str("</div>");
}

/// The URLs/s chart over the crawl's `elapsed` wall time, or why there is none.
pub fn timeline(out: &mut String, timeline: &Timeline, elapsed: Duration) {
    out.push_str("<section><h2>URLs per second</h2>");
    let total = timeline.total();
    if total.fetched + total.skipped == 0 {
        out.push_str(r#"<p class="empty">No URL finished while the timeline was recording.</p>"#);
    } else {
        out.push_str(&svg::rate_chart(timeline, elapsed));
        let (step, _) = timeaxis::points(timeline, timeaxis::span(timeline, elapsed));
        let _ = write!(
            out,
            r#"<p class="note">URLs finished per second (blue; averaged over the crawl, that is the URLs / second above), of which failures and error statuses (red); each step covers {}. Hover for counts.</p>"#,
            duration(step)
        );
    }
    out.push_str("</section>");
}

/// Responses per HTTP status, with failures as one more column.
pub fn statuses(out: &mut String, stats: &Stats) {
    out.push_str("<section><h2>HTTP status codes</h2>");
    let failed = stats.kind(OutcomeKind::Failed);
    if stats.statuses.is_empty() && failed == 0 {
        out.push_str(r#"<p class="empty">No responses.</p></section>"#);
        return;
    }
    let mut cols: Vec<Column> = stats
        .statuses
        .iter()
        .map(|(&code, &n)| Column {
            label: code.to_string(),
            value: n,
            class: match code {
                200..=299 => "ok",
                300..=399 => "redir",
                400..=499 => "client",
                500..=599 => "server",
                _ => "other",
            },
        })
        .collect();
    if failed > 0 {
        cols.push(Column {
            label: "failed".into(),
            value: failed,
            class: "fail",
        });
    }
    out.push_str(&svg::columns(&cols, "Responses per HTTP status"));
    if failed > 0 {
        out.push_str(r#"<p class="note">failed: no usable response (see Errors).</p>"#);
    }
    out.push_str("</section>");
}

/// The response-time histogram and percentiles.
pub fn latency(out: &mut String, stats: &Stats) {
    out.push_str("<section><h2>Response times</h2>");
    let l = &stats.latency;
    if l.buckets.iter().all(|n| *n == 0) {
        out.push_str(r#"<p class="empty">Nothing was fetched.</p></section>"#);
        return;
    }
    // Milliseconds bare, seconds marked, so sixteen labels fit side by side.
    let label = |ms: u64| {
        if ms >= 1000 {
            format!("{}s", ms / 1000)
        } else {
            ms.to_string()
        }
    };
    let last = LATENCY_BOUNDS_MS.len();
    let cols: Vec<Column> = l
        .buckets
        .iter()
        .enumerate()
        .map(|(i, &n)| Column {
            label: match i {
                0 => format!("<{}ms", LATENCY_BOUNDS_MS[0]),
                i if i == last => format!("≥{}", label(LATENCY_BOUNDS_MS[last - 1])),
                i => label(LATENCY_BOUNDS_MS[i - 1]),
            },
            value: n,
            class: "lat",
        })
        .collect();
    out.push_str(&svg::columns(&cols, "Fetches per response-time bucket"));
    let _ = write!(
        out,
        r#"<p class="pct"><span>median <b>{}</b></span><span>p90 <b>{}</b></span><span>p99 <b>{}</b></span><span>max <b>{}</b></span></p><p class="note">Time per URL in milliseconds (s: seconds), retries included; each column starts at its label, on a log scale.</p></section>"#,
        duration(l.p50),
        duration(l.p90),
        duration(l.p99),
        duration(l.max),
    );
}

/// The busiest hosts.
pub fn hosts(out: &mut String, stats: &Stats) {
    out.push_str("<section><h2>Top hosts</h2>");
    if stats.hosts.is_empty() {
        out.push_str(r#"<p class="empty">No hosts.</p></section>"#);
        return;
    }
    out.push_str(r#"<table class="sortable"><thead><tr><th>Host</th><th class="n">URLs</th><th class="n">Errors</th><th class="n">Bytes</th><th class="n">Mean time</th></tr></thead><tbody>"#);
    for h in &stats.hosts {
        let mean = h
            .elapsed
            .checked_div(h.fetched.max(1) as u32)
            .unwrap_or_default();
        let _ = write!(
            out,
            r#"<tr><td class="url">{}</td><td class="n" data-v="{}">{}</td><td class="n" data-v="{}">{}</td><td class="n" data-v="{}">{}</td><td class="n" data-v="{}">{}</td></tr>"#,
            esc(&h.host),
            h.pages,
            number(h.pages),
            h.errors,
            number(h.errors),
            h.bytes,
            bytes(h.bytes),
            mean.as_micros(),
            duration(mean),
        );
    }
    out.push_str("</tbody></table>");
    more(out, stats.hosts_total as u64, stats.hosts.len(), "hosts");
    out.push_str("</section>");
}

/// Errors by kind, then the first failing URLs.
pub fn errors(out: &mut String, stats: &Stats) {
    out.push_str("<section><h2>Errors</h2>");
    if stats.errors.is_empty() {
        out.push_str(r#"<p class="empty">No failures and no error statuses.</p></section>"#);
        return;
    }
    meters(out, &stats.errors, "Kind", "err");
    out.push_str(r#"<h2 style="margin-top:16px">Failing URLs</h2><table class="sortable"><thead><tr><th>URL</th><th>What</th><th>Message</th></tr></thead><tbody>"#);
    for f in &stats.failures {
        let _ = write!(
            out,
            r#"<tr><td class="url">{}</td><td>{}</td><td class="msg">{}</td></tr>"#,
            esc(&f.url),
            esc(&f.what),
            esc(&clip(&f.message, MAX_MESSAGE)),
        );
    }
    out.push_str("</tbody></table>");
    more(
        out,
        stats.failures_total,
        stats.failures.len(),
        "failing URLs",
    );
    out.push_str("</section>");
}

/// Why URLs and links were skipped.
pub fn skips(out: &mut String, stats: &Stats) {
    out.push_str("<section><h2>Skipped</h2>");
    if stats.skips.is_empty() {
        out.push_str(r#"<p class="empty">Nothing was skipped.</p></section>"#);
        return;
    }
    meters(out, &stats.skips, "Reason", "skip");
    out.push_str(r#"<p class="note"><code>skipped_*</code>: URLs queued but not fetched (robots.txt, limits, traps). <code>links_skipped_*</code>: links found on pages and not followed (scope, scheme, exclude patterns, malformed).</p></section>"#);
}

/// What each output wrote (the timeline is bookkeeping, not an output).
pub fn outputs(out: &mut String, report: &Report) {
    let sinks: Vec<_> = report
        .sinks
        .iter()
        .filter(|s| s.name != SINK_NAME)
        .collect();
    if sinks.is_empty() {
        return;
    }
    out.push_str(r#"<section><h2>Outputs</h2><table><thead><tr><th>Output</th><th class="n">Records</th><th class="n">Bytes</th><th>Files</th></tr></thead><tbody>"#);
    for s in sinks {
        let _ = write!(
            out,
            r#"<tr><td>{}</td><td class="n">{}</td><td class="n">{}</td><td class="url">{}</td></tr>"#,
            esc(&s.name),
            number(s.records),
            bytes(s.bytes),
            esc(&s.files.join(" ")),
        );
    }
    out.push_str("</tbody></table></section>");
}

/// Every raw counter, folded away.
pub fn counters(out: &mut String, report: &Report) {
    out.push_str(r#"<section><details><summary>All counters</summary><table class="sortable"><thead><tr><th>Counter</th><th class="n">Value</th></tr></thead><tbody>"#);
    for (key, n) in report.counters.entries() {
        let _ = write!(
            out,
            r#"<tr><td>{}</td><td class="n" data-v="{n}">{}</td></tr>"#,
            esc(&key),
            number(n)
        );
    }
    out.push_str("</tbody></table></details></section>");
}

/// A table of labelled counts with a bar scaled to the largest.
fn meters(out: &mut String, rows: &[(String, u64)], what: &str, class: &str) {
    let top = rows.iter().map(|r| r.1).max().unwrap_or(1).max(1);
    let _ = write!(
        out,
        r#"<table class="sortable"><thead><tr><th>{what}</th><th class="n">Count</th><th>Share</th></tr></thead><tbody>"#
    );
    for (label, n) in rows {
        let pct = *n as f64 / top as f64 * 100.0;
        let _ = write!(
            out,
            r#"<tr><td>{}</td><td class="n" data-v="{n}">{}</td><td class="bar" data-v="{n}"><div class="meter {class}" style="width:{pct:.1}%"></div></td></tr>"#,
            esc(label),
            number(*n),
        );
    }
    out.push_str("</tbody></table>");
}

fn more(out: &mut String, total: u64, shown: usize, what: &str) {
    if total > shown as u64 {
        let _ = write!(
            out,
            r#"<p class="note">Showing {} of {} {what}; the JSON report (--report json) lists them all.</p>"#,
            number(shown as u64),
            number(total)
        );
    }
}
