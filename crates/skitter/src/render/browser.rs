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

use chromiumoxide::{Browser, BrowserConfig};
use futures_util::StreamExt as _;
use tokio::sync::Semaphore;

use super::{RenderError, RenderSettings};

/// How long a browser has to start and answer on its protocol connection.
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a health check waits for the browser's answer.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(3);

/// Arguments that keep the browser from reaching the network by itself: every
/// request goes through interception, and should one slip past, the proxy it
/// would use is a closed port (loopback included, `<-loopback>`: Chromium
/// otherwise never proxies loopback).
const NO_NETWORK: [&str; 4] = [
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--disable-gpu",
    "--mute-audio",
];

/// One running browser.
pub(super) struct Live {
    pub(super) browser: Browser,
    generation: u64,
    /// Drives the protocol connection; ends when the browser goes away.
    handler: tokio::task::JoinHandle<()>,
    /// The browser's profile, removed with it.
    _profile: tempfile::TempDir,
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
}

impl BrowserHost {
    /// Starts the first browser.
    pub(super) async fn start(settings: &RenderSettings) -> Result<BrowserHost, RenderError> {
        let host = BrowserHost {
            current: Mutex::new(None),
            starting: Semaphore::new(1),
            generations: AtomicU64::new(0),
        };
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
        let live = Arc::new(launch(settings, generation).await?);
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
            let _ = live.browser.kill().await;
        }
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

/// Starts one browser with interception on for every tab.
async fn launch(settings: &RenderSettings, generation: u64) -> Result<Live, RenderError> {
    let fail = |message: String| RenderError::Launch {
        path: settings.chromium.clone(),
        message,
    };
    let profile = tempfile::Builder::new()
        .prefix("skitter-chromium-")
        .tempdir()
        .map_err(|e| fail(format!("profile directory: {e}")))?;
    // A bare name (the default `chromium`) is looked up on PATH, as a shell
    // would: the browser crate only starts a path that exists.
    let executable = which::which(&settings.chromium)
        .map_err(|e| fail(format!("not found on PATH or not executable: {e}")))?;
    let config = BrowserConfig::builder()
        .chrome_executable(&executable)
        // Root in a container has no user namespace for the sandbox; the
        // browser only ever sees what skitter fetched for it.
        .no_sandbox()
        .enable_request_intercept()
        .user_data_dir(profile.path())
        .launch_timeout(LAUNCH_TIMEOUT)
        .request_timeout(settings.timeout)
        .args(NO_NETWORK)
        .build()
        .map_err(fail)?;
    let (browser, mut handler) = Browser::launch(config)
        .await
        .map_err(|e| fail(e.to_string()))?;
    let handler = tokio::spawn(async move {
        // Protocol messages this crate version cannot parse are reported as
        // errors by the stream; only its end means the connection is gone.
        while handler.next().await.is_some() {}
    });
    Ok(Live {
        browser,
        generation,
        handler,
        _profile: profile,
    })
}
