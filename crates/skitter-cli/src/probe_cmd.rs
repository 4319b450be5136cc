//! `skitter probe`: resolve many names concurrently and report which exist.
//!
//! This file is only glue: flags → [`Prober`] builder in one place, names
//! streamed from arguments, a file or stdin (checked line by line, never loaded
//! whole), results printed as they complete, a summary on stderr, and the exit
//! code. Resolution itself lives in `skitter::probe`.

use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt, future, stream};
use skitter::bulk::input::{Line, read_line_capped};
use skitter::probe::{
    DEFAULT_CONCURRENCY, DEFAULT_RETRIES, FailureKind, NameError, ProbeOutcome, ProbeResult,
    Prober, RecordData, RecordType, parse_name,
};
use tokio::io::{AsyncBufRead, BufReader};
use tokio_util::sync::CancellationToken;

/// Exit status when every name resolved.
const EXIT_ALL_RESOLVED: i32 = 0;
/// Exit status when some name did not resolve or failed.
const EXIT_SOME_UNRESOLVED: i32 = 1;
/// Exit status for bad usage: unreadable input, malformed names, bad settings.
const EXIT_USAGE: i32 = 2;
/// Exit status after Ctrl-C (128 + SIGINT, as shells report it).
const EXIT_INTERRUPTED: i32 = 130;
/// Longest input line kept; anything longer is malformed anyway (names are at
/// most 253 characters), and the cap keeps a newline-free file from filling memory.
const MAX_LINE: usize = 1024;

/// Resolve domain names concurrently and report which exist.
#[derive(clap::Args, Debug, Clone)]
pub struct ProbeArgs {
    /// Names to resolve; `-` reads names from standard input. With no names
    /// and no --input, names are read from standard input.
    #[arg(value_name = "DOMAIN")]
    pub domains: Vec<String>,

    /// Read names from FILE, one per line (`-` for standard input). Blank lines
    /// and lines starting with `#` are skipped.
    #[arg(short, long, value_name = "FILE")]
    pub input: Option<PathBuf>,

    /// Names resolved at once.
    #[arg(short, long, default_value_t = DEFAULT_CONCURRENCY, value_parser = parse_concurrency)]
    pub concurrency: usize,

    /// Time allowed for each attempt at each query (e.g. 5s, 200ms).
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub timeout: Duration,

    /// Further attempts after a timeout or SERVFAIL.
    #[arg(long, default_value_t = DEFAULT_RETRIES)]
    pub retries: u32,

    /// Name server to ask instead of the system's (/etc/resolv.conf); repeatable.
    #[arg(long = "resolver", value_name = "IP[:PORT]", value_parser = parse_resolver)]
    pub resolvers: Vec<SocketAddr>,

    /// Record types to ask for, comma-separated: A, AAAA, MX, NS, TXT.
    #[arg(
        short = 't',
        long = "type",
        value_name = "TYPES",
        value_delimiter = ',',
        default_value = "A,AAAA"
    )]
    pub types: Vec<RecordType>,

    /// Print one JSON object per line instead of text.
    #[arg(long)]
    pub json: bool,
}

fn parse_concurrency(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=100_000).contains(&n) => Ok(n),
        _ => Err("expected a number from 1 to 100000".into()),
    }
}

/// `IP` (port 53), `IP:PORT` or `[IPv6]:PORT`.
fn parse_resolver(s: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = s.parse::<SocketAddr>() {
        return Ok(addr);
    }
    s.parse::<IpAddr>()
        .map(|ip| SocketAddr::new(ip, 53))
        .map_err(|_| format!("{s:?} is not IP or IP:PORT"))
}

/// Runs `skitter probe`, writing results to stdout and diagnostics to stderr.
/// Returns the exit code; only an error writing the output is an `Err`.
pub async fn run(args: ProbeArgs, cancel: CancellationToken) -> anyhow::Result<i32> {
    // Unlocked handles, so the future stays `Send`; each line is one write.
    let mut err = crate::output::IgnoreClosed(io::stderr());
    run_with(args, cancel, &mut io::stdout(), &mut err).await
}

/// [`run`] with its output streams passed in, so tests can read them.
pub async fn run_with(
    args: ProbeArgs,
    cancel: CancellationToken,
    out: &mut impl Write,
    err: &mut impl Write,
) -> anyhow::Result<i32> {
    let prober = match build_prober(&args) {
        Ok(p) => p,
        Err(e) => {
            writeln!(err, "skitter probe: {e}")?;
            return Ok(EXIT_USAGE);
        }
    };
    let sources = match open_sources(&args).await {
        Ok(s) => s,
        Err(e) => {
            writeln!(err, "skitter probe: {e}")?;
            return Ok(EXIT_USAGE);
        }
    };
    let started = Instant::now();
    let mut input = InputTally::default();
    let mut summary = Summary::default();
    let mut stopped_early = false;
    {
        let names = names(sources).filter_map(|line| future::ready(input.accept(line, err)));
        let mut results = std::pin::pin!(prober.probe_stream(names));
        loop {
            let result = tokio::select! {
                biased;
                _ = cancel.cancelled() => { summary.interrupted = true; break; }
                next = results.next() => match next { Some(r) => r, None => break },
            };
            summary.count(&result);
            match write_result(out, &result, args.json) {
                Ok(()) => {}
                // `skitter probe … | head`: the reader is done; so are we.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                    stopped_early = true;
                    break;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    writeln!(err, "{}", summary.line(&input, started.elapsed()))?;
    Ok(exit_code(&summary, &input, stopped_early))
}

/// The one place where flags become library configuration.
fn build_prober(args: &ProbeArgs) -> Result<Prober, skitter::probe::ProbeError> {
    let mut builder = Prober::builder()
        .concurrency(args.concurrency)
        .timeout(args.timeout)
        .retries(args.retries)
        .record_types(args.types.iter().copied());
    if !args.resolvers.is_empty() {
        builder = builder.nameservers(args.resolvers.clone());
    }
    builder.build()
}

fn exit_code(summary: &Summary, input: &InputTally, stopped_early: bool) -> i32 {
    if input.malformed > 0 || input.read_failed {
        EXIT_USAGE
    } else if summary.interrupted {
        EXIT_INTERRUPTED
    } else if stopped_early || summary.not_found + summary.failed() == 0 {
        EXIT_ALL_RESOLVED
    } else {
        EXIT_SOME_UNRESOLVED
    }
}

/// Where names come from, in the order they are read.
enum Source {
    Args(Vec<String>),
    Lines {
        label: String,
        reader: Box<dyn AsyncBufRead + Unpin + Send>,
    },
}

/// Opens every input up front, so an unreadable file stops the run before
/// any query is sent.
async fn open_sources(args: &ProbeArgs) -> Result<Vec<Source>, String> {
    let stdin = || Source::Lines {
        label: "<stdin>".into(),
        reader: Box::new(BufReader::new(tokio::io::stdin())),
    };
    let mut sources = Vec::new();
    let listed: Vec<String> = args.domains.iter().filter(|d| *d != "-").cloned().collect();
    let dash_arg = listed.len() != args.domains.len();
    if !listed.is_empty() {
        sources.push(Source::Args(listed));
    }
    match &args.input {
        Some(path) if path.as_os_str() == "-" => sources.push(stdin()),
        Some(path) => {
            let file = tokio::fs::File::open(path)
                .await
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            sources.push(Source::Lines {
                label: path.display().to_string(),
                reader: Box::new(BufReader::new(file)),
            });
        }
        None if dash_arg || args.domains.is_empty() => sources.push(stdin()),
        None => {}
    }
    Ok(sources)
}

/// One item of input: a name to probe, or a line that could not be one.
enum InputLine {
    Name(String),
    Malformed {
        origin: String,
        text: String,
        error: NameError,
    },
    ReadError {
        origin: String,
        error: io::Error,
    },
}

/// Streams names from all sources, lazily: a line is read only when the
/// prober has a free slot.
fn names(sources: Vec<Source>) -> impl Stream<Item = InputLine> {
    stream::iter(sources).flat_map(|source| match source {
        Source::Args(list) => stream::iter(
            list.into_iter()
                .enumerate()
                .map(|(i, arg)| check(format!("argument {}", i + 1), arg)),
        )
        .boxed(),
        Source::Lines { label, reader } => lines(label, reader).boxed(),
    })
}

fn lines(
    label: String,
    reader: Box<dyn AsyncBufRead + Unpin + Send>,
) -> impl Stream<Item = InputLine> + Send {
    let state = Some((reader, 0usize, Vec::new()));
    stream::unfold(state, move |state| {
        let label = label.clone();
        async move {
            let (mut reader, mut number, mut buf) = state?;
            loop {
                number += 1;
                let origin = format!("{label}:{number}");
                buf.clear();
                // A line over the cap keeps its first part, which no name
                // check passes: it is reported as malformed, never fatal.
                match read_line_capped(&mut reader, &mut buf, MAX_LINE).await {
                    Ok(Line::End) => return None,
                    Err(error) => return Some((InputLine::ReadError { origin, error }, None)),
                    Ok(Line::Read | Line::TooLong) => {}
                }
                let Ok(text) = std::str::from_utf8(&buf) else {
                    let text = String::from_utf8_lossy(&buf).trim().to_owned();
                    let error = NameError::Idna {
                        reason: "line is not valid UTF-8".into(),
                    };
                    let item = InputLine::Malformed {
                        origin,
                        text,
                        error,
                    };
                    return Some((item, Some((reader, number, buf))));
                };
                let text = text.trim();
                if text.is_empty() || text.starts_with('#') {
                    continue;
                }
                let item = check(origin, text.to_owned());
                return Some((item, Some((reader, number, buf))));
            }
        }
    })
}

fn check(origin: String, text: String) -> InputLine {
    match parse_name(&text) {
        Ok(_) => InputLine::Name(text.trim().to_owned()),
        Err(error) => InputLine::Malformed {
            origin,
            text,
            error,
        },
    }
}

/// Malformed lines and read errors, reported as they are met.
#[derive(Default)]
struct InputTally {
    malformed: u64,
    read_failed: bool,
}

impl InputTally {
    /// Passes names on; reports and counts everything else.
    fn accept(&mut self, line: InputLine, err: &mut impl Write) -> Option<String> {
        match line {
            InputLine::Name(name) => return Some(name),
            InputLine::Malformed {
                origin,
                text,
                error,
            } => {
                self.malformed += 1;
                let _ = writeln!(
                    err,
                    "skitter probe: {origin}: malformed name {text:?}: {error}"
                );
            }
            InputLine::ReadError { origin, error } => {
                self.read_failed = true;
                let _ = writeln!(err, "skitter probe: {origin}: cannot read: {error}");
            }
        }
        None
    }
}

/// Counts for the closing summary.
#[derive(Default)]
struct Summary {
    resolved: u64,
    not_found: u64,
    timeout: u64,
    servfail: u64,
    refused: u64,
    other: u64,
    interrupted: bool,
}

impl Summary {
    fn count(&mut self, result: &ProbeResult) {
        match &result.outcome {
            ProbeOutcome::Resolved(_) => self.resolved += 1,
            ProbeOutcome::NotFound => self.not_found += 1,
            ProbeOutcome::Failed(FailureKind::Timeout) => self.timeout += 1,
            ProbeOutcome::Failed(FailureKind::ServFail) => self.servfail += 1,
            ProbeOutcome::Failed(FailureKind::Refused) => self.refused += 1,
            ProbeOutcome::Failed(_) => self.other += 1,
        }
    }

    fn failed(&self) -> u64 {
        self.timeout + self.servfail + self.refused + self.other
    }

    fn line(&self, input: &InputTally, elapsed: Duration) -> String {
        let mut line = format!(
            "{} resolved, {} not found, {} failed",
            self.resolved,
            self.not_found,
            self.failed()
        );
        if self.failed() > 0 {
            line += &format!(
                " ({} timeout, {} SERVFAIL, {} REFUSED, {} other)",
                self.timeout, self.servfail, self.refused, self.other
            );
        }
        if input.malformed > 0 {
            line += &format!(", {} malformed", input.malformed);
        }
        line += &format!(" in {:.2}s", elapsed.as_secs_f64());
        if self.interrupted {
            line += " (interrupted)";
        }
        line
    }
}

fn write_result(out: &mut impl Write, result: &ProbeResult, json: bool) -> io::Result<()> {
    if json {
        writeln!(out, "{}", json_line(result))
    } else {
        writeln!(out, "{}", text_line(result))
    }
}

/// `+ name  values…`, `  name` or `! name  error`.
fn text_line(result: &ProbeResult) -> String {
    match &result.outcome {
        ProbeOutcome::Resolved(records) => {
            let values: Vec<String> = records.iter().map(|r| text_value(&r.data)).collect();
            format!("+ {}  {}", result.name, values.join(" "))
        }
        ProbeOutcome::NotFound => format!("  {}", result.name),
        ProbeOutcome::Failed(kind) => format!("! {}  {kind}", result.name),
    }
}

/// Addresses bare; other records led by their type (`MX 10 mx.example.`).
fn text_value(data: &RecordData) -> String {
    if data.record_type().is_address() {
        data.to_string()
    } else {
        format!("{} {data}", data.record_type())
    }
}

fn json_line(result: &ProbeResult) -> serde_json::Value {
    let (outcome, records, error) = match &result.outcome {
        ProbeOutcome::Resolved(records) => ("resolved", records.as_slice(), None),
        ProbeOutcome::NotFound => ("not_found", &[][..], None),
        ProbeOutcome::Failed(kind) => ("failed", &[][..], Some(kind)),
    };
    let record_values: Vec<serde_json::Value> = records
        .iter()
        .map(|r| {
            let value = match &r.data {
                RecordData::Txt(text) => text.clone(),
                other => other.to_string(),
            };
            serde_json::json!({"type": r.data.record_type().to_string(), "ttl": r.ttl, "value": value})
        })
        .collect();
    let addresses: Vec<String> = records
        .iter()
        .filter_map(|r| r.data.ip())
        .map(|ip| ip.to_string())
        .collect();
    serde_json::json!({
        "name": result.name,
        "outcome": outcome,
        "records": record_values,
        "addresses": addresses,
        "error": error.map(FailureKind::code),
        "detail": error.map(ToString::to_string),
        "elapsed_ms": u64::try_from(result.elapsed.as_millis()).unwrap_or(u64::MAX),
    })
}
