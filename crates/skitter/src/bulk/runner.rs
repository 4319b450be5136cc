//! Running a bulk fetch: the dispatcher, the per-item task, the collector.
//!
//! The dispatcher pulls one item at a time from the input, but only when one of
//! `4 × concurrency` window slots is free, and spawns a task for it. The task
//! takes a per-host slot, then a global slot, makes the request (with retries),
//! follows redirects one hop at a time, saves the body, and sends each hop's
//! [`Page`] (with its global slot) and finally its [`ItemReport`] to the
//! [`collector`](super::collector), which alone touches the sinks, the fetch
//! index, the summary and the observer. With `if_modified`, the item's row in
//! the fetch index decides the request and [`revalidate`] judges the answer.
//!
//! Stopping (cancellation, or a sink failure): no new item is read, tasks that have
//! not started a request give up, and requests in flight get `grace` to finish
//! before they are dropped. Items that never finished are not counted.

use std::path::{Path, PathBuf};
use std::pin::pin;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use url::Url;

use super::attempt::{Gates, fetch_with_retries};
use super::collector::{Event, collect};
use super::index::{Known, Update};
use super::input::InputItem;
use super::summary::{ItemReport, Outcome, Summary};
use super::{BulkFetcher, Config, name, revalidate, save};
use crate::base::outcome::{ErrorKind, FetchFailure, OutcomeKind, PageRecord};
use crate::base::stop::StopReason;
use crate::base::urlnorm;
use crate::crawl::body::CpuPool;
use crate::fetch::{Fetcher, decode, redirect};
use crate::host::slots::HostLimits;
use crate::output::{Page, SinkError};
use crate::parse::items::{ExtractFailure, Items, PageInput};

/// What every item task shares.
struct Ctx {
    config: Config,
    fetcher: Fetcher,
    global: Arc<Semaphore>,
    hosts: Arc<HostLimits>,
    events: mpsc::Sender<Event>,
    /// Where extraction runs, off the async workers.
    cpu: CpuPool,
    /// Stop starting requests.
    stop: CancellationToken,
    /// Drop requests in flight (the grace period is over).
    abort: CancellationToken,
}

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
        let slot = tokio::select! {
            slot = window.clone().acquire_owned() => slot,
            () = ctx.stop.cancelled() => return,
        };
        let Ok(slot) = slot else { return };
        let item = tokio::select! {
            item = urls.next() => item,
            () = ctx.stop.cancelled() => return,
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

/// An item's report and its fetch index row.
type Finished = (ItemReport, Option<Update>);

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
    follow(ctx, (url, origin), (target, known), report).await
}

/// Fetches `url` (the input `origin` without credentials) and the redirects it
/// leads to, saving the final body to `target`; conditionally, when the fetch
/// index `known` the item.
async fn follow(
    ctx: &Ctx,
    (url, origin): (Url, Url),
    (target, known): (Option<PathBuf>, Option<Known>),
    mut report: ItemReport,
) -> Option<Finished> {
    let mut current = url.clone();
    let mut parent = None;
    let mut redirects_left = ctx.config.max_redirect;
    loop {
        let validators = revalidate::validators_for(known.as_ref(), &current);
        let request = (&current, &origin, validators);
        let (mut hop, end) = fetch_hop(ctx, request, parent, redirects_left).await?;
        report.requests += hop.page.record.attempts;
        report.bytes = hop.page.record.size;
        let next = match end {
            HopEnd::Redirect(next) => next,
            HopEnd::Final(outcome) => {
                report.outcome = outcome;
                let judged = ctx.config.index.is_some().then(|| {
                    let validators = std::mem::take(&mut hop.validators);
                    let item = (&url, known.as_ref());
                    revalidate::judge(item, &mut hop.page, &report.outcome, validators)
                });
                let mut update = None;
                // A 304 has no body to extract from.
                if matches!(report.outcome, Outcome::Ok { status } if status != 304) {
                    hop.page.items = extract(ctx, &hop, &current).await;
                    if let Some(found) = &hop.page.items {
                        found.count_on(&mut hop.page.record);
                    }
                }
                let save = judged.as_ref().is_none_or(|j| j.save);
                if let (Outcome::Ok { .. }, Some(path), true) = (&report.outcome, &target, save) {
                    match save_body(ctx, &mut hop, path.clone()).await {
                        Ok(()) => report.saved = Some(path.clone()),
                        Err(outcome) => report.outcome = outcome,
                    }
                }
                if let Some(judged) = judged {
                    // A file that could not be saved is not indexed.
                    let change = match report.outcome {
                        Outcome::SaveFailed(_) | Outcome::Failed(_) if judged.save => {
                            crate::base::outcome::Change::Failed
                        }
                        _ => {
                            update = judged.update;
                            judged.change
                        }
                    };
                    report.change = Some(change);
                    hop.page.record.change = Some(change);
                }
                if report.url.as_ref() != Some(&current) {
                    report.final_url = Some(current);
                }
                let _ = ctx
                    .events
                    .send(Event::Hop(Box::new(hop.page), hop.slot))
                    .await;
                return Some((report, update));
            }
        };
        let _ = ctx
            .events
            .send(Event::Hop(Box::new(hop.page), hop.slot))
            .await;
        parent = Some(std::mem::replace(&mut current, next));
        redirects_left -= 1;
    }
}

/// The items the extraction rules find in a final 2xx body (decoded first),
/// on the CPU pool.
async fn extract(ctx: &Ctx, hop: &Hop, url: &Url) -> Option<Box<Items>> {
    let rules = ctx
        .config
        .extract
        .as_ref()
        .filter(|r| r.matches(url))?
        .clone();
    let raw = hop.body.clone()?;
    let encoding = hop.content_encoding.clone();
    let max = ctx.fetcher.config().max_body_size;
    let charset = hop.page.record.encoding.clone();
    let url = url.clone();
    let fetched_at = hop.fetched_at;
    ctx.cpu
        .run(move || {
            let failed = |message: String| Items {
                fetched_at,
                errors: vec![ExtractFailure {
                    rule_set: String::new(),
                    field: None,
                    message,
                }],
                ..Items::default()
            };
            let body = match decode::decode(encoding.as_deref(), &raw, max) {
                Ok(body) => body,
                Err(e) => return Some(Box::new(failed(format!("cannot decode the body: {e}")))),
            };
            let page = PageInput {
                url: &url,
                body: &body,
                charset: charset.as_deref(),
                fetched_at,
            };
            rules.extract(&page).map(Box::new)
        })
        .await
}

/// One request's result, holding the global slot its body counts against.
struct Hop {
    page: Page,
    /// When its exchange started.
    fetched_at: chrono::DateTime<chrono::Utc>,
    body: Option<Bytes>,
    content_encoding: Option<String>,
    /// The response's `ETag` and `Last-Modified`.
    validators: crate::fetch::Validators,
    slot: Option<OwnedSemaphorePermit>,
}

enum HopEnd {
    Redirect(Url),
    Final(Outcome),
}

/// Makes one request (with retries) under the host and global caps and says what
/// it means for the item; `None` when a stop came before it could start.
async fn fetch_hop(
    ctx: &Ctx,
    (url, origin, validators): (&Url, &Url, Option<&crate::fetch::Validators>),
    parent: Option<Url>,
    redirects_left: u32,
) -> Option<(Hop, HopEnd)> {
    let gates = Gates {
        hosts: &ctx.hosts,
        global: &ctx.global,
    };
    let attempted = fetch_with_retries(
        &ctx.fetcher,
        &ctx.config.retry,
        gates,
        (url, origin, validators),
        ctx.config.keep,
        &ctx.stop,
    )
    .await?;
    let (started, started_at) = attempted.started;
    let mut record = PageRecord::new(url.clone(), 0, parent);
    record.attempts = attempted.attempts;
    record.elapsed = started.elapsed();
    let mut hop = Hop {
        page: Page {
            record,
            exchange: None,
            rendered: None,
            items: None,
        },
        fetched_at: started_at,
        body: None,
        content_encoding: None,
        validators: Default::default(),
        slot: attempted.global,
    };
    let end = match attempted.result {
        Err(failure) => HopEnd::Final(fail(&mut hop.page.record, failure)),
        Ok(mut resp) => {
            let record = &mut hop.page.record;
            record.status = Some(resp.status);
            record.proxy = resp.proxy.take();
            record.size = resp.size;
            record.content_type = resp.media_type.clone();
            record.encoding = resp.charset.clone();
            hop.page.exchange = resp.exchange.take();
            if let Some(x) = &hop.page.exchange {
                hop.fetched_at = x.started;
            }
            hop.content_encoding = resp.header("content-encoding").map(str::to_string);
            hop.body = resp.body.take();
            hop.validators = resp.validators();
            let conditional = validators.is_some();
            classify(ctx, record, &resp, (redirects_left, conditional))
        }
    };
    Some((hop, end))
}

/// Fills in the record's kind and decides what a response means for the item
/// (a `304` to a `conditional` request is a success: the saved file is current).
fn classify(
    ctx: &Ctx,
    record: &mut PageRecord,
    resp: &crate::fetch::Response,
    (redirects_left, conditional): (u32, bool),
) -> HopEnd {
    let status = resp.status;
    if (200..300).contains(&status) || (status == 304 && conditional) {
        record.kind = OutcomeKind::Other;
        return HopEnd::Final(Outcome::Ok { status });
    }
    if !redirect::is_redirect(status) {
        record.kind = OutcomeKind::HttpError;
        return HopEnd::Final(Outcome::HttpError { status });
    }
    let target = redirect::target(resp, &record.url).and_then(|t| {
        if urlnorm::is_crawlable_scheme(&t) {
            Ok(t)
        } else {
            Err(FetchFailure {
                kind: ErrorKind::BadRedirect,
                message: format!("redirect to unsupported scheme: {t}"),
            })
        }
    });
    match target {
        Err(failure) => {
            let outcome = fail(record, failure);
            record.kind = OutcomeKind::HttpError;
            HopEnd::Final(outcome)
        }
        Ok(target) => {
            record.kind = OutcomeKind::Redirect;
            record.next_url = Some(target.clone());
            if redirects_left == 0 {
                let failure = redirect::too_many(ctx.config.max_redirect);
                record.error = Some(failure.clone());
                return HopEnd::Final(Outcome::Failed(failure));
            }
            record.num_urls = 1;
            HopEnd::Redirect(target)
        }
    }
}

fn fail(record: &mut PageRecord, failure: FetchFailure) -> Outcome {
    record.kind = OutcomeKind::Failed;
    record.error = Some(failure.clone());
    Outcome::Failed(failure)
}

/// Decodes the body and writes it on the blocking pool; the outcome on failure.
async fn save_body(ctx: &Ctx, hop: &mut Hop, path: PathBuf) -> Result<(), Outcome> {
    let raw = hop.body.take().unwrap_or_default();
    let encoding = hop.content_encoding.take();
    let max = ctx.fetcher.config().max_body_size;
    let root = ctx.config.output.as_ref().map(|o| o.dir.clone());
    let written = tokio::task::spawn_blocking(move || {
        let root = root.unwrap_or_else(|| path.parent().unwrap_or(Path::new(".")).to_path_buf());
        let body = decode::decode(encoding.as_deref(), &raw, max).map_err(|e| FetchFailure {
            kind: ErrorKind::Decode,
            message: e.to_string(),
        })?;
        Ok(save::save(&root, &path, &body))
    })
    .await;
    match written {
        Ok(Err(failure)) => Err(fail(&mut hop.page.record, failure)),
        Ok(Ok(Err(e))) => Err(Outcome::SaveFailed(e)),
        Ok(Ok(Ok(()))) => Ok(()),
        Err(e) => Err(fail(
            &mut hop.page.record,
            FetchFailure {
                kind: ErrorKind::Other,
                message: format!("the save task failed: {e}"),
            },
        )),
    }
}
