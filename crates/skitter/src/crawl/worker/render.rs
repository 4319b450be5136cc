//! A fetched HTML page rendered in the browser, when the crawl asks for it:
//! the decision (`--render`), the render itself, and the browser's requests
//! fetched the crawl's way ([`CrawlFetch`]: scope, robots.txt, per-host
//! politeness, then the fetcher, whose address policy applies as to any
//! request).
//!
//! Politeness: when the crawl renders, every request it sends to a host —
//! its pages' fetches ([`host_slot`]) and the browser's requests alike — takes
//! a slot of one per-host gate with the crawl's rules (`--per-host`,
//! `--delay`, `Crawl-delay`, `429`/`Retry-After`), so the browser's requests
//! and the pages around them stay within the host's cap and keep its gap
//! between them. A slot is held for one HTTP exchange only (a render holds
//! none while it waits for the browser), so no render can starve a page.
//!
//! The rendered page is a page: its DOM's links and the navigations its
//! scripts attempted join the plain fetch's links, and its rendered HTML and
//! the browser's exchanges go to the outputs with the page.

use std::time::Duration;

use bytes::Bytes;
use url::Url;

use crate::base::outcome::{ErrorKind, FetchFailure, OutcomeKind, PageRecord, RenderReason};
use crate::base::urlnorm;
use crate::crawl::ctx::Ctx;
use crate::fetch::{Keep, Response, decode, retry};
use crate::host::HostKey;
use crate::host::slots::HostSlot;
use crate::output::RenderedPage;
use crate::parse::links::{Link, LinkKind};
use crate::render::{Prefetched, Refusal, RenderMode, SubFetch, SubRequest, SubResponse};

/// Whether this crawl applies the `auto` rules to HTML bodies.
pub(super) fn judging(ctx: &Ctx) -> bool {
    mode(ctx) == RenderMode::Auto
}

fn mode(ctx: &Ctx) -> RenderMode {
    ctx.pipeline
        .renderer
        .as_ref()
        .map_or(RenderMode::Never, |r| r.settings().mode)
}

/// Why this HTML page is rendered, given what the `auto` rules said of it.
pub(super) fn reason(ctx: &Ctx, hint: Option<RenderReason>) -> Option<RenderReason> {
    match mode(ctx) {
        RenderMode::Never => None,
        RenderMode::Auto => hint,
        RenderMode::Always => Some(RenderReason::Always),
    }
}

/// Renders the page; adds the rendered links to `links` and returns what the
/// outputs keep of it. A render that fails all its tries makes the page failed
/// (the plain fetch's links are still offered).
pub(super) async fn render(
    ctx: &Ctx,
    url: &Url,
    resp: &Response,
    body: Bytes,
    reason: RenderReason,
    record: &mut PageRecord,
    links: &mut Vec<Link>,
) -> Option<Box<RenderedPage>> {
    let renderer = ctx.pipeline.renderer.as_ref()?;
    record.rendered = Some(reason);
    let page = Prefetched {
        url: url.clone(),
        status: resp.status,
        headers: clean_headers(resp),
        body,
    };
    match renderer.render(&page, &CrawlFetch { ctx }).await {
        Ok(done) => {
            let found = done.links.iter().map(|h| (h, LinkKind::Anchor, "a"));
            let navs = done
                .navigations
                .iter()
                .map(|h| (h, LinkKind::Navigation, "script"));
            for (href, kind, element) in found.chain(navs) {
                links.push(Link {
                    raw: href.clone(),
                    url: url.join(href).map_err(|e| e.to_string()),
                    kind,
                    element,
                    attr: "href",
                });
            }
            Some(Box::new(RenderedPage {
                html: done.html,
                exchanges: done.exchanges,
            }))
        }
        Err(e) => {
            tracing::warn!(%url, error = %e, "render failed");
            record.kind = OutcomeKind::Failed;
            record.error = Some(FetchFailure {
                kind: ErrorKind::Other,
                message: format!("render: {e}"),
            });
            None
        }
    }
}

/// A response's headers for the browser: the body it gets is decoded and
/// whole, so codings and lengths no longer apply.
fn clean_headers(resp: &Response) -> Vec<(String, String)> {
    resp.headers
        .iter()
        .filter(|(name, _)| {
            !matches!(
                name.as_str(),
                "content-encoding" | "content-length" | "transfer-encoding" | "connection"
            )
        })
        .filter_map(|(name, value)| Some((name.to_string(), value.to_str().ok()?.to_string())))
        .collect()
}

/// Under `--render`, a slot of the per-host gate shared by the crawl's pages
/// and the browser's requests, for one request to `url`'s host (none when
/// the crawl does not render: the frontier's slots suffice).
pub(super) async fn host_slot(ctx: &Ctx, url: &Url) -> Option<HostSlot> {
    ctx.pipeline.renderer.as_ref()?;
    let floor = crawl_delay(ctx, url).await;
    Some(
        ctx.pipeline
            .render_hosts
            .acquire_spaced(HostKey::of(url), floor)
            .await,
    )
}

/// Hands a slot back with what the answer says about the server.
pub(super) fn release(ctx: &Ctx, slot: HostSlot, result: &Result<Response, FetchFailure>) {
    let (_, feedback) = retry::judge(&ctx.config.retry, retry::Tries::default(), result);
    slot.finish(feedback);
}

/// The host's robots `Crawl-delay` (capped as the crawl caps it), or zero.
async fn crawl_delay(ctx: &Ctx, url: &Url) -> Duration {
    let Some(robots) = &ctx.pipeline.robots else {
        return Duration::ZERO;
    };
    let rules = robots.rules_for(url).await;
    rules
        .robots
        .crawl_delay(robots.token())
        .map_or(Duration::ZERO, |d| d.min(ctx.config.max_crawl_delay))
}

/// The browser's requests, fetched like the crawl's own.
struct CrawlFetch<'a> {
    ctx: &'a Ctx,
}

impl SubFetch for CrawlFetch<'_> {
    async fn fetch(&self, req: SubRequest) -> Result<SubResponse, Refusal> {
        let ctx = self.ctx;
        let url = req.url;
        let scope = &ctx.guards.gate.scope;
        if !urlnorm::is_crawlable_scheme(&url) || !scope.allows(&urlnorm::normalize(url.clone())) {
            return Err(Refusal::Scope);
        }
        if let Some(robots) = &ctx.pipeline.robots {
            let rules = robots.rules_for(&url).await;
            if let Some(failure) = rules.unreachable() {
                return Err(match failure.kind {
                    ErrorKind::Blocked => Refusal::Address,
                    _ => Refusal::Failed(failure.message.clone()),
                });
            }
            let unavailable = rules.source == crate::robots::RobotsSource::Unavailable
                || rules.deferral(tokio::time::Instant::now()).is_some();
            if unavailable || !rules.robots.allowed(robots.token(), &url) {
                return Err(Refusal::Robots);
            }
        }
        let keep = match ctx.pipeline.keep {
            Keep::Everything => Keep::Everything,
            _ => Keep::Body,
        };
        let slot = host_slot(ctx, &url).await;
        let result = ctx.pipeline.fetcher.get(&url, keep).await;
        if let Some(slot) = slot {
            release(ctx, slot, &result);
        }
        let mut resp = result.map_err(|f| match f.kind {
            ErrorKind::Blocked => Refusal::Address,
            _ => Refusal::Failed(f.message),
        })?;
        let raw = resp.body.take().unwrap_or_default();
        let body = decode::decode_prefix(
            resp.header("content-encoding"),
            &raw,
            ctx.config.fetch.max_body_size,
            resp.truncated,
        )
        .map(|d| Bytes::from(d.body.into_owned()))
        .map_err(|e| Refusal::Failed(e.to_string()))?;
        Ok(SubResponse {
            status: resp.status,
            headers: clean_headers(&resp),
            body,
            exchange: resp.exchange.take(),
        })
    }
}
