//! End-to-end crawls of the local test site, one test per promise of the core
//! crawl: every page once, the concurrency cap, normalisation, redirects, retries,
//! scope, extraction, body limits, nothing hangs, and stopping.

use std::time::Duration;

use skitter::base::outcome::{ErrorKind, OutcomeKind, PageRecord, SkipReason};
use skitter::fetch::retry::RetryPolicy;
use skitter::output::report::StopReason;
use skitter::{Crawler, CrawlerBuilder, Report};
use skitter_testsite::{RunningSite, SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

/// Quick retries and short timeouts, so failure cases stay fast.
fn quick(site: &RunningSite) -> CrawlerBuilder {
    let fetch = skitter::fetch::FetchConfig {
        connect_timeout: Duration::from_secs(2),
        read_timeout: Duration::from_millis(500),
        total_timeout: Duration::from_secs(3),
        ..Default::default()
    };
    Crawler::builder()
        .fetch_config(fetch)
        .root(site.url("/"))
        .max_tasks(20)
        .per_host(20)
        .retry_policy(RetryPolicy {
            max_tries: 3,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
            max_retry_after: Duration::from_millis(50),
            ..RetryPolicy::default()
        })
}

async fn crawl(b: CrawlerBuilder) -> Report {
    b.build()
        .expect("valid config")
        .run(CancellationToken::new())
        .await
        .expect("crawl runs")
}

fn record(report: &Report, site: &RunningSite, path: &str) -> PageRecord {
    let url = site.url(path);
    report
        .pages
        .iter()
        .map(Result::unwrap)
        .find(|p| p.url.as_str() == url)
        .unwrap_or_else(|| panic!("no record for {url}"))
}

#[tokio::test]
async fn fetches_every_page_exactly_once_and_ends() {
    let site = TestSite::start(SiteConfig {
        pages: 300,
        fanout: 7,
        ..SiteConfig::default()
    })
    .unwrap();
    let report = crawl(quick(&site)).await;
    let stats = site.stats();
    for path in stats.page_paths() {
        assert_eq!(stats.requests(&path), 1, "{path} fetched once");
    }
    assert!(report.completed());
    assert_eq!(report.todo, 0);
    assert_eq!(report.counters.html, 301);
    // The only other requests: the upper-case spellings, distinct URLs, once each.
    let others: Vec<_> = stats
        .paths()
        .iter()
        .filter(|(p, _)| !p.starts_with("/p/") && *p != "/" && *p != "/robots.txt")
        .collect();
    assert!(!others.is_empty());
    for (path, n) in &others {
        assert!(path.starts_with("/P/"), "unexpected fetch of {path}");
        assert_eq!(**n, 1, "{path}");
    }
}

#[tokio::test]
async fn never_more_than_max_tasks_in_flight() {
    let site = TestSite::start(SiteConfig {
        pages: 80,
        latency: Duration::from_millis(20),
        ..SiteConfig::default()
    })
    .unwrap();
    let report = crawl(quick(&site).max_tasks(4).per_host(100)).await;
    let peak = site.stats().in_flight_peak;
    assert!(report.completed());
    assert!(peak <= 4, "peak {peak} exceeds max_tasks 4");
    assert!(peak >= 2, "peak {peak}: the crawl never ran concurrently");
}

#[tokio::test]
async fn per_host_cap_holds_below_max_tasks() {
    let site = TestSite::start(SiteConfig {
        pages: 60,
        latency: Duration::from_millis(10),
        ..SiteConfig::default()
    })
    .unwrap();
    crawl(quick(&site).max_tasks(50).per_host(3)).await;
    assert!(site.stats().in_flight_peak <= 3);
}

#[tokio::test]
async fn many_spellings_are_one_fetch_but_case_differs() {
    let site = TestSite::start(SiteConfig {
        pages: 60,
        ..SiteConfig::default()
    })
    .unwrap();
    let report = crawl(quick(&site)).await;
    let stats = site.stats();
    assert_eq!(stats.requests("/p/7"), 1);
    // `/P/7` is a different URL (paths are case-sensitive): fetched, and a 404.
    assert_eq!(stats.requests("/P/7"), 1);
    assert_eq!(record(&report, &site, "/P/7").status, Some(404));
}

#[tokio::test]
async fn redirects_are_followed_through_scope_and_seen_set() {
    let site = TestSite::start(SiteConfig {
        pages: 20,
        specials: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let report = crawl(quick(&site).max_redirect(5)).await;
    let stats = site.stats();
    for code in [301, 302, 303, 307, 308] {
        let r = record(&report, &site, &format!("/r/{code}"));
        assert_eq!(r.kind, OutcomeKind::Redirect, "{code}");
        assert_eq!(r.next_url.as_ref().map(|u| u.path()), Some("/p/1"));
    }
    assert_eq!(
        stats.requests("/p/1"),
        1,
        "five redirects to one place are one fetch"
    );
    assert_eq!(stats.requests("/p/2"), 1, "a short chain reaches its end");
    // A chain longer than max_redirect stops with a recorded outcome.
    let long = report.pages.iter().map(Result::unwrap).filter(|p| {
        p.error
            .as_ref()
            .is_some_and(|e| e.kind == ErrorKind::TooManyRedirects)
    });
    assert_eq!(long.count(), 1);
    // Loops end: each side fetched once.
    assert_eq!(stats.requests("/r/loop/a"), 1);
    assert_eq!(stats.requests("/r/loop/b"), 1);
    for path in ["/r/nolocation", "/r/badlocation"] {
        let r = record(&report, &site, path);
        assert_eq!(
            r.error.as_ref().map(|e| e.kind),
            Some(ErrorKind::BadRedirect),
            "{path}"
        );
    }
    // The off-site target is recorded as the redirect's next_url but never fetched.
    assert!(
        report
            .pages
            .iter()
            .map(Result::unwrap)
            .all(|p| p.url.host_str() == Some("127.0.0.1"))
    );
    assert!(report.counters.links_skipped[&SkipReason::Scope] >= 1);
    assert!(report.completed());
}

#[tokio::test]
async fn transient_failures_are_retried_others_recorded() {
    let site = TestSite::start(SiteConfig {
        pages: 5,
        specials: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let report = crawl(quick(&site)).await;
    let stats = site.stats();
    assert_eq!(stats.requests("/flaky"), 2);
    assert_eq!(record(&report, &site, "/flaky").status, Some(200));
    assert_eq!(record(&report, &site, "/flaky").attempts, 2);
    assert_eq!(stats.requests("/ratelimited"), 2);
    assert_eq!(record(&report, &site, "/ratelimited").status, Some(200));
    assert_eq!(stats.requests("/error"), 3, "500 retried up to max_tries");
    assert_eq!(record(&report, &site, "/error").status, Some(500));
    assert_eq!(
        stats.requests("/missing"),
        1,
        "404 is an answer, not retried"
    );
    assert_eq!(stats.requests("/gone"), 1);
    assert!(report.counters.status[&404] >= 1);
}

#[tokio::test]
async fn scope_respects_the_port() {
    let other = TestSite::start(SiteConfig {
        pages: 3,
        ..SiteConfig::default()
    })
    .unwrap();
    let site = TestSite::start(SiteConfig {
        pages: 3,
        extra_root_links: vec![other.url("/")],
        ..SiteConfig::default()
    })
    .unwrap();
    let report = crawl(quick(&site)).await;
    assert_eq!(
        other.stats().total_requests,
        0,
        "another port is another site"
    );
    assert!(report.counters.links_skipped[&SkipReason::Scope] >= 1);
    // Both roots given: both crawled.
    let both = crawl(quick(&site).root(other.url("/"))).await;
    assert_eq!(other.stats().requests("/p/2"), 1);
    assert!(both.completed());
}

#[tokio::test]
async fn malformed_and_non_http_links_are_counted_not_followed() {
    let site = TestSite::start(SiteConfig {
        pages: 5,
        specials: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let report = crawl(quick(&site)).await;
    assert_eq!(site.stats().requests("/p/4"), 1);
    assert!(report.counters.links_skipped[&SkipReason::Malformed] >= 1);
    assert!(
        report.counters.links_skipped[&SkipReason::Scheme] >= 4,
        "mailto, javascript, tel, data"
    );
    let page = record(&report, &site, "/links/malformed");
    assert_eq!(page.kind, OutcomeKind::Html);
}

#[tokio::test]
async fn broken_servers_become_outcomes_and_the_crawl_ends() {
    let site = TestSite::start(SiteConfig {
        pages: 5,
        specials: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let mut fetch = skitter::fetch::FetchConfig {
        read_timeout: Duration::from_millis(300),
        total_timeout: Duration::from_secs(2),
        max_body_size: 1024 * 1024,
        ..Default::default()
    };
    fetch.connect_timeout = Duration::from_secs(2);
    let report = crawl(quick(&site).max_tries(1).fetch_config(fetch)).await;
    assert!(report.completed());
    let kind = |path| record(&report, &site, path).error.as_ref().map(|e| e.kind);
    assert_eq!(kind("/hang"), Some(ErrorKind::Timeout));
    assert!(matches!(
        kind("/slowbody"),
        Some(ErrorKind::Timeout | ErrorKind::Body)
    ));
    assert!(matches!(kind("/truncated"), Some(ErrorKind::Body)));
    // Over the size cap: cut, not dropped.
    let big = record(&report, &site, "/asset/big.bin");
    assert_eq!(
        (big.kind, big.truncated, big.size),
        (OutcomeKind::Other, true, 1 << 20)
    );
    // Undecodable bytes never fail a page: its link is still followed.
    assert_eq!(record(&report, &site, "/badutf8").kind, OutcomeKind::Html);
    assert_eq!(site.stats().requests("/p/3"), 1);
    assert_eq!(
        record(&report, &site, "/latin1").encoding.as_deref(),
        Some("windows-1252")
    );
    assert_eq!(
        record(&report, &site, "/nocontenttype").kind,
        OutcomeKind::Other
    );
}

#[tokio::test]
async fn unreachable_host_is_a_failed_outcome() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let report = crawl(
        Crawler::builder()
            .root(format!("127.0.0.1:{port}"))
            .ignore_robots(true)
            .retry_policy(RetryPolicy {
                max_tries: 2,
                base_delay: Duration::from_millis(1),
                ..Default::default()
            }),
    )
    .await;
    assert_eq!(report.pages.len(), 1);
    assert_eq!(report.pages.to_vec().unwrap()[0].kind, OutcomeKind::Failed);
    assert_eq!(report.pages.to_vec().unwrap()[0].attempts, 2);
    assert_eq!(report.counters.fail_by[&ErrorKind::Connect], 1);
}

#[tokio::test]
async fn include_and_exclude_patterns() {
    let site = TestSite::start(SiteConfig {
        pages: 40,
        fanout: 3,
        ..SiteConfig::default()
    })
    .unwrap();
    let report = crawl(quick(&site).exclude("/p/1$").include("/p/")).await;
    let stats = site.stats();
    assert_eq!(stats.requests("/p/1"), 0);
    assert_eq!(stats.requests("/p/4"), 0, "only reachable through /p/1");
    assert_eq!(stats.requests("/p/2"), 1);
    assert!(report.counters.links_skipped[&SkipReason::Exclude] >= 1);
}

#[tokio::test]
async fn max_depth_limits_the_crawl() {
    let site = TestSite::start(SiteConfig {
        pages: 200,
        fanout: 3,
        ..SiteConfig::default()
    })
    .unwrap();
    let report = crawl(quick(&site).max_depth(2)).await;
    // `/` is depth 0, `/p/0` depth 1, its children /p/1..3 depth 2.
    assert_eq!(site.stats().requests("/p/3"), 1);
    assert_eq!(site.stats().requests("/p/4"), 0);
    assert!(
        report
            .pages
            .iter()
            .map(Result::unwrap)
            .all(|p| p.depth <= 2)
    );
    assert!(report.counters.links_skipped[&SkipReason::Limit] >= 1);
}

#[tokio::test]
async fn cancelling_stops_new_fetches_and_still_reports() {
    let site = TestSite::start(SiteConfig {
        pages: 500,
        fanout: 5,
        latency: Duration::from_millis(30),
        ..SiteConfig::default()
    })
    .unwrap();
    let cancel = CancellationToken::new();
    let crawler = quick(&site).max_tasks(5).build().unwrap();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let report = crawler.run(cancel).await.unwrap();
    assert_eq!(report.stopped, Some(StopReason::Interrupted));
    assert!(report.todo > 0);
    assert!(report.done > 0 && report.done < 501);
    let fetched = site.stats().total_requests;
    assert!(fetched < 501, "stopped early ({fetched} requests)");
}

#[tokio::test]
async fn outcomes_stream_to_a_channel_sink() {
    let site = TestSite::start(SiteConfig {
        pages: 30,
        ..SiteConfig::default()
    })
    .unwrap();
    let (sink, mut rx) = skitter::output::ChannelSink::new(4);
    let collector = tokio::spawn(async move {
        let mut n = 0;
        while rx.recv().await.is_some() {
            n += 1;
        }
        n
    });
    let report = crawl(quick(&site).sink(Box::new(sink))).await;
    assert_eq!(collector.await.unwrap(), report.done);
}

#[tokio::test]
async fn gzip_pages_are_decoded_for_extraction() {
    let site = TestSite::start(SiteConfig {
        pages: 30,
        gzip: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let report = crawl(quick(&site)).await;
    assert_eq!(report.counters.html, 31);
}

#[test]
fn bad_settings_are_typed_errors() {
    assert!(matches!(
        Crawler::builder().build(),
        Err(skitter::BuildError::NoRoots)
    ));
    assert!(matches!(
        Crawler::builder().root("ftp://x/").build(),
        Err(skitter::BuildError::Root { .. })
    ));
    assert!(matches!(
        Crawler::builder().root("x.test").exclude("(").build(),
        Err(skitter::BuildError::Pattern { .. })
    ));
    assert!(matches!(
        Crawler::builder().root("x.test").max_tasks(0).build(),
        Err(skitter::BuildError::Value(_))
    ));
}

/// `--span-hosts` follows links to other hosts and ports; `--exclude-domains`
/// and `--domains` bound it. Site A's index links to site B by the name
/// `localhost` and to site C by `127.0.0.1`.
#[tokio::test]
async fn span_hosts_follows_other_sites_within_the_domain_lists() {
    use skitter::base::scope::ScopeMode;
    let small = || SiteConfig {
        pages: 3,
        ..SiteConfig::default()
    };
    let b = TestSite::start(small()).unwrap();
    let c = TestSite::start(small()).unwrap();
    let b_by_name = format!("http://localhost:{}/", b.addr().port());
    let a = TestSite::start(SiteConfig {
        extra_root_links: vec![b_by_name.clone(), c.url("/")],
        ..small()
    })
    .unwrap();
    // `localhost` is not a root's host: reaching loopback by it needs the flag.
    let fetch = skitter::fetch::FetchConfig {
        private_access: skitter::fetch::PrivateAccess::Allow,
        ..Default::default()
    };
    let run = |b: CrawlerBuilder| crawl(b.fetch_config(fetch.clone()));
    let fetched = |report: &Report, origin: &str| {
        report
            .pages
            .iter()
            .map(Result::unwrap)
            .filter(|p| p.url.as_str().starts_with(origin) && p.kind == OutcomeKind::Html)
            .count()
    };
    let c_origin = c.url("/");

    let strict = run(quick(&a)).await;
    assert_eq!(
        (fetched(&strict, &b_by_name), fetched(&strict, &c_origin)),
        (0, 0)
    );

    let spanning = run(quick(&a).scope_mode(ScopeMode::AnyHost)).await;
    assert!(spanning.completed());
    assert_eq!(
        (
            fetched(&spanning, &b_by_name),
            fetched(&spanning, &c_origin)
        ),
        (4, 4),
        "every page of B and C"
    );

    let no_localhost = run(quick(&a)
        .scope_mode(ScopeMode::AnyHost)
        .exclude_domains(["localhost"]))
    .await;
    assert_eq!(fetched(&no_localhost, &b_by_name), 0);
    assert_eq!(fetched(&no_localhost, &c_origin), 4);
    assert!(no_localhost.counters.links_skipped[&SkipReason::Scope] > 0);

    let only_localhost = run(quick(&a)
        .scope_mode(ScopeMode::AnyHost)
        .domains(["LOCALHOST."]))
    .await;
    assert_eq!(fetched(&only_localhost, &b_by_name), 4);
    assert_eq!(fetched(&only_localhost, &c_origin), 0);
}

/// Names resolve through skitter's own resolver: a name server given in the
/// settings (here a scripted one on loopback), fixed answers (`--resolve`), and
/// DNS failures that are the page's outcome, NXDOMAIN told apart from SERVFAIL.
#[tokio::test]
async fn names_resolve_through_the_configured_server_and_fixed_answers() {
    use skitter::base::scope::ScopeMode;
    use skitter::fetch::dns::DnsConfig;
    use skitter_testsite::dns::{Record, Reply, Responder};
    let b = TestSite::start(SiteConfig {
        pages: 2,
        ..SiteConfig::default()
    })
    .unwrap();
    let port = b.addr().port();
    let a = TestSite::start(SiteConfig {
        pages: 2,
        extra_root_links: vec![
            format!("http://b.test:{port}/"),
            format!("http://gone.test:{port}/"),
            format!("http://broken.test:{port}/"),
        ],
        ..SiteConfig::default()
    })
    .unwrap();
    let server = Responder::builder()
        .name(
            "b.test",
            Reply::Records(vec![Record::A([127, 0, 0, 1].into())]),
        )
        .name("broken.test", Reply::ServFail)
        .fallback(Reply::NxDomain)
        .bind()
        .await
        .unwrap();
    let fetch = skitter::fetch::FetchConfig {
        // b.test is found by a link, so only --allow-private lets it reach loopback.
        private_access: skitter::fetch::PrivateAccess::Allow,
        dns: DnsConfig {
            servers: Some(vec![server.addr()]),
            // The root's host: no server knows it, the fixed answer does.
            overrides: vec![("a.test".into(), [127, 0, 0, 1].into())],
            timeout: Duration::from_millis(500),
            ..DnsConfig::default()
        },
        ..Default::default()
    };
    let root = format!("http://a.test:{}/", a.addr().port());
    let run = |robots: bool| {
        crawl(
            quick(&a)
                .roots([root.clone()])
                .scope_mode(ScopeMode::AnyHost)
                .fetch_config(fetch.clone())
                .ignore_robots(!robots)
                // A regression that waits on a robots.txt shows as a skip, fast.
                .max_outage(Duration::from_secs(1)),
        )
    };
    let report = run(true).await;
    let by_host = |report: &Report, host: &str| -> Vec<PageRecord> {
        report
            .pages
            .iter()
            .map(Result::unwrap)
            .filter(|p| p.url.host_str() == Some(host))
            .collect()
    };
    let html = |host: &str| {
        by_host(&report, host)
            .iter()
            .filter(|p| p.kind == OutcomeKind::Html)
            .count()
    };
    assert_eq!(html("a.test"), 3, "the root site, by its fixed answer");
    assert_eq!(html("b.test"), 3, "the linked site, by the server");
    // NXDOMAIN is an answer: one attempt, and no wait for a robots.txt.
    let gone = by_host(&report, "gone.test");
    assert_eq!(gone.len(), 1);
    let error = gone[0].error.clone().expect("a failure");
    assert_eq!(
        (error.kind, gone[0].attempts),
        (ErrorKind::NoSuchHost, 1),
        "{gone:?}"
    );
    assert!(error.message.contains("NXDOMAIN"), "{}", error.message);
    // SERVFAIL may pass: its robots.txt counts as unavailable (an outage).
    let broken = by_host(&report, "broken.test");
    assert_eq!(
        broken[0].skip,
        Some(skitter::base::outcome::SkipReason::RobotsUnavailable)
    );
    assert!(server.stats().per_name.contains_key("b.test"));
    assert!(!server.stats().per_name.contains_key("a.test"));

    // Without robots.txt, the page itself fails: retried, then `dns`.
    let report = run(false).await;
    let broken = by_host(&report, "broken.test");
    let error = broken[0].error.clone().expect("a failure");
    assert_eq!(
        (error.kind, broken[0].attempts),
        (ErrorKind::Dns, 3),
        "{broken:?}"
    );
    assert!(error.message.contains("SERVFAIL"), "{}", error.message);
}

/// A broad crawl of 30 virtual hosts of 5 pages behind one port under a cap
/// of 4 open connections (`http2` or HTTP/1.1), names resolved by a DNS
/// server that knows the whole domain; checks that it completed and fetched
/// every page of every host exactly once. The site's counters and the name
/// server's, for what each test checks besides.
async fn broad_crawl_of_30_hosts(
    http2: bool,
) -> (
    skitter_testsite::Stats,
    skitter_testsite::dns::ResponderStats,
) {
    use skitter::base::scope::ScopeMode;
    use skitter_testsite::VirtualHosts;
    let site = TestSite::start(SiteConfig {
        pages: 4,
        fanout: 2,
        vhosts: Some(VirtualHosts {
            domain: "sites.test".into(),
            hosts: 30,
            cross_links: 2,
        }),
        ..SiteConfig::default()
    })
    .unwrap();
    let (dns, fetch) = loopback_dns(skitter_testsite::Faults::default()).await;
    let fetch = skitter::fetch::FetchConfig {
        max_connections: Some(4),
        http2_prior_knowledge: http2,
        ..fetch
    };
    let root = format!("http://h0.sites.test:{}/", site.addr().port());
    let report = crawl(
        Crawler::builder()
            .root(root)
            .max_tasks(20)
            .scope_mode(ScopeMode::AnyHost)
            .domains(["sites.test"])
            .fetch_config(fetch),
    )
    .await;
    assert!(report.completed());
    let stats = site.stats();
    assert!(
        stats.missing_pages().is_empty(),
        "{:?}",
        stats.missing_pages()
    );
    for path in stats.page_paths() {
        assert_eq!(stats.requests(&path), 1, "{path}");
    }
    assert_eq!(report.counters.html, 30 * 5);
    (stats, dns.stats())
}

/// A broad crawl of many sites behind one port (the test site's virtual hosts):
/// every page of every host is fetched exactly once, with 30 hosts under a
/// cap of 4 open connections (idle hosts' connections closed to make room).
#[tokio::test]
async fn a_broad_crawl_of_virtual_hosts_fetches_every_page_once() {
    let (_, dns) = broad_crawl_of_30_hosts(false).await;
    // One query (A) per host: concurrent lookups of a name wait for
    // the first, later ones are answered from the cache.
    assert!(dns.queries <= 2 * 30, "{} queries", dns.queries);
}

/// The same broad crawl over HTTP/2 with prior knowledge (h2c): each host's
/// requests share its connection, and the site counts every request as
/// HTTP/2 (it names its virtual host from the request's authority there, as
/// HTTP/2 sends no `Host` header; before, every host's pages were the first
/// host's, and the crawl found one host).
#[tokio::test]
async fn a_broad_crawl_over_h2c_fetches_every_page_once() {
    let (site, _) = broad_crawl_of_30_hosts(true).await;
    assert_eq!(site.http2_requests, site.total_requests);
}

/// Asking for HTTP/1.1 only and for HTTP/2 with prior knowledge at once is a
/// setup error that says so, not a crawl that picks one.
#[test]
fn http1_only_and_h2_prior_knowledge_conflict() {
    let err = skitter::fetch::Fetcher::new(skitter::fetch::FetchConfig {
        http1_only: true,
        http2_prior_knowledge: true,
        ..skitter::fetch::FetchConfig::default()
    })
    .unwrap_err();
    assert!(err.to_string().contains("choose one"), "{err}");
}

/// The same broad crawl on a faulty web, every host faulty on its own: a share
/// of each host's pages answer 503 twice, every host's robots.txt answers 503
/// once, and a share of the host names fail their first six lookups
/// (SERVFAIL: more than one lookup's own attempts absorb). Nothing is lost: every page is fetched, each failing one
/// exactly three times, and the crawl completes. With robots.txt, its fetch
/// meets the failed lookups (and waits them out as an outage); without, the
/// pages do (retried like any transient failure).
#[tokio::test]
async fn a_broad_crawl_on_faulty_hosts_and_flaky_dns_loses_nothing() {
    use skitter::base::scope::ScopeMode;
    use skitter::robots::RobotsPolicy;
    use skitter_testsite::{Faults, VirtualHosts};
    let faults: Faults = "fail=0.3,times=2,robots=1,dns=0.3,dns-times=6,seed=11"
        .parse()
        .unwrap();
    let hosts = 30;
    let names: Vec<String> = (0..hosts).map(|k| format!("h{k}.sites.test")).collect();
    let flaky: Vec<&String> = names.iter().filter(|n| faults.dns_fails(n)).collect();
    assert!(flaky.len() >= 3, "seed 11 must make some names flaky");
    for robots in [true, false] {
        let site = TestSite::start(SiteConfig {
            pages: 4,
            fanout: 2,
            vhosts: Some(VirtualHosts {
                domain: "sites.test".into(),
                hosts,
                cross_links: 2,
            }),
            faults: faults.clone(),
            ..SiteConfig::default()
        })
        .unwrap();
        let (dns, fetch) = loopback_dns(faults.clone()).await;
        let root = format!("http://h0.sites.test:{}/", site.addr().port());
        let report = crawl(
            Crawler::builder()
                .root(root)
                .max_tasks(20)
                // A host's first page may meet both its failed lookups and
                // its own two 503s.
                .retry_policy(RetryPolicy {
                    max_tries: 5,
                    base_delay: Duration::from_millis(5),
                    max_delay: Duration::from_millis(20),
                    max_retry_after: Duration::from_millis(50),
                    ..RetryPolicy::default()
                })
                .scope_mode(ScopeMode::AnyHost)
                .domains(["sites.test"])
                .fetch_config(fetch)
                .ignore_robots(!robots)
                // Real time: the first retry of an unavailable robots.txt comes
                // sooner than the default second, the doubling is the same.
                .robots_policy(RobotsPolicy {
                    retry_unavailable: Duration::from_millis(20),
                    ..RobotsPolicy::default()
                }),
        )
        .await;
        assert!(report.completed(), "robots {robots}");
        let stats = site.stats();
        assert!(
            stats.missing_pages().is_empty(),
            "robots {robots}: {:?}",
            stats.missing_pages()
        );
        let mut failing = 0;
        for path in stats.page_paths() {
            let want = if faults.fails(&path) { 3 } else { 1 };
            failing += usize::from(want == 3);
            assert_eq!(stats.requests(&path), want, "robots {robots}: {path}");
        }
        assert!(failing > 10, "{failing} failing pages");
        assert_eq!(report.counters.html, hosts as u64 * 5, "robots {robots}");
        for name in &names {
            let got = stats.requests(&format!("{name}/robots.txt"));
            if !robots {
                assert_eq!(got, 0, "{name}");
                continue;
            }
            // robots.txt fails once on every host, then is fetched again. A
            // failed page may fetch it once more as a health probe, when the
            // file is over a second old by then (a slow or starved run).
            let prefix = format!("{name}/");
            let failing_pages = stats
                .page_paths()
                .iter()
                .filter(|path| path.starts_with(&prefix) && faults.fails(path))
                .count();
            let failures = 2 * failing_pages as u64;
            assert!(
                (2..=2 + failures).contains(&got),
                "{name}: robots.txt fetched {got} times, {failures} page failures"
            );
        }
        let per_name = dns.stats().per_name;
        for name in &flaky {
            assert!(per_name[*name] > 6, "{name}: {} lookups", per_name[*name]);
        }
    }
}

/// A name whose A query fails (SERVFAIL, one lookup's worth) while its AAAA
/// query answers "no records" is a transient failure, not a host without
/// addresses: hickory reports the AAAA answer, and read as "no such host" it
/// made robots.txt count as absent (everything allowed) and failed the page
/// for good. Its robots.txt is fetched and obeyed, its page fetched.
#[tokio::test]
async fn a_failed_a_query_behind_an_empty_aaaa_answer_is_not_a_missing_host() {
    use skitter_testsite::Faults;
    let site = TestSite::start(SiteConfig {
        pages: 3,
        robots_txt: Some((200, "User-agent: *\nDisallow: /p/0\n".into())),
        ..SiteConfig::default()
    })
    .unwrap();
    // Every name: the first three queries (hickory's A query and its two
    // retries) SERVFAIL; the AAAA query after them finds no AAAA record.
    let faults = Faults {
        dns_fail_rate: 1.0,
        dns_fail_times: 3,
        ..Faults::default()
    };
    let (_dns, fetch) = loopback_dns(faults).await;
    let root = format!("http://flaky.test:{}/", site.addr().port());
    let report = crawl(
        Crawler::builder()
            .root(root)
            .max_tasks(4)
            .fetch_config(fetch),
    )
    .await;
    assert!(report.completed());
    let stats = site.stats();
    assert_eq!(stats.requests("/robots.txt"), 1, "robots.txt fetched");
    assert_eq!(
        stats.requests("/"),
        1,
        "the root fetched: {:?}",
        report.pages
    );
    assert_eq!(stats.requests("/p/0"), 0, "robots.txt obeyed");
}

/// A DNS server on loopback answering every name with 127.0.0.1 (a share of
/// the names flaky, as `faults` says), and request settings that ask it and
/// may reach loopback.
async fn loopback_dns(
    faults: skitter_testsite::Faults,
) -> (
    skitter_testsite::dns::Responder,
    skitter::fetch::FetchConfig,
) {
    use skitter_testsite::dns::{Record, Reply, Responder};
    let dns = Responder::builder()
        .fallback(Reply::Records(vec![Record::A([127, 0, 0, 1].into())]))
        .faults(faults)
        .bind()
        .await
        .unwrap();
    let fetch = skitter::fetch::FetchConfig {
        private_access: skitter::fetch::PrivateAccess::Allow,
        dns: skitter::fetch::dns::DnsConfig {
            servers: Some(vec![dns.addr()]),
            ..skitter::fetch::dns::DnsConfig::default()
        },
        ..Default::default()
    };
    (dns, fetch)
}

#[tokio::test]
async fn a_link_repeated_on_a_page_is_followed_once_and_each_skip_counted() {
    let other = TestSite::start(SiteConfig {
        pages: 1,
        ..SiteConfig::default()
    })
    .unwrap();
    let links = |n: usize, page: &str| {
        let mut links = vec![other.url("/"); n];
        links.extend(vec![format!("{{origin}}{page}"); n]);
        links
    };
    let mut skipped = Vec::new();
    for n in [1, 3] {
        let site = TestSite::start(SiteConfig {
            pages: 3,
            extra_root_links: links(n, "/p/2"),
            ..SiteConfig::default()
        })
        .unwrap();
        let report = crawl(quick(&site)).await;
        // Followed once, however often the page links to it.
        assert_eq!(site.stats().requests("/p/2"), 1);
        skipped.push(report.counters.links_skipped[&SkipReason::Scope]);
    }
    // Each occurrence of the off-site link is a skip of its own.
    assert_eq!(skipped[1] - skipped[0], 2, "{skipped:?}");
    assert_eq!(other.stats().total_requests, 0);
}
