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
