//! The round-robin of hosts that the in-memory and the on-disk frontiers share:
//! which host may start a request now, and when the next one will be able to.
//!
//! Each host is in exactly one [`Place`]: idle (nothing queued, or not yet looked
//! at), ready (in the ring), timed (in the heap, waiting for its next allowed
//! start), or full (all its slots busy; it comes back when a lease completes).
//! Claiming is then O(log hosts) however many hosts are waiting. Hosts are named
//! by their index in the frontier's own host table.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

use tokio::time::Instant;

use rand::RngExt;

use super::politeness::HostSlots;

/// Where one host stands in the [`Rota`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    Idle,
    Ready,
    Timed,
    Full,
}

/// The ready ring and the timed heap.
#[derive(Debug, Default)]
pub(crate) struct Rota {
    ready: VecDeque<usize>,
    timed: BinaryHeap<Reverse<(Instant, usize)>>,
}

impl Rota {
    /// Puts host `idx` where its work and slots say it belongs: `work_at` is when
    /// it has something to start (now for queued URLs, later for a retry that is
    /// not due yet), `None` when it has nothing.
    pub(crate) fn place(
        &mut self,
        idx: usize,
        place: &mut Place,
        work_at: Option<Instant>,
        slots: &HostSlots,
        now: Instant,
    ) {
        if matches!(place, Place::Ready | Place::Timed) {
            return; // Already scheduled; it is re-checked when taken out.
        }
        let Some(work_at) = work_at else {
            *place = Place::Idle;
            return;
        };
        let at = match slots.ready_at(now) {
            Err(None) => {
                *place = Place::Full;
                return;
            }
            Ok(()) => work_at,
            Err(Some(at)) => at.max(work_at),
        };
        *place = if at <= now {
            self.ready.push_back(idx);
            Place::Ready
        } else {
            self.timed.push(Reverse((at, idx)));
            Place::Timed
        };
    }

    /// Takes out a timed host whose wait is over; the caller marks it idle and
    /// places it again.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<usize> {
        let Reverse((at, _)) = self.timed.peek()?;
        if *at > now {
            return None;
        }
        self.timed.pop().map(|Reverse((_, idx))| idx)
    }

    /// Takes out the next ready host; the caller marks it idle, checks it, and
    /// places it again.
    pub(crate) fn pop_ready(&mut self) -> Option<usize> {
        self.ready.pop_front()
    }

    /// How long until the first timed host may start, if any host is timed.
    pub(crate) fn next_wait(&self, now: Instant) -> Option<Duration> {
        let Reverse((at, _)) = self.timed.peek()?;
        Some(at.saturating_duration_since(now))
    }
}

/// A uniformly random duration in `0..=max`, for politeness and retry jitter.
pub(crate) fn random_up_to(max: Duration) -> Duration {
    if max.is_zero() {
        return Duration::ZERO;
    }
    let nanos = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(rand::rng().random_range(0..=nanos))
}
