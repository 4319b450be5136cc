//! Writing a WACZ file from WARC files, streamed, and atomically.
//!
//! The WARC files are read once to index them and list their pages (`scan`),
//! then copied into the zip through a hashing writer: a WARC is never held in
//! memory, whatever its size. A crawl's own files come indexed, listed and
//! hashed already (`live`): [`write_archive`] only copies them. The entries are `archive/*` (stored: the records
//! are gzip members already, and readers seek into them), `indexes/index.cdx.gz`
//! (stored, read by offset through `index.idx`) and `indexes/index.idx`,
//! `pages/pages.jsonl`, `datapackage.json` and `datapackage-digest.json`
//! (deflated). An entry past 4 GiB is written in zip64 form (its sizes are
//! known before it is written), and so are the offsets and the end of the
//! central directory once the file passes 4 GiB (the `zip` crate does that by
//! itself, for any archive).
//!
//! Memory stays flat whatever the crawl's size: the index lines go through an
//! external sort (`sort`: at most 16 MiB of lines in memory, runs on disk),
//! the compressed index and the page list are written to temporary files
//! before they are copied into the zip, and the pages already listed are
//! remembered by an 8-byte hash each.
//!
//! The zip is built under a temporary name in the destination's folder, synced,
//! and renamed over the destination: the file appears whole or not at all.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};
use std::path::{Path, PathBuf};

use chrono::{Datelike, Timelike, Utc};
use zip::CompressionMethod;
use zip::write::{SimpleFileOptions, ZipWriter};

use super::package::{self, DataPackage, Hashing, PackageDigest, Resource};
use super::scan::{Scan, scan_warc};
use super::sort::ExternalSort;
use super::{WaczError, zipnum};

/// How to write a WACZ file.
#[derive(Clone, Debug, Default)]
pub struct WaczOptions {
    /// The manifest's `software` (e.g. `skitter 0.1.0`).
    pub software: String,
    /// The manifest's `title`, if any.
    pub title: Option<String>,
}

/// What [`pack_wacz`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WaczSummary {
    /// The WACZ file.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// WARC files packed.
    pub warcs: usize,
    /// Index lines (captures).
    pub captures: u64,
    /// Entries in the page list.
    pub pages: u64,
}

/// The write buffer of the zip: WARC files are copied through it.
const COPY_BUFFER: usize = 1 << 20;

/// The page list's header line.
const PAGES_HEADER: &str = "{\"format\": \"json-pages-1.0\", \"id\": \"pages\", \"title\": \"All Pages\", \"hasText\": true}\n";

/// Packs the WARC files `warcs` (in that order) into a WACZ file at `out`.
///
/// Blocking: it reads and writes whole files and reads each page's text, so
/// async callers run it on the blocking pool.
pub fn pack_wacz(
    warcs: &[PathBuf],
    out: &Path,
    options: &WaczOptions,
) -> Result<WaczSummary, WaczError> {
    let names = archive_names(warcs)?;
    let dir = folder_of(out);
    let fail = |e| WaczError::io(format!("cannot write {}", out.display()), e);
    // The page list is written to a file beside the result while the WARCs are
    // read, since the pages' text is not something to hold in memory.
    let mut pages = PageList::new(dir).map_err(fail)?;
    let mut scan = Scan::new(dir);
    for (path, name) in warcs.iter().zip(&names) {
        scan_warc(path, name, &mut scan, &mut pages.out)
            .map_err(|e| WaczError::io(format!("cannot index {}", path.display()), e))?;
    }
    pages.count = scan.pages;
    let files = warcs
        .iter()
        .zip(names)
        .map(|(path, name)| Warc {
            path: path.clone(),
            name,
            known: None,
        })
        .collect();
    write_archive(files, scan.lines, pages, out, options)
}

/// The folder a file is in (`.` for a bare name).
pub(crate) fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// One WARC file to pack.
pub(crate) struct Warc {
    pub path: PathBuf,
    /// Its name in `archive/`.
    pub name: String,
    /// Its size and SHA-256 when already known (hashed as it was written):
    /// then it is only copied.
    pub known: Option<Resource>,
}

/// The page list being written: a temporary file beside the WACZ, its header
/// first.
pub(crate) struct PageList {
    /// An unnamed temporary file: a killed process leaves nothing behind.
    pub out: BufWriter<File>,
    /// Entries written.
    pub count: u64,
}

impl PageList {
    pub(crate) fn new(dir: &Path) -> io::Result<PageList> {
        let mut out = BufWriter::new(tempfile::tempfile_in(dir)?);
        out.write_all(PAGES_HEADER.as_bytes())?;
        Ok(PageList { out, count: 0 })
    }
}

/// Writes the WACZ file at `out`: the WARC files `warcs`, the index of the
/// lines in `lines`, the page list `pages`; see the module docs.
pub(crate) fn write_archive(
    warcs: Vec<Warc>,
    lines: ExternalSort,
    pages: PageList,
    out: &Path,
    options: &WaczOptions,
) -> Result<WaczSummary, WaczError> {
    let dir = folder_of(out);
    let fail = |e| WaczError::io(format!("cannot write {}", out.display()), e);
    let page_count = pages.count;
    let mut pages = pages.out.into_inner().map_err(|e| fail(e.into_error()))?;
    let pages_len = pages.metadata().map_err(fail)?.len();
    pages.rewind().map_err(fail)?;
    let captures = lines.len();
    // The compressed index (a tenth of the lines' size) goes to a file of its
    // own as the sorted lines come, so its entry's size is known before it is
    // written (zip64 only when it must be) and it is never held in memory.
    let mut blocks = BufWriter::new(tempfile::tempfile_in(dir).map_err(fail)?);
    let idx =
        zipnum::write_blocks(lines.into_sorted().map_err(fail)?, &mut blocks).map_err(fail)?;
    let mut blocks = blocks.into_inner().map_err(|e| fail(e.into_error()))?;
    let blocks_len = blocks.stream_position().map_err(fail)?;
    blocks.rewind().map_err(fail)?;

    let tmp = crate::output::temp_beside(dir, ".wacz.tmp").map_err(fail)?;
    let mut zip = ZipWriter::new(BufWriter::with_capacity(COPY_BUFFER, tmp));
    let mut resources = Vec::new();
    let zip_fail = |e: zip::result::ZipError| fail(io::Error::other(e));
    for warc in &warcs {
        let read_fail = |e| WaczError::io(format!("cannot read {}", warc.path.display()), e);
        let mut file = File::open(&warc.path).map_err(read_fail)?;
        let len = file.metadata().map_err(read_fail)?.len();
        let entry = format!("archive/{}", warc.name);
        let resource = match &warc.known {
            // Hashed as it was written: copied, not hashed again.
            Some(known) => {
                if known.bytes != len {
                    return Err(WaczError::BadInput(format!(
                        "{} changed while it was archived ({} bytes written, {len} found)",
                        warc.path.display(),
                        known.bytes
                    )));
                }
                zip.start_file(entry.as_str(), stored(len))
                    .map_err(zip_fail)?;
                let copied = io::copy(&mut file, &mut zip).map_err(read_fail)?;
                if copied != len {
                    return Err(WaczError::BadInput(format!(
                        "{} changed while it was packed",
                        warc.path.display()
                    )));
                }
                Resource {
                    path: entry,
                    ..known.clone()
                }
            }
            None => entry_with(&mut zip, &entry, stored(len), |w| {
                io::copy(&mut file, w).map(drop)
            })
            .map_err(fail)?,
        };
        resources.push(resource);
    }
    resources.push(
        entry_with(&mut zip, "indexes/index.cdx.gz", stored(blocks_len), |w| {
            io::copy(&mut blocks, w).map(drop)
        })
        .map_err(fail)?,
    );
    resources.push(
        entry_with(&mut zip, "indexes/index.idx", deflated(0), |w| {
            w.write_all(idx.as_bytes())
        })
        .map_err(fail)?,
    );
    resources.push(
        // The fastest level: the page list is as long as the pages' text
        // (80 MB for 20,000 pages of the test site), which the default
        // level takes 2.6 times as long to deflate (see benchmarks/wacz.md).
        entry_with(
            &mut zip,
            "pages/pages.jsonl",
            deflated(pages_len).compression_level(Some(1)),
            |w| io::copy(&mut pages, w).map(drop),
        )
        .map_err(fail)?,
    );
    let manifest = DataPackage {
        profile: "data-package".into(),
        resources,
        title: options.title.clone(),
        main_page_url: None,
        main_page_date: None,
        created: Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        wacz_version: package::WACZ_VERSION.into(),
        software: options.software.clone(),
    };
    let manifest = serde_json::to_vec_pretty(&manifest).map_err(|e| fail(e.into()))?;
    let digest = Hashing::new(io::sink());
    let digest = {
        let mut d = digest;
        d.write_all(&manifest).map_err(fail)?;
        d.resource(package::DATAPACKAGE)
    };
    let digest = serde_json::to_vec_pretty(&PackageDigest {
        path: package::DATAPACKAGE.into(),
        hash: digest.hash,
    })
    .map_err(|e| fail(e.into()))?;
    for (name, bytes) in [
        (package::DATAPACKAGE, &manifest),
        (package::DIGEST, &digest),
    ] {
        zip.start_file(name, deflated(0)).map_err(zip_fail)?;
        zip.write_all(bytes).map_err(fail)?;
    }
    let tmp = zip
        .finish()
        .map_err(zip_fail)?
        .into_inner()
        .map_err(|e| fail(e.into_error()))?;
    tmp.as_file().sync_all().map_err(fail)?;
    let bytes = tmp.as_file().metadata().map_err(fail)?.len();
    tmp.persist(out).map_err(|e| fail(e.error))?;
    crate::output::sync_dir(dir).map_err(fail)?;
    Ok(WaczSummary {
        path: out.to_path_buf(),
        bytes,
        warcs: warcs.len(),
        captures,
        pages: page_count,
    })
}

/// The WARC files' names in `archive/`: their own file names, which must differ
/// (the index names records by file name alone).
pub(crate) fn archive_names(warcs: &[PathBuf]) -> Result<Vec<String>, WaczError> {
    let mut seen = HashSet::new();
    let mut names = Vec::with_capacity(warcs.len());
    for path in warcs {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| WaczError::BadInput(format!("{} is not a file", path.display())))?;
        if !seen.insert(name.clone()) {
            return Err(WaczError::BadInput(format!(
                "two WARC files are named {name}; the archive keeps one folder of them"
            )));
        }
        names.push(name);
    }
    if names.is_empty() {
        return Err(WaczError::BadInput("no WARC files to pack".into()));
    }
    Ok(names)
}

/// Writes one entry through `fill`, hashing it for the manifest.
fn entry_with<W: Write + Seek>(
    zip: &mut ZipWriter<W>,
    path: &str,
    options: SimpleFileOptions,
    fill: impl FnOnce(&mut Hashing<&mut ZipWriter<W>>) -> io::Result<()>,
) -> io::Result<Resource> {
    zip.start_file(path, options).map_err(io::Error::other)?;
    let mut hashing = Hashing::new(&mut *zip);
    fill(&mut hashing)?;
    Ok(hashing.resource(path))
}

/// Options for an entry of `len` bytes stored as it is; zip64 when it passes 4 GiB.
fn stored(len: u64) -> SimpleFileOptions {
    options()
        .compression_method(CompressionMethod::Stored)
        .large_file(len >= u32::MAX as u64)
}

/// Options for an entry of `len` bytes deflated; zip64 when it passes 4 GiB
/// (a page list of very many long pages).
fn deflated(len: u64) -> SimpleFileOptions {
    options()
        .compression_method(CompressionMethod::Deflated)
        .large_file(len >= u32::MAX as u64)
}

/// Entries are dated now, and readable by all like any file skitter writes.
fn options() -> SimpleFileOptions {
    let now = Utc::now();
    let time = zip::DateTime::from_date_and_time(
        now.year().clamp(1980, 2107) as u16,
        now.month() as u8,
        now.day() as u8,
        now.hour() as u8,
        now.minute() as u8,
        now.second() as u8,
    )
    .unwrap_or_default();
    SimpleFileOptions::default()
        .last_modified_time(time)
        .unix_permissions(0o644)
}
