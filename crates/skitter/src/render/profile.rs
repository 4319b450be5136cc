//! The browser's profile directories: one per browser start, in the temporary
//! directory, named `skitter-chromium-<pid>-…` after the skitter process that
//! made it, so that one left behind by a skitter that was killed (no
//! destructor runs then) can be told from one in use and removed by the next
//! skitter that starts a browser.

use std::path::Path;

/// The start of every profile directory's name.
const PREFIX: &str = "skitter-chromium-";

/// A new profile directory, removed when dropped.
pub(super) fn create() -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{}-", std::process::id()))
        .tempdir()
}

/// Removes the profile directories in `dir` whose skitter process is gone,
/// and says how many. Directories of a process that still runs, of another
/// user, or named otherwise (an older skitter's, without a pid) are left.
pub(super) fn remove_stale(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(owner) else {
            continue;
        };
        if pid == std::process::id() || alive(pid) || !ours(&entry.path()) {
            continue;
        }
        match std::fs::remove_dir_all(entry.path()) {
            Ok(()) => removed += 1,
            Err(e) => {
                tracing::debug!(dir = %entry.path().display(), error = %e, "cannot remove a stale browser profile");
            }
        }
    }
    removed
}

/// The pid in a profile directory's name.
fn owner(name: &str) -> Option<u32> {
    let (pid, _) = name.strip_prefix(PREFIX)?.split_once('-')?;
    pid.parse().ok()
}

#[cfg(unix)]
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    let sent = unsafe { libc::kill(pid, 0) };
    sent == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn alive(_: u32) -> bool {
    // No way to tell here: leave every directory.
    true
}

#[cfg(unix)]
fn ours(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir() && m.uid() == me)
}

#[cfg(not(unix))]
fn ours(path: &Path) -> bool {
    path.is_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_is_read_from_the_name() {
        for (name, want) in [
            ("skitter-chromium-123-abcDEF", Some(123)),
            ("skitter-chromium-123-", Some(123)),
            // An older skitter's name, without a pid.
            ("skitter-chromium-abcDEF", None),
            ("skitter-chromium-x1-abc", None),
            ("other-123-abc", None),
        ] {
            assert_eq!(owner(name), want, "{name}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn profiles_of_dead_processes_are_removed_and_others_kept() {
        let tmp = tempfile::tempdir().unwrap();
        // A child that has exited and been waited for: its pid is gone.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        let dead = child.id();
        let stale = tmp.path().join(format!("{PREFIX}{dead}-abc"));
        let mine = tmp
            .path()
            .join(format!("{PREFIX}{}-abc", std::process::id()));
        let old = tmp.path().join(format!("{PREFIX}abcdef"));
        for dir in [&stale, &mine, &old] {
            std::fs::create_dir(dir).unwrap();
            std::fs::write(dir.join("Local State"), "{}").unwrap();
        }
        assert_eq!(remove_stale(tmp.path()), 1);
        assert!(!stale.exists());
        assert!(mine.exists());
        assert!(old.exists());
    }
}
