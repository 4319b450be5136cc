//! Outputs that cannot be turned against the files around them, and output
//! streams whose reader went away: the real binary against the local test site,
//! in a temporary directory. Each test here failed before the fix it names.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::cli::{show, skitter_in as skitter};
use skitter_testsite::{RunningSite, SiteConfig, TestSite};

fn site(pages: usize) -> RunningSite {
    TestSite::start(SiteConfig {
        pages,
        fanout: 4,
        ..SiteConfig::default()
    })
    .expect("test site starts")
}

/// `host[_port]`, the directory `fetch -o` saves a site's files under.
fn host_dir(site: &RunningSite) -> String {
    site.url("/")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .replace(':', "_")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_does_not_write_through_a_link_in_its_output_dir() {
    let site = site(10);
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    std::os::unix::fs::symlink(
        elsewhere.path(),
        dir.path().join("out").join(host_dir(&site)),
    )
    .unwrap();
    let url = site.url("/p/1");
    let out = skitter(dir.path(), &["-v", "fetch", "-o", "out", &url]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("symbolic link"),
        "{}",
        show(&out)
    );
    let written: Vec<_> = walk(elsewhere.path());
    assert!(
        written.is_empty(),
        "written outside the output directory: {written:?}"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

fn crawl_args<'a>(url: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["-q", "crawl", url, "--report", "none", "--state", "st"];
    args.extend_from_slice(extra);
    args
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_never_repairs_or_continues_files_it_did_not_create() {
    let site = site(10);
    let url = site.url("/");
    let dir = tempfile::tempdir().unwrap();
    // Shares the first part of the WARC's name: once counted as one of its files,
    // repaired as a torn WARC and cut to nothing.
    std::fs::write(dir.path().join("out-notes"), "keep\n").unwrap();
    for _ in 0..2 {
        let out = skitter(dir.path(), &crawl_args(&url, &["--warc", "out"]));
        assert!(out.status.success(), "{}", show(&out));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("out-notes")).unwrap(),
            "keep\n"
        );
    }
    // A JSONL file that was there before the crawl is refused, not appended to
    // (nor cut back to its last newline).
    std::fs::write(dir.path().join("mine.jsonl"), "no newline at the end").unwrap();
    let out = skitter(dir.path(), &crawl_args(&url, &["--jsonl", "mine.jsonl"]));
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an output of the crawl"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("mine.jsonl")).unwrap(),
        "no newline at the end"
    );
    // Its own JSONL it continues (a new crawl: the one in `st` is complete).
    std::fs::remove_dir_all(dir.path().join("st")).unwrap();
    let run = || skitter(dir.path(), &crawl_args(&url, &["--jsonl", "own.jsonl"]));
    assert!(run().status.success());
    assert!(run().status.success());
    assert!(
        std::fs::read_to_string(dir.path().join("own.jsonl"))
            .unwrap()
            .ends_with('\n')
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_state_stops_the_run_before_it_touches_the_outputs() {
    let site = site(10);
    let url = site.url("/");
    let dir = tempfile::tempdir().unwrap();
    let args = crawl_args(&url, &["--warc", "c.warc", "--jsonl", "c.jsonl"]);
    let out = skitter(dir.path(), &args);
    assert!(out.status.success(), "{}", show(&out));
    // A crawl "still running" on the state: its outputs end in half-written
    // records, which only it may finish.
    let lock = std::fs::File::options()
        .write(true)
        .open(dir.path().join("st/lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let torn = |name: &str, tail: &str| {
        let path = dir.path().join(name);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(tail.as_bytes());
        std::fs::write(&path, &bytes).unwrap();
        bytes
    };
    let warc = torn("c.warc", "WARC/1.1\r\nContent-Le");
    let jsonl = torn("c.jsonl", "{\"type\":\"pa");
    let out = skitter(dir.path(), &args);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        show(&out).contains("in use by another crawl"),
        "{}",
        show(&out)
    );
    assert_eq!(std::fs::read(dir.path().join("c.warc")).unwrap(), warc);
    assert_eq!(std::fs::read(dir.path().join("c.jsonl")).unwrap(), jsonl);
}

/// `(filename, offset)` of every line of a CDXJ file, checking it is sorted.
fn cdx_entries(path: &Path) -> Vec<(String, u64, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut sorted = lines.clone();
    sorted.sort_unstable();
    assert_eq!(lines, sorted, "the index is sorted");
    lines
        .iter()
        .map(|l| {
            let json: serde_json::Value = serde_json::from_str(&l[l.find('{').unwrap()..]).unwrap();
            let field = |k: &str| json[k].as_str().unwrap().to_string();
            (
                field("filename"),
                field("offset").parse().unwrap(),
                field("url"),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_index_covers_every_run_of_a_resumed_crawl() {
    let site = site(40);
    let url = site.url("/");
    let dir = tempfile::tempdir().unwrap();
    let outputs = ["--warc", "c.warc", "--cdx", "c.cdxj"];
    let mut first = outputs.to_vec();
    first.extend(["--max-pages", "10"]);
    let out = skitter(dir.path(), &crawl_args(&url, &first));
    assert!(out.status.success(), "{}", show(&out));
    let out = skitter(dir.path(), &crawl_args(&url, &outputs));
    assert!(out.status.success(), "{}", show(&out));
    let entries = cdx_entries(&dir.path().join("c.cdxj"));
    let files: std::collections::BTreeSet<&str> = entries.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        files.into_iter().collect::<Vec<_>>(),
        ["c-r1.warc", "c.warc"]
    );
    // Every line points at the start of a response record of its file.
    for (file, offset, target) in &entries {
        let bytes = std::fs::read(dir.path().join(file)).unwrap();
        let record = String::from_utf8_lossy(&bytes[*offset as usize..]);
        let head = &record[..record.find("\r\n\r\n").unwrap()];
        assert!(head.starts_with("WARC/1.1\r\n"), "{file}@{offset}");
        assert!(head.contains("WARC-Type: response"), "{file}@{offset}");
        assert!(
            head.contains(&format!("WARC-Target-URI: {target}")),
            "{file}@{offset}"
        );
    }
    assert!(entries.len() >= 40, "{} lines", entries.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stderr_is_not_a_crash() {
    let site = site(10);
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_skitter"))
        .args(["-v", "fetch", "--retry-delay", "5ms", "-"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before anything is written (`skitter … 2>&1 | head -0`).
    drop(child.stderr.take());
    {
        use std::io::Write;
        let mut input = child.stdin.take().unwrap();
        writeln!(input, "{}", site.url("/p/1")).unwrap();
        writeln!(input, "{}", site.url("/missing/page")).unwrap();
    }
    let status = child.wait().unwrap();
    // 1: one URL failed (a 404); a panic would be 101.
    assert_eq!(status.code(), Some(1));
}

/// `(offset, target URI)` of every response record of a plain WARC file.
fn responses(path: &Path) -> Vec<(u64, String)> {
    let bytes = std::fs::read(path).unwrap();
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        let head_len = rest.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&rest[..head_len]);
        let field = |name: &str| {
            head.lines()
                .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
        };
        let length: usize = field("Content-Length:").unwrap().parse().unwrap();
        if field("WARC-Type:").as_deref() == Some("response") {
            found.push((at as u64, field("WARC-Target-URI:").unwrap()));
        }
        at += head_len + 4 + length + 4;
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_index_survives_kill_9_and_resume() {
    let site = TestSite::start(SiteConfig {
        pages: 400,
        fanout: 4,
        latency: std::time::Duration::from_millis(5),
        ..SiteConfig::default()
    })
    .unwrap();
    let url = site.url("/");
    let dir = tempfile::tempdir().unwrap();
    let args = crawl_args(
        &url,
        &["--warc", "c.warc", "--cdx", "c.cdxj", "--max-tasks", "4"],
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_skitter"))
        .args(&args)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let cdx = dir.path().join("c.cdxj");
    let indexed = || std::fs::metadata(&cdx).is_ok_and(|m| m.len() > 0);
    while !indexed() && child.try_wait().unwrap().is_none() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let running = child.try_wait().unwrap().is_none();
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(running, "the crawl ended before its index had a line");
    // What the killed run indexed points at response records it archived.
    let archived: Vec<(u64, String)> = responses(&dir.path().join("c.warc"));
    let text = std::fs::read_to_string(&cdx).unwrap();
    // A kill inside the append can leave the last line torn; the resume drops it.
    for line in text.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
        let json: serde_json::Value =
            serde_json::from_str(&line[line.find('{').unwrap()..]).unwrap();
        let offset: u64 = json["offset"].as_str().unwrap().parse().unwrap();
        let target = json["url"].as_str().unwrap().to_string();
        assert!(archived.contains(&(offset, target)), "{line}");
    }
    // Resumed to the end: every archived response is indexed, every line is right.
    let out = skitter(dir.path(), &args);
    assert!(out.status.success(), "{}", show(&out));
    let entries = cdx_entries(&cdx);
    let mut urls = std::collections::BTreeSet::new();
    for file in ["c.warc", "c-r1.warc"] {
        urls.extend(responses(&dir.path().join(file)).into_iter().map(|r| r.1));
    }
    for (file, offset, target) in &entries {
        let records = responses(&dir.path().join(file));
        assert!(
            records.contains(&(*offset, target.clone())),
            "{file}@{offset} {target}"
        );
    }
    let indexed_urls: std::collections::BTreeSet<String> =
        entries.iter().map(|e| e.2.clone()).collect();
    assert_eq!(indexed_urls, urls, "every archived response is indexed");
    assert!(urls.len() >= 400, "{} pages", urls.len());
}
