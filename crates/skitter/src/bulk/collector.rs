//! The collector of a bulk fetch: the one task that feeds the sinks, writes
//! the fetch index rows (in batches, see [`index`](super::index)), tallies the
//! [`Summary`] and calls the observer, in finishing order.

use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio_util::sync::CancellationToken;

use super::Observer;
use super::index::{self, FetchIndex, Update};
use super::summary::{ItemReport, Summary};
use crate::output::{Page, Sink, SinkError, SiteContent};

/// What the tasks send the collector.
pub(super) enum Event {
    /// One response (or failure), with the global slot that bounds live bodies.
    /// (The slot is `None` for a failure cut short by a stop during a back-off.)
    Hop(Box<Page>, Option<OwnedSemaphorePermit>),
    /// An item is finished, with its fetch index row to write (`if_modified`),
    /// its file being in place.
    Done(Box<(ItemReport, Option<Update>)>),
}

/// The collector: feeds sinks, tallies, calls the observer. After a sink fails it
/// stops the run but keeps draining, so no task blocks on a full channel.
pub(super) async fn collect(
    mut rx: mpsc::Receiver<Event>,
    (mut sinks, index): (Vec<Box<dyn Sink>>, Option<FetchIndex>),
    observer: Option<Observer>,
    stop: CancellationToken,
) -> (Summary, Option<SinkError>) {
    let mut summary = Summary::default();
    let mut failure = None;
    let mut updates = Vec::new();
    // The site's boilerplate rule, as a crawl applies it (its counts are a
    // crawl report's; a fetch's summary has none).
    let mut site = SiteContent::new(&sinks);
    while let Some(event) = rx.recv().await {
        match event {
            Event::Hop(mut page, _slot) => {
                site.apply(&mut page);
                if let Some(items) = &page.items {
                    summary.items += items.records.len() as u64;
                    summary.extract_errors += u64::from(!items.errors.is_empty());
                }
                if failure.is_some() {
                    continue;
                }
                for sink in sinks.iter_mut() {
                    if let Err(e) = sink.record(&page).await {
                        failure = Some(e);
                        stop.cancel();
                        break;
                    }
                }
            }
            Event::Done(done) => {
                let (report, update) = *done;
                updates.extend(update);
                if updates.len() >= index::BATCH
                    && let Some(index) = &index
                    && let Err(e) = index.apply(std::mem::take(&mut updates)).await
                {
                    failure.get_or_insert(index_failure(e));
                    stop.cancel();
                }
                summary.add(&report);
                if let Some(observe) = &observer {
                    observe(&report);
                }
            }
        }
    }
    if let Some(index) = &index
        && let Err(e) = index.apply(updates).await
    {
        failure.get_or_insert(index_failure(e));
    }
    if failure.is_none()
        && let Err(e) = site.revise(&mut sinks).await
    {
        failure = Some(e);
    }
    for sink in sinks.iter_mut() {
        match sink.finish().await {
            Ok(s) => summary.sinks.push(s),
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }
    (summary, failure)
}

/// A fetch index that cannot be written stops the run like a failing output.
fn index_failure(e: index::IndexError) -> SinkError {
    SinkError::from_source("fetch index", e)
}
