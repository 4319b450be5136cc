//! The report's per-URL records: [`PageLog`] keeps them as a crawl finishes
//! them, within its share of the memory budget, and [`Pages`] reads them back
//! sorted by URL, one record at a time, however many there are.
//!
//! Up to [`ReportOptions::memory_budget`] bytes of encoded records stay in
//! memory; past that they are spilled to sorted runs in anonymous temporary files
//! (see [`runs`](super::runs)), which disappear with the last [`Pages`] that
//! reads them, or with the process.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::ser::{Error as _, SerializeSeq};
use serde::{Serialize, Serializer};

use super::ReportError;
use super::runs::{Buffer, Merge, Runs};
use crate::base::outcome::PageRecord;
use crate::base::varint::{get_varint, put_varint};
use crate::state::spill::SpillDir;

/// Memory the report's records may take before they spill (32 MiB): about
/// 100,000 records.
pub const DEFAULT_REPORT_MEMORY: usize = 32 << 20;

/// How the report keeps its per-URL records.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ReportOptions {
    /// Keep a record per URL (`false`: counters only, [`crate::Report::pages`]
    /// stays empty).
    pub records: bool,
    /// Bytes of encoded records held in memory before they are sorted and
    /// written to a spill file.
    pub memory_budget: usize,
    /// Where spill files go (the system temporary directory when `None`).
    pub spill_dir: Option<PathBuf>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            records: true,
            memory_budget: DEFAULT_REPORT_MEMORY,
            spill_dir: None,
        }
    }
}

/// Collects records, spilling sorted runs when over budget.
#[derive(Debug)]
pub(crate) struct PageLog {
    buffer: Buffer,
    runs: Runs,
    limit: usize,
    scratch: Vec<u8>,
}

impl PageLog {
    pub(crate) fn new(options: &ReportOptions) -> PageLog {
        PageLog {
            buffer: Buffer::default(),
            runs: Runs::new(SpillDir::new(options.spill_dir.clone())),
            limit: options.memory_budget.max(1),
            scratch: Vec::new(),
        }
    }

    /// Adds one record (its `parent` is left out: the report never shows it).
    pub(crate) fn add(&mut self, record: &PageRecord) -> Result<(), ReportError> {
        self.scratch.clear();
        // The JSON keeps whole milliseconds; the HTML report's latencies want
        // microseconds, so they go first.
        put_varint(
            &mut self.scratch,
            u64::try_from(record.elapsed.as_micros()).unwrap_or(u64::MAX),
        );
        let parentless = Parentless(record);
        serde_json::to_writer(&mut self.scratch, &parentless).map_err(ReportError::Encode)?;
        self.buffer
            .push(record.url.as_str(), &self.scratch, self.limit);
        if self.buffer.bytes() >= self.limit {
            self.runs.spill(&mut self.buffer)?;
        }
        Ok(())
    }

    /// The records, ready to read.
    pub(crate) fn finish(mut self) -> Pages {
        self.buffer.sort();
        Pages {
            len: self.runs.count() + self.buffer.len() as u64,
            files: self.runs.files_created(),
            runs: Arc::new(self.runs),
            tail: Arc::new(self.buffer),
        }
    }
}

/// A record serialised without its parent.
struct Parentless<'a>(&'a PageRecord);

impl Serialize for Parentless<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.parent.is_none() {
            return self.0.serialize(s);
        }
        let mut copy = self.0.clone();
        copy.parent = None;
        copy.serialize(s)
    }
}

/// A crawl's per-URL records, sorted by URL (ties in finishing order), read
/// from memory and spill files without holding them all. Cloning is cheap: the
/// clones share the files. Serialises as a JSON array, written record by record.
#[derive(Clone)]
pub struct Pages {
    runs: Arc<Runs>,
    tail: Arc<Buffer>,
    len: u64,
    files: u64,
}

impl Default for Pages {
    fn default() -> Self {
        PageLog::new(&ReportOptions::default()).finish()
    }
}

impl fmt::Debug for Pages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pages")
            .field("len", &self.len)
            .field("spill_files", &self.files)
            .finish_non_exhaustive()
    }
}

impl Pages {
    /// Records held.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are none (always so with [`ReportOptions::records`] off).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Spill files written while collecting (sorted runs and their merges);
    /// 0 when every record fitted in memory.
    pub fn spill_files(&self) -> u64 {
        self.files
    }

    /// Bytes the spilled records take on disk.
    pub fn spilled_bytes(&self) -> u64 {
        self.runs.disk_bytes()
    }

    /// The records in URL order. Each item is read when asked for; a spill
    /// file that cannot be read or holds damaged data yields an error and ends
    /// the iteration.
    pub fn iter(&self) -> PagesIter {
        PagesIter {
            merge: Some(self.runs.merge(Arc::clone(&self.tail))),
        }
    }

    /// Every record in one vector: for small crawls and tests, since it holds
    /// them all in memory.
    pub fn to_vec(&self) -> Result<Vec<PageRecord>, ReportError> {
        self.iter().collect()
    }
}

/// The records of [`Pages::iter`], in URL order.
pub struct PagesIter {
    /// `None` once finished or failed.
    merge: Option<Result<Merge, ReportError>>,
}

impl fmt::Debug for PagesIter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PagesIter").finish_non_exhaustive()
    }
}

impl Iterator for PagesIter {
    type Item = Result<PageRecord, ReportError>;

    fn next(&mut self) -> Option<Self::Item> {
        let merge = match self.merge.as_mut()? {
            Ok(merge) => merge,
            Err(_) => {
                let Some(Err(e)) = self.merge.take() else {
                    return None;
                };
                return Some(Err(e));
            }
        };
        let decoded = match merge.next_frame() {
            Ok(None) => None,
            Ok(Some(frame)) => Some(decode(&frame.json)),
            Err(e) => Some(Err(e)),
        };
        if !matches!(decoded, Some(Ok(_))) {
            self.merge = None;
        }
        decoded
    }
}

/// A record from its frame's second part: elapsed microseconds, then JSON.
fn decode(mut bytes: &[u8]) -> Result<PageRecord, ReportError> {
    let bad = |why: String| {
        ReportError::Damaged(format!("a report spill file holds a bad record: {why}"))
    };
    let micros = get_varint(&mut bytes).ok_or_else(|| bad("no elapsed time".into()))?;
    let mut record: PageRecord = serde_json::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
    record.elapsed = Duration::from_micros(micros);
    Ok(record)
}

impl Serialize for Pages {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(usize::try_from(self.len).ok())?;
        for record in self.iter() {
            seq.serialize_element(&record.map_err(S::Error::custom)?)?;
        }
        seq.end()
    }
}
