//! The report's per-URL records outside memory: an external merge sort by URL.
//!
//! Records arrive in finishing order and are encoded into one buffer as frames
//! (varint length + URL, varint length + the record as JSON). When the buffer
//! outgrows its share of the memory budget, its frames are sorted by URL and
//! written to an anonymous spill file (a *run*, see [`SpillDir`]), and the buffer
//! starts again. Reading the report merges the runs and the buffer's remainder
//! on the fly, holding one frame per run. Runs are tiered like the levels of a
//! log-structured tree: [`FAN_IN`] runs of one level are merged into one run of
//! the next, so a crawl of any size reads from a few dozen runs at most and
//! every frame is rewritten only a logarithmic number of times.
//!
//! Ties (the same URL twice, as a resumed crawl may record) keep arrival order,
//! like the stable sort of the in-memory report they replace.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::sync::Arc;

use crate::base::varint::{get_bytes, get_varint, put_str, put_varint};
use crate::state::spill::{SpillDir, read_at};

use super::ReportError;

/// Runs of one level merged into one run of the next.
pub(crate) const FAN_IN: usize = 16;
/// Read buffer per run while merging: with [`FAN_IN`] runs a level and a few
/// levels, a merge holds well under a few MiB of buffers.
const READ_BUFFER: usize = 64 << 10;
/// The longest frame part a run may hold. Records are far smaller (URLs and
/// messages are capped upstream); a longer length means a damaged file, and
/// refusing it keeps a damaged length from allocating gigabytes.
const MAX_PART: u64 = 16 << 20;

/// One record as it travels through a merge: its URL and its JSON.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Frame {
    pub(crate) url: String,
    pub(crate) json: Vec<u8>,
}

/// A sorted run written to a spill file.
#[derive(Debug)]
pub(crate) struct Run {
    file: Arc<File>,
    len: u64,
    count: u64,
    level: u32,
}

/// Records not yet spilled, in arrival order until sorted by [`Buffer::sort`].
#[derive(Debug, Default)]
pub(crate) struct Buffer {
    bytes: Vec<u8>,
    starts: Vec<usize>,
}

impl Buffer {
    /// Appends one frame, growing the buffer no further than `limit` bytes
    /// when it can (doubling past the budget would overshoot it by half).
    pub(crate) fn push(&mut self, url: &str, json: &[u8], limit: usize) {
        let needed = self.bytes.len() + url.len() + json.len() + 20;
        if needed > self.bytes.capacity() {
            let grown = (self.bytes.capacity() * 2).min(limit).max(needed);
            self.bytes.reserve_exact(grown - self.bytes.len());
        }
        self.starts.push(self.bytes.len());
        put_str(&mut self.bytes, url);
        put_varint(&mut self.bytes, json.len() as u64);
        self.bytes.extend_from_slice(json);
    }

    /// Memory the frames and their index take.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes.len() + self.starts.len() * std::mem::size_of::<usize>()
    }

    /// Frames held.
    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// Orders the index by URL, ties in arrival order (a stable sort).
    pub(crate) fn sort(&mut self) {
        let bytes = &self.bytes;
        self.starts
            .sort_by(|&a, &b| url_at(bytes, a).cmp(url_at(bytes, b)));
    }

    /// The `i`th frame in index order.
    fn frame(&self, i: usize) -> Result<Frame, ReportError> {
        let mut rest = self.bytes.get(self.starts[i]..).ok_or_else(damaged)?;
        let url = take_part(&mut rest)?;
        let json = take_part(&mut rest)?;
        Ok(Frame {
            url: String::from_utf8(url.to_vec()).map_err(|_| damaged())?,
            json: json.to_vec(),
        })
    }
}

/// The URL of the frame at `start`; frames were written by [`Buffer::push`],
/// so a failure here cannot happen and sorts such a frame first.
fn url_at(bytes: &[u8], start: usize) -> &[u8] {
    let mut rest = &bytes[start..];
    take_part(&mut rest).unwrap_or_default()
}

fn take_part<'a>(rest: &mut &'a [u8]) -> Result<&'a [u8], ReportError> {
    let len = get_varint(rest).ok_or_else(damaged)?;
    get_bytes(rest, len).ok_or_else(damaged)
}

fn damaged() -> ReportError {
    ReportError::Damaged("a report spill file holds damaged data".into())
}

/// The sorted runs written so far, tiered by level (highest first).
#[derive(Debug)]
pub(crate) struct Runs {
    dir: SpillDir,
    runs: Vec<Run>,
}

impl Runs {
    /// No runs yet; spill files will go to `dir`.
    pub(crate) fn new(dir: SpillDir) -> Runs {
        Runs {
            dir,
            runs: Vec::new(),
        }
    }

    /// Spill files created so far (merges included).
    pub(crate) fn files_created(&self) -> u64 {
        self.dir.files_created()
    }

    /// Writes `buffer`'s frames, sorted, as a new run, then merges full levels.
    pub(crate) fn spill(&mut self, buffer: &mut Buffer) -> Result<(), ReportError> {
        buffer.sort();
        let mut writer = RunWriter::new(&self.dir)?;
        for i in 0..buffer.len() {
            writer.write(&buffer.frame(i)?)?;
        }
        self.runs.push(writer.finish(0)?);
        *buffer = Buffer::default();
        self.compact()
    }

    /// While the last [`FAN_IN`] runs share a level, merges them into one run
    /// of the next level. They are the newest, so arrival order is kept.
    fn compact(&mut self) -> Result<(), ReportError> {
        while self.runs.len() >= FAN_IN {
            let tail = &self.runs[self.runs.len() - FAN_IN..];
            let level = tail[0].level;
            if tail.iter().any(|r| r.level != level) {
                break;
            }
            let sources = tail.iter().map(Source::run).collect();
            let mut merge = Merge::new(sources)?;
            let mut writer = RunWriter::new(&self.dir)?;
            while let Some(frame) = merge.next_frame()? {
                writer.write(&frame)?;
            }
            let merged = writer.finish(level + 1)?;
            self.runs.truncate(self.runs.len() - FAN_IN);
            self.runs.push(merged);
        }
        Ok(())
    }

    /// A merge of every run and `tail` (already sorted), oldest first.
    pub(crate) fn merge(&self, tail: Arc<Buffer>) -> Result<Merge, ReportError> {
        let mut sources: Vec<Source> = self.runs.iter().map(Source::run).collect();
        sources.push(Source::Memory {
            buffer: tail,
            at: 0,
        });
        Merge::new(sources)
    }

    /// Records in the runs.
    pub(crate) fn count(&self) -> u64 {
        self.runs.iter().map(|r| r.count).sum()
    }

    /// Bytes the runs take on disk.
    pub(crate) fn disk_bytes(&self) -> u64 {
        self.runs.iter().map(|r| r.len).sum()
    }
}

struct RunWriter {
    out: BufWriter<File>,
    file: Arc<File>,
    len: u64,
    count: u64,
    scratch: Vec<u8>,
}

impl RunWriter {
    fn new(dir: &SpillDir) -> Result<RunWriter, ReportError> {
        let file = dir.create_file().map_err(ReportError::Spill)?;
        let shared = file.try_clone().map_err(spill_io)?;
        Ok(RunWriter {
            out: BufWriter::with_capacity(READ_BUFFER, file),
            file: Arc::new(shared),
            len: 0,
            count: 0,
            scratch: Vec::new(),
        })
    }

    fn write(&mut self, frame: &Frame) -> Result<(), ReportError> {
        self.scratch.clear();
        put_str(&mut self.scratch, &frame.url);
        put_varint(&mut self.scratch, frame.json.len() as u64);
        self.out.write_all(&self.scratch).map_err(spill_io)?;
        self.out.write_all(&frame.json).map_err(spill_io)?;
        self.len += (self.scratch.len() + frame.json.len()) as u64;
        self.count += 1;
        Ok(())
    }

    fn finish(mut self, level: u32) -> Result<Run, ReportError> {
        self.out.flush().map_err(spill_io)?;
        Ok(Run {
            file: self.file,
            len: self.len,
            count: self.count,
            level,
        })
    }
}

fn spill_io(e: io::Error) -> ReportError {
    ReportError::Io {
        what: "write",
        source: e,
    }
}

/// A run's bytes from an offset on, read without a shared cursor, so several
/// merges (a text and a JSON report) can read one run at the same time.
struct At {
    file: Arc<File>,
    pos: u64,
    end: u64,
}

impl Read for At {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.end.saturating_sub(self.pos);
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        if n == 0 {
            return Ok(0);
        }
        read_at(&self.file, &mut buf[..n], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// Where a merge takes frames from.
enum Source {
    Run {
        reader: BufReader<At>,
        expected: u64,
        read: u64,
    },
    Memory {
        buffer: Arc<Buffer>,
        at: usize,
    },
}

impl Source {
    fn run(run: &Run) -> Source {
        let at = At {
            file: Arc::clone(&run.file),
            pos: 0,
            end: run.len,
        };
        Source::Run {
            reader: BufReader::with_capacity(READ_BUFFER, at),
            expected: run.count,
            read: 0,
        }
    }

    fn next(&mut self) -> Result<Option<Frame>, ReportError> {
        match self {
            Source::Memory { buffer, at } => {
                if *at >= buffer.len() {
                    return Ok(None);
                }
                *at += 1;
                buffer.frame(*at - 1).map(Some)
            }
            Source::Run {
                reader,
                expected,
                read,
            } => {
                let at_end = reader.fill_buf().map_err(read_io)?.is_empty();
                if at_end {
                    // A run shorter than written (truncated) ends early.
                    return if read == expected {
                        Ok(None)
                    } else {
                        Err(damaged())
                    };
                }
                let url = read_part(reader)?;
                let json = read_part(reader)?;
                *read += 1;
                Ok(Some(Frame {
                    url: String::from_utf8(url).map_err(|_| damaged())?,
                    json,
                }))
            }
        }
    }
}

fn read_io(e: io::Error) -> ReportError {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => damaged(),
        _ => ReportError::Io {
            what: "read",
            source: e,
        },
    }
}

/// A varint length and that many bytes, refusing lengths past [`MAX_PART`].
fn read_part(reader: &mut impl Read) -> Result<Vec<u8>, ReportError> {
    let mut len = 0u64;
    let mut byte = [0u8; 1];
    for shift in (0..64).step_by(7) {
        reader.read_exact(&mut byte).map_err(read_io)?;
        len |= u64::from(byte[0] & 0x7f) << shift;
        if byte[0] < 0x80 {
            if len > MAX_PART {
                return Err(damaged());
            }
            let mut part = vec![0; len as usize];
            reader.read_exact(&mut part).map_err(read_io)?;
            return Ok(part);
        }
    }
    Err(damaged())
}

/// A k-way merge by URL; among equal URLs, the older source first.
pub(crate) struct Merge {
    sources: Vec<Source>,
    heads: Vec<Option<Vec<u8>>>,
    heap: BinaryHeap<Reverse<(String, usize)>>,
}

impl Merge {
    fn new(mut sources: Vec<Source>) -> Result<Merge, ReportError> {
        let mut heads = Vec::with_capacity(sources.len());
        let mut heap = BinaryHeap::with_capacity(sources.len());
        for (i, source) in sources.iter_mut().enumerate() {
            match source.next()? {
                Some(frame) => {
                    heap.push(Reverse((frame.url, i)));
                    heads.push(Some(frame.json));
                }
                None => heads.push(None),
            }
        }
        Ok(Merge {
            sources,
            heads,
            heap,
        })
    }

    /// The next frame in URL order, or `None` when every source is done.
    pub(crate) fn next_frame(&mut self) -> Result<Option<Frame>, ReportError> {
        let Some(Reverse((url, i))) = self.heap.pop() else {
            return Ok(None);
        };
        let json = self.heads[i].take().unwrap_or_default();
        if let Some(next) = self.sources[i].next()? {
            self.heap.push(Reverse((next.url, i)));
            self.heads[i] = Some(next.json);
        }
        Ok(Some(Frame { url, json }))
    }
}

#[cfg(test)]
mod tests;
