//! Rendering pages that need JavaScript in headless Chromium (`--render`).
//!
//! The per-URL pipeline fetches a page as usual; under `--render auto` it asks
//! [`auto::judge`] whether the plain HTML looks script-built, under `always` it
//! renders every HTML page. A render loads the page in a browser tab whose
//! every request is intercepted (`intercept`) and fetched by skitter itself
//! through a [`SubFetch`] the pipeline provides, so scope, robots.txt and the
//! address policy apply to the browser as to any link. The browser is started
//! with a proxy that goes nowhere, so nothing can leave past interception.
//!
//! One concern per file: [`auto`] the rules, `browser` the process and its
//! restart, `tab` one render on one tab, `intercept` the request bridge.
//! This module owns the tab pool (a semaphore of `--render-tasks` permits,
//! apart from `--max-tasks`, and the tabs kept open between renders when
//! `tab` allows it: at most one per permit) and the tries.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::Semaphore;
use url::Url;

use crate::fetch::Exchange;

pub mod auto;
mod browser;
mod intercept;
mod process;
mod profile;
pub mod screenshot;
mod stats;
pub use stats::RenderCounts;
mod tab;

pub use auto::RenderReason;
pub use screenshot::Screenshots;

/// Time beyond a render's limit for opening its tab, and for closing one.
const TAB_MARGIN: Duration = Duration::from_secs(5);

/// Which pages are rendered in the browser.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RenderMode {
    /// None: the plain fetch only (the default).
    #[default]
    Never,
    /// HTML pages the [`auto`] rules pick.
    Auto,
    /// Every HTML page.
    Always,
}

/// The rendering settings of a crawl.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct RenderSettings {
    /// Which pages are rendered.
    pub mode: RenderMode,
    /// The Chromium executable (default: `$SKITTER_CHROMIUM`, else `chromium`
    /// on `PATH`). Not part of a shared crawl's spec: each machine has its own.
    #[serde(skip)]
    pub chromium: PathBuf,
    /// Tabs rendering at once (default 4), apart from the fetch cap.
    pub tasks: usize,
    /// How long one render may take, load and settling included (default 15 s).
    pub timeout: Duration,
    /// Renders tried per page before it is recorded as failed (default 2); a
    /// failed try restarts the browser when it crashed or hung.
    pub tries: u32,
    /// After the page's load event, how much page time its timers and the
    /// requests they start get before the page counts as settled (default
    /// 1 s). Page time is the browser's virtual clock: timers fire without
    /// waiting real time, and the clock stands still while a request is in
    /// flight.
    pub settle: Duration,
    /// Requests the browser may have skitter fetch for one render (default
    /// 500); later ones fail in the browser and are counted
    /// (`render_refused_budget`).
    pub max_requests: u64,
    /// Bytes of response bodies skitter may hand the browser in one render
    /// (default 64 MiB), which is also what a render holds for the WARC; a
    /// response past it fails in the browser and is counted
    /// (`render_refused_budget`).
    pub max_bytes: u64,
    /// Take a full-page PNG and a thumbnail of every rendered page once it
    /// settled (`--screenshots`; see [`screenshot`]).
    pub screenshots: bool,
}

impl RenderSettings {
    /// Whether the crawl needs the browser: pages are rendered, or
    /// photographed (`--screenshots` without `--render`).
    pub fn needs_browser(&self) -> bool {
        self.mode != RenderMode::Never || self.screenshots
    }

    /// One render's budget for the browser's requests.
    fn budget(&self) -> Budget {
        Budget {
            requests: self.max_requests,
            bytes: self.max_bytes,
        }
    }
}

/// What the browser's requests may take in one render: the crawl's page
/// limits (`--max-pages`, `--max-per-host`) count pages, not their parts.
#[derive(Clone, Copy, Debug)]
struct Budget {
    requests: u64,
    bytes: u64,
}

impl Default for RenderSettings {
    fn default() -> Self {
        RenderSettings {
            mode: RenderMode::Never,
            chromium: std::env::var_os("SKITTER_CHROMIUM")
                .map_or_else(|| PathBuf::from("chromium"), PathBuf::from),
            tasks: 4,
            timeout: Duration::from_secs(15),
            tries: 2,
            settle: Duration::from_secs(1),
            max_requests: 500,
            max_bytes: 64 << 20,
            screenshots: false,
        }
    }
}

/// Why rendering could not start or a page could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The browser did not start.
    #[error("cannot start Chromium ({path}): {message}")]
    Launch {
        /// The executable tried.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The browser, or the protocol connection to it, failed during a render.
    #[error("browser: {0}")]
    Browser(String),
    /// The render took longer than its time limit.
    #[error("render timed out after {0:?}")]
    Timeout(Duration),
}

/// A request the browser made, as the pipeline is asked to fetch it.
#[derive(Debug)]
pub struct SubRequest {
    /// The URL, fragment removed.
    pub url: Url,
    /// The page being rendered.
    pub page: Url,
}

/// A response to hand to the browser.
#[derive(Debug)]
pub struct SubResponse {
    /// The status code.
    pub status: u16,
    /// Header lines, with content and transfer codings removed (the body is decoded).
    pub headers: Vec<(String, String)>,
    /// The decoded body.
    pub body: Bytes,
    /// The exchange as skitter made it, for the WARC.
    pub exchange: Option<Exchange>,
}

/// Why a browser request was not answered with a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The URL is outside the crawl's scope (or not http(s)).
    Scope,
    /// robots.txt disallows it, or is unavailable.
    Robots,
    /// The address policy refused the address it resolves to.
    Address,
    /// A method other than GET or HEAD.
    Method,
    /// The fetch failed (connection, timeout…).
    Failed(String),
}

/// Fetches the browser's requests the way the crawl fetches anything: what a
/// render is given by the per-URL pipeline, which knows the crawl's rules.
pub trait SubFetch: Sync {
    /// Fetches one request, or says why not (the browser then sees a failed
    /// request).
    fn fetch(
        &self,
        req: SubRequest,
    ) -> impl std::future::Future<Output = Result<SubResponse, Refusal>> + Send;
}

/// The page as the plain fetch got it: the browser is served this for the
/// page's own URL instead of fetching it again.
#[derive(Debug, Clone)]
pub struct Prefetched {
    /// The page's URL.
    pub url: Url,
    /// Its status.
    pub status: u16,
    /// Its headers, codings removed.
    pub headers: Vec<(String, String)>,
    /// Its decoded body.
    pub body: Bytes,
}

/// What rendering a page produced.
#[derive(Debug, Default)]
pub struct Rendered {
    /// The serialised DOM after the page settled.
    pub html: String,
    /// Links in the rendered DOM (`a[href]`, `area[href]`), absolute.
    pub links: Vec<String>,
    /// Navigations the page's scripts attempted (a location change, a
    /// `history.pushState`), absolute; they were not followed by the browser.
    pub navigations: Vec<String>,
    /// Every exchange skitter made for the browser, in order (when the
    /// crawl archives exchanges).
    pub exchanges: Vec<(Url, Exchange)>,
    /// Requests skitter answered with a response.
    pub fetched: u64,
    /// Requests refused or failed, and why (within the budget).
    pub refused: Vec<(String, Refusal)>,
    /// Requests failed past the render's budget of requests or bytes.
    pub over_budget: u64,
    /// The page's pictures, with `--screenshots` (`None` when taking them
    /// failed: the render still counts).
    pub screenshots: Option<Screenshots>,
}

/// The browser and the tab pool of one crawl.
pub(crate) struct Renderer {
    settings: RenderSettings,
    browser: browser::BrowserHost,
    tabs: Arc<Semaphore>,
    /// Tabs open between renders, taken by the next permit holder.
    idle: Mutex<Vec<tab::Tab>>,
    stats: stats::RenderStats,
}

impl Renderer {
    /// What one render on a tab may use and do.
    fn plan(&self) -> tab::Plan {
        tab::Plan {
            budget: self.settings.budget(),
            settle: self.settings.settle,
            screenshots: self.settings.screenshots,
        }
    }

    /// Starts the browser (so a crawl asking for rendering without Chromium
    /// fails at start, not on its first script-built page).
    pub(crate) async fn start(settings: RenderSettings) -> Result<Renderer, RenderError> {
        let browser = browser::BrowserHost::start(&settings).await?;
        Ok(Renderer {
            tabs: Arc::new(Semaphore::new(settings.tasks.max(1))),
            idle: Mutex::new(Vec::new()),
            settings,
            browser,
            stats: stats::RenderStats::default(),
        })
    }

    /// The crawl's rendering settings.
    pub(crate) fn settings(&self) -> &RenderSettings {
        &self.settings
    }

    /// Renders one page, in up to `tries` attempts, each under the time limit;
    /// a try that fails because the browser died or hung restarts it.
    pub(crate) async fn render(
        &self,
        page: &Prefetched,
        via: &impl SubFetch,
    ) -> Result<Rendered, RenderError> {
        // The semaphore is never closed.
        let _tab = self.tabs.acquire().await;
        let mut last = RenderError::Browser("no try".into());
        for attempt in 1..=self.settings.tries.max(1) {
            let live = self.browser.current(&self.settings).await?;
            let limit = self.settings.timeout;
            let work = async {
                let mut tab = match self.take_idle(live.generation()) {
                    Some(tab) => tab,
                    None => tab::Tab::open(&live).await?,
                };
                let out = tab.render(page, via, self.plan(), limit).await;
                Ok::<_, RenderError>((tab, out))
            };
            // The tab enforces the limit itself; this one only catches a
            // browser that does not even open a tab.
            match tokio::time::timeout(limit + TAB_MARGIN, work).await {
                Ok(Ok((tab, Ok(rendered)))) => {
                    self.put_idle(tab).await;
                    self.stats.rendered(&rendered);
                    return Ok(rendered);
                }
                Ok(Ok((tab, Err(e)))) => {
                    last = e;
                    close(tab).await;
                }
                Ok(Err(e)) => last = e,
                Err(_) => last = RenderError::Timeout(self.settings.timeout),
            }
            tracing::debug!(url = %page.url, attempt, error = %last, "render failed");
            if !self.browser.healthy(&live).await {
                self.stats.restarted();
                self.browser.restart(&live);
            }
        }
        Err(last)
    }

    /// Report counters: the browser's requests fetched and refused by reason,
    /// browser restarts, and starts without the sandbox.
    pub(crate) fn stats(&self) -> RenderCounts {
        RenderCounts {
            unsandboxed: self.browser.unsandboxed(),
            ..self.stats.snapshot()
        }
    }

    /// `(tabs rendering now, tabs at most)`: the render pool's use.
    pub(crate) fn tabs_in_use(&self) -> (usize, usize) {
        let total = self.settings.tasks.max(1);
        (total.saturating_sub(self.tabs.available_permits()), total)
    }

    /// Stops the browser.
    pub(crate) async fn shutdown(&self) {
        let idle = std::mem::take(&mut *self.lock_idle());
        drop(idle);
        self.browser.shutdown().await;
    }

    /// An open tab of the browser generation `generation`; tabs of an older
    /// one are dropped (their browser is gone or going).
    fn take_idle(&self, generation: u64) -> Option<tab::Tab> {
        let mut idle = self.lock_idle();
        while let Some(tab) = idle.pop() {
            if tab.generation() == generation {
                return Some(tab);
            }
        }
        None
    }

    /// Keeps `tab` open for the next render, or closes it if its last render
    /// left it in a doubtful state.
    async fn put_idle(&self, tab: tab::Tab) {
        if tab.reusable() {
            self.lock_idle().push(tab);
        } else {
            close(tab).await;
        }
    }

    fn lock_idle(&self) -> std::sync::MutexGuard<'_, Vec<tab::Tab>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Closes a tab, not waiting long for a browser that may have hung.
async fn close(tab: tab::Tab) {
    let _ = tokio::time::timeout(TAB_MARGIN, tab.close()).await;
}
