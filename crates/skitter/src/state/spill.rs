//! Spill files: where the parts of a crawl that outgrow their memory budget (the
//! frontier's seen set and queues, the report's per-URL lines) put the rest, and
//! how they are read back.
//!
//! Spill files are anonymous temporary files (`O_TMPFILE` on Linux, unlinked at
//! once elsewhere on Unix, delete-on-close on Windows): nothing is left behind
//! however the crawl ends, a `kill -9` included, and none exists until the budget
//! is actually exceeded.

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A spill file that could not be made, written or read.
#[derive(Debug, thiserror::Error)]
#[error("{what} {}: {source}", dir.display())]
pub struct SpillError {
    what: &'static str,
    dir: PathBuf,
    #[source]
    source: io::Error,
}

/// Where spill files are created. Clones share one count of files created
/// and one of the bytes their live files hold.
#[derive(Clone, Debug)]
pub(crate) struct SpillDir {
    path: PathBuf,
    created: Arc<AtomicU64>,
    live: Arc<AtomicU64>,
}

/// One anonymous spill file; what was written to it counts towards its
/// directory's live bytes until it is dropped (and the file with it).
#[derive(Debug)]
pub(crate) struct SpillFile {
    file: File,
    written: AtomicU64,
    live: Arc<AtomicU64>,
}

impl std::ops::Deref for SpillFile {
    type Target = File;

    fn deref(&self) -> &File {
        &self.file
    }
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        self.live
            .fetch_sub(*self.written.get_mut(), Ordering::Relaxed);
    }
}

impl SpillDir {
    /// Spill files in `path` (the system temporary directory when `None`).
    pub(crate) fn new(path: Option<PathBuf>) -> SpillDir {
        SpillDir {
            path: path.unwrap_or_else(std::env::temp_dir),
            created: Arc::default(),
            live: Arc::default(),
        }
    }

    /// Fails now, rather than hours into a crawl, when no file can be made here.
    pub(crate) fn check_writable(&self) -> Result<(), SpillError> {
        self.open().map(drop)
    }

    /// Spill files created so far (the writability check is not one).
    pub(crate) fn files_created(&self) -> u64 {
        self.created.load(Ordering::Relaxed)
    }

    /// Bytes written to the spill files still open (the frontier's size on
    /// disk, for `skitter_frontier_disk_bytes`).
    pub(crate) fn live_bytes(&self) -> u64 {
        self.live.load(Ordering::Relaxed)
    }

    /// A new, empty, anonymous spill file.
    pub(crate) fn create(&self) -> Result<SpillFile, SpillError> {
        let file = self.open()?;
        self.created.fetch_add(1, Ordering::Relaxed);
        Ok(SpillFile {
            file,
            written: AtomicU64::new(0),
            live: self.live.clone(),
        })
    }

    /// A new, empty, anonymous spill file whose bytes its writer accounts
    /// for itself (the report's runs), not counted in [`Self::live_bytes`].
    pub(crate) fn create_file(&self) -> Result<File, SpillError> {
        let file = self.open()?;
        self.created.fetch_add(1, Ordering::Relaxed);
        Ok(file)
    }

    fn open(&self) -> Result<File, SpillError> {
        #[cfg(all(test, target_os = "linux"))]
        if self.path.as_os_str() == "/dev/full" {
            return std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/full")
                .map_err(|e| self.error("cannot open", e));
        }
        tempfile::tempfile_in(&self.path)
            .map_err(|e| self.error("cannot create a spill file in", e))
    }

    /// Spill "files" that fail every write with ENOSPC, like a full disk.
    #[cfg(all(test, target_os = "linux"))]
    pub(crate) fn failing_for_tests() -> SpillDir {
        SpillDir {
            path: "/dev/full".into(),
            created: Arc::default(),
            live: Arc::default(),
        }
    }

    /// An error naming the directory, for messages the user can act on.
    pub(crate) fn error(&self, what: &'static str, e: io::Error) -> SpillError {
        SpillError {
            what,
            dir: self.path.clone(),
            source: e,
        }
    }
}

/// Reads exactly `buf.len()` bytes at `offset`, without moving a shared cursor.
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let mut done = 0;
        while done < buf.len() {
            let n = std::os::windows::fs::FileExt::seek_read(
                file,
                &mut buf[done..],
                offset + done as u64,
            )?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            done += n;
        }
        Ok(())
    }
}

/// Appends `data` to a spill file whose current length is `len`.
pub(crate) fn write_at_end(file: &SpillFile, data: &[u8], len: u64) -> io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = &file.file;
    f.seek(SeekFrom::Start(len))?;
    f.write_all(data)?;
    let n = data.len() as u64;
    file.written.fetch_add(n, Ordering::Relaxed);
    file.live.fetch_add(n, Ordering::Relaxed);
    Ok(())
}
