//! Watching and steering a running crawl (or a `skitter fetch`, see [`fetch`])
//! over HTTP: one small server per process that serves
//!
//! - `GET /metrics`: the Prometheus exposition ([`metrics`]);
//! - `GET /api/status`: the same numbers as JSON, for the dashboard and
//!   `skitter ctl status` ([`status`]);
//! - `GET /`: the live dashboard ([`dashboard`]);
//! - `POST /control/pause|resume|stop|set?max_tasks=N&per_host=N&delay_ms=N`:
//!   the control API, behind a token ([`control`]).
//!
//! Everything it shows comes from a [`Live`] handle taken when asked, and
//! everything it changes goes through the crawl's [`Steer`] or its stop
//! token, so the crawl does no work for it while nobody asks. It binds to
//! loopback unless told otherwise, and warns when it does not.
//!
//! [`Steer`]: crate::crawl::steer::Steer

pub mod client;
pub mod control;
pub mod dashboard;
pub mod fetch;
pub mod metrics;
pub mod status;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::{ClusterWatch, PUBLISH_INTERVAL};
use crate::crawl::live::Live;
use control::{Auth, Command, Token};
use fetch::FetchWatch;

/// Connections served at once; more wait in the listen backlog. A scraper,
/// a dashboard or two and `skitter ctl` need a handful.
pub const MAX_CONNECTIONS: usize = 32;

/// How long a client may take to send a request's head.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The server could not start.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The address could not be bound.
    #[error("cannot listen on {addr} for --metrics: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// The running server; it stops when dropped or shut down.
pub struct WatchServer {
    addr: SocketAddr,
    state: Arc<State>,
    shutdown: CancellationToken,
    task: Option<JoinHandle<()>>,
}

struct State {
    source: Source,
    /// A Redis crawl's whole, for a worker's status and dashboard.
    cluster: Option<ClusterWatch>,
    token: Token,
    stop: CancellationToken,
    /// The end report's HTML, once the crawl has one.
    report: OnceLock<String>,
}

/// What the server watches.
enum Source {
    /// A crawl: everything.
    Crawl(Live),
    /// A bulk fetch: metrics, status and stop.
    Fetch(FetchWatch),
}

impl WatchServer {
    /// Listens on `addr` for `live`'s crawl; `stop` is the crawl's stop
    /// token (the one Ctrl-C cancels), `token` the control API's.
    pub async fn start(
        addr: SocketAddr,
        token: Token,
        live: Live,
        stop: CancellationToken,
    ) -> Result<WatchServer, WatchError> {
        WatchServer::serve(addr, token, Source::Crawl(live), None, stop).await
    }

    /// [`WatchServer::start`] for one worker of a Redis crawl: the status
    /// and the dashboard also show the whole crawl and every worker's line
    /// (see [`ClusterWatch`]), and this worker publishes its own line every
    /// [`PUBLISH_INTERVAL`] while the server runs.
    pub async fn start_worker(
        addr: SocketAddr,
        token: Token,
        live: Live,
        cluster: ClusterWatch,
        stop: CancellationToken,
    ) -> Result<WatchServer, WatchError> {
        let publisher = (live.clone(), cluster.clone());
        let server =
            WatchServer::serve(addr, token, Source::Crawl(live), Some(cluster), stop).await?;
        tokio::spawn(publish(publisher.0, publisher.1, server.shutdown.clone()));
        Ok(server)
    }

    /// Listens on `addr` for a bulk fetch (`skitter fetch`): `/metrics`
    /// (names under `skitter_fetch_`), `/api/status` and
    /// `POST /control/stop`; a fetch has no dashboard and no pause.
    pub async fn start_fetch(
        addr: SocketAddr,
        token: Token,
        watch: FetchWatch,
        stop: CancellationToken,
    ) -> Result<WatchServer, WatchError> {
        WatchServer::serve(addr, token, Source::Fetch(watch), None, stop).await
    }

    async fn serve(
        addr: SocketAddr,
        token: Token,
        source: Source,
        cluster: Option<ClusterWatch>,
        stop: CancellationToken,
    ) -> Result<WatchServer, WatchError> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| WatchError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| WatchError::Bind { addr, source })?;
        if !addr.ip().is_loopback() {
            tracing::warn!(
                %addr,
                "the metrics and control server listens beyond loopback: anyone who can reach it sees the crawl's numbers, and anyone with the token steers it"
            );
        }
        let state = Arc::new(State {
            source,
            cluster,
            token,
            stop,
            report: OnceLock::new(),
        });
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(accept(listener, state.clone(), shutdown.clone()));
        Ok(WatchServer {
            addr,
            state,
            shutdown,
            task: Some(task),
        })
    }

    /// The address it listens on (the port chosen, when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The control API's token.
    pub fn token(&self) -> &Token {
        &self.state.token
    }

    /// Shows `report_html` (the crawl's HTML report) on the dashboard from now on.
    pub fn ended(&self, report_html: String) {
        let _ = self.state.report.set(report_html);
    }

    /// Stops listening and closes every connection.
    pub async fn shutdown(mut self) {
        self.shutdown.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for WatchServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn accept(listener: TcpListener, state: Arc<State>, shutdown: CancellationToken) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let tracker = TaskTracker::new();
    loop {
        // `biased`: a shutdown wins over a ready permit or connection.
        let permit = tokio::select! {
            biased;
            _ = shutdown.cancelled() => break,
            permit = slots.clone().acquire_owned() => permit.expect("never closed"),
        };
        let stream = tokio::select! {
            biased;
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors, mostly: wait, not spin.
                    tracing::debug!(error = %e, "metrics server: accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let state = state.clone();
        let shutdown = shutdown.clone();
        tracker.spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |req| {
                let state = state.clone();
                async move { Ok::<_, Infallible>(handle(req, &state).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = shutdown.cancelled() => conn.as_mut().graceful_shutdown(),
            }
        });
    }
    tracker.close();
    // Connections in the middle of a request get a moment to answer it.
    let _ = tokio::time::timeout(Duration::from_secs(1), tracker.wait()).await;
}

/// Publishes this worker's line every [`PUBLISH_INTERVAL`] until `shutdown`.
async fn publish(live: Live, cluster: ClusterWatch, shutdown: CancellationToken) {
    loop {
        let snapshot = live.snapshot().await;
        if let Err(e) = cluster.publish(&snapshot).await {
            // The crawl's own Redis calls report an outage; this line can wait.
            tracing::debug!(error = %e, "cannot publish this worker's line");
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(PUBLISH_INTERVAL) => {}
        }
    }
}

type Reply = Response<Full<Bytes>>;

async fn handle(req: Request<Incoming>, state: &State) -> Reply {
    let live = match &state.source {
        Source::Crawl(live) => live,
        Source::Fetch(watch) => return handle_fetch(req, state, watch),
    };
    let path = req.uri().path();
    match (req.method(), path) {
        (&Method::GET, "/metrics") => {
            let snapshot = live.snapshot().await;
            let text = metrics::render(snapshot, status::resident_bytes());
            reply(StatusCode::OK, metrics::CONTENT_TYPE, text)
        }
        (&Method::GET, "/api/status") => {
            let snapshot = live.snapshot().await;
            let mut json = status::to_json(&snapshot, state.report.get().is_some());
            if let Some(cluster) = &state.cluster {
                match cluster.read().await {
                    Ok(whole) => {
                        json["crawl"] = whole["crawl"].clone();
                        json["workers"] = whole["workers"].clone();
                    }
                    Err(e) => json["crawl_error"] = e.to_string().into(),
                }
            }
            reply(StatusCode::OK, "application/json", json.to_string())
        }
        (&Method::GET, "/") => match state.report.get() {
            Some(html) => dashboard::report(html.clone()),
            None => dashboard::live(),
        },
        (&Method::GET, dashboard::SCRIPT_PATH) => dashboard::script(),
        (&Method::POST, p) if p.starts_with("/control/") => match refusal(&req, state) {
            Some(refused) => refused,
            None => match Command::parse(p, req.uri().query())
                .and_then(|command| command.run(live.steer(), &state.stop))
            {
                Ok(()) => {
                    let snapshot = live.snapshot().await;
                    let json = status::to_json(&snapshot, state.report.get().is_some());
                    reply(StatusCode::OK, "application/json", json.to_string())
                }
                Err(why) => reply(StatusCode::BAD_REQUEST, "text/plain", format!("{why}\n")),
            },
        },
        (_, "/metrics" | "/api/status" | "/") => reply(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            "method not allowed\n",
        ),
        _ => reply(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
    }
}

/// A bulk fetch's requests: metrics, status and stop only.
fn handle_fetch(req: Request<Incoming>, state: &State, watch: &FetchWatch) -> Reply {
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/metrics") => reply(
            StatusCode::OK,
            metrics::CONTENT_TYPE,
            watch.metrics(status::resident_bytes()),
        ),
        (&Method::GET, "/api/status") => reply(
            StatusCode::OK,
            "application/json",
            watch.status().to_string(),
        ),
        (&Method::POST, p) if p.starts_with("/control/") => match refusal(&req, state) {
            Some(refused) => refused,
            None if p == "/control/stop" => {
                state.stop.cancel();
                tracing::info!("control command: stop");
                reply(
                    StatusCode::OK,
                    "application/json",
                    watch.status().to_string(),
                )
            }
            None => reply(
                StatusCode::BAD_REQUEST,
                "text/plain",
                "a fetch can only be stopped (POST /control/stop)\n",
            ),
        },
        (_, "/metrics" | "/api/status") => reply(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            "method not allowed\n",
        ),
        _ => reply(
            StatusCode::NOT_FOUND,
            "text/plain",
            "not found (a fetch serves /metrics and /api/status)\n",
        ),
    }
}

/// Checks a command's token: the refusal to send (401 or 403), or `None`
/// when it may run.
fn refusal(req: &Request<Incoming>, state: &State) -> Option<Reply> {
    let auth = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    match control::check(&state.token, auth) {
        Auth::Allowed => None,
        Auth::Missing => {
            let mut r = reply(
                StatusCode::UNAUTHORIZED,
                "text/plain",
                "a control token is needed\n",
            );
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            Some(r)
        }
        Auth::Wrong => Some(reply(
            StatusCode::FORBIDDEN,
            "text/plain",
            "wrong control token\n",
        )),
    }
}

fn reply(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Reply {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    r
}
