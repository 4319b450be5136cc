//! A private PostgreSQL server for tests and benchmarks: `initdb` into a
//! temporary directory, `postgres` on a free loopback port with its Unix socket
//! in that directory, stopped by its PID when dropped. No system service is
//! used or touched.
//!
//! The binaries are found with `pg_config --bindir`, else in the newest
//! `/usr/lib/postgresql/*/bin` (Debian's `postgresql` package). PostgreSQL
//! refuses to run as root, so as root both run as the `postgres` system user
//! (which that package creates), in a directory handed to it.
//!
//! With [`ClusterOptions::tls`] the server also speaks TLS (`ssl=on`) with a
//! certificate the caller made (tests generate one with `rcgen`), so clients'
//! `sslmode` handling can be tested against the real thing.

use std::io;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running private PostgreSQL server, owned by one test or benchmark.
pub struct PrivateCluster {
    child: Option<Child>,
    port: u16,
    bin: PathBuf,
    dir: tempfile::TempDir,
}

/// How the server runs.
#[derive(Clone, Debug, Default)]
pub struct ClusterOptions {
    /// `fsync` on (a real server's durability, for benchmarks) or off (faster
    /// tests, whose data dies with them anyway).
    pub fsync: bool,
    /// TLS on TCP connections (`ssl=on`) with this certificate; plain TCP
    /// still works, so a client chooses with its `sslmode`.
    pub tls: Option<ServerTls>,
}

/// The server's TLS certificate and key, PEM.
#[derive(Clone, Debug)]
pub struct ServerTls {
    /// The certificate chain, leaf first.
    pub cert_pem: String,
    /// Its private key (PKCS#8 or PKCS#1).
    pub key_pem: String,
}

impl PrivateCluster {
    /// Starts a server without fsync, or `None` after a loud notice (see
    /// [`crate::skip::cannot_run`]) when PostgreSQL is not installed; under CI
    /// that fails the test instead.
    pub fn start() -> Option<PrivateCluster> {
        Self::start_with(ClusterOptions::default())
    }

    /// [`PrivateCluster::start`] with options. Panics when an installed
    /// PostgreSQL fails to start (its log is in the message).
    pub fn start_with(options: ClusterOptions) -> Option<PrivateCluster> {
        let Some(bin) = bindir() else {
            let thread = std::thread::current();
            crate::skip::cannot_run(
                thread.name().unwrap_or("a PostgreSQL test"),
                "the test",
                "PostgreSQL is not installed (apt-get install postgresql)",
            );
            return None;
        };
        let cluster = Self::spawn(bin, options)
            .unwrap_or_else(|e| panic!("cannot start a private PostgreSQL: {e}"));
        Some(cluster)
    }

    fn spawn(bin: PathBuf, options: ClusterOptions) -> io::Result<PrivateCluster> {
        let dir = tempfile::Builder::new().prefix("skitter-pg-").tempdir()?;
        let owner = server_user()?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))?;
        }
        let data = dir.path().join("data");
        let init = as_owner(Command::new(bin.join("initdb")), owner, dir.path())
            .args([
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ])
            .arg("-D")
            .arg(&data)
            .output()?;
        if !init.status.success() {
            return Err(io::Error::other(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&init.stderr)
            )));
        }
        let port = free_port()?;
        let log = std::fs::File::create(dir.path().join("server.log"))?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(dir.path().join("server.log"), Some(uid), Some(gid))?;
        }
        let fsync = if options.fsync { "on" } else { "off" };
        let mut settings = vec![
            "listen_addresses=127.0.0.1".to_string(),
            format!("fsync={fsync}"),
        ];
        if let Some(tls) = &options.tls {
            settings.extend(write_tls(tls, dir.path(), owner)?);
        }
        let child = as_owner(Command::new(bin.join("postgres")), owner, dir.path())
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-k"])
            .arg(dir.path())
            .args(settings.iter().flat_map(|s| ["-c", s.as_str()]))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?;
        let mut cluster = PrivateCluster {
            child: Some(child),
            port,
            bin,
            dir,
        };
        cluster.wait_until_ready()?;
        Ok(cluster)
    }

    fn wait_until_ready(&mut self) -> io::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Some(child) = &mut self.child
                && let Some(status) = child.try_wait()?
            {
                return Err(io::Error::other(format!(
                    "postgres exited with {status}: {}",
                    self.log()
                )));
            }
            let ready = Command::new(self.bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()?;
            if ready.success() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(io::Error::other(format!(
            "postgres not ready after 60 s: {}",
            self.log()
        )))
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// The TCP port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The directory holding its Unix socket.
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// A client tool of the server's (`psql`, `createdb`) connecting to it
    /// as `postgres` over TCP.
    fn client(&self, tool: &str) -> Command {
        let mut cmd = Command::new(self.bin.join(tool));
        cmd.args([
            "-h",
            "127.0.0.1",
            "-p",
            &self.port.to_string(),
            "-U",
            "postgres",
        ]);
        cmd
    }

    /// Creates database `name` (a plain identifier) and returns its URL.
    pub fn create_database(&self, name: &str) -> io::Result<String> {
        let out = self.client("createdb").arg(name).output()?;
        if !out.status.success() {
            return Err(io::Error::other(format!(
                "createdb {name} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        Ok(self.url(name))
    }

    /// `postgres://postgres@127.0.0.1:PORT/DATABASE?sslmode=disable`.
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/{database}?sslmode=disable",
            self.port
        )
    }

    /// Runs one SQL command with `psql` in `database` and returns its
    /// unaligned, tuples-only output (`|` between columns, a line per row).
    pub fn psql(&self, database: &str, sql: &str) -> io::Result<String> {
        let out = self
            .client("psql")
            .args([
                "-X",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                database,
                "-c",
                sql,
            ])
            .output()?;
        if !out.status.success() {
            return Err(io::Error::other(format!(
                "psql failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        // SIGINT is PostgreSQL's fast shutdown: no waiting for clients.
        let int = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        if int.is_ok_and(|s| s.success()) {
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl std::fmt::Debug for PrivateCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrivateCluster")
            .field("port", &self.port)
            .field("dir", &self.dir.path())
            .finish_non_exhaustive()
    }
}

/// Where PostgreSQL's server binaries are, if it is installed.
fn bindir() -> Option<PathBuf> {
    let has_server = |dir: &Path| dir.join("initdb").is_file() && dir.join("postgres").is_file();
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output()
        && out.status.success()
    {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if has_server(&dir) {
            return Some(dir);
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            has_server(&bin).then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// The user and group to run the server as: `postgres`'s when we are root.
fn server_user() -> io::Result<Option<(u32, u32)>> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .and_then(|id| id.parse::<u32>().ok());
    if euid != Some(0) {
        return Ok(None);
    }
    let passwd = std::fs::read_to_string("/etc/passwd")?;
    passwd
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.first() == Some(&"postgres") && fields.len() > 3)
                .then(|| Some((fields[2].parse().ok()?, fields[3].parse().ok()?)))
                .flatten()
        })
        .map(Some)
        .ok_or_else(|| {
            io::Error::other("running as root and there is no postgres user to run PostgreSQL as")
        })
}

/// Writes the server's certificate and key into `dir`, owned by the server's
/// user with the key private (PostgreSQL refuses a key others can read), and
/// returns the settings that turn TLS on.
fn write_tls(tls: &ServerTls, dir: &Path, owner: Option<(u32, u32)>) -> io::Result<Vec<String>> {
    use std::os::unix::fs::PermissionsExt;
    let (cert, key) = (dir.join("server.crt"), dir.join("server.key"));
    std::fs::write(&cert, &tls.cert_pem)?;
    std::fs::write(&key, &tls.key_pem)?;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600))?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(&cert, Some(uid), Some(gid))?;
        std::os::unix::fs::chown(&key, Some(uid), Some(gid))?;
    }
    Ok(vec![
        "ssl=on".to_string(),
        format!("ssl_cert_file={}", cert.display()),
        format!("ssl_key_file={}", key.display()),
    ])
}

fn as_owner(mut command: Command, owner: Option<(u32, u32)>, dir: &Path) -> Command {
    command.current_dir(dir);
    if let Some((uid, gid)) = owner {
        command.uid(uid).gid(gid);
    }
    command
}

/// A port the OS just handed out, so very likely still free.
fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}
