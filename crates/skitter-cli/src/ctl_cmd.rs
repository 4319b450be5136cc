//! `skitter ctl`: steers a crawl started with `--metrics ADDR` through its
//! control API (pause, resume, stop, a new `--max-tasks`, `--per-host` or
//! `--delay`), or prints its
//! status, by the library's client ([`skitter::watch::client`]).

use std::net::SocketAddr;

use anyhow::Context;
use clap::{Args, Subcommand};
use skitter::watch::client;
use skitter::watch::control::{Command, Settings};

/// Options of `skitter ctl`.
#[derive(Args, Debug, Clone)]
pub struct CtlArgs {
    #[command(subcommand)]
    pub action: CtlAction,
    /// The crawl's `--metrics` address.
    #[arg(
        long,
        value_name = "ADDR",
        global = true,
        default_value = "127.0.0.1:9184"
    )]
    pub addr: SocketAddr,
    /// The control token the crawl printed at its start (or was given).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "SKITTER_CONTROL_TOKEN",
        global = true,
        hide_env_values = true
    )]
    pub token: Option<String>,
}

/// What `skitter ctl` does.
#[derive(Subcommand, Debug, Clone)]
pub enum CtlAction {
    /// Claim no more URLs until resumed; fetches already started finish.
    Pause,
    /// Go on after a pause.
    Resume,
    /// Stop as Ctrl-C does: outputs completed, state saved.
    Stop,
    /// Change settings of the running crawl (at least one).
    #[command(group(clap::ArgGroup::new("setting").required(true).multiple(true)))]
    Set {
        /// The new cap on concurrent requests.
        #[arg(long, value_name = "N", value_parser = crate::flags::count, group = "setting")]
        max_tasks: Option<usize>,
        /// The new cap on concurrent requests to one host; each host reaches
        /// a higher one a clean answer at a time.
        #[arg(long, value_name = "N", value_parser = crate::flags::count, group = "setting")]
        per_host: Option<usize>,
        /// The new least gap between two request starts to one host (in
        /// whole milliseconds, e.g. 250ms, 2s; 0 for none), from each host's
        /// next request on.
        #[arg(long, value_name = "DURATION", value_parser = crate::flags::duration, group = "setting")]
        delay: Option<std::time::Duration>,
    },
    /// Print the crawl's live numbers as JSON (needs no token).
    Status,
}

/// Sends the command; exit status 0 when the crawl took it, 2 otherwise.
pub async fn run(args: CtlArgs) -> anyhow::Result<u8> {
    let command = match args.action {
        CtlAction::Pause => Command::Pause,
        CtlAction::Resume => Command::Resume,
        CtlAction::Stop => Command::Stop,
        CtlAction::Set {
            max_tasks,
            per_host,
            delay,
        } => Command::Set(Settings {
            max_tasks,
            per_host,
            delay,
        }),
        CtlAction::Status => {
            let answer = client::get(args.addr, "/api/status").await?;
            println!("{}", answer.body.trim_end());
            return Ok(if answer.status == 200 { 0 } else { 2 });
        }
    };
    let token = args
        .token
        .as_deref()
        .context("a control token is needed: --token TOKEN or $SKITTER_CONTROL_TOKEN")?;
    let answer = client::send(args.addr, Some(token), &command).await?;
    if answer.status == 200 {
        println!("{}", answer.body.trim_end());
        Ok(0)
    } else {
        eprintln!(
            "skitter ctl: the crawl refused it ({}): {}",
            answer.status,
            answer.body.trim_end()
        );
        Ok(2)
    }
}
