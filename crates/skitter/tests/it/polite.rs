//! Politeness on the real web: robots.txt (RFC 9309 status rules, once per origin,
//! before anything else), Crawl-delay, per-host delay and concurrency, one slow
//! host never stalling another, and the limits that make every crawl end.

use std::time::Duration;

use skitter::base::outcome::{OutcomeKind, SkipReason};
use skitter::base::trap::{TrapKind, TrapRules};
use skitter::crawl::config::Limits;
use skitter::fetch::retry::RetryPolicy;
use skitter::output::ChannelSink;
use skitter::output::report::{Limit, StopReason};
use skitter::{Crawler, CrawlerBuilder, Report};
use skitter_testsite::{RunningSite, SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

fn builder(site: &RunningSite) -> CrawlerBuilder {
    Crawler::builder()
        .root(site.url("/"))
        .max_tasks(20)
        .per_host(20)
        .retry_policy(RetryPolicy {
            max_tries: 1,
            ..RetryPolicy::default()
        })
}

async fn crawl(b: CrawlerBuilder) -> Report {
    b.build()
        .unwrap()
        .run(CancellationToken::new())
        .await
        .unwrap()
}

fn site_with_robots(status: u16, body: &str, pages: usize) -> RunningSite {
    TestSite::start(SiteConfig {
        pages,
        robots_txt: Some((status, body.to_string())),
        record_starts: true,
        ..SiteConfig::default()
    })
    .unwrap()
}

#[tokio::test]
async fn robots_is_fetched_once_first_and_obeyed() {
    let site = site_with_robots(
        200,
        "User-agent: *\nDisallow: /p/1\n\nUser-agent: skitter\nDisallow: /p/2$\n",
        30,
    );
    let report = crawl(builder(&site)).await;
    let stats = site.stats();
    assert_eq!(stats.requests("/robots.txt"), 1);
    // The skitter group applies, not `*`: /p/2 is disallowed, /p/1 is not.
    assert_eq!(stats.requests("/p/2"), 0);
    assert_eq!(stats.requests("/p/1"), 1);
    let skipped = report
        .pages
        .iter()
        .map(Result::unwrap)
        .find(|p| p.url.path() == "/p/2")
        .unwrap();
    assert_eq!(skipped.kind, OutcomeKind::Skipped);
    assert_eq!(skipped.skip, Some(SkipReason::Robots));
    assert_eq!(report.counters.skipped_by[&SkipReason::Robots], 1);
    let first_robots = stats.starts("/robots.txt")[0];
    assert!(stats.starts("/p/").iter().all(|t| *t >= first_robots));
    assert!(stats.starts("/").iter().all(|t| *t >= first_robots));
}

#[tokio::test]
async fn robots_4xx_allows_everything() {
    let site = site_with_robots(404, "", 10);
    let report = crawl(builder(&site)).await;
    assert_eq!(report.counters.html, 11);
    assert!(!report.counters.skipped_by.contains_key(&SkipReason::Robots));
}

/// robots.txt retried quickly and given up on after 300 ms, so outage tests
/// finish fast.
fn short_outage(b: CrawlerBuilder) -> CrawlerBuilder {
    b.robots_policy(skitter::robots::RobotsPolicy {
        retry_unavailable: Duration::from_millis(40),
        ..skitter::robots::RobotsPolicy::default()
    })
    .max_outage(Duration::from_millis(300))
}

#[tokio::test]
async fn robots_5xx_beyond_the_outage_limit_skips_as_unavailable() {
    let site = site_with_robots(503, "", 10);
    let report = crawl(short_outage(builder(&site))).await;
    let stats = site.stats();
    assert_eq!(
        stats.total_requests,
        stats.requests("/robots.txt"),
        "nothing but robots.txt fetched"
    );
    assert!(
        stats.requests("/robots.txt") >= 3,
        "fetched again with back-off"
    );
    let pages = report.pages.to_vec().unwrap();
    assert_eq!(pages.len(), 1);
    assert_eq!(pages[0].skip, Some(SkipReason::RobotsUnavailable));
    let message = &pages[0].error.as_ref().unwrap().message;
    assert!(message.contains("unavailable"), "{message}");
}

#[tokio::test]
async fn robots_503_once_defers_the_origin_and_skips_nothing() {
    let site = TestSite::start(SiteConfig {
        pages: 10,
        robots_txt: Some((200, "User-agent: *\nDisallow: /p/3\n".into())),
        faults: "robots=1".parse().unwrap(),
        ..SiteConfig::default()
    })
    .unwrap();
    let b = builder(&site).robots_policy(skitter::robots::RobotsPolicy {
        retry_unavailable: Duration::from_millis(40),
        ..skitter::robots::RobotsPolicy::default()
    });
    let report = crawl(b).await;
    assert_eq!(site.stats().requests("/robots.txt"), 2);
    // Everything but the disallowed page was fetched once robots.txt answered.
    assert_eq!(report.counters.html, 10, "{}", report.to_text());
    let skipped: Vec<_> = report
        .pages
        .iter()
        .map(Result::unwrap)
        .filter(|p| p.skip.is_some())
        .collect();
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].skip, Some(SkipReason::Robots));
    assert_eq!(skipped[0].url.path(), "/p/3");
    assert_eq!(report.throttled.len(), 1, "the deferral is reported");
}

#[tokio::test]
async fn unreachable_robots_disallows_the_origin() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let report = crawl(short_outage(
        Crawler::builder().root(format!("127.0.0.1:{port}/")),
    ))
    .await;
    assert_eq!(
        report.pages.to_vec().unwrap()[0].skip,
        Some(SkipReason::RobotsUnavailable)
    );
}

#[tokio::test]
async fn ignore_robots_never_asks() {
    let site = site_with_robots(200, "User-agent: *\nDisallow: /\n", 10);
    let report = crawl(builder(&site).ignore_robots(true)).await;
    assert_eq!(site.stats().requests("/robots.txt"), 0);
    assert_eq!(report.counters.html, 11);
}

#[tokio::test]
async fn crawl_delay_spaces_requests() {
    let site = site_with_robots(200, "User-agent: *\nCrawl-delay: 0.05\n", 5);
    crawl(builder(&site)).await;
    assert_starts_apart(&site, Duration::from_millis(50));
}

#[tokio::test]
async fn per_host_delay_spaces_requests() {
    let site = site_with_robots(404, "", 5);
    crawl(builder(&site).host_delay(Duration::from_millis(50), Duration::ZERO)).await;
    assert_starts_apart(&site, Duration::from_millis(50));
}

/// Request arrivals at least `gap` apart, less a quarter of it: arrivals are
/// taken on the server's thread, and on a loaded machine one request can be
/// seen late and the next on time (45 ms of a 50 ms gap were seen). A crawl
/// that ignored the delay would send them back to back, well inside the slack.
/// robots.txt is fetched inside the first request's slot, so the gap counts from
/// the second page on.
fn assert_starts_apart(site: &RunningSite, gap: Duration) {
    let mut starts = site.stats().starts("/");
    starts.sort();
    assert!(starts.len() >= 6);
    let slack = gap / 4;
    for pair in starts.windows(2).skip(2) {
        assert!(
            pair[1] - pair[0] + slack >= gap,
            "{:?} then {:?}",
            pair[0],
            pair[1]
        );
    }
}

#[tokio::test]
async fn a_slow_host_does_not_stall_a_fast_one() {
    let slow = TestSite::start(SiteConfig {
        pages: 4,
        latency: Duration::from_millis(150),
        ..SiteConfig::default()
    })
    .unwrap();
    let fast = TestSite::start(SiteConfig {
        pages: 60,
        ..SiteConfig::default()
    })
    .unwrap();
    let (sink, mut rx) = ChannelSink::new(1024);
    let b = builder(&slow)
        .root(fast.url("/"))
        .per_host(1)
        .ignore_robots(true)
        .sink(Box::new(sink));
    crawl(b).await;
    let mut order = Vec::new();
    while let Ok(r) = rx.try_recv() {
        order.push(r.url.port());
    }
    let slow_port = Some(slow.addr().port());
    let last_fast = order.iter().rposition(|p| *p != slow_port).unwrap();
    let slow_done_before = order[..last_fast]
        .iter()
        .filter(|p| **p == slow_port)
        .count();
    assert!(
        slow_done_before <= 2,
        "the fast host waited on the slow one: {slow_done_before} slow pages first"
    );
    assert!(order.len() >= 5 + 61);
}

#[tokio::test]
async fn max_pages_stops_cleanly_with_todo() {
    let site = site_with_robots(404, "", 100);
    let limits = Limits {
        max_pages: Some(10),
        ..Limits::default()
    };
    let report = crawl(builder(&site).max_tasks(3).limits(limits)).await;
    assert_eq!(report.stopped, Some(StopReason::Limit(Limit::MaxPages)));
    assert_eq!(report.counters.html, 10);
    assert!(report.todo > 0);
    assert_eq!(site.stats().total_requests, 11, "ten pages and robots.txt");
}

#[tokio::test]
async fn max_time_stops_cleanly() {
    let site = TestSite::start(SiteConfig {
        pages: 400,
        latency: Duration::from_millis(40),
        ..SiteConfig::default()
    })
    .unwrap();
    let limits = Limits {
        max_time: Some(Duration::from_millis(300)),
        ..Limits::default()
    };
    let report = crawl(
        builder(&site)
            .max_tasks(2)
            .limits(limits)
            .ignore_robots(true),
    )
    .await;
    assert_eq!(report.stopped, Some(StopReason::Limit(Limit::MaxTime)));
    assert!(report.todo > 0 && report.done < 401);
}

#[tokio::test]
async fn max_per_host_narrows_the_crawl() {
    let site = site_with_robots(404, "", 50);
    let limits = Limits {
        max_per_host: Some(5),
        ..Limits::default()
    };
    let report = crawl(builder(&site).limits(limits)).await;
    assert_eq!(report.counters.html, 5);
    assert!(report.counters.skipped_by[&SkipReason::Limit] > 0);
    assert!(report.completed());
}

/// A URL takes its unit of the host's quota once, not once per attempt:
/// every page answers 503 once, and five pages are still fetched (counted per
/// attempt, as before, the retries used the quota up after two pages).
#[tokio::test]
async fn max_per_host_counts_a_retried_url_once() {
    let site = TestSite::start(SiteConfig {
        pages: 50,
        robots_txt: Some((404, String::new())),
        faults: skitter_testsite::Faults {
            fail_rate: 1.0,
            fail_times: 1,
            ..Default::default()
        },
        ..SiteConfig::default()
    })
    .unwrap();
    let limits = Limits {
        max_per_host: Some(5),
        ..Limits::default()
    };
    let retry = RetryPolicy {
        max_tries: 2,
        base_delay: Duration::from_millis(1),
        ..RetryPolicy::default()
    };
    let report = crawl(builder(&site).limits(limits).retry_policy(retry)).await;
    assert_eq!(report.counters.html, 5, "{:?}", report.counters);
    assert!(report.completed());
}

#[tokio::test]
async fn traps_end_on_their_own_with_counters() {
    let site = TestSite::start(SiteConfig {
        pages: 20,
        traps: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let rules = skitter::base::trap::TrapRules {
        max_query_variants: 50,
        plausible_years: Some(2020..=2026),
        ..Default::default()
    };
    let report = crawl(
        builder(&site)
            .max_tasks(50)
            .per_host(50)
            .ignore_robots(true)
            .trap_rules(rules),
    )
    .await;
    assert!(report.completed());
    for kind in [
        TrapKind::ImplausibleDate,
        TrapKind::RepeatedSegments,
        TrapKind::TooManyQueryVariants,
    ] {
        assert!(
            report.counters.traps.get(&kind).is_some_and(|n| *n > 0),
            "{kind}"
        );
    }
    let trapped: u64 = report.counters.traps.values().sum();
    assert_eq!(report.counters.links_skipped[&SkipReason::Trap], trapped);
    // 7 years of months, 50 session variants, a couple of loop levels, the pages.
    assert!(report.done < 7 * 12 + 50 + 10 + 30, "{} URLs", report.done);
}

/// Runs a crawl with default settings from `root`; a crawl still running
/// after five minutes never ends, and fails the test instead of hanging it.
async fn crawl_ends(site: &RunningSite, root: &str) -> Report {
    let run = Crawler::builder()
        .root(site.url(root))
        .build()
        .unwrap()
        .run(CancellationToken::new());
    tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .expect("the crawl ended by itself")
        .unwrap()
}

#[tokio::test]
async fn an_endless_pager_ends_with_default_settings() {
    let site = TestSite::start(SiteConfig {
        pages: 3,
        ..SiteConfig::default()
    })
    .unwrap();
    let report = crawl_ends(&site, "/pager/0").await;
    assert!(report.completed());
    // Pages 0 to 50 (`max_similar_chain` near-duplicates after the first);
    // then page 50's links along the chain (to 49 and 51) are traps.
    let pager = site
        .stats()
        .paths()
        .keys()
        .filter(|p| p.starts_with("/pager/"))
        .count();
    let bound = TrapRules::default().max_similar_chain + 1;
    assert_eq!(pager, bound, "pager pages fetched");
    let trips = report.counters.traps.get(&TrapKind::EndlessPager).copied();
    assert_eq!(trips, Some(2), "{:?}", report.counters.traps);
    assert_eq!(report.counters.links_skipped[&SkipReason::Trap], 2);
}

#[tokio::test]
async fn a_long_listing_whose_pages_differ_is_crawled_to_its_end() {
    let site = TestSite::start(SiteConfig {
        pages: 3,
        ..SiteConfig::default()
    })
    .unwrap();
    let report = crawl_ends(&site, "/listing/0").await;
    assert!(report.completed());
    let stats = site.stats();
    for n in 0..skitter_testsite::LISTING_PAGES {
        assert_eq!(stats.requests(&format!("/listing/{n}")), 1, "page {n}");
    }
    assert!(
        report.counters.traps.is_empty(),
        "{:?}",
        report.counters.traps
    );
}

fn sitemap_site(robots: &str) -> RunningSite {
    TestSite::start(SiteConfig {
        pages: 40,
        robots_txt: Some((200, robots.to_string())),
        sitemap_xml: Some(
            "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
             <url><loc>{origin}/p/30</loc></url><url><loc>{origin}/p/31</loc></url>\
             <url><loc>http://elsewhere.invalid/x</loc></url></urlset>"
                .to_string(),
        ),
        ..SiteConfig::default()
    })
    .unwrap()
}

#[tokio::test]
async fn robots_sitemaps_add_pages_links_do_not_reach() {
    let site = sitemap_site("User-agent: *\nAllow: /\nSitemap: {origin}/sitemap.xml\n");
    // Depth 1 by links reaches only `/` and `/p/0`; the sitemap's pages are depth 1 too.
    let report = crawl(builder(&site).max_depth(1)).await;
    let stats = site.stats();
    assert_eq!(stats.requests("/sitemap.xml"), 1);
    assert_eq!(stats.requests("/p/30"), 1);
    assert_eq!(stats.requests("/p/31"), 1);
    assert_eq!(stats.requests("/p/5"), 0);
    let sitemap = report
        .pages
        .iter()
        .map(Result::unwrap)
        .find(|p| p.url.path() == "/sitemap.xml")
        .unwrap();
    assert_eq!(sitemap.num_urls, 2, "the off-site entry is out of scope");
    assert!(report.counters.links_skipped[&SkipReason::Scope] >= 1);
}

#[tokio::test]
async fn sitemap_probe_is_opt_in_and_no_sitemaps_turns_them_off() {
    let site = sitemap_site("User-agent: *\nAllow: /\n");
    crawl(builder(&site).max_depth(1)).await;
    assert_eq!(site.stats().requests("/sitemap.xml"), 0);
    crawl(
        builder(&site)
            .max_depth(1)
            .sitemaps(skitter::parse::discovery::SitemapMode::Probe),
    )
    .await;
    assert_eq!(site.stats().requests("/sitemap.xml"), 1);
    assert_eq!(site.stats().requests("/p/30"), 1);
    let named = sitemap_site("User-agent: *\nSitemap: {origin}/sitemap.xml\n");
    crawl(
        builder(&named)
            .max_depth(1)
            .sitemaps(skitter::parse::discovery::SitemapMode::Off),
    )
    .await;
    assert_eq!(named.stats().requests("/sitemap.xml"), 0);
}

/// RFC 9309's size rule is on the decoded file: a gzip robots.txt that decodes
/// to more than 500 KiB is parsed up to there, never as compressed bytes.
#[tokio::test]
async fn large_gzip_robots_is_parsed_decoded() {
    let padding = "# padding padding padding padding padding padding padding\n".repeat(12_000);
    let site = TestSite::start(SiteConfig {
        pages: 10,
        robots_txt: Some((200, format!("User-agent: *\nDisallow: /p/1\n{padding}"))),
        gzip: true,
        ..SiteConfig::default()
    })
    .unwrap();
    assert!(padding.len() > 600 * 1024);
    let report = crawl(builder(&site)).await;
    assert_eq!(site.stats().requests("/p/1"), 0, "{}", report.to_text());
    assert_eq!(report.counters.skipped_by[&SkipReason::Robots], 1);
}

/// Retries take their host's slot and keep its gap, like every request.
#[tokio::test]
async fn retries_keep_the_crawl_delay() {
    let site = TestSite::start(SiteConfig {
        pages: 12,
        robots_txt: Some((200, "User-agent: *\nCrawl-delay: 0.05\n".into())),
        faults: "fail=0.4,times=1,status=503,seed=5".parse().unwrap(),
        record_starts: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let b = builder(&site).retry_policy(RetryPolicy {
        base_delay: Duration::from_millis(10),
        ..RetryPolicy::default()
    });
    let report = crawl(b).await;
    assert!(report.counters.retries >= 2);
    let starts = site.stats().starts("/p/");
    for pair in starts.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(gap >= Duration::from_millis(45), "requests {gap:?} apart");
    }
}

/// A bare fetcher for the robots.txt cache's tests: the test sites are on
/// loopback, which a fetcher refuses by default.
fn loopback_fetcher() -> skitter::fetch::Fetcher {
    skitter::fetch::Fetcher::new(skitter::fetch::FetchConfig {
        private_access: skitter::fetch::PrivateAccess::Allow,
        ..skitter::fetch::FetchConfig::default()
    })
    .unwrap()
}

/// The robots.txt cache stays within its byte budget on a crawl of many
/// origins: the ones fetched longest ago are forgotten, and fetched again when
/// asked for.
#[tokio::test]
async fn robots_cache_stays_within_its_budget() {
    use skitter::robots::{ENTRY_OVERHEAD, RobotsCache, RobotsPolicy};
    let body = format!("User-agent: *\nDisallow: /p/1\n# {}\n", "x".repeat(1000));
    let sites: Vec<RunningSite> = (0..6).map(|_| site_with_robots(200, &body, 2)).collect();
    let fetcher = loopback_fetcher();
    let budget = 3 * (body.len() + ENTRY_OVERHEAD);
    let cache = RobotsCache::new(
        fetcher,
        RobotsPolicy {
            max_cache_bytes: budget,
            ..RobotsPolicy::default()
        },
    );
    for site in &sites {
        let url = url::Url::parse(&site.url("/p/1")).unwrap();
        let rules = cache.rules_for(&url).await;
        assert!(!rules.robots.allowed(cache.token(), &url));
        let (origins, bytes) = cache.cached();
        assert!(bytes <= budget, "{bytes} bytes over {budget}");
        assert!(origins <= 3);
    }
    // The first origin was forgotten: asking again fetches it again.
    let first = url::Url::parse(&sites[0].url("/")).unwrap();
    cache.rules_for(&first).await;
    assert_eq!(sites[0].stats().requests("/robots.txt"), 2);
    assert_eq!(sites[5].stats().requests("/robots.txt"), 1);
}

/// A robots.txt server for the health probe: the first request is answered
/// at once with `Disallow: /a`, every later one with `Disallow: /b` once the
/// test lets it go; each request's arrival is told on `arrived`.
async fn held_robots() -> (
    String,
    tokio::sync::mpsc::UnboundedReceiver<()>,
    std::sync::Arc<tokio::sync::Semaphore>,
) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let (arrived, rx) = tokio::sync::mpsc::unbounded_channel();
    let release = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
    let gate = release.clone();
    tokio::spawn(async move {
        let mut count = 0;
        while let Ok((mut stream, _)) = listener.accept().await {
            let (arrived, gate) = (arrived.clone(), gate.clone());
            count += 1;
            let first = count == 1;
            tokio::spawn(async move {
                let mut got = Vec::new();
                let mut buf = [0u8; 1024];
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = arrived.send(());
                let body = if first {
                    "User-agent: *\nDisallow: /a\n"
                } else {
                    gate.acquire().await.unwrap().forget();
                    "User-agent: *\nDisallow: /b\n"
                };
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
            });
        }
    });
    (origin, rx, release)
}

/// A health probe (`recheck`) does not take the rules' place while it is out:
/// the origin's other URLs go on with the rules in force, overlapping
/// rechecks share the one probe, and its answer is in force afterwards. (When
/// the probe replaced the rules, every URL of a slow origin waited a round trip
/// for each probe: a crawl at 1 s of latency with 10% of URLs failing once took
/// two rounds for every one.)
#[tokio::test]
async fn a_health_probe_holds_up_no_other_url() {
    use skitter::robots::{RobotsCache, RobotsPolicy};
    let (origin, mut arrived, release) = held_robots().await;
    let cache = std::sync::Arc::new(RobotsCache::new(
        loopback_fetcher(),
        RobotsPolicy::default(),
    ));
    let a = url::Url::parse(&format!("{origin}/a")).unwrap();
    let b = url::Url::parse(&format!("{origin}/b")).unwrap();
    let rules = cache.rules_for(&a).await;
    assert!(!rules.robots.allowed(cache.token(), &a));
    arrived.recv().await.unwrap();

    let probes: Vec<_> = (0..3)
        .map(|_| {
            let (cache, a) = (cache.clone(), a.clone());
            tokio::spawn(async move { cache.recheck(&a, Duration::ZERO).await })
        })
        .collect();
    arrived.recv().await.expect("the probe reached the server");
    // The probe is held at the server; the rules in force answer meanwhile. A
    // cache that made this wait for the probe would never return here (the
    // timeout turns that into a failure rather than a hung test).
    let meanwhile = tokio::time::timeout(Duration::from_secs(30), cache.rules_for(&b))
        .await
        .expect("rules_for waited for the health probe");
    assert!(meanwhile.robots.allowed(cache.token(), &b), "the old rules");
    assert!(probes.iter().all(|p| !p.is_finished()));

    release.add_permits(1);
    for probe in probes {
        let fresh = probe.await.unwrap();
        assert!(
            !fresh.robots.allowed(cache.token(), &b),
            "the probe's rules"
        );
    }
    let after = cache.rules_for(&a).await;
    assert!(
        after.robots.allowed(cache.token(), &a),
        "the probe's rules are in force"
    );
    assert!(!after.robots.allowed(cache.token(), &b));
    assert!(
        arrived.try_recv().is_err(),
        "one probe for the three rechecks"
    );
}
