//! Conditional re-downloads (`BulkFetcherBuilder::if_modified`) against the
//! test site's versioned pages: a second run over 200 URLs, 5% of them
//! changed, moves only the changed bodies, leaves unchanged files untouched
//! (same mtime), archives unchanged pages as WARC revisits, reports gone pages,
//! and a run stopped dead leaves an index the next run can use.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use skitter::base::outcome::Change;
use skitter::bulk::{self, BulkFetcher, BulkFetcherBuilder, Summary};
use skitter::output::{WarcOptions, WarcSink};
use skitter_testsite::{RunningSite, SiteConfig, TestSite, ValidatorMode, Versions};
use tokio_util::sync::CancellationToken;

const PAGES: usize = 200;

fn site(validators: ValidatorMode, gone: f64) -> RunningSite {
    TestSite::start(SiteConfig {
        pages: PAGES,
        versions: Some(Versions {
            change: 0.05,
            gone,
            seed: 7,
            validators,
        }),
        ..SiteConfig::default()
    })
    .expect("test site starts")
}

fn urls(site: &RunningSite) -> Vec<String> {
    vec![site.url(&format!("/p/[0-{}]", PAGES - 1))]
}

fn builder(dir: &Path, warc: Option<&Path>) -> BulkFetcherBuilder {
    let mut b = BulkFetcher::builder()
        .concurrency(16)
        .output_dir(dir)
        .if_modified(true);
    if let Some(path) = warc {
        let sink = WarcSink::create(path, WarcOptions::default()).unwrap();
        b = b.sink(Box::new(sink));
    }
    b
}

async fn run(b: BulkFetcherBuilder, site: &RunningSite) -> Summary {
    let urls = bulk::from_args(urls(site), true);
    b.build().unwrap().run(urls, CancellationToken::new()).await
}

/// Every saved file (the index excluded): path → (bytes, mtime).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::metadata(&path).unwrap();
            if meta.is_dir() {
                todo.push(path);
            } else if !path.ends_with(bulk::INDEX_FILE) {
                out.insert(
                    path.clone(),
                    (std::fs::read(&path).unwrap(), meta.modified().unwrap()),
                );
            }
        }
    }
    out
}

fn count(s: &Summary, change: Change) -> u64 {
    s.changes.get(&change).copied().unwrap_or(0)
}

/// The WARC record types and profiles of an uncompressed file, in order.
fn warc_types(path: &Path) -> Vec<String> {
    let text = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    let mut out = Vec::new();
    for line in text.split("\r\n") {
        if let Some(t) = line.strip_prefix("WARC-Type: ") {
            out.push(t.to_string());
        } else if let Some(p) = line.strip_prefix("WARC-Profile: ") {
            let last = out.last_mut().unwrap();
            last.push(' ');
            last.push_str(p.rsplit('/').next().unwrap());
        }
    }
    out
}

/// Runs pass 0 then pass 1; checks what the second run moved and wrote.
async fn second_run_moves_only_changes(mode: ValidatorMode) {
    let site = site(mode, 0.0);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let first = run(builder(&out, None), &site).await;
    assert_eq!(
        (first.ok, count(&first, Change::New)),
        (PAGES as u64, PAGES as u64)
    );
    let before = snapshot(&out);
    assert_eq!(before.len(), PAGES);

    site.next_pass();
    let not_modified_before = site.stats().not_modified;
    let warc = dir.path().join("second.warc");
    let second = run(builder(&out, Some(&warc)), &site).await;
    let after = snapshot(&out);
    let not_modified = site.stats().not_modified - not_modified_before;

    let changed: Vec<&PathBuf> = after
        .iter()
        .filter(|(p, (body, _))| &before[*p].0 != body)
        .map(|(p, _)| p)
        .collect();
    let changed_bytes: u64 = changed.iter().map(|p| after[*p].0.len() as u64).sum();
    let (n_changed, n_unchanged) = (
        count(&second, Change::Changed),
        count(&second, Change::Unchanged),
    );
    eprintln!(
        "{mode:?}: first run {} body bytes, second {} ({n_changed} changed, {n_unchanged} unchanged, {not_modified} 304s)",
        first.bytes, second.bytes
    );
    assert!(
        n_changed > 0 && n_changed < 30,
        "about 5% change: {n_changed}"
    );
    assert_eq!(n_changed, changed.len() as u64);
    assert_eq!(n_changed + n_unchanged, PAGES as u64, "{second}");
    assert_eq!(second.failed(), 0, "{second}");
    assert_eq!(second.files, n_changed, "only changed files are written");
    // Unchanged files were not rewritten: same bytes, same mtime.
    for (path, (body, mtime)) in &after {
        if !changed.contains(&path) {
            assert_eq!(
                (body, mtime),
                (&before[path].0, &before[path].1),
                "{}",
                path.display()
            );
        }
    }
    match mode {
        ValidatorMode::Honour => {
            assert_eq!(not_modified, n_unchanged, "every unchanged page was a 304");
            assert_eq!(second.bytes, changed_bytes, "only changed bodies moved");
        }
        _ => {
            assert_eq!(not_modified, 0);
            assert_eq!(second.bytes, total_bytes(&after), "every body moved again");
        }
    }
    let types = warc_types(&warc);
    let profile = match mode {
        ValidatorMode::Honour => "revisit server-not-modified",
        _ => "revisit identical-payload-digest",
    };
    let tally = |t: &str| types.iter().filter(|x| *x == t).count() as u64;
    assert_eq!(tally(profile), n_unchanged, "{types:?}");
    assert_eq!(tally("response"), n_changed);
    assert_eq!(tally("request"), PAGES as u64);
    if mode == ValidatorMode::Honour {
        let text = String::from_utf8_lossy(&std::fs::read(&warc).unwrap()).into_owned();
        let conditional = text.matches("\r\nif-none-match: \"").count() as u64;
        assert_eq!(conditional, PAGES as u64, "every request was conditional");
    }
}

fn total_bytes(files: &BTreeMap<PathBuf, (Vec<u8>, SystemTime)>) -> u64 {
    files.values().map(|(b, _)| b.len() as u64).sum()
}

#[tokio::test]
async fn honouring_server_answers_304_and_only_changes_move() {
    second_run_moves_only_changes(ValidatorMode::Honour).await;
}

#[tokio::test]
async fn ignoring_server_is_judged_by_digest() {
    second_run_moves_only_changes(ValidatorMode::Ignore).await;
}

/// Each URL's change class in one run.
async fn changes(b: BulkFetcherBuilder, site: &RunningSite) -> (Summary, BTreeMap<String, Change>) {
    let seen = Arc::new(std::sync::Mutex::new(BTreeMap::new()));
    let log = seen.clone();
    let b = b.on_item(move |item| {
        if let (Some(url), Some(change)) = (&item.url, item.change) {
            log.lock().unwrap().insert(url.to_string(), change);
        }
    });
    let summary = run(b, site).await;
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    (summary, seen)
}

#[tokio::test]
async fn gone_pages_are_reported_and_their_files_kept() {
    let site = site(ValidatorMode::Honour, 0.1);
    let dir = tempfile::tempdir().unwrap();
    run(builder(dir.path(), None), &site).await;
    let before = snapshot(dir.path());
    site.next_pass();
    let (second, classes) = changes(builder(dir.path(), None), &site).await;
    let gone = count(&second, Change::Gone);
    assert!(gone > 5 && gone < 40, "about 10% gone: {gone}");
    assert_eq!(second.not_found, gone);
    assert_eq!(
        snapshot(dir.path()).len(),
        before.len(),
        "gone files are kept"
    );
    // The index forgot them: the next pass reports them failed (410 for a URL
    // it does not know), and only newly gone pages as gone.
    site.next_pass();
    let (_, next) = changes(builder(dir.path(), None), &site).await;
    for (url, change) in &classes {
        if *change == Change::Gone {
            assert_eq!(next[url], Change::Failed, "{url}");
        }
    }
}

/// A run stopped dead (its runtime dropped mid-batch, so index rows not yet
/// committed are lost) leaves an index the next run trusts safely: every file
/// ends up as the site serves it, and nothing changed is taken as unchanged.
#[test]
fn a_run_stopped_dead_leaves_a_usable_index() {
    // The site lives on its own runtime; the run that dies has another.
    let main = tokio::runtime::Runtime::new().unwrap();
    let site = {
        let _in = main.enter();
        site(ValidatorMode::Honour, 0.0)
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    main.block_on(run(builder(&out, None), &site));
    site.next_pass();

    // The second run dies after half its items.
    let done = Arc::new(AtomicU64::new(0));
    let seen = done.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let doomed = tokio::runtime::Runtime::new().unwrap();
    let fetcher = {
        let _in = doomed.enter();
        builder(&out, None)
            .concurrency(4)
            .on_item(move |_| {
                if seen.fetch_add(1, Ordering::SeqCst) + 1 == PAGES as u64 / 2 {
                    let _ = tx.send(());
                }
            })
            .build()
            .unwrap()
    };
    let urls = bulk::from_args(urls(&site), true);
    doomed.spawn(fetcher.run(urls, CancellationToken::new()));
    rx.recv().unwrap();
    doomed.shutdown_background();
    assert!(
        done.load(Ordering::SeqCst) < PAGES as u64,
        "stopped mid-run"
    );

    let third = main.block_on(run(builder(&out, None), &site));
    assert_eq!(third.failed(), 0, "{third}");
    assert_eq!(third.total(), PAGES as u64);
    // Every file is now what the site serves at this pass.
    let plain = dir.path().join("plain");
    main.block_on(run(BulkFetcher::builder().output_dir(&plain), &site));
    let (ours, theirs) = (snapshot(&out), snapshot(&plain));
    assert_eq!(ours.len(), theirs.len());
    for ((a, (x, _)), (b, (y, _))) in ours.iter().zip(&theirs) {
        assert_eq!(
            a.strip_prefix(&out).unwrap(),
            b.strip_prefix(&plain).unwrap()
        );
        assert!(x == y, "{} differs from the site", a.display());
    }
}
