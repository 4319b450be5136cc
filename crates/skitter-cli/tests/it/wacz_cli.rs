//! `skitter crawl --wacz`, `skitter wacz create` and `skitter wacz validate`, run
//! as a user would: the WACZ of a crawl passes the Webrecorder validator (`wacz
//! validate`, from `scripts/validators.sh`; SKIPPED loudly without it, a failure
//! under `$CI`) and skitter's own check; a killed crawl leaves no WACZ file; a
//! damaged file is reported invalid with exit status 1.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use skitter_testsite::validators::{check_wacz, python_tools};
use skitter_testsite::{Faults, SiteConfig, TestSite};

fn skitter() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skitter"));
    cmd.stdin(Stdio::null());
    cmd
}

/// Runs skitter with `args`; its exit status and stdout.
fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = skitter().args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    (out.status.code(), format!("{stdout}{stderr}"))
}

fn webrecorder_check(test: &str, file: &Path) {
    if let Some(bin) = python_tools(test, &["wacz"]) {
        let verdict = check_wacz(&bin, file);
        assert!(
            verdict.ok,
            "wacz validate {}: {}",
            file.display(),
            verdict.output
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_wacz_writes_a_valid_archive_and_wacz_create_repacks_it() {
    let site = TestSite::start(SiteConfig {
        pages: 20,
        gzip: true,
        faults: Faults {
            fail_rate: 0.15,
            fail_times: 1,
            seed: 3,
            ..Faults::default()
        },
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let wacz = dir.path().join("site.wacz");
    let (code, out) = run(&[
        "-q",
        "crawl",
        &site.url("/"),
        "--wacz",
        wacz.to_str().unwrap(),
        "--max-tries",
        "3",
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("wacz"), "the report names the output: {out}");
    // The WARCs were packed and their folder removed.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("site.wacz")]);
    let (code, out) = run(&["wacz", "validate", wacz.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains(": valid: 4 files"), "{out}");
    assert!(out.contains(" 21 pages checked"), "{out}");
    webrecorder_check("wacz_cli::crawl_wacz", &wacz);
    assert_same_as_repacked(&wacz, dir.path());

    // `wacz create` packs WARCs it did not write: those of the archive.
    let warc_dir = dir.path().join("warcs");
    std::fs::create_dir(&warc_dir).unwrap();
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&wacz).unwrap()).unwrap();
    let mut warcs = Vec::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).unwrap();
        let name = entry.name().unwrap().to_string();
        if let Some(file) = name.strip_prefix("archive/") {
            let path = warc_dir.join(file);
            std::io::copy(&mut entry, &mut std::fs::File::create(&path).unwrap()).unwrap();
            warcs.push(path.to_str().unwrap().to_string());
        }
    }
    let again = dir.path().join("again.wacz");
    let mut args = vec!["wacz", "create", "-o", again.to_str().unwrap()];
    args.extend(warcs.iter().map(String::as_str));
    let (code, out) = run(&args);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains(", 21 pages,"), "{out}");
    webrecorder_check("wacz_cli::wacz_create", &again);

    // A flipped byte in a WARC: our check says so, with exit status 1.
    let mut bytes = std::fs::read(&again).unwrap();
    let at = bytes
        .windows(4)
        .position(|w| w == [0x1f, 0x8b, 8, 0])
        .unwrap()
        + 40;
    bytes[at] ^= 0x55;
    let bad = dir.path().join("bad.wacz");
    std::fs::write(&bad, bytes).unwrap();
    let (code, out) = run(&["wacz", "validate", bad.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("INVALID"), "{out}");
    assert!(out.contains("is damaged in the zip"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_crawl_leaves_no_wacz_file() {
    let site = TestSite::start(SiteConfig {
        pages: 400,
        latency: Duration::from_millis(20),
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let wacz = dir.path().join("site.wacz");
    let mut child = skitter()
        .args(["-q", "crawl", &site.url("/"), "--max-tasks", "2"])
        .args(["--wacz", wacz.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Until the crawl has archived something.
    let warcs = dir.path().join("site.wacz.warcs");
    for _ in 0..200 {
        if site.stats().total_requests > 10 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the crawl ended before the kill"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        warcs.is_dir(),
        "the WARCs were being written beside the WACZ"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        vec![std::ffi::OsString::from("site.wacz.warcs")],
        "no WACZ, no temporary file"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_crawl_packs_the_whole_crawl() {
    let site = TestSite::start(SiteConfig {
        pages: 60,
        latency: Duration::from_millis(20),
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let wacz = dir.path().join("site.wacz");
    let crawl = || {
        let mut cmd = skitter();
        cmd.args(["-q", "crawl", &site.url("/"), "--max-tasks", "2"])
            .arg("--state")
            .arg(dir.path().join("state"))
            .arg("--wacz")
            .arg(&wacz)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        cmd
    };
    let mut first = crawl().spawn().unwrap();
    for _ in 0..200 {
        if site.stats().total_requests > 15 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        first.try_wait().unwrap().is_none(),
        "the first run ended before the kill"
    );
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    assert!(!wacz.exists());

    let out = crawl().output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The pages of both runs: every page of the site once, and the WARC files
    // of both runs in the archive.
    let (code, text) = run(&["wacz", "validate", wacz.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains(" 61 pages checked"), "{text}");
    let zip = zip::ZipArchive::new(std::fs::File::open(&wacz).unwrap()).unwrap();
    let warcs = zip
        .file_names_raw()
        .filter(|n| n.starts_with(b"archive/"))
        .count();
    assert!(warcs >= 2, "{warcs} WARC files");
    // The folder is kept for the next run.
    assert!(dir.path().join("site.wacz.warcs").is_dir());
    webrecorder_check("wacz_cli::resumed", &wacz);
    // The second run indexed its own files as it wrote them and read the
    // first run's: the same archive as `wacz create` makes of them all.
    assert_same_as_repacked(&wacz, dir.path());
}

/// Runs `wacz create` on the WARC files of `wacz` and asserts it makes the
/// same archive: the same index, byte for byte, and the same page entries
/// (but for their random ids).
fn assert_same_as_repacked(wacz: &Path, scratch: &Path) {
    let read = |path: &Path, name: &str| {
        let mut zip = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut zip.by_name(name).unwrap(), &mut bytes).unwrap();
        bytes
    };
    let warc_dir = scratch.join("repacked");
    std::fs::create_dir(&warc_dir).unwrap();
    let mut zip = zip::ZipArchive::new(std::fs::File::open(wacz).unwrap()).unwrap();
    let mut args = vec!["wacz".to_string(), "create".into(), "-o".into()];
    let again = scratch.join("repacked.wacz");
    args.push(again.to_str().unwrap().into());
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).unwrap();
        if let Some(file) = entry.name().unwrap().strip_prefix("archive/") {
            let path = warc_dir.join(file);
            std::io::copy(&mut entry, &mut std::fs::File::create(&path).unwrap()).unwrap();
            args.push(path.to_str().unwrap().into());
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out) = run(&args);
    assert_eq!(code, Some(0), "{out}");
    for name in ["indexes/index.cdx.gz", "indexes/index.idx"] {
        assert!(read(wacz, name) == read(&again, name), "{name} differs");
    }
    let pages = |path: &Path| -> Vec<serde_json::Value> {
        String::from_utf8(read(path, "pages/pages.jsonl"))
            .unwrap()
            .lines()
            .map(|l| {
                let mut page: serde_json::Value = serde_json::from_str(l).unwrap();
                page.as_object_mut().unwrap().remove("id");
                page
            })
            .collect()
    };
    assert_eq!(pages(wacz), pages(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_wacz_packs_the_fetched_pages() {
    let site = TestSite::start(SiteConfig {
        pages: 10,
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let wacz = dir.path().join("pages.wacz");
    let pages = site.url("/p/[0-4]");
    let (code, out) = run(&["-q", "fetch", &pages, "--wacz", wacz.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = run(&["wacz", "validate", wacz.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains(" 5 captures, 5 pages checked"), "{out}");
    assert!(!dir.path().join("pages.wacz.warcs").exists());
    webrecorder_check("wacz_cli::fetch_wacz", &wacz);
}

/// With `--render`, a page's entry in the page list carries the text of the
/// rendered DOM, what a reader of the replay sees: `/js/inline` builds its
/// only link (whose text is its URL) in script, so its body has none of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rendered_page_is_listed_with_the_text_of_its_dom() {
    if skitter_testsite::skip::chromium("wacz_cli", "the rendered page's text").is_none() {
        return;
    }
    let site = TestSite::start(SiteConfig {
        pages: 0,
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let wacz = dir.path().join("js.wacz");
    let page = site.url("/js/inline");
    let (code, out) = run(&[
        "-q",
        "crawl",
        &page,
        "--max-depth",
        "0",
        "--render",
        "always",
        // Generous: with the suite beside it on two cores, a render can take
        // many seconds.
        "--render-timeout",
        "90s",
        "--wacz",
        wacz.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{out}");
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&wacz).unwrap()).unwrap();
    let mut list = String::new();
    std::io::Read::read_to_string(&mut zip.by_name("pages/pages.jsonl").unwrap(), &mut list)
        .unwrap();
    let entry: serde_json::Value = list
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|p| p["url"] == page.as_str())
        .unwrap_or_else(|| panic!("no entry for {page}: {list}"));
    let text = entry["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("/js/t/inline"),
        "the entry has the script-built link's text: {entry}"
    );
    webrecorder_check("wacz_cli::rendered", &wacz);
}
