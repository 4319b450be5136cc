//! `skitter fetch --metrics`: a bulk fetch's numbers for the same server
//! (`/metrics`, `/api/status`, `POST /control/stop`).
//!
//! A [`FetchWatch`] is fed each finished item ([`FetchWatch::observe`], from
//! the fetch's `on_item` hook) into a [`Summary`] of its own, the same counts
//! the end summary prints; a scrape reads it under a short lock. A fetch has
//! no frontier to hold, so it cannot be paused or re-capped: only stopped.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::registry::Registry;
use serde_json::{Value, json};

use super::metrics;
use crate::bulk::{ItemReport, Summary};

/// A handle on one bulk fetch's running counts; clones share them.
#[derive(Clone, Debug)]
pub struct FetchWatch {
    summary: Arc<Mutex<Summary>>,
    started: Instant,
}

impl Default for FetchWatch {
    fn default() -> Self {
        FetchWatch::new()
    }
}

impl FetchWatch {
    /// Counts from now on.
    pub fn new() -> FetchWatch {
        FetchWatch {
            summary: Arc::default(),
            started: Instant::now(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Summary> {
        // `Summary::add` leaves it whole at every step that can panic.
        self.summary.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts one finished item (call it from the fetch's `on_item` hook).
    pub fn observe(&self, item: &ItemReport) {
        self.lock().add(item);
    }

    /// The exposition, as [`super::metrics::render`]'s for a crawl.
    pub(crate) fn metrics(&self, resident: Option<u64>) -> String {
        let mut registry = Registry::with_prefix("skitter_fetch");
        let numbers = Numbers::of(&self.lock(), self.started, resident);
        registry.register_collector(Box::new(numbers));
        let mut out = String::with_capacity(4 * 1024);
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
        out
    }

    /// The status document (`ctl status`).
    pub(crate) fn status(&self) -> Value {
        let s = self.lock();
        let errors: Vec<(String, u64)> = s
            .network_errors
            .iter()
            .map(|(k, n)| (k.as_str().to_string(), *n))
            .collect();
        json!({
            "command": "fetch",
            "done": s.total(),
            "failed": s.failed(),
            "ok": s.ok,
            "not_found": s.not_found,
            "bytes": s.bytes,
            "files": s.files,
            "errors": errors.into_iter().collect::<std::collections::BTreeMap<_, _>>(),
            "elapsed_seconds": self.started.elapsed().as_secs_f64(),
        })
    }
}

/// A counter with one label: name, help, the label's name, its samples.
type Family<'a> = (&'a str, &'a str, &'a str, Vec<(&'a str, u64)>);

/// What one scrape reads, copied out of the lock before encoding.
#[derive(Debug)]
struct Numbers {
    outcomes: Vec<(&'static str, u64)>,
    errors: Vec<(String, u64)>,
    statuses: Vec<(String, u64)>,
    counters: [(&'static str, &'static str, u64); 4],
    elapsed: f64,
    resident: Option<u64>,
}

impl Numbers {
    fn of(s: &Summary, started: Instant, resident: Option<u64>) -> Numbers {
        Numbers {
            outcomes: vec![
                ("ok", s.ok),
                ("not_found", s.not_found),
                ("http_error", s.http_errors.values().sum()),
                ("network_error", s.network_errors.values().sum()),
                ("save_error", s.save_errors),
                ("value_error", s.value_errors),
                ("malformed", s.malformed),
                ("skipped_existing", s.skipped_existing),
                ("skipped_done", s.skipped_done),
            ],
            errors: s
                .network_errors
                .iter()
                .map(|(k, n)| (k.as_str().to_string(), *n))
                .collect(),
            statuses: s
                .http_errors
                .iter()
                .map(|(k, n)| (k.to_string(), *n))
                .collect(),
            counters: [
                ("bytes", "Body bytes received (final responses)", s.bytes),
                ("files", "Files written", s.files),
                ("pages", "Pages fetched by chains", s.pages),
                ("records", "Records the extraction rules found", s.items),
            ],
            elapsed: started.elapsed().as_secs_f64(),
            resident,
        }
    }
}

impl Collector for Numbers {
    fn encode(&self, mut e: DescriptorEncoder) -> Result<(), fmt::Error> {
        let labelled: [Family; 3] = [
            (
                "items",
                "Items finished, by outcome",
                "outcome",
                self.outcomes.clone(),
            ),
            (
                "errors",
                "Items failed with no usable response, by error kind",
                "kind",
                self.errors.iter().map(|(k, n)| (k.as_str(), *n)).collect(),
            ),
            (
                "error_responses",
                "Items answered with an error status other than 404 and 410, by status",
                "status",
                self.statuses
                    .iter()
                    .map(|(k, n)| (k.as_str(), *n))
                    .collect(),
            ),
        ];
        for (name, help, label, samples) in labelled {
            metrics::family(&mut e, name, help, label, samples)?;
        }
        metrics::counters(&mut e, self.counters)?;
        let elapsed = (
            "elapsed_seconds",
            "Time since the fetch started",
            self.elapsed,
        );
        let resident = self.resident.map(|r| {
            (
                "process_resident_bytes",
                "Resident memory of the process",
                r as f64,
            )
        });
        metrics::gauges(&mut e, std::iter::once(elapsed).chain(resident))
    }
}
