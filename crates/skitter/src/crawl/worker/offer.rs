//! The links a response leads to besides its body's: the page's links gated
//! and offered to the frontier, and a redirect's target.

use std::collections::{HashMap, HashSet};

use url::Url;

use super::YIELD_EVERY;
use crate::base::outcome::{OutcomeKind, PageRecord, SkipReason};
use crate::crawl::admission::Admission;
use crate::crawl::ctx::Ctx;
use crate::fetch::{Response, redirect};
use crate::frontier::{Request, RequestKind};
use crate::parse::links::Link;

/// Gates the page's links and offers the admitted ones; returns (distinct admitted
/// links, how many of them were new to the crawl). `fingerprint` is the page's
/// near-duplicate fingerprint, for the endless-pager trap rule.
pub(super) async fn offer_links(
    ctx: &Ctx,
    req: &Request,
    links: Vec<Link>,
    fingerprint: Option<u64>,
) -> (usize, usize) {
    let depth = req.depth + 1;
    let mut chains = ctx.guards.traps.page(&req.url, fingerprint);
    let mut admitted: Vec<Url> = Vec::with_capacity(links.len());
    let mut distinct: HashSet<Url> = HashSet::with_capacity(links.len());
    let firsts = first_occurrences(&links);
    let mut followed = vec![false; links.len()];
    for (i, link) in links.into_iter().enumerate() {
        if i % YIELD_EVERY == YIELD_EVERY - 1 {
            // A page of a million links must not hold this thread's timers and
            // sockets for the whole pass.
            tokio::task::yield_now().await;
        }
        // A repeat of a link already followed from this page would get the
        // same answers (admission and the chain check are idempotent for
        // one URL) and find its URL in `distinct`: nothing to do. Repeats of
        // skipped links are judged again, so every occurrence is counted.
        if followed[firsts[i]] {
            continue;
        }
        match ctx.guards.admit_link(link.url, depth) {
            Admission::Admit(url) => {
                if chains.check(&url).is_err() {
                    ctx.guards.link_skips.count(SkipReason::Trap);
                } else {
                    followed[i] = true;
                    if distinct.insert(url.clone()) {
                        admitted.push(url);
                    }
                }
            }
            Admission::Skip(reason) => ctx.guards.link_skips.count(reason),
        }
    }
    let found = admitted.len();
    let requests = admitted
        .into_iter()
        .map(|url| Request {
            url,
            depth,
            redirects_left: ctx.config.max_redirect,
            parent: Some(req.url.clone()),
            kind: RequestKind::Page,
        })
        .collect();
    (found, ctx.offer(requests).await)
}

/// For each link, the index of the first link of the page that resolved to
/// the same URL (its own index for a first, or an unresolvable link).
fn first_occurrences(links: &[Link]) -> Vec<usize> {
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(links.len());
    links
        .iter()
        .enumerate()
        .map(|(i, link)| match &link.url {
            Ok(url) => *first.entry(url.as_str()).or_insert(i),
            Err(_) => i,
        })
        .collect()
}

/// Records a redirect and offers its target (through the gate, with one hop
/// fewer left).
pub(super) async fn handle_redirect(
    ctx: &Ctx,
    req: &Request,
    resp: &Response,
    record: &mut PageRecord,
) {
    let target = match redirect::target(resp, &req.url) {
        Ok(t) => t,
        Err(failure) => {
            record.kind = OutcomeKind::HttpError;
            record.error = Some(failure);
            return;
        }
    };
    record.kind = OutcomeKind::Redirect;
    record.next_url = Some(target.clone());
    if req.redirects_left == 0 {
        record.error = Some(redirect::too_many(ctx.config.max_redirect));
        return;
    }
    record.num_urls = 1;
    match ctx.guards.admit(Ok(target), req.depth) {
        Admission::Admit(url) => {
            let next = Request {
                url,
                depth: req.depth,
                redirects_left: req.redirects_left - 1,
                parent: Some(req.url.clone()),
                // A sitemap that moved is still a sitemap.
                kind: req.kind,
            };
            record.num_new_urls = ctx.offer(vec![next]).await;
        }
        Admission::Skip(reason) => ctx.guards.link_skips.count(reason),
    }
}
