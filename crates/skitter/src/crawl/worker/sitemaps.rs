//! Sitemaps met during the crawl: a sitemap response is parsed (off the async
//! workers) and what it lists is queued — child sitemaps of an index within the
//! registry's limits, pages within the sitemap's directory unless robots.txt
//! named it — and the sitemaps robots.txt names are queued at the page's depth.
//! Every sitemap is queued as a [`RequestKind::Sitemap`] with its trust and
//! nesting, so that whichever process claims it (a resumed run, another worker
//! of a shared crawl) reads it as a sitemap.

use url::Url;

use super::offer::offer_links;
use crate::base::outcome::SkipReason;
use crate::crawl::admission::Admission;
use crate::crawl::ctx::Ctx;
use crate::fetch::{self, Response};
use crate::frontier::{Request, RequestKind};
use crate::parse::discovery::MAX_INDEX_ENTRIES;
use crate::parse::links::{Link, LinkKind};
use crate::parse::sitemap::{self, SitemapKind};

/// Parses a sitemap and queues what it lists: more sitemaps for an index, pages
/// otherwise (only at or below the sitemap's directory unless robots.txt named it).
/// The pages listed, when a sink reads a page's links (`Page::links`).
pub(super) async fn handle_sitemap(
    ctx: &Ctx,
    req: &Request,
    resp: &Response,
    trusted: bool,
) -> (usize, usize, Option<Vec<Link>>) {
    let Some(raw) = resp.body.clone() else {
        return (0, 0, None);
    };
    let encoding = resp.header("content-encoding").map(str::to_owned);
    let (max, cut) = (ctx.config.fetch.max_body_size, resp.truncated);
    let parsed = ctx
        .pipeline
        .cpu
        .run(move || {
            let body = fetch::decode::decode_prefix(encoding.as_deref(), &raw, max, cut)
                .map_or(raw.to_vec(), |d| d.body.into_owned());
            sitemap::parse_sitemap(&body)
        })
        .await;
    let sitemap = match parsed {
        Ok(s) => s,
        Err(e) => {
            tracing::debug!(url = %req.url, error = %e, "not a usable sitemap");
            return (0, 0, None);
        }
    };
    let targets = sitemap
        .urls
        .iter()
        .filter_map(|raw| req.url.join(raw.trim()).ok());
    if sitemap.kind == SitemapKind::Index {
        let children: Vec<Url> = targets.take(MAX_INDEX_ENTRIES).collect();
        let found = children.len();
        return (found, offer_child_sitemaps(ctx, req, children).await, None);
    }
    let links: Vec<Link> = targets
        .filter(|t| sitemap::sitemap_allows(&req.url, t, trusted))
        .map(|url| Link {
            raw: url.to_string(),
            url: Ok(url),
            kind: LinkKind::Anchor,
            element: "sitemap",
            attr: "loc",
            at: 0,
        })
        .collect();
    let listed = ctx.pipeline.keep_links.then(|| links.clone());
    // A sitemap has no text to compare: only chains already found to be
    // traps can stop its entries.
    let (found, new) = offer_links(ctx, req, links, None).await;
    (found, new, listed)
}

/// Queues the sitemaps an index lists: registered only once the gate admits
/// them, and only within the registry's nesting and count limits.
async fn offer_child_sitemaps(ctx: &Ctx, req: &Request, urls: Vec<Url>) -> usize {
    let mut requests = Vec::new();
    for url in urls {
        let reason = match ctx.guards.admit(Ok(url), req.depth) {
            Admission::Admit(url) => {
                match ctx.pipeline.sitemaps.register_child(&req.url, url.clone()) {
                    Some(kind) => {
                        requests.push(Request {
                            url,
                            depth: req.depth,
                            redirects_left: ctx.config.max_redirect,
                            parent: Some(req.url.clone()),
                            kind,
                        });
                        continue;
                    }
                    None => SkipReason::Limit,
                }
            }
            Admission::Skip(reason) => reason,
        };
        ctx.guards.link_skips.count(reason);
    }
    ctx.offer(requests).await
}

/// Queues sitemap URLs (already registered) at the page's own depth.
pub(super) async fn offer_sitemaps(ctx: &Ctx, req: &Request, urls: Vec<Url>) -> usize {
    let mut requests = Vec::new();
    for url in urls {
        match ctx.guards.admit(Ok(url), req.depth) {
            Admission::Admit(url) => requests.push(Request {
                url,
                depth: req.depth,
                redirects_left: ctx.config.max_redirect,
                parent: Some(req.url.clone()),
                kind: RequestKind::Sitemap {
                    trusted: true,
                    nesting: 0,
                },
            }),
            Admission::Skip(reason) => ctx.guards.link_skips.count(reason),
        }
    }
    ctx.offer(requests).await
}
