//! What every command shares about output: turning output paths from the
//! command line into sinks (the one place where `-` means standard output, so
//! the library never has to guess from a path), and printing a crawl's report.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use clap::ValueEnum;
use skitter::Report;
use skitter::output::{JsonlSink, SinkError};

/// How the end-of-crawl report is printed on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// The baseline crawler's text report.
    Text,
    /// The same as one JSON document.
    Json,
    /// No report.
    None,
}

/// The JSONL sink `--jsonl PATH` asks for: stdout for `-`; otherwise the file,
/// continued (`append`, for a resumed crawl) or started afresh.
pub fn jsonl_sink(path: impl AsRef<Path>, append: Option<u64>) -> Result<JsonlSink, SinkError> {
    let path = path.as_ref();
    if path == Path::new("-") {
        Ok(JsonlSink::stdout())
    } else if let Some(floor) = append {
        JsonlSink::append_from(path, floor)
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

/// Prints the report on stdout; a closed pipe (`| head`) is not an error.
pub fn print_report(report: &Report, format: ReportFormat) -> anyhow::Result<()> {
    print_report_to(&mut std::io::stdout().lock(), report, format)
}

pub fn print_report_to(
    out: &mut dyn Write,
    report: &Report,
    format: ReportFormat,
) -> anyhow::Result<()> {
    let result = match format {
        ReportFormat::Text => report.write_text(out),
        ReportFormat::Json => report.write_json(out).and_then(|()| writeln!(out)),
        ReportFormat::None => Ok(()),
    };
    match result.and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write the report"),
    }
}

/// The database sink `--items DB` asks for, with a table per rule set of the
/// extraction flags; `None` without `--items`. Async: a PostgreSQL target is
/// connected to (and its tables made) before the crawl starts, so a wrong
/// URL or password stops it at once.
pub async fn items_sink(
    target: Option<&str>,
    rules: Option<skitter::parse::items::Rules>,
) -> anyhow::Result<Option<skitter::output::ItemsDbSink>> {
    let Some(target) = target else {
        return Ok(None);
    };
    let rules = rules
        .context("--items stores extracted items: give --extract FILE or --field NAME=SPEC")?;
    let sink = skitter::output::ItemsDbSink::open(target, rules.schemas()).await?;
    Ok(Some(sink))
}
