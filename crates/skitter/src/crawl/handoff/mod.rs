//! The hand-off from a finished fetch to the report tally, the sinks and the
//! frontier, in the order that makes a crash lose nothing.
//!
//! With a frontier whose completions outlive the process (`Frontier::durable`) and
//! outputs to write, a page goes to the outputs *first*: the worker waits until
//! every sink has written it (`Sink::flush`), and only then completes its lease.
//! After a kill, a URL is then either done and in every output, or queued again;
//! a page that reached the outputs but not the commit is refetched, and the
//! resumed outputs skip it (see `JsonlSink::append` and `WarcOptions::skip`). The
//! wait costs one sink flush per group of pages, shared by all pages that arrive
//! together. Without durability or outputs the lease completes first and the page
//! is handed over without waiting.
//!
//! When the frontier's completions also survive a power cut (`Frontier::syncs`),
//! the flushed bytes are synced too before the page is acknowledged (see
//! `sync`): then a power cut, like a kill, never leaves a URL done in the state
//! and missing from an output.

mod sync;

use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};

use crate::crawl::stop_signal::StopSignal;
use crate::host::Throttle;
use crate::output::report::{Counters, Tally};
use crate::output::{Page, Sink, SinkSummary, SiteContent};
use sync::OutputSyncer;

/// Most pages whose writers wait on one flush: bounds their wait when pages keep
/// arriving faster than the channel empties.
const MAX_UNFLUSHED: usize = 64;

/// One finished page on its way to the sinks.
pub(crate) struct Handoff {
    pub(crate) page: Page,
    /// Told once every sink has written the page.
    pub(crate) written: Option<oneshot::Sender<()>>,
}

/// What goes to the sink task: finished pages, and host slow-downs as they
/// happen (for outputs that log them).
// Pages are nearly every message; boxing them would add an allocation per page
// to save channel room only on the rare throttle.
#[allow(clippy::large_enum_variant)]
pub(crate) enum ToSinks {
    Page(Handoff),
    Throttle(String, Throttle),
}

/// Feeds every finished page to the tally and the sinks, in finishing order, and
/// acknowledges written pages after each flush (with `sync`, once what the
/// flush wrote is synced). After a sink fails, pages are
/// still drained (so workers never block) and tallied, but never acknowledged.
/// The tally lives outside the task, so the report survives an output that
/// never returns and is abandoned.
pub(crate) async fn drive_sinks(
    mut rx: mpsc::Receiver<ToSinks>,
    mut sinks: Vec<Box<dyn Sink>>,
    stop_signal: Arc<StopSignal>,
    tally: Arc<Mutex<Tally>>,
    sync: bool,
) -> Vec<SinkSummary> {
    let syncer = sync.then(|| OutputSyncer::start(stop_signal.clone()));
    let mut healthy = true;
    let mut waiting: Vec<oneshot::Sender<()>> = Vec::new();
    // The site's boilerplate rule, for every content output at once.
    let mut site = SiteContent::new(&sinks);
    while let Some(message) = rx.recv().await {
        match message {
            ToSinks::Throttle(host, throttle) => {
                if healthy {
                    healthy = throttled(&mut sinks, &host, &throttle, &stop_signal).await;
                }
            }
            ToSinks::Page(mut handoff) => {
                let content = site.apply(&mut handoff.page);
                if content.content_pages > 0 {
                    (tally.lock().unwrap_or_else(|e| e.into_inner())).add_unrecorded(&content);
                }
                let added = tally
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .add(&handoff.page.record);
                if let Err(e) = added {
                    // The report would miss lines from here on: as fatal as a failed output.
                    stop_signal.fail(e.to_string());
                }
                if healthy {
                    healthy = record(&mut sinks, &handoff.page, &stop_signal).await;
                    waiting.extend(handoff.written);
                }
            }
        }
        // Checked after a throttle too: when the last page before it found
        // the channel not yet empty, the throttle may be the last message
        // before every writer waits on its acknowledgement, and nothing else
        // would come to flush for them.
        if healthy && !waiting.is_empty() && (rx.is_empty() || waiting.len() >= MAX_UNFLUSHED) {
            healthy = flush(&mut sinks, &stop_signal).await;
            if healthy {
                let acks = std::mem::take(&mut waiting);
                healthy = acknowledge(&mut sinks, syncer.as_ref(), acks).await;
            }
        }
        if !healthy {
            waiting.clear();
        }
    }
    if let Some(syncer) = syncer {
        syncer.finish().await;
    }
    if healthy {
        match site.revise(&mut sinks).await {
            Ok(counts) => (tally.lock().unwrap_or_else(|e| e.into_inner())).add_unrecorded(&counts),
            Err(e) => stop_for(&stop_signal, &e),
        }
    }
    let mut summaries = Vec::new();
    for sink in sinks.iter_mut() {
        match sink.finish().await {
            Ok(summary) => {
                // Records an output left out for their data are the report's to
                // show, as the crawl went on without them.
                let refused = Counters {
                    items_refused: summary.refused,
                    ..Counters::default()
                };
                (tally.lock().unwrap_or_else(|e| e.into_inner())).add_unrecorded(&refused);
                summaries.push(summary);
            }
            Err(e) => stop_for(&stop_signal, &e),
        }
    }
    summaries
}

async fn throttled(
    sinks: &mut [Box<dyn Sink>],
    host: &str,
    t: &Throttle,
    stop_signal: &StopSignal,
) -> bool {
    for sink in sinks.iter_mut() {
        if let Err(e) = sink.throttled(host, t).await {
            stop_for(stop_signal, &e);
            return false;
        }
    }
    true
}

async fn record(sinks: &mut [Box<dyn Sink>], page: &Page, stop_signal: &StopSignal) -> bool {
    for sink in sinks.iter_mut() {
        if let Err(e) = sink.record(page).await {
            stop_for(stop_signal, &e);
            return false;
        }
    }
    true
}

async fn flush(sinks: &mut [Box<dyn Sink>], stop_signal: &StopSignal) -> bool {
    for sink in sinks.iter_mut() {
        if let Err(e) = sink.flush().await {
            stop_for(stop_signal, &e);
            return false;
        }
    }
    true
}

/// Acknowledges flushed pages: at once, or through the syncer once what the
/// sinks wrote is synced. False when the syncer has stopped (it said why).
async fn acknowledge(
    sinks: &mut [Box<dyn Sink>],
    syncer: Option<&OutputSyncer>,
    acks: Vec<oneshot::Sender<()>>,
) -> bool {
    let Some(syncer) = syncer else {
        for ack in acks {
            let _ = ack.send(());
        }
        return true;
    };
    let targets = sinks.iter_mut().flat_map(|s| s.unsynced()).collect();
    syncer.sync(targets, acks).await
}

/// Stops the crawl for a sink's error: quietly when the reader of a pipe went
/// away, as a fatal error otherwise.
fn stop_for(stop_signal: &StopSignal, e: &crate::output::SinkError) {
    if e.is_reader_gone() {
        stop_signal.reader_gone(e.to_string());
    } else {
        stop_signal.fail(format!("output {e}"));
    }
}

#[cfg(test)]
mod tests;
