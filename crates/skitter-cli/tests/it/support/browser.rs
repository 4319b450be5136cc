//! Headless Chromium for the tests that look at what a real browser shows
//! (ReplayWeb.page opening a WACZ), driven over the DevTools protocol with the
//! library's own client (chromiumoxide).
//!
//! The browser gets a fresh profile and nothing that reaches out by itself
//! (no background networking, component updates or sync); anything not on
//! loopback goes to a proxy on a closed port, so a page that tries to leave
//! the machine fails instead.

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chromiumoxide::{Browser, Page};
use futures_util::StreamExt as _;

/// How long Chromium has to print its DevTools address.
const START_LIMIT: Duration = Duration::from_secs(30);

const ARGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--mute-audio",
    // Loopback is never proxied; everything else meets a closed port.
    "--proxy-server=http://127.0.0.1:9",
    "--remote-debugging-port=0",
];

/// A running browser and its protocol connection. Dropping it kills the
/// browser's process group and removes its profile.
pub struct Chromium {
    pub browser: Browser,
    child: Child,
    handler: tokio::task::JoinHandle<()>,
    _profile: tempfile::TempDir,
}

impl Drop for Chromium {
    fn drop(&mut self) {
        self.handler.abort();
        // The browser leads its own group: its renderers go with it.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

impl Chromium {
    /// Starts `executable` and connects to it.
    pub async fn start(executable: &Path) -> Chromium {
        use std::os::unix::process::CommandExt as _;
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(executable)
            .args(ARGS)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("start chromium");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        // Reads stderr to its end (a full pipe would stall the browser).
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if let Some(ws) = line.strip_prefix("DevTools listening on ") {
                    let _ = tx.send(Ok(ws.trim().to_string()));
                } else if seen.len() < 20 {
                    seen.push(line);
                }
            }
            let _ = tx.send(Err(seen.join("\n")));
        });
        let ws = tokio::task::spawn_blocking(move || rx.recv_timeout(START_LIMIT))
            .await
            .unwrap()
            .expect("chromium printed no DevTools address in time")
            .unwrap_or_else(|stderr| panic!("chromium exited: {stderr}"));
        let (browser, mut handler) = Browser::connect(ws).await.expect("connect to chromium");
        let handler = tokio::spawn(async move { while handler.next().await.is_some() {} });
        Chromium {
            browser,
            child,
            handler,
            _profile: profile,
        }
    }
}

/// Every text of a page, its shadow roots and same-origin frames included
/// (ReplayWeb.page shows an archived page in an iframe inside the shadow DOM
/// of its components). An explicit stack, and a cap on the nodes visited.
const ALL_TEXT: &str = r#"(() => {
  const parts = [];
  const stack = [document];
  let visited = 0;
  while (stack.length && visited < 500000) {
    const node = stack.pop();
    visited++;
    if (node.nodeType === 3) { parts.push(node.nodeValue); continue; }
    if (node.shadowRoot) stack.push(node.shadowRoot);
    if (node.tagName === "IFRAME") {
      try { if (node.contentDocument) stack.push(node.contentDocument); } catch (e) {}
    }
    const kids = node.childNodes || [];
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
  return parts.join(" ").replace(/\s+/g, " ");
})()"#;

/// The natural sizes of the images of `class` that `page` shows, frames and
/// shadow roots included (`WxH`, `0x0` for one not loaded or broken).
pub async fn image_sizes(page: &Page, class: &str) -> Vec<String> {
    let script = ALL_TEXT
        .replace(
            "if (node.nodeType === 3) { parts.push(node.nodeValue); continue; }",
            &format!(
                "if (node.tagName === \"IMG\" && node.classList.contains({class:?})) \
                 parts.push(node.naturalWidth + \"x\" + node.naturalHeight);"
            ),
        )
        .replace(
            "parts.join(\" \").replace(/\\s+/g, \" \")",
            "parts.join(\" \")",
        );
    match page.evaluate(script).await {
        Ok(value) => value
            .into_value::<String>()
            .unwrap_or_default()
            .split_whitespace()
            .map(String::from)
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The text `page` shows, frames and shadow roots included; on failure (a
/// frame navigating while it is read: the next look will do) why.
pub async fn all_text(page: &Page) -> String {
    match page.evaluate(ALL_TEXT).await {
        Ok(value) => value.into_value::<String>().unwrap_or_default(),
        Err(e) => format!("(the page could not be read: {e})"),
    }
}

/// Waits (at most `limit`) until the text `page` shows satisfies `done`;
/// returns the last text seen and whether it did.
pub async fn wait_for_text(
    page: &Page,
    limit: Duration,
    done: impl Fn(&str) -> bool,
) -> (String, bool) {
    let deadline = Instant::now() + limit;
    loop {
        let text = all_text(page).await;
        if done(&text) {
            return (text, true);
        }
        if Instant::now() > deadline {
            return (text, false);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
