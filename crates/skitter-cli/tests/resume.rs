//! Crash-safe resume, proved the hard way: crawl the test site with `--state`,
//! SIGKILL the process at several moments (also while it writes its outputs),
//! resume each time until the crawl completes, then check that every page was
//! fetched, that few were fetched twice, that the report accounts for every URL
//! exactly once, and that the JSONL is still valid line by line.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::Duration;

use skitter_testsite::{SiteConfig, TestSite};

const MAX_TASKS: u64 = 8;

fn crawl(url: &str, dir: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skitter"));
    cmd.args(["-q", "crawl", url, "--report", "json", "--no-trap-rules"])
        .arg(format!("--max-tasks={MAX_TASKS}"))
        .arg(format!("--per-host={MAX_TASKS}"))
        .arg("--state")
        .arg(dir.join("state"))
        .arg("--jsonl")
        .arg(dir.join("crawl.jsonl"))
        .arg("--warc")
        .arg(dir.join("crawl.warc.gz"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn survives_sigkill_at_random_moments() {
    let site = TestSite::start(SiteConfig {
        pages: 600,
        fanout: 6,
        latency: Duration::from_millis(5),
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = site.url("/");
    // Kill after these many milliseconds; a deterministic spread stands in for
    // "random" so a failure can be replayed.
    let mut kills = 0;
    for delay_ms in [150u64, 420, 90, 610, 300, 230] {
        let mut child = crawl(&url, dir.path()).spawn().unwrap();
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
        }
        child.wait().unwrap();
    }
    assert!(kills >= 5, "only {kills} runs were still going when killed");
    let out = crawl(&url, dir.path()).output().unwrap();
    assert!(
        out.status.success(),
        "final run: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();

    let stats = site.stats();
    assert!(
        stats.missing_pages().is_empty(),
        "never fetched: {:?}",
        stats.missing_pages()
    );
    let duplicates: u64 = stats.paths().values().map(|n| n.saturating_sub(1)).sum();
    assert!(
        duplicates <= 5 * MAX_TASKS,
        "{duplicates} duplicate fetches"
    );

    let urls: Vec<&str> = report["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["url"].as_str().unwrap())
        .collect();
    let distinct: BTreeSet<&str> = urls.iter().copied().collect();
    assert_eq!(urls.len(), distinct.len(), "a URL is reported twice");
    let fetched_paths: BTreeSet<String> = stats
        .paths()
        .keys()
        .filter(|p| *p != "/robots.txt")
        .cloned()
        .collect();
    assert_eq!(
        distinct.len(),
        fetched_paths.len(),
        "the report covers every URL fetched"
    );
    assert_eq!(report["todo"], 0);

    let jsonl = std::fs::read_to_string(dir.path().join("crawl.jsonl")).unwrap();
    for (i, line) in jsonl.lines().enumerate() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
    }
    assert!(jsonl.is_empty() || jsonl.ends_with('\n'));
}
