//! Requests handed back for another attempt (`Frontier::retry`), one queue per
//! host, ordered by when each may go again. The memory and disk frontiers keep
//! one per host and offer a due retry before the host's new work, so a retried
//! URL takes its host's slot and gap like any other request.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use tokio::time::Instant;

/// A host's waiting retries.
#[derive(Debug)]
pub(crate) struct RetryQueue<T> {
    heap: BinaryHeap<Reverse<Delayed<T>>>,
    seq: u64,
}

impl<T> Default for RetryQueue<T> {
    fn default() -> Self {
        RetryQueue {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
}

#[derive(Debug)]
struct Delayed<T> {
    due: Instant,
    /// Ties go first-in, first-out.
    seq: u64,
    item: T,
}

impl<T> PartialEq for Delayed<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.due, self.seq) == (other.due, other.seq)
    }
}
impl<T> Eq for Delayed<T> {}
impl<T> PartialOrd for Delayed<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Delayed<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.due, self.seq).cmp(&(other.due, other.seq))
    }
}

impl<T> RetryQueue<T> {
    /// Queues `item` to go again at `due`.
    pub(crate) fn push(&mut self, due: Instant, item: T) {
        self.seq += 1;
        self.heap.push(Reverse(Delayed {
            due,
            seq: self.seq,
            item,
        }));
    }

    /// When the first may go.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse(d)| d.due)
    }

    /// Takes the first one whose time has come.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<T> {
        if self.next_due()? > now {
            return None;
        }
        self.heap.pop().map(|Reverse(d)| d.item)
    }

    /// When this host has something to start: now if `queued` (new work waits),
    /// else when its first retry is due.
    pub(crate) fn work_at(&self, queued: bool, now: Instant) -> Option<Instant> {
        if queued { Some(now) } else { self.next_due() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn due_order_then_fifo() {
        let t0 = Instant::now();
        let mut q = RetryQueue::default();
        q.push(t0 + Duration::from_secs(2), "late");
        q.push(t0 + Duration::from_secs(1), "first");
        q.push(t0 + Duration::from_secs(1), "second");
        assert_eq!(q.pop_due(t0), None);
        assert_eq!(q.next_due(), Some(t0 + Duration::from_secs(1)));
        let at = t0 + Duration::from_secs(1);
        assert_eq!(q.pop_due(at), Some("first"));
        assert_eq!(q.pop_due(at), Some("second"));
        assert_eq!(q.pop_due(at), None);
        assert_eq!(q.work_at(true, t0), Some(t0));
        assert_eq!(q.work_at(false, t0), Some(t0 + Duration::from_secs(2)));
    }
}
