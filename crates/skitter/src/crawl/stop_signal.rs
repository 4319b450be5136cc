//! Why and when a crawl stops early: set once, by whoever notices first (a
//! signal, a limit, a failed output or frontier), read by everyone else.
//!
//! One word per meaning across the crate: a *stop* is this graceful end (no
//! new work, in-flight work gets the grace period, outputs complete; its
//! reason is a [`StopReason`]); an *abort* is what follows when the grace
//! period is over (in-flight fetches are dropped; `Signals::abort`, and the
//! bulk runner's token of the same name).

use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

use crate::output::report::StopReason;

/// Why the crawl must stop early, set once by whoever notices first.
#[derive(Debug, Default)]
pub(crate) struct StopSignal {
    token: CancellationToken,
    reason: Mutex<Option<StopReason>>,
    /// When the stop was first asked for, so an interrupted crawl ends within
    /// its grace period counted from the signal.
    at: Mutex<Option<tokio::time::Instant>>,
}

impl StopSignal {
    /// Stops the crawl because an output's reader went away (not an error).
    pub(crate) fn reader_gone(&self, what: String) {
        self.set(StopReason::OutputClosed(what));
    }

    /// Stops the crawl because something it depends on failed.
    pub(crate) fn fail(&self, message: String) {
        self.set(StopReason::Fatal(message));
    }

    pub(crate) fn set(&self, reason: StopReason) {
        let mut slot = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert(reason);
        drop(slot);
        self.at
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(tokio::time::Instant::now);
        self.token.cancel();
    }

    /// How long ago the stop was asked for (zero if it was not).
    pub(crate) fn since(&self) -> std::time::Duration {
        let at = *self.at.lock().unwrap_or_else(|e| e.into_inner());
        at.map_or(std::time::Duration::ZERO, |t| t.elapsed())
    }

    pub(crate) fn is_set(&self) -> bool {
        self.token.is_cancelled()
    }

    pub(crate) async fn stopped(&self) {
        self.token.cancelled().await
    }

    pub(crate) fn reason(&self) -> StopReason {
        let slot = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        slot.clone().unwrap_or(StopReason::Interrupted)
    }
}
