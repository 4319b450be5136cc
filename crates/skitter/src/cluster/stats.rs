//! [`RedisStatsSink`]: adds every finished page's counters to the crawl-wide
//! totals that all workers of a Redis crawl share, so `skitter status` and each
//! worker's final report can show the whole crawl.
//!
//! Counters are those of the end-of-crawl report (the sink counts with the same
//! [`Tally`], so the two never disagree on what a record adds), plus [`RedisStatsSink::DONE`], one
//! per record. They are sent in batches — one atomic pipeline per
//! [`FLUSH_RECORDS`] records or [`FLUSH_INTERVAL`], whichever comes first — so
//! the statistics cost no round trip per page.
//!
//! With [`RedisStatsSink::proxies`], each batch also carries the proxy pool's
//! per-proxy counts since the last one (see `proxies.rs` for their fields), so
//! the crawl-wide totals hold the whole crawl's per-proxy table.
//!
//! Statistics are not worth stopping a crawl for: a write that fails is logged,
//! its counts are kept and sent with the next batch, and the sink never returns
//! an error. A worker killed outright loses at most its unsent batch.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use crate::fetch::ProxyLedger;
use crate::frontier::RedisFrontier;
use crate::output::report::{ReportSummary, Tally};
use crate::output::{Page, Sink, SinkError, SinkSummary};

/// Records per batch at most.
const FLUSH_RECORDS: u64 = 100;
/// Longest a counted record waits to be sent (checked as records arrive).
const FLUSH_INTERVAL: Duration = Duration::from_millis(250);

/// Adds each record's counters to the crawl-wide totals in Redis.
pub struct RedisStatsSink {
    frontier: Arc<RedisFrontier>,
    /// Records counted since the last batch was cut.
    batch: Tally,
    /// Counts cut from batches but not yet acknowledged by Redis.
    unsent: BTreeMap<String, u64>,
    last_flush: Instant,
    /// Records whose counts reached Redis.
    sent_records: u64,
    /// Whether the last write failed (to log an outage once, and its end).
    failing: bool,
    /// The proxy pool's counts not yet added to `unsent`.
    proxies: Option<Arc<ProxyLedger>>,
}

impl std::fmt::Debug for RedisStatsSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStatsSink")
            .field("frontier", &self.frontier)
            .field("sent_records", &self.sent_records)
            .finish_non_exhaustive()
    }
}

impl RedisStatsSink {
    /// The crawl-wide counter that counts records (finished URLs).
    pub const DONE: &'static str = "done";

    /// A sink adding to the totals of `frontier`'s crawl.
    pub fn new(frontier: Arc<RedisFrontier>) -> RedisStatsSink {
        RedisStatsSink {
            frontier,
            batch: Tally::counting(),
            unsent: BTreeMap::new(),
            last_flush: Instant::now(),
            sent_records: 0,
            failing: false,
            proxies: None,
        }
    }

    /// Also adds the per-proxy counts the pool writes to `ledger` (given to
    /// the crawler with [`crate::CrawlerBuilder::proxy_ledger`]).
    pub fn proxies(mut self, ledger: Arc<ProxyLedger>) -> RedisStatsSink {
        self.proxies = Some(ledger);
        self
    }

    /// Cuts the current batch into `unsent` and tries to send everything unsent.
    async fn flush(&mut self) {
        self.last_flush = Instant::now();
        let batch = std::mem::replace(&mut self.batch, Tally::counting());
        let records = batch.done();
        if records > 0 {
            let counters = batch.finish(ReportSummary::default()).counters;
            for (key, n) in counters
                .entries()
                .into_iter()
                .chain([(Self::DONE.to_string(), records)])
            {
                *self.unsent.entry(key).or_default() += n;
            }
        }
        if let Some(ledger) = &self.proxies {
            for (shown, tally) in ledger.take() {
                for (key, n) in super::proxy_fields(&shown, &tally) {
                    let slot = self.unsent.entry(key).or_default();
                    *slot = slot.saturating_add(n);
                }
            }
        }
        if self.unsent.is_empty() {
            return;
        }
        match self.frontier.add_stats(&self.unsent).await {
            Ok(()) => {
                if self.failing {
                    tracing::info!("crawl-wide statistics are being written again");
                }
                self.failing = false;
                self.sent_records += self.unsent.get(Self::DONE).copied().unwrap_or(0);
                self.unsent.clear();
            }
            Err(e) => {
                if !self.failing {
                    tracing::warn!(error = %e, "cannot write crawl-wide statistics; keeping them for the next try");
                }
                self.failing = true;
            }
        }
    }
}

#[async_trait]
impl Sink for RedisStatsSink {
    async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
        // A counting tally keeps no records, so adding cannot fail.
        let _ = self.batch.add(&page.record);
        if self.batch.done() >= FLUSH_RECORDS || self.last_flush.elapsed() >= FLUSH_INTERVAL {
            self.flush().await;
        }
        Ok(())
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        self.flush().await;
        if let Some(lost) = self.unsent.get(Self::DONE).filter(|n| **n > 0) {
            tracing::warn!(
                records = lost,
                "crawl-wide statistics miss this worker's last records"
            );
        }
        Ok(SinkSummary {
            name: "redis-stats".into(),
            files: vec![format!("{}stats", self.frontier.key_prefix())],
            bytes: 0,
            records: self.sent_records,
            refused: 0,
        })
    }
}
