//! The Chromium process: started once, shared by every tab, restarted when a
//! render finds it dead or hung.
//!
//! Each start is a generation; a render that failed restarts the browser only
//! if the one it used is still current, so many tabs failing together cause one
//! restart, not one each. Starting happens under a one-permit semaphore (never
//! a lock held across an await), and renders of the old generation finish or
//! fail on their own: the old process is killed when its last user drops it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::Browser;
use chromiumoxide::handler::HandlerConfig;
use chromiumoxide::handler::viewport::Viewport;
use futures_util::StreamExt as _;
use tokio::sync::Semaphore;

use super::process::{self, Process, Sandbox};
use super::{RenderError, RenderSettings, profile};

/// How long a browser has to start and answer on its protocol connection.
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a health check waits for the browser's answer.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(3);

/// Arguments that keep the browser from reaching the network by itself: every
/// request goes through interception, and should one slip past, the proxy it
/// would use is a closed port (loopback included, `<-loopback>`: Chromium
/// otherwise never proxies loopback). WebRTC sends UDP around a proxy (STUN,
/// TURN, peer connections) unless told to send none but through it; Chromium
/// 156 honours `--webrtc-ip-handling-policy` (`--force-webrtc-…`, seen in
/// older advice, has no effect there: `render_safety` tests both).
const NO_NETWORK: [&str; 5] = [
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--disable-gpu",
    "--mute-audio",
];

/// One running browser.
pub(super) struct Live {
    pub(super) browser: Browser,
    generation: u64,
    /// Drives the protocol connection; ends when the browser goes away.
    handler: tokio::task::JoinHandle<()>,
    /// The browser's process, killed with it (before its profile goes).
    _process: Process,
    /// The browser's profile, removed with it.
    _profile: tempfile::TempDir,
    /// Held while one tab takes its pictures: a capture needs its tab in
    /// front (a background tab may draw no frame, and the capture waits for
    /// one), and bringing a second tab forward mid-capture would stall the
    /// first.
    pub(super) pictures: Arc<tokio::sync::Mutex<()>>,
}

impl Live {
    /// Which start of the browser this is.
    pub(super) fn generation(&self) -> u64 {
        self.generation
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.handler.abort();
    }
}

/// The current browser, and how to get a new one.
pub(super) struct BrowserHost {
    current: Mutex<Option<Arc<Live>>>,
    starting: Semaphore,
    generations: AtomicU64,
    /// How the sandbox was kept at the first start that worked; later starts
    /// go straight to it.
    sandbox: Mutex<Option<Sandbox>>,
    /// Starts without the sandbox.
    unsandboxed: AtomicU64,
}

impl BrowserHost {
    /// Starts the first browser.
    pub(super) async fn start(settings: &RenderSettings) -> Result<BrowserHost, RenderError> {
        let host = BrowserHost {
            current: Mutex::new(None),
            starting: Semaphore::new(1),
            generations: AtomicU64::new(0),
            sandbox: Mutex::new(None),
            unsandboxed: AtomicU64::new(0),
        };
        let stale = profile::remove_stale(&std::env::temp_dir());
        if stale > 0 {
            tracing::info!(
                stale,
                "removed browser profiles left by skitter processes that are gone"
            );
        }
        host.current(settings).await?;
        Ok(host)
    }

    /// The running browser, started again if a render retired the last one.
    pub(super) async fn current(
        &self,
        settings: &RenderSettings,
    ) -> Result<Arc<Live>, RenderError> {
        if let Some(live) = self.peek() {
            return Ok(live);
        }
        // The semaphore is never closed.
        let _one = self.starting.acquire().await;
        if let Some(live) = self.peek() {
            return Ok(live);
        }
        let generation = self.generations.fetch_add(1, Ordering::Relaxed) + 1;
        let live = Arc::new(self.launch(settings, generation).await?);
        *self.lock() = Some(live.clone());
        Ok(live)
    }

    /// Whether `live` still answers on its protocol connection.
    pub(super) async fn healthy(&self, live: &Live) -> bool {
        !live.handler.is_finished()
            && matches!(
                tokio::time::timeout(HEALTH_TIMEOUT, live.browser.version()).await,
                Ok(Ok(_))
            )
    }

    /// Retires `live` if it is still the current browser: the next render
    /// starts a new one.
    pub(super) fn restart(&self, live: &Live) {
        let mut current = self.lock();
        if current
            .as_ref()
            .is_some_and(|c| c.generation == live.generation)
        {
            tracing::warn!(generation = live.generation, "restarting the browser");
            *current = None;
        }
    }

    /// Closes the current browser.
    pub(super) async fn shutdown(&self) {
        let live = self.lock().take();
        if let Some(live) = live.and_then(|l| Arc::try_unwrap(l).ok()) {
            let mut live = live;
            let _ = tokio::time::timeout(HEALTH_TIMEOUT, live.browser.close()).await;
            // Dropping `live` kills what is left of its process group.
        }
    }

    /// Browser starts without the sandbox.
    pub(super) fn unsandboxed(&self) -> u64 {
        self.unsandboxed.load(Ordering::Relaxed)
    }

    /// Starts a browser, with the sandbox kept the way that worked before,
    /// else each way in turn ([`Sandbox::order`]).
    async fn launch(
        &self,
        settings: &RenderSettings,
        generation: u64,
    ) -> Result<Live, RenderError> {
        let known = *self.sandbox.lock().unwrap_or_else(|e| e.into_inner());
        let ways = known.map_or_else(|| Sandbox::order().to_vec(), |s| vec![s]);
        let mut failed = Vec::new();
        for way in ways {
            match launch(settings, generation, way).await {
                Ok(live) => {
                    *self.sandbox.lock().unwrap_or_else(|e| e.into_inner()) = Some(way);
                    if way == Sandbox::Off {
                        self.unsandboxed.fetch_add(1, Ordering::Relaxed);
                        warn_unsandboxed(&failed);
                    }
                    return Ok(live);
                }
                Err(e) => failed.push((way, e)),
            }
        }
        // The first way's error says most: later ways only weaken the sandbox.
        let (_, first) = failed.swap_remove(0);
        Err(first)
    }

    fn peek(&self) -> Option<Arc<Live>> {
        self.lock()
            .as_ref()
            .filter(|l| !l.handler.is_finished())
            .cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Arc<Live>>> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Says, once per start, that the browser runs without its sandbox and why.
fn warn_unsandboxed(failed: &[(Sandbox, RenderError)]) {
    let why = failed
        .iter()
        .map(|(way, e)| format!("{way:?}: {e}"))
        .collect::<Vec<_>>()
        .join("; ");
    tracing::warn!(
        "Chromium runs WITHOUT its sandbox: a renderer exploit on a crawled page \
         would run as skitter's user ({}). Sandboxed starts failed: {why}",
        if process::is_root() {
            "root"
        } else {
            "not root"
        },
    );
}

/// Starts one browser with interception on for every tab.
async fn launch(
    settings: &RenderSettings,
    generation: u64,
    sandbox: Sandbox,
) -> Result<Live, RenderError> {
    let fail = |message: String| RenderError::Launch {
        path: settings.chromium.clone(),
        message,
    };
    let profile = profile::create().map_err(|e| fail(format!("profile directory: {e}")))?;
    // A bare name (the default `chromium`) is looked up on PATH, as a shell
    // would.
    let executable = which::which(&settings.chromium)
        .map_err(|e| fail(format!("not found on PATH or not executable: {e}")))?;
    let process = process::spawn(
        &executable,
        profile.path(),
        sandbox,
        &NO_NETWORK,
        LAUNCH_TIMEOUT,
    )
    .await
    .map_err(fail)?;
    let config = HandlerConfig {
        request_intercept: true,
        request_timeout: settings.timeout,
        viewport: Some(Viewport::default()),
        ..HandlerConfig::default()
    };
    let (browser, mut handler) = Browser::connect_with_config(process.ws(), config)
        .await
        .map_err(|e| fail(e.to_string()))?;
    tracing::debug!(pid = process.pid(), ?sandbox, generation, "browser started");
    let handler = tokio::spawn(async move {
        // Protocol messages this crate version cannot parse are reported as
        // errors by the stream; only its end means the connection is gone.
        while handler.next().await.is_some() {}
    });
    Ok(Live {
        browser,
        generation,
        handler,
        _process: process,
        _profile: profile,
        pictures: Arc::default(),
    })
}
