//! A crawl held still by robots.txt outages: when every URL left waits on an
//! origin whose robots.txt is unavailable, the crawl gives those URLs up after
//! `max_blocked`, not the full `max_outage`; while another host still has
//! work, `max_outage` applies. On tokio's paused clock, against servers run
//! on the test's own runtime (so the clock only jumps when they are idle too).

use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use skitter::base::outcome::SkipReason;
use skitter::fetch::FetchConfig;
use skitter::robots::RobotsPolicy;
use skitter::{Crawler, Report};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// A server on 127.0.0.1:0 whose robots.txt answers `robots_status` and
/// whose other paths answer 404 after `delay`. Returns its origin.
async fn serve(robots_status: u16, delay: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let service = service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| async move {
                        let status = if req.uri().path() == "/robots.txt" {
                            robots_status
                        } else {
                            tokio::time::sleep(delay).await;
                            404
                        };
                        let resp = hyper::Response::builder()
                            .status(status)
                            .body(Full::new(Bytes::new()))
                            .unwrap();
                        Ok::<_, std::convert::Infallible>(resp)
                    },
                );
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    origin
}

async fn crawl(roots: Vec<String>, policy: RobotsPolicy) -> Report {
    Crawler::builder()
        .roots(roots)
        .robots_policy(policy)
        .fetch_config(FetchConfig {
            total_timeout: Duration::from_secs(600),
            read_timeout: Duration::from_secs(600),
            ..FetchConfig::default()
        })
        .build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap()
}

/// The records of `origin`'s URLs, as (path, skip reason, message).
fn records_of(report: &Report, origin: &str) -> Vec<(String, Option<SkipReason>, String)> {
    report
        .pages
        .iter()
        .map(Result::unwrap)
        .filter(|p| p.url.as_str().starts_with(origin))
        .map(|p| {
            let message = p
                .error
                .as_ref()
                .map(|e| e.message.clone())
                .unwrap_or_default();
            (p.url.path().to_string(), p.skip, message)
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_crawl_blocked_by_robots_outages_gives_up_after_max_blocked() {
    let blocked = serve(503, Duration::ZERO).await;
    let started = tokio::time::Instant::now();
    let report = crawl(
        vec![format!("{blocked}/"), format!("{blocked}/a")],
        RobotsPolicy::default(),
    )
    .await;
    let took = started.elapsed();
    let records = records_of(&report, &blocked);
    assert_eq!(records.len(), 2, "{records:?}");
    for (path, skip, message) in &records {
        assert_eq!(*skip, Some(SkipReason::RobotsUnavailable), "{path}");
        assert!(
            message.contains("blocked the whole crawl"),
            "{path}: {message}"
        );
    }
    let policy = RobotsPolicy::default();
    assert!(
        took >= policy.max_blocked && took < policy.max_outage,
        "given up after the blocked limit, not the outage limit: {took:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn while_another_host_has_work_the_outage_limit_applies() {
    let blocked = serve(503, Duration::ZERO).await;
    // Busy far longer than `max_blocked`: its one page answers after 200 s.
    let busy = serve(404, Duration::from_secs(200)).await;
    let policy = RobotsPolicy {
        max_outage: Duration::from_secs(150),
        ..RobotsPolicy::default()
    };
    let report = crawl(vec![format!("{blocked}/"), format!("{busy}/slow")], policy).await;
    let records = records_of(&report, &blocked);
    assert_eq!(records.len(), 1, "{records:?}");
    let (_, skip, message) = &records[0];
    assert_eq!(*skip, Some(SkipReason::RobotsUnavailable));
    assert!(message.contains("outage limit"), "{message}");
    assert!(!message.contains("blocked"), "{message}");
}
