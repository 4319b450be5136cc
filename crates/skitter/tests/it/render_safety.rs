//! What a rendered page cannot make the browser do: run without Chromium's
//! sandbox where the sandbox can run (and say so where it cannot), send UDP
//! around the renderer's proxy (WebRTC), or have one render fetch and hold
//! without end.
//!
//! Needs Debian's `chromium` (or `$SKITTER_CHROMIUM`); without it the tests say
//! so loudly and, under CI, fail.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use skitter::render::{RenderMode, RenderSettings};
use skitter::{Crawler, Report};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, UdpSocket};
use tokio_util::sync::CancellationToken;

fn chromium(check: &str) -> Option<PathBuf> {
    skitter_testsite::skip::chromium("render_safety", check)
}

type Paths = Arc<Mutex<Vec<String>>>;

/// A server answering `/` with `page`, `/slow` after a second, `/big` with
/// 2 MiB and anything else with a short script, recording every path asked.
async fn serve(page: String) -> (String, Paths) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let paths: Paths = Arc::default();
    let seen = paths.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let (seen, page) = (seen.clone(), page.clone());
            tokio::spawn(async move {
                let Some(head) = crate::support::read_request_head(&mut sock).await else {
                    return;
                };
                let path = head.split(' ').nth(1).unwrap_or("/").to_string();
                seen.lock().unwrap().push(path.clone());
                let (kind, body) = match path.as_str() {
                    "/" => ("text/html", page.into_bytes()),
                    "/slow" => {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        ("text/plain", b"slow".to_vec())
                    }
                    "/big" => ("text/plain", vec![b'x'; 2 << 20]),
                    _ => ("text/javascript", b"//".to_vec()),
                };
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(&body).await;
            });
        }
    });
    (origin, paths)
}

/// Renders `root` alone under `settings`.
async fn render(root: &str, settings: RenderSettings) -> Report {
    Crawler::builder()
        .root(root)
        .max_depth(0)
        .render(settings)
        .build()
        .expect("valid config")
        .run(CancellationToken::new())
        .await
        .expect("crawl runs")
}

fn always(browser: PathBuf) -> RenderSettings {
    RenderSettings {
        mode: RenderMode::Always,
        chromium: browser,
        tasks: 1,
        ..RenderSettings::default()
    }
}

/// Whether this machine lets a process make a user namespace, which
/// Chromium's sandbox needs (Debian ships no setuid sandbox helper).
fn user_namespaces() -> bool {
    std::process::Command::new("unshare")
        .args(["--user", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_keeps_its_sandbox_where_it_can_run() {
    let Some(browser) = chromium("sandbox kept") else {
        return;
    };
    if !user_namespaces() {
        skitter_testsite::skip::cannot_run(
            "render_safety",
            "sandbox kept",
            "this machine allows no user namespaces, so Chromium's sandbox cannot run here",
        );
        return;
    }
    let (origin, _) = serve("<html><script>1</script><a href=/a>a</a></html>".into()).await;
    let report = render(&format!("{origin}/"), always(browser)).await;
    assert_eq!(report.counters.rendered, 1, "{}", report.to_text());
    assert_eq!(report.counters.render_failed, 0, "{}", report.to_text());
    assert_eq!(
        report.counters.render_unsandboxed,
        0,
        "{}",
        report.to_text()
    );
}

/// A browser whose sandbox cannot start (here a wrapper that fails unless
/// given `--no-sandbox`) still renders, and the report counts the start.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_without_a_usable_sandbox_runs_unsandboxed_and_is_counted() {
    use std::os::unix::fs::PermissionsExt as _;
    let Some(browser) = chromium("sandbox fallback") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("chromium");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ncase \" $* \" in *' --no-sandbox '*) exec '{}' \"$@\";; esac\necho 'No usable sandbox!' >&2\nexit 1\n",
            browser.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (origin, _) = serve("<html><script>1</script></html>".into()).await;
    let report = render(&format!("{origin}/"), always(wrapper)).await;
    assert_eq!(report.counters.rendered, 1, "{}", report.to_text());
    assert_eq!(report.counters.render_failed, 0, "{}", report.to_text());
    assert_eq!(
        report.counters.render_unsandboxed,
        1,
        "{}",
        report.to_text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webrtc_sends_no_udp_around_the_proxy() {
    let Some(browser) = chromium("WebRTC UDP") else {
        return;
    };
    let stun = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let port = stun.local_addr().unwrap().port();
    // ICE gathering starts with the offer; the slow request keeps the render
    // going (its virtual clock stands still) while it would send.
    let page = format!(
        r#"<html><body><script>
const pc = new RTCPeerConnection({{ iceServers: [
  {{ urls: "stun:127.0.0.1:{port}" }},
  {{ urls: "turn:127.0.0.1:{port}?transport=udp", username: "u", credential: "p" }}
] }});
pc.createDataChannel("x");
pc.createOffer().then((o) => pc.setLocalDescription(o));
fetch("/slow");
</script></body></html>"#
    );
    let (origin, paths) = serve(page).await;
    let report = render(&format!("{origin}/"), always(browser)).await;
    assert_eq!(report.counters.rendered, 1, "{}", report.to_text());
    assert!(
        paths.lock().unwrap().iter().any(|p| p == "/slow"),
        "the page's script ran: {}",
        report.to_text()
    );
    let mut buf = [0u8; 1500];
    let got = tokio::time::timeout(Duration::from_millis(500), stun.recv_from(&mut buf)).await;
    assert!(
        got.is_err(),
        "a datagram reached the STUN/TURN socket: {got:?}"
    );
}

/// A page whose script asks for a response bigger than the render's byte
/// budget, then for many small ones: the big one and those past the request
/// budget fail in the browser, are counted, and most are never fetched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_render_keeps_to_its_budget_of_requests_and_bytes() {
    let Some(browser) = chromium("render budget") else {
        return;
    };
    let page = r#"<html><body><script>
fetch("/big").catch(() => 0).finally(() => {
  for (let i = 0; i < 40; i++) fetch("/r/" + i).catch(() => 0);
});
</script></body></html>"#;
    let (origin, paths) = serve(page.into()).await;
    let settings = RenderSettings {
        max_requests: 10,
        max_bytes: 1 << 20,
        ..always(browser)
    };
    let report = render(&format!("{origin}/"), settings).await;
    assert_eq!(report.counters.rendered, 1, "{}", report.to_text());
    let small = paths
        .lock()
        .unwrap()
        .iter()
        .filter(|p| p.starts_with("/r/"))
        .count();
    assert!(small <= 9, "{small} small requests fetched");
    let c = &report.counters;
    assert!(c.render_requests <= 10, "{}", report.to_text());
    // The big one (past the bytes) and at least 31 small ones.
    assert!(c.render_refused_budget >= 32, "{}", report.to_text());
}
