//! The `skitter` command line (being built).
//!
//! Minimal dispatcher so `skitter probe` can be run and tested on this branch;
//! the lead merges the subcommand into the real main.
mod probe_cmd;

use clap::{Parser, Subcommand};
use tokio_util::sync::CancellationToken;

#[derive(Parser)]
#[command(
    name = "skitter",
    version,
    about = "A fast, polite, crash-safe web crawler"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Resolve domain names concurrently and report which exist.
    Probe(probe_cmd::ProbeArgs),
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let code = match cli.command {
        Command::Probe(args) => probe_cmd::run(args, cancel).await?,
    };
    std::process::exit(code);
}
