//! How the crawler, the scheduler and the workers of one run tell each other
//! what happened: a stop asked for, the grace period over, the frontier
//! changed, and the live counters the scheduler's end checks read.

use std::sync::Arc;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::crawl::halt::Halt;
use crate::crawl::progress::Progress;

/// The stop signals and the live counters.
pub(crate) struct Signals {
    pub(crate) halt: Arc<Halt>,
    /// Aborts in-flight fetches once the grace period is over.
    pub(crate) hard_stop: CancellationToken,
    /// Woken when a lease completes or URLs are offered, so a waiting scheduler
    /// looks at the frontier again.
    pub(crate) changed: Notify,
    pub(crate) progress: Progress,
}

impl Signals {
    /// The signals of one run: `halt` is shared with the outputs' task and
    /// the crawler, `progress` with whoever reads the live counters.
    pub(crate) fn new(halt: Arc<Halt>, progress: Progress) -> Signals {
        Signals {
            halt,
            hard_stop: CancellationToken::new(),
            changed: Notify::new(),
            progress,
        }
    }
}
