//! One request the crawl sends, for a page or for the browser rendering one.
//!
//! When the crawl renders, both kinds take a slot of one per-host gate with
//! the crawl's rules (`--per-host`, `--delay`, `Crawl-delay`,
//! `429`/`Retry-After`), so the browser's requests and the pages around them
//! stay within the host's cap and keep its gap between them. A slot is held
//! for one HTTP exchange only (a render holds none while it waits for the
//! browser), so no render can starve a page. Without rendering the
//! frontier's slots suffice and none is taken here.

use std::time::Duration;

use url::Url;

use crate::base::outcome::FetchFailure;
use crate::base::request::Validators;
use crate::crawl::ctx::Ctx;
use crate::fetch::{Keep, Response, retry};
use crate::host::HostKey;
use crate::host::slots::HostSlot;

/// Fetches `url`, conditional on `validators` if given, within a slot of
/// the shared per-host gate under `--render`.
pub(super) async fn get(
    ctx: &Ctx,
    url: &Url,
    keep: Keep,
    validators: Option<&Validators>,
) -> Result<Response, FetchFailure> {
    let fetcher = &ctx.pipeline.fetcher;
    // Boxed, and only under `--render`: the wait for a slot (and for the
    // host's robots.txt) need not take room in every request's future.
    let slot = match ctx.pipeline.renderer {
        Some(_) => Some(Box::pin(host_slot(ctx, url)).await),
        None => None,
    };
    let result = match validators {
        Some(validators) => fetcher.get_if(url, keep, validators).await,
        None => fetcher.get(url, keep).await,
    };
    if let Some(slot) = slot {
        release(ctx, slot, &result);
    }
    result
}

/// Under `--render`, a slot for one request to `url`'s host.
async fn host_slot(ctx: &Ctx, url: &Url) -> HostSlot {
    let floor = crawl_delay(ctx, url).await;
    ctx.pipeline
        .render_hosts
        .acquire_spaced(HostKey::of(url), floor)
        .await
}

/// Hands a slot back with what the answer says about the server.
fn release(ctx: &Ctx, slot: HostSlot, result: &Result<Response, FetchFailure>) {
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
