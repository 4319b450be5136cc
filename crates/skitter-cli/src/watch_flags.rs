//! `--metrics` and `--control-token` (crawl, worker, fetch): the flags that
//! start the library's watch server ([`skitter::watch::WatchServer`]) beside a
//! crawl or a bulk fetch.

use std::net::SocketAddr;

use anyhow::Context;
use clap::Args;
use skitter::cluster::ClusterWatch;
use skitter::crawl::live::Live;
use skitter::watch::WatchServer;
use skitter::watch::control::Token;
use skitter::watch::fetch::FetchWatch;
use tokio_util::sync::CancellationToken;

/// The watch server's flags.
#[derive(Args, Debug, Clone, Default)]
pub struct WatchFlags {
    /// Serve Prometheus metrics at http://ADDR/metrics, a live dashboard at
    /// http://ADDR/ and the control API (pause, resume, stop, max tasks,
    /// per host, delay; see `skitter ctl`) while the crawl runs (`fetch`:
    /// the metrics, `ctl status` and `ctl stop`). Use a loopback address
    /// (127.0.0.1:9184): any other is reachable by others, and skitter warns.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<SocketAddr>,
    /// The control API's token (16 visible characters or more); without it
    /// a random one is made and printed on stderr at the start.
    #[arg(long, value_name = "TOKEN", requires = "metrics")]
    pub control_token: Option<String>,
    /// After the crawl, keep serving the dashboard (with the end report)
    /// and the metrics this long before exiting; Ctrl-C ends it early.
    #[arg(long, value_parser = crate::flags::duration, value_name = "DURATION", requires = "metrics")]
    pub metrics_linger: Option<std::time::Duration>,
}

impl WatchFlags {
    /// Starts the server for `live`'s crawl when `--metrics` asks for one;
    /// `stop` is the crawl's stop token (the one Ctrl-C cancels).
    pub async fn start(
        &self,
        live: Live,
        stop: &CancellationToken,
    ) -> anyhow::Result<Option<WatchServer>> {
        let Some(addr) = self.metrics else {
            return Ok(None);
        };
        let (token, made) = self.token()?;
        let server = WatchServer::start(addr, token, live, stop.clone()).await?;
        Ok(Some(announce(server, made, ("dashboard", ""))))
    }

    /// Starts the server for one worker of a Redis crawl: as [`Self::start`],
    /// and its status and dashboard show the whole crawl through `cluster`.
    pub async fn start_worker(
        &self,
        live: Live,
        cluster: ClusterWatch,
        stop: &CancellationToken,
    ) -> anyhow::Result<Option<WatchServer>> {
        let Some(addr) = self.metrics else {
            return Ok(None);
        };
        let (token, made) = self.token()?;
        let server = WatchServer::start_worker(addr, token, live, cluster, stop.clone()).await?;
        Ok(Some(announce(server, made, ("dashboard", ""))))
    }

    /// Starts the server for a bulk fetch counted by `watch`, when `--metrics`
    /// asks for one.
    pub async fn start_fetch(
        &self,
        watch: FetchWatch,
        stop: &CancellationToken,
    ) -> anyhow::Result<Option<WatchServer>> {
        let Some(addr) = self.metrics else {
            return Ok(None);
        };
        let (token, made) = self.token()?;
        let server = WatchServer::start_fetch(addr, token, watch, stop.clone()).await?;
        Ok(Some(announce(server, made, ("status", "api/status"))))
    }

    /// The token given, or a new one (`true`: made here, to be printed).
    fn token(&self) -> anyhow::Result<(Token, bool)> {
        Ok(match &self.control_token {
            Some(t) => (Token::new(t).context("--control-token")?, false),
            None => (Token::generate(), true),
        })
    }

    /// Once the crawl is over: shows `report_html` on the dashboard, and
    /// keeps serving for `--metrics-linger` (or until `stop` is cancelled).
    pub async fn linger(
        &self,
        server: Option<WatchServer>,
        report_html: Option<String>,
        stop: &CancellationToken,
    ) {
        let Some(server) = server else { return };
        if let Some(html) = report_html {
            server.ended(html);
        }
        if let Some(d) = self.metrics_linger {
            tokio::select! {
                _ = tokio::time::sleep(d) => {}
                _ = stop.cancelled() => {}
            }
        }
        server.shutdown().await;
    }
}

/// Says where the server listens, with its `(name, path)` page for people,
/// and its token when made here.
fn announce(server: WatchServer, made: bool, (name, path): (&str, &str)) -> WatchServer {
    let at = server.addr();
    eprintln!("skitter: metrics at http://{at}/metrics, {name} at http://{at}/{path}");
    if made {
        eprintln!("skitter: control token {}", server.token().as_str());
    }
    server
}
