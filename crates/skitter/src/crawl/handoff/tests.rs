//! The sink task's acknowledgements: a writer waiting on its page is never
//! left waiting when the last message before the wait is not a page.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use url::Url;

use super::{Handoff, ToSinks, drive_sinks};
use crate::base::outcome::PageRecord;
use crate::crawl::stop_signal::StopSignal;
use crate::host::{Throttle, ThrottleReason};
use crate::output::Page;
use crate::output::report::Tally;

fn handoff(i: usize) -> (ToSinks, oneshot::Receiver<()>) {
    let (tx, rx) = oneshot::channel();
    let url = Url::parse(&format!("http://h.test/{i}")).unwrap();
    let page = Page {
        record: PageRecord::new(url, 0, None),
        exchange: None,
        rendered: None,
        items: None,
        content: None,
        links: None,
        text: None,
    };
    let message = ToSinks::Page(Handoff {
        page,
        written: Some(tx),
    });
    (message, rx)
}

/// The sink task over `rx`, with no sinks.
fn sink_task(
    rx: mpsc::Receiver<ToSinks>,
) -> tokio::task::JoinHandle<Vec<crate::output::SinkSummary>> {
    tokio::spawn(drive_sinks(
        rx,
        Vec::new(),
        Arc::new(StopSignal::default()),
        Arc::new(Mutex::new(Tally::default())),
        false,
    ))
}

/// Waits for a page's acknowledgement, failing if none comes.
async fn acknowledged(written: oneshot::Receiver<()>) {
    tokio::time::timeout(Duration::from_secs(60), written)
        .await
        .expect("the page was never acknowledged")
        .unwrap();
}

fn throttle() -> ToSinks {
    ToSinks::Throttle(
        "h.test".into(),
        Throttle {
            reason: ThrottleReason::TooManyRequests,
            cut: true,
            limit: 1,
            gap: Duration::ZERO,
        },
    )
}

#[tokio::test(start_paused = true)]
async fn a_page_followed_by_a_throttle_is_acknowledged() {
    let (tx, rx) = mpsc::channel(8);
    // Both queued before the task looks: the page finds the channel not
    // empty, so its flush waits for the next message, the throttle.
    let (page, written) = handoff(0);
    tx.send(page).await.unwrap();
    tx.send(throttle()).await.unwrap();
    let task = sink_task(rx);
    // The writer waits with the channel open and nothing more to come, as a
    // crawl's last workers do.
    acknowledged(written).await;
    drop(tx);
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn pages_arriving_together_share_one_flush_and_are_all_acknowledged() {
    let (tx, rx) = mpsc::channel(8);
    let mut acks = Vec::new();
    for i in 0..3 {
        let (page, written) = handoff(i);
        tx.send(page).await.unwrap();
        acks.push(written);
        tx.send(throttle()).await.unwrap();
    }
    let task = sink_task(rx);
    for written in acks {
        acknowledged(written).await;
    }
    drop(tx);
    task.await.unwrap();
}

/// A sink that says it left out records for their data.
struct Refusing;

#[async_trait::async_trait]
impl crate::output::Sink for Refusing {
    async fn record(&mut self, _: &Page) -> Result<(), crate::output::SinkError> {
        Ok(())
    }

    async fn finish(&mut self) -> Result<crate::output::SinkSummary, crate::output::SinkError> {
        Ok(crate::output::SinkSummary {
            name: "items".into(),
            refused: 3,
            ..Default::default()
        })
    }
}

#[tokio::test]
async fn records_an_output_refused_are_counted_in_the_report() {
    let (tx, rx) = mpsc::channel(8);
    let tally = Arc::new(Mutex::new(Tally::default()));
    let task = tokio::spawn(drive_sinks(
        rx,
        vec![Box::new(Refusing)],
        Arc::new(StopSignal::default()),
        Arc::clone(&tally),
        false,
    ));
    drop(tx);
    assert_eq!(task.await.unwrap()[0].refused, 3);
    let tally = std::mem::take(&mut *tally.lock().unwrap());
    let report = tally.finish(Default::default());
    assert_eq!(report.counters.items_refused, 3);
}

/// An output file that counts its syncs.
#[derive(Default)]
struct Counted(std::sync::atomic::AtomicUsize);

impl crate::output::Syncable for Counted {
    fn sync(&self) -> std::io::Result<()> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    fn describe(&self) -> String {
        "counted".into()
    }
}

/// A sink that writes to one [`Counted`] file.
struct Writing(Arc<Counted>);

#[async_trait::async_trait]
impl crate::output::Sink for Writing {
    async fn record(&mut self, _: &Page) -> Result<(), crate::output::SinkError> {
        Ok(())
    }

    fn unsynced(&mut self) -> Vec<Arc<dyn crate::output::Syncable>> {
        vec![self.0.clone()]
    }

    async fn finish(&mut self) -> Result<crate::output::SinkSummary, crate::output::SinkError> {
        Ok(crate::output::SinkSummary::default())
    }
}

/// With a frontier whose completions survive a power cut, a page is
/// acknowledged (and its lease then completed) only after the file its sink
/// wrote it to was synced; without, no sync is made.
#[tokio::test]
async fn a_page_is_acknowledged_after_its_output_is_synced() {
    for sync in [true, false] {
        let file = Arc::new(Counted::default());
        let (tx, rx) = mpsc::channel(8);
        let task = tokio::spawn(drive_sinks(
            rx,
            vec![Box::new(Writing(file.clone()))],
            Arc::new(StopSignal::default()),
            Arc::new(Mutex::new(Tally::default())),
            sync,
        ));
        for i in 0..3 {
            let (page, written) = handoff(i);
            tx.send(page).await.unwrap();
            acknowledged(written).await;
            let synced = file.0.load(std::sync::atomic::Ordering::SeqCst);
            // Each page flushed alone, so each had a sync of its own.
            let want = if sync { i + 1 } else { 0 };
            assert_eq!(synced, want, "page {i}, sync {sync}");
        }
        drop(tx);
        task.await.unwrap();
    }
}
