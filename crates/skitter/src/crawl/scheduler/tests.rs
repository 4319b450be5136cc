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

#[tokio::test(start_paused = true)]
async fn a_paused_crawl_sends_nothing_until_resumed() {
    let site = TestSite::start(SiteConfig {
        pages: 10,
        ..SiteConfig::default()
    })
    .unwrap();
    let crawler = Crawler::builder()
        .root(site.url("/"))
        .max_tasks(4)
        .per_host(4)
        .build()
        .unwrap();
    let steer = crawler.steer();
    steer.pause();
    let task = tokio::spawn(crawler.run(CancellationToken::new()));
    // An hour of the paused clock: the scheduler waits on the steer alone.
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(site.stats().total_requests, 0);
    steer.resume();
    let report = task.await.unwrap().unwrap();
    assert!(report.completed());
    assert_eq!(report.counters.html, 11);
}

#[tokio::test]
async fn a_lowered_cap_holds_from_the_next_claim() {
    let site = TestSite::start(SiteConfig {
        pages: 30,
        latency: Duration::from_millis(5),
        ..SiteConfig::default()
    })
    .unwrap();
    let crawler = Crawler::builder()
        .root(site.url("/"))
        .max_tasks(8)
        .per_host(8)
        .build()
        .unwrap();
    let steer = crawler.steer();
    steer.pause();
    steer.set_max_tasks(1).unwrap();
    let task = tokio::spawn(crawler.run(CancellationToken::new()));
    steer.resume();
    let report = task.await.unwrap().unwrap();
    assert!(report.completed());
    assert_eq!(site.stats().in_flight_peak, 1);
}

#[tokio::test]
async fn the_cap_goes_down_and_up_in_permits() {
    let slots = std::sync::Arc::new(tokio::sync::Semaphore::new(4));
    let mut cap = super::Cap {
        slots: slots.clone(),
        current: 4,
        debt: 0,
    };
    // Two of four taken by fetches: lowering to 1 forgets the two free ones
    // and owes one more, paid when a fetch ends.
    let held = slots.clone().acquire_many_owned(2).await.unwrap();
    cap.set(1);
    assert_eq!((slots.available_permits(), cap.debt), (0, 1));
    // Raising to 3 first pays off the debt, then adds one.
    cap.set(3);
    assert_eq!((slots.available_permits(), cap.debt), (1, 0));
    drop(held);
    assert_eq!(slots.available_permits(), 3);
}

/// A crawl of one host, one request at a time, `delay` apart.
fn one_at_a_time(site: &skitter_testsite::RunningSite, delay: Duration) -> Crawler {
    Crawler::builder()
        .root(site.url("/"))
        .max_tasks(4)
        .per_host(1)
        .host_delay(delay, Duration::ZERO)
        .ignore_robots(true)
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_delay_changed_live_spaces_the_next_requests() {
    let site = TestSite::start(SiteConfig {
        pages: 60,
        ..SiteConfig::default()
    })
    .unwrap();
    let crawler = one_at_a_time(&site, Duration::from_secs(10));
    let steer = crawler.steer();
    let task = tokio::spawn(crawler.run(CancellationToken::new()));
    // Starts at 0, 10 and 20 s of the paused clock.
    tokio::time::sleep(Duration::from_secs(25)).await;
    let slow = site.stats().total_requests;
    assert!(
        (2..=3).contains(&slow),
        "{slow} requests in 25 s at 10 s apart"
    );
    let set = steer
        .set_politeness(None, Some(Duration::from_secs(1)))
        .unwrap();
    assert_eq!(set.delay, Duration::from_secs(1));
    // The gap owed ends at 30 s; from then on a start a second: 30..=44 s.
    tokio::time::sleep(Duration::from_secs(20)).await;
    let fast = site.stats().total_requests - slow;
    assert!(
        (10..=16).contains(&fast),
        "{fast} requests in the next 20 s at 1 s apart"
    );
    // And back to slow: at most one more start in the next 9 s than the
    // gap owed lets through.
    steer
        .set_politeness(None, Some(Duration::from_secs(10)))
        .unwrap();
    let before = site.stats().total_requests;
    tokio::time::sleep(Duration::from_secs(9)).await;
    assert!(site.stats().total_requests - before <= 1);
    steer.set_politeness(None, Some(Duration::ZERO)).unwrap();
    let report = task.await.unwrap().unwrap();
    assert!(report.completed());
    assert_eq!(report.counters.html, 61);
}

#[tokio::test(start_paused = true)]
async fn a_per_host_raised_live_is_reached_by_slow_start() {
    let site = TestSite::start(SiteConfig {
        pages: 40,
        latency: Duration::from_secs(2),
        ..SiteConfig::default()
    })
    .unwrap();
    let crawler = one_at_a_time(&site, Duration::ZERO);
    let steer = crawler.steer();
    let progress = crawler.progress();
    let task = tokio::spawn(crawler.run(CancellationToken::new()));
    tokio::time::sleep(Duration::from_secs(9)).await;
    assert_eq!(site.stats().in_flight_peak, 1);
    // The crawl's own count of its peak agrees with the site's.
    assert_eq!(progress.snapshot().in_flight_peak, 1);
    assert!(site.stats().total_requests >= 3, "the crawl is under way");
    steer.set_politeness(Some(4), None).unwrap();
    let report = task.await.unwrap().unwrap();
    assert!(report.completed());
    // The global cap is 4 too: the host got all of it.
    assert_eq!(site.stats().in_flight_peak, 4);
    assert_eq!(progress.snapshot().in_flight_peak, 4);
}
