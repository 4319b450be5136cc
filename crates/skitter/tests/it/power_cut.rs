//! A `--state` crawl survives a power cut with its outputs whole: a URL's
//! completion reaches the state only after the bytes its outputs wrote for it
//! were synced. A power cut cannot be made in a test, so the order is watched:
//! the real JSONL and WARC sinks, each behind a wrapper that notes which pages
//! it was given and which of them its files' syncs covered, and the real disk
//! frontier behind one that checks, as each completion arrives, that every
//! output's sync already covered that URL. Anything the state then writes for
//! the URL (its commit, the WAL `fsync`, a checkpoint, the kernel's own
//! write-back) comes after the output's `fsync`.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use skitter::Crawler;
use skitter::base::outcome::PageRecord;
use skitter::frontier::{
    Claim, DiskFrontier, DiskOptions, Fetched, Frontier, FrontierCounts, FrontierError, Lease,
    Request,
};
use skitter::host::{HostFeedback, HostKey, Throttle};
use skitter::output::{
    JsonlSink, Page, Sink, SinkError, SinkSummary, Syncable, WarcOptions, WarcSink,
};
use skitter::state::recrawl::{PassInfo, Visit};
use skitter::state::store::CrawlMeta;
use skitter_testsite::{SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

/// What one output was given, and how much of it its syncs covered.
#[derive(Default)]
struct Ledger {
    name: &'static str,
    /// URLs in the order the sink took them.
    written: Mutex<Vec<String>>,
    /// How many of `written` were flushed before a sync that completed.
    synced: AtomicUsize,
}

/// A sink, watched.
struct WatchedSink {
    inner: Box<dyn Sink>,
    ledger: Arc<Ledger>,
}

/// One of a watched sink's files: a finished sync covers the pages the sink
/// had taken when it handed the file out (right after its flush).
struct Covering {
    inner: Arc<dyn Syncable>,
    upto: usize,
    ledger: Arc<Ledger>,
}

impl Syncable for Covering {
    fn sync(&self) -> io::Result<()> {
        self.inner.sync()?;
        self.ledger.synced.fetch_max(self.upto, Ordering::SeqCst);
        Ok(())
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

#[async_trait]
impl Sink for WatchedSink {
    fn wants_bodies(&self) -> bool {
        self.inner.wants_bodies()
    }

    async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
        self.inner.record(page).await?;
        self.ledger
            .written
            .lock()
            .unwrap()
            .push(page.record.url.to_string());
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        self.inner.flush().await
    }

    fn unsynced(&mut self) -> Vec<Arc<dyn Syncable>> {
        let upto = self.ledger.written.lock().unwrap().len();
        let ledger = &self.ledger;
        self.inner
            .unsynced()
            .into_iter()
            .map(|inner| {
                Arc::new(Covering {
                    inner,
                    upto,
                    ledger: ledger.clone(),
                }) as Arc<dyn Syncable>
            })
            .collect()
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        self.inner.finish().await
    }
}

/// The disk frontier, checking each completion against the outputs' ledgers.
struct WatchedFrontier {
    inner: Arc<DiskFrontier>,
    ledgers: Vec<Arc<Ledger>>,
    completed: AtomicUsize,
    /// Completions that came before an output's sync covered their URL.
    early: Mutex<Vec<String>>,
}

impl WatchedFrontier {
    fn check(&self, record: &PageRecord) {
        self.completed.fetch_add(1, Ordering::SeqCst);
        let url = record.url.as_str();
        for ledger in &self.ledgers {
            let written = ledger.written.lock().unwrap();
            let synced = ledger.synced.load(Ordering::SeqCst);
            match written.iter().position(|u| u == url) {
                Some(at) if at < synced => {}
                Some(_) => self
                    .early
                    .lock()
                    .unwrap()
                    .push(format!("{url}: done before {} was synced", ledger.name)),
                None => self
                    .early
                    .lock()
                    .unwrap()
                    .push(format!("{url}: done before {} had it", ledger.name)),
            }
        }
    }
}

#[async_trait]
impl Frontier for WatchedFrontier {
    async fn offer(&self, requests: Vec<Request>) -> Result<usize, FrontierError> {
        self.inner.offer(requests).await
    }

    async fn claim(&self) -> Result<Claim, FrontierError> {
        self.inner.claim().await
    }

    async fn complete(
        &self,
        lease: Lease,
        feedback: HostFeedback,
    ) -> Result<Option<Throttle>, FrontierError> {
        self.inner.complete(lease, feedback).await
    }

    async fn retry(
        &self,
        lease: Lease,
        wait: Duration,
        feedback: HostFeedback,
    ) -> Result<Option<Throttle>, FrontierError> {
        self.inner.retry(lease, wait, feedback).await
    }

    async fn complete_with(
        &self,
        lease: Lease,
        feedback: HostFeedback,
        record: &PageRecord,
    ) -> Result<Option<Throttle>, FrontierError> {
        self.check(record);
        self.inner.complete_with(lease, feedback, record).await
    }

    fn durable(&self) -> bool {
        self.inner.durable()
    }

    fn syncs(&self) -> bool {
        self.inner.syncs()
    }

    async fn complete_visit(
        &self,
        lease: Lease,
        feedback: HostFeedback,
        record: &PageRecord,
        visit: Option<&Visit>,
    ) -> Result<Option<Throttle>, FrontierError> {
        self.check(record);
        self.inner
            .complete_visit(lease, feedback, record, visit)
            .await
    }

    fn pass(&self) -> Option<PassInfo> {
        self.inner.pass()
    }

    async fn recall(&self, url: &url::Url) -> Result<Option<Visit>, FrontierError> {
        self.inner.recall(url).await
    }

    async fn set_host_delay(&self, host: &HostKey, delay: Duration) -> Result<(), FrontierError> {
        self.inner.set_host_delay(host, delay).await
    }

    async fn counts(&self) -> Result<FrontierCounts, FrontierError> {
        self.inner.counts().await
    }

    async fn fetched(&self) -> Result<Fetched, FrontierError> {
        self.inner.fetched().await
    }
}

#[tokio::test]
async fn a_url_is_done_only_after_its_outputs_are_synced() {
    let site = TestSite::start(SiteConfig {
        pages: 40,
        ..SiteConfig::default()
    })
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let meta = CrawlMeta {
        roots: vec![site.url("/")],
        ..CrawlMeta::default()
    };
    let store = DiskFrontier::open(&out.path().join("state"), &meta, DiskOptions::default());
    let store = Arc::new(store.unwrap());
    let jsonl = Arc::new(Ledger {
        name: "the JSONL",
        ..Ledger::default()
    });
    let warc = Arc::new(Ledger {
        name: "the WARC",
        ..Ledger::default()
    });
    let frontier = Arc::new(WatchedFrontier {
        inner: store.clone(),
        ledgers: vec![jsonl.clone(), warc.clone()],
        completed: AtomicUsize::new(0),
        early: Mutex::new(Vec::new()),
    });
    let sinks: [(Box<dyn Sink>, &Arc<Ledger>); 2] = [
        (
            Box::new(JsonlSink::create(out.path().join("crawl.jsonl")).unwrap()),
            &jsonl,
        ),
        (
            Box::new(
                WarcSink::create(out.path().join("crawl.warc"), WarcOptions::default()).unwrap(),
            ),
            &warc,
        ),
    ];
    let mut crawler = Crawler::builder()
        .root(site.url("/"))
        .frontier(frontier.clone())
        .outcome_store(store)
        .max_tasks(8);
    for (inner, ledger) in sinks {
        crawler = crawler.sink(Box::new(WatchedSink {
            inner,
            ledger: ledger.clone(),
        }));
    }
    let report = crawler
        .build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap();
    assert!(report.counters.html >= 40, "{:?}", report.counters);
    assert!(frontier.completed.load(Ordering::SeqCst) >= 40);
    let early = frontier.early.lock().unwrap();
    assert!(
        early.is_empty(),
        "{} early completions: {early:#?}",
        early.len()
    );
}
