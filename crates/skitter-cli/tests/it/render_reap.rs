//! A rendering crawl that is killed (SIGKILL, or a second SIGTERM) leaves no
//! Chromium running, and the browser profile it could not remove is removed
//! by the next skitter that starts a browser.
//!
//! Needs Debian's `chromium` (or `$SKITTER_CHROMIUM`) and Linux's `/proc`;
//! without them the test says so loudly and, under CI, fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn chromium(check: &str) -> Option<PathBuf> {
    if !Path::new("/proc/self/stat").exists() {
        skitter_testsite::skip::cannot_run("render_reap", check, "needs Linux's /proc");
        return None;
    }
    skitter_testsite::skip::chromium("render_reap", check)
}

/// A server whose `/` page asks for `/hang`, which never answers (the render
/// stays busy), and whose `/plain` page is a script without requests. The
/// returned receiver hears of each `/hang` request.
async fn serve() -> (String, tokio::sync::mpsc::Receiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let (hung, hangs) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let hung = hung.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let Ok(n) = sock.read(&mut buf).await else {
                    return;
                };
                let head = String::from_utf8_lossy(&buf[..n]).into_owned();
                let body = match head.split(' ').nth(1) {
                    Some("/hang") => {
                        let _ = hung.send(()).await;
                        std::future::pending::<()>().await;
                        return;
                    }
                    Some("/") => "<html><script>fetch('/hang')</script></html>",
                    _ => "<html><script>1</script></html>",
                };
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(reply.as_bytes()).await;
            });
        }
    });
    (origin, hangs)
}

/// (pid, parent pid, process group) of every process.
fn processes() -> Vec<(u32, u32, u32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // After the name in parentheses: state, ppid, pgrp.
            let mut rest = stat.rsplit_once(')')?.1.split_whitespace().skip(1);
            let ppid = rest.next()?.parse().ok()?;
            let pgrp = rest.next()?.parse().ok()?;
            Some((pid, ppid, pgrp))
        })
        .collect()
}

/// Polls `done` every 100 ms for up to `limit`.
fn within(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    done()
}

fn profiles(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("skitter-chromium-"))
        .collect()
}

fn crawl(url: &str, browser: &Path, tmp: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skitter"));
    cmd.args(["-q", "crawl", url, "--render", "always", "--max-depth", "0"])
        .args(["--render-timeout", "60s"])
        .arg("--chromium")
        .arg(browser)
        .env("TMPDIR", tmp)
        .env("SKITTER_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// How skitter is ended in the middle of a render.
#[derive(Debug, Clone, Copy)]
enum End {
    Kill,
    TwoTerms,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_crawl_leaves_no_browser_and_the_next_removes_its_profile() {
    let Some(browser) = chromium("browser reaped") else {
        return;
    };
    for end in [End::Kill, End::TwoTerms] {
        let (origin, mut hangs) = serve().await;
        let tmp = tempfile::tempdir().unwrap();
        let mut skitter = crawl(&format!("{origin}/"), &browser, tmp.path())
            .spawn()
            .unwrap();
        let pid = skitter.id();
        // The page's request arrived: the browser runs and renders.
        tokio::time::timeout(Duration::from_secs(60), hangs.recv())
            .await
            .expect("the render started within 60 s");
        let chrome = processes()
            .into_iter()
            .find(|&(_, ppid, _)| ppid == pid)
            .map(|(p, ..)| p)
            .expect("skitter's browser process");
        let group = |g: u32| processes().iter().filter(|p| p.2 == g).count();
        assert!(
            group(chrome) > 1,
            "the browser and its helpers share a group"
        );
        match end {
            End::Kill => skitter.kill().unwrap(),
            End::TwoTerms => {
                for _ in 0..2 {
                    // SAFETY: kill sends a signal to a process we started.
                    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        }
        skitter.wait().unwrap();
        assert!(
            within(Duration::from_secs(30), || group(chrome) == 0),
            "{end:?}: the browser's processes outlived skitter: {} left",
            group(chrome)
        );
        let left = profiles(tmp.path());
        assert_eq!(
            left.len(),
            1,
            "{end:?}: the killed crawl's profile: {left:?}"
        );
        assert!(left[0].starts_with(&format!("skitter-chromium-{pid}-")));
        // The next crawl that renders removes it, and its own at its end.
        let out = crawl(&format!("{origin}/plain"), &browser, tmp.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{end:?}: {out:?}");
        assert_eq!(profiles(tmp.path()), Vec::<String>::new(), "{end:?}");
    }
}
