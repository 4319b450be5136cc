//! How the crawler, the scheduler and the workers of one run tell each other
//! what happened: a stop asked for, the grace period over, the frontier
//! changed, and the live counters the scheduler's end checks read.

use std::sync::Arc;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::crawl::progress::Progress;
use crate::crawl::steer::Steer;
use crate::crawl::stop_signal::StopSignal;

/// The stop signals and the live counters.
pub(crate) struct Signals {
    pub(crate) stop_signal: Arc<StopSignal>,
    /// Aborts in-flight fetches once the grace period is over.
    pub(crate) abort: CancellationToken,
    /// Woken when a lease completes or URLs are offered, so a waiting scheduler
    /// looks at the frontier again.
    pub(crate) changed: Notify,
    pub(crate) progress: Progress,
    /// Pause, resume and the live cap, read by the scheduler.
    pub(crate) steer: Steer,
}

impl Signals {
    /// The signals of one run: `stop_signal` is shared with the outputs' task and
    /// the crawler, `progress` with whoever reads the live counters, `steer` with whoever
    /// steers the crawl.
    pub(crate) fn new(stop_signal: Arc<StopSignal>, progress: Progress, steer: Steer) -> Signals {
        Signals {
            stop_signal,
            abort: CancellationToken::new(),
            changed: Notify::new(),
            progress,
            steer,
        }
    }
}
