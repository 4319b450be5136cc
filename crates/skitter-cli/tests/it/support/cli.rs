//! Running the real `skitter` binary from the CLI tests: starting a process,
//! waiting for it under a limit and reading what it printed, and the test
//! site checks the multi-process tests share (progress, duplicate fetches).

use std::process::Stdio;
use std::time::{Duration, Instant};

use skitter_testsite::{RunningSite, Stats};
use tokio::process::{Child, Command};

/// Longest any one skitter process may run before a test calls it hung.
pub const PROCESS_LIMIT: Duration = Duration::from_secs(90);

/// Starts the binary with `args`, no stdin, output captured, warnings logged,
/// killed if the test drops it.
pub fn skitter(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_skitter"))
        .args(args)
        .env("SKITTER_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start skitter")
}

/// What a finished process printed, and how it exited.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Panics with the process's output unless it exited 0. Standard error
    /// comes first: it says why, and a long report on standard output would
    /// push it out of a shortened log.
    pub fn assert_ok(&self, who: &str) {
        assert_eq!(
            self.code,
            Some(0),
            "{who} failed\nstderr:\n{}\nstdout:\n{}",
            self.stderr,
            self.stdout
        );
    }
}

/// Waits for a process (at most [`PROCESS_LIMIT`]) and keeps its output.
pub async fn finish(child: Child) -> Run {
    let output = tokio::time::timeout(PROCESS_LIMIT, child.wait_with_output())
        .await
        .expect("skitter did not finish in time")
        .expect("wait for skitter");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs the binary with `args` to its end.
pub async fn run(args: &[&str]) -> Run {
    finish(skitter(args)).await
}

/// Waits for a process; panics with its output unless it exited 0, else
/// returns its standard output.
pub async fn finish_ok(child: Child, who: &str) -> String {
    let run = finish(child).await;
    run.assert_ok(who);
    run.stdout
}

/// Waits for a process that prints a JSON report (a worker's own, with the
/// crawl-wide totals under `crawl_wide`) and parses it.
pub async fn report(child: Child, who: &str) -> serde_json::Value {
    let stdout = finish_ok(child, who).await;
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{who}: {e}: {stdout}"))
}

/// Waits until the site has served at least `n` requests.
pub async fn wait_for_requests(site: &RunningSite, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while site.stats().total_requests < n {
        assert!(Instant::now() < deadline, "the crawl made no progress");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Waits until `status` finds the crawl's options in Redis (so workers may
/// join).
pub async fn wait_for_crawl(redis: &str, crawl: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = run(&["status", "--redis", redis, "--crawl", crawl]).await;
        if status.code == Some(0) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "crawl {crawl} never appeared: {}",
            status.stderr
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Page fetches beyond the first, over the generated pages; panics if a page
/// was never fetched.
pub fn duplicates(stats: &Stats) -> u64 {
    assert_eq!(
        stats.missing_pages(),
        Vec::<String>::new(),
        "pages never fetched"
    );
    stats
        .page_paths()
        .iter()
        .map(|p| stats.requests(p) - 1)
        .sum()
}

/// Runs `skitter ARGS` in `dir` with no standard input, to its end.
pub fn skitter_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_skitter"))
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the binary runs")
}

/// A finished run's status, stdout and stderr, for an assertion's message.
pub fn show(out: &std::process::Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Every `.md` file under `dir` (a `--markdown` tree), recursively.
pub fn markdown_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The absolute `http` link targets of a Markdown text (`](http…)`).
pub fn absolute_links(markdown: &str) -> Vec<String> {
    markdown
        .split("](")
        .skip(1)
        .filter(|rest| rest.starts_with("http"))
        .map(|rest| rest[..rest.find([')', ' ']).unwrap_or(rest.len())].to_string())
        .collect()
}
