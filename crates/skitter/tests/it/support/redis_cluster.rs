//! A real three-master Redis Cluster for tests: three `redis-server
//! --cluster-enabled yes` on loopback ports picked free, joined by `redis-cli
//! --cluster create`, each with its own temporary directory (append-only file
//! and `nodes.conf`, so a restarted master comes back with its data and its
//! place in the cluster), stopped by PID when dropped.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Masters in the test cluster.
pub const MASTERS: usize = 3;

/// One master of the cluster.
struct Node {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
}

/// A running cluster owned by one test.
pub struct RedisCluster {
    nodes: Vec<Node>,
}

impl RedisCluster {
    /// Starts the cluster, or `None` (after a loud notice; a failure under
    /// CI) when `redis-server` or `redis-cli` is not installed.
    pub fn start() -> Option<RedisCluster> {
        for tool in ["redis-server", "redis-cli"] {
            if Command::new(tool).arg("--version").output().is_err() {
                let thread = std::thread::current();
                skitter_testsite::skip::cannot_run(
                    thread.name().unwrap_or("a Redis Cluster test"),
                    "the test",
                    &format!("{tool} is not installed (apt-get install redis-server)"),
                );
                return None;
            }
        }
        let ports = free_ports(MASTERS);
        let mut cluster = RedisCluster {
            nodes: ports
                .into_iter()
                .map(|port| Node {
                    child: None,
                    port,
                    dir: tempfile::tempdir().expect("temp dir for redis-server"),
                })
                .collect(),
        };
        for i in 0..MASTERS {
            cluster.spawn(i);
        }
        let mut create = Command::new("redis-cli");
        create.arg("--cluster").arg("create");
        for node in &cluster.nodes {
            create.arg(format!("127.0.0.1:{}", node.port));
        }
        let out = create
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .expect("run redis-cli --cluster create");
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        cluster.wait_until_ok();
        Some(cluster)
    }

    /// `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`.
    pub fn url(&self) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!("redis+cluster://{}", nodes.join(","))
    }

    /// Keys on master `i` matching `pattern` (redis-cli --scan).
    pub fn keys_on(&self, i: usize, pattern: &str) -> Vec<String> {
        let out = self.cli(i, &["--scan", "--pattern", pattern]);
        out.lines().map(str::to_string).collect()
    }

    /// Runs `redis-cli -p PORT ARGS…` against master `i`; its stdout.
    pub fn cli(&self, i: usize, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .arg("-p")
            .arg(self.nodes[i].port.to_string())
            .args(args)
            .output()
            .expect("run redis-cli");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Stops master `i` (SIGTERM: the append-only file is flushed), starts it
    /// again on its port and directory, and waits until the cluster is whole.
    #[allow(dead_code)] // Only the CLI's tests restart a master (redis_cluster_sharded).
    pub fn restart(&mut self, i: usize) {
        self.stop(i);
        self.spawn(i);
        self.wait_until_ok();
    }

    fn stop(&mut self, i: usize) {
        let Some(mut child) = self.nodes[i].child.take() else {
            return;
        };
        let term = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status();
        if !term.is_ok_and(|s| s.success()) {
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

    fn spawn(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        let child = Command::new("redis-server")
            .args(["--port", &node.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--cluster-enabled", "yes", "--cluster-node-timeout", "5000"])
            .args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ])
            .arg("--dir")
            .arg(node.dir.path())
            .args(["--daemonize", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        node.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", node.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not listen on {}",
                node.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until every master says the cluster is up with all slots served.
    fn wait_until_ok(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ok = (0..self.nodes.len()).all(|i| {
                let info = self.cli(i, &["cluster", "info"]);
                info.contains("cluster_state:ok") && info.contains("cluster_slots_ok:16384")
            });
            if ok {
                return;
            }
            assert!(Instant::now() < deadline, "the cluster never became ok");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.stop(i);
        }
    }
}

/// `n` distinct ports the OS just handed out, so very likely still free
/// (all held at once, so they differ). A cluster node also listens on its
/// port + 10000 (the bus), so ports whose bus port is taken are skipped.
fn free_ports(n: usize) -> Vec<u16> {
    let mut held = Vec::new();
    let mut ports = Vec::new();
    while ports.len() < n {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
        let port = listener.local_addr().expect("local addr").port();
        held.push(listener);
        if port <= 55535 && TcpListener::bind(("127.0.0.1", port + 10000)).is_ok() {
            ports.push(port);
        }
    }
    ports
}
