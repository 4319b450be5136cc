//! What an output hands the crawler to make its bytes survive a power cut.
//!
//! A sink writes to the operating system; that survives the process being
//! killed, not the machine losing power. When the frontier's completions
//! survive a power cut (a `--state` crawl), a page must not be marked done
//! before what its outputs wrote for it is on the disk, or a power cut could
//! keep the "done" and lose the bytes. So after each flush the crawler asks
//! every sink for its [`Syncable`]s ([`super::Sink::unsynced`]) and syncs them
//! on a blocking thread, once for all the pages that flushed meanwhile (a group
//! `fsync`), before their leases complete.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Something an output wrote to, which can be brought to stable storage.
pub trait Syncable: Send + Sync {
    /// Makes everything written to it so far survive a power cut. Runs on a
    /// blocking thread, and may take the disk's flush time.
    fn sync(&self) -> io::Result<()>;

    /// What it is, for an error message (a path).
    fn describe(&self) -> String;
}

/// An output file: a sync flushes its data (`fdatasync`), and the first one
/// also its directory's entry for it, since the file may be new.
#[derive(Debug)]
pub struct SyncedFile {
    file: File,
    path: PathBuf,
    dir_synced: AtomicBool,
}

impl SyncedFile {
    /// The file open at `path`.
    pub fn new(file: File, path: PathBuf) -> SyncedFile {
        SyncedFile {
            file,
            path,
            dir_synced: AtomicBool::new(false),
        }
    }

    /// The file, to write to (`&File` is `Write`).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Syncable for SyncedFile {
    fn sync(&self) -> io::Result<()> {
        self.file.sync_data()?;
        if !self.dir_synced.load(Ordering::Acquire) {
            sync_dir(parent(&self.path))?;
            self.dir_synced.store(true, Ordering::Release);
        }
        Ok(())
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }
}

/// A file known by its path that a library keeps open (a SQLite database's
/// write-ahead log): opened to be synced, and nothing to do while it does
/// not exist.
#[derive(Debug)]
pub struct SyncedPath(pub PathBuf);

impl Syncable for SyncedPath {
    fn sync(&self) -> io::Result<()> {
        match File::open(&self.0) {
            // Any descriptor of a file flushes its data.
            Ok(file) => file.sync_data(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn describe(&self) -> String {
        self.0.display().to_string()
    }
}

/// The file system holding a directory, synced whole (`syncfs(2)`, Linux):
/// for an output of many new files and directories (the mirror), one call
/// instead of an `fsync` per file and per directory, which measured 15 to 50
/// times slower for groups of 64 small files. It also flushes other writers'
/// data on that file system. Elsewhere there is no such call, and nothing is
/// synced.
#[derive(Debug)]
pub struct SyncedFilesystem {
    dir: File,
    path: PathBuf,
}

impl SyncedFilesystem {
    /// The file system of the directory `path` (which must exist).
    pub fn open(path: &Path) -> io::Result<SyncedFilesystem> {
        Ok(SyncedFilesystem {
            dir: File::open(path)?,
            path: path.to_path_buf(),
        })
    }
}

impl Syncable for SyncedFilesystem {
    #[cfg(target_os = "linux")]
    fn sync(&self) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: the descriptor is open for as long as `self.dir` lives.
        if unsafe { libc::syncfs(self.dir.as_raw_fd()) } == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn sync(&self) -> io::Result<()> {
        let _ = &self.dir;
        Ok(())
    }

    fn describe(&self) -> String {
        format!("the file system of {}", self.path.display())
    }
}

/// The folder `path` is in (`.` for a bare name).
pub(crate) fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `fsync`s a directory, so the entries made in it survive a power cut. Only
/// Unix can open a directory for that; elsewhere a file's entry goes with it.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    if cfg!(unix) {
        File::open(dir)?.sync_all()
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn each_kind_syncs_what_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        let synced = SyncedFile::new(File::create(&path).unwrap(), path.clone());
        synced.file().write_all(b"{}\n").unwrap();
        synced.sync().unwrap();
        synced.sync().unwrap();
        assert_eq!(synced.describe(), path.display().to_string());
        // A WAL that is not there (yet) is nothing to sync.
        SyncedPath(dir.path().join("items.db-wal")).sync().unwrap();
        SyncedPath(path).sync().unwrap();
        SyncedFilesystem::open(dir.path()).unwrap().sync().unwrap();
    }
}
