//! `skitter::check` against the test site's `/check/` section: every planted
//! broken link reported with its page and line (links in HTML, a stylesheet
//! and a `Link` header), nothing else; flaky hosts
//! and permanent redirects listed apart; `offline`, `accept`, `remap` and
//! the cache; the results streamed as they are decided.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use skitter::check::{CheckReport, LinkChecker, LinkState, Problem};
use skitter::settings::{CheckSettings, CrawlSettings};
use skitter_testsite::check::{EXTERNAL_HOSTS, Planted, flaky, moved, planted};
use skitter_testsite::{RunningSite, SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

/// Settings for a check of the section: the external names on loopback,
/// short timeouts and waits so the slow host fails fast.
fn settings(site: &RunningSite) -> CheckSettings {
    let mut crawl = CrawlSettings::new([site.url("/check/")]);
    let fetch = &mut crawl.request.fetch;
    fetch.total_timeout = Duration::from_millis(800);
    fetch.read_timeout = Duration::from_millis(800);
    fetch.dns.overrides = EXTERNAL_HOSTS
        .iter()
        .map(|h| (h.to_string(), IpAddr::V4(Ipv4Addr::LOCALHOST)))
        .collect();
    crawl.request.retry.max_tries = 2;
    crawl.request.retry.base_delay = Duration::from_millis(10);
    crawl.request.retry.max_retry_after = Duration::from_secs(1);
    CheckSettings::new(crawl)
}

async fn check(settings: CheckSettings) -> CheckReport {
    LinkChecker::from_settings(settings)
        .expect("build")
        .run(CancellationToken::new())
        .await
        .expect("check")
}

/// The reason word a planted link uses for a problem.
fn reason(problem: &Problem) -> String {
    match problem {
        Problem::Status { status } => status.to_string(),
        Problem::Failed { error, .. } => error.to_string(),
        Problem::RedirectLoop => "loop".into(),
        Problem::TooManyRedirects => "too_many_redirects".into(),
        Problem::MissingFragment { .. } => "fragment".into(),
    }
}

/// Every broken link at every place, as the planted list has them.
fn found(report: &CheckReport) -> Vec<(String, u32, String, String)> {
    let mut out = Vec::new();
    for link in report.broken() {
        let LinkState::Broken(problem) = &link.state else {
            unreachable!()
        };
        for at in &link.occurrences {
            out.push((
                at.page.path().to_string(),
                at.line,
                link.url.to_string(),
                reason(problem),
            ));
        }
    }
    out.sort();
    out
}

fn expected(list: Vec<Planted>) -> Vec<(String, u32, String, String)> {
    let mut out: Vec<_> = list
        .into_iter()
        .map(|p| (p.page.to_string(), p.line, p.url, p.reason.to_string()))
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn every_planted_breakage_and_nothing_else() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let port = site.addr().port();
    let report = check(settings(&site)).await;
    assert_eq!(found(&report), expected(planted(port)), "{report:#?}");
    let mut got_flaky: Vec<String> = report.flaky().map(|l| l.url.to_string()).collect();
    got_flaky.sort();
    assert_eq!(got_flaky, flaky(port));
    let mut got_moved: Vec<(String, String)> = report
        .moved()
        .map(|l| (l.url.to_string(), l.moved_to.as_ref().unwrap().to_string()))
        .collect();
    got_moved.sort();
    assert_eq!(got_moved, moved(port));
    assert_eq!(report.summary.not_http, 1, "the mailto: link");
    assert_eq!(report.summary.broken, planted(port).len() as u64);
    // The host refusing HEAD was asked again with GET, and works.
    let nohead = report
        .links
        .iter()
        .find(|l| l.url.host_str() == Some("nohead.check.test"))
        .unwrap();
    assert_eq!(nohead.state, LinkState::Ok);
}

#[tokio::test]
async fn offline_checks_only_the_site_and_accept_widens_what_works() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let port = site.addr().port();
    let mut s = settings(&site);
    s.offline = true;
    s.accept = "200..=299,404".parse().unwrap();
    let report = check(s).await;
    let want: Vec<Planted> = planted(port)
        .into_iter()
        .filter(|p| p.url.starts_with("http://127.0.0.1") && p.reason != "404")
        .collect();
    assert_eq!(found(&report), expected(want));
    assert!(
        report
            .links
            .iter()
            .all(|l| l.internal || l.state == LinkState::Skipped("offline".into()))
    );
    // Nothing was asked of the other hosts.
    assert!(
        site.stats()
            .paths()
            .keys()
            .all(|p| !p.contains("/check/ext/"))
    );
}

#[tokio::test]
async fn remapped_links_are_checked_where_they_point_now() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let port = site.addr().port();
    let mut s = settings(&site);
    // The missing page elsewhere is checked as the one that works.
    s.remap = vec![(
        format!("http://ext.check.test:{port}/check/ext/missing"),
        format!("http://ext.check.test:{port}/check/ext/ok"),
    )];
    s.crawl.exclude = vec!["slow|down".into()];
    let report = check(s).await;
    let want: Vec<Planted> = planted(port)
        .into_iter()
        .filter(|p| {
            !p.url.contains("/ext/missing") && !p.url.contains("slow") && !p.url.contains("down")
        })
        .collect();
    assert_eq!(found(&report), expected(want));
    let skipped = report
        .links
        .iter()
        .filter(|l| l.state == LinkState::Skipped("excluded".into()))
        .count();
    assert_eq!(skipped, 2);
}

#[tokio::test]
async fn a_cache_spares_the_other_hosts_a_second_time() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut s = settings(&site);
    s.cache = Some(dir.path().join("links.json"));
    s.crawl.exclude = vec!["slow|down".into()];
    let first = check(s.clone()).await;
    assert_eq!(first.summary.cached, 0);
    let asked = site.stats().total_requests;
    let second = check(s).await;
    assert_eq!(found(&second), found(&first));
    // The working external links without fragments: no-HEAD, flaky,
    // rate-limited, moved (its target is asked for its fragments).
    assert_eq!(second.summary.cached, 4, "{second:#?}");
    assert!(
        site.stats().total_requests > asked,
        "the site itself is crawled again"
    );
    assert_eq!(
        site.stats().requests("/check/ext/nohead"),
        2,
        "HEAD then GET, in the first run only"
    );
}

#[tokio::test]
async fn a_docs_folder_is_checked_from_disk() {
    use skitter_testsite::check::{DOCS_BASE, write_docs_tree};
    let dir = tempfile::tempdir().unwrap();
    let want = write_docs_tree(dir.path()).unwrap();
    let base = url::Url::parse(DOCS_BASE).unwrap();
    let settings = CheckSettings::new(CrawlSettings::default());
    let report =
        skitter::check::check_folder(dir.path(), &base, settings, CancellationToken::new())
            .await
            .expect("check");
    assert_eq!(found(&report), expected(want), "{report:#?}");
    assert!(report.links.iter().all(|l| l.internal));
}

/// The results streamed while the check runs: every link of the report
/// once, each decided as the report decides it (its places may be fewer:
/// those known when it was decided).
#[tokio::test]
async fn streamed_results_are_the_reports_each_once() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let checker = LinkChecker::from_settings(settings(&site)).expect("build");
    let (tx, mut rx) = tokio::sync::mpsc::channel::<skitter::check::LinkResult>(4);
    let reading = async move {
        let mut streamed = std::collections::BTreeMap::new();
        while let Some(result) = rx.recv().await {
            let url = result.url.to_string();
            assert!(
                streamed.insert(url.clone(), result).is_none(),
                "{url} sent twice"
            );
        }
        streamed
    };
    let (report, streamed) =
        tokio::join!(checker.run_streaming(CancellationToken::new(), tx), reading);
    let report = report.expect("check");
    assert_eq!(streamed.len(), report.links.len());
    for link in &report.links {
        let sent = &streamed[link.url.as_str()];
        assert_eq!(
            (&sent.state, sent.status, &sent.moved_to),
            (&link.state, link.status, &link.moved_to),
            "{}",
            link.url
        );
        assert!(
            sent.occurrences
                .iter()
                .all(|o| link.occurrences.contains(o))
        );
    }
}
