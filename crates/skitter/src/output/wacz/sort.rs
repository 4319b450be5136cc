//! Sorting the index lines of a WACZ in bounded memory: an external merge sort.
//!
//! Lines are gathered in memory up to [`RUN_BYTES`]; past that the gathered
//! lines are sorted and written to a temporary file (a run) in the WACZ's
//! folder, and gathering starts again. At the end the runs are merged, a line
//! at a time, through a heap holding one line of each run. A crawl whose index
//! fits under the cap (about 80,000 captures at ~200 bytes a line) never
//! touches the disk; a larger one holds at most `RUN_BYTES` of lines, plus one
//! line and a [`READ_BUFFER`] per run while merging (a 10-million-capture crawl
//! makes about 120 runs: 1 MB of buffers).
//!
//! Lines must not hold a newline (CDXJ lines never do: their JSON is escaped).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Seek, Write};
use std::path::{Path, PathBuf};

/// Bytes of lines held in memory before they are sorted and spilled to a run.
pub(crate) const RUN_BYTES: usize = 16 << 20;

/// The read buffer of each run while merging.
const READ_BUFFER: usize = 8 << 10;

/// Lines gathered for sorting: in memory, then in runs on disk.
pub(crate) struct ExternalSort {
    dir: PathBuf,
    run_bytes: usize,
    lines: Vec<String>,
    held: usize,
    runs: Vec<File>,
    count: u64,
}

impl ExternalSort {
    /// A sorter spilling runs to temporary files in `dir` past `run_bytes`.
    pub(crate) fn new(dir: &Path, run_bytes: usize) -> ExternalSort {
        ExternalSort {
            dir: dir.to_path_buf(),
            run_bytes,
            lines: Vec::new(),
            held: 0,
            runs: Vec::new(),
            count: 0,
        }
    }

    /// Adds a line.
    pub(crate) fn push(&mut self, line: String) -> io::Result<()> {
        // A String's heap block and its slot in the vector.
        self.held += line.len() + std::mem::size_of::<String>();
        self.lines.push(line);
        self.count += 1;
        if self.held >= self.run_bytes {
            self.spill()?;
        }
        Ok(())
    }

    /// Lines added.
    pub(crate) fn len(&self) -> u64 {
        self.count
    }

    /// Runs written to disk so far.
    #[cfg(test)]
    pub(crate) fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Sorts the lines held and writes them to a new run (an unnamed
    /// temporary file, gone when closed).
    fn spill(&mut self) -> io::Result<()> {
        self.lines.sort_unstable();
        let mut run = BufWriter::new(tempfile::tempfile_in(&self.dir)?);
        for line in self.lines.drain(..) {
            run.write_all(line.as_bytes())?;
            run.write_all(b"\n")?;
        }
        let mut file = run.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.rewind()?;
        self.runs.push(file);
        self.lines = Vec::new();
        self.held = 0;
        Ok(())
    }

    /// Every line, in byte order.
    pub(crate) fn into_sorted(mut self) -> io::Result<Sorted> {
        if self.runs.is_empty() {
            self.lines.sort_unstable();
            return Ok(Sorted::Memory(self.lines.into_iter()));
        }
        if !self.lines.is_empty() {
            self.spill()?;
        }
        let mut readers: Vec<_> = self
            .runs
            .into_iter()
            .map(|f| BufReader::with_capacity(READ_BUFFER, f))
            .collect();
        let mut heap = BinaryHeap::with_capacity(readers.len());
        for (i, reader) in readers.iter_mut().enumerate() {
            if let Some(line) = next_line(reader)? {
                heap.push(Reverse((line, i)));
            }
        }
        Ok(Sorted::Merge { readers, heap })
    }
}

/// The sorted lines: from memory, or merged from the runs.
pub(crate) enum Sorted {
    Memory(std::vec::IntoIter<String>),
    Merge {
        readers: Vec<BufReader<File>>,
        heap: BinaryHeap<Reverse<(String, usize)>>,
    },
}

impl Iterator for Sorted {
    type Item = io::Result<String>;

    fn next(&mut self) -> Option<io::Result<String>> {
        match self {
            Sorted::Memory(lines) => lines.next().map(Ok),
            Sorted::Merge { readers, heap } => {
                let Reverse((line, i)) = heap.pop()?;
                match next_line(&mut readers[i]) {
                    Ok(Some(next)) => heap.push(Reverse((next, i))),
                    Ok(None) => {}
                    Err(e) => return Some(Err(e)),
                }
                Some(Ok(line))
            }
        }
    }
}

fn next_line(reader: &mut BufReader<File>) -> io::Result<Option<String>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    if line.ends_with('\n') {
        line.pop();
    }
    Ok(Some(line))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn sorted(lines: &[String], run_bytes: usize) -> (Vec<String>, usize) {
        let dir = tempfile::tempdir().unwrap();
        let mut sort = ExternalSort::new(dir.path(), run_bytes);
        for line in lines {
            sort.push(line.clone()).unwrap();
        }
        assert_eq!(sort.len(), lines.len() as u64);
        let runs = sort.runs();
        let out = sort
            .into_sorted()
            .unwrap()
            .collect::<io::Result<_>>()
            .unwrap();
        (out, runs)
    }

    #[test]
    fn past_the_cap_lines_go_to_runs_and_merge_in_order() {
        let lines: Vec<String> = (0..1000u32)
            .map(|i| format!("com,example)/{} 2026 {{}}", i.wrapping_mul(7919) % 1000))
            .collect();
        let mut want = lines.clone();
        want.sort();
        let (got, runs) = sorted(&lines, 4096);
        assert!(runs > 10, "{runs} runs");
        assert_eq!(got, want);
        let (got, runs) = sorted(&lines, usize::MAX);
        assert_eq!((runs, &got), (0, &want));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, rng_seed: proptest::test_runner::RngSeed::Fixed(34), ..ProptestConfig::default() })]
        #[test]
        fn any_lines_come_out_sorted(
            lines in proptest::collection::vec("[^\n]{0,40}", 0..200),
            run_bytes in 1usize..2000,
        ) {
            let mut want = lines.clone();
            want.sort();
            prop_assert_eq!(sorted(&lines, run_bytes).0, want);
        }
    }
}
