//! `skitter-testsite`: serve the generated test site on a local port.
//!
//! Prints `http://127.0.0.1:PORT/` as its first stdout line (so a parent
//! process can read where to point a crawler), then serves until killed,
//! interrupted, or, unless `--ignore-stdin`, until its stdin closes, which
//! lets a parent stop it by just dropping the pipe.

use std::io::{self, Read, Write};
use std::time::Duration;

use clap::Parser;
use skitter_testsite::{SiteConfig, serve};
use tokio::net::TcpListener;

/// Serve the skitter test site on 127.0.0.1.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Number of generated pages /p/0 ../p/{N-1}.
    #[arg(long, default_value_t = 100)]
    pages: usize,
    /// Child links per page.
    #[arg(long, default_value_t = 10)]
    fanout: usize,
    /// Minimum bytes of HTML per page.
    #[arg(long, default_value_t = 4096)]
    page_size: usize,
    /// Milliseconds added before every response.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Link /specials (redirects, errors, broken bodies) from /.
    #[arg(long)]
    specials: bool,
    /// Link the infinite crawler traps from /.
    #[arg(long)]
    traps: bool,
    /// Gzip HTML when the client accepts it.
    #[arg(long)]
    gzip: bool,
    /// Share (0 to 1) of pages that build their links in JavaScript.
    #[arg(long, default_value_t = 0.0)]
    script_share: f64,
    /// Keep serving when stdin closes (e.g. when started with </dev/null).
    #[arg(long)]
    ignore_stdin: bool,
}

impl Args {
    fn config(&self) -> SiteConfig {
        SiteConfig {
            pages: self.pages,
            fanout: self.fanout,
            page_size: self.page_size,
            latency: Duration::from_millis(self.latency_ms),
            specials: self.specials,
            traps: self.traps,
            gzip: self.gzip,
            script_share: self.script_share,
            ..SiteConfig::default()
        }
    }
}

/// Completes when stdin reaches end of file (or fails).
///
/// Reads on a plain thread: a blocked read in tokio's blocking pool would
/// keep the runtime from shutting down after Ctrl-C.
async fn stdin_closed() {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        while matches!(io::stdin().read(&mut buf), Ok(n) if n > 0) {}
        drop(tx);
    });
    let _ = rx.await;
}

#[tokio::main]
async fn main() -> io::Result<()> {
    let args = Args::parse();
    let listener = TcpListener::from_std(skitter_testsite::listen(args.port)?)?;
    let mut stdout = io::stdout().lock();
    writeln!(stdout, "http://{}/", listener.local_addr()?)?;
    stdout.flush()?;
    drop(stdout);
    let ignore_stdin = args.ignore_stdin;
    let shutdown = async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = stdin_closed(), if !ignore_stdin => {}
        }
    };
    serve(args.config(), listener, shutdown).await
}
