//! One render on one tab: open a blank tab, load the page with its requests
//! answered by the bridge, wait for the network to settle, read the DOM, close
//! the tab (on every path, so a failed render leaves no tab behind).

use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;

use super::browser::Live;
use super::intercept::Bridge;
use super::{Prefetched, RenderError, Rendered, SubFetch};

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

/// Read once the page settled: its serialised DOM, its links, its navigations.
const READ_DOM: &str = r#"JSON.stringify({
  html: document.documentElement ? document.documentElement.outerHTML : "",
  links: Array.from(document.querySelectorAll("a[href], area[href]"), (a) => a.href),
  navs: window.__skitterNavs || []
})"#;

#[derive(serde::Deserialize)]
struct Dom {
    html: String,
    links: Vec<String>,
    navs: Vec<String>,
}

fn browser_err(e: impl std::fmt::Display) -> RenderError {
    RenderError::Browser(e.to_string())
}

/// Renders `page` on a new tab of `live` within `limit`.
pub(super) async fn render_once(
    live: &Live,
    page: &Prefetched,
    via: &impl SubFetch,
    settle: Duration,
    limit: Duration,
) -> Result<Rendered, RenderError> {
    let tab = live
        .browser
        .new_page("about:blank")
        .await
        .map_err(browser_err)?;
    let out = tokio::time::timeout(limit, drive(&tab, page, via, settle)).await;
    if let Err(e) = tab.close().await {
        tracing::debug!(error = %e, "closing a tab failed");
    }
    out.unwrap_or(Err(RenderError::Timeout(limit)))
}

/// Loads the page, answering its requests, until it settled; then reads it.
async fn drive(
    tab: &Page,
    page: &Prefetched,
    via: &impl SubFetch,
    settle: Duration,
) -> Result<Rendered, RenderError> {
    let mut paused = tab
        .event_listener::<EventRequestPaused>()
        .await
        .map_err(browser_err)?;
    tab.evaluate_on_new_document(NAV_HOOK)
        .await
        .map_err(browser_err)?;
    let bridge = Bridge::new(page, via);
    let mut answering = FuturesUnordered::new();
    let load = tab.goto(page.url.as_str());
    tokio::pin!(load);
    let mut loaded = false;
    loop {
        tokio::select! {
            done = &mut load, if !loaded => {
                done.map_err(browser_err)?;
                loaded = true;
            }
            Some(ev) = paused.next() => answering.push(bridge.answer(tab, ev)),
            Some(()) = answering.next(), if !answering.is_empty() => {}
            // Quiet for `settle` after load: timers had their turn and started
            // no request (a new request restarts the wait).
            () = tokio::time::sleep(settle), if loaded && answering.is_empty() => break,
        }
    }
    let dom: Dom = tab
        .evaluate(READ_DOM)
        .await
        .map_err(browser_err)?
        .into_value::<String>()
        .map_err(browser_err)
        .and_then(|json| serde_json::from_str(&json).map_err(browser_err))?;
    drop(answering);
    let mut out = Rendered {
        html: dom.html,
        links: dom.links,
        navigations: dom.navs,
        ..Rendered::default()
    };
    bridge.finish(&mut out);
    Ok(out)
}
