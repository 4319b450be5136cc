//! One tab of the pool and one render on it: load the page with its requests
//! answered by the bridge, let it settle, read the DOM.
//!
//! A tab is opened once and navigated from page to page (opening one is the
//! costliest step of a render, about 0.4 s measured; see `REUSE`). A render
//! that fails, times out or settles only by the fallback closes its tab, so
//! a tab in a doubtful state is never reused.
//!
//! Settling runs on the page's virtual clock (DevTools virtual time, what
//! headless Chrome's `--virtual-time-budget` uses): after the load event the
//! page gets `settle` of page time under the policy
//! `pauseIfNetworkFetchesPending`, so its timers fire without waiting real
//! time, the clock stands still while one of its requests is in flight (and
//! answered by skitter at the site's pace), and Chromium says when the budget
//! is spent. The clock then stays paused, so a tab waiting in the pool runs no
//! timers of its last page.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::emulation::{
    EventVirtualTimeBudgetExpired, SetVirtualTimePolicyParams, VirtualTimePolicy,
};
use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use chromiumoxide::cdp::browser_protocol::target::{
    FilterEntry, SetAutoAttachParams, TargetFilter,
};
use chromiumoxide::listeners::EventStream;
use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt as _, StreamExt as _};

use super::browser::Live;
use super::intercept::Bridge;
use super::{Budget, Prefetched, RenderError, Rendered, SubFetch, screenshot};

/// Whether a tab whose render settled takes the next page. A used tab's clock
/// is paused (its last page spent its budget), and a page loaded under a
/// paused clock never fires its load event, so [`Tab::render`] lets the clock
/// advance first. Under `advance` a page's timers may fire during its load; a
/// page whose timer navigates away before its load event then never finished
/// loading, which is why reuse was off until `drive` learned to end the wait
/// for the load at such a navigation. On: `scripts/bench-render.sh` ran
/// `auto` in 11.5–13.6 s instead of 25.4 s.
const REUSE: bool = true;

/// Should the virtual clock never report its budget spent (a browser without
/// virtual time), a page counts as settled after this long with no request in
/// flight after its load event; the tab is then not reused.
const FALLBACK_QUIET: Duration = Duration::from_secs(2);

/// Longest wait for Chromium's reply to the virtual time budget.
const CLOCK_REPLY_LIMIT: Duration = Duration::from_secs(1);

/// Run in every document before its own scripts: records the navigations a
/// script makes without a network request (`history.pushState`,
/// `replaceState`, `window.open`). A location change does make one; the
/// bridge records it.
const NAV_HOOK: &str = r#"(() => {
  const navs = [];
  Object.defineProperty(window, "__skitterNavs", { value: navs });
  const note = (u) => { try { if (u != null) navs.push(new URL(String(u), location.href).href); } catch (e) {} };
  for (const k of ["pushState", "replaceState"]) {
    const f = history[k];
    history[k] = function (state, title, u) { note(u); return f.apply(this, arguments); };
  }
  window.open = function (u) { note(u); return null; };
})();"#;

/// Read once the page settled: its serialised DOM, its links, its
/// navigations. The tab's session storage is emptied with it, so the next page
/// rendered on the tab does not see this one's (a new tab started empty).
const READ_DOM: &str = r#"(() => {
  try { sessionStorage.clear(); } catch (e) {}
  return JSON.stringify({
    html: document.documentElement ? document.documentElement.outerHTML : "",
    links: Array.from(document.querySelectorAll("a[href], area[href]"), (a) => a.href),
    navs: window.__skitterNavs || []
  });
})()"#;

#[derive(serde::Deserialize)]
struct Dom {
    html: String,
    links: Vec<String>,
    navs: Vec<String>,
}

fn browser_err(e: impl std::fmt::Display) -> RenderError {
    RenderError::Browser(e.to_string())
}

/// What one render may use (the budget of the browser's requests, page time
/// to settle) and what it takes besides the DOM.
#[derive(Clone, Copy, Debug)]
pub(super) struct Plan {
    pub(super) budget: Budget,
    pub(super) settle: Duration,
    pub(super) screenshots: bool,
}

/// One open tab, its event streams, and the browser it belongs to.
pub(super) struct Tab {
    page: Page,
    paused: EventStream<EventRequestPaused>,
    expired: EventStream<EventVirtualTimeBudgetExpired>,
    generation: u64,
    /// Its last render settled by the virtual clock: the page is paused and
    /// the tab may take the next one.
    reusable: bool,
    /// It rendered a page before, so its clock may be paused.
    used: bool,
    /// Its browser's picture lock ([`super::browser::Live`]'s).
    pictures: Arc<tokio::sync::Mutex<()>>,
}

impl Tab {
    /// Opens a blank tab on `live`, listening for its requests and its clock.
    pub(super) async fn open(live: &Live) -> Result<Tab, RenderError> {
        let page = live
            .browser
            .new_page("about:blank")
            .await
            .map_err(browser_err)?;
        let streams = async {
            page.execute(worker_free_auto_attach()).await?;
            let paused = page.event_listener::<EventRequestPaused>().await?;
            let expired = page
                .event_listener::<EventVirtualTimeBudgetExpired>()
                .await?;
            page.evaluate_on_new_document(NAV_HOOK).await?;
            Ok::<_, chromiumoxide::error::CdpError>((paused, expired))
        }
        .await;
        match streams {
            Ok((paused, expired)) => Ok(Tab {
                page,
                paused,
                expired,
                generation: live.generation(),
                reusable: false,
                used: false,
                pictures: live.pictures.clone(),
            }),
            Err(e) => {
                close_page(page).await;
                Err(browser_err(e))
            }
        }
    }

    /// The browser generation the tab belongs to.
    pub(super) fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether the tab may render another page.
    pub(super) fn reusable(&self) -> bool {
        self.reusable
    }

    /// Closes the tab.
    pub(super) async fn close(self) {
        close_page(self.page).await;
    }

    /// Renders `page` on this tab within `limit`.
    pub(super) async fn render(
        &mut self,
        page: &Prefetched,
        via: &impl SubFetch,
        plan: Plan,
        limit: Duration,
    ) -> Result<Rendered, RenderError> {
        self.reusable = false;
        // Whatever the last page left in the streams is stale: its requests
        // die with it when the tab navigates.
        while let Some(Some(_)) = self.paused.next().now_or_never() {}
        while let Some(Some(_)) = self.expired.next().now_or_never() {}
        let used = std::mem::replace(&mut self.used, true);
        let out = tokio::time::timeout(limit, async {
            if used {
                let advance = SetVirtualTimePolicyParams::new(VirtualTimePolicy::Advance);
                self.page.execute(advance).await.map_err(browser_err)?;
            }
            self.drive(page, via, plan).await
        })
        .await;
        out.unwrap_or(Err(RenderError::Timeout(limit)))
    }

    /// Loads the page, answering its requests, until it settled; then reads it.
    async fn drive(
        &mut self,
        page: &Prefetched,
        via: &impl SubFetch,
        plan: Plan,
    ) -> Result<Rendered, RenderError> {
        let Plan {
            budget,
            settle,
            screenshots,
        } = plan;
        let start = Instant::now();
        let Tab {
            page: tab,
            paused,
            expired,
            pictures,
            ..
        } = self;
        let bridge = Bridge::new(page, via, budget);
        let mut answering = FuturesUnordered::new();
        let load = tab.goto(page.url.as_str());
        tokio::pin!(load);
        let (mut loaded, mut spent) = (None, false);
        let by_clock = loop {
            if spent && answering.is_empty() {
                break true;
            }
            tokio::select! {
                done = &mut load, if loaded.is_none() => {
                    done.map_err(browser_err)?;
                    loaded = Some(start.elapsed());
                    start_clock(tab, settle).await?;
                }
                Some(ev) = paused.next() => answering.push(bridge.answer(tab, ev)),
                Some(()) = answering.next(), if !answering.is_empty() => {
                    if loaded.is_none() && bridge.navigated() {
                        // A script sent the page elsewhere before its load
                        // event (a timer that fires early on a busy machine):
                        // the navigation was aborted, and the wait for the
                        // load of the page it replaced may never end. What
                        // the page holds is read after settling as usual.
                        loaded = Some(start.elapsed());
                        start_clock(tab, settle).await?;
                    }
                }
                Some(_) = expired.next(), if loaded.is_some() => spent = true,
                () = tokio::time::sleep(FALLBACK_QUIET), if loaded.is_some() && answering.is_empty() => {
                    tracing::debug!(url = %page.url, "virtual time budget never reported spent");
                    break false;
                }
            }
        };
        let settled = start.elapsed();
        let dom: Dom = tab
            .evaluate(READ_DOM)
            .await
            .map_err(browser_err)?
            .into_value::<String>()
            .map_err(browser_err)
            .and_then(|json| serde_json::from_str(&json).map_err(browser_err))?;
        // The pictures are of the page as read; a failure to take them
        // costs the pictures, not the render.
        let screenshots = if screenshots {
            // Once the settle budget is spent Chromium pauses the page's
            // virtual time, and a paused page draws no new frame: a capture
            // then waits for one until the DevTools request times out (seen
            // for one page in several crawls). Let time run for the pictures.
            // One tab at a time, brought to the front first (as Puppeteer
            // does before a screenshot): a background tab may draw no frame.
            let _turn = pictures.lock().await;
            let advance = SetVirtualTimePolicyParams::new(VirtualTimePolicy::Advance);
            if let Err(e) = tab.execute(advance).await {
                tracing::debug!(url = %page.url, error = %e, "virtual time not resumed for the pictures");
            }
            if let Err(e) = tab.bring_to_front().await {
                tracing::debug!(url = %page.url, error = %e, "tab not brought to the front for the pictures");
            }
            screenshot::take(tab)
                .await
                .inspect_err(|e| tracing::warn!(url = %page.url, error = %e, "no screenshot"))
                .ok()
        } else {
            None
        };
        drop(answering);
        let loaded = loaded.unwrap_or_default();
        tracing::debug!(
            target: "skitter::render::timing",
            url = %page.url,
            load_ms = loaded.as_millis(),
            settle_ms = (settled - loaded).as_millis(),
            read_ms = (start.elapsed() - settled).as_millis(),
            "render steps"
        );
        self.reusable = REUSE && by_clock;
        let mut out = Rendered {
            html: dom.html,
            links: dom.links,
            navigations: dom.navs,
            screenshots,
            ..Rendered::default()
        };
        bridge.finish(&mut out);
        Ok(out)
    }
}

/// The tab's auto-attach setting as chromiumoxide makes it (every worker and
/// frame the tab starts waits for the client, which resumes it), with service
/// workers left out. chromiumoxide (0.9.1, no option for it) resumes a
/// service worker and at once detaches from it; Chromium then often leaves
/// the worker paused for good, so its registration never finishes (Playwright
/// had the same bug and now filters service workers out too). Sent while the
/// tab is blank, so no worker starts under chromiumoxide's setting.
fn worker_free_auto_attach() -> SetAutoAttachParams {
    let entry = |kind: Option<&str>, exclude| FilterEntry {
        exclude: Some(exclude),
        r#type: kind.map(String::from),
    };
    // Chromium's default filter (no browser or tab targets, everything
    // else), with service workers excluded first.
    let filter = TargetFilter::new(vec![
        entry(Some("service_worker"), true),
        entry(Some("browser"), true),
        entry(Some("tab"), true),
        entry(None, false),
    ]);
    SetAutoAttachParams {
        auto_attach: true,
        wait_for_debugger_on_start: true,
        flatten: Some(true),
        filter: Some(filter),
    }
}

/// Gives the page `settle` of page time on its virtual clock, which stands
/// still while one of its requests is in flight. Chromium may never reply
/// when the page navigates at that moment (a timer sending it elsewhere right
/// after its load): then, after [`CLOCK_REPLY_LIMIT`], the render settles by
/// the fallback quiet window instead.
async fn start_clock(tab: &Page, settle: Duration) -> Result<(), RenderError> {
    let mut budget =
        SetVirtualTimePolicyParams::new(VirtualTimePolicy::PauseIfNetworkFetchesPending);
    budget.budget = Some(settle.as_secs_f64() * 1000.0);
    match tokio::time::timeout(CLOCK_REPLY_LIMIT, tab.execute(budget)).await {
        Ok(reply) => reply.map(drop).map_err(browser_err),
        Err(_) => {
            tracing::debug!("the browser never replied to the virtual time budget");
            Ok(())
        }
    }
}

async fn close_page(page: Page) {
    if let Err(e) = page.close().await {
        tracing::debug!(error = %e, "closing a tab failed");
    }
}
