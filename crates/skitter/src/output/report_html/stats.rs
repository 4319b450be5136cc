//! Aggregates a [`Report`] into the few small tables the HTML report draws.
//!
//! One pass over the records, with memory proportional to distinct hosts, status
//! codes and error kinds (plus one `u32` per fetched page for exact percentiles),
//! never to the text of every URL: lists of URLs are capped at [`MAX_FAILURES`].

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use url::Position;

use crate::base::outcome::{OutcomeKind, PageRecord};
use crate::output::report::{Counters, Report, ReportError};

/// Failing URLs listed by name; the rest are only counted.
pub const MAX_FAILURES: usize = 100;
/// Hosts listed in the top-hosts table.
pub const MAX_HOSTS: usize = 20;

/// Upper bounds (exclusive, in milliseconds) of the response-time buckets: a 1-2-5
/// series, so each bucket is a constant step on a log scale. One more bucket holds
/// everything slower than the last bound.
pub const LATENCY_BOUNDS_MS: [u64; 15] = [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 60_000,
];

/// Per-host totals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostRow {
    /// `host` or `host:port`.
    pub host: String,
    /// Records for this host, skipped ones included.
    pub pages: u64,
    /// Failures and error statuses.
    pub errors: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Summed response time of fetched records, for the mean.
    pub elapsed: Duration,
    /// Fetched (not skipped) records, the mean's divisor.
    pub fetched: u64,
}

/// One failing URL, for the list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailureRow {
    /// The URL, as text.
    pub url: String,
    /// `404`, `timeout`, `redirect: too_many_redirects`…
    pub what: String,
    /// The error message, when there is one.
    pub message: String,
}

/// Response-time summary of fetched records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Latency {
    /// Counts per bucket of [`LATENCY_BOUNDS_MS`], plus the overflow bucket.
    pub buckets: Vec<u64>,
    /// Median, 90th and 99th percentiles and the maximum; zero when nothing was fetched.
    pub p50: Duration,
    /// 90th percentile.
    pub p90: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// Slowest.
    pub max: Duration,
}

/// Everything the HTML report draws, computed once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Records per outcome kind, in [`KIND_ORDER`].
    pub kinds: [u64; 6],
    /// Body bytes over all records.
    pub bytes: u64,
    /// Records per HTTP status; records without a response are not counted here.
    pub statuses: BTreeMap<u16, u64>,
    /// Records per error label (`timeout`, `HTTP 404`…), most frequent first.
    pub errors: Vec<(String, u64)>,
    /// The first [`MAX_FAILURES`] failing URLs, in report order.
    pub failures: Vec<FailureRow>,
    /// All failing URLs.
    pub failures_total: u64,
    /// The busiest [`MAX_HOSTS`] hosts.
    pub hosts: Vec<HostRow>,
    /// Distinct hosts.
    pub hosts_total: usize,
    /// Response times.
    pub latency: Latency,
    /// `skipped_*` and `links_skipped_*` counters, largest first.
    pub skips: Vec<(String, u64)>,
}

/// The order of [`Stats::kinds`].
pub const KIND_ORDER: [OutcomeKind; 6] = [
    OutcomeKind::Html,
    OutcomeKind::Other,
    OutcomeKind::Redirect,
    OutcomeKind::HttpError,
    OutcomeKind::Failed,
    OutcomeKind::Skipped,
];

impl Stats {
    /// Aggregates a report, reading its records once; fails when they cannot
    /// be read back (see [`Report::pages`]).
    pub fn of(report: &Report) -> Result<Stats, ReportError> {
        let mut stats = Stats::default();
        let mut hosts: HashMap<String, HostRow> = HashMap::new();
        let mut errors: HashMap<String, u64> = HashMap::new();
        let mut times: Vec<u32> = Vec::new();
        for page in report.pages.iter() {
            let page = &page?;
            let kind = KIND_ORDER.iter().position(|k| *k == page.kind).unwrap_or(0);
            stats.kinds[kind] += 1;
            stats.bytes += page.size;
            if let Some(status) = page.status {
                *stats.statuses.entry(status).or_default() += 1;
            }
            let failure = failure(page);
            if let Some(row) = &failure {
                *errors.entry(row.what.clone()).or_default() += 1;
            }
            host_row(&mut hosts, page, failure.is_some());
            if page.kind != OutcomeKind::Skipped {
                // Microseconds in a u32 cover 71 minutes, far past any timeout.
                times.push(u32::try_from(page.elapsed.as_micros()).unwrap_or(u32::MAX));
            }
            if let Some(row) = failure {
                stats.failures_total += 1;
                if stats.failures.len() < MAX_FAILURES {
                    stats.failures.push(row);
                }
            }
        }
        stats.errors = largest_first(errors.into_iter().collect());
        stats.hosts_total = hosts.len();
        stats.hosts = top_hosts(hosts.into_values().collect());
        stats.latency = latency(times);
        stats.skips = skip_counters(&report.counters);
        Ok(stats)
    }

    /// Records of one kind.
    pub fn kind(&self, kind: OutcomeKind) -> u64 {
        KIND_ORDER
            .iter()
            .position(|k| *k == kind)
            .map_or(0, |i| self.kinds[i])
    }
}

/// The failure a record stands for, if it is one.
fn failure(page: &PageRecord) -> Option<FailureRow> {
    let message = page.error.as_ref().map(|e| e.message.clone());
    let what = match page.kind {
        OutcomeKind::Failed => page
            .error
            .as_ref()
            .map_or("other".to_string(), |e| e.kind.as_str().to_string()),
        OutcomeKind::HttpError => match page.status {
            Some(s) => format!("HTTP {s}"),
            None => "HTTP error".to_string(),
        },
        OutcomeKind::Redirect => format!("redirect: {}", page.error.as_ref()?.kind),
        _ => return None,
    };
    Some(FailureRow {
        url: page.url.to_string(),
        what,
        message: message.unwrap_or_default(),
    })
}

fn host_row(hosts: &mut HashMap<String, HostRow>, page: &PageRecord, failed: bool) {
    let host = &page.url[Position::BeforeHost..Position::AfterPort];
    // Looked up by `&str` first: one allocation per host, not per page.
    if !hosts.contains_key(host) {
        hosts.insert(
            host.to_string(),
            HostRow {
                host: host.to_string(),
                ..HostRow::default()
            },
        );
    }
    let Some(row) = hosts.get_mut(host) else {
        return;
    };
    row.pages += 1;
    row.errors += u64::from(failed);
    row.bytes += page.size;
    if page.kind != OutcomeKind::Skipped {
        row.fetched += 1;
        row.elapsed += page.elapsed;
    }
}

fn top_hosts(mut rows: Vec<HostRow>) -> Vec<HostRow> {
    rows.sort_unstable_by(|a, b| b.pages.cmp(&a.pages).then_with(|| a.host.cmp(&b.host)));
    rows.truncate(MAX_HOSTS);
    rows
}

fn largest_first(mut rows: Vec<(String, u64)>) -> Vec<(String, u64)> {
    rows.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    rows
}

fn latency(mut micros: Vec<u32>) -> Latency {
    let mut buckets = vec![0u64; LATENCY_BOUNDS_MS.len() + 1];
    for &us in &micros {
        let ms = u64::from(us) / 1000;
        let i = LATENCY_BOUNDS_MS.partition_point(|&bound| bound <= ms);
        buckets[i] += 1;
    }
    micros.sort_unstable();
    let at = |q: f64| -> Duration {
        if micros.is_empty() {
            return Duration::ZERO;
        }
        // Nearest-rank percentile: the smallest value with at least q of the data
        // at or below it.
        let rank = ((q * micros.len() as f64).ceil() as usize).clamp(1, micros.len());
        Duration::from_micros(u64::from(micros[rank - 1]))
    };
    Latency {
        buckets,
        p50: at(0.50),
        p90: at(0.90),
        p99: at(0.99),
        max: at(1.0),
    }
}

fn skip_counters(counters: &Counters) -> Vec<(String, u64)> {
    let skipped = counters
        .skipped_by
        .iter()
        .map(|(why, n)| (format!("skipped_{why}"), *n));
    let links =
        (counters.links_skipped.iter()).map(|(why, n)| (format!("links_skipped_{why}"), *n));
    largest_first(skipped.chain(links).filter(|(_, n)| *n > 0).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::outcome::SkipReason;

    fn times(ms: &[u64]) -> Vec<u32> {
        ms.iter().map(|m| (m * 1000) as u32).collect()
    }

    #[test]
    fn latency_buckets_are_log_spaced() {
        let cases: &[(u64, usize)] = &[
            (0, 0),
            (1, 1),
            (4, 2),
            (5, 3),
            (999, 9),
            (1000, 10),
            (59_999, 14),
            (60_000, 15),
            (3_600_000, 15),
        ];
        for &(ms, bucket) in cases {
            let l = latency(times(&[ms]));
            assert_eq!(
                l.buckets[bucket], 1,
                "{ms} ms should land in bucket {bucket}"
            );
        }
    }

    #[test]
    fn percentiles_use_nearest_rank() {
        let l = latency(times(&(1..=100).collect::<Vec<_>>()));
        let ms = |d: Duration| d.as_millis();
        assert_eq!(
            (ms(l.p50), ms(l.p90), ms(l.p99), ms(l.max)),
            (50, 90, 99, 100)
        );
        assert_eq!(latency(Vec::new()).max, Duration::ZERO);
    }

    #[test]
    fn skip_counters_are_picked_and_sorted() {
        let counters = Counters {
            html: 5,
            skipped: 2,
            skipped_by: BTreeMap::from([(SkipReason::Robots, 2), (SkipReason::Trap, 0)]),
            links_skipped: BTreeMap::from([(SkipReason::Scope, 9)]),
            ..Counters::default()
        };
        assert_eq!(
            skip_counters(&counters),
            vec![
                ("links_skipped_scope".to_string(), 9),
                ("skipped_robots".to_string(), 2)
            ]
        );
    }
}
