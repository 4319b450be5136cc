//! Group `fsync` of the outputs, for a frontier whose completions survive a
//! power cut.
//!
//! Such a frontier's commit can reach the disk at any moment after it is
//! written: its own syncer runs within 50 ms, a SQLite checkpoint syncs, and
//! the kernel writes dirty pages back when it likes. So the only order that
//! holds is to complete a page's lease after the bytes its outputs wrote are
//! synced, not merely before the commit's own sync. The sink task hands each
//! flushed group's [`Syncable`]s and acknowledgements to one blocking thread,
//! which syncs everything that queued up while it was busy in one pass (each
//! file once) and then acknowledges all of it: a page waits one or two disk
//! flushes, and the sink task writes on meanwhile.

use std::collections::HashSet;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::crawl::stop_signal::StopSignal;
use crate::output::Syncable;

/// Flushed groups waiting for the syncer at most; then the sink task waits.
const QUEUED_GROUPS: usize = 16;

/// A flushed group: what to sync, and whom to tell once it is.
struct Group {
    targets: Vec<Arc<dyn Syncable>>,
    acks: Vec<oneshot::Sender<()>>,
}

/// The blocking thread that syncs the outputs.
pub(crate) struct OutputSyncer {
    groups: mpsc::Sender<Group>,
    thread: JoinHandle<()>,
}

impl OutputSyncer {
    /// Starts the thread; a failed sync stops the crawl through `stop_signal`.
    pub(crate) fn start(stop_signal: Arc<StopSignal>) -> OutputSyncer {
        let (groups, rx) = mpsc::channel(QUEUED_GROUPS);
        let thread = tokio::task::spawn_blocking(move || run(rx, &stop_signal));
        OutputSyncer { groups, thread }
    }

    /// Syncs `targets`, then acknowledges `acks`; false once the syncer has
    /// stopped (a sync failed), when nothing will be acknowledged any more.
    pub(crate) async fn sync(
        &self,
        targets: Vec<Arc<dyn Syncable>>,
        acks: Vec<oneshot::Sender<()>>,
    ) -> bool {
        self.groups.send(Group { targets, acks }).await.is_ok()
    }

    /// Waits for the groups handed over so far to be synced.
    pub(crate) async fn finish(self) {
        drop(self.groups);
        let _ = self.thread.await;
    }
}

fn run(mut rx: mpsc::Receiver<Group>, stop_signal: &StopSignal) {
    while let Some(first) = rx.blocking_recv() {
        let mut groups = vec![first];
        while let Ok(more) = rx.try_recv() {
            groups.push(more);
        }
        let mut seen = HashSet::new();
        for target in groups.iter().flat_map(|g| &g.targets) {
            if !seen.insert(Arc::as_ptr(target).cast::<()>()) {
                continue;
            }
            if let Err(e) = target.sync() {
                // The waiting pages are never acknowledged: their leases stay
                // outstanding, so their URLs are still to do on resume.
                stop_signal.fail(format!("output: cannot sync {}: {e}", target.describe()));
                return;
            }
        }
        for ack in groups.into_iter().flat_map(|g| g.acks) {
            let _ = ack.send(());
        }
    }
}
