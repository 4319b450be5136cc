//! The embedded crawl store: everything a crawl must not lose, in one SQLite
//! database under the state directory.
//!
//! SQLite in WAL mode was chosen over redb and fjall because a second process
//! (`skitter status DIR`) can read a consistent snapshot while the crawl writes,
//! which neither of the others allows, and because a committed WAL transaction
//! survives `kill -9` with the database still consistent. Random-key B-tree
//! inserts are slow in every embedded store measured, so the seen set lives in
//! memory as sorted fingerprints (`fpset`), the queue is stored a chunk of a
//! host's requests per row (`chunk`), and the database receives whole batches
//! of writes (`batch`) in group commits; see `frontier::disk` for how they are
//! used.
//!
//! `schema` owns the file layout, the format version and the crawl's identity;
//! `records` owns every typed read and write; [`status`] reads a running
//! crawl's progress from another process.

pub(crate) mod attempts;
pub(crate) mod batch;
pub(crate) mod chunk;
pub(crate) mod counters;
pub(crate) mod epoch;
pub(crate) mod fpset;
pub(crate) mod pass;
pub(crate) mod records;
pub(crate) mod schema;
mod status;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::base::outcome::PageRecord;

pub use pass::PassStatus;
pub use schema::SCHEMA_VERSION;
pub use status::{HostStatus, StatusReport, status};

/// What defines a crawl: reopening a state directory with different values would
/// mix two crawls, so it is refused unless forced.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrawlMeta {
    /// The root URLs, as given.
    pub roots: Vec<String>,
    /// The scope rule, in whatever textual form the caller uses.
    pub scope: String,
    /// Any other option that changes which URLs the crawl visits (depth limit,
    /// include/exclude patterns, …), by name.
    pub settings: BTreeMap<String, String>,
}

/// The crawl store failed or refused to open.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The state directory or its lock file could not be created or opened.
    #[error("cannot use state directory {path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// Another process holds the state directory open for writing.
    #[error("state directory {0} is in use by another crawl")]
    Busy(PathBuf),
    /// The database failed (I/O error, disk full, corruption).
    #[error("crawl store failed while {context}: {source}")]
    Sqlite {
        /// What the store was doing.
        context: &'static str,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The directory holds a different crawl.
    #[error(
        "state directory holds a different crawl (stored: {stored}; given: {given}); \
         use a new directory or force reuse"
    )]
    Conflict {
        /// The stored crawl definition, as JSON.
        stored: String,
        /// The definition given to `open`, as JSON.
        given: String,
    },
    /// The directory was written by an incompatible version of skitter.
    #[error("state format version {found} is not supported (this build reads version {supported})")]
    Version {
        /// The version found on disk.
        found: i64,
        /// The version this build reads and writes.
        supported: i64,
    },
    /// A stored record could not be decoded.
    #[error("stored record is corrupt: {0}")]
    Corrupt(String),
    /// An earlier write failed; the in-memory state may be ahead of the disk, so
    /// nothing more is written. Reopening resumes from the last commit.
    #[error("crawl store stopped after an earlier failure: {0}")]
    Stopped(String),
}

impl StoreError {
    pub(crate) fn sql(context: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError {
        move |source| StoreError::Sqlite { context, source }
    }
}

/// Counts over the per-URL records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutcomeCounts {
    /// URLs with a record.
    pub records: u64,
    /// Of those, failed fetches and error statuses.
    pub errors: u64,
}

/// Where each URL's [`PageRecord`] is kept, so the final report covers the whole
/// crawl across runs. Kept apart from [`crate::frontier::Frontier`] because a
/// purely in-memory crawl has no need for it.
pub trait OutcomeStore {
    /// Stores a URL's record, replacing an earlier one for the same URL.
    fn record_outcome(&self, record: &PageRecord) -> Result<(), StoreError>;

    /// Calls `f` with every stored record, in the order they were first stored.
    fn for_each_outcome(&self, f: &mut dyn FnMut(PageRecord)) -> Result<(), StoreError>;

    /// Counts over the stored records.
    fn outcome_counts(&self) -> Result<OutcomeCounts, StoreError>;
}

/// A fingerprint as stored: 16 big-endian bytes.
pub(crate) fn fp_bytes(fp: u128) -> [u8; 16] {
    fp.to_be_bytes()
}

/// Decodes a stored fingerprint.
pub(crate) fn fp_from(bytes: &[u8]) -> Result<u128, StoreError> {
    let arr: [u8; 16] = bytes
        .try_into()
        .map_err(|_| StoreError::Corrupt(format!("fingerprint of {} bytes", bytes.len())))?;
    Ok(u128::from_be_bytes(arr))
}
