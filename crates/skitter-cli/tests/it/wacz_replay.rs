//! A crawl's WACZ opened by a real client: ReplayWeb.page (the npm package
//! `replaywebpage`, its `ui.js` and service worker `sw.js`, put in place by
//! `scripts/replayweb.sh`) in headless Chromium, served from loopback with the
//! file, after the site itself is gone. The archived page's text shows in the
//! replay, and the pages list's full-text search finds a page by a word only
//! its body holds, and shows its thumbnail (`--screenshots`).
//!
//! Needs Chromium and the package; without either the test says so loudly
//! (`$SKITTER_SKIPPED`) and, under CI, fails.
//!
//! Two races once made it fail most runs (see `Chromium::open` and `INDEX`);
//! when it fails now it prints what the page said, what the file server was
//! asked and the state of the embed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use skitter_testsite::skip::{cannot_run, chromium};
use skitter_testsite::validators::{check_wacz, python_tools};
use skitter_testsite::{SiteConfig, TestSite, docs};

use crate::support::browser::{Chromium, image_sizes, wait_for_text};
use crate::support::cli::run;
use crate::support::files::{FileServer, Served};

const TEST: &str = "wacz_replay";

/// How long the replay has to show what is looked for: it registers its
/// service worker, reads the WACZ's index and page list by ranges, then
/// loads the page (3 s on an idle machine; much longer when the whole test
/// suite shares two cores with it).
const REPLAY_LIMIT: Duration = Duration::from_secs(120);

/// Where `scripts/replayweb.sh` put ReplayWeb.page: `$SKITTER_REPLAYWEB`,
/// else `target/replay-npm`.
fn replayweb(check: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("SKITTER_REPLAYWEB").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/replay-npm"),
        PathBuf::from,
    );
    if ["ui.js", "sw.js"].iter().all(|f| dir.join(f).is_file()) {
        return Some(dir);
    }
    cannot_run(
        TEST,
        check,
        &format!(
            "ReplayWeb.page is not in {} (run scripts/replayweb.sh; it needs npm)",
            dir.display()
        ),
    );
    None
}

/// What the embedding page holds, when the replay did not show: whether the
/// component rendered its frame, and whether the service worker controls that
/// frame (the embedding page itself is outside the worker's scope, `/replay/`,
/// and is never controlled).
const STATE: &str = r#"(() => {
  const e = document.querySelector("replay-web-page");
  const root = e && e.shadowRoot;
  const frame = root && root.querySelector("iframe");
  let controlled = "no frame";
  try { if (frame) controlled = !!frame.contentWindow.navigator.serviceWorker.controller; } catch (err) { controlled = String(err); }
  return JSON.stringify({
    ready: document.readyState,
    defined: !!customElements.get("replay-web-page"),
    inner: root ? root.innerHTML.slice(0, 600) : "(no shadow root)",
    frame: frame ? frame.src : null,
    frameControlled: controlled,
  });
})()"#;

/// The page ReplayWeb.page's service worker serves at its scope, `/replay/`
/// (the app, `replay-app-main`, and `ui.js` beside it), served by the file
/// server too, as a static install of the package does (its `index.html`).
///
/// Without it the embed's frame, which opens `/replay/?source=…` as soon as
/// the worker is registered, gets a 404 from the network whenever the worker
/// is not active yet. The component reloads such a frame only while no worker
/// controls it, and the worker claims every page in its scope when it
/// activates: when the claim lands between the 404 and the frame's `load`, the
/// component takes the 404 for the app and the replay never shows.
const INDEX: &str = "<!doctype html><html><head><script src=\"./ui.js\"></script></head>\n\
                     <body><replay-app-main></replay-app-main></body></html>\n";

/// An HTML page embedding ReplayWeb.page on `site.wacz`, with `attrs`.
fn embed(attrs: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><script src=\"/replay/ui.js\"></script></head>\n\
         <body style=\"margin:0;height:100vh\"><replay-web-page source=\"/site.wacz\" \
         replaybase=\"/replay/\" style=\"display:block;height:100vh\" {attrs}>\
         </replay-web-page></body></html>\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replayweb_page_shows_an_archived_page_and_finds_pages_by_their_text() {
    let check = "a WACZ opened in ReplayWeb.page";
    let (Some(browser), Some(replay)) = (chromium(TEST, check), replayweb(check)) else {
        return;
    };
    let site = TestSite::start(SiteConfig {
        pages: 0,
        gzip: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let wacz = dir.path().join("site.wacz");
    let crawl = run(&[
        "-q",
        "crawl",
        &site.url("/docs/"),
        "--wacz",
        wacz.to_str().unwrap(),
        // Each page's thumbnail, which the pages list shows (a generous
        // limit: the suite runs beside it).
        "--screenshots",
        "--render-timeout",
        "90s",
    ])
    .await;
    crawl.assert_ok("crawl --wacz");
    // With its pictures' resource records, the archive still passes the
    // Webrecorder validator.
    if let Some(bin) = python_tools(TEST, &["wacz"]) {
        let verdict = check_wacz(&bin, &wacz);
        assert!(verdict.ok, "wacz validate: {}", verdict.output);
    }
    let page_url = site.url("/docs/a/3");
    // From here on only the archive has the pages.
    drop(site);

    let mut files = HashMap::new();
    let mut serve = |path: &str, mime, file: PathBuf| {
        files.insert(path.to_string(), Served { mime, path: file });
    };
    let js = "application/javascript";
    serve("/replay/ui.js", js, replay.join("ui.js"));
    serve("/replay/sw.js", js, replay.join("sw.js"));
    serve("/site.wacz", "application/wacz+zip", wacz.clone());
    let index = dir.path().join("index.html");
    std::fs::write(&index, INDEX).unwrap();
    serve("/replay/", "text/html; charset=utf-8", index);
    for (name, attrs) in [
        ("page.html", format!("url=\"{page_url}\"")),
        (
            "search.html",
            "view=\"pages\" query=\"misnested\"".to_string(),
        ),
    ] {
        let file = dir.path().join(name);
        std::fs::write(&file, embed(&attrs)).unwrap();
        serve(&format!("/{name}"), "text/html; charset=utf-8", file);
    }
    let server = FileServer::start(files).await;
    let chromium = Chromium::start(&browser).await;

    // The archived article, replayed: its own sentence is in the DOM.
    let (page, console) = chromium.open(&format!("{}/page.html", server.origin)).await;
    let marker = docs::marker(3);
    let (text, found) = wait_for_text(&page, REPLAY_LIMIT, |t| t.contains(&marker)).await;
    if !found {
        let state = page
            .evaluate(STATE)
            .await
            .map(|v| v.into_value::<String>().unwrap_or_default());
        panic!(
            "the replay of {page_url} never showed {marker:?}; it showed: {text}\n\
             state: {state:?}\nthe page said:\n{}\nthe file server was asked:\n{}",
            console.text(),
            server.requests()
        );
    }
    assert!(
        text.contains("Keep reading"),
        "the whole page is replayed, template and all: {text}"
    );

    // The pages list searched for a word only the broken-markup article's
    // body has (not its title, not its URL): that page alone is listed.
    let (search, console) = chromium
        .open(&format!("{}/search.html", server.origin))
        .await;
    let (text, found) = wait_for_text(&search, REPLAY_LIMIT, |t| t.contains("Broken markup")).await;
    assert!(
        found,
        "searching the pages for 'misnested' found nothing: {text}\nthe page said:\n{}\n\
         the file server was asked:\n{}",
        console.text(),
        server.requests()
    );
    for other in ["Article 1", "Article 3", "Café", "/docs/a/2"] {
        assert!(
            !text.contains(other),
            "searching for 'misnested' also listed {other:?}: {text}"
        );
    }
    // The listed page's thumbnail (`urn:thumbnail:URL`, found through the
    // archive's index) is shown at its size.
    let deadline = std::time::Instant::now() + REPLAY_LIMIT;
    let mut sizes = image_sizes(&search, "thumbnail").await;
    while sizes != ["640x360"] && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
        sizes = image_sizes(&search, "thumbnail").await;
    }
    assert_eq!(sizes, ["640x360"], "the pages list's thumbnails");
}
