//! A group commit's worth of writes, collected in memory.
//!
//! The frontier records what it changes as [`Op`]s under its own lock and hands a
//! whole [`Batch`] to the database later, so the slow part of a commit (SQLite's
//! B-tree work, the WAL write, the `fsync`) runs without blocking claims and
//! offers. Ops are applied in the order they were made, and a batch is applied in
//! one transaction together with the counters as they stood when it was taken, so
//! what a crash leaves behind is always a state the frontier was really in.

use std::sync::Arc;
use std::time::SystemTime;

use super::chunk::Chunk;
use super::counters::{HostRow, Progress};

/// One write.
#[derive(Debug)]
pub(crate) enum Op {
    /// A host met for the first time.
    Host { id: i64, key: String },
    /// A sealed queue chunk (shared with the frontier's read-ahead).
    Chunk(Arc<Chunk>),
    /// A URL was completed: its fingerprint stays in the seen set.
    Done(u128),
    /// Every request of this chunk was completed.
    DropChunk(i64),
    /// A URL's record; `host` is the row whose error count it feeds, if known.
    /// `leased` when the URL came off the queue: such a URL is completed once
    /// only (the seen set never queues it again, and a completion lost in a crash
    /// loses its record with it), so it cannot have a record to replace unless
    /// someone stored one through the `OutcomeStore` trait.
    Outcome {
        fp: u128,
        host: Option<i64>,
        failed: bool,
        json: String,
        leased: bool,
        /// What the record says changed, for the pass's counters.
        change: Option<crate::base::outcome::Change>,
    },
    /// A fetched URL's visit (encoded by `recrawl`), replacing the earlier one.
    Visit {
        fp: u128,
        url: String,
        depth: u32,
        visit: Vec<u8>,
    },
    /// A cached robots.txt.
    Robots {
        origin: String,
        body: Vec<u8>,
        fetched_at: SystemTime,
    },
    /// A small named value.
    Kv { key: String, value: Vec<u8> },
    /// A URL's tries, when it is claimed (`held`) or handed back for a
    /// retry (see `attempts`); completing it (`Done`) forgets them.
    Attempts {
        fp: u128,
        attempts: super::attempts::Attempts,
        held: bool,
    },
}

/// Writes not yet handed to the database.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    pub(crate) ops: Vec<Op>,
    /// Queued requests and other writes, to bound a batch's size.
    pub(crate) weight: usize,
    /// Holds more than offers: someone will want to see it committed soon.
    pub(crate) settled: bool,
}

impl Batch {
    pub(crate) fn push(&mut self, op: Op) {
        self.weight += match &op {
            Op::Chunk(c) => c.len(),
            _ => 1,
        };
        self.settled |= !matches!(op, Op::Chunk(_) | Op::Host { .. });
        self.ops.push(op);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The newest pending value of a named value, if one is pending.
    pub(crate) fn kv(&self, key: &str) -> Option<&[u8]> {
        self.ops.iter().rev().find_map(|op| match op {
            Op::Kv { key: k, value } if k == key => Some(value.as_slice()),
            _ => None,
        })
    }

    /// The newest pending robots.txt of an origin, if one is pending.
    pub(crate) fn robots(&self, origin: &str) -> Option<(Vec<u8>, SystemTime)> {
        self.ops.iter().rev().find_map(|op| match op {
            Op::Robots {
                origin: o,
                body,
                fetched_at,
            } if o == origin => Some((body.clone(), *fetched_at)),
            _ => None,
        })
    }
}

/// What a commit writes besides its ops: the counters as they stood when the batch
/// was taken.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    pub(crate) progress: Progress,
    pub(crate) hosts: Vec<HostRow>,
}
