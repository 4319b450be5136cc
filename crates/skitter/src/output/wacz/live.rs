//! The WACZ of a crawl, indexed while the crawl writes its WARC files.
//!
//! The WARC writer tells a [`Live`] (its [`Observer`]) every record it
//! builds, with the record's file, offset and length, and every byte it
//! appends to each file. From that, as the crawl goes, `Live` makes the
//! index lines and the page entries that reading the files back would give
//! (the same [`Scan::add`] makes both), and the SHA-256 and size of each
//! file. Packing at the end then only copies the files into the zip.
//!
//! This runs on the writer's blocking-pool thread, never on an async worker,
//! one batch of pages at a time while the crawl fetches the next ones. A
//! page's title and text come with its record ([`Built::text`]) when the
//! crawl had them: from a rendered DOM, or from a `lol_html` pass it ran
//! over the page anyway. Otherwise (most pages: the crawl's link scanner
//! needs no tokenizer) they are read here from the body, off the crawl's
//! path: a page's slot and the crawl's cores do not wait for its text.
//! Memory is what `pack` holds: the index lines through the external sort
//! (at most [`RUN_BYTES`] of lines, then sorted runs on disk), the page
//! entries in a temporary file, 8 bytes per listed page, and a hasher per
//! WARC file.
//!
//! Files in the folder that this run did not write (those of the earlier
//! runs of a resumed crawl) are not covered by the in-crawl index: they are
//! read at the end as `wacz create` reads them, and listed first, so a page
//! both hold is listed as the earlier run archived it.
//!
//! [`RUN_BYTES`]: super::sort::RUN_BYTES

use std::any::Any;
use std::io::{self, BufRead, BufReader, Seek, Write};
use std::path::{Path, PathBuf};

use super::pack::{self, PageList, Warc};
use super::package::Hashing;
use super::scan::{KEEP, Scan, scan_warc};
use super::{WaczError, WaczOptions, WaczSummary};
use crate::output::warc::{Built, Observer};

/// What the crawl's writer has told so far.
pub(crate) struct Live {
    /// Where the temporary files go: the WACZ file's folder.
    dir: PathBuf,
    /// The index lines and the pages listed; page entries are tagged with
    /// their URL's hash, for [`Live::pack`] to leave out pages the earlier
    /// runs listed.
    scan: Scan,
    pages: BufWriter,
    /// The files written, in order, each hashed as written.
    files: Vec<Written>,
}

type BufWriter = io::BufWriter<std::fs::File>;

/// A WARC file this run wrote.
struct Written {
    name: String,
    path: PathBuf,
    hash: Hashing<io::Sink>,
}

impl Live {
    /// Indexes a crawl whose WACZ goes in `dir`.
    pub(crate) fn new(dir: &Path) -> io::Result<Live> {
        // Unnamed: a killed crawl leaves no temporary file beside the WACZ.
        let pages = io::BufWriter::new(tempfile::tempfile_in(dir)?);
        Ok(Live {
            dir: dir.to_path_buf(),
            scan: Scan::tagged(dir),
            pages,
            files: Vec::new(),
        })
    }

    /// Packs the WARC files `warcs` (every file of the crawl's folder, in
    /// order) into `out`: those this run wrote from what it was told, the
    /// others read as `wacz create` reads them.
    pub(crate) fn pack(
        self,
        warcs: &[PathBuf],
        out: &Path,
        options: &WaczOptions,
    ) -> Result<WaczSummary, WaczError> {
        let fail = |e| WaczError::io(format!("cannot write {}", out.display()), e);
        let names = pack::archive_names(warcs)?;
        let Live {
            scan: live,
            pages: live_pages,
            mut files,
            ..
        } = self;
        let mut list = PageList::new(pack::folder_of(out)).map_err(fail)?;
        // The lines of the earlier runs' files join this run's; their pages
        // come first.
        let mut earlier = Scan::with_lines(live.lines);
        let mut packed = Vec::with_capacity(warcs.len());
        for (path, name) in warcs.iter().zip(names) {
            let known = match files.iter().position(|f| f.name == name) {
                Some(i) => {
                    let file = files.swap_remove(i);
                    Some(file.hash.resource(&format!("archive/{name}")))
                }
                None => {
                    scan_warc(path, &name, &mut earlier, &mut list.out).map_err(|e| {
                        WaczError::io(format!("cannot index {}", path.display()), e)
                    })?;
                    None
                }
            };
            packed.push(Warc {
                path: path.clone(),
                name,
                known,
            });
        }
        if let Some(lost) = files.first() {
            return Err(WaczError::BadInput(format!(
                "{} was written by this crawl but is not in its folder",
                lost.path.display()
            )));
        }
        list.count = earlier.pages;
        let mut entries = live_pages.into_inner().map_err(|e| fail(e.into_error()))?;
        entries.rewind().map_err(fail)?;
        list.count += untagged(BufReader::new(entries), &earlier, &mut list.out).map_err(fail)?;
        pack::write_archive(packed, earlier.lines, list, out, options)
    }
}

/// Copies the tagged page entries of `entries` to `out` without their tags,
/// leaving out the pages `earlier` listed; answers the entries copied.
fn untagged(mut entries: impl BufRead, earlier: &Scan, out: &mut impl Write) -> io::Result<u64> {
    let mut copied = 0;
    // One buffer for every entry: a page list is as long as the pages' text.
    let mut line = Vec::new();
    loop {
        line.clear();
        if entries.read_until(b'\n', &mut line)? == 0 {
            return Ok(copied);
        }
        let tag = line
            .get(..16)
            .and_then(|t| std::str::from_utf8(t).ok())
            .and_then(|t| u64::from_str_radix(t, 16).ok());
        let (Some(tag), Some(entry)) = (tag, line.get(17..)) else {
            return Err(io::Error::other("a page entry lost its tag"));
        };
        if earlier.listed(tag) {
            continue;
        }
        out.write_all(entry)?;
        if !entry.ends_with(b"\n") {
            out.write_all(b"\n")?;
        }
        copied += 1;
    }
}

impl Observer for Live {
    fn wrote(&mut self, name: &str, path: &Path, bytes: &[u8]) -> io::Result<()> {
        if self.files.last().is_none_or(|f| f.name != name) {
            self.files.push(Written {
                name: name.to_string(),
                path: path.to_path_buf(),
                hash: Hashing::new(io::sink()),
            });
        }
        if let Some(file) = self.files.last_mut() {
            file.hash.write_all(bytes)?;
        }
        Ok(())
    }

    fn record(&mut self, built: &Built<'_>) -> io::Result<()> {
        // What a reader of the file keeps of the block: KEEP bytes.
        let room = KEEP.saturating_sub(built.head.len());
        let body = &built.body[..built.body.len().min(room)];
        let capture = Built {
            body,
            truncated: built.truncated || body.len() < built.body.len(),
            ..*built
        };
        self.scan.add(&capture, &mut self.pages)
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any + Send> {
        self
    }
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("dir", &self.dir)
            .field("files", &self.files.len())
            .field("pages", &self.scan.pages)
            .finish()
    }
}
