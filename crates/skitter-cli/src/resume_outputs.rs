//! Where a resumed crawl's outputs continue: a WARC goes on in a new file (never
//! over the old one), after the previous run's last file is cut back to its last
//! whole record, since a run killed mid-write can leave a torn record there. The
//! responses at the end of that file may be of pages the killed run had not
//! completed; the new run fetches those again but does not archive them twice.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// Repairs the newest existing file of `path`'s WARC family (`crawl.warc.gz`,
/// `crawl-r1.warc.gz`, `crawl-00003.warc.gz`, …) and returns the name to write
/// this run's WARC to, with the URLs whose responses end that file. Only the
/// newest file can be torn: a run finishes each file it rotates away from, and a
/// new run never writes to an old file.
pub fn continue_warc(path: &Path) -> anyhow::Result<(PathBuf, HashSet<String>)> {
    let mut recent = HashSet::new();
    if let Some(last) = newest_of_family(path) {
        let repair = skitter::sink::repair_warc(&last, skitter::sink::RESUME_TAIL_LINES)
            .with_context(|| format!("cannot check {} for a torn record", last.display()))?;
        if repair.cut > 0 {
            tracing::warn!(
                "{}: cut {} bytes of a torn record left by an interrupted run ({} whole records kept)",
                last.display(),
                repair.cut,
                repair.records
            );
        }
        recent = repair.recent_responses;
    }
    Ok((unused_name(path), recent))
}

/// `NAME` and `EXT` of `NAME.EXT`, split at the first dot (`crawl`, `.warc.gz`).
fn stem_and_ext(path: &Path) -> (String, String) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match name.find('.') {
        Some(i) => (name[..i].to_string(), name[i..].to_string()),
        None => (name, String::new()),
    }
}

/// Files named `NAME.EXT` or `NAME-….EXT` beside `path`: its own name and the
/// numbered files rotation makes from it.
fn family(path: &Path) -> Vec<std::fs::DirEntry> {
    let (stem, ext) = stem_and_ext(path);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let member = |name: &str| {
        name.ends_with(&ext)
            && (name == format!("{stem}{ext}") || name.starts_with(&format!("{stem}-")))
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| member(&e.file_name().to_string_lossy()))
        .collect()
}

/// The most recently modified file of `path`'s family.
fn newest_of_family(path: &Path) -> Option<PathBuf> {
    family(path)
        .into_iter()
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, path)| path)
}

/// `path` if no file of its family exists, else `NAME-rN.EXT` for the first N
/// whose family is empty (`crawl.warc.gz` → `crawl-r1.warc.gz`), so neither the
/// file nor the numbered files rotation makes from it can hit an old one.
pub fn unused_name(path: &Path) -> PathBuf {
    if family(path).is_empty() {
        return path.to_path_buf();
    }
    let (stem, ext) = stem_and_ext(path);
    (1..)
        .map(|n| path.with_file_name(format!("{stem}-r{n}{ext}")))
        .find(|p| family(p).is_empty())
        .expect("some numbered name is free")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_names_skip_taken_ones() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("crawl.warc.gz");
        assert_eq!(unused_name(&base), base);
        std::fs::write(&base, b"").unwrap();
        std::fs::write(dir.path().join("crawl-r1.warc.gz"), b"").unwrap();
        assert_eq!(unused_name(&base), dir.path().join("crawl-r2.warc.gz"));
    }

    #[test]
    fn only_the_newest_file_of_the_family_is_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("crawl.warc");
        let record = b"WARC/1.1\r\nContent-Length: 2\r\n\r\nok\r\n\r\n";
        let mut torn = record.to_vec();
        torn.extend_from_slice(b"WARC/1.1\r\nContent-Le");
        // Older torn file (not ours to touch), an unrelated file, and the newest.
        std::fs::write(&base, &torn).unwrap();
        std::fs::write(dir.path().join("crawler.warc"), &torn).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let newest = dir.path().join("crawl-r1-00002.warc");
        std::fs::write(&newest, &torn).unwrap();
        let (next, _) = continue_warc(&base).unwrap();
        assert_eq!(next, dir.path().join("crawl-r2.warc"));
        assert_eq!(std::fs::read(&newest).unwrap(), record);
        assert_eq!(std::fs::read(&base).unwrap(), torn);
        assert_eq!(
            std::fs::read(dir.path().join("crawler.warc")).unwrap(),
            torn
        );
    }
}
