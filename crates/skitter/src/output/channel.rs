//! A sink that forwards each record to a bounded channel, so a library user can
//! consume outcomes as they happen. A full channel makes the crawl wait; nothing is
//! dropped. A dropped receiver is not an error: the crawl goes on without it.

use async_trait::async_trait;
use tokio::sync::mpsc;

use super::{Page, Sink, SinkError, SinkSummary};
use crate::base::outcome::PageRecord;

/// Forwards records to a bounded [`mpsc::Receiver`].
#[derive(Debug)]
pub struct ChannelSink {
    tx: Option<mpsc::Sender<PageRecord>>,
    sent: u64,
}

impl ChannelSink {
    /// A sink and the receiver of its records; `capacity` bounds the backlog.
    pub fn new(capacity: usize) -> (ChannelSink, mpsc::Receiver<PageRecord>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (
            ChannelSink {
                tx: Some(tx),
                sent: 0,
            },
            rx,
        )
    }
}

#[async_trait]
impl Sink for ChannelSink {
    async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
        if let Some(tx) = &self.tx {
            if tx.send(page.record.clone()).await.is_err() {
                self.tx = None;
            } else {
                self.sent += 1;
            }
        }
        Ok(())
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        self.tx = None;
        Ok(SinkSummary {
            name: "channel".into(),
            records: self.sent,
            ..SinkSummary::default()
        })
    }
}
