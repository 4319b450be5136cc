//! One request of an item and the redirects it leads to: the host and
//! global slots, retries ([`fetch_with_retries`]), what the response means
//! for the item ([`Outcome`]), extraction, what a recipe reads from it, and
//! saving the body — each hop's [`Page`] sent to the collector with the
//! global slot its body counts against.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use reqwest::header::HeaderMap;
use tokio::sync::OwnedSemaphorePermit;
use url::Url;

use super::attempt::{Gates, fetch_with_retries};
use super::collector::Event;
use super::context::{Ctx, Finished};
use super::index::Known;
use super::read::{self, Read, Received, Wanted};
use super::summary::{ItemReport, Outcome};
use super::{revalidate, save};
use crate::base::outcome::{ErrorKind, FetchFailure, OutcomeKind, PageRecord};
use crate::base::urlnorm;
use crate::content::Document;
use crate::fetch::{decode, redirect};
use crate::output::Page;
use crate::parse::items::{ExtractFailure, Items, PageInput};

/// Fetches `url` (the input `origin` without credentials) and the redirects it
/// leads to, saving the final body to `target`; conditionally, when the fetch
/// index `known` the item. What a recipe `wanted` from a final 2xx response
/// is read before the body is saved.
pub(super) async fn follow(
    ctx: &Ctx,
    (url, origin): (Url, Url),
    (target, known): (Option<PathBuf>, Option<Known>),
    mut report: ItemReport,
    wanted: Wanted<'_>,
) -> Option<(Finished, Option<Read>)> {
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
                let mut read = None;
                // A 304 has no body to extract from.
                if matches!(report.outcome, Outcome::Ok { status } if status != 304) {
                    hop.page.items = extract(ctx, &hop, &current).await;
                    hop.page.content = content(ctx, &hop, &current).await;
                    if let Some(found) = &hop.page.items {
                        found.count_on(&mut hop.page.record);
                    }
                    if !wanted.is_nothing() {
                        let received = Received {
                            body: hop.body.clone(),
                            content_encoding: hop.content_encoding.clone(),
                            charset: hop.page.record.encoding.clone(),
                            headers: std::mem::take(&mut hop.headers),
                            fetched_at: hop.fetched_at,
                        };
                        let max = ctx.fetcher.config().max_body_size;
                        read = Some(read::read(&ctx.cpu, max, received, &current, wanted).await);
                    }
                }
                let save = judged.as_ref().is_none_or(|j| j.save);
                if let (Outcome::Ok { .. }, Some(path), true) = (&report.outcome, &target, save) {
                    match save_body(ctx, &mut hop, path.clone()).await {
                        Ok(()) => {
                            report.saved = Some(path.clone());
                            report.files += 1;
                        }
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
                return Some(((report, update), read));
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

/// A final 2xx HTML page as Markdown and text (decoded first), on the CPU
/// pool, when a sink reads it.
async fn content(ctx: &Ctx, hop: &Hop, url: &Url) -> Option<Arc<Document>> {
    let extractor = ctx.config.content.clone()?;
    let html = hop.page.record.content_type.as_deref();
    if !matches!(html, Some("text/html" | "application/xhtml+xml")) {
        return None;
    }
    let raw = hop.body.clone()?;
    let encoding = hop.content_encoding.clone();
    let max = ctx.fetcher.config().max_body_size;
    let charset = hop.page.record.encoding.clone();
    let url = url.clone();
    ctx.cpu
        .run(move || {
            // A body that cannot be decoded has no text to give.
            let body = decode::decode(encoding.as_deref(), &raw, max).ok()?;
            let (text, _, _) = crate::parse::links::decode_html(&body, charset.as_deref());
            Some(Arc::new(extractor.extract(&text, &url)))
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
    /// The response headers, kept when a recipe reads values from them.
    headers: HeaderMap,
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
            content: None,
            links: None,
            text: None,
        },
        fetched_at: started_at,
        body: None,
        content_encoding: None,
        headers: HeaderMap::new(),
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
            if ctx.config.recipe.is_some() {
                hop.headers = resp.headers.clone();
            }
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
