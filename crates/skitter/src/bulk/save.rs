//! Writing one body to its file, all or nothing.
//!
//! The body goes to a temporary file in the target's own directory (so the final
//! rename never crosses file systems) and is renamed over the target only once
//! fully written; on any error the temporary file is removed. A reader never sees
//! a half-written file under the target name, and a failed run leaves no partial
//! file. (A process killed mid-write can leave a `.skitter-*.part` file behind;
//! it never has the target's name.) These are blocking calls: the runner makes
//! them on the blocking pool.
//!
//! Symbolic links under the output directory are never followed: a link (or a
//! file) where a directory is needed fails the save, so a link planted in the
//! output directory (`ln -s /elsewhere DIR/host`) cannot send files out of it.
//! The final rename replaces a link at the target's own name, never its target.

use std::io::Write;
use std::path::{Path, PathBuf};

/// A body could not be saved.
#[derive(Debug, thiserror::Error)]
#[error("cannot save {}: {what}: {source}", path.display())]
pub struct SaveError {
    /// The file it was meant for.
    pub path: PathBuf,
    /// The step that failed.
    pub what: &'static str,
    /// The underlying error.
    pub source: std::io::Error,
}

/// Writes `body` to `path` (under `root`) atomically, creating the directories
/// between them, none of which may be a symbolic link.
pub fn save(root: &Path, path: &Path, body: &[u8]) -> Result<(), SaveError> {
    let fail = |what, source| SaveError {
        path: path.to_path_buf(),
        what,
        source,
    };
    let parent = path.parent().unwrap_or(Path::new("."));
    real_dirs(root, parent).map_err(|e| fail("cannot create its directory", e))?;
    let mut tmp = crate::output::temp_beside(parent, ".part")
        .map_err(|e| fail("cannot create a temporary file", e))?;
    tmp.write_all(body)
        .and_then(|()| tmp.flush())
        .map_err(|e| fail("cannot write", e))?;
    // On failure `persist` hands the temporary file back; dropping it deletes it.
    tmp.persist(path)
        .map_err(|e| fail("cannot rename the temporary file", e.error))?;
    Ok(())
}

/// Creates `dir` and every directory between `root` (which may itself be a link,
/// the user's choice) and it, refusing anything under `root` that is not a real
/// directory.
fn real_dirs(root: &Path, dir: &Path) -> std::io::Result<()> {
    use std::io::{Error, ErrorKind};
    std::fs::create_dir_all(root)?;
    let rel = dir
        .strip_prefix(root)
        .map_err(|_| Error::other(format!("{} is outside the output directory", dir.display())))?;
    let mut here = root.to_path_buf();
    for part in rel.components() {
        let std::path::Component::Normal(name) = part else {
            return Err(Error::other(format!(
                "{} is not a plain path",
                dir.display()
            )));
        };
        here.push(name);
        let mut found = std::fs::symlink_metadata(&here);
        if matches!(&found, Err(e) if e.kind() == ErrorKind::NotFound) {
            // Another save may create it at the same moment: then it is checked
            // like any directory found there.
            match std::fs::create_dir(&here) {
                Err(e) if e.kind() != ErrorKind::AlreadyExists => return Err(e),
                _ => found = std::fs::symlink_metadata(&here),
            }
        }
        match found {
            Ok(m) if m.is_dir() => {}
            Ok(m) if m.file_type().is_symlink() => {
                return Err(Error::other(format!(
                    "{} is a symbolic link, which is not followed",
                    here.display()
                )));
            }
            Ok(_) => {
                return Err(Error::new(
                    ErrorKind::NotADirectory,
                    format!("{} is a file, not a directory", here.display()),
                ));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn writes_and_replaces_whole_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h/a/b.txt");
        save(dir.path(), &path, b"one").unwrap();
        save(dir.path(), &path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(entries(&dir.path().join("h/a")), ["b.txt"]);
    }

    #[test]
    fn failure_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        // The target is an existing directory: the rename fails after the write.
        let path = dir.path().join("taken");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("inside"), b"x").unwrap();
        let err = save(dir.path(), &path, b"body").unwrap_err();
        assert_eq!(err.what, "cannot rename the temporary file");
        assert_eq!(entries(dir.path()), ["taken"]);
        // A parent that is a regular file cannot become a directory.
        let blocked = dir.path().join("file");
        std::fs::write(&blocked, b"x").unwrap();
        let err = save(dir.path(), &blocked.join("sub/x"), b"body").unwrap_err();
        assert_eq!(err.what, "cannot create its directory");
        assert!(err.to_string().contains("file/sub/x"), "{err}");
    }

    #[test]
    fn links_under_the_root_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("host")).unwrap();
        let err = save(dir.path(), &dir.path().join("host/a/b.txt"), b"x").unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(entries(outside.path()).is_empty());
        // A link at the file's own name is replaced, not written through.
        let victim = outside.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join("f")).unwrap();
        save(dir.path(), &dir.path().join("f"), b"new").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), b"new");
    }
}
