//! The crawl's throughput over time, for the HTML report's URLs/s chart.
//!
//! A [`TimelineSink`] counts finished URLs into fixed-width time buckets from the
//! moment it is created. Buckets start [`BASE_WIDTH`] wide, fine enough for a crawl
//! that lasts a fraction of a second; memory is bounded whatever the crawl's
//! length: once [`MAX_BUCKETS`] of them exist, neighbours are merged and the width
//! doubles, so a day-long crawl costs the same as an hour-long one.
//! The sink is moved into the crawler, so it shares its [`Timeline`] with a
//! [`TimelineHandle`] that the caller keeps and reads after the run.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use crate::base::outcome::{OutcomeKind, PageRecord};
use crate::output::{Page, Sink, SinkError, SinkSummary};

/// Buckets kept before neighbours are merged.
pub const MAX_BUCKETS: usize = 4096;

/// The width of a bucket before any merging.
pub const BASE_WIDTH: Duration = Duration::from_millis(1);

/// The name the sink reports in [`SinkSummary::name`].
pub const SINK_NAME: &str = "timeline";

/// What finished during one bucket of time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bucket {
    /// URLs fetched (any response or failure; not skipped ones).
    pub fetched: u64,
    /// Of those, failures and error statuses.
    pub errors: u64,
    /// URLs skipped without fetching.
    pub skipped: u64,
}

impl Bucket {
    fn merge(self, other: Bucket) -> Bucket {
        Bucket {
            fetched: self.fetched + other.fetched,
            errors: self.errors + other.errors,
            skipped: self.skipped + other.skipped,
        }
    }
}

/// Finished URLs counted per bucket of time since the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeline {
    width: Duration,
    buckets: Vec<Bucket>,
    last: Duration,
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline {
            width: BASE_WIDTH,
            buckets: Vec::new(),
            last: Duration::ZERO,
        }
    }
}

impl Timeline {
    /// An empty timeline with [`BASE_WIDTH`] buckets.
    pub fn new() -> Self {
        Timeline::default()
    }

    /// Counts one record that finished `at` after the start.
    pub fn add(&mut self, at: Duration, record: &PageRecord) {
        let error = matches!(record.kind, OutcomeKind::Failed | OutcomeKind::HttpError);
        let one = match record.kind {
            OutcomeKind::Skipped => Bucket {
                skipped: 1,
                ..Bucket::default()
            },
            _ => Bucket {
                fetched: 1,
                errors: u64::from(error),
                skipped: 0,
            },
        };
        let slot = self.slot(at);
        self.buckets[slot] = self.buckets[slot].merge(one);
        self.last = self.last.max(at);
    }

    /// The width of each bucket.
    pub fn bucket_width(&self) -> Duration {
        self.width
    }

    /// When the latest record finished, since the start.
    pub fn last(&self) -> Duration {
        self.last
    }

    /// The buckets, oldest first; bucket `i` covers `[i·width, (i+1)·width)`.
    pub fn buckets(&self) -> &[Bucket] {
        &self.buckets
    }

    /// Totals over all buckets.
    pub fn total(&self) -> Bucket {
        self.buckets
            .iter()
            .fold(Bucket::default(), |acc, b| acc.merge(*b))
    }

    /// The index of the bucket for `at`, growing or coarsening the buckets to fit.
    fn slot(&mut self, at: Duration) -> usize {
        let index = |width: Duration| at.as_nanos() / width.as_nanos().max(1);
        while index(self.width) >= MAX_BUCKETS as u128 {
            self.coarsen();
        }
        let slot = index(self.width) as usize;
        if slot >= self.buckets.len() {
            self.buckets.resize(slot + 1, Bucket::default());
        }
        slot
    }

    /// Merges neighbouring buckets pairwise and doubles the width.
    fn coarsen(&mut self) {
        self.buckets = self
            .buckets
            .chunks(2)
            .map(|pair| pair.iter().fold(Bucket::default(), |acc, b| acc.merge(*b)))
            .collect();
        self.width = self.width.saturating_mul(2);
    }
}

/// A sink that counts finished URLs into a shared [`Timeline`].
#[derive(Debug)]
pub struct TimelineSink {
    shared: Arc<Mutex<Timeline>>,
    started: Instant,
    records: u64,
}

/// The caller's side of a [`TimelineSink`]: reads the timeline during or after a crawl.
#[derive(Clone, Debug)]
pub struct TimelineHandle {
    shared: Arc<Mutex<Timeline>>,
}

impl TimelineSink {
    /// A sink whose clock starts now, and the handle to read what it counted.
    pub fn new() -> (TimelineSink, TimelineHandle) {
        let shared = Arc::new(Mutex::new(Timeline::new()));
        let sink = TimelineSink {
            shared: shared.clone(),
            started: Instant::now(),
            records: 0,
        };
        (sink, TimelineHandle { shared })
    }
}

impl TimelineHandle {
    /// A copy of the timeline as counted so far.
    pub fn timeline(&self) -> Timeline {
        // The lock is only held to add one record, which cannot panic halfway in a
        // way that leaves the counts inconsistent, so a poisoned lock is still good.
        self.shared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait]
impl Sink for TimelineSink {
    async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
        let at = self.started.elapsed();
        self.shared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .add(at, &page.record);
        self.records += 1;
        Ok(())
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        Ok(SinkSummary {
            name: SINK_NAME.into(),
            records: self.records,
            ..SinkSummary::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::outcome::SkipReason;
    use url::Url;

    fn record(kind: OutcomeKind) -> PageRecord {
        let mut r = PageRecord::new(Url::parse("http://h/").unwrap(), 0, None);
        r.kind = kind;
        if kind == OutcomeKind::Skipped {
            r.skip = Some(SkipReason::Robots);
        }
        r
    }

    #[test]
    fn counts_per_bucket_by_kind() {
        let mut t = Timeline::new();
        let cases = [
            (0, OutcomeKind::Html),
            (0, OutcomeKind::Failed),
            (2, OutcomeKind::HttpError),
            (2, OutcomeKind::Skipped),
            (2, OutcomeKind::Redirect),
        ];
        for (ms, kind) in cases {
            t.add(Duration::from_micros(ms * 1000 + 999), &record(kind));
        }
        let b = |fetched, errors, skipped| Bucket {
            fetched,
            errors,
            skipped,
        };
        assert_eq!(t.buckets(), &[b(2, 1, 0), b(0, 0, 0), b(2, 1, 1)]);
        assert_eq!(t.total(), b(4, 2, 1));
        assert_eq!(t.bucket_width(), BASE_WIDTH);
        assert_eq!(t.last(), Duration::from_micros(2999));
    }

    #[test]
    fn long_crawls_coarsen_instead_of_growing() {
        let mut t = Timeline::new();
        let html = record(OutcomeKind::Html);
        t.add(Duration::ZERO, &html);
        t.add(Duration::from_millis(1), &html);
        t.add(BASE_WIDTH * MAX_BUCKETS as u32 * 5, &html);
        assert!(t.buckets().len() <= MAX_BUCKETS);
        assert_eq!(t.bucket_width(), BASE_WIDTH * 8);
        assert_eq!(t.buckets()[0].fetched, 2);
        assert_eq!(t.total().fetched, 3);
    }

    #[tokio::test(start_paused = true)]
    async fn sink_shares_its_counts_with_the_handle() {
        let (mut sink, handle) = TimelineSink::new();
        let page = |kind| Page {
            record: record(kind),
            exchange: None,
            rendered: None,
            items: None,
            content: None,
            links: None,
            text: None,
        };
        sink.record(&page(OutcomeKind::Html)).await.unwrap();
        tokio::time::advance(Duration::from_millis(3)).await;
        sink.record(&page(OutcomeKind::Failed)).await.unwrap();
        let summary = sink.finish().await.unwrap();
        assert_eq!((summary.name.as_str(), summary.records), (SINK_NAME, 2));
        let t = handle.timeline();
        assert_eq!(t.buckets().len(), 4);
        assert_eq!(t.buckets()[3].errors, 1);
        assert_eq!(t.last(), Duration::from_millis(3));
    }
}
