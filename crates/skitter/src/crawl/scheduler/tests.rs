//! The scheduler's time limit against a real server (port 0), on tokio's
//! paused clock: the crawl's waits run on virtual time, so a crawl of
//! seconds takes milliseconds and ends at exact moments.

use std::time::Duration;

use skitter_testsite::{SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

use crate::Crawler;
use crate::crawl::config::Limits;
use crate::output::report::{Limit, StopReason};

#[tokio::test(start_paused = true)]
async fn max_time_stops_the_crawl_and_the_page_in_flight_gets_its_grace() {
    // One page at a time, three seconds each: pages end at 3, 6 and 9 s, and
    // the fourth is in flight when the ten seconds are up. It ends at 12 s,
    // within the five seconds of grace; the fifth is never started.
    let latency = Duration::from_secs(3);
    let site = TestSite::start(SiteConfig {
        pages: 50,
        latency,
        ..SiteConfig::default()
    })
    .unwrap();
    let max_time = Duration::from_secs(10);
    let crawler = Crawler::builder()
        .root(site.url("/"))
        .max_tasks(1)
        .per_host(1)
        .ignore_robots(true)
        .grace(Duration::from_secs(5))
        .limits(Limits {
            max_time: Some(max_time),
            ..Limits::default()
        })
        .build()
        .unwrap();
    let (start, real_start) = (tokio::time::Instant::now(), std::time::Instant::now());
    let report = crawler.run(CancellationToken::new()).await.unwrap();
    let (took, real) = (start.elapsed(), real_start.elapsed());

    assert_eq!(report.stopped, Some(StopReason::Limit(Limit::MaxTime)));
    assert_eq!(
        report.done, 4,
        "three pages before the limit, one in its grace"
    );
    assert!(report.todo > 0);
    assert_eq!(site.stats().total_requests, 4);
    assert!(
        took >= latency * 4 && took < latency * 4 + Duration::from_secs(1),
        "the crawl ends with the page in flight, at 12 s; took {took:?}"
    );
    assert!(real < max_time, "virtual time, not slept: {real:?}");
}
