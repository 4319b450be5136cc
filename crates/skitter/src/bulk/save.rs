//! Writing one body to its file, all or nothing.
//!
//! The body goes to a temporary file in the target's own directory (so the final
//! rename never crosses file systems) and is renamed over the target only once
//! fully written; on any error the temporary file is removed. A reader never sees
//! a half-written file under the target name, and a failed run leaves no partial
//! file. (A process killed mid-write can leave a `.skitter-*.part` file behind;
//! it never has the target's name.) These are blocking calls: the runner makes
//! them on the blocking pool.

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

/// Writes `body` to `path` atomically, creating parent directories.
pub fn save(path: &Path, body: &[u8]) -> Result<(), SaveError> {
    let fail = |what, source| SaveError {
        path: path.to_path_buf(),
        what,
        source,
    };
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| fail("cannot create its directory", e))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".skitter-")
        .suffix(".part")
        .tempfile_in(parent)
        .map_err(|e| fail("cannot create a temporary file", e))?;
    tmp.write_all(body)
        .and_then(|()| tmp.flush())
        .map_err(|e| fail("cannot write", e))?;
    // On failure `persist` hands the temporary file back; dropping it deletes it.
    tmp.persist(path)
        .map_err(|e| fail("cannot rename the temporary file", e.error))?;
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
        save(&path, b"one").unwrap();
        save(&path, b"two").unwrap();
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
        let err = save(&path, b"body").unwrap_err();
        assert_eq!(err.what, "cannot rename the temporary file");
        assert_eq!(entries(dir.path()), ["taken"]);
        // A parent that is a regular file cannot become a directory.
        let blocked = dir.path().join("file");
        std::fs::write(&blocked, b"x").unwrap();
        let err = save(&blocked.join("sub/x"), b"body").unwrap_err();
        assert_eq!(err.what, "cannot create its directory");
        assert!(err.to_string().contains("file/sub/x"), "{err}");
    }
}
