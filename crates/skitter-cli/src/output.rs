//! Turning output paths from the command line into sinks: the one place where
//! `-` means standard output, so the library never has to guess from a path.

use std::path::Path;

use skitter::sink::{JsonlSink, SinkError};

/// The JSONL sink `--jsonl PATH` asks for: stdout for `-`; otherwise the file,
/// continued (`append`, for a resumed crawl) or started afresh.
pub fn jsonl_sink(path: impl AsRef<Path>, append: bool) -> Result<JsonlSink, SinkError> {
    let path = path.as_ref();
    if path == Path::new("-") {
        Ok(JsonlSink::stdout())
    } else if append {
        JsonlSink::append(path)
    } else {
        JsonlSink::create(path)
    }
}

/// A stream on which a closed pipe is not an error: what is written to it after
/// its reader went away is dropped (for stderr, whose messages no one reads then).
pub struct IgnoreClosed<W>(pub W);

impl<W: std::io::Write> std::io::Write for IgnoreClosed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.0.write(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(buf.len()),
            other => other,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.0.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    }
}
