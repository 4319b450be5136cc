//! Checking a folder of HTML and Markdown files (a built docs tree before it
//! is deployed) as the site it will be at `base`: the files are read from
//! disk, no server is started and the site is never asked. A link under
//! `base` works when its file exists (`x/` as `x/index.html`, `x` also as
//! `x.html`), and its fragment when that file has the anchor; links
//! elsewhere are checked over the network as in a crawl's check (or
//! skipped with `offline`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::StreamExt as _;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::base::outcome::{OutcomeKind, PageRecord};
use crate::base::scope::{Scope, ScopeMode};
use crate::base::urlnorm;
use crate::crawl::body::CpuPool;
use crate::fetch::Fetcher;
use crate::host::slots::HostLimits;
use crate::parse::links::{DEFAULT_MAX_ANCHORS, extract_anchored, extract_markdown};
use crate::settings::CheckSettings;

use super::collect::{Collected, NewTarget, file_page};
use super::remote::Remote;
use super::route::Router;
use super::{CheckError, CheckReport, assemble, check_all};
use crate::BuildError;
use crate::crawl::assemble::compile;

/// Files read and parsed ahead of the one being filed.
const READ_AHEAD: usize = 16;

/// The most files a folder check reads: a bound on the memory its file list
/// and records take.
pub const MAX_FILES: usize = 1_000_000;

/// Checks the files under `dir` as the site at `base`.
pub async fn check_folder(
    dir: &Path,
    base: &Url,
    settings: CheckSettings,
    cancel: CancellationToken,
) -> Result<CheckReport, CheckError> {
    let started = std::time::Instant::now();
    settings.check().map_err(BuildError::Value)?;
    let files = walk(dir).map_err(|e| BuildError::Value(format!("{}: {e}", dir.display())))?;
    let mut base = base.clone();
    if !base.path().ends_with('/') {
        base.set_path(&format!("{}/", base.path()));
    }
    let cpu = Arc::new(CpuPool::new());
    let mut collected = Collected::default();
    let max_body = settings.crawl.request.fetch.max_body_size;
    let mut pages = Vec::new();
    for rel in &files {
        let Some(url) = file_url(&base, rel) else {
            continue;
        };
        let record = record_of(&url, rel);
        let index = rel
            .file_name()
            .is_some_and(|n| n == "index.html" || n == "index.htm");
        let dir_url = url.join("./").ok().filter(|_| index);
        if let Some(dir_url) = &dir_url {
            collected
                .crawled
                .insert(dir_url.clone(), record_of(&url, rel));
        }
        collected.crawled.insert(url.clone(), record);
        let markdown = matches!(extension(rel), "md" | "markdown");
        if !(markdown || matches!(extension(rel), "html" | "htm")) {
            continue;
        }
        let path = dir.join(rel);
        if std::fs::metadata(&path).map_or(0, |m| m.len()) <= max_body {
            pages.push((path, url, dir_url, markdown));
        }
    }
    // Read and parsed on the CPU pool, a few at once (the pool lets one per
    // core run), filed in the files' order.
    let max_links = settings.crawl.max_links_per_page;
    let mut read = futures_util::stream::iter(pages)
        .map(|(path, url, dir_url, markdown)| {
            let (cpu, page) = (cpu.clone(), url.clone());
            async move {
                let doc = cpu
                    .run(move || {
                        let bytes = std::fs::read(&path).unwrap_or_default();
                        if markdown {
                            let text = String::from_utf8_lossy(&bytes);
                            extract_markdown(&text, &page, max_links, DEFAULT_MAX_ANCHORS)
                        } else {
                            extract_anchored(&bytes, None, &page, max_links, DEFAULT_MAX_ANCHORS)
                        }
                    })
                    .await;
                (url, dir_url, doc)
            }
        })
        .buffered(READ_AHEAD);
    while let Some((url, dir_url, doc)) = read.next().await {
        if let Some(dir_url) = dir_url {
            collected
                .anchors
                .insert(dir_url, doc.anchors.iter().cloned().collect());
        }
        file_page(&mut collected, &url, &doc.into());
    }
    drop(read);
    let scope = Scope::new(std::slice::from_ref(&base), ScopeMode::Strict);
    let patterns = (
        compile(&settings.crawl.include)?,
        compile(&settings.crawl.exclude)?,
    );
    let router = Arc::new(Router::with_scope(&settings, scope, patterns)?);
    missing_files(&mut collected, &router, &base);
    let fetch = settings.crawl.request.fetch.clone();
    let remote = Arc::new(Remote {
        fetcher: Fetcher::new(fetch).map_err(BuildError::from)?,
        hosts: HostLimits::new(settings.crawl.request.politeness),
        global: Arc::new(Semaphore::new(settings.external_concurrency)),
        retry: settings.crawl.request.retry,
        max_redirect: settings.crawl.request.max_redirect,
        cpu,
    });
    let targets: Vec<NewTarget> = collected
        .targets
        .iter()
        .map(|(url, t)| NewTarget {
            url: url.clone(),
            anchors: t.fragments,
        })
        .collect();
    let sides = Arc::new(super::Checking {
        router: router.clone(),
        remote,
        journal: None,
        emit: None,
    });
    let answers = check_all(
        futures_util::stream::iter(targets),
        sides,
        settings.external_concurrency,
        false,
        cancel,
    )
    .await;
    let mut out = assemble::report(&collected, &answers, &router, &settings);
    out.summary.elapsed_secs = started.elapsed().as_secs_f64();
    router.save_cache()?;
    Ok(out)
}

/// Every target under `base` without a file: a 404, unless `x` has an
/// `x.html` (the pretty URLs of most static hosts).
fn missing_files(c: &mut Collected, router: &Router, base: &Url) {
    let missing: Vec<(Url, PageRecord)> = c
        .targets
        .keys()
        .filter(|url| url.as_str().starts_with(base.as_str()))
        .map(|url| router.remapped(url))
        .filter(|url| !c.crawled.contains_key(url))
        .map(|url| {
            let html = Url::parse(&format!("{}.html", url.as_str().trim_end_matches('/'))).ok();
            let found = html.and_then(|h| c.crawled.get(&h).cloned());
            let record = found.unwrap_or_else(|| {
                let mut r = PageRecord::new(url.clone(), 0, None);
                r.kind = OutcomeKind::HttpError;
                r.status = Some(404);
                r.attempts = 1;
                r
            });
            (url, record)
        })
        .collect();
    for (url, record) in missing {
        if let Some(anchors) = c.anchors.get(&record.url).cloned() {
            c.anchors.insert(url.clone(), anchors);
        }
        c.crawled.insert(url, record);
    }
}

/// The URL of the file `rel` under `base`, normalised.
fn file_url(base: &Url, rel: &Path) -> Option<Url> {
    let mut path = String::new();
    for part in rel.components() {
        let part = part.as_os_str().to_str()?;
        if !path.is_empty() {
            path.push('/');
        }
        path.extend(percent_encoding::utf8_percent_encode(
            part,
            percent_encoding::NON_ALPHANUMERIC,
        ));
    }
    base.join(&path).ok().map(urlnorm::normalize)
}

/// A found file's record: a 200 of its type by extension.
fn record_of(url: &Url, rel: &Path) -> PageRecord {
    let mut record = PageRecord::new(url.clone(), 0, None);
    let html = matches!(extension(rel), "html" | "htm");
    record.kind = if html {
        OutcomeKind::Html
    } else {
        OutcomeKind::Other
    };
    record.status = Some(200);
    record.attempts = 1;
    record.content_type = html.then(|| "text/html".to_owned());
    record
}

fn extension(rel: &Path) -> &str {
    rel.extension().and_then(|e| e.to_str()).unwrap_or("")
}

/// The files under `dir`, relative to it: an explicit stack, not recursion
/// (a deep tree cannot overflow it), symbolic links not followed (a link
/// loop cannot make it endless), at most [`MAX_FILES`].
fn walk(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut stack = vec![PathBuf::new()];
    let mut seen_dirs: HashMap<PathBuf, ()> = HashMap::new();
    while let Some(rel) = stack.pop() {
        if seen_dirs.insert(rel.clone(), ()).is_some() {
            continue;
        }
        let mut entries: Vec<_> = std::fs::read_dir(dir.join(&rel))?
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let kind = entry.file_type()?;
            let child = rel.join(entry.file_name());
            if kind.is_dir() {
                stack.push(child);
            } else if kind.is_file() && files.len() < MAX_FILES {
                files.push(child);
            }
        }
    }
    files.sort();
    Ok(files)
}
