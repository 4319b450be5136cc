//! A fetched HTML page rendered in the browser, when the crawl asks for it:
//! the decision (`--render`), the render itself, and the browser's requests
//! fetched the crawl's way ([`CrawlFetch`]: scope, robots.txt, then the
//! request path of the pages' own fetches, `get`, with its per-host
//! politeness and the fetcher's address policy).
//!
//! The worker calls one thing here, [`page`], once an HTML body is parsed:
//! the `auto` rules ran during the parse (`BodyJob::judge`), and what they
//! said decides here, with the mode, whether the page is rendered.
//!
//! The rendered page is a page: its DOM's links and the navigations its
//! scripts attempted join the plain fetch's links, and its rendered HTML and
//! the browser's exchanges go to the outputs with the page. A page rendered
//! only for its pictures (`--screenshots` without `--render`) keeps the plain
//! fetch's links and HTML; its pictures and the browser's exchanges go to the
//! outputs.

use bytes::Bytes;
use url::Url;

use super::get::get;
use crate::base::outcome::{ErrorKind, FetchFailure, OutcomeKind, PageRecord, RenderReason};
use crate::base::urlnorm;
use crate::crawl::ctx::Ctx;
use crate::fetch::{Keep, Response, decode};
use crate::output::{RenderedPage, Screenshot};
use crate::parse::links::{Link, LinkKind};
use crate::render::{
    Prefetched, Refusal, RenderMode, Screenshots, SubFetch, SubRequest, SubResponse,
};

/// The render step of an HTML page, after its body (`body`, decoded) was
/// parsed: renders it under `--render always`, or under `auto` when the rules
/// gave a reason (`hint`). Adds the rendered links to `links` and returns
/// what the outputs keep of it. A render that fails all its tries makes the
/// page failed (the plain fetch's links are still offered).
pub(super) async fn page(
    ctx: &Ctx,
    url: &Url,
    resp: &Response,
    body: &Bytes,
    hint: Option<RenderReason>,
    record: &mut PageRecord,
    links: &mut Vec<Link>,
) -> Option<Box<RenderedPage>> {
    let renderer = ctx.pipeline.renderer.as_ref()?;
    let settings = renderer.settings();
    let reason = match settings.mode {
        RenderMode::Never => None,
        RenderMode::Auto => hint,
        RenderMode::Always => Some(RenderReason::Always),
    };
    // `--screenshots` renders every HTML page, the ones `--render` would not
    // only for their pictures.
    let reason = reason.or(settings.screenshots.then_some(RenderReason::Screenshot))?;
    let picture_only = reason == RenderReason::Screenshot;
    record.rendered = Some(reason);
    let page = Prefetched {
        url: url.clone(),
        status: resp.status,
        headers: clean_headers(resp),
        body: body.clone(),
    };
    match renderer.render(&page, &CrawlFetch { ctx }).await {
        Ok(done) if picture_only => Some(Box::new(RenderedPage {
            html: None,
            exchanges: done.exchanges,
            screenshots: done.screenshots.map(pictures).unwrap_or_default(),
        })),
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
                    at: 0,
                });
            }
            Some(Box::new(RenderedPage {
                html: Some(done.html),
                exchanges: done.exchanges,
                screenshots: done.screenshots.map(pictures).unwrap_or_default(),
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

/// The pictures of a render as the outputs store them: the names (URI
/// schemes) are Browsertrix's.
fn pictures(shots: Screenshots) -> Vec<Screenshot> {
    vec![
        Screenshot {
            kind: "fullPage",
            mime: "image/png",
            data: shots.page_png,
        },
        Screenshot {
            kind: "thumbnail",
            mime: "image/jpeg",
            data: shots.thumbnail_jpeg,
        },
    ]
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
        let result = get(ctx, &url, keep, None).await;
        let mut resp = result.map_err(|f| match f.kind {
            ErrorKind::Blocked => Refusal::Address,
            _ => Refusal::Failed(f.message),
        })?;
        let raw = resp.body.take().unwrap_or_default();
        let coding = resp.header("content-encoding").map(str::to_owned);
        let (max, cut) = (ctx.config.fetch.max_body_size, resp.truncated);
        // Decoding is CPU work a hostile server can make costly (stacked
        // codings up to the cap): on the CPU pool, not on the async workers.
        let body = ctx
            .pipeline
            .cpu
            .run(move || {
                decode::decode_prefix(coding.as_deref(), &raw, max, cut)
                    .map(|d| Bytes::from(d.body.into_owned()))
                    .map_err(|e| e.to_string())
            })
            .await
            .map_err(Refusal::Failed)?;
        Ok(SubResponse {
            status: resp.status,
            headers: clean_headers(&resp),
            body,
            exchange: resp.exchange.take(),
        })
    }
}
