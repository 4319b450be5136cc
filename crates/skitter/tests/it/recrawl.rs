//! Incremental recrawl against the versioned test site: a second pass over a
//! state directory revalidates every known URL, and the report, the pages
//! handed to the outputs and `status` tell what changed.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use skitter::base::outcome::{Change, OutcomeKind};
use skitter::fetch::RevisitProfile;
use skitter::fetch::retry::RetryPolicy;
use skitter::frontier::{DiskFrontier, DiskOptions, RecrawlStart};
use skitter::output::{Page, Sink, SinkError, SinkSummary};
use skitter::state::recrawl::RecrawlOrder;
use skitter::state::store::CrawlMeta;
use skitter::{Crawler, Report};
use skitter_testsite::{Faults, SiteConfig, TestSite, ValidatorMode, Versions};
use tokio_util::sync::CancellationToken;

/// What the outputs were handed: per URL, its change and revisit profile.
type Seen = Arc<Mutex<BTreeMap<String, (Option<Change>, Option<RevisitProfile>)>>>;

/// Keeps each page's change and revisit; wants bodies, as a WARC writer does.
struct Changes(Seen);

#[async_trait::async_trait]
impl Sink for Changes {
    fn wants_bodies(&self) -> bool {
        true
    }

    async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
        let revisit = page
            .exchange
            .as_ref()
            .and_then(|x| x.revisit.as_ref())
            .map(|r| r.profile);
        let mut seen = self.0.lock().unwrap();
        seen.insert(page.record.url.to_string(), (page.record.change, revisit));
        Ok(())
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        Ok(SinkSummary::default())
    }
}

fn site(validators: ValidatorMode) -> skitter_testsite::RunningSite {
    TestSite::start(SiteConfig {
        pages: 80,
        versions: Some(Versions {
            change: 0.2,
            gone: 0.1,
            validators,
            ..Versions::default()
        }),
        ..SiteConfig::default()
    })
    .unwrap()
}

async fn pass(url: &str, dir: &Path, recrawl: bool, seen: &Seen) -> Report {
    pass_retrying(url, dir, recrawl, seen, RetryPolicy::default()).await
}

async fn pass_retrying(
    url: &str,
    dir: &Path,
    recrawl: bool,
    seen: &Seen,
    retry: RetryPolicy,
) -> Report {
    let meta = CrawlMeta {
        roots: vec![url.to_string()],
        ..CrawlMeta::default()
    };
    let options = DiskOptions {
        durable: false,
        recrawl: recrawl.then_some(RecrawlStart {
            order: RecrawlOrder::Oldest,
            max_redirect: 10,
        }),
        ..DiskOptions::default()
    };
    let store = Arc::new(DiskFrontier::open(dir, &meta, options).unwrap());
    Crawler::builder()
        .root(url)
        .frontier(store.clone())
        .outcome_store(store)
        .sink(Box::new(Changes(seen.clone())))
        .retry_policy(retry)
        .build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap()
}

fn counter(report: &Report, key: &str) -> u64 {
    report.counters.get(key)
}

#[tokio::test]
async fn a_second_pass_revalidates_and_reports_what_changed() {
    let site = site(ValidatorMode::Honour);
    let dir = tempfile::tempdir().unwrap();
    let seen = Seen::default();
    let first = pass(&site.url("/"), dir.path(), false, &seen).await;
    assert!(first.counters.changes.is_empty());
    let fetched = first.pages.len() as u64;
    let known = first
        .pages
        .iter()
        .map(Result::unwrap)
        .filter(|p| !matches!(p.kind, OutcomeKind::Skipped | OutcomeKind::Failed))
        .count() as u64;
    assert!(known > 80, "{known}");

    site.next_pass();
    seen.lock().unwrap().clear();
    let second = pass(&site.url("/"), dir.path(), true, &seen).await;
    let (new, changed, unchanged, gone) = (
        counter(&second, "change_new"),
        counter(&second, "change_changed"),
        counter(&second, "change_unchanged"),
        counter(&second, "change_gone"),
    );
    assert!(
        changed > 0 && gone > 0 && new > 0 && unchanged > 0,
        "{second:?}"
    );
    // Every known URL was revisited; the new ones are changed pages' links.
    assert_eq!(
        changed + unchanged + gone + counter(&second, "change_failed"),
        known
    );
    assert_eq!(counter(&second, "recrawl_pass"), 2);
    // Unchanged pages cost a 304 each (an unchanged 404 is unchanged by its
    // status), and are archived as revisits.
    let not_modified = second
        .pages
        .iter()
        .map(Result::unwrap)
        .filter(|p| p.status == Some(304))
        .count() as u64;
    assert!(not_modified > 0 && not_modified <= unchanged);
    assert_eq!(site.stats().not_modified, not_modified);
    let seen = seen.lock().unwrap();
    let profiles = |p| seen.values().filter(|(_, r)| *r == Some(p)).count() as u64;
    assert_eq!(profiles(RevisitProfile::ServerNotModified), not_modified);
    assert_eq!(profiles(RevisitProfile::IdenticalPayloadDigest), 0);
    let changes = |c| seen.values().filter(|(x, _)| *x == Some(c)).count() as u64;
    assert_eq!(changes(Change::Gone), gone);

    let status = skitter::state::store::status(dir.path()).unwrap();
    let passes: Vec<_> = status
        .passes
        .iter()
        .map(|p| (p.number, p.urls, p.changed, p.unchanged, p.gone))
        .collect();
    assert_eq!(
        passes,
        vec![
            (1, fetched, 0, 0, 0),
            (2, second.pages.len() as u64, changed, unchanged, gone)
        ]
    );
}

#[tokio::test]
async fn a_faulty_second_pass_still_revalidates_every_known_url() {
    // Pass 1 is clean; from the site's pass 1 on (the recrawl), robots.txt is
    // unavailable at first, a fifth of the pages fail twice (503 or a reset)
    // and the site answers 429 above 50 requests/s.
    let spec = "fail=0.2,times=2,reset=0.3,robots=2,rate=50,from-pass=1,seed=11";
    let faults: Faults = spec.parse().unwrap();
    let site = TestSite::start(SiteConfig {
        pages: 80,
        faults: faults.clone(),
        versions: Some(Versions {
            change: 0.2,
            gone: 0.1,
            validators: ValidatorMode::Honour,
            ..Versions::default()
        }),
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let seen = Seen::default();
    let retry = RetryPolicy {
        base_delay: std::time::Duration::from_millis(20),
        ..RetryPolicy::default()
    };
    let first = pass_retrying(&site.url("/"), dir.path(), false, &seen, retry).await;
    assert_eq!(counter(&first, "retries"), 0, "pass 1 is clean");
    let known = first
        .pages
        .iter()
        .map(Result::unwrap)
        .filter(|p| !matches!(p.kind, OutcomeKind::Skipped | OutcomeKind::Failed))
        .count() as u64;

    site.next_pass();
    seen.lock().unwrap().clear();
    let second = pass_retrying(&site.url("/"), dir.path(), true, &seen, retry).await;
    assert!(second.completed(), "{}", second.to_text());
    // The faults happened, and none of them lost a URL.
    assert!(counter(&second, "retries") > 0, "{:?}", second.counters);
    let throttled: Vec<&String> = second.throttled.values().flat_map(|h| h.keys()).collect();
    assert!(
        throttled.iter().any(|r| *r == "robots_unavailable"),
        "{throttled:?}"
    );
    assert!(site.stats().requests("/robots.txt") >= 3, "probed again");
    assert_eq!(counter(&second, "change_failed"), 0, "{}", second.to_text());
    let (changed, unchanged, gone) = (
        counter(&second, "change_changed"),
        counter(&second, "change_unchanged"),
        counter(&second, "change_gone"),
    );
    assert_eq!(changed + unchanged + gone, known, "{:?}", second.counters);
    // The retries of an unchanged page still sent its validators: each such
    // page that failed first ends as a 304, and the site answered every 304
    // the report holds.
    let pages: Vec<_> = second.pages.iter().map(Result::unwrap).collect();
    let retried_unchanged: Vec<_> = pages
        .iter()
        .filter(|p| faults.fails(p.url.path()) && p.change == Some(Change::Unchanged))
        .filter(|p| p.url.path().starts_with("/p/"))
        .collect();
    assert!(!retried_unchanged.is_empty());
    for p in &retried_unchanged {
        assert_eq!(p.status, Some(304), "{}", p.url);
        assert!(p.attempts > 1, "{} failed first", p.url);
    }
    let not_modified = pages.iter().filter(|p| p.status == Some(304)).count() as u64;
    assert_eq!(site.stats().not_modified, not_modified);
}

#[tokio::test]
async fn a_server_ignoring_validators_is_caught_by_the_digest() {
    let site = site(ValidatorMode::Ignore);
    let dir = tempfile::tempdir().unwrap();
    let seen = Seen::default();
    pass(&site.url("/"), dir.path(), false, &seen).await;
    site.next_pass();
    seen.lock().unwrap().clear();
    let second = pass(&site.url("/"), dir.path(), true, &seen).await;
    let unchanged = counter(&second, "change_unchanged");
    assert_eq!(site.stats().not_modified, 0);
    let seen = seen.lock().unwrap();
    let by_digest = seen
        .values()
        .filter(|(_, r)| *r == Some(RevisitProfile::IdenticalPayloadDigest))
        .count() as u64;
    // Every unchanged HTML page came again whole and was recognised by its
    // digest (an unchanged error page is unchanged by its status alone).
    assert!(
        by_digest > 0 && by_digest <= unchanged,
        "{by_digest} of {unchanged}"
    );
    assert!(counter(&second, "change_changed") > 0);
}

#[tokio::test]
async fn each_recrawl_of_a_finished_crawl_starts_the_next_pass() {
    let site = site(ValidatorMode::Honour);
    let dir = tempfile::tempdir().unwrap();
    let seen = Seen::default();
    pass(&site.url("/"), dir.path(), false, &seen).await;
    // A finished pass, then a recrawl: pass 2; recrawling a finished pass 2
    // starts pass 3, never skipping or repeating a number.
    site.next_pass();
    pass(&site.url("/"), dir.path(), true, &seen).await;
    let third = pass(&site.url("/"), dir.path(), true, &seen).await;
    assert_eq!(counter(&third, "recrawl_pass"), 3);
    // Nothing changed between 2 and 3 on the site's side.
    assert_eq!(counter(&third, "change_changed"), 0);
    let status = skitter::state::store::status(dir.path()).unwrap();
    assert_eq!(status.passes.len(), 3);
}

#[tokio::test]
async fn a_state_from_before_recrawl_opens_but_cannot_be_recrawled() {
    let site = site(ValidatorMode::Honour);
    let dir = tempfile::tempdir().unwrap();
    let seen = Seen::default();
    pass(&site.url("/"), dir.path(), false, &seen).await;
    // Make it look like format 2: no visits, no passes.
    {
        let db = rusqlite::Connection::open(dir.path().join("state.sqlite")).unwrap();
        db.execute_batch(
            "DROP TABLE visit; DROP TABLE pass; ALTER TABLE progress DROP COLUMN fetched;
             ALTER TABLE host DROP COLUMN fetched; PRAGMA user_version = 2;",
        )
        .unwrap();
    }
    assert!(
        skitter::state::store::status(dir.path())
            .unwrap()
            .passes
            .is_empty()
    );
    // Opened without --recrawl, it is upgraded and resumes (nothing left).
    let again = pass(&site.url("/"), dir.path(), false, &seen).await;
    assert_eq!(again.todo, 0);
    let meta = CrawlMeta {
        roots: vec![site.url("/")],
        ..CrawlMeta::default()
    };
    let options = DiskOptions {
        recrawl: Some(RecrawlStart {
            order: RecrawlOrder::Oldest,
            max_redirect: 10,
        }),
        ..DiskOptions::default()
    };
    let err = DiskFrontier::open(dir.path(), &meta, options).unwrap_err();
    assert!(err.to_string().contains("cannot be recrawled"), "{err}");
}
