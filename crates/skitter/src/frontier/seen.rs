//! The bounded seen set of the in-memory frontier: URL fingerprints in a compact
//! in-memory [`FpSet`] up to a byte limit, and past it in sorted run files.
//!
//! A run is the in-memory set written out in ascending order when it reaches its
//! limit (a sequential write, no B-tree), with a sparse index in memory: the first
//! fingerprint of every 4 KiB block. A lookup is one binary search in the index
//! and one block read per run, served from the OS page cache, not from our RSS.
//! A run is merged (a sequential pass) into the one before it while it is at
//! least a quarter of its size, so there are few of them: one up to four spills. The index costs 1/256 of the
//! in-memory set per URL and counts against the same limit.

use super::FrontierError;
use crate::state::spill::{SpillDir, SpillFile, read_at, write_at_end};
use crate::state::store::fpset::FpSet;

/// Fingerprints per indexed block (4 KiB).
const BLOCK: usize = 256;
const FP: usize = 16;
/// A new run is merged into the one before it while it is at least 1/`MERGE_RATIO`
/// of its size: fewer runs to search per lookup, each fingerprint rewritten about
/// `MERGE_RATIO` times per level.
const MERGE_RATIO: u64 = 4;
/// Fingerprints buffered per write or read while writing and merging runs.
const IO_FPS: usize = 4096;

/// Distinct fingerprints, in memory up to a limit and on disk beyond it.
pub(crate) struct SeenSet {
    mem: FpSet,
    runs: Vec<Run>,
    len: u64,
    limit: usize,
    dir: SpillDir,
    block: Vec<u8>,
}

/// One sorted run file and its sparse index.
struct Run {
    file: SpillFile,
    len: u64,
    /// The first fingerprint of each block.
    index: Vec<u128>,
}

impl SeenSet {
    /// An empty set that keeps at most about `limit` bytes in memory.
    pub(crate) fn new(limit: usize, dir: SpillDir) -> SeenSet {
        SeenSet {
            mem: FpSet::default(),
            runs: Vec::new(),
            len: 0,
            limit,
            dir,
            block: vec![0; BLOCK * FP],
        }
    }

    /// Distinct fingerprints inserted.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Run files currently on disk.
    #[cfg(test)]
    pub(crate) fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Adds `fp`; false when it was already present, in memory or on disk.
    pub(crate) fn insert(&mut self, fp: u128) -> Result<bool, FrontierError> {
        if self.runs.is_empty() {
            if !self.mem.insert(fp) {
                return Ok(false);
            }
        } else {
            if self.mem.contains(fp) || self.on_disk(fp)? {
                return Ok(false);
            }
            self.mem.insert(fp);
        }
        self.len += 1;
        if self.mem.bytes() + self.index_bytes() > self.limit {
            self.spill()?;
        }
        Ok(true)
    }

    fn index_bytes(&self) -> usize {
        self.runs.iter().map(|r| r.index.capacity() * FP).sum()
    }

    fn on_disk(&mut self, fp: u128) -> Result<bool, FrontierError> {
        for run in &self.runs {
            let blocks = run.index.partition_point(|&first| first <= fp);
            let Some(block) = blocks.checked_sub(1) else {
                continue; // Smaller than everything in this run.
            };
            let start = block * BLOCK;
            let n = (run.len as usize - start).min(BLOCK);
            let buf = &mut self.block[..n * FP];
            read_at(&run.file, buf, (start * FP) as u64)
                .map_err(|e| self.dir.error("cannot read a spill file in", e))?;
            if block_contains(buf, fp) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Writes the in-memory set out as a new run, then merges equal-sized runs.
    fn spill(&mut self) -> Result<(), FrontierError> {
        let sorted = self.mem.take_sorted();
        let mut writer = RunWriter::new(&self.dir)?;
        for &fp in &sorted {
            writer.push(fp)?;
        }
        drop(sorted);
        self.runs.push(writer.finish()?);
        while let [.., older, newer] = self.runs.as_slice()
            && newer.len * MERGE_RATIO >= older.len
        {
            let newer = self.runs.pop().expect("two runs");
            let older = self.runs.pop().expect("two runs");
            let merged = self.merge(&older, &newer)?;
            self.runs.push(merged);
        }
        Ok(())
    }

    fn merge(&self, a: &Run, b: &Run) -> Result<Run, FrontierError> {
        let mut writer = RunWriter::new(&self.dir)?;
        let mut a = RunReader::new(a, &self.dir);
        let mut b = RunReader::new(b, &self.dir);
        let (mut x, mut y) = (a.next()?, b.next()?);
        loop {
            match (x, y) {
                (Some(p), Some(q)) if p <= q => {
                    writer.push(p)?;
                    x = a.next()?;
                    if p == q {
                        y = b.next()?; // Never happens; keeps runs duplicate-free anyway.
                    }
                }
                (Some(_), Some(q)) | (None, Some(q)) => {
                    writer.push(q)?;
                    y = b.next()?;
                }
                (Some(p), None) => {
                    writer.push(p)?;
                    x = a.next()?;
                }
                (None, None) => return writer.finish(),
            }
        }
    }
}

/// Binary search in a block of little-endian fingerprints, without decoding it.
fn block_contains(block: &[u8], fp: u128) -> bool {
    let at =
        |i: usize| u128::from_le_bytes(block[i * FP..(i + 1) * FP].try_into().expect("16 bytes"));
    let (mut lo, mut hi) = (0, block.len() / FP);
    while lo < hi {
        let mid = (lo + hi) / 2;
        match at(mid).cmp(&fp) {
            std::cmp::Ordering::Equal => return true,
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
        }
    }
    false
}

/// Writes a run in large sequential writes, building its index.
struct RunWriter<'a> {
    dir: &'a SpillDir,
    file: SpillFile,
    buf: Vec<u8>,
    len: u64,
    index: Vec<u128>,
}

impl<'a> RunWriter<'a> {
    fn new(dir: &'a SpillDir) -> Result<Self, FrontierError> {
        Ok(RunWriter {
            file: dir.create()?,
            dir,
            buf: Vec::with_capacity(IO_FPS * FP),
            len: 0,
            index: Vec::new(),
        })
    }

    fn push(&mut self, fp: u128) -> Result<(), FrontierError> {
        if self.len.is_multiple_of(BLOCK as u64) {
            self.index.push(fp);
        }
        self.buf.extend_from_slice(&fp.to_le_bytes());
        self.len += 1;
        if self.buf.len() >= IO_FPS * FP {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), FrontierError> {
        let written = (self.len as usize * FP - self.buf.len()) as u64;
        write_at_end(&self.file, &self.buf, written)
            .map_err(|e| self.dir.error("cannot write a spill file in", e))?;
        self.buf.clear();
        Ok(())
    }

    fn finish(mut self) -> Result<Run, FrontierError> {
        self.flush()?;
        self.index.shrink_to_fit();
        Ok(Run {
            file: self.file,
            len: self.len,
            index: self.index,
        })
    }
}

/// Reads a run front to back in large reads.
struct RunReader<'a> {
    run: &'a Run,
    dir: &'a SpillDir,
    buf: Vec<u8>,
    at: usize,
    next: u64,
}

impl<'a> RunReader<'a> {
    fn new(run: &'a Run, dir: &'a SpillDir) -> Self {
        RunReader {
            run,
            dir,
            buf: Vec::new(),
            at: 0,
            next: 0,
        }
    }

    fn next(&mut self) -> Result<Option<u128>, FrontierError> {
        if self.at == self.buf.len() {
            let n = (self.run.len - self.next).min(IO_FPS as u64) as usize;
            if n == 0 {
                return Ok(None);
            }
            self.buf.resize(n * FP, 0);
            read_at(&self.run.file, &mut self.buf, self.next * FP as u64)
                .map_err(|e| self.dir.error("cannot read a spill file in", e))?;
            self.next += n as u64;
            self.at = 0;
        }
        let bytes = &self.buf[self.at..self.at + FP];
        self.at += FP;
        Ok(Some(u128::from_le_bytes(
            bytes.try_into().expect("16-byte slice"),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrambled(i: u64) -> u128 {
        u128::from(i).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835)
    }

    #[test]
    fn spills_merges_and_still_rejects_duplicates() {
        let mut set = SeenSet::new(32 << 10, SpillDir::new(None));
        for i in 0..60_000 {
            assert!(set.insert(scrambled(i)).unwrap(), "{i} is new");
        }
        assert!(set.runs() >= 1, "a 32 KiB set must have spilled");
        assert!(set.runs() <= 7, "runs are merged: {}", set.runs());
        for i in (0..60_000).step_by(7) {
            assert!(!set.insert(scrambled(i)).unwrap(), "{i} is a duplicate");
        }
        assert_eq!(set.len(), 60_000);
        assert!(set.insert(scrambled(60_000)).unwrap());
        assert!(
            set.insert(1).unwrap(),
            "below every run's first fingerprint"
        );
        assert!(!set.insert(1).unwrap());
    }

    #[test]
    fn small_sets_never_touch_the_disk() {
        let dir = SpillDir::new(Some("/nonexistent/spill".into()));
        let mut set = SeenSet::new(1 << 20, dir);
        for i in 0..10_000 {
            assert!(set.insert(scrambled(i)).unwrap());
        }
        assert_eq!(set.runs(), 0);
    }

    #[test]
    fn an_unusable_directory_is_a_storage_error() {
        let mut set = SeenSet::new(0, SpillDir::new(Some("/nonexistent/spill".into())));
        match set.insert(1) {
            Err(e @ FrontierError::Spill(_)) => {
                assert!(e.to_string().contains("/nonexistent/spill"), "{e}")
            }
            other => panic!("expected a storage error, got {other:?}"),
        }
    }
}
