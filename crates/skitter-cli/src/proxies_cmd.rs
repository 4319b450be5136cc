//! `skitter proxies check`: verify a proxy list against a test URL.
//!
//! Only glue: flags → [`CheckConfig`] in one place, each result printed as it
//! completes, a summary on stderr, the good proxies written to a file, and the
//! exit status (as `probe`'s: 0 all good, 1 some bad, 2 bad usage, 130
//! interrupted). The checking lives in `skitter::fetch::proxy_check`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures_util::StreamExt;
use skitter::fetch::proxy_check::{self, CheckConfig, CheckResult, CheckSummary};
use tokio_util::sync::CancellationToken;

use crate::flags;

const EXIT_ALL_GOOD: i32 = 0;
const EXIT_SOME_BAD: i32 = 1;
const EXIT_USAGE: i32 = 2;
const EXIT_INTERRUPTED: i32 = 130;

/// Work with proxy lists.
#[derive(clap::Args, Debug, Clone)]
pub struct ProxiesArgs {
    #[command(subcommand)]
    command: ProxiesCommand,
}

#[derive(clap::Subcommand, Debug, Clone)]
enum ProxiesCommand {
    /// Try every proxy of FILE against a test URL, concurrently, and keep the good ones.
    Check(CheckArgs),
}

/// `skitter proxies check`.
#[derive(clap::Args, Debug, Clone)]
pub struct CheckArgs {
    /// The proxy list, in the format --proxy-list reads.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The URL fetched through each proxy; a proxy is good when it answers 2xx.
    #[arg(long, value_name = "URL")]
    test_url: String,
    /// Proxies tried at once.
    #[arg(short = 'c', long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    concurrency: u32,
    /// Time allowed per proxy, from connecting to the last byte of the answer.
    #[arg(long, value_parser = flags::duration, default_value = "10s", value_name = "DURATION")]
    timeout: Duration,
    /// One JSON object per line instead of text.
    #[arg(long)]
    json: bool,
    /// Write the good proxies to FILE, fastest first, as --proxy-list reads
    /// them (credentials kept; the file is created with mode 0600).
    #[arg(short = 'o', long = "output", value_name = "GOOD_FILE")]
    output: Option<PathBuf>,
    /// Let the test URL be on any loopback or private address (its own host
    /// may always be).
    #[arg(long)]
    allow_private: bool,
}

/// Runs `skitter proxies …`; returns the exit status.
pub async fn run(args: ProxiesArgs, cancel: CancellationToken) -> anyhow::Result<u8> {
    let ProxiesCommand::Check(check) = args.command;
    let mut err = crate::output::IgnoreClosed(io::stderr());
    let code = run_check(check, cancel, &mut io::stdout(), &mut err).await?;
    Ok(u8::try_from(code).unwrap_or(2))
}

/// `proxies check` with its output streams passed in, so tests can read them.
pub async fn run_check(
    args: CheckArgs,
    cancel: CancellationToken,
    out: &mut impl Write,
    err: &mut impl Write,
) -> anyhow::Result<i32> {
    let (proxies, config) = match setup(&args) {
        Ok(s) => s,
        Err(e) => {
            writeln!(err, "skitter proxies check: {e:#}")?;
            return Ok(EXIT_USAGE);
        }
    };
    let total = proxies.len();
    let started = Instant::now();
    let mut results: Vec<CheckResult> = Vec::with_capacity(total);
    let mut interrupted = false;
    let mut reader_gone = false;
    {
        let mut stream = std::pin::pin!(proxy_check::check(proxies, config));
        loop {
            let result = tokio::select! {
                biased;
                _ = cancel.cancelled() => { interrupted = true; break; }
                next = stream.next() => match next { Some(r) => r, None => break },
            };
            match write_result(out, &result, args.json) {
                Ok(()) => {}
                // `skitter proxies check … | head`: the reader is done; so are we.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                    reader_gone = true;
                    break;
                }
                Err(e) => return Err(e.into()),
            }
            results.push(result);
        }
    }
    let summary = CheckSummary::of(&results);
    writeln!(err, "{}", summary_line(&summary, total, started.elapsed()))?;
    if let Some(path) = &args.output
        && !interrupted
        && let Err(e) = write_good_file(path, &proxy_check::good_list(&results))
    {
        writeln!(err, "skitter proxies check: {e:#}")?;
        return Ok(EXIT_USAGE);
    }
    Ok(if interrupted {
        EXIT_INTERRUPTED
    } else if reader_gone || summary.bad == 0 {
        EXIT_ALL_GOOD
    } else {
        EXIT_SOME_BAD
    })
}

/// The one place where flags become library configuration.
fn setup(args: &CheckArgs) -> anyhow::Result<(Vec<String>, CheckConfig)> {
    let proxies = crate::request_flags::read_proxy_list(&args.file)?;
    let test_url = proxy_check::parse_test_url(&args.test_url)
        .with_context(|| format!("--test-url {:?} is not an http(s) URL", args.test_url))?;
    let mut config = CheckConfig::new(test_url);
    config.concurrency = args.concurrency as usize;
    config.timeout = args.timeout;
    if args.allow_private {
        config.fetch.private_access = skitter::fetch::PrivateAccess::Allow;
    }
    Ok((proxies, config))
}

fn write_result(out: &mut impl Write, r: &CheckResult, json: bool) -> io::Result<()> {
    let line = if json {
        r.to_json().to_string()
    } else {
        match &r.outcome {
            Ok(latency) => format!("+ {} {}", r.shown, millis(*latency)),
            Err(f) => format!("! {} {}: {}", r.shown, f.kind, f.message),
        }
    };
    writeln!(out, "{line}")?;
    out.flush()
}

fn millis(d: Duration) -> String {
    format!("{:.1}ms", d.as_secs_f64() * 1000.0)
}

fn summary_line(s: &CheckSummary, total: usize, elapsed: Duration) -> String {
    format!(
        "{total} proxies checked in {:.2}s: {} good, {} bad; latency of the good ones p50 {:.1}ms, p90 {:.1}ms, p99 {:.1}ms",
        elapsed.as_secs_f64(),
        s.good,
        s.bad,
        s.p50_ms,
        s.p90_ms,
        s.p99_ms
    )
}

/// Writes the good list under a temporary name (mode 0600 from the start, so
/// the credentials are never readable by others) and renames it into place:
/// a symlink at `path` is replaced, never followed.
fn write_good_file(path: &Path, text: &str) -> anyhow::Result<()> {
    let name = path.file_name().context("-o needs a file name")?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&tmp).and_then(|mut f| {
        f.write_all(text.as_bytes())?;
        f.sync_all()
    });
    let renamed = written.and_then(|()| std::fs::rename(&tmp, path));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    renamed.with_context(|| format!("cannot write {}", path.display()))
}
