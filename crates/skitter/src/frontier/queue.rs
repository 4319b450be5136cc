//! Per-host FIFO queues of the in-memory frontier that stay within a byte budget
//! by spilling to disk.
//!
//! A host's queue is, in order: `head` (compact entries in memory, claimed from
//! the front), `chunks` (encoded runs in spill files) and `tail` (an encoded run
//! still in memory). New requests join the head only while the host has nothing
//! on disk or in its tail and the heads are under their limit; otherwise they are
//! encoded into the tail, which becomes a chunk on disk when it is full or when
//! all tails together exceed theirs. When the head runs dry it is refilled from
//! the first chunk, then from the tail. So per-host FIFO order always holds, and
//! below the budget nothing is encoded or written.
//!
//! Chunks are appended to segment files of up to 64 MiB; a segment is dropped
//! (and, being an anonymous file, freed) once every chunk in it has been read.

use std::collections::VecDeque;
use std::sync::Arc;

use url::Url;

use super::queued::{Encoded, Queued, decode};
use super::{FrontierError, Request};
use crate::state::spill::{SpillDir, SpillFile, read_at, write_at_end};

const SEGMENT_BYTES: u64 = 64 << 20;

/// One host's queue.
#[derive(Debug, Default)]
pub(crate) struct HostQueue {
    head: VecDeque<Queued>,
    chunks: VecDeque<Chunk>,
    tail: Encoded,
    len: u64,
}

impl HostQueue {
    /// Requests queued, wherever they are.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Whether this host has an encoded tail waiting to be written.
    pub(crate) fn has_tail(&self) -> bool {
        self.tail.count() > 0
    }
}

/// Where a spilled run of one host's requests lies.
#[derive(Debug)]
struct Chunk {
    segment: u64,
    offset: u64,
    len: u32,
}

struct Segment {
    file: SpillFile,
    len: u64,
    live: u64,
}

/// The memory accounting and the spill files shared by all host queues.
pub(crate) struct Queues {
    dir: SpillDir,
    /// Segment `first + i` is `segments[i]`; `None` once all its chunks are read.
    segments: VecDeque<Option<Segment>>,
    first: u64,
    head_bytes: usize,
    tail_bytes: usize,
    head_limit: usize,
    tail_limit: usize,
}

impl Queues {
    /// Queues whose heads hold about `head_limit` bytes and tails `tail_limit`.
    pub(crate) fn new(head_limit: usize, tail_limit: usize, dir: SpillDir) -> Queues {
        Queues {
            dir,
            segments: VecDeque::new(),
            first: 0,
            head_bytes: 0,
            tail_bytes: 0,
            head_limit,
            tail_limit,
        }
    }

    /// Whether the tails together exceed their limit and should all be written.
    pub(crate) fn tails_over(&self) -> bool {
        self.tail_bytes > self.tail_limit
    }

    /// Bytes of queue data held in memory (heads and tails).
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.head_bytes + self.tail_bytes
    }

    /// Spill segment files open now.
    #[cfg(test)]
    pub(crate) fn segments(&self) -> usize {
        self.segments.iter().flatten().count()
    }

    /// Appends `request` to `q`. A tail that reaches `chunk_bytes` is written out.
    /// `last` carries the previous request's shared parent between calls.
    pub(crate) fn push(
        &mut self,
        q: &mut HostQueue,
        request: Request,
        last: &mut Option<Arc<Url>>,
        chunk_bytes: usize,
    ) -> Result<(), FrontierError> {
        q.len += 1;
        if q.chunks.is_empty() && !q.has_tail() && self.head_bytes < self.head_limit {
            let entry = Queued::new(request, last);
            // A parent `Arc` made just now is held by the entry and `last` only.
            if entry.parent_refs() == 2 {
                self.head_bytes += entry.parent_bytes();
            }
            self.head_bytes += entry.bytes();
            q.head.push_back(entry);
            return Ok(());
        }
        let before = q.tail.capacity();
        q.tail.push(&request);
        self.tail_bytes += q.tail.capacity() - before;
        if q.tail.len() >= chunk_bytes {
            self.flush(q)?;
        }
        Ok(())
    }

    /// Takes the front request of `q`, refilling its head from disk if needed.
    pub(crate) fn pop(&mut self, q: &mut HostQueue) -> Result<Option<Request>, FrontierError> {
        if q.head.is_empty() {
            self.refill(q)?;
        }
        let Some(entry) = q.head.pop_front() else {
            return Ok(None);
        };
        q.len -= 1;
        let freed = entry.bytes() + entry.sole_parent_bytes();
        self.head_bytes = self.head_bytes.saturating_sub(freed);
        if q.head.is_empty() && q.head.capacity() > 64 {
            q.head = VecDeque::new(); // A drained burst keeps no large buffer.
        }
        entry.into_request().map(Some)
    }

    /// Writes `q`'s tail to disk as one chunk.
    pub(crate) fn flush(&mut self, q: &mut HostQueue) -> Result<(), FrontierError> {
        if !q.has_tail() {
            return Ok(());
        }
        self.tail_bytes = self.tail_bytes.saturating_sub(q.tail.capacity());
        let bytes = q.tail.take();
        let chunk = self.append(&bytes)?;
        q.chunks.push_back(chunk);
        Ok(())
    }

    fn refill(&mut self, q: &mut HostQueue) -> Result<(), FrontierError> {
        let bytes = if let Some(chunk) = q.chunks.pop_front() {
            let bytes = self.read(&chunk)?;
            self.release(&chunk);
            bytes
        } else if q.has_tail() {
            self.tail_bytes = self.tail_bytes.saturating_sub(q.tail.capacity());
            q.tail.take()
        } else {
            return Ok(());
        };
        let mut entries = Vec::new();
        decode(&bytes, &mut entries)?;
        let mut previous: Option<*const Url> = None;
        for entry in &entries {
            self.head_bytes += entry.bytes();
            let parent = entry.parent_ptr();
            if parent.is_some() && parent != previous {
                self.head_bytes += entry.parent_bytes();
            }
            previous = parent;
        }
        q.head.extend(entries);
        Ok(())
    }

    fn append(&mut self, bytes: &[u8]) -> Result<Chunk, FrontierError> {
        let len = u32::try_from(bytes.len())
            .map_err(|_| FrontierError::Setting("a spill chunk over 4 GiB".into()))?;
        let rotate = match self.segments.back() {
            Some(Some(s)) => s.len + bytes.len() as u64 > SEGMENT_BYTES,
            _ => true,
        };
        if rotate {
            self.start_segment()?;
        }
        let index = self.first + self.segments.len() as u64 - 1;
        let segment = self
            .segments
            .back_mut()
            .and_then(Option::as_mut)
            .expect("a current segment");
        write_at_end(&segment.file, bytes, segment.len)
            .map_err(|e| self.dir.error("cannot write a spill file in", e))?;
        let chunk = Chunk {
            segment: index,
            offset: segment.len,
            len,
        };
        segment.len += bytes.len() as u64;
        segment.live += 1;
        Ok(chunk)
    }

    fn start_segment(&mut self) -> Result<(), FrontierError> {
        let file = self.dir.create()?;
        self.segments.push_back(Some(Segment {
            file,
            len: 0,
            live: 0,
        }));
        Ok(())
    }

    fn read(&self, chunk: &Chunk) -> Result<Vec<u8>, FrontierError> {
        let missing = || FrontierError::Malformed("a spill chunk's segment is gone".into());
        let slot = chunk.segment.checked_sub(self.first).ok_or_else(missing)?;
        let segment = self
            .segments
            .get(slot as usize)
            .and_then(Option::as_ref)
            .ok_or_else(missing)?;
        let mut bytes = vec![0; chunk.len as usize];
        read_at(&segment.file, &mut bytes, chunk.offset)
            .map_err(|e| self.dir.error("cannot read a spill file in", e))?;
        Ok(bytes)
    }

    /// Frees a segment once every chunk in it has been read; the next write then
    /// starts a new one.
    fn release(&mut self, chunk: &Chunk) {
        let Some(slot) = chunk
            .segment
            .checked_sub(self.first)
            .and_then(|i| self.segments.get_mut(i as usize))
        else {
            return;
        };
        if let Some(segment) = slot {
            segment.live -= 1;
            if segment.live == 0 {
                *slot = None;
            }
        }
        self.trim();
    }

    fn trim(&mut self) {
        while matches!(self.segments.front(), Some(None)) {
            self.segments.pop_front();
            self.first += 1;
        }
    }
}
