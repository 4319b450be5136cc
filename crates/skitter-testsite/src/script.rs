//! Pages whose links only a browser sees: built by an inline script, fetched
//! as JSON by a script (XHR/`fetch`), added after a delay (`setTimeout`), or
//! attempted as navigations; plus the `script_share` mode, in which that share
//! of the generated `/p/{i}` pages builds its links in script.
//!
//! The fixed pages under `/js/` are for tests; every link they add by script
//! points under `/js/t/`, so a test can tell what a crawl found by rendering.
//! `/js/private/` is for robots.txt to disallow, `/js/guarded` loads from it
//! and from a cloud-metadata address the address policy refuses. `/js/parts`
//! (linked from nowhere) loads [`PARTS`] scripts from its own host.
//! `/js/worker` (linked from nowhere) waits for its service worker,
//! `/js/sw.js`, before it shows anything.

use std::fmt::Write as _;

use hyper::{Response, StatusCode};

use crate::body::SiteBody;
use crate::config::SiteConfig;
use crate::reply::{HTML, reply};
use crate::tree::children;

/// How long the delayed pages wait before adding their links.
pub(crate) const DELAY_MS: u32 = 100;

/// The scripts `/js/parts` loads (`/js/part/{0..PARTS}.js`).
pub const PARTS: usize = 4;

const JS: &str = "text/javascript; charset=utf-8";
const JSON: &str = "application/json";

/// Whether generated page `i` builds its links in script: a fixed spread of
/// `script_share` of the pages (a multiplicative hash of `i`, so every run and
/// every site size picks the same way), never the first.
pub(crate) fn is_scripted(config: &SiteConfig, i: usize) -> bool {
    // `/p/0` leads to every page: script-built, it would hide the whole site
    // from a plain crawl, and `never` beside `auto` would measure nothing.
    if i == 0 {
        return false;
    }
    let share = config.script_share.clamp(0.0, 1.0);
    let spread = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
    (spread as f64) < share * (1u64 << 24) as f64
}

/// The hrefs generated page `i` links to: its children, then home, parent
/// and first page (the same as a plain page's).
fn hrefs(config: &SiteConfig, i: usize) -> Vec<String> {
    let mut out: Vec<String> = children(config, i).map(|c| format!("/p/{c}")).collect();
    out.push("/".into());
    if i > 0 {
        out.push(format!("/p/{}", (i - 1) / config.fanout.max(1)));
        out.push("/p/0".into());
    }
    out
}

/// Script that appends one `<a>` per href of a JSON array `list`.
const ADD_LINKS: &str = "function addLinks(list) { for (const h of list) { \
    const a = document.createElement('a'); a.href = h; a.textContent = h; \
    (document.getElementById('app') || document.body).appendChild(a); } }";

/// A script-built generated page: three kinds in turn, each caught by a
/// different `--render auto` rule (no links; a `<noscript>`; an empty `#app`).
pub(crate) fn scripted_page(config: &SiteConfig, i: usize) -> String {
    let list = serde_json_list(&hrefs(config, i));
    let mut out = String::with_capacity(1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>Page {i}</title>\n\
         <script>{ADD_LINKS}</script>\n</head>\n<body>\n<h1>Page {i}</h1>\n"
    );
    match i % 3 {
        0 => {
            let _ = writeln!(out, "<script>addLinks({list});</script>");
        }
        1 => {
            let _ = write!(
                out,
                "<noscript>This page needs JavaScript.</noscript>\n\
                 <script>fetch('/p/{i}/links.json').then(r => r.json()).then(addLinks);</script>\n"
            );
        }
        _ => {
            let _ = write!(
                out,
                "<div id=\"app\"></div>\n\
                 <script>setTimeout(() => addLinks({list}), {DELAY_MS});</script>\n"
            );
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// An analytics-like script every plain generated page carries in
/// `script_share` mode, so `--render auto` must tell script-built pages from
/// pages that merely have a script.
pub(crate) const TRACKER: &str = "<script>window.dataLayer = window.dataLayer || [];</script>\n";

/// `/js/worker`'s body: registers `/js/sw.js`, then writes
/// [`WORKER_WORD`] and a link to `/js/t/worker` when the worker is ready (or
/// why it never will be, for a failing test to show).
const WORKER_PAGE: &str = "<div id=\"app\"></div>\n<script>\n\
    const say = (t) => { const p = document.createElement('p'); p.textContent = t; \
    document.body.appendChild(p); };\n\
    navigator.serviceWorker.register('/js/sw.js').catch((e) => say('registration failed: ' + e));\n\
    navigator.serviceWorker.ready.then(() => { say('Worker says ' + 'pelican'); \
    addLinks(['/js/t/worker']); });\n</script>\n";

/// The word `/js/worker` shows once its service worker is ready; written in
/// two halves in its script, so the served page does not hold it whole.
pub const WORKER_WORD: &str = "Worker says pelican";

/// The service worker `/js/worker` registers: it takes over at once and
/// does nothing else.
const WORKER_SCRIPT: &str = "self.addEventListener('install', () => self.skipWaiting());\n\
    self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));\n";

fn serde_json_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|h| format!("\"{h}\"")).collect();
    format!("[{}]", quoted.join(","))
}

fn page(title: &str, body: &str) -> Response<SiteBody> {
    let html = format!(
        "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n\
         <script>{ADD_LINKS}</script>\n</head>\n<body>\n<h1>{title}</h1>\n{body}</body>\n</html>\n"
    );
    reply(StatusCode::OK, Some(HTML), html)
}

/// The script pages, `/js/…`, and the generated pages' `/p/{i}/links.json`.
pub(crate) fn route(config: &SiteConfig, path: &str) -> Option<Response<SiteBody>> {
    if let Some(rest) = path.strip_prefix("/p/")
        && let Some(i) = rest.strip_suffix("/links.json")
        && let Ok(i) = i.parse::<usize>()
        && i < config.pages
        && is_scripted(config, i)
    {
        return Some(reply(
            StatusCode::OK,
            Some(JSON),
            serde_json_list(&hrefs(config, i)),
        ));
    }
    if let Some(name) = path.strip_prefix("/js/t/") {
        return Some(reply(
            StatusCode::OK,
            Some(HTML),
            format!(
                "<!DOCTYPE html>\n<title>{name}</title>\n<h1>Found by rendering: {name}</h1>\n"
            ),
        ));
    }
    Some(match path {
        "/js/" => page(
            "Script pages",
            "<a href=\"/js/inline\">inline</a>\n<a href=\"/js/xhr\">xhr</a>\n\
             <a href=\"/js/delayed\">delayed</a>\n<a href=\"/js/nav\">nav</a>\n\
             <a href=\"/js/guarded\">guarded</a>\n<a href=\"/js/plain\">plain</a>\n",
        ),
        "/js/inline" => page("Inline", "<script>addLinks(['/js/t/inline']);</script>\n"),
        "/js/xhr" => page(
            "XHR",
            "<noscript>Please enable JavaScript.</noscript>\n\
             <script>fetch('/js/links.json').then(r => r.json()).then(addLinks);</script>\n",
        ),
        "/js/links.json" => reply(StatusCode::OK, Some(JSON), "[\"/js/t/xhr\"]"),
        "/js/delayed" => page(
            "Delayed",
            &format!(
                "<div id=\"root\"></div>\n\
                 <script>setTimeout(() => addLinks(['/js/t/delayed']), {DELAY_MS});</script>\n"
            ),
        ),
        "/js/nav" => page(
            "Navigations",
            "<script>history.pushState({}, '', '/js/t/pushed');\n\
             setTimeout(() => { location.href = '/js/t/located'; }, 10);</script>\n",
        ),
        "/js/guarded" => page(
            "Guarded",
            "<script src=\"/js/app.js\"></script>\n\
             <script src=\"/js/private/app.js\"></script>\n\
             <img src=\"http://169.254.169.254/latest/meta-data/\">\n",
        ),
        "/js/app.js" => reply(
            StatusCode::OK,
            Some(JS),
            "addLinks(['/js/t/from-script']);\n",
        ),
        "/js/private/app.js" => reply(StatusCode::OK, Some(JS), "addLinks(['/js/t/private']);\n"),
        // Not linked from /js/: a page of several subresources on its own
        // host, for the browser's per-host politeness.
        "/js/parts" => page(
            "Parts",
            &(0..PARTS)
                .map(|i| format!("<script src=\"/js/part/{i}.js\"></script>\n"))
                .collect::<String>(),
        ),
        p if p
            .strip_prefix("/js/part/")
            .and_then(|n| n.strip_suffix(".js"))
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|n| n < PARTS) =>
        {
            reply(StatusCode::OK, Some(JS), "addLinks([]);\n")
        }
        // Not linked from /js/: a page that shows its text and its link only
        // once its service worker is active, as an offline-first app may.
        "/js/worker" => page("Worker", WORKER_PAGE),
        "/js/sw.js" => reply(StatusCode::OK, Some(JS), WORKER_SCRIPT),
        "/js/plain" => page(
            "Plain",
            "<a href=\"/js/t/plain\">plain</a>\n<a href=\"/js/\">back</a>\n",
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_share_picks_about_that_share() {
        for share in [0.0, 0.1, 0.5, 1.0] {
            let config = SiteConfig {
                pages: 10_000,
                script_share: share,
                ..SiteConfig::default()
            };
            let n = (0..10_000).filter(|&i| is_scripted(&config, i)).count();
            let want = share * 10_000.0;
            assert!((n as f64 - want).abs() <= 150.0, "share {share}: {n}");
        }
    }

    #[test]
    fn scripted_pages_have_no_anchor_but_carry_every_link() {
        let config = SiteConfig {
            pages: 100,
            script_share: 1.0,
            ..SiteConfig::default()
        };
        for i in [3, 4, 5] {
            let html = scripted_page(&config, i);
            assert!(!html.contains("<a "), "{html}");
            let want = if i % 3 == 1 {
                "links.json".to_string()
            } else {
                "\"/p/0\"".to_string()
            };
            assert!(html.contains(&want), "{html}");
        }
        assert_eq!(
            hrefs(&config, 3),
            [
                "/p/31", "/p/32", "/p/33", "/p/34", "/p/35", "/p/36", "/p/37", "/p/38", "/p/39",
                "/p/40", "/", "/p/0", "/p/0"
            ]
        );
    }
}
