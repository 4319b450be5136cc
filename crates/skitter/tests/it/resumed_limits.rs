//! `max_pages` and `max_per_host` hold for a whole `--state` crawl: a run
//! resumed from the state directory counts on from what earlier runs
//! fetched, so the test site sees no more requests than the limit however
//! often the crawl is stopped and resumed.

use std::path::Path;
use std::sync::Arc;

use skitter::crawl::config::Limits;
use skitter::fetch::retry::RetryPolicy;
use skitter::frontier::{DiskFrontier, DiskOptions, RecrawlStart};
use skitter::output::report::{Limit, StopReason};
use skitter::state::store::CrawlMeta;
use skitter::{Crawler, Report};
use skitter_testsite::{RunningSite, SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

fn site() -> RunningSite {
    site_of(60)
}

fn site_of(pages: usize) -> RunningSite {
    TestSite::start(SiteConfig {
        pages,
        ..SiteConfig::default()
    })
    .unwrap()
}

/// One run of the crawl kept in `dir`, under `limits`.
async fn run(site: &RunningSite, dir: &Path, limits: Limits) -> Report {
    run_pass(site, dir, limits, None).await
}

/// [`run`], starting a recrawl pass when `recrawl` says so.
async fn run_pass(
    site: &RunningSite,
    dir: &Path,
    limits: Limits,
    recrawl: Option<RecrawlStart>,
) -> Report {
    let meta = CrawlMeta {
        roots: vec![site.url("/")],
        ..CrawlMeta::default()
    };
    let options = DiskOptions {
        durable: false,
        recrawl,
        ..DiskOptions::default()
    };
    let store = Arc::new(DiskFrontier::open(dir, &meta, options).unwrap());
    Crawler::builder()
        .root(site.url("/"))
        .frontier(store.clone())
        .outcome_store(store)
        .max_tasks(4)
        // robots.txt is not a page: only pages reach the site's count.
        .ignore_robots(true)
        .retry_policy(RetryPolicy {
            max_tries: 1,
            ..RetryPolicy::default()
        })
        .limits(limits)
        .build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap()
}

fn max_pages(n: u64) -> Limits {
    Limits {
        max_pages: Some(n),
        ..Limits::default()
    }
}

#[tokio::test]
async fn max_pages_counts_the_fetches_of_earlier_runs() {
    let site = site();
    let dir = tempfile::tempdir().unwrap();
    let first = run(&site, dir.path(), max_pages(10)).await;
    assert_eq!(first.stopped, Some(StopReason::Limit(Limit::MaxPages)));
    assert_eq!(site.stats().total_requests, 10);
    // Resumed with the same limit: it was reached, so nothing more.
    let second = run(&site, dir.path(), max_pages(10)).await;
    assert_eq!(second.stopped, Some(StopReason::Limit(Limit::MaxPages)));
    assert_eq!(site.stats().total_requests, 10, "fetches across both runs");
    // A higher limit lets the crawl go on up to it, not that many more.
    run(&site, dir.path(), max_pages(25)).await;
    assert_eq!(site.stats().total_requests, 25, "fetches across three runs");
}

#[tokio::test]
async fn max_per_host_counts_the_fetches_of_earlier_runs() {
    let site = site();
    let dir = tempfile::tempdir().unwrap();
    // Stopped by max_pages before the host's quota of 12 is used up.
    let both = |pages| Limits {
        max_pages: pages,
        max_per_host: Some(12),
        ..Limits::default()
    };
    let first = run(&site, dir.path(), both(Some(5))).await;
    assert_eq!(first.stopped, Some(StopReason::Limit(Limit::MaxPages)));
    assert_eq!(site.stats().total_requests, 5);
    let second = run(&site, dir.path(), both(None)).await;
    assert!(second.completed(), "{:?}", second.stopped);
    assert_eq!(
        site.stats().total_requests,
        12,
        "the host's fetches across both runs"
    );
}

#[tokio::test]
async fn a_state_from_before_fetch_counts_resumes_within_its_limits() {
    let site = site();
    let dir = tempfile::tempdir().unwrap();
    run(&site, dir.path(), max_pages(10)).await;
    // Make it look like format 3: no fetch counts, only `done`.
    {
        let db = rusqlite::Connection::open(dir.path().join("state.sqlite")).unwrap();
        db.execute_batch(
            "ALTER TABLE progress DROP COLUMN fetched; ALTER TABLE host DROP COLUMN fetched;
             PRAGMA user_version = 3;",
        )
        .unwrap();
    }
    let status = skitter::state::store::status(dir.path()).unwrap();
    assert_eq!(status.hosts.len(), 1, "a status reader reads format 3");
    let resumed = run(&site, dir.path(), max_pages(15)).await;
    assert_eq!(resumed.stopped, Some(StopReason::Limit(Limit::MaxPages)));
    assert_eq!(site.stats().total_requests, 15, "the upgrade counted 10");
}

#[tokio::test]
async fn a_recrawl_pass_starts_its_limits_afresh() {
    let site = site_of(8);
    let dir = tempfile::tempdir().unwrap();
    let first = run(&site, dir.path(), max_pages(12)).await;
    assert!(first.completed(), "{:?}", first.stopped);
    let pages = site.stats().total_requests;
    assert!(pages > 6 && pages < 12, "{pages}");
    let recrawl = RecrawlStart {
        order: skitter::state::recrawl::RecrawlOrder::Oldest,
        max_redirect: 10,
    };
    let second = run_pass(&site, dir.path(), max_pages(12), Some(recrawl)).await;
    assert!(second.completed(), "{:?}", second.stopped);
    assert_eq!(site.stats().total_requests, 2 * pages, "every page again");
}
