//! The last step of a URL's pipeline: its finished page goes to the outputs and
//! its lease back to the frontier, in the order that makes a crash lose nothing
//! (see [`crate::crawl::handoff`] for the order and why).

use tokio::sync::oneshot;

use crate::base::outcome::PageRecord;
use crate::crawl::ctx::Ctx;
use crate::crawl::handoff::{Handoff, ToSinks};
use crate::frontier::Lease;
use crate::host::HostFeedback;
use crate::output::Page;
use crate::state::recrawl::Visit;

/// Delivers a finished page and completes its lease, in crash-safe order.
pub(crate) async fn deliver(
    ctx: &Ctx,
    lease: Lease,
    feedback: HostFeedback,
    page: Page,
    visit: Option<Box<Visit>>,
) {
    let visit = visit.as_deref();
    let pages = &ctx.outputs.pages;
    if !ctx.outputs.first {
        complete(ctx, lease, feedback, &page.record, visit).await;
        // The sink task only ends early after a fatal error, which already stopped the crawl.
        let _ = pages
            .send(ToSinks::Page(Handoff {
                page,
                written: None,
            }))
            .await;
        return;
    }
    let record = page.record.clone();
    let (tx, rx) = oneshot::channel();
    let handoff = Handoff {
        page,
        written: Some(tx),
    };
    if pages.send(ToSinks::Page(handoff)).await.is_err() || rx.await.is_err() {
        // An output failed (the crawl is stopping): leave the lease outstanding,
        // so the URL is still to do when the crawl resumes.
        return;
    }
    complete(ctx, lease, feedback, &record, visit).await;
}

async fn complete(
    ctx: &Ctx,
    lease: Lease,
    feedback: HostFeedback,
    record: &PageRecord,
    visit: Option<&Visit>,
) {
    let host = crate::host::HostKey::of(&lease.request.url);
    match ctx
        .frontier
        .complete_visit(lease, feedback, record, visit)
        .await
    {
        Ok(throttle) => ctx.throttled(&host, throttle).await,
        Err(e) => ctx.signals.stop_signal.fail(format!("frontier: {e}")),
    }
    ctx.signals.changed.notify_one();
}
