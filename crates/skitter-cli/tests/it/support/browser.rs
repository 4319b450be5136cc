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
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::log::EventEntryAdded;
use chromiumoxide::cdp::browser_protocol::target::{
    FilterEntry, SetAutoAttachParams, TargetFilter,
};
use chromiumoxide::cdp::js_protocol::runtime::{EventConsoleApiCalled, EventExceptionThrown};
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

    /// Opens `url` in a new tab whose service workers run unhindered.
    ///
    /// chromiumoxide sets every tab to auto-attach the workers it starts,
    /// paused until the client resumes them; a service worker it resumes and
    /// at once detaches from, as it does, is in a race inside Chromium: often
    /// the worker stays paused for good, so its registration never finishes
    /// (ReplayWeb.page then never renders) and a reload waits behind it too.
    /// The tab is opened blank, told to leave service workers out of its
    /// auto-attach, and only then sent to `url`, so no worker of the page
    /// can start under the old setting. What the page says from the start is
    /// heard by the [`Console`] returned with it.
    pub async fn open(&self, url: &str) -> (Page, Console) {
        let page = self.browser.new_page("about:blank").await.unwrap();
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
        let attach = SetAutoAttachParams::builder()
            .auto_attach(true)
            .wait_for_debugger_on_start(true)
            .flatten(true)
            .filter(filter)
            .build()
            .unwrap();
        page.execute(attach).await.unwrap();
        let console = Console::listen(&page).await;
        page.goto(url).await.unwrap();
        (page, console)
    }
}

/// The most console lines [`Console`] keeps; later ones are counted.
const MAX_CONSOLE: usize = 500;

/// What a page said while it ran: its console calls, its uncaught exceptions
/// and the browser's log entries for it (failed loads, warnings), frames in
/// its process included, for a failing test to print. Stops listening when
/// dropped.
pub struct Console {
    lines: Arc<Mutex<(Vec<String>, usize)>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Console {
    fn drop(&mut self) {
        self.tasks.iter().for_each(|task| task.abort());
    }
}

impl Console {
    /// Starts listening to `page`.
    pub async fn listen(page: &Page) -> Console {
        let lines = Arc::new(Mutex::new((Vec::new(), 0)));
        let start = Instant::now();
        let keep = move |lines: &Mutex<(Vec<String>, usize)>, line: String| {
            let mut lines = lines.lock().unwrap();
            if lines.0.len() < MAX_CONSOLE {
                let at = start.elapsed().as_secs_f64();
                lines.0.push(format!("{at:7.2}s {line}"));
            } else {
                lines.1 += 1;
            }
        };
        let mut calls = page
            .event_listener::<EventConsoleApiCalled>()
            .await
            .unwrap();
        let mut thrown = page.event_listener::<EventExceptionThrown>().await.unwrap();
        let mut logged = page.event_listener::<EventEntryAdded>().await.unwrap();
        let tasks = vec![
            tokio::spawn({
                let lines = lines.clone();
                async move {
                    while let Some(call) = calls.next().await {
                        let args: Vec<String> = call
                            .args
                            .iter()
                            .map(|arg| match (&arg.value, &arg.description) {
                                (Some(value), _) => value.to_string(),
                                (None, Some(text)) => text.clone(),
                                (None, None) => format!("{:?}", arg.r#type),
                            })
                            .collect();
                        keep(
                            &lines,
                            format!("console.{:?}: {}", call.r#type, args.join(" ")),
                        );
                    }
                }
            }),
            tokio::spawn({
                let lines = lines.clone();
                async move {
                    while let Some(thrown) = thrown.next().await {
                        let details = &thrown.exception_details;
                        let what = details
                            .exception
                            .as_ref()
                            .and_then(|e| e.description.clone())
                            .unwrap_or_else(|| details.text.clone());
                        keep(&lines, format!("uncaught: {what} ({:?})", details.url));
                    }
                }
            }),
            tokio::spawn({
                let lines = lines.clone();
                async move {
                    while let Some(entry) = logged.next().await {
                        let entry = &entry.entry;
                        let url = entry.url.as_deref().unwrap_or("");
                        keep(
                            &lines,
                            format!("log {:?}: {} {url}", entry.level, entry.text),
                        );
                    }
                }
            }),
        ];
        Console { lines, tasks }
    }

    /// Everything heard so far, a line a message.
    pub fn text(&self) -> String {
        let lines = self.lines.lock().unwrap();
        let mut text = lines.0.join("\n");
        if lines.1 > 0 {
            text.push_str(&format!("\n(and {} more)", lines.1));
        }
        text
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
