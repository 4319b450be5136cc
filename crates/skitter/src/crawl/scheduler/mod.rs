//! The scheduler: claims work from the frontier under the global `max_tasks` cap
//! and runs each claim as its own task, until the frontier is exhausted or the
//! crawl is told to stop.
//!
//! Termination is "nothing queued and nothing in flight", which the frontier
//! reports as [`Claim::Exhausted`]. The per-host limits live in the frontier, so a
//! host that is busy or waiting never blocks the claim of another host's URL.

use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::task::TaskTracker;

use crate::crawl::ctx::{Ctx, Signals};
use crate::crawl::worker;
use crate::frontier::Claim;
use crate::output::report::{Limit, StopReason};

/// Runs the crawl loop; returns why it stopped early, or `None` when it completed.
pub(crate) async fn run(ctx: Arc<Ctx>) -> Option<StopReason> {
    let tracker = TaskTracker::new();
    let slots = Arc::new(Semaphore::new(ctx.config.max_tasks));
    let mut cap = Cap {
        slots: slots.clone(),
        current: ctx.config.max_tasks,
        debt: 0,
    };
    let mut steer = ctx.signals.steer.watch();
    // Deadlines are on tokio's clock, the one the crawl's waits sleep on: a
    // std deadline is off by however far the two drift apart, which under a
    // paused clock is every jump (a grace period could be over as it began).
    let deadline = ctx.config.limits.max_time.map(|d| Instant::now() + d);
    let stop = loop {
        let state = *steer.borrow_and_update();
        cap.set(state.max_tasks);
        if state.paused {
            // Nothing is claimed: the frontier keeps every URL where it is.
            tokio::select! {
                biased;
                _ = ctx.signals.stop_signal.stopped() => break Some(ctx.signals.stop_signal.reason()),
                _ = passes(deadline) => break Some(StopReason::Limit(Limit::MaxTime)),
                _ = steer.changed() => {}
            }
            continue;
        }
        let permit = tokio::select! {
            biased;
            _ = ctx.signals.stop_signal.stopped() => break Some(ctx.signals.stop_signal.reason()),
            _ = passes(deadline) => break Some(StopReason::Limit(Limit::MaxTime)),
            // A pause or a new cap is seen at once, not after the next permit.
            _ = steer.changed() => continue,
            permit = slots.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
        };
        if cap.debt > 0 {
            // A lowered cap takes back the permits of fetches that ended.
            permit.forget();
            cap.debt -= 1;
            continue;
        }
        if !ctx.guards.budget.available() {
            drop(permit);
            // Only a fetch that has not ended can hand budget back; a page past
            // its fetch and waiting on the outputs cannot.
            if tracker.is_empty() || ctx.signals.progress.in_flight() == 0 {
                break Some(StopReason::Limit(Limit::MaxPages));
            }
            // In-flight fetches may still hand budget back (robots, quota skips).
            tokio::select! {
                _ = ctx.signals.stop_signal.stopped() => {}
                _ = ctx.signals.changed.notified() => {}
            }
            continue;
        }
        let claim = match ctx.frontier.claim().await {
            Ok(claim) => claim,
            Err(e) => {
                ctx.signals.stop_signal.fail(format!("frontier: {e}"));
                continue;
            }
        };
        match claim {
            Claim::Ready(lease) => {
                ctx.guards.budget.take();
                // Counted here, not when the task first runs, so a fetch is
                // never both spawned and invisible to the max-pages check.
                ctx.signals.progress.started();
                tracker.spawn(worker::run(ctx.clone(), lease, permit));
            }
            Claim::Wait(wait) => {
                drop(permit);
                if ctx.signals.progress.in_flight() == 0 {
                    // Only robots.txt retries left? Then say so (once).
                    ctx.guards.stall.idle(Instant::now(), wait);
                }
                let sleep = async {
                    match wait {
                        Some(d) => tokio::time::sleep(d).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    _ = ctx.signals.stop_signal.stopped() => {}
                    _ = ctx.signals.changed.notified() => {}
                    _ = passes(deadline) => {}
                    _ = sleep => {}
                }
            }
            Claim::Exhausted => break None,
        }
    };
    tracker.close();
    let Some(reason) = stop else {
        tracker.wait().await;
        return None;
    };
    if reason == StopReason::Limit(Limit::MaxPages) {
        // The pages the budget allowed are fetched to the end; only the
        // outputs they wait on are held to the grace period.
        fetches_ended(&ctx.signals).await;
    }
    // After Ctrl-C fetches get three quarters of the grace period, so the
    // outputs have the rest to write what they took and the crawl still ends
    // within one grace period of the signal.
    let fetch_grace = match reason {
        StopReason::Interrupted => ctx.config.grace * 3 / 4,
        _ => ctx.config.grace,
    };
    let grace_end = Instant::now() + fetch_grace;
    // Let in-flight work finish within the grace period, then abort it: fetches,
    // and deliveries to an output that does not keep up.
    tokio::select! {
        _ = tracker.wait() => {}
        _ = tokio::time::sleep_until(grace_end) => {
            ctx.signals.abort.cancel();
            tracker.wait().await;
        }
    }
    Some(reason)
}

/// The global cap, changed live through [`crate::crawl::steer::Steer`]: permits
/// added when it rises; when it falls, the free ones forgotten at once and
/// the rest (`debt`) as the fetches holding them end.
struct Cap {
    slots: Arc<Semaphore>,
    current: usize,
    debt: usize,
}

impl Cap {
    fn set(&mut self, target: usize) {
        if target > self.current {
            let up = target - self.current;
            let repaid = up.min(self.debt);
            self.debt -= repaid;
            self.slots.add_permits(up - repaid);
        } else if target < self.current {
            let down = self.current - target;
            let taken = self.slots.forget_permits(down);
            self.debt += down - taken;
        }
        self.current = target;
    }
}

/// Waits until no task is fetching (each ends by its timeouts).
async fn fetches_ended(signals: &Signals) {
    while signals.progress.in_flight() > 0 {
        // Workers notify after each fetch; a notification between the check
        // and this wait is kept, so none is missed.
        signals.changed.notified().await;
    }
}

/// Completes when the deadline passes; never without one.
async fn passes(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests;
