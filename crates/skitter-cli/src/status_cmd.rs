//! `skitter status DIR`: what a stored crawl (`crawl --state DIR`) has done and
//! has left, readable while the crawl runs (SQLite in WAL mode lets a reader see
//! the last commit without disturbing the writer). With `--redis URL --crawl NAME`
//! it shows a shared crawl instead (see `redis_cmd`).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use serde_json::json;

use crate::output::ReportFormat;

/// Options of `skitter status`.
#[derive(Args, Debug, Clone)]
pub struct StatusArgs {
    /// The state directory given to `crawl --state`.
    #[arg(
        value_name = "DIR",
        required_unless_present = "redis",
        conflicts_with = "redis"
    )]
    pub dir: Option<PathBuf>,
    /// A crawl shared through this Redis server (redis://HOST:PORT/DB), instead of DIR.
    #[arg(long, value_name = "URL", requires = "crawl")]
    pub redis: Option<String>,
    /// The shared crawl's name (with --redis).
    #[arg(long, value_name = "NAME", requires = "redis")]
    pub crawl: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Hosts listed at most (most pending first).
    #[arg(long, default_value_t = 20)]
    pub hosts: usize,
}

/// Prints the status; exit status 0, or 2 when the crawl cannot be read.
pub async fn run(args: StatusArgs) -> anyhow::Result<u8> {
    if let (Some(redis), Some(crawl)) = (args.redis.clone(), args.crawl.clone()) {
        let report = if args.json {
            ReportFormat::Json
        } else {
            ReportFormat::Text
        };
        let target = crate::redis_cmd::Target { redis, crawl };
        return crate::redis_cmd::run_status(crate::redis_cmd::StatusArgs { target, report }).await;
    }
    let dir = args
        .dir
        .clone()
        .context("a state directory or --redis and --crawl are needed")?;
    print_dir_status(&args, &dir)
}

fn print_dir_status(args: &StatusArgs, dir: &std::path::Path) -> anyhow::Result<u8> {
    let status = skitter::state::store::status(dir)
        .with_context(|| format!("cannot read the crawl state in {}", dir.display()))?;
    let updated: chrono::DateTime<chrono::Local> = status.updated_at.into();
    if args.json {
        let hosts: Vec<_> = status
            .hosts
            .iter()
            .take(args.hosts)
            .map(|h| json!({"host": h.host, "pending": h.pending, "done": h.done, "errors": h.errors}))
            .collect();
        println!(
            "{}",
            json!({
                "running": status.running, "updated_at": updated.to_rfc3339(), "seen": status.seen,
                "queued": status.queued, "leased": status.leased, "done": status.done,
                "errors": status.errors, "hosts": hosts, "passes": status.passes,
            })
        );
        return Ok(0);
    }
    println!("state:    {}", dir.display());
    println!("running:  {}", if status.running { "yes" } else { "no" });
    println!("updated:  {}", updated.format("%Y-%m-%d %H:%M:%S"));
    println!("seen:     {}", status.seen);
    println!("queued:   {}", status.queued);
    println!("leased:   {}", status.leased);
    println!("done:     {}", status.done);
    println!("errors:   {}", status.errors);
    if status.passes.len() > 1 {
        print_passes(&status.passes);
    }
    if !status.hosts.is_empty() {
        println!("{:>10} {:>10} {:>8}  host", "pending", "done", "errors");
        for h in status.hosts.iter().take(args.hosts) {
            println!(
                "{:>10} {:>10} {:>8}  {}",
                h.pending, h.done, h.errors, h.host
            );
        }
    }
    Ok(0)
}

/// One line per pass: its number, when it started, and what it found.
fn print_passes(passes: &[skitter::state::store::PassStatus]) {
    println!(
        "{:>4}  {:<19} {:>8} {:>8} {:>8} {:>9} {:>6} {:>6} {:>8}",
        "pass", "started", "urls", "new", "changed", "unchanged", "gone", "failed", "not_due"
    );
    for p in passes {
        let started = chrono::DateTime::from_timestamp_millis(p.started_ms)
            .map(|t| {
                t.with_timezone(&chrono::Local)
                    .format("%Y-%m-%d %H:%M:%S")
                    .to_string()
            })
            .unwrap_or_default();
        println!(
            "{:>4}  {:<19} {:>8} {:>8} {:>8} {:>9} {:>6} {:>6} {:>8}",
            p.number, started, p.urls, p.new, p.changed, p.unchanged, p.gone, p.failed, p.not_due
        );
    }
}
