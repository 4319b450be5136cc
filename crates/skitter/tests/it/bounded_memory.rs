//! The in-memory frontier and the report within a tiny memory budget: a crawl
//! whose seen set, queue and report lines spill to disk still fetches every page
//! exactly once and reports each in URL order, and a spill directory that cannot
//! be used is refused before the crawl starts.

use std::sync::Arc;

use skitter::frontier::{MemoryFrontier, MemoryOptions};
use skitter::host::HostPolicy;
use skitter::output::report::ReportOptions;
use skitter::{BuildError, Crawler, CrawlerBuilder};
use skitter_testsite::{RunningSite, SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

/// The crawl of these tests; per-host concurrency 20 is set on the frontier
/// (given, or built in).
fn builder(site: &RunningSite) -> CrawlerBuilder {
    Crawler::builder().root(site.url("/")).max_tasks(20)
}

#[tokio::test]
async fn a_tiny_budget_still_fetches_every_page_exactly_once() {
    let site = TestSite::start(SiteConfig {
        pages: 3_000,
        fanout: 9,
        ..SiteConfig::default()
    })
    .unwrap();
    let spill = tempfile::tempdir().unwrap();
    // 64 KiB: about 150 queued requests and 2,000 fingerprints before spilling.
    let frontier = Arc::new(
        MemoryFrontier::with_options(MemoryOptions {
            policy: HostPolicy {
                max_in_flight: 20,
                ..HostPolicy::default()
            },
            memory_budget: 64 << 10,
            spill_dir: Some(spill.path().to_path_buf()),
        })
        .unwrap(),
    );
    let report_spill = tempfile::tempdir().unwrap();
    let report = builder(&site)
        .frontier(frontier.clone())
        // 16 KiB: about 50 report lines a run.
        .report_options(ReportOptions {
            memory_budget: 16 << 10,
            spill_dir: Some(report_spill.path().to_path_buf()),
            ..ReportOptions::default()
        })
        .build()
        .expect("valid config")
        .run(CancellationToken::new())
        .await
        .expect("crawl runs");
    assert!(report.completed());
    assert_eq!(report.todo, 0);
    assert_eq!(report.counters.html, 3_001);
    let stats = site.stats();
    let pages = stats.page_paths();
    assert_eq!(pages.len(), 3_001);
    for path in pages {
        assert_eq!(stats.requests(&path), 1, "{path} fetched once");
    }
    // The test is only worth something if the budget was really exceeded.
    assert!(
        frontier.spill_files_created() > 1,
        "{} spill files: the crawl fitted in memory",
        frontier.spill_files_created()
    );
    let left: Vec<_> = std::fs::read_dir(spill.path()).unwrap().collect();
    assert!(left.is_empty(), "spill files left behind: {left:?}");

    assert!(
        report.pages.spill_files() > 16,
        "{} report spill files: the report fitted in memory",
        report.pages.spill_files()
    );
    let text = report.to_text();
    let urls: Vec<&str> = text
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("Finished "))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(urls.len() as u64, report.done);
    assert!(urls.is_sorted(), "report lines out of URL order");
    let left: Vec<_> = std::fs::read_dir(report_spill.path()).unwrap().collect();
    assert!(left.is_empty(), "report spill files left behind: {left:?}");
}

#[test]
fn an_unusable_spill_dir_is_a_build_error() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let cases = [
        std::path::PathBuf::from("/nonexistent/skitter-spill"),
        file.path().to_path_buf(), // a file, not a directory
    ];
    for dir in cases {
        let result = Crawler::builder()
            .root("http://127.0.0.1:1/")
            .spill_dir(&dir)
            .build();
        match result {
            Err(BuildError::Frontier(e)) => {
                let msg = e.to_string();
                assert!(msg.contains(&*dir.to_string_lossy()), "{msg}");
                assert!(msg.contains("spill"), "{msg}");
            }
            Err(other) => panic!("{}: expected a frontier error, got {other}", dir.display()),
            Ok(_) => panic!("{}: an unusable spill dir was accepted", dir.display()),
        }
    }
}
