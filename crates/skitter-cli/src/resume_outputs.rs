//! The output files of a crawl kept in `--state`: which ones it owns, and where a
//! resumed crawl's outputs continue.
//!
//! Ownership. Before it creates an output file, the crawl records its path in the
//! state directory (`output.warc`: the WARC name of every run, whose rotated
//! files belong to it too; `output.jsonl`; `output.cdx`). Only files recorded
//! there are ever repaired or continued. A file at an output's name that the
//! crawl did not create is never touched: a WARC goes to a new name, and a JSONL
//! file or index in the way is refused. The caller opens (locks) the state before
//! any of this, so a second invocation of a running crawl stops at "busy" before
//! it reads a byte of the outputs.
//!
//! Resuming. A WARC goes on in a new file (never over the old one), after the
//! previous run's last file is cut back to its last whole record, since a run
//! killed mid-write can leave a torn record there. The responses at the end of
//! that file may be of pages the killed run had not completed; the new run
//! fetches those again but does not archive them twice, unless the index lacks
//! their lines (the kill came between the records and their lines): then they are
//! archived again, so that every archived page is indexed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use skitter::frontier::{DiskFrontier, Frontier};

/// State key of the WARC names, a JSON array of absolute paths, oldest first.
const WARC_KEY: &str = "output.warc";
/// State key of the JSONL file's absolute path.
const JSONL_KEY: &str = "output.jsonl";
/// State key of the CDXJ index's absolute path.
const CDX_KEY: &str = "output.cdx";
/// State key of the JSONL file's length when the current recrawl pass first
/// wrote to it: the lines before are earlier passes'.
const JSONL_FLOOR_KEY: &str = "output.jsonl.floor";

/// Where this run's WARC output starts, and how.
#[derive(Debug)]
pub struct WarcStart {
    /// The name to write this run's WARC to (rotated files are numbered from it).
    pub path: PathBuf,
    /// URLs whose responses end the previous run's last file, already indexed.
    pub already_archived: HashSet<String>,
    /// The index exists and is this crawl's own: continue it.
    pub append_cdx: bool,
}

/// Repairs the last file the crawl's previous run wrote (recorded in `state`),
/// readies its index at `cdx`, and records and returns the name this run writes to.
/// Only the previous run's newest file can be torn: a run finishes each file it
/// rotates away from, and repairs the one before it started.
pub fn continue_warc(
    state: &DiskFrontier,
    path: &Path,
    cdx: Option<&Path>,
) -> anyhow::Result<WarcStart> {
    let mut names = warc_names(state)?;
    let append_cdx = match cdx {
        Some(cdx) => claim(state, CDX_KEY, cdx, "--cdx")?,
        None => false,
    };
    let mut recent = HashSet::new();
    if let Some(last) = names.last().and_then(|base| newest_file(base)) {
        let repair = skitter::output::repair_warc(&last, skitter::output::RESUME_TAIL_LINES)
            .with_context(|| format!("cannot check {} for a torn record", last.display()))?;
        if repair.cut > 0 {
            tracing::warn!(
                "{}: cut {} bytes of a torn record left by an interrupted run ({} whole records kept)",
                last.display(),
                repair.cut,
                repair.records
            );
        }
        // A new recrawl pass archives every URL again: what the last run
        // wrote was the previous pass's.
        if !pass_changed(state, WARC_KEY)? {
            recent = repair.recent_responses;
        }
        if let (true, Some(cdx)) = (append_cdx && cdx.is_some_and(Path::exists), cdx) {
            let name = file_name(&last);
            let indexed = skitter::output::resume_cdx(cdx, &name, repair.len)
                .with_context(|| format!("cannot resume the index {}", cdx.display()))?;
            recent.retain(|url| indexed.contains(url));
        }
    }
    let next = unused_name(path, &names);
    names.push(absolute(&next)?);
    let value = serde_json::to_vec(
        &names
            .iter()
            .map(|p| p.to_string_lossy())
            .collect::<Vec<_>>(),
    )?;
    state.put_meta(WARC_KEY, &value)?;
    state.flush()?;
    Ok(WarcStart {
        path: next,
        already_archived: recent,
        append_cdx,
    })
}

/// Whether the crawl's JSONL output at `path` is to be continued (it is the
/// crawl's own: `Some(floor)`, the byte offset where the current recrawl
/// pass's lines begin) or created (`None`: it does not exist yet; now
/// recorded as the crawl's).
pub fn continue_jsonl(state: &DiskFrontier, path: &Path) -> anyhow::Result<Option<u64>> {
    let owned = claim(state, JSONL_KEY, path, "--jsonl")?;
    let new_pass = pass_changed(state, JSONL_KEY)?;
    let floor = match (owned, new_pass) {
        (false, _) => 0,
        (true, true) => std::fs::metadata(path).map_or(0, |m| m.len()),
        (true, false) => {
            let stored = state.get_meta(JSONL_FLOOR_KEY)?;
            return Ok(Some(
                stored
                    .and_then(|v| String::from_utf8(v).ok())
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0),
            ));
        }
    };
    state.put_meta(JSONL_FLOOR_KEY, floor.to_string().as_bytes())?;
    state.flush()?;
    Ok(owned.then_some(floor))
}

/// Whether the output under `key` last wrote in another recrawl pass than
/// the current one; records the current one. States from before recrawls
/// count as pass 1.
fn pass_changed(state: &DiskFrontier, key: &str) -> anyhow::Result<bool> {
    let current = state.pass().map_or(1, |p| p.number);
    let key = format!("{key}.pass");
    let stored: Option<u32> = state
        .get_meta(&key)?
        .and_then(|v| String::from_utf8(v).ok())
        .and_then(|v| v.parse().ok());
    if stored != Some(current) {
        state.put_meta(&key, current.to_string().as_bytes())?;
        state.flush()?;
    }
    Ok(stored.unwrap_or(1) != current)
}

/// True when `path` is the output the state records under `key`. Otherwise, a
/// file there is refused, and a free name is recorded (durably, before the
/// caller creates the file) and false returned.
fn claim(state: &DiskFrontier, key: &str, path: &Path, flag: &str) -> anyhow::Result<bool> {
    let wanted = absolute(path)?;
    let owned = state
        .get_meta(key)?
        .map(|v| PathBuf::from(String::from_utf8_lossy(&v).into_owned()));
    if owned.as_deref() == Some(wanted.as_path()) {
        return Ok(true);
    }
    if std::fs::symlink_metadata(path).is_ok() {
        bail!(
            "{flag} {}: the file exists and is not an output of the crawl in this state \
             directory, so it is not overwritten; move it away or choose another name",
            path.display()
        );
    }
    state.put_meta(key, wanted.to_string_lossy().as_bytes())?;
    state.flush()?;
    Ok(false)
}

/// The WARC names the crawl's runs wrote to, oldest first.
fn warc_names(state: &DiskFrontier) -> anyhow::Result<Vec<PathBuf>> {
    let Some(value) = state.get_meta(WARC_KEY)? else {
        return Ok(Vec::new());
    };
    let names: Vec<String> = serde_json::from_slice(&value)
        .with_context(|| format!("the state's {WARC_KEY} is not a list of file names"))?;
    Ok(names.into_iter().map(PathBuf::from).collect())
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The files of `base` that exist: `base` itself and its rotated files
/// (`NAME-00003.EXT`, exactly as the WARC sink numbers them), with their numbers
/// (`None` for `base`).
fn family(base: &Path) -> Vec<(Option<u64>, PathBuf)> {
    let mut found = Vec::new();
    if std::fs::symlink_metadata(base).is_ok() {
        found.push((None, base.to_path_buf()));
    }
    let zero = file_name(&skitter::output::rotated_warc_name(base, 0));
    let Some(at) = zero.rfind("-00000") else {
        return found;
    };
    let (prefix, suffix) = (&zero[..=at], &zero[at + "-00000".len()..]);
    let dir = match base.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return found;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let number = name
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(suffix))
            .filter(|digits| digits.len() >= 5 && digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse::<u64>().ok());
        if let Some(n) = number {
            found.push((Some(n), entry.path()));
        }
    }
    found
}

/// The last file written under `base`: its highest-numbered rotated file, else
/// `base` itself.
fn newest_file(base: &Path) -> Option<PathBuf> {
    family(base)
        .into_iter()
        .max_by_key(|(n, _)| *n)
        .map(|(_, p)| p)
}

/// `path` if neither it nor a rotated file of it exists and no earlier run used
/// it, else `NAME-rN.EXT` for the first N that is free the same way
/// (`crawl.warc.gz` → `crawl-r1.warc.gz`), so neither the file nor the files
/// rotation makes from it can hit an existing one.
pub fn unused_name(path: &Path, used: &[PathBuf]) -> PathBuf {
    let free = |p: &Path| family(p).is_empty() && absolute(p).map_or(true, |a| !used.contains(&a));
    if free(path) {
        return path.to_path_buf();
    }
    let name = file_name(path);
    let (stem, ext) = match name.find('.') {
        Some(i) if i > 0 => (&name[..i], &name[i..]),
        _ => (name.as_str(), ""),
    };
    (1..)
        .map(|n| path.with_file_name(format!("{stem}-r{n}{ext}")))
        .find(|p| free(p))
        .expect("some numbered name is free")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_names_skip_taken_ones() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("crawl.warc.gz");
        assert_eq!(unused_name(&base, &[]), base);
        std::fs::write(&base, b"").unwrap();
        std::fs::write(dir.path().join("crawl-r1-00000.warc.gz"), b"").unwrap();
        assert_eq!(
            unused_name(&base, &[dir.path().join("crawl-r2.warc.gz")]),
            dir.path().join("crawl-r3.warc.gz")
        );
        // Other files that merely share the first part of the name are no clash.
        let plain = dir.path().join("out");
        std::fs::write(dir.path().join("out-notes"), b"keep").unwrap();
        assert_eq!(unused_name(&plain, &[]), plain);
    }

    #[test]
    fn the_family_is_the_name_and_its_rotated_files() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("crawl.warc");
        for name in [
            "crawl.warc",
            "crawl-00000.warc",
            "crawl-00012.warc",
            "crawl-notes.warc",
            "crawl-0001.warc",
            "crawler.warc",
            "crawl-r1.warc",
        ] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        let mut got: Vec<_> = family(&base).into_iter().map(|(n, _)| n).collect();
        got.sort();
        assert_eq!(got, [None, Some(0), Some(12)]);
        assert_eq!(
            newest_file(&base),
            Some(dir.path().join("crawl-00012.warc"))
        );
    }
}
