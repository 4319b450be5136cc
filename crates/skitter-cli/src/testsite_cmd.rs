//! `skitter testsite`: serve the local test site (see the `skitter-testsite`
//! crate) on loopback, for trying skitter offline and for `skitter bench`, which
//! runs it as a child process so the crawler's CPU and memory are measured alone.
//!
//! It prints its base URL as the first line on stdout, then serves until Ctrl-C,
//! SIGTERM, or end of standard input (so a parent that dies takes it down too).

use std::net::Ipv4Addr;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use skitter_testsite::{Faults, SiteConfig};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use crate::flags;

/// Options of `skitter testsite`.
#[derive(Args, Debug, Clone)]
pub struct TestsiteArgs {
    /// Generated pages (`/p/0` … `/p/N-1`, plus `/`).
    #[arg(long, default_value_t = 1000)]
    pub pages: usize,
    /// Links from each page to its children (the pages form a tree).
    #[arg(long, default_value_t = 10)]
    pub fanout: usize,
    /// Bytes of HTML per page.
    #[arg(long, value_parser = flags::size, default_value = "4096")]
    pub page_size: u64,
    /// Delay before every response, e.g. 50ms.
    #[arg(long, value_parser = flags::duration, default_value = "0s")]
    pub latency: Duration,
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Also serve and link the special cases (redirects, errors, broken bodies…).
    #[arg(long)]
    pub specials: bool,
    /// Also serve and link infinite crawler traps (calendar, deep loops, session IDs).
    #[arg(long)]
    pub traps: bool,
    /// Serve pages gzip-encoded to clients that accept it.
    #[arg(long)]
    pub gzip: bool,
    /// Fault modes, e.g. `fail=0.1,times=1,status=503,robots=2,rate=500,seed=7`
    /// (see the skitter-testsite crate's `fault` module for every key).
    #[arg(long, value_parser = parse_faults, value_name = "SPEC")]
    pub faults: Option<Faults>,
    /// Keep serving when standard input closes.
    #[arg(long)]
    pub ignore_stdin: bool,
}

impl TestsiteArgs {
    /// The site configuration these flags describe.
    pub fn site_config(&self) -> SiteConfig {
        SiteConfig {
            pages: self.pages,
            fanout: self.fanout,
            page_size: self.page_size as usize,
            latency: self.latency,
            specials: self.specials,
            traps: self.traps,
            gzip: self.gzip,
            faults: self.faults.clone().unwrap_or_default(),
            ..SiteConfig::default()
        }
    }
}

/// Serves until stopped.
pub async fn run(args: TestsiteArgs, cancel: CancellationToken) -> anyhow::Result<u8> {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, args.port))
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{}", args.port))?;
    let addr = listener.local_addr()?;
    println!("http://{addr}/");
    let stop = cancel.clone();
    if !args.ignore_stdin {
        tokio::spawn(async move {
            let mut stdin = tokio::io::stdin();
            let mut buf = [0u8; 256];
            while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
            stop.cancel();
        });
    }
    skitter_testsite::serve(args.site_config(), listener, cancel.cancelled_owned())
        .await
        .context("test site failed")?;
    Ok(0)
}

/// Parses a `--faults` spec.
pub fn parse_faults(spec: &str) -> Result<Faults, String> {
    spec.parse()
}
