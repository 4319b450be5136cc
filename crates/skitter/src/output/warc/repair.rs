//! Repairing a WARC file whose writer was killed: the file is cut back to the end
//! of its last whole record, so a resumed crawl never leaves a torn record behind.
//!
//! The sink writes each request/response pair with one `write_all`, but a
//! SIGKILL can still land in the middle of a multi-page `write(2)` (Linux checks
//! for fatal signals between pages), leaving part of a record at the end. For a
//! gzip file a record is whole when its gzip member decodes to the end with a
//! matching CRC; for an uncompressed file, when its header parses and the
//! `Content-Length` bytes plus the closing CRLF CRLF are all there.
//!
//! It also returns the target URIs of the last response records kept: a run that
//! was killed may have archived pages it had not completed, which the resumed run
//! fetches again and should not archive twice (`WarcOptions::already_archived`).

use std::collections::{HashSet, VecDeque};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use flate2::bufread::GzDecoder;

/// What [`repair_warc`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WarcRepair {
    /// Whole records (gzip members, or records of a plain file) kept.
    pub records: u64,
    /// Bytes cut from the end (0 when the file already ended on a record boundary).
    pub cut: u64,
    /// The file's length afterwards: where its last whole record ends.
    pub len: u64,
    /// `WARC-Target-URI` of the last response records kept (at most the number asked for).
    pub recent_responses: HashSet<String>,
}

/// Checks the WARC file at `path` record by record and truncates it after the
/// last whole record, noting the targets of the last `recent` response records.
/// Gzip is assumed when the name ends in `.gz`.
pub fn repair_warc(path: &Path, recent: usize) -> io::Result<WarcRepair> {
    let file = crate::output::open_output(path, false)?;
    let len = file.metadata()?.len();
    let mut reader = Counting {
        inner: BufReader::with_capacity(1 << 16, file.try_clone()?),
        pos: 0,
    };
    let gzip = path.to_string_lossy().ends_with(".gz");
    let mut targets = Recent::new(recent);
    let (records, whole) = if gzip {
        whole_members(&mut reader, &mut targets)?
    } else {
        whole_records(&mut reader, &mut targets)?
    };
    if whole < len {
        file.set_len(whole)?;
        file.sync_all()?;
    }
    Ok(WarcRepair {
        records,
        cut: len - whole,
        len: whole,
        recent_responses: targets.urls.into_iter().collect(),
    })
}

/// The target URIs of the last few response records seen.
struct Recent {
    urls: VecDeque<String>,
    max: usize,
}

impl Recent {
    fn new(max: usize) -> Recent {
        Recent {
            urls: VecDeque::new(),
            max,
        }
    }

    /// Notes a record's header (the bytes up to its blank line, or more).
    fn note(&mut self, header: &[u8]) {
        if self.max == 0 {
            return;
        }
        let mut response = false;
        let mut target = None;
        for line in header.split(|&b| b == b'\n') {
            let line = String::from_utf8_lossy(line);
            let Some((name, value)) = line.split_once(':') else {
                if line.trim().is_empty() {
                    break;
                }
                continue;
            };
            let value = value.trim();
            if name.eq_ignore_ascii_case("warc-type") {
                response = value == "response";
            } else if name.eq_ignore_ascii_case("warc-target-uri") {
                target = Some(value.trim_matches(['<', '>']).to_string());
            }
        }
        if let (true, Some(url)) = (response, target) {
            if self.urls.len() == self.max {
                self.urls.pop_front();
            }
            self.urls.push_back(url);
        }
    }
}

/// A reader that knows how many bytes its consumer has taken.
struct Counting {
    inner: BufReader<File>,
    pos: u64,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl BufRead for Counting {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt);
        self.pos += amt as u64;
    }
}

/// Counts the whole gzip members from the start; returns them and where the last
/// one ends. `bufread::GzDecoder` consumes exactly one member, so the position
/// after it is the member boundary.
fn whole_members(reader: &mut Counting, targets: &mut Recent) -> io::Result<(u64, u64)> {
    let mut members = 0;
    let mut whole = 0;
    let mut head = Vec::new();
    while !reader.fill_buf()?.is_empty() {
        head.clear();
        let member = GzDecoder::new(&mut *reader);
        match read_head(member, &mut head) {
            Ok(()) => {
                members += 1;
                whole = reader.pos;
                targets.note(&head);
            }
            Err(e) if torn(&e) => break,
            Err(e) => return Err(e),
        }
    }
    Ok((members, whole))
}

/// Bytes of a record kept for [`Recent::note`]: its WARC header is all it needs.
/// The rest of a member is decoded (its CRC is checked at its end) but not kept,
/// so a file that is one huge gzip stream is checked in bounded memory.
const HEAD_BYTES: usize = 64 * 1024;

/// Reads `member` to its end, keeping its first [`HEAD_BYTES`] in `head`.
fn read_head(mut member: impl Read, head: &mut Vec<u8>) -> io::Result<()> {
    (&mut member).take(HEAD_BYTES as u64).read_to_end(head)?;
    let mut scratch = [0u8; 16 * 1024];
    loop {
        match member.read(&mut scratch) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Errors that mean "the data ends or goes wrong here", as opposed to failing to
/// read the file at all.
fn torn(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::UnexpectedEof | io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput
    )
}

/// Counts the whole records of an uncompressed WARC file.
fn whole_records(reader: &mut Counting, targets: &mut Recent) -> io::Result<(u64, u64)> {
    let mut records = 0;
    let mut whole = 0;
    loop {
        match one_record(reader)? {
            Some(header) => {
                records += 1;
                whole = reader.pos;
                targets.note(&header);
            }
            None => return Ok((records, whole)),
        }
    }
}

/// Reads one record and returns its header; `None` at the end of the file or
/// where a record is torn.
fn one_record(reader: &mut Counting) -> io::Result<Option<Vec<u8>>> {
    let mut header = Vec::new();
    let mut line = Vec::new();
    let mut content_length = None;
    let mut first = true;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 || !line.ends_with(b"\n") {
            return Ok(None);
        }
        if first {
            if !line.starts_with(b"WARC/") {
                return Ok(None);
            }
            first = false;
            continue;
        }
        if line == b"\r\n" {
            break;
        }
        header.extend_from_slice(&line);
        let text = String::from_utf8_lossy(&line);
        if let Some((name, value)) = text.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            content_length = value.trim().parse::<u64>().ok();
        }
    }
    let Some(block) = content_length else {
        return Ok(None);
    };
    let copied = io::copy(&mut (&mut *reader).take(block), &mut io::sink())?;
    let mut end = [0u8; 4];
    if copied < block || reader.read_exact(&mut end).is_err() || &end != b"\r\n\r\n" {
        return Ok(None);
    }
    Ok(Some(header))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn plain_record(body: &str) -> Vec<u8> {
        format!(
            "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: {}\r\n\r\n{body}\r\n\r\n",
            body.len()
        )
        .into_bytes()
    }

    fn gzip_member(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    /// Writes `records` then `tail` to a file named `name`, repairs it, and
    /// returns the repair and the file's bytes afterwards.
    fn repaired(name: &str, records: &[Vec<u8>], tail: &[u8]) -> (WarcRepair, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        let mut bytes: Vec<u8> = records.concat();
        bytes.extend_from_slice(tail);
        std::fs::write(&path, &bytes).unwrap();
        let repair = repair_warc(&path, 8).unwrap();
        (repair, std::fs::read(&path).unwrap())
    }

    #[test]
    fn gzip_files_are_cut_after_the_last_whole_member() {
        let a = gzip_member(&plain_record("first"));
        let b = gzip_member(&plain_record("second"));
        let whole = [a.clone(), b.clone()];
        let (repair, bytes) = repaired("x.warc.gz", &whole, &[]);
        assert_eq!((repair.records, repair.cut), (2, 0));
        assert_eq!(bytes, whole.concat());
        // A member torn at every possible length is cut, the whole ones kept.
        let torn = gzip_member(&plain_record("third, torn"));
        for keep in 1..torn.len() {
            let (repair, bytes) = repaired("x.warc.gz", &whole, &torn[..keep]);
            assert_eq!(repair.records, 2, "torn at {keep}");
            assert_eq!(repair.cut, keep as u64);
            assert_eq!(bytes, whole.concat());
        }
    }

    #[test]
    fn plain_files_are_cut_after_the_last_whole_record() {
        let whole = [plain_record("one"), plain_record("two")];
        let (repair, _) = repaired("x.warc", &whole, &[]);
        assert_eq!((repair.records, repair.cut), (2, 0));
        let torn = plain_record("three, torn");
        for keep in 1..torn.len() {
            let (repair, bytes) = repaired("x.warc", &whole, &torn[..keep]);
            assert_eq!(repair.records, 2, "torn at {keep}");
            assert_eq!(bytes, whole.concat(), "torn at {keep}");
        }
    }

    #[test]
    fn a_huge_member_is_checked_without_holding_it() {
        // One member that decodes to far more than HEAD_BYTES: still one whole
        // record, and its header still noted.
        let big = "x".repeat(HEAD_BYTES * 8);
        let mut record = response("http://h/big");
        record.extend_from_slice(big.as_bytes());
        let member = gzip_member(&record);
        let (repair, bytes) = repaired("x.warc.gz", std::slice::from_ref(&member), &member[..40]);
        assert_eq!((repair.records, repair.cut), (1, 40));
        assert_eq!(bytes, member);
        assert!(repair.recent_responses.contains("http://h/big"));
    }

    #[test]
    fn garbage_after_whole_records_is_cut() {
        let whole = [gzip_member(&plain_record("one"))];
        let (repair, bytes) = repaired("x.warc.gz", &whole, b"not gzip at all");
        assert_eq!(repair.records, 1);
        assert_eq!(bytes, whole.concat());
        let (repair, _) = repaired("x.warc.gz", &[], b"");
        assert_eq!(repair, WarcRepair::default());
    }

    fn response(url: &str) -> Vec<u8> {
        format!(
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\nContent-Length: 2\r\n\r\nok\r\n\r\n"
        )
        .into_bytes()
    }

    #[test]
    fn the_last_responses_are_noted() {
        let mut records: Vec<Vec<u8>> = (0..12)
            .map(|i| response(&format!("http://h/{i}")))
            .collect();
        records.insert(5, plain_record("not a response"));
        let want: HashSet<String> = (4..12).map(|i| format!("http://h/{i}")).collect();
        let (plain, _) = repaired("x.warc", &records, b"WARC/1.1\r\nWARC-Type: resp");
        assert_eq!(plain.recent_responses, want);
        let members: Vec<Vec<u8>> = records.iter().map(|r| gzip_member(r)).collect();
        let (gz, _) = repaired("x.warc.gz", &members, &[0x1f, 0x8b]);
        assert_eq!(gz.recent_responses, want);
        assert_eq!(gz.records, 13);
    }
}
