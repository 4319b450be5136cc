//! The `skitter` command line: a thin layer that turns flags into library builders,
//! runs them, prints what they return, and picks the exit status.
//!
//! Exit statuses: 0 when the job completed (page errors are reported, not fatal),
//! 1 when `fetch`/`probe`/`proxies check` had failures or `check` found a broken link or `wacz validate` found an invalid file, 2 on bad usage or a fatal error, 130 when
//! interrupted by Ctrl-C or SIGTERM.

/// `println!`, `eprintln!` and `eprint!` that ignore a closed stream:
/// the std macros panic when stdout or stderr is a closed pipe (`skitter … 2>&1 |
/// head`), and output nobody reads is no reason to stop a job or change its status.
macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

#[cfg(feature = "testsite")]
mod bench_cmd;
mod check_cmd;
mod check_output;
mod config;
mod content_flags;
mod crawl_cmd;
mod ctl_cmd;
mod extract_flags;
mod fetch_cmd;
mod flags;
mod llms_flags;
mod manual;
mod output;
mod output_flags;
mod probe_cmd;
mod progress;
mod proxies_cmd;
mod redis_cmd;
#[cfg(test)]
mod reference;
mod render_flags;
mod request_flags;
mod resume_outputs;
mod signal;
mod site_cmd;
mod status_cmd;
#[cfg(feature = "testsite")]
mod testsite_cmd;
mod wacz_cmd;
mod watch_flags;

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// jemalloc instead of the system allocator (the `jemalloc` feature, on by
/// default; `--no-default-features` for the system one). On `skitter bench`
/// it gives about 40% more pages/s for the same work (glibc's malloc spends
/// much of a crawler's CPU in its own bookkeeping), and at 100,000 hosts
/// twice the pages/s (glibc's free lists grow with the heap); RSS per request
/// in flight is about the same, the base RSS some 15 MB more. It was once
/// left off because writing WARC + JSONL then costs a larger share of the
/// (higher) pages/s, about 26% instead of 15%: a ratio, while every crawl,
/// with outputs or without, is faster with it. The library leaves the choice
/// to the program that links it.
#[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// A fast, polite, crash-safe asynchronous web crawler.
#[derive(Parser, Debug)]
#[command(name = "skitter", version, about, long_about = None)]
struct Cli {
    /// More logging on stderr (-v: debug, -vv: trace).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Only errors on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Read options from this TOML file; flags given on the command line win
    /// over it. Keys are the long flag names (`max-tasks = 200`); a `[crawl]`,
    /// `[fetch]`, ... table holds one command's options (see the book's
    /// "Configuration" chapter).
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// Print the settings this command would run with (command line, then
    /// --config file, then defaults) as a config file, and exit.
    #[arg(long, global = true)]
    print_config: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Crawl from root URLs and print the report.
    Crawl(Box<crawl_cmd::CrawlArgs>),
    /// Fetch a list of URLs or curl-style patterns concurrently, optionally saving bodies.
    Fetch(Box<fetch_cmd::FetchArgs>),
    /// Crawl a site and check every link on every page (links to other
    /// sites, images, scripts and #fragments too); exit 1 when one is broken.
    Check(Box<check_cmd::CheckArgs>),
    /// Resolve domain names concurrently and report which exist.
    Probe(probe_cmd::ProbeArgs),
    /// Check proxy lists: `proxies check FILE --test-url URL` tries every
    /// proxy concurrently and keeps the good ones.
    Proxies(proxies_cmd::ProxiesArgs),
    /// Show what a crawl has done and has left: one kept in a state directory
    /// (`crawl --state DIR`) or one shared through Redis (`--redis URL --crawl NAME`).
    Status(status_cmd::StatusArgs),
    /// Join a crawl shared through Redis (started with `crawl --redis`), from any machine.
    Worker(Box<redis_cmd::WorkerArgs>),
    /// Remove every Redis key of a shared crawl.
    RedisClean(redis_cmd::CleanArgs),
    /// Steer a crawl started with --metrics: pause, resume, stop, set
    /// --max-tasks; or print its live status.
    Ctl(ctl_cmd::CtlArgs),
    /// Pack WARC files into a WACZ file (`wacz create`), or check one (`wacz validate`).
    #[command(subcommand)]
    Wacz(wacz_cmd::WaczCommand),
    /// Print the manual page (`skitter man > skitter.1`), or write one per command.
    Man(manual::ManArgs),
    /// Print a shell's completion script (`skitter completions bash`).
    Completions(manual::CompletionsArgs),
    /// `bench` and `testsite`, with the `testsite` feature only.
    #[command(flatten)]
    Site(site_cmd::SiteCommand),
}

/// Raises the soft open-file limit to the hard one, as servers do: the
/// default connection cap is half the soft limit (see `--max-connections`),
/// and a broad crawl wants more connections than the usual soft limit of
/// 1024 allows. Nothing is lost if it cannot.
fn raise_open_file_limit() {
    if let Ok((_, hard)) = rlimit::Resource::NOFILE.get() {
        let _ = rlimit::Resource::NOFILE.set(hard, hard);
    }
}

fn main() -> ExitCode {
    let cmd = Cli::command();
    let expanded = match config::expand(&cmd, std::env::args_os().collect()) {
        Ok(expanded) => expanded,
        Err(e) => return fail(&e.into()),
    };
    let matches = cmd
        .clone()
        .try_get_matches_from(&expanded.args)
        .unwrap_or_else(|e| e.exit());
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if cli.print_config {
        println!(
            "{}",
            config::print_config(&cmd, &matches, &expanded).trim_end()
        );
        return ExitCode::SUCCESS;
    }
    raise_open_file_limit();
    let logs = progress::StderrLogs::default();
    init_logging(cli.verbose, cli.quiet, logs.clone());
    if let Command::Crawl(args) = &cli.command {
        config::warn_if_rendering(args, &expanded.from_file);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(&anyhow::anyhow!("cannot start the async runtime: {e}")),
    };
    let result = runtime.block_on(async {
        let cancel = signal::cancel_on_signals();
        match cli.command {
            // A crawl with --redis is one worker of a shared crawl.
            Command::Crawl(args) if args.redis.is_some() => {
                redis_cmd::run_shared(*args, cancel).await
            }
            Command::Crawl(args) => crawl_cmd::run(*args, cancel, !cli.quiet, &logs).await,
            Command::Fetch(args) => fetch_cmd::run(*args, cli.verbose, cli.quiet, cancel).await,
            Command::Check(args) => check_cmd::run(*args, cancel).await,
            Command::Worker(args) => redis_cmd::run_worker(*args, cancel).await,
            Command::Status(args) => status_cmd::run(args).await,
            Command::RedisClean(args) => redis_cmd::run_clean(args).await,
            Command::Ctl(args) => ctl_cmd::run(args).await,
            Command::Proxies(args) => proxies_cmd::run(args, cancel).await,
            Command::Probe(args) => probe_cmd::run(args, cancel)
                .await
                .map(|code| u8::try_from(code).unwrap_or(2)),
            Command::Wacz(command) => command.run().await,
            Command::Man(args) => manual::man(args),
            Command::Completions(args) => manual::completions(args),
            Command::Site(command) => command.run(cancel).await,
        }
    });
    // Do not wait for stray blocking tasks (e.g. a stdin reader) at exit.
    runtime.shutdown_background();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => fail(&e),
    }
}

fn fail(e: &anyhow::Error) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "skitter: error: {}", with_causes(e));
    ExitCode::from(2)
}

/// The error and its causes, `: `-separated like anyhow's `{:#}`, but each
/// text once: the library's errors show their source's text themselves
/// (`warc: cannot write x.warc: No such file or directory`) and also keep it
/// as their source, so `{:#}` would print it twice.
fn with_causes(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain().map(ToString::to_string) {
        if text.is_empty() {
            text = cause;
        } else if text != cause && !text.ends_with(&format!(": {cause}")) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

fn init_logging(verbose: u8, quiet_flag: bool, logs: progress::StderrLogs) {
    // A crawl blocked by robots.txt outages is said even with -q: it is why
    // a quiet crawl sits still.
    let quiet = format!("error,{}=warn", skitter::crawl::stall::STALL_TARGET);
    let default = match (quiet_flag, verbose) {
        (true, _) => quiet.as_str(),
        (false, 0) => "info",
        (false, 1) => "debug",
        (false, _) => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("SKITTER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(logs)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .init();
}

#[cfg(test)]
mod tests {
    use super::with_causes;

    #[test]
    fn causes_are_shown_once() {
        let io = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let cases: [(anyhow::Error, String); 3] = [
            // A library error that shows its source's text and keeps it as source.
            (
                skitter::output::SinkError::io("warc", "cannot write x.warc", io()).into(),
                format!("warc: cannot write x.warc: {}", io()),
            ),
            // Context added by the command line, over an error that does not.
            (
                anyhow::Error::new(io()).context("cannot write the report"),
                format!("cannot write the report: {}", io()),
            ),
            (anyhow::anyhow!("alone"), "alone".to_string()),
        ];
        for (e, want) in cases {
            assert_eq!(with_causes(&e), want);
        }
    }
}
