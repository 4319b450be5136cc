//! A real `redis-server` for tests: started on a free loopback port with its own
//! temporary directory, and stopped by its PID when dropped. No mocks: the
//! frontier's atomicity lives in Lua scripts only a real server runs.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `redis-server` owned by one test.
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    persistent: bool,
    /// More `redis-server` options, kept for restarts.
    extra: Vec<String>,
}

impl RedisServer {
    /// Starts a server, or `None` (after a loud notice) when `redis-server` is
    /// not installed. Under CI a missing server fails the test instead.
    /// `persistent` turns on the append-only file so data survives a restart.
    pub fn start(persistent: bool) -> Option<RedisServer> {
        RedisServer::start_with(persistent, &[])
    }

    /// [`RedisServer::start`] with more `redis-server` options (such as
    /// `--cluster-enabled yes`).
    pub fn start_with(persistent: bool, extra: &[&str]) -> Option<RedisServer> {
        if Command::new("redis-server")
            .arg("--version")
            .output()
            .is_err()
        {
            // The harness names each test's thread after the test.
            let thread = std::thread::current();
            skitter_testsite::skip::cannot_run(
                thread.name().unwrap_or("a Redis test"),
                "the test",
                "redis-server is not installed (apt-get install redis-server)",
            );
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir for redis-server");
        let port = free_port();
        let mut server = RedisServer {
            child: None,
            port,
            dir,
            persistent,
            extra: extra.iter().map(|s| s.to_string()).collect(),
        };
        server.spawn();
        Some(server)
    }

    /// `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Stops the server (SIGTERM, so an append-only file is flushed) and waits
    /// for it to exit.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let term = Command::new("kill")
                .arg("-TERM")
                .arg(child.id().to_string())
                .status();
            if !term.is_ok_and(|s| s.success()) {
                // No `kill` binary: stop it hard. Tests that restart use
                // `appendfsync always`, so nothing acknowledged is lost either way.
                let _ = child.kill();
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port and directory.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args(args(self.port, self.dir.path(), self.persistent))
            .args(&self.extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        wait_until_listening(self.port);
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn args(port: u16, dir: &Path, persistent: bool) -> Vec<String> {
    let mut args = vec![
        "--port".to_string(),
        port.to_string(),
        "--bind".into(),
        "127.0.0.1".into(),
        "--save".into(),
        String::new(),
        "--dir".into(),
        dir.display().to_string(),
        "--daemonize".into(),
        "no".into(),
    ];
    if persistent {
        args.extend(["--appendonly", "yes", "--appendfsync", "always"].map(String::from));
    }
    args
}

/// A port the OS just handed out, so very likely still free.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local addr").port()
}

fn wait_until_listening(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("redis-server did not start listening on port {port}");
}
