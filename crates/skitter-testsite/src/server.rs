//! The accept loop and connections: hyper-util's auto builder, so one port
//! speaks HTTP/1.1 with keep-alive and HTTP/2 over cleartext (h2c).
//!
//! Shutdown follows one token: stop accepting, cancel hangs and stalls,
//! ask each connection to close gracefully, and wait (boundedly) for all
//! tasks, HTTP/2 stream tasks included, through one `TaskTracker`.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::SiteConfig;
use crate::route::{Site, handle};
use crate::stats::Counters;

/// How long a connection may take to finish after shutdown (a client that
/// stops reading `/asset/big.bin` must not hold the server up forever).
const GRACE: Duration = Duration::from_secs(2);

/// Pause after a failed accept (e.g. out of file descriptors) before retrying.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Runs hyper's spawned tasks (HTTP/2 streams) under the shutdown tracker.
#[derive(Clone)]
struct TrackedExecutor(TaskTracker);

impl<F> hyper::rt::Executor<F> for TrackedExecutor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        self.0.spawn(fut);
    }
}

/// Builds the shared state of a site served at `addr`.
pub(crate) fn site(config: &SiteConfig, addr: SocketAddr) -> Arc<Site> {
    let origin = format!("http://{addr}");
    Arc::new(Site {
        config: config.with_origin(&origin),
        origin,
        counters: Arc::new(Counters::new(config.record_starts)),
        faults: crate::fault::FaultState::new(config.faults.clone()),
        shutdown: CancellationToken::new(),
        pass: crate::versions::Pass::default(),
    })
}

/// Serves the site described by `config` on `listener` until `shutdown`
/// completes, then closes every connection and returns.
///
/// For running a site in its own process or runtime; tests usually want
/// [`crate::TestSite::start`], which also gives access to the counters.
pub async fn serve(
    config: SiteConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let site = site(&config, listener.local_addr()?);
    run(site, listener, shutdown).await;
    Ok(())
}

/// Accepts connections until `shutdown` completes or the site's token is cancelled.
pub(crate) async fn run(
    site: Arc<Site>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) {
    let tracker = TaskTracker::new();
    let mut builder = auto::Builder::new(TrackedExecutor(tracker.clone()));
    builder
        .http2()
        .max_concurrent_streams(site.config.h2_max_streams);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            () = site.shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                tracker.spawn(connection(builder.clone(), stream, Arc::clone(&site)));
            }
            Err(err) => {
                tracing::warn!(%err, "test site: accept failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
            }
        }
    }
    drop(listener);
    site.shutdown.cancel();
    tracker.close();
    tracker.wait().await;
}

async fn connection(builder: auto::Builder<TrackedExecutor>, stream: TcpStream, site: Arc<Site>) {
    // Small responses on loopback: Nagle would add delays, not save packets.
    if let Err(err) = stream.set_nodelay(true) {
        tracing::debug!(%err, "test site: set_nodelay failed");
    }
    let token = site.shutdown.clone();
    let service = service_fn(move |req| handle(Arc::clone(&site), req));
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let result = tokio::select! {
        result = conn.as_mut() => result,
        () = token.cancelled() => {
            conn.as_mut().graceful_shutdown();
            tokio::time::timeout(GRACE, conn).await.unwrap_or(Ok(()))
        }
    };
    if let Err(err) = result {
        // Expected for /truncated, /hang at shutdown, and clients hanging up.
        tracing::debug!(%err, "test site: connection ended with an error");
    }
}
