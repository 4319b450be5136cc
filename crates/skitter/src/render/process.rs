//! The Chromium process itself: how it is started and how it is ended.
//!
//! skitter starts Chromium itself rather than through the browser crate, for
//! what the crate's launcher cannot do:
//!
//! - **The sandbox.** Chromium refuses to run as root with its sandbox on, so
//!   as root it is started in a user namespace of its own, where it is not
//!   root and can build its sandbox (its own namespaces and seccomp) inside
//!   it. Which way works is found by trying ([`Sandbox::order`]); only when no
//!   sandboxed start works does it run with `--no-sandbox`, and the caller says
//!   so loudly.
//! - **Its end.** It runs in a process group of its own (a terminal's Ctrl-C
//!   reaches skitter, which stops the crawl, not the browser in the middle of
//!   a render), with the parent-death signal set: should skitter be killed,
//!   the kernel kills the browser, and its helpers follow it. The process is
//!   started and waited for by a thread of its own that lives exactly as long
//!   as the browser, since the parent-death signal follows the thread that
//!   started the child, and a runtime thread may end first. Ending the
//!   browser kills its whole group.
//! - **Its environment.** It gets only the variables a browser needs (locale,
//!   paths, fonts), not skitter's (`SKITTER_REDIS` and other secrets), and its
//!   command line carries no secret: every request goes through interception,
//!   the proxy it is given is a closed port without credentials.

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How the browser's sandbox is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sandbox {
    /// Chromium's own sandbox, as a user other than root gets it.
    Own,
    /// Chromium's own sandbox, inside a user namespace in which it is not root.
    UserNamespace,
    /// `--no-sandbox`: a renderer exploit runs as skitter's user.
    Off,
}

impl Sandbox {
    /// The ways to try, best first.
    pub(super) fn order() -> &'static [Sandbox] {
        if is_root() {
            &[Sandbox::UserNamespace, Sandbox::Off]
        } else {
            &[Sandbox::Own, Sandbox::Off]
        }
    }

    fn args(self) -> &'static [&'static str] {
        match self {
            Sandbox::Own | Sandbox::UserNamespace => &[],
            Sandbox::Off => &["--no-sandbox", "--disable-setuid-sandbox"],
        }
    }
}

/// What every start gets besides the sandbox, its profile and the caller's
/// arguments: what the browser crate passes (after puppeteer), headless.
const BASE_ARGS: [&str; 29] = [
    "--disable-background-networking",
    "--enable-features=NetworkService,NetworkServiceInProcess",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-breakpad",
    "--disable-client-side-phishing-detection",
    "--disable-component-extensions-with-background-pages",
    "--disable-default-apps",
    "--disable-dev-shm-usage",
    "--disable-features=TranslateUI",
    "--disable-hang-monitor",
    "--disable-ipc-flooding-protection",
    "--disable-popup-blocking",
    "--disable-prompt-on-repost",
    "--disable-renderer-backgrounding",
    "--disable-sync",
    "--force-color-profile=srgb",
    "--metrics-recording-only",
    "--no-first-run",
    "--enable-automation",
    "--password-store=basic",
    "--use-mock-keychain",
    "--enable-blink-features=IdleDetection",
    "--lang=en_US",
    "--disable-extensions",
    "--headless",
    "--hide-scrollbars",
    "--mute-audio",
    "--remote-debugging-port=0",
];

/// The environment variables the browser keeps; every other is removed.
const KEEP_ENV: [&str; 8] = [
    "PATH",
    "HOME",
    "TMPDIR",
    "LANG",
    "LANGUAGE",
    "TZ",
    "FONTCONFIG_FILE",
    "FONTCONFIG_PATH",
];

/// Stderr lines kept to explain a start that failed.
const STDERR_KEPT: usize = 20;

/// A running browser process. Dropping it kills the browser and every
/// process of its group.
pub(super) struct Process {
    /// The browser's process id, which is also its process group's.
    pid: u32,
    /// The DevTools address it listens on.
    ws: String,
    /// Closed on drop: the keeper thread then kills the group.
    stop: Option<mpsc::Sender<()>>,
    /// Joined on drop, so the browser is dead before its profile goes.
    keeper: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Process {
    fn drop(&mut self) {
        drop(self.stop.take());
        // Quick: a kill and the wait for a killed process.
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.join();
        }
    }
}

impl Process {
    /// The DevTools WebSocket address.
    pub(super) fn ws(&self) -> &str {
        &self.ws
    }

    /// The browser's process id.
    pub(super) fn pid(&self) -> u32 {
        self.pid
    }
}

/// Starts `executable` with `args` under `sandbox`, its profile in `profile`,
/// and waits up to `timeout` for its DevTools address. The error is what
/// went wrong, with the end of the browser's stderr.
pub(super) async fn spawn(
    executable: &Path,
    profile: &Path,
    sandbox: Sandbox,
    args: &[&str],
    timeout: Duration,
) -> Result<Process, String> {
    let mut cmd = Command::new(executable);
    cmd.args(BASE_ARGS)
        .args(sandbox.args())
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .env_clear()
        .envs(std::env::vars_os().filter(|(k, _)| {
            k.to_str().is_some_and(|k| {
                KEEP_ENV.contains(&k) || k.starts_with("LC_") || k.starts_with("XDG_")
            })
        }))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    guard::prepare(&mut cmd, sandbox == Sandbox::UserNamespace);
    let (started_tx, started) = tokio::sync::oneshot::channel();
    let (ws_tx, ws) = tokio::sync::oneshot::channel();
    let (stop_tx, stop) = mpsc::channel();
    let keeper = std::thread::Builder::new()
        .name("skitter-chromium".into())
        .spawn(move || keep(cmd, started_tx, ws_tx, stop))
        .map_err(|e| format!("cannot start a thread for the browser: {e}"))?;
    let mut process = Process {
        pid: 0,
        ws: String::new(),
        stop: Some(stop_tx),
        keeper: Some(keeper),
    };
    process.pid = started
        .await
        .map_err(|_| "the browser's thread ended".to_string())??;
    match tokio::time::timeout(timeout, ws).await {
        Ok(Ok(Ok(ws))) => {
            process.ws = ws;
            Ok(process)
        }
        Ok(Ok(Err(stderr))) => Err(format!("exited before listening: {stderr}")),
        Ok(Err(_)) => Err("the browser's stderr reader ended".into()),
        Err(_) => Err(format!("no DevTools address within {timeout:?}")),
    }
}

/// The keeper thread: starts the browser, then waits until it exits or is
/// asked to stop (a message or a dropped sender), and kills its group.
fn keep(
    mut cmd: Command,
    started: tokio::sync::oneshot::Sender<Result<u32, String>>,
    ws: tokio::sync::oneshot::Sender<Result<String, String>>,
    stop: mpsc::Receiver<()>,
) {
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            let _ = started.send(Err(format!("cannot run it: {e}")));
            return;
        }
    };
    let pid = child.id();
    if let Some(stderr) = child.stderr.take() {
        let reader = std::thread::Builder::new()
            .name("skitter-chromium-stderr".into())
            .spawn(move || read_stderr(stderr, ws));
        if reader.is_err() {
            tracing::debug!("no thread to read the browser's stderr");
        }
    }
    let _ = started.send(Ok(pid));
    // A message or a dropped sender ends the wait.
    while let Err(mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(Duration::from_millis(250)) {
        if !matches!(child.try_wait(), Ok(None)) {
            // The browser died: its helpers go with it.
            guard::kill_group(pid);
            return;
        }
    }
    // Before the wait, so the group id cannot have been reused.
    guard::kill_group(pid);
    let _ = child.kill();
    let _ = child.wait();
}

/// Reads the browser's stderr: sends its DevTools address once seen (or the
/// last lines, should it end first), then drains the rest, so the browser
/// never blocks on a full pipe.
fn read_stderr(
    stderr: std::process::ChildStderr,
    ws: tokio::sync::oneshot::Sender<Result<String, String>>,
) {
    let mut ws = Some(ws);
    let mut last = std::collections::VecDeque::with_capacity(STDERR_KEPT);
    for line in std::io::BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        if ws.is_some() {
            if let Some((_, at)) = line.rsplit_once("listening on ")
                && at.starts_with("ws")
                && at.contains("devtools/browser")
            {
                if let Some(tx) = ws.take() {
                    let _ = tx.send(Ok(at.trim().to_string()));
                }
                continue;
            }
            if last.len() == STDERR_KEPT {
                last.pop_front();
            }
            last.push_back(line);
        } else {
            tracing::trace!(target: "skitter::render::chromium", "{line}");
        }
    }
    if let Some(tx) = ws {
        let _ = tx.send(Err(Vec::from(last).join("\n")));
    }
}

/// Whether skitter runs as root.
#[cfg(unix)]
pub(super) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Whether skitter runs as root.
#[cfg(not(unix))]
pub(super) fn is_root() -> bool {
    false
}

#[cfg(unix)]
mod guard {
    //! What the child does between fork and exec, and the group kill.

    use std::ffi::CString;
    use std::os::unix::process::CommandExt as _;
    use std::process::Command;

    /// The user the browser is inside its user namespace.
    const INSIDE_UID: u32 = 1000;

    /// Puts the child in a group of its own, with the parent-death signal
    /// set, and, if `userns`, in a new user namespace where it is not root.
    pub(super) fn prepare(cmd: &mut Command, userns: bool) {
        cmd.process_group(0);
        // Everything the child needs is made before the fork: between fork
        // and exec only system calls are allowed.
        let parent = std::process::id();
        // SAFETY: geteuid/getegid have no preconditions.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let maps = userns.then(|| {
            [
                ("/proc/self/setgroups", "deny".to_string()),
                ("/proc/self/uid_map", format!("{INSIDE_UID} {uid} 1\n")),
                ("/proc/self/gid_map", format!("{INSIDE_UID} {gid} 1\n")),
            ]
            .map(|(path, text)| (CString::new(path).expect("no NUL"), text))
        });
        // SAFETY: the closure makes only async-signal-safe system calls
        // (unshare, open, write, close, prctl, getppid) on memory made
        // before the fork.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(maps) = &maps {
                    if libc::unshare(libc::CLONE_NEWUSER) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    for (path, text) in maps {
                        write_file(path, text.as_bytes())?;
                    }
                }
                // Last, after the credentials changed: a change of
                // credentials may clear it.
                set_parent_death_signal()?;
                if libc::getppid() as u32 != parent {
                    // skitter died before the signal was set.
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }

    /// # Safety
    /// Only system calls: callable between fork and exec.
    unsafe fn write_file(path: &CString, text: &[u8]) -> std::io::Result<()> {
        // SAFETY: a valid C string and buffer; the descriptor is closed.
        unsafe {
            let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let wrote = libc::write(fd, text.as_ptr().cast(), text.len());
            let err = std::io::Error::last_os_error();
            libc::close(fd);
            if wrote != text.len() as isize {
                return Err(err);
            }
        }
        Ok(())
    }

    #[cfg(target_os = "linux")]
    unsafe fn set_parent_death_signal() -> std::io::Result<()> {
        // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number.
        if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    #[cfg(not(target_os = "linux"))]
    unsafe fn set_parent_death_signal() -> std::io::Result<()> {
        Ok(())
    }

    /// Kills every process of the group `pid` leads.
    pub(super) fn kill_group(pid: u32) {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return;
        };
        // SAFETY: kill has no memory preconditions; a group already gone
        // answers ESRCH.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

#[cfg(not(unix))]
mod guard {
    //! Elsewhere the browser is only killed by skitter.

    pub(super) fn prepare(_: &mut std::process::Command, _: bool) {}

    pub(super) fn kill_group(_: u32) {}
}
