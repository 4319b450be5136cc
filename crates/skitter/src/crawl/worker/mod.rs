//! One claimed URL: robots.txt, one fetch, and either another attempt later (the
//! lease goes back to the frontier) or the response turned into a record, its
//! links extracted, gated and offered to the frontier.
//!
//! Links are offered before the lease is completed, so a crash in between can only
//! cause a refetch, never a lost link.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::OwnedSemaphorePermit;
use url::Url;

use crate::base::outcome::{ErrorKind, FetchFailure, OutcomeKind, PageRecord, SkipReason};
use crate::base::request::Validators;
use crate::crawl::body::{BodyJob, Doc, Fingerprint, ItemsJob};
use crate::crawl::ctx::Ctx;
use crate::crawl::deadline::TIMEOUT_TRIES;
use crate::crawl::stall::Waiting;
use crate::fetch::retry::{self, Verdict};
use crate::fetch::{Keep, Response, redirect};
use crate::frontier::{Lease, Request};
use crate::host::{HostFeedback, HostKey, ThrottleReason};
use crate::output::Page;
use crate::parse::links::{self, Link, PageLinks};
use crate::render::RenderMode;
use crate::robots::{OriginRules, RobotsSource};
use crate::state::recrawl::Visit;

mod get;
mod limit;
mod offer;
mod render;
mod revisit;
mod sitemaps;

use get::get;
use limit::{quarantine, take_quota};
use offer::{handle_redirect, offer_links};
use revisit::{payload_digest, recall};
use sitemaps::{handle_sitemap, offer_sitemaps};

/// Where one claim ends.
enum Step {
    /// The URL is finished: its page goes to the outputs, its lease completes
    /// (with what to remember of it for the next pass, if anything).
    Done(Box<Page>, HostFeedback, Option<Box<Visit>>),
    /// Not this time: the lease goes back to the frontier, to be claimed again
    /// after `wait` (a transient failure, or robots.txt unavailable).
    Again(Duration, HostFeedback),
}

/// Links gated between two yields to the scheduler.
const YIELD_EVERY: usize = 1024;

/// Runs one claim: one attempt at the URL. Finished, it is handed over and its
/// lease completed; failed transiently, it goes back to the frontier for another
/// attempt later, through its host's slot and gap like any request, so a
/// waiting retry holds neither a task nor the host. Aborted (lease left
/// outstanding, so it counts as "to do") only when the grace period ends. The
/// scheduler counts it as started when it spawns it.
///
/// Not an `async fn` but a function returning an `async move` block: an
/// `async fn` copies its arguments into locals, so the lease would take room
/// twice in every request in flight.
#[allow(clippy::manual_async_fn)] // the point: see above
pub(crate) fn run(
    ctx: std::sync::Arc<Ctx>,
    lease: Lease,
    permit: OwnedSemaphorePermit,
) -> impl std::future::Future<Output = ()> + Send {
    async move {
        let _permit = permit;
        let step = tokio::select! {
            done = contained(&ctx, &lease) => done,
            _ = ctx.signals.abort.cancelled() => return,
        };
        match step {
            Step::Done(page, feedback, visit) => {
                ctx.guards.deadlines.forget(&lease.request.url);
                let failed = matches!(
                    page.record.kind,
                    OutcomeKind::Failed | OutcomeKind::HttpError
                );
                ctx.signals.progress.finished(page.record.size, failed);
                // A scheduler waiting for fetches to end (max-pages) looks again.
                ctx.signals.changed.notify_one();
                // Boxed, like the other steps that do not wait on the network: a
                // task's size is that of its largest step, and every request in
                // flight pays for it.
                tokio::select! {
                    () = Box::pin(crate::crawl::deliver::deliver(&ctx, lease, feedback, *page, visit)) => {}
                    // An output that does not keep up must not hold the crawl past
                    // its grace period; the lease then stays outstanding, so the
                    // URL is to do.
                    () = ctx.signals.abort.cancelled() => {}
                }
            }
            Step::Again(wait, feedback) => {
                ctx.signals.progress.deferred();
                ctx.guards.budget.give_back();
                ctx.guards.slowdowns.retried();
                let host = HostKey::of(&lease.request.url);
                match ctx.frontier.retry(lease, wait, feedback).await {
                    // Boxed: a retry is rare, the room for it would be in every task.
                    Ok(throttle) => Box::pin(ctx.throttled(&host, throttle)).await,
                    Err(e) => ctx.signals.stop_signal.fail(format!("frontier: {e}")),
                }
                ctx.signals.changed.notify_one();
            }
        }
    }
}

/// [`process`], with a panic turned into this URL's failure (`other: internal:
/// …`): one bad input must not take down the crawl and its pending outputs.
fn contained<'a>(ctx: &'a Ctx, lease: &'a Lease) -> impl std::future::Future<Output = Step> + 'a {
    catch_panic(&lease.request, process(ctx, lease))
}

// Not an `async fn`: one would keep room for `work` both as its argument and
// inside the future it awaits, doubling what every request in flight holds.
fn catch_panic<'a>(
    req: &'a Request,
    work: impl std::future::Future<Output = Step> + 'a,
) -> impl std::future::Future<Output = Step> + 'a {
    use futures_util::FutureExt as _;
    // Shared state stays usable after a panic: locks are taken poison-tolerant
    // and none is held across an await.
    std::panic::AssertUnwindSafe(work)
        .catch_unwind()
        .map(move |caught| {
            caught.unwrap_or_else(|panic| {
                Step::Done(
                    Box::new(internal_failure(req, &*panic)),
                    HostFeedback::Silent,
                    None,
                )
            })
        })
}

/// The page for a URL whose handling panicked.
fn internal_failure(req: &Request, panic: &(dyn std::any::Any + Send)) -> Page {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string());
    tracing::error!(url = %req.url, %message, "internal error while handling a URL");
    let mut record = PageRecord::new(req.url.clone(), req.depth, req.parent.clone());
    record.error = Some(FetchFailure::internal(&message));
    Page {
        record,
        exchange: None,
        rendered: None,
        items: None,
        content: None,
        links: None,
        text: None,
    }
}

async fn process(ctx: &Ctx, lease: &Lease) -> Step {
    let req = &lease.request;
    if let Some(failure) = quarantine(&ctx.config.retry, lease) {
        tracing::warn!(url = %req.url, lost = lease.lost, "{}", failure.message);
        ctx.guards.budget.give_back();
        let mut record = PageRecord::new(req.url.clone(), req.depth, req.parent.clone());
        record.attempts = lease.failed_tries();
        record.error = Some(failure);
        let page = Page {
            record,
            exchange: None,
            rendered: None,
            items: None,
            content: None,
            links: None,
            text: None,
        };
        return Step::Done(Box::new(page), HostFeedback::Silent, None);
    }
    // A URL's first attempt takes its host's quota; its retries (and its
    // claims after a lost lease) are the same URL.
    let first = lease.tries == 0 && lease.lost == 0;
    let unreachable = match Box::pin(pre_fetch(ctx, req, first)).await {
        Ok(unreachable) => unreachable,
        Err(PreFetch::Skip(record)) => {
            ctx.guards.budget.give_back();
            let page = Page {
                record: *record,
                exchange: None,
                rendered: None,
                items: None,
                content: None,
                links: None,
                text: None,
            };
            return Step::Done(Box::new(page), HostFeedback::Silent, None);
        }
        Err(PreFetch::Defer(wait)) => {
            let pause = HostFeedback::SlowDown(wait, ThrottleReason::RobotsUnavailable);
            return Step::Again(wait, pause);
        }
    };
    let earlier = recall(&*ctx.frontier, &req.url).await;
    let started = Instant::now();
    let started_at = chrono::Utc::now();
    let tries = retry::Tries {
        failed: lease.failed_tries(),
        throttled: lease.throttled_tries(),
    };
    let attempt = tries.attempts() + 1;
    // Only the fetch stays inline: it is what a request in flight waits on. The
    // response's scope ends in this block, before the boxed step is awaited.
    let (outcome, feedback) = {
        let deadlines = &ctx.guards.deadlines;
        let began = tokio::time::Instant::now();
        let (mut result, cut) = match unreachable {
            Some(failure) => (Err(failure), false),
            None => {
                let attempt = fetch(ctx, req, earlier.as_ref());
                within(deadlines.left(&req.url), deadlines.deadline(), attempt).await
            }
        };
        // An attempt is charged at most its timeout: what it ran over is the
        // timer's lateness, and would leave a default deadline (two timeouts)
        // a hair short of its second attempt.
        let took = began.elapsed().min(ctx.config.fetch.total_timeout);
        let timed_out = matches!(&result, Err(f) if f.kind == ErrorKind::Timeout);
        let account = deadlines.spend(&req.url, took, timed_out);
        let (verdict, mut feedback) = retry::judge(&ctx.config.retry, tries, &result);
        let (verdict, ran_out) = hold_to_deadline(ctx, verdict, &mut result, cut, account);
        if feedback == HostFeedback::Failed && lease.tries > 0 {
            // A URL failing again is that URL's trouble, not news of the server.
            feedback = HostFeedback::FailedAgain;
        }
        let proxy_failed = matches!(&result, Err(f) if f.kind == ErrorKind::Proxy);
        if !proxy_failed && matches!(feedback, HostFeedback::Failed | HostFeedback::FailedAgain) {
            // Before a retry (cheaply) and before giving up on the URL (always):
            // is the whole server down? Then the URL waits, using no try.
            let max_age = match verdict {
                Verdict::Retry(_) => HEALTH_CHECK_INTERVAL,
                Verdict::Done => LAST_TRY_CHECK_INTERVAL,
            };
            if let Some(defer) = Box::pin(check_health(ctx, &req.url, max_age)).await {
                let pause = HostFeedback::SlowDown(defer, ThrottleReason::RobotsUnavailable);
                return Step::Again(defer, pause);
            }
        }
        if let Verdict::Retry(wait) = verdict {
            // A timed-out URL waits at least as long as its attempt took: its
            // host's slot was held all that time, and a retry due in 100 ms
            // would take it again before the host's other URLs had their turn
            // (a host with few slots would do nothing else for a second
            // timeout).
            let wait = if timed_out { wait.max(took) } else { wait };
            tracing::debug!(url = %req.url, attempt, ?wait, "retrying later");
            return Step::Again(wait, feedback);
        }
        if ran_out {
            deadlines.exceeded();
        }
        let earlier = earlier.as_ref();
        let outcome = Box::pin(outcome(
            ctx,
            req,
            attempt,
            result,
            earlier,
            (started, started_at),
        ));
        (outcome, feedback)
    };
    let (page, visit) = outcome.await;
    Step::Done(Box::new(page), feedback, visit.map(Box::new))
}

/// Runs one attempt within what is left of its URL's deadline. Cut short,
/// it is a timeout that says so (and `true`).
fn within(
    left: Duration,
    deadline: Duration,
    attempt: impl std::future::Future<Output = Result<Response, FetchFailure>>,
) -> impl std::future::Future<Output = (Result<Response, FetchFailure>, bool)> {
    use futures_util::FutureExt as _;
    // Not an `async fn`, for the reason given at `catch_panic`: this future is
    // what a request in flight waits in.
    tokio::time::timeout(left, attempt).map(move |result| match result {
        Ok(result) => (result, false),
        Err(_) => {
            let failure = FetchFailure {
                kind: ErrorKind::Timeout,
                message: format!(
                    "the URL's deadline ran out ({} for all its attempts)",
                    secs(deadline)
                ),
            };
            (Err(failure), true)
        }
    })
}

/// Holds the verdict on an attempt to its URL's deadline, with `left` of it
/// after the attempt and the URL's `timeouts` so far: no retry once nothing is
/// left, nor after a timeout when what is left could not hold another full
/// attempt (it would only be cut short) or the URL already timed out
/// [`TIMEOUT_TRIES`] times. `true` with it: the deadline decided (the failure
/// says so).
fn hold_to_deadline(
    ctx: &Ctx,
    verdict: Verdict,
    result: &mut Result<Response, FetchFailure>,
    cut: bool,
    (left, timeouts): (Duration, u32),
) -> (Verdict, bool) {
    let timeout = ctx.config.fetch.total_timeout;
    let timed_out = matches!(result, Err(f) if f.kind == ErrorKind::Timeout);
    let retry = matches!(verdict, Verdict::Retry(_));
    let out_of_time = left.is_zero() || (timed_out && left < timeout);
    let out_of_timeouts = timed_out && timeouts >= TIMEOUT_TRIES;
    if !(cut || (retry && (out_of_time || out_of_timeouts))) {
        return (verdict, false);
    }
    if let Err(failure) = result
        && !cut
    {
        failure.message = if out_of_time {
            format!(
                "{}; not retried: {} left of the URL's deadline of {}, less than one attempt's timeout ({})",
                failure.message,
                secs(left),
                secs(ctx.guards.deadlines.deadline()),
                secs(timeout),
            )
        } else {
            format!(
                "{}; not retried: the URL timed out {timeouts} times",
                failure.message
            )
        };
    }
    (Verdict::Done, true)
}

/// A duration as seconds, for messages (`240s`, `0.5s`).
fn secs(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

/// The page for a finished fetch: its record, its links offered, its exchange.
async fn outcome(
    ctx: &Ctx,
    req: &Request,
    attempts: u32,
    result: Result<Response, FetchFailure>,
    earlier: Option<&Visit>,
    (started, started_at): (Instant, chrono::DateTime<chrono::Utc>),
) -> (Page, Option<Visit>) {
    let (mut items, mut rendered, mut content, mut page_links) = (None, None, None, None);
    let mut page_text = None;
    let mut record = PageRecord::new(req.url.clone(), req.depth, req.parent.clone());
    record.attempts = attempts;
    let (mut sha1, mut validators, mut fetched_at) = (None, Validators::default(), started_at);
    let mut exchange = match result {
        Err(failure) => {
            record.kind = OutcomeKind::Failed;
            record.error = Some(failure);
            None
        }
        Ok(mut resp) => {
            record.status = Some(resp.status);
            record.proxy = resp.proxy.take();
            record.size = resp.size;
            record.content_type = resp.media_type.clone();
            record.encoding = resp.charset.clone();
            let mut exchange = resp.exchange.take();
            fetched_at = exchange.as_ref().map_or(started_at, |x| x.started);
            if ctx.pass().is_some() {
                validators = resp.validators();
                sha1 = payload_digest(&resp, exchange.as_mut());
            }
            let handled = handle_response(ctx, req, &resp, &mut record, fetched_at, earlier).await;
            items = handled.items;
            if let Some(found) = &items {
                found.count_on(&mut record);
            }
            rendered = handled.rendered;
            content = handled.content;
            page_links = handled.links;
            page_text = handled.text;
            exchange.map(|mut x| {
                x.decoded_body = handled.decoded;
                x
            })
        }
    };
    record.elapsed = started.elapsed();
    let visit = revisit::settle(
        ctx.pass(),
        &mut record,
        exchange.as_mut(),
        earlier,
        (sha1, validators, fetched_at),
    );
    let page = Page {
        record,
        exchange,
        rendered,
        items,
        content,
        links: page_links,
        text: page_text,
    };
    (page, visit)
}

/// What handling a response yields for the outputs besides its record.
#[derive(Default)]
struct Handled {
    /// The decoded body of an HTML page, for archiving sinks.
    decoded: Option<bytes::Bytes>,
    /// What the extraction rules found on it.
    items: Option<Box<crate::parse::items::Items>>,
    /// The page as the browser rendered it, when it was.
    rendered: Option<Box<crate::output::RenderedPage>>,
    /// The page as Markdown and text, when a sink reads it.
    content: Option<Arc<crate::content::Document>>,
    /// Its links with their lines, and its anchors, when a sink reads them.
    links: Option<Arc<PageLinks>>,
    /// Its title and visible text, when a sink reads them.
    text: Option<Arc<crate::parse::text::PageText>>,
}

/// Why a URL is not fetched on this claim.
enum PreFetch {
    /// Not at all: its record says why.
    Skip(Box<PageRecord>),
    /// Not yet: its origin's robots.txt is unavailable; ask again after this.
    Defer(Duration),
}

/// Checks robots.txt and, on a URL's `first` attempt, the per-host quota. `Some` failure: robots.txt could
/// not be asked for, the host having no (allowed) address, and the page fails
/// the same way without a request (see `OriginRules::unreachable`).
async fn pre_fetch(
    ctx: &Ctx,
    req: &Request,
    first: bool,
) -> Result<Option<FetchFailure>, PreFetch> {
    let host = HostKey::of(&req.url);
    let skip = |reason| PageRecord::skipped(req.url.clone(), reason, req.depth, req.parent.clone());
    let mut unreachable = None;
    if let Some(robots) = &ctx.pipeline.robots {
        let rules = robots.rules_for(&req.url).await;
        unreachable = rules.unreachable().cloned();
        if let Some(wait) = robots_wait(ctx, &req.url, &rules) {
            return Err(PreFetch::Defer(wait));
        }
        let named = rules.robots.sitemaps();
        if !named.is_empty() {
            let origin = req.url.origin().ascii_serialization();
            let found = ctx
                .pipeline
                .sitemaps
                .take_robots_lines(&origin, named, &req.url);
            offer_sitemaps(ctx, req, found).await;
        }
        if let Some(delay) = rules.robots.crawl_delay(robots.token()) {
            apply_crawl_delay(ctx, &host, delay.min(ctx.config.max_crawl_delay)).await;
        }
        if rules.source == RobotsSource::Unavailable {
            let limit = if rules.deferral(tokio::time::Instant::now()).is_some() {
                "while it blocked the whole crawl for longer than the blocked limit"
            } else {
                "for longer than the outage limit"
            };
            let mut record = skip(SkipReason::RobotsUnavailable);
            record.error = Some(FetchFailure {
                kind: ErrorKind::Other,
                message: format!("robots.txt unavailable ({}) {limit}", rules.detail),
            });
            return Err(PreFetch::Skip(Box::new(record)));
        }
        if !rules.robots.allowed(robots.token(), &req.url) {
            return Err(PreFetch::Skip(Box::new(skip(SkipReason::Robots))));
        }
    }
    if first && !take_quota(ctx, &host).await {
        return Err(PreFetch::Skip(Box::new(skip(SkipReason::Limit))));
    }
    ctx.guards
        .stall
        .started(&req.url.origin().ascii_serialization());
    Ok(unreachable)
}

/// How long a URL must wait for its origin's unavailable robots.txt, `None`
/// once the rules are in force: the file came back, or the outage lasted too
/// long (`max_outage`), or it blocked the whole crawl too long (see
/// [`crate::crawl::stall`]). A wait is noted with the stall watch, and cut
/// so that it ends when a blocked crawl gives the origin up.
fn robots_wait(ctx: &Ctx, url: &Url, rules: &OriginRules) -> Option<Duration> {
    let now = tokio::time::Instant::now();
    let wait = rules.deferral(now)?;
    let (since, next_try, outage_end) = rules.outage()?;
    let origin = url.origin().ascii_serialization();
    let stall = &ctx.guards.stall;
    if stall.given_up(&origin, now) {
        return None;
    }
    let waiting = Waiting {
        since,
        next_try: next_try.max(now + wait),
        outage_end,
        detail: rules.detail.clone(),
    };
    stall.waits(&origin, waiting);
    let left = stall.until_give_up(now).map_or(wait, |left| wait.min(left));
    Some(left.max(Duration::from_millis(1)))
}

/// Hands a host's robots `Crawl-delay` to the frontier, once per host.
async fn apply_crawl_delay(ctx: &Ctx, host: &HostKey, delay: std::time::Duration) {
    let applied = &ctx.pipeline.delays_applied;
    // The lock goes with this statement, before the frontier is awaited.
    let first = applied
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(host.clone());
    if first && let Err(e) = ctx.frontier.set_host_delay(host, delay).await {
        ctx.signals.stop_signal.fail(format!("frontier: {e}"));
    }
}

/// How old an origin's robots.txt may be before a page that failed and will be
/// retried makes the crawler fetch it again as a health probe.
const HEALTH_CHECK_INTERVAL: Duration = Duration::from_secs(1);
/// The same before a page that failed its last try is recorded as failed: the
/// check then (almost) always runs, so a server that went down loses no page.
const LAST_TRY_CHECK_INTERVAL: Duration = Duration::from_millis(50);

/// After a page failed: is its whole server down? Checks the origin's
/// robots.txt again if it is older than `max_age`; while that is unavailable
/// too, the URL waits without using up a try (how long: the answer). Without
/// robots.txt handling there is no health check, and failures count as usual.
async fn check_health(ctx: &Ctx, url: &Url, max_age: Duration) -> Option<Duration> {
    let robots = ctx.pipeline.robots.as_ref()?;
    let rules = robots.recheck(url, max_age).await;
    robots_wait(ctx, url, &rules)
}

/// One attempt at the URL (sitemaps, and pages JSON rules read, keep their
/// body whatever its type), conditional on the earlier visit's validators.
async fn fetch(
    ctx: &Ctx,
    req: &Request,
    earlier: Option<&Visit>,
) -> Result<Response, FetchFailure> {
    let url = &req.url;
    let any_body = ctx.pipeline.sitemaps.sitemap(req).is_some()
        || ctx
            .config
            .extract
            .as_ref()
            .is_some_and(|r| r.wants_any_body(url));
    let keep = match ctx.pipeline.keep {
        Keep::Everything => Keep::Everything,
        _ if any_body => Keep::Body,
        keep => keep,
    };
    let validators = earlier.map(|v| &v.validators).filter(|v| !v.is_empty());
    get(ctx, url, keep, validators).await
}

/// Fills in the record for a response, extracts its items and queues what it
/// links to.
async fn handle_response(
    ctx: &Ctx,
    req: &Request,
    resp: &Response,
    record: &mut PageRecord,
    fetched_at: chrono::DateTime<chrono::Utc>,
    earlier: Option<&Visit>,
) -> Handled {
    if resp.status == 304 && earlier.is_some() {
        // Unchanged since the earlier pass, which offered its links then
        // (see `recrawl`); the record takes the earlier kind when settled.
        record.kind = OutcomeKind::Other;
        return Handled::default();
    }
    if redirect::is_redirect(resp.status) {
        handle_redirect(ctx, req, resp, record).await;
        return Handled::default();
    }
    if !(200..300).contains(&resp.status) {
        record.kind = OutcomeKind::HttpError;
        return Handled::default();
    }
    if let Some(trusted) = ctx.pipeline.sitemaps.sitemap(req) {
        record.kind = OutcomeKind::Other;
        let (found, new, listed) = handle_sitemap(ctx, req, resp, trusted).await;
        record.num_urls = found;
        record.num_new_urls = new;
        return Handled {
            links: listed.map(|links| Arc::new(lineless(links))),
            ..Handled::default()
        };
    }
    let mut links = links::header_links(
        resp.header("refresh"),
        resp.headers
            .get_all("link")
            .iter()
            .filter_map(|v| v.to_str().ok()),
        &req.url,
        ctx.config.extract_mode,
    );
    let headers = links.len();
    // A page whose content is extracted gives its text from that.
    let wants_text = ctx.pipeline.keep_text && ctx.pipeline.content.is_none();
    let mut handled = Handled::default();
    let mut fingerprint = None;
    record.kind = OutcomeKind::Other;
    record.truncated = resp.truncated;
    if let Some(raw) = resp.body.clone() {
        let doc = if resp.is_html() {
            Doc::Html
        } else if resp.media_type.as_deref() == Some("text/css") {
            Doc::Css
        } else {
            Doc::Other
        };
        let job = BodyJob {
            raw: raw.clone(),
            content_encoding: resp.header("content-encoding").map(str::to_owned),
            cut: resp.truncated,
            max: ctx.config.fetch.max_body_size,
            doc,
            charset: resp.charset.clone(),
            url: req.url.clone(),
            mode: ctx.config.extract_mode,
            items: ctx
                .config
                .extract
                .as_ref()
                .filter(|rules| rules.matches(&req.url))
                .map(|rules| ItemsJob {
                    rules: rules.clone(),
                    fetched_at,
                }),
            // The `auto` rules are read during the parse; the render step
            // after it decides on what they said.
            judge: ctx.config.render.mode == RenderMode::Auto,
            max_links: ctx.config.max_links_per_page,
            fingerprint: match ctx.config.trap_rules.max_similar_chain {
                0 => Fingerprint::Off,
                // A rendered page's links come from its DOM, not the body.
                _ if ctx.pipeline.renderer.is_some() => Fingerprint::Always,
                _ => Fingerprint::IfChained,
            },
            content: ctx.pipeline.content.clone().filter(|_| doc == Doc::Html),
            lines: ctx.pipeline.keep_links,
            text: wants_text,
        };
        match job.run(&ctx.pipeline.cpu).await {
            Err(e) => {
                record.kind = OutcomeKind::Failed;
                record.error = Some(FetchFailure {
                    kind: ErrorKind::Decode,
                    message: e.to_string(),
                });
                return handled;
            }
            Ok(found) => {
                record.truncated = found.truncated;
                ctx.guards.link_skips.cut(found.cut);
                handled.items = found.items;
                handled.text = found.text.map(Arc::new);
                fingerprint = found.fingerprint;
                links.extend(found.links);
                // Taken before a render replaces the links: lines are the
                // source's.
                if let Some(checked) = found.checked {
                    let mut lines = vec![0; headers];
                    lines.extend(checked.lines);
                    let (anchors, anchors_cut) =
                        checked.anchors.map_or((None, 0), |(a, cut)| (Some(a), cut));
                    handled.links = Some(Arc::new(PageLinks {
                        links: links.clone(),
                        lines,
                        anchors,
                        anchors_cut,
                    }));
                }
                if doc == Doc::Html {
                    record.kind = OutcomeKind::Html;
                    record.encoding = found.charset.map(str::to_ascii_lowercase);
                    let body = found.decoded.as_ref().unwrap_or(&raw);
                    // Boxed, and only when the crawl renders: a render's
                    // future is large, and every page waiting for a CPU
                    // permit above would keep room for it.
                    handled.rendered = match ctx.pipeline.renderer {
                        Some(_) => {
                            let render = render::page(
                                ctx,
                                &req.url,
                                resp,
                                body,
                                found.render,
                                record,
                                &mut links,
                            );
                            Box::pin(render).await
                        }
                        None => None,
                    };
                    let mut dom = handled.rendered.as_ref().and_then(|r| r.html.clone());
                    // The page list's text is what the reader sees too: a
                    // page that builds its text in script has none in its body.
                    // (Wanted only without content extraction, which would
                    // read the DOM below.)
                    if let Some(html) = dom.take_if(|_| wants_text) {
                        let text = ctx
                            .pipeline
                            .cpu
                            .run(move || crate::parse::text::page_text(&html))
                            .await;
                        handled.text = Some(Arc::new(text));
                    }
                    handled.content = match (dom, &ctx.pipeline.content) {
                        // What the reader sees is the rendered DOM.
                        (Some(html), Some(extractor)) => {
                            let extractor = extractor.clone();
                            let url = req.url.clone();
                            let doc = ctx
                                .pipeline
                                .cpu
                                .run(move || extractor.extract(&html, &url))
                                .await;
                            Some(Arc::new(doc))
                        }
                        _ => found.content.map(Arc::new),
                    };
                    handled.decoded = found.decoded.filter(|_| ctx.pipeline.keep_decoded);
                }
            }
        }
    }
    if ctx.pipeline.keep_links && handled.links.is_none() && !links.is_empty() {
        handled.links = Some(Arc::new(lineless(links.clone())));
    }
    let (found, new) = offer_links(ctx, req, links, fingerprint).await;
    record.num_urls = found;
    record.num_new_urls = new;
    handled
}

/// Links with no line to point at (a response's headers, a sitemap's
/// entries), for a sink that reads `Page::links`.
fn lineless(links: Vec<Link>) -> PageLinks {
    PageLinks {
        lines: vec![0; links.len()],
        links,
        anchors: None,
        anchors_cut: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::RequestKind;

    #[tokio::test]
    async fn a_panic_becomes_the_urls_internal_failure() {
        let req = Request {
            url: Url::parse("http://h/p").unwrap(),
            depth: 2,
            redirects_left: 5,
            parent: None,
            kind: RequestKind::Page,
        };
        let Step::Done(page, _, _) = catch_panic(&req, async { panic!("boom at {}", 7) }).await
        else {
            panic!("a panic must finish the URL");
        };
        let error = page.record.error.expect("a failure");
        assert_eq!(page.record.kind, OutcomeKind::Failed);
        assert_eq!(
            (error.kind, error.message.as_str()),
            (ErrorKind::Other, "internal: boom at 7")
        );
        assert!(error.is_internal());
        assert_eq!(page.record.depth, 2);
    }
}
