//! Reading WARC files record by record, with each record's place in the file:
//! what indexing an existing WARC (skitter's or anyone's) needs.
//!
//! A gzip file must hold one record per gzip member (what WARC 1.1 annex D
//! recommends and every web-archive reader expects), since an index points at
//! members; a file that is one gzip stream is refused rather than indexed
//! wrongly. Each record's block is kept up to a cap and the rest read past, so a
//! huge record costs no more memory than the cap.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use flate2::bufread::GzDecoder;

/// One record as read from a WARC file.
#[derive(Debug)]
pub(crate) struct ReadRecord {
    /// Where the record (its gzip member, in a gzip file) starts in the file.
    pub offset: u64,
    /// Its length in the file (the member's compressed length, in a gzip file).
    pub length: u64,
    /// The named fields, in order, as written.
    pub fields: Vec<(String, String)>,
    /// The first bytes of the block, at most the reader's cap.
    pub block: Vec<u8>,
    /// The block was longer than the cap.
    pub block_cut: bool,
}

impl ReadRecord {
    /// The value of the named field (names compare without case).
    pub(crate) fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `WARC-Target-URI`, without the angle brackets WARC 1.0 writers put round it.
    pub(crate) fn target(&self) -> Option<&str> {
        self.field("WARC-Target-URI")
            .map(|v| v.trim_start_matches('<').trim_end_matches('>'))
    }
}

/// Reads the records of one WARC file in order.
pub(crate) struct WarcReader {
    reader: Counting<BufReader<File>>,
    gzip: bool,
    keep: usize,
}

impl WarcReader {
    /// Opens `path`; gzip is recognised by its magic bytes, not the name.
    /// Blocks are kept up to `keep` bytes.
    pub(crate) fn open(path: &Path, keep: usize) -> io::Result<WarcReader> {
        let mut reader = Counting {
            inner: BufReader::with_capacity(1 << 16, File::open(path)?),
            pos: 0,
        };
        let gzip = reader.fill_buf()?.starts_with(&[0x1f, 0x8b]);
        Ok(WarcReader { reader, gzip, keep })
    }

    /// The next record; `None` at the end of the file. A torn or malformed
    /// record is an [`io::ErrorKind::InvalidData`] error naming its offset.
    pub(crate) fn next_record(&mut self) -> io::Result<Option<ReadRecord>> {
        if self.reader.fill_buf()?.is_empty() {
            return Ok(None);
        }
        let offset = self.reader.pos;
        let parsed = if self.gzip {
            let mut member = BufReader::new(GzDecoder::new(&mut self.reader));
            let parsed = parse_record(&mut member, self.keep);
            // Whatever follows the record in the member would be a record
            // that no index could point at.
            match parsed {
                Ok(Some(p)) => match io::copy(&mut member, &mut io::sink()) {
                    Ok(0) => Ok(Some(p)),
                    Ok(_) => Err(invalid("more than one record in a gzip member")),
                    Err(e) => Err(e),
                },
                other => other,
            }
        } else {
            parse_record(&mut self.reader, self.keep)
        };
        match parsed {
            Ok(Some((fields, block, block_cut))) => Ok(Some(ReadRecord {
                offset,
                length: self.reader.pos - offset,
                fields,
                block,
                block_cut,
            })),
            Ok(None) => Err(invalid(format!("no WARC record at offset {offset}"))),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(invalid(format!(
                "the record at offset {offset} is torn (the file ends inside it)"
            ))),
            Err(e) => Err(io::Error::new(
                e.kind(),
                format!("the record at offset {offset}: {e}"),
            )),
        }
    }
}

/// The fields, kept block and whether it was cut, of one record.
type Parsed = (Vec<(String, String)>, Vec<u8>, bool);

/// Reads one record from `r`: `None` when it does not start with `WARC/`.
pub(crate) fn parse_record(r: &mut impl BufRead, keep: usize) -> io::Result<Option<Parsed>> {
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line)?;
    if !line.starts_with(b"WARC/") {
        return Ok(None);
    }
    let mut fields = Vec::new();
    let mut length = None;
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        if line == b"\r\n" || line == b"\n" {
            break;
        }
        let text = String::from_utf8_lossy(&line);
        let Some((name, value)) = text.split_once(':') else {
            return Err(invalid(format!("a header line without a colon: {text:?}")));
        };
        let (name, value) = (name.trim().to_string(), value.trim().to_string());
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .parse::<u64>()
                    .map_err(|_| invalid(format!("Content-Length {value:?}")))?,
            );
        }
        fields.push((name, value));
    }
    let length = length.ok_or_else(|| invalid("a record without Content-Length"))?;
    let mut block = Vec::new();
    let kept = (&mut *r)
        .take(length.min(keep as u64))
        .read_to_end(&mut block)? as u64;
    let skipped = io::copy(&mut (&mut *r).take(length - kept), &mut io::sink())?;
    if kept + skipped < length {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    let mut end = [0u8; 4];
    r.read_exact(&mut end)?;
    if &end != b"\r\n\r\n" {
        return Err(invalid("the block is not followed by CRLF CRLF"));
    }
    Ok(Some((fields, block, length > kept)))
}

fn invalid(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

/// A reader that knows how many bytes its consumer has taken.
pub(crate) struct Counting<R> {
    pub(crate) inner: R,
    pub(crate) pos: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt);
        self.pos += amt as u64;
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn record(kind: &str, url: &str, body: &str) -> Vec<u8> {
        format!(
            "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Target-URI: <{url}>\r\nContent-Length: {}\r\n\r\n{body}\r\n\r\n",
            body.len()
        )
        .into_bytes()
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn read_all(bytes: &[u8], keep: usize) -> io::Result<Vec<ReadRecord>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.warc");
        std::fs::write(&path, bytes).unwrap();
        let mut reader = WarcReader::open(&path, keep)?;
        let mut out = Vec::new();
        while let Some(r) = reader.next_record()? {
            out.push(r);
        }
        Ok(out)
    }

    #[test]
    fn plain_and_gzip_records_come_with_their_place() {
        let records = [
            record("request", "http://h/a", "GET"),
            record("response", "http://h/a", "HTTP/1.1 200 OK\r\n\r\nhello"),
        ];
        let members: Vec<Vec<u8>> = records.iter().map(|r| gzip(r)).collect();
        for (parts, name) in [(records.to_vec(), "plain"), (members, "gzip")] {
            let got = read_all(&parts.concat(), 8).unwrap();
            assert_eq!(got.len(), 2, "{name}");
            assert_eq!(got[1].offset, parts[0].len() as u64, "{name}");
            assert_eq!(got[1].length, parts[1].len() as u64, "{name}");
            assert_eq!(got[1].field("warc-type"), Some("response"), "{name}");
            assert_eq!(got[1].target(), Some("http://h/a"), "{name}");
            assert_eq!(got[1].block, b"HTTP/1.1", "{name}");
            assert!(got[1].block_cut, "{name}");
            assert!(!got[0].block_cut, "{name}");
        }
    }

    #[test]
    fn torn_records_and_whole_file_gzip_are_refused() {
        let whole = record("response", "http://h/a", "body");
        let torn = [whole.clone(), whole[..whole.len() - 3].to_vec()].concat();
        let e = read_all(&torn, 1024).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("torn"), "{e}");
        let one_stream = gzip(&[whole.clone(), whole.clone()].concat());
        let e = read_all(&one_stream, 1024).unwrap_err();
        assert!(e.to_string().contains("more than one record"), "{e}");
        let e = read_all(b"not a warc at all", 1024).unwrap_err();
        assert!(e.to_string().contains("no WARC record at offset 0"), "{e}");
    }
}
