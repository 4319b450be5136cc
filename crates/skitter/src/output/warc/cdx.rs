//! The CDXJ index of the WARC files: one line per response or revisit record, as pywb reads it.
//!
//! A line is `urlkey timestamp14 {json}`, where the key is the URL in SURT form
//! ([`surt`](super::surt), byte for byte what pywb's canonicaliser computes for a
//! lookup) so that lines for one site sort together, and the JSON carries `url, mime, status, digest, length, offset,
//! filename` as strings, as pywb's own indexer writes them.
//!
//! Lines are appended to the file with each batch of records, right after the
//! records themselves are written, so a killed crawl keeps the index of what it
//! archived; the file is sorted by [`sort_file`] when the crawl finishes, since
//! pywb binary-searches it (until then it is in archiving order). A line is
//! never written before its record, so it never points past the end of a WARC
//! file; a record whose line was lost to a kill is found by [`resume`].

use std::collections::HashSet;
use std::fs;
use std::io::{self, BufRead, Write};
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::Serialize;
use url::Url;

use super::surt::surt;

/// The JSON part of a CDXJ line; field order is pywb's.
#[derive(Serialize)]
struct Fields<'a> {
    url: &'a str,
    mime: &'a str,
    status: String,
    digest: &'a str,
    length: String,
    offset: String,
    filename: &'a str,
}

/// Where a response record lives, and what it holds.
pub(crate) struct Entry<'a> {
    /// The target URI.
    pub url: &'a Url,
    /// When the request was sent.
    pub date: DateTime<Utc>,
    /// The response media type (`unk` when none was given, as pywb writes it).
    pub mime: Option<&'a str>,
    /// The HTTP status.
    pub status: Option<u16>,
    /// Base32 SHA-1 of the payload.
    pub digest: &'a str,
    /// The record's length in the file (compressed length for gzip members).
    pub length: u64,
    /// The record's offset in the file.
    pub offset: u64,
    /// The WARC file's name (no directory: pywb resolves it against its archive dir).
    pub filename: &'a str,
}

/// One CDXJ line, without the newline.
pub(crate) fn line(e: &Entry<'_>) -> String {
    let fields = Fields {
        url: e.url.as_str(),
        mime: e.mime.unwrap_or("unk"),
        status: e.status.map_or_else(|| "-".to_string(), |s| s.to_string()),
        digest: e.digest,
        length: e.length.to_string(),
        offset: e.offset.to_string(),
        filename: e.filename,
    };
    // Serialising a struct of strings cannot fail.
    let json = serde_json::to_string(&fields).unwrap_or_default();
    format!("{} {} {json}", surt(e.url), e.date.format("%Y%m%d%H%M%S"))
}

/// Sorts the lines of the index at `path` bytewise, through a temporary file and
/// a rename, so the index is either the unsorted one or the whole sorted one.
/// Returns the file's size.
pub(crate) fn sort_file(path: &Path) -> io::Result<u64> {
    let mut lines: Vec<Vec<u8>> = Vec::new();
    for line in io::BufReader::new(fs::File::open(path)?).split(b'\n') {
        let line = line?;
        if !line.is_empty() {
            lines.push(line);
        }
    }
    lines.sort_unstable();
    rewrite(path, |out| {
        let mut bytes = 0u64;
        for l in &lines {
            bytes += put_line(out, l)?;
        }
        Ok(bytes)
    })
}

/// Writes one line and its newline; answers the bytes written.
fn put_line(out: &mut impl Write, line: &[u8]) -> io::Result<u64> {
    out.write_all(line)?;
    out.write_all(b"\n")?;
    Ok(line.len() as u64 + 1)
}

/// Replaces the file at `path` with what `fill` writes (answering its byte
/// count), through a temporary file in its directory and a rename (never
/// writing through a link there); returns the bytes written.
fn rewrite(
    path: &Path,
    fill: impl FnOnce(&mut io::BufWriter<tempfile::NamedTempFile>) -> io::Result<u64>,
) -> io::Result<u64> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let tmp = crate::output::temp_beside(dir, ".cdxj.tmp")?;
    let mut out = io::BufWriter::new(tmp);
    let bytes = fill(&mut out)?;
    let tmp = out.into_inner().map_err(|e| e.into_error())?;
    // The index keeps the mode it had (a new one gets the umask's).
    if let Ok(meta) = fs::metadata(path) {
        tmp.as_file().set_permissions(meta.permissions())?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(bytes)
}

/// The fields [`resume`] reads back from a line.
#[derive(serde::Deserialize)]
struct Located {
    url: String,
    offset: String,
    length: String,
    filename: String,
}

/// Readies the index at `path` for a resumed crawl whose last WARC file,
/// `last_file` (its name), was cut back to `last_len` bytes: drops torn lines and
/// lines that point past that end, and returns the URLs the file's kept lines
/// index. Its responses whose URLs are not among them were archived by a run
/// killed before it wrote their lines; the resumed run archives them again.
///
/// The index is streamed, line by line, into its replacement: memory holds one
/// line and the last file's URLs, never the index (which covers every WARC
/// file of the crawl).
pub fn resume(path: &Path, last_file: &str, last_len: u64) -> io::Result<HashSet<String>> {
    let data = io::BufReader::new(fs::File::open(path)?);
    let mut indexed = HashSet::new();
    rewrite(path, |out| {
        keep_resumable(data, out, last_file, last_len, &mut indexed)
    })?;
    Ok(indexed)
}

/// Copies the lines of `data` that [`resume`] keeps to `out` as they are read,
/// noting in `indexed` the URLs of `last_file`'s; answers the bytes written.
fn keep_resumable(
    data: impl BufRead,
    out: &mut impl Write,
    last_file: &str,
    last_len: u64,
    indexed: &mut HashSet<String>,
) -> io::Result<u64> {
    let mut bytes = 0;
    for line in data.split(b'\n') {
        let line = line?;
        let Some(located) = line
            .iter()
            .position(|&b| b == b'{')
            .and_then(|i| serde_json::from_slice::<Located>(&line[i..]).ok())
        else {
            continue;
        };
        if located.filename == last_file {
            let end = located
                .offset
                .parse::<u64>()
                .ok()
                .zip(located.length.parse::<u64>().ok());
            match end {
                Some((offset, length)) if offset.saturating_add(length) <= last_len => {
                    indexed.insert(located.url);
                }
                _ => continue,
            }
        }
        bytes += put_line(out, &line)?;
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_is_pywb_shaped() {
        let url = Url::parse("http://example.com/a").unwrap();
        let date = DateTime::parse_from_rfc3339("2024-01-02T03:04:05.678Z")
            .unwrap()
            .with_timezone(&Utc);
        let got = line(&Entry {
            url: &url,
            date,
            mime: Some("text/html"),
            status: Some(200),
            digest: "ABC",
            length: 10,
            offset: 20,
            filename: "x.warc.gz",
        });
        assert_eq!(
            got,
            "com,example)/a 20240102030405 {\"url\":\"http://example.com/a\",\"mime\":\"text/html\",\
             \"status\":\"200\",\"digest\":\"ABC\",\"length\":\"10\",\"offset\":\"20\",\
             \"filename\":\"x.warc.gz\"}"
        );
    }

    fn entry_line(url: &str, offset: u64, filename: &str) -> String {
        let url = Url::parse(url).unwrap();
        line(&Entry {
            url: &url,
            date: Utc::now(),
            mime: None,
            status: Some(200),
            digest: "D",
            length: 10,
            offset,
            filename,
        })
    }

    #[test]
    fn resume_keeps_what_the_cut_files_still_hold() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.cdxj");
        let lines = [
            entry_line("http://h/old", 0, "a.warc.gz"),
            entry_line("http://h/1", 0, "b.warc.gz"),
            entry_line("http://h/2", 10, "b.warc.gz"),
            // Past the end of the repaired file: its record was cut.
            entry_line("http://h/3", 20, "b.warc.gz"),
        ];
        let mut text = lines.join("\n");
        text.push_str("\ncom,h)/torn 2024 {\"url\":");
        std::fs::write(&path, text).unwrap();
        let indexed = resume(&path, "b.warc.gz", 25).unwrap();
        let want: HashSet<String> = ["http://h/1", "http://h/2"].map(String::from).into();
        assert_eq!(indexed, want);
        let kept = std::fs::read_to_string(&path).unwrap();
        assert_eq!(kept, format!("{}\n", lines[..3].join("\n")));
        sort_file(&path).unwrap();
        let sorted = std::fs::read_to_string(&path).unwrap();
        let mut want: Vec<&str> = lines[..3].iter().map(String::as_str).collect();
        want.sort_unstable();
        assert_eq!(sorted, format!("{}\n", want.join("\n")));
    }

    /// The index is copied as it is read: the first kept lines reach the
    /// output while most of the index is still unread, so memory never holds
    /// the whole index.
    #[test]
    fn resume_streams_the_index() {
        use std::cell::Cell;
        use std::rc::Rc;

        /// Serves `lines` lines of index, counting the bytes served.
        struct Index {
            text: Vec<u8>,
            at: usize,
            served: Rc<Cell<usize>>,
        }
        impl io::Read for Index {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = buf.len().min(self.text.len() - self.at).min(4096);
                buf[..n].copy_from_slice(&self.text[self.at..self.at + n]);
                self.at += n;
                self.served.set(self.at);
                Ok(n)
            }
        }
        /// Notes how much of the index had been served at its first write.
        struct Out {
            served: Rc<Cell<usize>>,
            first: Option<usize>,
        }
        impl Write for Out {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.first.get_or_insert(self.served.get());
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let text: String = (0..20_000)
            .map(|i| entry_line(&format!("http://h/{i}"), i * 10, "a.warc.gz") + "\n")
            .collect();
        let total = text.len();
        let served = Rc::new(Cell::new(0));
        let data = io::BufReader::new(Index {
            text: text.into_bytes(),
            at: 0,
            served: Rc::clone(&served),
        });
        let mut out = io::BufWriter::with_capacity(
            8192,
            Out {
                served: Rc::clone(&served),
                first: None,
            },
        );
        let mut indexed = HashSet::new();
        let bytes = keep_resumable(data, &mut out, "b.warc.gz", 0, &mut indexed).unwrap();
        assert_eq!(bytes as usize, total, "every line of another file is kept");
        let first = out.get_ref().first.expect("written");
        assert!(
            first < total / 100,
            "first write after {first} of {total} bytes"
        );
    }
}
