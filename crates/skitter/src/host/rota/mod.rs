//! The turn-taking of hosts that the in-memory and the on-disk frontiers
//! share: which host may start a request now, and when the next one will be
//! able to.
//!
//! Each host is in exactly one [`Place`]: idle (nothing queued, or not yet looked
//! at), ready (in a ring), timed (in the heap, waiting for its next allowed
//! start), or full (all its slots busy; it comes back when a lease completes).
//! Claiming is then O(log hosts) however many hosts are waiting. Hosts are named
//! by their index in the frontier's own host table.
//!
//! # Which ready host goes first
//!
//! What a request costs the crawler depends on the host's connections more
//! than on anything else: a host whose connection is open and idle costs one
//! request; a host with none costs a name lookup, a TCP (and TLS) handshake
//! and a pool slot too — about as much CPU again as the page. A plain
//! round-robin over every ready host gives each one request per turn of the
//! ring, so once a broad crawl has more ready hosts than the connection cap
//! (or than the pool keeps idle connections for), nearly every request opens
//! a new connection: at 30,000 hosts, 98 in 100 did, and the crawl ran at
//! half its speed. So ready hosts wait in three [`Ring`]s, served in order:
//!
//! 1. **Warm**: a host that started a request within [`LINGER`](super::ring::LINGER) and has fewer
//!    in flight now than it had at its busiest since — one of its connections
//!    is most likely idle in the pool.
//! 2. **Cold**: a host with nothing in flight and no recent start (its next
//!    request opens a connection), and a host whose session is spent (below).
//! 3. **Busy**: a host whose every recent connection is in use: another
//!    request to it would open one more connection to the same server, which
//!    a fresh host needs no more than it does, and which is the less polite of
//!    the two. Hosts are widened (up to `--per-host`) only when no other host
//!    is ready, as when a crawl has one site.
//!
//! The crawl never idles while any host may start: a ring is only passed over
//! for a better one. Fairness comes from a session budget, as Heritrix's: a
//! host taken from the cold ring may start [`SESSION_BUDGET`](super::ring::SESSION_BUDGET) requests, then
//! waits at the back of the cold ring like any other host, so a few big sites
//! cannot hold the crawl's tasks while thousands of others wait. With a
//! per-host `--delay` of [`LINGER`](super::ring::LINGER) or more every host is cold, and the order
//! is the plain round-robin.
//!
//! A host moves to a better ring when a request of its completes (busy to
//! warm); its entry in the old ring is left behind and skipped, since each
//! entry carries the ticket it was placed with. Rings are compacted when
//! stale entries outnumber live ones, so they stay within twice the hosts.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

use tokio::time::Instant;

use super::politeness::HostSlots;
use super::ring::{RINGS, Ring};

/// A ready host's entry: its ring, and a number no other entry has had, so an
/// entry left behind by a move (or by a forgotten host whose index was
/// reused) is known for stale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ticket {
    ring: Ring,
    number: u64,
}

/// Where one host stands in the [`Rota`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    Idle,
    Ready(Ticket),
    Timed,
    Full,
}

impl Place {
    pub(crate) fn is_ready(self) -> bool {
        matches!(self, Place::Ready(_))
    }
}

/// The ready rings and the timed heap.
#[derive(Debug, Default)]
pub(crate) struct Rota {
    rings: [VecDeque<(usize, u64)>; 3],
    /// Hosts whose place is a ticket of each ring (the rest of a ring's
    /// entries are stale).
    live: [usize; 3],
    tickets: u64,
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
        if matches!(place, Place::Ready(_) | Place::Timed) {
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
            self.enter(idx, slots.ring(now))
        } else {
            self.timed.push(Reverse((at, idx)));
            Place::Timed
        };
    }

    /// Moves a ready host to a better ring if its slots now say so (a request
    /// of its completed, so a busy host has an idle connection again).
    pub(crate) fn refresh(
        &mut self,
        idx: usize,
        place: &mut Place,
        slots: &HostSlots,
        now: Instant,
    ) {
        let Place::Ready(ticket) = *place else {
            return;
        };
        let ring = slots.ring(now);
        if ring < ticket.ring {
            self.live[ticket.ring as usize] -= 1;
            *place = self.enter(idx, ring);
        }
    }

    fn enter(&mut self, idx: usize, ring: Ring) -> Place {
        self.tickets += 1;
        let number = self.tickets;
        self.rings[ring as usize].push_back((idx, number));
        self.live[ring as usize] += 1;
        Place::Ready(Ticket { ring, number })
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

    /// Takes out the next ready host, best ring first, and which ring it was
    /// in; `place_of` tells each host's place, to skip stale entries. The
    /// caller marks it idle, checks it, and places it again; a host served
    /// from the cold ring starts a new session ([`HostSlots::begin_session`]).
    pub(crate) fn pop_ready(&mut self, place_of: impl Fn(usize) -> Place) -> Option<(usize, Ring)> {
        self.compact(&place_of);
        for ring in RINGS {
            while let Some((idx, number)) = self.rings[ring as usize].pop_front() {
                if place_of(idx) == Place::Ready(Ticket { ring, number }) {
                    self.live[ring as usize] -= 1;
                    return Some((idx, ring));
                }
            }
        }
        None
    }

    /// Drops the stale entries of a ring that has more of them than live ones
    /// (and more than a few): amortised O(1) per entry.
    fn compact(&mut self, place_of: &impl Fn(usize) -> Place) {
        for ring in RINGS {
            let entries = &mut self.rings[ring as usize];
            if entries.len() > 2 * self.live[ring as usize] + 64 {
                entries.retain(|&(idx, number)| {
                    place_of(idx) == Place::Ready(Ticket { ring, number })
                });
            }
        }
    }

    /// Each ring's entries and live hosts, for tests of its compaction.
    #[cfg(test)]
    pub(crate) fn entries(&self) -> [(usize, usize); 3] {
        RINGS.map(|ring| (self.rings[ring as usize].len(), self.live[ring as usize]))
    }

    /// How long until the first timed host may start, if any host is timed.
    pub(crate) fn next_wait(&self, now: Instant) -> Option<Duration> {
        let Reverse((at, _)) = self.timed.peek()?;
        Some(at.saturating_duration_since(now))
    }
}

#[cfg(test)]
mod tests;
