//! Opening output files without following symbolic links: a link planted at an
//! output's name (`ln -s ~/.bashrc crawl.warc`) must never send the output's
//! bytes elsewhere, and no check made before the open can promise that, since
//! the link may appear between the check and the open. So every open carries
//! `O_NOFOLLOW` (on Unix), which makes the open itself refuse a link.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// Times a link at the name is removed before creating gives up: more than one
/// means someone keeps planting links there.
const LINK_REMOVALS: usize = 3;

/// A temporary file in `dir` (`.skitter-…SUFFIX`), to be written whole and
/// then renamed onto an output, so that no reader sees half of it. It is
/// created as the output itself would be, mode 0666 less the umask (0644
/// usually): tempfile's own 0600 would go with it through the rename and
/// leave a mirror, a download, a WACZ or a Markdown tree that a web server
/// running as another user cannot read.
pub(crate) fn temp_beside(dir: &Path, suffix: &str) -> io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".skitter-").suffix(suffix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// Creates (or truncates) the output file at `path`. A symbolic link there is
/// replaced by the file, never written through, so a link planted at an output's
/// name cannot send its bytes elsewhere.
pub(crate) fn create_output(path: &Path) -> io::Result<File> {
    let mut removed = 0;
    loop {
        match create_no_follow(path) {
            Err(e) if is_link_refusal(&e, path) && removed < LINK_REMOVALS => {
                std::fs::remove_file(path)?;
                removed += 1;
            }
            result => return result,
        }
    }
}

/// Opens an existing output file to read and write it in place (to continue
/// it), creating it when `create`; a symbolic link there is refused rather
/// than followed.
pub(crate) fn open_output(path: &Path, create: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options
        .create(create)
        .read(true)
        .write(true)
        .truncate(false);
    no_follow(&mut options).open(path).map_err(|e| {
        if is_link_refusal(&e, path) {
            io::Error::other("it is a symbolic link, which outputs never follow")
        } else {
            e
        }
    })
}

/// `File::create` that refuses a symbolic link at `path`.
fn create_no_follow(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    no_follow(&mut options).open(path)
}

#[cfg(unix)]
fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    options.custom_flags(libc::O_NOFOLLOW)
}

/// Elsewhere the open follows links; the check in [`is_link_refusal`] is all
/// there is.
#[cfg(not(unix))]
fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    options
}

/// Whether the open failed because `path` is a symbolic link (`ELOOP` under
/// `O_NOFOLLOW`; checked by looking, which also covers systems without it).
fn is_link_refusal(e: &io::Error, path: &Path) -> bool {
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ELOOP) {
        return true;
    }
    let _ = e;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    /// A file renamed from `temp_beside` has the mode of a file created
    /// plainly in the same place (the umask's), not a temporary file's 0600.
    #[test]
    fn a_file_put_in_place_has_a_plain_files_mode() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::File::create(&plain).unwrap();
        let placed = dir.path().join("placed");
        temp_beside(dir.path(), ".tmp")
            .unwrap()
            .persist(&placed)
            .unwrap();
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&placed), mode(&plain));
    }

    #[test]
    fn the_open_itself_refuses_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = dir.path().join("out.warc");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        // The open that `create_output` makes after its check: a link that
        // appeared in between is refused, not written through.
        assert!(create_no_follow(&link).is_err());
        assert!(open_output(&link, true).is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        // And the whole call replaces the link.
        create_output(&link).unwrap().write_all(b"new").unwrap();
        assert!(
            !std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&link).unwrap(), b"new");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    }
}
