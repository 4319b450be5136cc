//! The counters a commit writes besides its ops: the crawl-wide [`Progress`]
//! and each host's [`HostRow`]. The frontier keeps them under its lock and
//! hands a copy over with every batch; `records` writes and reads them.

use std::time::Duration;

/// The crawl-wide counters, written with every commit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Progress {
    pub(crate) seen: u64,
    pub(crate) queued: u64,
    pub(crate) leased: u64,
    pub(crate) done: u64,
    /// Of `done`, the URLs fetched: all but those skipped before fetching
    /// (robots.txt, `max_per_host`), as the page budget counts them. A
    /// resumed crawl starts `max_pages` from it.
    pub(crate) fetched: u64,
    /// The next id for a host row or a queue chunk; increasing ids keep each
    /// host's chunks FIFO.
    pub(crate) next_seq: i64,
    /// Fingerprints have been moved to the on-disk seen table at least once.
    pub(crate) spilled: bool,
}

/// One host's persistent counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct HostRow {
    pub(crate) id: i64,
    pub(crate) key: String,
    /// Queued requests: waiting or leased.
    pub(crate) pending: u64,
    pub(crate) done: u64,
    /// Of `done`, the URLs fetched; a resumed crawl starts `max_per_host` from it.
    pub(crate) fetched: u64,
    /// Maintained by the database side; ignored when written from a snapshot.
    pub(crate) errors: u64,
    pub(crate) delay_floor: Duration,
}
