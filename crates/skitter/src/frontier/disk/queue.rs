//! One host's queue as the disk frontier sees it: a chunk being filled, sealed
//! chunks still in memory, sealed chunks only on disk, and a decoded window of
//! the next requests to hand out.
//!
//! Order is what keeps this simple: chunk ids grow in offer order, chunks only
//! ever leave memory oldest first (`kept` front to `on_disk`), and the window is
//! refilled from the oldest source that has anything — disk, then memory, then
//! the chunk being filled — so a host's requests come out FIFO whatever mix of
//! places they sit in.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crate::frontier::Request;
use crate::state::store::StoreError;
use crate::state::store::chunk::{Chunk, ChunkBuilder};

/// A decoded request waiting in the window.
pub(super) struct Entry {
    pub(super) chunk: i64,
    pub(super) fp: u128,
    pub(super) request: Request,
}

/// A chunk of a host that was loaded into its window: how many of its requests
/// are not completed yet, out of how many.
#[derive(Clone, Copy)]
pub(super) struct Live {
    pub(super) unfinished: u32,
    pub(super) total: u32,
}

#[derive(Default)]
pub(super) struct HostQueue {
    pub(super) window: VecDeque<Entry>,
    /// The chunk being filled; it exists only in memory until sealed.
    pub(super) open: ChunkBuilder,
    /// Sealed chunks not yet loaded, oldest first, with the batch that writes them.
    pub(super) kept: VecDeque<(Arc<Chunk>, u64)>,
    /// Sealed chunks older than `kept`, readable only from the database.
    pub(super) on_disk: u64,
    /// The newest chunk loaded into the window.
    pub(super) cursor: i64,
    /// Chunks loaded into the window that still have unfinished requests.
    pub(super) live: HashMap<i64, Live>,
}

impl HostQueue {
    /// Decodes `chunk` into the window.
    pub(super) fn load(&mut self, chunk: &Chunk) -> Result<(), StoreError> {
        let entries = chunk.decode()?;
        let total = entries.len() as u32;
        self.live.insert(
            chunk.id,
            Live {
                unfinished: total,
                total,
            },
        );
        self.cursor = self.cursor.max(chunk.id);
        self.window
            .extend(entries.into_iter().map(|(fp, request)| Entry {
                chunk: chunk.id,
                fp,
                request,
            }));
        Ok(())
    }

    /// Counts one request of `chunk` as completed; true when that was its last.
    pub(super) fn finish(&mut self, chunk: i64) -> Result<bool, StoreError> {
        let live = self.live.get_mut(&chunk).ok_or_else(|| {
            StoreError::Corrupt(format!("completed a request of unknown chunk {chunk}"))
        })?;
        live.unfinished = live.unfinished.saturating_sub(1);
        if live.unfinished == 0 {
            self.live.remove(&chunk);
            return Ok(true);
        }
        Ok(false)
    }

    /// Forgets the oldest kept chunk when it is `id`, leaving it to be read back
    /// from disk; answers its size, or `None` when it was already loaded.
    pub(super) fn evict(&mut self, id: i64) -> Option<usize> {
        match self.kept.front() {
            Some((chunk, _)) if chunk.id == id => {
                let bytes = chunk.bytes();
                self.kept.pop_front();
                self.on_disk += 1;
                Some(bytes)
            }
            _ => None,
        }
    }

    /// Chunks loaded but only partly completed, each with the fingerprints still
    /// unfinished (`leased` adds those handed out and not completed).
    pub(super) fn partial(&self, leased: &[(i64, u128)]) -> HashMap<i64, Vec<u128>> {
        let mut out: HashMap<i64, Vec<u128>> = HashMap::new();
        for (id, live) in &self.live {
            if live.unfinished < live.total {
                out.insert(*id, Vec::new());
            }
        }
        let window = self.window.iter().map(|e| (e.chunk, e.fp));
        for (chunk, fp) in window.chain(leased.iter().copied()) {
            if let Some(fps) = out.get_mut(&chunk) {
                fps.push(fp);
            }
        }
        out
    }
}
