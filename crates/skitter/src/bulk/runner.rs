//! Running a bulk fetch: the dispatcher, the per-item task, the collector.
//!
//! The dispatcher pulls one item at a time from the input, but only when one of
//! `4 × concurrency` window slots is free, and spawns a task for it. The task
//! runs its request ([`hop`](super::hop): a per-host slot, then a global slot,
//! retries, redirects one hop at a time, the body saved), or a recipe's steps
//! and pages ([`chain`](super::chain)), sends each hop's
//! [`Page`](crate::output::Page) (with its global slot) and finally its
//! [`ItemReport`] to the [`collector`](super::collector), which alone touches
//! the sinks, the fetch index, the summary and the observer. With
//! `if_modified`, the item's row in the fetch index decides the request and
//! [`revalidate`](super::revalidate) judges the answer.
//!
//! Stopping (cancellation, or a sink failure): no new item is read, tasks that have
//! not started a request give up, and requests in flight get `grace` to finish
//! before they are dropped. Items that never finished are not counted.

use std::pin::pin;
use std::sync::Arc;
use std::time::Instant;

use futures_util::{Stream, StreamExt};
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::chain;
use super::collector::{Event, collect};
use super::context::{Ctx, Finished};
use super::hop::follow;
use super::input::InputItem;
use super::read::Wanted;
use super::summary::{ItemReport, Outcome, Summary};
use super::{BulkFetcher, name};
use crate::base::stop::StopReason;
use crate::crawl::body::CpuPool;
use crate::host::slots::HostLimits;
use crate::output::SinkError;

pub(super) async fn run(
    fetcher: BulkFetcher,
    urls: impl Stream<Item = InputItem> + Send,
    cancel: CancellationToken,
) -> Summary {
    let started = Instant::now();
    let BulkFetcher {
        config,
        fetcher,
        sinks,
        observer,
    } = fetcher;
    let stop = cancel.child_token();
    let (tx, rx) = mpsc::channel(config.concurrency.clamp(16, 1024));
    let collector = tokio::spawn(collect(
        rx,
        (sinks, config.index.clone()),
        observer,
        stop.clone(),
    ));
    let window = Arc::new(Semaphore::new(config.concurrency.saturating_mul(4)));
    // The pool's figures are read at the end; the clone shares them.
    let proxies = fetcher.clone();
    let ctx = Arc::new(Ctx {
        global: Arc::new(Semaphore::new(config.concurrency)),
        hosts: HostLimits::new(config.politeness),
        config,
        fetcher,
        events: tx,
        cpu: CpuPool::new(),
        stop: stop.clone(),
        abort: CancellationToken::new(),
    });
    let tracker = TaskTracker::new();
    dispatch(&ctx, urls, window, &tracker).await;
    tracker.close();
    if ctx.stop.is_cancelled() {
        let (abort, grace) = (ctx.abort.clone(), ctx.config.grace);
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            abort.cancel();
        });
    }
    tracker.wait().await;
    drop(ctx);
    let (mut summary, sink_failure) = match collector.await {
        Ok(done) => done,
        Err(e) => (
            Summary::default(),
            Some(SinkError::new("collector", "the output task failed").with_source(e)),
        ),
    };
    summary.elapsed = started.elapsed();
    summary.proxies = proxies.proxy_stats();
    summary.stopped = match sink_failure {
        Some(e) if e.is_reader_gone() => Some(StopReason::OutputClosed(e.sink().to_string())),
        Some(e) => Some(StopReason::Fatal(e.to_string())),
        None if cancel.is_cancelled() => Some(StopReason::Interrupted),
        None => None,
    };
    summary
}

/// Reads items while there is room in the window, one task each, until the input
/// ends or a stop is requested.
async fn dispatch(
    ctx: &Arc<Ctx>,
    urls: impl Stream<Item = InputItem> + Send,
    window: Arc<Semaphore>,
    tracker: &TaskTracker,
) {
    let mut urls = pin!(urls);
    let mut n = 0u64;
    loop {
        // `biased`: a stop wins over a ready slot or item (see attempt.rs).
        let slot = tokio::select! {
            biased;
            () = ctx.stop.cancelled() => return,
            slot = window.clone().acquire_owned() => slot,
        };
        let Ok(slot) = slot else { return };
        let item = tokio::select! {
            biased;
            () = ctx.stop.cancelled() => return,
            item = urls.next() => item,
        };
        let Some(item) = item else { return };
        n += 1;
        let ctx = ctx.clone();
        tracker.spawn(async move {
            let _slot = slot;
            let abort = ctx.abort.clone();
            let report = tokio::select! {
                report = process(&ctx, n, item) => report,
                () = abort.cancelled() => None,
            };
            if let Some((report, update)) = report {
                // Only fails once the collector is gone, and it outlives every task.
                let _ = ctx
                    .events
                    .send(Event::Done(Box::new((report, update))))
                    .await;
            }
        });
    }
}

/// Runs one item to its report; `None` when a stop came before it finished.
async fn process(ctx: &Ctx, n: u64, item: InputItem) -> Option<Finished> {
    let mut report = ItemReport {
        n,
        location: item.location,
        url: None,
        final_url: None,
        outcome: Outcome::Exists,
        saved: None,
        bytes: 0,
        requests: 0,
        change: None,
        files: 0,
        pages: 0,
        chain_stop: None,
    };
    // The input as given (with any `user:pass@`) is the origin the fetcher
    // takes credentials from; everything printed or saved sees it without them.
    let origin = match item.url {
        Ok(url) => url,
        Err(e) => {
            report.outcome = Outcome::Malformed(e);
            return Some((report, None));
        }
    };
    let mut url = origin.clone();
    let _ = crate::fetch::take_credentials(&mut url);
    report.url = Some(url.clone());
    if let Some(recipe) = ctx.config.recipe.clone() {
        let start = chain::Start {
            url,
            origin,
            ranges: item.ranges,
            n,
        };
        return chain::run(ctx, &recipe, start, report).await;
    }
    let target = ctx
        .config
        .output
        .as_ref()
        .map(|o| name::target_path(&o.dir, &o.naming, &url, n));
    let skip = ctx.config.output.as_ref().is_some_and(|o| o.skip_existing);
    let exists = match &target {
        Some(path) if skip || ctx.config.index.is_some() => {
            tokio::fs::try_exists(path).await.unwrap_or(false)
        }
        _ => false,
    };
    // What the index knows only counts while the file it describes is there.
    let known = match (&ctx.config.index, exists) {
        (Some(index), true) => index.lookup(&url).await,
        _ => None,
    };
    // A file the index can revalidate is fetched conditionally, not skipped.
    if skip && exists && known.is_none() {
        return Some((report, None));
    }
    follow(ctx, (url, origin), (target, known), report, Wanted::NOTHING)
        .await
        .map(|(finished, _)| finished)
}
