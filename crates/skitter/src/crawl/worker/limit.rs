//! What may stop a claimed URL before its request, beyond robots.txt: the
//! quarantine of a URL whose leases were lost too often, and the per-host
//! page quota (`max_per_host`), crawl-wide when the frontier keeps a shared
//! count (Redis), else this run's own.

use crate::base::outcome::{ErrorKind, FetchFailure};
use crate::crawl::ctx::Ctx;
use crate::fetch::retry;
use crate::frontier::Lease;
use crate::host::HostKey;

/// Why a claimed URL is not fetched again, if it is not: its lease was lost
/// `quarantine_after` times (each time the worker holding it died or stalled,
/// so fetching it again would likely bring down another), or a lost lease
/// took its last try (a loss counts as a failed try).
pub(super) fn quarantine(policy: &retry::RetryPolicy, lease: &Lease) -> Option<FetchFailure> {
    let lost = lease.lost;
    let message = if lost >= policy.quarantine_after.max(1) {
        format!(
            "quarantined: its lease was lost {lost} times (the worker handling it \
             died, was killed or stalled); not fetched again"
        )
    } else if lost > 0 && lease.failed_tries() >= policy.max_tries {
        format!(
            "quarantined: its {} tries are used up, the last lost with its worker",
            lease.failed_tries()
        )
    } else {
        return None;
    };
    Some(FetchFailure {
        kind: ErrorKind::Quarantined,
        message,
    })
}

/// Takes one fetch of `host`'s quota; false when it is used up. The frontier's
/// shared count when it keeps one (atomic over all workers), else the run's.
/// A frontier that fails stops the crawl, and the URL is not fetched.
pub(super) async fn take_quota(ctx: &Ctx, host: &HostKey) -> bool {
    let Some(max) = ctx.config.limits.max_per_host else {
        return true;
    };
    match ctx.frontier.take_host_quota(host, max).await {
        Ok(Some(taken)) => taken,
        Ok(None) => ctx.guards.quota.try_take(host),
        Err(e) => {
            ctx.signals.stop_signal.fail(format!("frontier: {e}"));
            false
        }
    }
}
