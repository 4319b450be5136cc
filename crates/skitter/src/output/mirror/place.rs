//! Putting files into the mirror: whole files only, and file/directory clashes
//! resolved instead of failing.
//!
//! Every file is written to a temporary file in its final directory and renamed
//! into place, so a reader (or a crash) never sees half a file. Symbolic links in
//! the mirror are never followed: a link where a directory is needed is treated
//! like a file in the way.
//!
//! Clashes. The naming rules give `/a` (HTML) the file `a.html` and `/a/b` the
//! directory `a`, so most sites never clash; a clash needs a name used both ways,
//! such as `/data.json` and `/data.json/x`. Then the file moves into the directory:
//! - a file `X` stands where a directory is needed: it becomes `X/index.EXT`
//!   (`EXT` being `X`'s own extension, `index.html` when it has none), and the
//!   directory is created;
//! - a directory `X` stands where a file is to be saved: the file is saved as
//!   `X/index.EXT` the same way.
//!
//! Two URLs that map to the same file (`/a` and `/a.html`, both HTML) share it: the
//! later one wins, as with `wget` without `-nc`.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Where a file was saved, and the files that had to move out of the way.
#[derive(Debug)]
pub(in crate::output) struct Placed {
    /// The file written.
    pub path: PathBuf,
    /// `(from, to)` for each earlier file moved into a directory of its name.
    pub moved: Vec<(PathBuf, PathBuf)>,
}

/// How many directory-in-the-way steps are taken before giving up (each adds a
/// level; a chain this deep means the tree was not made by skitter).
const MAX_INDEX_STEPS: usize = 8;

/// Writes `data` at `wanted` (under `root`), resolving clashes as described above.
pub(in crate::output) fn save(root: &Path, wanted: &Path, data: &[u8]) -> io::Result<Placed> {
    save_known(root, wanted, data, &mut KnownDirs::default())
}

/// The directories a writer made or checked under its root, so that saving
/// many files does not ask the file system about the same parents for each
/// (a `stat` per directory and per file, a third of a small file's cost).
/// At most [`MAX_KNOWN_DIRS`] are remembered; past that they are asked again.
#[derive(Debug, Default)]
pub(in crate::output) struct KnownDirs {
    dirs: HashSet<PathBuf>,
    /// Every directory under the root is in `dirs`: the root had nothing in
    /// it when the writer started and only the writer adds to it. Then a
    /// path not in `dirs` is no directory, and the file system is not asked.
    complete: bool,
}

/// Directories one [`KnownDirs`] remembers at most.
pub(in crate::output) const MAX_KNOWN_DIRS: usize = 1 << 20;

impl KnownDirs {
    /// For a writer whose root had nothing in it when it started (`fresh`),
    /// or that may find files and directories it did not make.
    pub(in crate::output) fn new(fresh: bool) -> KnownDirs {
        KnownDirs {
            dirs: HashSet::new(),
            complete: fresh,
        }
    }

    fn contains(&self, path: &Path) -> bool {
        self.dirs.contains(path)
    }

    fn add(&mut self, path: &Path) {
        if self.dirs.len() >= MAX_KNOWN_DIRS {
            // Directories made from now on go unremembered.
            self.complete = false;
            return;
        }
        self.dirs.insert(path.to_path_buf());
    }

    /// Whether `path` is a directory (not a link to one).
    fn is_dir(&self, path: &Path) -> io::Result<bool> {
        if self.contains(path) {
            return Ok(true);
        }
        if self.complete {
            return Ok(false);
        }
        is_real_dir(path)
    }
}

/// [`save`] for a writer of many files, with what it knows of the tree's
/// directories. Should a remembered directory be gone (someone else removed
/// it), the save is tried again asking the file system, which forgets what
/// it knew.
pub(in crate::output) fn save_known(
    root: &Path,
    wanted: &Path,
    data: &[u8],
    known: &mut KnownDirs,
) -> io::Result<Placed> {
    match save_with(root, wanted, data, known) {
        Err(e) if e.kind() == io::ErrorKind::NotFound && !known.dirs.is_empty() => {
            *known = KnownDirs::default();
            save_with(root, wanted, data, known)
        }
        placed => placed,
    }
}

fn save_with(root: &Path, wanted: &Path, data: &[u8], known: &mut KnownDirs) -> io::Result<Placed> {
    let rel = wanted
        .strip_prefix(root)
        .map_err(|_| io::Error::other("mirror path is outside the mirror"))?;
    let names: Vec<&std::ffi::OsStr> = rel.iter().collect();
    let Some((file_name, dirs)) = names.split_last() else {
        return Err(io::Error::other("empty mirror path"));
    };
    if !known.contains(root) {
        fs::create_dir_all(root)?;
        known.add(root);
    }
    let mut here = root.to_path_buf();
    let mut moved = Vec::new();
    for name in dirs {
        here.push(name);
        if known.contains(&here) {
            continue;
        }
        if let Some(m) = ensure_dir(&here)? {
            moved.push(m);
        }
        known.add(&here);
    }
    let mut target = here.join(file_name);
    let mut steps = 0;
    while known.is_dir(&target)? {
        steps += 1;
        if steps > MAX_INDEX_STEPS {
            return Err(io::Error::other(format!(
                "{} is a directory and so are its index files",
                wanted.display()
            )));
        }
        target = index_in(&target);
    }
    write_whole(&target, data)?;
    Ok(Placed {
        path: target,
        moved,
    })
}

/// Replaces the file at `path` with `data`, atomically.
pub(in crate::output) fn write_whole(path: &Path, data: &[u8]) -> io::Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    let mut tmp = crate::output::temp_beside(parent, ".tmp")?;
    tmp.write_all(data)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Makes `path` a directory; a file (or link) in the way moves inside it.
///
/// The file in the way is another URL's saved page: a failure after it was
/// moved aside puts it back (removing the directory this call made), so an
/// error only ever undoes what this call created. If even that fails, the file
/// is left in its holding directory, which the error names, never deleted.
fn ensure_dir(path: &Path) -> io::Result<Option<(PathBuf, PathBuf)>> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => Ok(None),
        Ok(_) => {
            let parent = path.parent().unwrap_or(Path::new("."));
            let aside = tempfile::Builder::new()
                .prefix(".skitter-")
                .suffix(".moving")
                .tempdir_in(parent)?;
            let held = aside.path().join("file");
            // Until this succeeds the holding directory is empty: dropping it
            // on an error removes only what this call made.
            fs::rename(path, &held)?;
            let to = index_in(path);
            let moved = fs::create_dir(path).and_then(|()| {
                fs::rename(&held, &to).inspect_err(|_| {
                    let _ = fs::remove_dir(path);
                })
            });
            match moved {
                Ok(()) => Ok(Some((path.to_path_buf(), to))),
                Err(e) => match fs::rename(&held, path) {
                    Ok(()) => Err(e),
                    Err(_) => {
                        let kept = aside.keep().join("file");
                        Err(io::Error::new(
                            e.kind(),
                            format!(
                                "cannot move {} into a directory of its name ({e}); it is kept at {}",
                                path.display(),
                                kept.display()
                            ),
                        ))
                    }
                },
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::create_dir(path)?;
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

fn is_real_dir(path: &Path) -> io::Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(m) => Ok(m.is_dir()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// `X/index.EXT`, with `X`'s extension (`.html` when it has none).
fn index_in(path: &Path) -> PathBuf {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_else(|| "html".into());
    path.join(format!("index.{ext}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_in_the_way_of_a_directory_moves_inside_it() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let first = save(r, &r.join("h/data.json"), b"1").unwrap();
        assert!(first.moved.is_empty());
        let second = save(r, &r.join("h/data.json/x.html"), b"2").unwrap();
        let moved_to = r.join("h/data.json/index.json");
        assert_eq!(
            second.moved,
            vec![(r.join("h/data.json"), moved_to.clone())]
        );
        assert_eq!(fs::read(&moved_to).unwrap(), b"1");
        assert_eq!(fs::read(r.join("h/data.json/x.html")).unwrap(), b"2");
    }

    #[test]
    fn directory_in_the_way_of_a_file_takes_it_as_index() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        save(r, &r.join("h/a/b.html"), b"b").unwrap();
        let placed = save(r, &r.join("h/a"), b"a").unwrap();
        assert_eq!(placed.path, r.join("h/a/index.html"));
        assert_eq!(fs::read(&placed.path).unwrap(), b"a");
    }

    #[test]
    fn rewriting_replaces_and_leaves_no_temporary_files() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        save(r, &r.join("h/p.html"), b"old").unwrap();
        save(r, &r.join("h/p.html"), b"new").unwrap();
        assert_eq!(fs::read(r.join("h/p.html")).unwrap(), b"new");
        let names: Vec<_> = fs::read_dir(r.join("h")).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_in_the_mirror_are_not_followed() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let r = root.path();
        fs::create_dir(r.join("h")).unwrap();
        std::os::unix::fs::symlink(outside.path(), r.join("h/link")).unwrap();
        save(r, &r.join("h/link/x.html"), b"x").unwrap();
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
        assert!(r.join("h/link/x.html").is_file());
    }

    /// A file that must move into a directory of its name, where the move
    /// fails (the new name is past the system's path limit): the file stays
    /// where it was, with its bytes.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_move_keeps_the_file_in_the_way() {
        const PATH_MAX: usize = 4096;
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        // A file path just short of the limit (4090 bytes): saving it works,
        // but its `/index.html` inside a directory of its name is past it.
        let mut wanted = r.to_path_buf();
        loop {
            let left = PATH_MAX - 6 - wanted.as_os_str().len() - 1;
            if left <= 200 {
                wanted.push("f".repeat(left));
                break;
            }
            wanted.push("d".repeat((left - 101).min(200)));
        }
        assert!(wanted.as_os_str().len() < PATH_MAX);
        assert!(wanted.join("index.html").as_os_str().len() >= PATH_MAX);
        save(r, &wanted, b"saved").unwrap();
        assert!(save(r, &wanted.join("x"), b"other").is_err());
        assert_eq!(fs::read(&wanted).unwrap(), b"saved");
        let parent = wanted.parent().unwrap();
        let left: Vec<_> = fs::read_dir(parent).unwrap().collect();
        assert_eq!(left.len(), 1, "only the saved file is left");
    }
}
