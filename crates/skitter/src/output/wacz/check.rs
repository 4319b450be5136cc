//! Checking a WACZ file: its structure, every listed file's size and hash, and
//! that each index entry points at a record that is there.
//!
//! Problems are collected, not stopped at, so one run says everything that is
//! wrong; only a file that cannot be read as a zip at all is an error. Every
//! file is read streamed (hashed as it is read), and the index a block at a
//! time, so checking a large archive takes no more memory than a small one.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use flate2::bufread::{GzDecoder, MultiGzDecoder};
use zip::{CompressionMethod, ZipArchive};

use super::WaczError;
use super::package::{self, DataPackage, Hashing, PackageDigest};
use super::zipnum;
use crate::output::warc::read::parse_record;

/// Something wrong with a WACZ file, as [`validate_wacz`] reports it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WaczProblem {
    /// A file the format requires is not there.
    #[error("{0} is missing")]
    Missing(String),
    /// `datapackage.json` cannot be read as a manifest.
    #[error("datapackage.json is not a data package: {0}")]
    BadManifest(String),
    /// The manifest is not of the version checked.
    #[error("wacz_version is {0:?}, not {version}", version = package::WACZ_VERSION)]
    Version(String),
    /// A file listed in the manifest has other bytes than it says.
    #[error("{path}: the manifest says {listed}, the file is {actual}")]
    Mismatch {
        /// The file's path in the zip.
        path: String,
        /// The manifest's hash and size.
        listed: String,
        /// The file's.
        actual: String,
    },
    /// A file's bytes in the zip are damaged (its CRC-32 does not match).
    #[error("{path} is damaged in the zip: {why}")]
    Damaged {
        /// The file's path in the zip.
        path: String,
        /// What the zip reader said.
        why: String,
    },
    /// A file in the zip is not in the manifest.
    #[error("{0} is not listed in datapackage.json")]
    Unlisted(String),
    /// A file that readers seek into is compressed in the zip.
    #[error("{0} is compressed in the zip; it must be stored")]
    NotStored(String),
    /// `datapackage-digest.json` does not match `datapackage.json`.
    #[error("datapackage-digest.json does not match datapackage.json")]
    DigestMismatch,
    /// The index cannot be read.
    #[error("the index is unreadable: {0}")]
    BadIndex(String),
    /// An index entry points where there is no record for its URL.
    #[error("the index entry for {url} points at {filename} offset {offset}: {why}")]
    Dangling {
        /// The entry's URL.
        url: String,
        /// The WARC file it names.
        filename: String,
        /// The offset it gives.
        offset: u64,
        /// What is there instead.
        why: String,
    },
    /// The page list is malformed.
    #[error("pages/pages.jsonl: {0}")]
    BadPages(String),
}

/// What [`validate_wacz`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WaczCheck {
    /// Files listed in the manifest (and checked).
    pub resources: usize,
    /// Index entries checked against their records.
    pub captures: u64,
    /// Entries in the page list.
    pub pages: u64,
    /// Everything wrong; empty for a valid file.
    pub problems: Vec<WaczProblem>,
}

/// Checks the WACZ file at `path`; see the module docs. Blocking.
pub fn validate_wacz(path: &Path) -> Result<WaczCheck, WaczError> {
    let fail = |e| WaczError::io(format!("cannot read {}", path.display()), e);
    let file = File::open(path).map_err(fail)?;
    let mut zip = ZipArchive::new(BufReader::new(file))
        .map_err(|e| WaczError::NotZip(path.display().to_string(), e))?;
    let mut check = WaczCheck::default();
    let Some(manifest) = manifest(&mut zip, &mut check).map_err(fail)? else {
        return Ok(check);
    };
    check_files(&mut zip, &manifest, &mut check).map_err(fail)?;
    check_index(&mut zip, &mut check).map_err(fail)?;
    check_pages(&mut zip, &mut check).map_err(fail)?;
    Ok(check)
}

type Zip = ZipArchive<BufReader<File>>;

/// Reads `datapackage.json` and checks it against its digest file.
fn manifest(zip: &mut Zip, check: &mut WaczCheck) -> io::Result<Option<DataPackage>> {
    let Some(bytes) = read_small(zip, package::DATAPACKAGE)? else {
        check
            .problems
            .push(WaczProblem::Missing(package::DATAPACKAGE.into()));
        return Ok(None);
    };
    let manifest: DataPackage = match serde_json::from_slice(&bytes) {
        Ok(m) => m,
        Err(e) => {
            check.problems.push(WaczProblem::BadManifest(e.to_string()));
            return Ok(None);
        }
    };
    if manifest.profile != "data-package" {
        let why = format!("profile is {:?}", manifest.profile);
        check.problems.push(WaczProblem::BadManifest(why));
    }
    if manifest.wacz_version != package::WACZ_VERSION {
        let version = manifest.wacz_version.clone();
        check.problems.push(WaczProblem::Version(version));
    }
    match read_small(zip, package::DIGEST)? {
        None => check
            .problems
            .push(WaczProblem::Missing(package::DIGEST.into())),
        Some(digest) => {
            let mut hashing = Hashing::new(io::sink());
            io::Write::write_all(&mut hashing, &bytes)?;
            let want = hashing.resource(package::DATAPACKAGE).hash;
            match serde_json::from_slice::<PackageDigest>(&digest) {
                Ok(d) if d.hash == want && d.path == package::DATAPACKAGE => {}
                _ => check.problems.push(WaczProblem::DigestMismatch),
            }
        }
    }
    Ok(Some(manifest))
}

/// Every listed file is there with its size and hash, every file is listed, and
/// the WARCs and the compressed index are stored.
fn check_files(zip: &mut Zip, manifest: &DataPackage, check: &mut WaczCheck) -> io::Result<()> {
    let names: Vec<String> = zip
        .file_names_raw()
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    let listed: HashSet<&str> = manifest.resources.iter().map(|r| r.path.as_str()).collect();
    for name in &names {
        if !name.ends_with('/')
            && name != package::DATAPACKAGE
            && name != package::DIGEST
            && !listed.contains(name.as_str())
        {
            check.problems.push(WaczProblem::Unlisted(name.clone()));
        }
    }
    for required in [
        "indexes/index.cdx.gz",
        "indexes/index.idx",
        "pages/pages.jsonl",
    ] {
        if !names.iter().any(|n| n == required) {
            check.problems.push(WaczProblem::Missing(required.into()));
        }
    }
    if !names.iter().any(|n| n.starts_with("archive/")) {
        check
            .problems
            .push(WaczProblem::Missing("archive/*.warc.gz".into()));
    }
    for resource in &manifest.resources {
        check.resources += 1;
        let mut entry = match zip.by_name(&resource.path) {
            Ok(entry) => entry,
            Err(_) => {
                check
                    .problems
                    .push(WaczProblem::Missing(resource.path.clone()));
                continue;
            }
        };
        let seekable = resource.path.starts_with("archive/") || resource.path.ends_with(".cdx.gz");
        if seekable && entry.compression() != CompressionMethod::Stored {
            check
                .problems
                .push(WaczProblem::NotStored(resource.path.clone()));
        }
        let mut hashing = Hashing::new(io::sink());
        match io::copy(&mut entry, &mut hashing) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                check.problems.push(WaczProblem::Damaged {
                    path: resource.path.clone(),
                    why: e.to_string(),
                });
                continue;
            }
            Err(e) => return Err(e),
        }
        let actual = hashing.resource(&resource.path);
        if actual.hash != resource.hash || actual.bytes != resource.bytes {
            check.problems.push(WaczProblem::Mismatch {
                path: resource.path.clone(),
                listed: format!("{} bytes, {}", resource.bytes, resource.hash),
                actual: format!("{} bytes, {}", actual.bytes, actual.hash),
            });
        }
    }
    Ok(())
}

/// The fields of an index line that locate its record.
#[derive(serde::Deserialize)]
struct Located {
    url: String,
    offset: String,
    length: String,
    filename: String,
}

/// Each block the `.idx` names starts with its key, and each index entry
/// points at a record of its URL.
fn check_index(zip: &mut Zip, check: &mut WaczCheck) -> io::Result<()> {
    if let Some(idx) = read_small(zip, "indexes/index.idx")? {
        let idx = String::from_utf8_lossy(&idx).into_owned();
        if let Err(why) = check_idx(zip, &idx) {
            check.problems.push(WaczProblem::BadIndex(why));
        }
    }
    let Ok(entry) = zip.by_name("indexes/index.cdx.gz") else {
        return Ok(());
    };
    if entry.size() == 0 {
        // No captures: an archive of nothing but its warcinfo.
        return Ok(());
    }
    // The lines are read a block at a time, and each record looked up as its
    // line comes, so nothing holds the whole index.
    let mut lines = Vec::new();
    let mut reader = BufReader::new(MultiGzDecoder::new(BufReader::new(entry)));
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => lines.push(line.trim_end().to_string()),
            Err(e) => {
                check.problems.push(WaczProblem::BadIndex(e.to_string()));
                break;
            }
        }
        if lines.len() == zipnum::LINES {
            drop(reader);
            return check_index_by_blocks(zip, check);
        }
    }
    drop(reader);
    for line in &lines {
        check_line(zip, line, check)?;
    }
    Ok(())
}

/// [`check_index`] for an index of many blocks: one block at a time, through
/// the `.idx`.
fn check_index_by_blocks(zip: &mut Zip, check: &mut WaczCheck) -> io::Result<()> {
    let Some(idx) = read_small(zip, "indexes/index.idx")? else {
        return Ok(());
    };
    let idx = String::from_utf8_lossy(&idx).into_owned();
    for place in idx.lines().skip(1).filter_map(zipnum::parse_idx_line) {
        let block = read_block(zip, place.offset, place.length)?;
        for line in block.lines() {
            check_line(zip, line, check)?;
        }
    }
    Ok(())
}

/// Checks that every block the `.idx` names is a gzip member starting with
/// its key.
fn check_idx(zip: &mut Zip, idx: &str) -> Result<(), String> {
    let mut lines = idx.lines();
    if !lines.next().is_some_and(|l| l.starts_with("!meta")) {
        return Err("index.idx does not start with its !meta line".into());
    }
    for line in lines {
        let place = zipnum::parse_idx_line(line).ok_or_else(|| format!("index.idx: {line:?}"))?;
        let block = read_block(zip, place.offset, place.length).map_err(|e| e.to_string())?;
        if !block.starts_with(&place.key) {
            return Err(format!(
                "the block at {} does not start with {}",
                place.offset, place.key
            ));
        }
    }
    Ok(())
}

/// The text of the gzip block at `offset` in `index.cdx.gz`.
fn read_block(zip: &mut Zip, offset: u64, length: u64) -> io::Result<String> {
    let mut entry = zip
        .by_name_seek("indexes/index.cdx.gz")
        .map_err(io::Error::other)?;
    entry.seek(SeekFrom::Start(offset))?;
    let mut text = String::new();
    GzDecoder::new(BufReader::new(entry.take(length))).read_to_string(&mut text)?;
    Ok(text)
}

/// Checks one index line: its record is in the WARC it names, at its offset.
fn check_line(zip: &mut Zip, line: &str, check: &mut WaczCheck) -> io::Result<()> {
    check.captures += 1;
    let Some(located) = line
        .split_once('{')
        .and_then(|(_, json)| serde_json::from_str::<Located>(&format!("{{{json}")).ok())
    else {
        check
            .problems
            .push(WaczProblem::BadIndex(format!("a line reads {line:?}")));
        return Ok(());
    };
    let offset = located.offset.parse::<u64>().unwrap_or(u64::MAX);
    let length = located.length.parse::<u64>().unwrap_or(0);
    let dangling = |why: String| WaczProblem::Dangling {
        url: located.url.clone(),
        filename: located.filename.clone(),
        offset,
        why,
    };
    let found = record_target(zip, &located.filename, offset, length);
    match found {
        Ok(Some(target)) if target == located.url => {}
        Ok(Some(target)) => check
            .problems
            .push(dangling(format!("a record for {target}"))),
        Ok(None) => check.problems.push(dangling("no WARC record".into())),
        Err(e) => check.problems.push(dangling(e.to_string())),
    }
    Ok(())
}

/// The target URI of the record at `offset` (`length` bytes) in `archive/name`.
fn record_target(
    zip: &mut Zip,
    name: &str,
    offset: u64,
    length: u64,
) -> io::Result<Option<String>> {
    let path = format!("archive/{name}");
    let mut entry = zip.by_name_seek(&path).map_err(|_| {
        io::Error::new(io::ErrorKind::NotFound, format!("no {path} in the archive"))
    })?;
    entry.seek(SeekFrom::Start(offset))?;
    let mut raw = BufReader::new(entry.take(length));
    let gzip = raw.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    let parsed = if gzip {
        parse_record(&mut BufReader::new(GzDecoder::new(raw)), 0)?
    } else {
        parse_record(&mut raw, 0)?
    };
    Ok(parsed.and_then(|(fields, _, _)| {
        fields
            .into_iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("WARC-Target-URI"))
            .map(|(_, v)| v.trim_start_matches('<').trim_end_matches('>').to_string())
    }))
}

/// The page list starts with its header and each line is a page with a URL
/// and a timestamp.
fn check_pages(zip: &mut Zip, check: &mut WaczCheck) -> io::Result<()> {
    let Ok(entry) = zip.by_name("pages/pages.jsonl") else {
        return Ok(());
    };
    for (n, line) in BufReader::new(entry).lines().enumerate() {
        let line = line?;
        let value: serde_json::Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                check
                    .problems
                    .push(WaczProblem::BadPages(format!("line {}: {e}", n + 1)));
                return Ok(());
            }
        };
        let needs: &[&str] = if n == 0 {
            &["format", "id"]
        } else {
            &["url", "ts"]
        };
        if let Some(missing) = needs.iter().find(|k| value.get(**k).is_none()) {
            let why = format!("line {} has no {missing:?}", n + 1);
            check.problems.push(WaczProblem::BadPages(why));
            return Ok(());
        }
        if n > 0 {
            check.pages += 1;
        }
    }
    Ok(())
}

/// A small file of the zip, whole; `None` when it is not there.
fn read_small(zip: &mut Zip, name: &str) -> io::Result<Option<Vec<u8>>> {
    let Ok(mut entry) = zip.by_name(name) else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    // Manifests and the .idx are small; a huge one is not read whole.
    (&mut entry).take(64 << 20).read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}
