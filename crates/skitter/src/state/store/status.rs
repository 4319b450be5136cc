//! `skitter status DIR`: a crawl's progress, read from its state directory by any
//! process, while the crawl runs or after it stopped.
//!
//! WAL mode lets this reader see the last group commit (at most a commit interval
//! old) without blocking the writer or being blocked by it.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::StoreError;
use super::records::load_hosts;
use super::schema::{open_reader, writer_active};

/// One host's progress.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostStatus {
    /// The politeness key (`host:port`).
    pub host: String,
    /// URLs queued or being fetched.
    pub pending: u64,
    /// URLs completed.
    pub done: u64,
    /// Of the recorded outcomes, failed fetches and error statuses.
    pub errors: u64,
}

/// A crawl's progress as of its last commit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusReport {
    /// Whether a crawl process holds the directory right now.
    pub running: bool,
    /// When the crawl last committed.
    pub updated_at: SystemTime,
    /// Distinct URLs ever offered.
    pub seen: u64,
    /// URLs waiting to be fetched.
    pub queued: u64,
    /// URLs being fetched (when `running`; otherwise they go back to the queue).
    pub leased: u64,
    /// URLs completed.
    pub done: u64,
    /// URLs with a stored outcome record.
    pub outcomes: u64,
    /// Of those, failed fetches and error statuses.
    pub errors: u64,
    /// Per host, in the order the crawl first met them.
    pub hosts: Vec<HostStatus>,
    /// The crawl's passes, first to last (one, until it is recrawled).
    pub passes: Vec<super::PassStatus>,
}

/// Reads a state directory's progress without taking its lock.
pub fn status(dir: &Path) -> Result<StatusReport, StoreError> {
    let conn = open_reader(dir)?;
    // One read transaction, so the counters and the hosts come from one commit.
    conn.execute_batch("BEGIN")
        .map_err(StoreError::sql("reading status"))?;
    let (seen, queued, leased, done, outcomes, errors, ms): (u64, u64, u64, u64, u64, u64, i64) = conn
        .query_row(
            "SELECT seen, queued, leased, done, outcomes, errors, updated_ms FROM progress WHERE id = 0",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)),
        )
        .map_err(StoreError::sql("reading status"))?;
    let hosts = load_hosts(&conn)?
        .into_iter()
        .map(|h| HostStatus {
            host: h.key,
            pending: h.pending,
            done: h.done,
            errors: h.errors,
        })
        .collect();
    let passes = super::pass::load_passes(&conn)?;
    let _ = conn.execute_batch("COMMIT");
    Ok(StatusReport {
        running: writer_active(dir),
        updated_at: UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64),
        seen,
        queued,
        leased,
        done,
        outcomes,
        errors,
        hosts,
        passes,
    })
}
