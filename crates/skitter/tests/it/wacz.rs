//! WACZ files from a real crawl: the crawl of the test site (gzip pages, one
//! page failing once before it answers, WARC rotation over several files) is
//! packed with `pack_wacz`, and the result passes the Webrecorder validator
//! (`wacz validate` from PyPI's `wacz`, installed by `scripts/validators.sh`;
//! without it that part says SKIPPED loudly, and fails when `$CI` is set) and
//! skitter's own check, with every HTML page in the page list.

use std::time::Duration;

use skitter::Crawler;
use skitter::fetch::retry::RetryPolicy;
use skitter::output::{WaczOptions, WarcOptions, WarcSink, pack_wacz, validate_wacz};
use skitter_testsite::validators::{check_wacz, python_tools};
use skitter_testsite::{Faults, SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_crawl_packed_as_wacz_passes_the_webrecorder_validator() {
    let site = TestSite::start(SiteConfig {
        pages: 30,
        gzip: true,
        faults: Faults {
            fail_rate: 0.1,
            fail_times: 1,
            seed: 7,
            ..Faults::default()
        },
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("crawl.warc.gz");
    let report = Crawler::builder()
        .root(site.url("/"))
        .max_tasks(8)
        .per_host(8)
        .retry_policy(RetryPolicy {
            max_tries: 3,
            base_delay: Duration::from_millis(5),
            ..Default::default()
        })
        .sink(Box::new(
            WarcSink::create(
                &warc,
                WarcOptions {
                    max_size: Some(40_000),
                    ..WarcOptions::default()
                },
            )
            .unwrap(),
        ))
        .build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap();
    assert!(report.completed());
    assert!(report.counters.retries > 0, "no page failed once");
    let warcs: Vec<_> = report.sinks[0]
        .files
        .iter()
        .map(std::path::PathBuf::from)
        .collect();
    assert!(warcs.len() > 1, "rotation: {warcs:?}");

    let out = dir.path().join("site.wacz");
    let summary = pack_wacz(&warcs, &out, &WaczOptions::default()).unwrap();
    // The 30 pages and the home page; the broken link is a 404, not a page.
    assert_eq!(summary.pages, 31, "{summary:?}");
    let check = validate_wacz(&out).unwrap();
    assert_eq!(check.problems, vec![], "{check:?}");
    assert_eq!(check.captures, summary.captures);

    let Some(bin) = python_tools("wacz::webrecorder_validator", &["wacz"]) else {
        return;
    };
    let verdict = check_wacz(&bin, &out);
    assert!(verdict.ok, "wacz validate: {}", verdict.output);
}
