//! Crash-safe resume, proved the hard way: crawl the test site with `--state`,
//! SIGKILL the process at several moments (also while it writes its outputs),
//! resume each time until the crawl completes, then check that every page was
//! fetched, that few were fetched twice, that the report accounts for every URL
//! exactly once, that every WARC file passes `warcio check` and `fastwarc check`
//! and together they archive every page, and that the JSONL is valid line by line
//! and has every URL exactly once, and each HTML page's extracted item exactly
//! once, right after its page line — and once in the --items database.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::cli::{absolute_links, markdown_files};
use skitter_testsite::validators::{check_warc, run_validator, warc_validators};
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
        .arg("--markdown")
        .arg(dir.join("md"))
        .arg("--items")
        .arg(dir.join("items.db"))
        .args([
            "--field",
            "title=css:title",
            "--field",
            "links={ css = \"a@href\", all = true }",
        ])
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
    for delay_ms in [150u64, 420, 90, 610, 300, 230, 360] {
        if kills == 5 {
            break;
        }
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
    // Each kill may lose the pages in flight then: at most --max-tasks. (Each run
    // also asks for /robots.txt once; that is not a page fetched twice.)
    let pages = || stats.paths().iter().filter(|(p, _)| *p != "/robots.txt");
    let duplicates: u64 = pages().map(|(_, n)| n.saturating_sub(1)).sum();
    let twice: Vec<_> = pages().filter(|(_, n)| **n > 1).collect();
    assert!(
        duplicates <= 5 * MAX_TASKS,
        "{duplicates} duplicate fetches: {twice:?}"
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
    let mut lines = Vec::new();
    let mut items = Vec::new();
    let mut announced = 0;
    for (i, line) in jsonl.lines().enumerate() {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        let url = value["url"].as_str().unwrap_or_default().to_string();
        if value["type"] == "item" {
            // Each item right after its page, as many as the page line said.
            assert_eq!(
                lines.last(),
                Some(&url),
                "line {}: item away from its page",
                i + 1
            );
            assert!(announced > 0, "line {}: more items than announced", i + 1);
            announced -= 1;
            items.push(url);
            continue;
        }
        assert_eq!(announced, 0, "line {}: a page's items are missing", i + 1);
        announced = value["items"].as_u64().unwrap_or(0);
        if value["kind"] == "html" {
            assert_eq!(announced, 1, "line {}: an HTML page has one item", i + 1);
        }
        lines.push(url);
    }
    assert_eq!(announced, 0);
    let html = report["counters"]["html"].as_u64().unwrap();
    // The report's item count covers every run, not only the last.
    assert_eq!(report["counters"]["items"].as_u64(), Some(html));
    assert_eq!(
        items.len() as u64,
        html,
        "one item per HTML page, none twice"
    );
    assert!(jsonl.is_empty() || jsonl.ends_with('\n'));
    let jsonl_urls: BTreeSet<&str> = lines.iter().map(String::as_str).collect();
    assert_eq!(lines.len(), jsonl_urls.len(), "a URL has two JSONL lines");
    assert_eq!(
        jsonl_urls, distinct,
        "the JSONL has every URL of the report"
    );

    check_warcs(dir.path(), &distinct);
    check_markdown(&dir.path().join("md"), &report);

    // The database has each HTML page's item once, whatever the kills: a page
    // fetched again replaced its rows.
    let db = rusqlite::Connection::open(dir.path().join("items.db")).unwrap();
    let (rows, pages): (u64, u64) = db
        .query_row(
            "SELECT COUNT(*), COUNT(DISTINCT page_url) FROM items",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((rows, pages), (html, html), "one row per HTML page");
    let mut titles = db.prepare("SELECT page_url, title FROM items").unwrap();
    let mut rows = titles.query([]).unwrap();
    while let Some(row) = rows.next().unwrap() {
        let (url, title): (String, Option<String>) = (row.get(0).unwrap(), row.get(1).unwrap());
        assert!(
            distinct.contains(url.as_str()),
            "{url} is not a crawled URL"
        );
        assert!(
            title.is_some_and(|t| t.starts_with("Page") || !t.is_empty()),
            "{url}"
        );
    }
}

/// The Markdown tree holds one file per HTML page of the report (those of
/// every run: files from before a kill are kept), and once the last run
/// ended every link to a page of the tree points at its file.
fn check_markdown(md: &std::path::Path, report: &serde_json::Value) {
    let html: BTreeSet<String> = report["pages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "html")
        .map(|p| {
            let url = url::Url::parse(p["url"].as_str().unwrap()).unwrap();
            skitter::output::markdown_path(md, &url)
                .display()
                .to_string()
        })
        .collect();
    let files: BTreeSet<String> = markdown_files(md)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(files, html, "one Markdown file per HTML page");
    assert!(!md.join(skitter::output::MARKDOWN_LINK_LOG).exists());
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for link in absolute_links(&text) {
            let url = url::Url::parse(&link).unwrap();
            let target = skitter::output::markdown_path(md, &url);
            assert!(!target.exists(), "{file}: {link} is in the tree");
        }
    }
}

/// Every WARC file the runs wrote passes both validators, and together they
/// archive a response for every URL of the report.
fn check_warcs(dir: &std::path::Path, urls: &BTreeSet<&str>) {
    let Some(bin) = warc_validators("survives_sigkill_at_random_moments") else {
        return;
    };
    let mut archived = BTreeSet::new();
    let mut files = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.to_string_lossy().ends_with(".warc.gz") {
            continue;
        }
        files += 1;
        let (warcio, fastwarc) = check_warc(&bin, &path);
        assert!(
            warcio.ok,
            "warcio check {}: {}",
            path.display(),
            warcio.output
        );
        assert!(
            fastwarc.ok,
            "fastwarc check {}: {}",
            path.display(),
            fastwarc.output
        );
        let index = run_validator(
            &bin,
            "warcio",
            &["index", "-f", "warc-type,warc-target-uri"],
            &path,
        );
        assert!(
            index.ok,
            "warcio index {}: {}",
            path.display(),
            index.output
        );
        for line in index.output.lines() {
            let entry: serde_json::Value = serde_json::from_str(line).unwrap();
            if entry["warc-type"] == "response" {
                archived.insert(entry["warc-target-uri"].as_str().unwrap().to_string());
            }
        }
    }
    assert!(
        files >= 2,
        "each resumed run writes its own WARC file ({files})"
    );
    let missing: Vec<&&str> = urls.iter().filter(|u| !archived.contains(**u)).collect();
    assert!(missing.is_empty(), "not archived: {missing:?}");
}

/// A recrawl pass killed at several moments is resumed by the next
/// `--recrawl` (never restarted, never skipped to a third pass): the final
/// report accounts for every known URL of the first pass exactly once, with
/// what changed, and `status` lists two passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recrawl_pass_survives_sigkill() {
    use skitter_testsite::Versions;
    let site = TestSite::start(SiteConfig {
        pages: 600,
        fanout: 6,
        latency: Duration::from_millis(5),
        versions: Some(Versions {
            change: 0.1,
            gone: 0.05,
            ..Versions::default()
        }),
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let jsonl = dir.path().join("pages.jsonl");
    let warc = dir.path().join("crawl.warc");
    let url = site.url("/");
    let run = |recrawl: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_skitter"));
        cmd.args(["-q", "crawl", &url, "--report", "json", "--no-trap-rules"])
            .arg(format!("--max-tasks={MAX_TASKS}"))
            .arg(format!("--per-host={MAX_TASKS}"))
            .arg("--state")
            .arg(&state)
            .arg("--jsonl")
            .arg(&jsonl)
            .arg("--warc")
            .arg(&warc)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if recrawl {
            cmd.arg("--recrawl");
        }
        cmd
    };
    let out = run(false).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let known: BTreeSet<String> = first["pages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !matches!(p["kind"].as_str(), Some("skipped" | "failed")))
        .map(|p| p["url"].as_str().unwrap().to_string())
        .collect();

    site.next_pass();
    let mut kills = 0;
    for delay_ms in [120u64, 60, 250, 180, 90] {
        let mut child = run(true).spawn().unwrap();
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
        }
        child.wait().unwrap();
    }
    assert!(
        kills >= 3,
        "only {kills} recrawl runs were still going when killed"
    );
    let out = run(true).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let counter = |k: &str| report["counters"][k].as_u64().unwrap_or(0);
    assert_eq!(counter("recrawl_pass"), 2, "the killed pass was resumed");
    assert_eq!(report["todo"], 0);
    let mut revisited = BTreeSet::new();
    for page in report["pages"].as_array().unwrap() {
        let url = page["url"].as_str().unwrap().to_string();
        assert!(revisited.insert(url.clone()), "{url} reported twice");
    }
    let missing: Vec<_> = known.difference(&revisited).collect();
    assert!(missing.is_empty(), "known URLs not revisited: {missing:?}");
    let sum: u64 = ["changed", "unchanged", "gone", "failed"]
        .iter()
        .map(|c| counter(&format!("change_{c}")))
        .sum();
    assert_eq!(sum, known.len() as u64, "{}", report["counters"]);
    assert!(counter("change_gone") > 0 && counter("change_changed") > 0);
    assert!(site.stats().not_modified > 0);

    let status = Command::new(env!("CARGO_BIN_EXE_skitter"))
        .args(["status", "--json"])
        .arg(&state)
        .output()
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let passes = status["passes"].as_array().unwrap();
    assert_eq!(passes.len(), 2, "{status}");
    assert_eq!(passes[1]["gone"].as_u64(), Some(counter("change_gone")));

    // The outputs continued across the passes and the kills: the second
    // pass's lines (those with a `change`) name each revisited URL once,
    // though the first pass's lines name them too.
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let mut second = BTreeSet::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["type"] == "page" && v.get("change").is_some() {
            let url = v["url"].as_str().unwrap().to_string();
            assert!(
                second.insert(url.clone()),
                "{url} twice in the JSONL's second pass"
            );
        }
    }
    let missing: Vec<_> = revisited.difference(&second).collect();
    assert!(
        missing.is_empty(),
        "{} not in the JSONL's second pass, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    // Every WARC file after the first run's is the second pass's; each URL
    // revisited with an answer has a response or revisit record in them.
    let mut files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("crawl")
        })
        .collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    let mut archived = BTreeSet::new();
    for file in &files[1..] {
        let bytes = std::fs::read(file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for record in text.split("WARC/1.1\r\n").skip(1) {
            let head = record.split("\r\n\r\n").next().unwrap_or("");
            let field = |name: &str| {
                head.lines()
                    .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
            };
            if matches!(field("WARC-Type:").as_deref(), Some("response" | "revisit"))
                && let Some(uri) = field("WARC-Target-URI:")
            {
                archived.insert(uri);
            }
        }
    }
    let answered: BTreeSet<String> = report["pages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"].is_u64())
        .map(|p| p["url"].as_str().unwrap().to_string())
        .collect();
    let unarchived: Vec<_> = answered.difference(&archived).collect();
    assert!(
        unarchived.is_empty(),
        "{} answered in the second pass but not archived in it, e.g. {:?}",
        unarchived.len(),
        &unarchived[..unarchived.len().min(5)]
    );
}
