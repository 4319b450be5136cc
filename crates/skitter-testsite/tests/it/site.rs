//! The generated site end to end: reachability, counters, concurrency, h2c,
//! gzip and shutdown, through a real HTTP client on loopback.

use std::collections::{BTreeSet, VecDeque};
use std::io::Read;
use std::time::Duration;

use hyper::{StatusCode, Version};
use skitter_testsite::{SiteConfig, TestSite};

use crate::support::{get, get_with, h1, h2c, hrefs, wait_for_requests};

#[tokio::test]
async fn a_breadth_first_crawl_fetches_every_page_once() {
    let config = SiteConfig {
        pages: 120,
        fanout: 4,
        page_size: 1500,
        ..SiteConfig::default()
    };
    let site = TestSite::start(config).unwrap();
    let client = h1();
    let mut seen = BTreeSet::from(["/".to_string()]);
    let mut queue = VecDeque::from(["/".to_string()]);
    while let Some(path) = queue.pop_front() {
        let got = get(&client, &site.url(&path)).await;
        assert_eq!(got.status, StatusCode::OK, "{path}");
        assert_eq!(got.header("content-type"), Some("text/html; charset=utf-8"));
        if path != "/" {
            assert_eq!(got.body.len(), 1500, "{path} padded to page_size");
        }
        // Only the canonical spelling; the site's other spellings are for the crawler's normaliser.
        for link in hrefs(&got.text()) {
            let canonical = link == "/"
                || link
                    .strip_prefix("/p/")
                    .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
            if canonical && seen.insert(link.clone()) {
                queue.push_back(link);
            }
        }
    }
    let stats = site.stats();
    assert!(
        stats.missing_pages().is_empty(),
        "missing: {:?}",
        stats.missing_pages()
    );
    assert_eq!(stats.total_requests, 121);
    assert_eq!(seen.len(), 121);
    assert!(stats.page_paths().iter().all(|p| stats.requests(p) == 1));
    assert_eq!(stats.in_flight_peak, 1);
    site.shutdown().await;
}

#[tokio::test]
async fn spelled_links_resolve_to_one_page_and_the_case_variant_is_missing() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let client = h1();
    let html = get(&client, &site.url("/p/0")).await.text();
    let links = hrefs(&html);
    let port = site.addr().port();
    for want in ["/p/7", "/p/./7", "/x/../p/7", "7", "./7", "../p/7", "/P/7"] {
        assert!(links.iter().any(|l| l == want), "{want} missing");
    }
    assert!(links.contains(&format!("http://127.0.0.1:{port}/p/7#frag")));
    assert!(links.contains(&format!("HTTP://127.0.0.1:{port}/p/7")));
    assert!(links.contains(&format!("http://127.0.0.1:{port}/p/%37")));
    assert_eq!(
        get(&client, &site.url("/P/7")).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        get(&client, &site.url("/p/07")).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        get(&client, &site.url("/p/100")).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        get(&client, &site.url("/nowhere")).await.status,
        StatusCode::NOT_FOUND
    );
    site.shutdown().await;
}

#[tokio::test]
async fn counts_each_exact_path_and_query() {
    let config = SiteConfig {
        record_starts: true,
        ..SiteConfig::default()
    };
    let site = TestSite::start(config).unwrap();
    let client = h1();
    for path in ["/p/1", "/p/1", "/p/2", "/session?sid=3", "/missing?x"] {
        get(&client, &site.url(path)).await;
    }
    let stats = site.stats();
    assert_eq!(stats.total_requests, 5);
    assert_eq!(stats.requests("/p/1"), 2);
    assert_eq!(stats.requests("/p/2"), 1);
    assert_eq!(stats.requests("/session?sid=3"), 1);
    assert_eq!(stats.requests("/session"), 0);
    assert_eq!(stats.requests("/missing?x"), 1);
    assert_eq!(stats.paths().len(), 4);
    let starts = stats.starts("/p/");
    assert_eq!(starts.len(), 3);
    assert!(starts.windows(2).all(|w| w[0] <= w[1]));
    assert!(site.stats().starts("/session").len() == 1);
    site.shutdown().await;
}

#[tokio::test]
async fn in_flight_peak_counts_requests_waiting_out_the_latency() {
    // An hour of latency: no request can finish, so the peak is exactly the
    // number sent, without depending on timing.
    let config = SiteConfig {
        latency: Duration::from_secs(3600),
        ..SiteConfig::default()
    };
    let site = TestSite::start(config).unwrap();
    let client = h1();
    let mut pending = Vec::new();
    for i in 0..6 {
        let (client, url) = (client.clone(), site.url(&format!("/p/{i}")));
        pending.push(tokio::spawn(
            async move { get_with(&client, &url, &[]).await },
        ));
    }
    wait_for_requests(&site, 6).await;
    assert_eq!(site.stats().in_flight_peak, 6);
    site.shutdown().await;
    for task in pending {
        assert!(
            task.await.unwrap().is_err(),
            "shutdown must abort waiting requests"
        );
    }
}

#[tokio::test]
async fn in_flight_lasts_until_the_body_is_handed_over() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let client = h1();
    let (c, url) = (client.clone(), site.url("/slowbody"));
    let stalled = tokio::spawn(async move { get_with(&c, &url, &[]).await });
    wait_for_requests(&site, 1).await;
    // /slowbody's headers went out long ago; it is still in flight.
    get(&client, &site.url("/p/1")).await;
    assert_eq!(site.stats().in_flight_peak, 2);
    site.shutdown().await;
    assert!(stalled.await.unwrap().is_err());
}

#[tokio::test]
async fn serves_h2c_with_prior_knowledge() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let client = h2c();
    let got = get(&client, &site.url("/p/3")).await;
    assert_eq!((got.status, got.version), (StatusCode::OK, Version::HTTP_2));
    assert!(got.text().contains("<h1>Page 3</h1>"));
    let got = get(&client, &site.url("/asset/big.bin")).await;
    assert_eq!(got.body.len() as u64, skitter_testsite::BIG_BIN_LEN);
    assert_eq!(site.stats().requests("/p/3"), 1);
    site.shutdown().await;
}

#[tokio::test]
async fn gzips_html_only_when_accepted() {
    let site = TestSite::start(SiteConfig {
        gzip: true,
        ..SiteConfig::default()
    })
    .unwrap();
    let client = h1();
    let plain = get(&client, &site.url("/p/5")).await;
    assert_eq!(plain.header("content-encoding"), None);
    let zipped = get_with(
        &client,
        &site.url("/p/5"),
        &[("accept-encoding", "br, gzip")],
    )
    .await
    .unwrap();
    assert_eq!(zipped.header("content-encoding"), Some("gzip"));
    assert_eq!(zipped.header("vary"), Some("accept-encoding"));
    assert!(zipped.body.len() < plain.body.len());
    let mut unzipped = Vec::new();
    flate2::read::GzDecoder::new(&zipped.body[..])
        .read_to_end(&mut unzipped)
        .unwrap();
    assert_eq!(unzipped, plain.body);
    let refused = get_with(
        &client,
        &site.url("/p/5"),
        &[("accept-encoding", "gzip;q=0")],
    )
    .await
    .unwrap();
    assert_eq!(refused.body, plain.body);
    let png = get_with(
        &client,
        &site.url("/asset/logo.png"),
        &[("accept-encoding", "gzip")],
    )
    .await
    .unwrap();
    assert_eq!(png.header("content-encoding"), None);
    site.shutdown().await;
}

#[tokio::test]
async fn shutdown_ends_a_hanging_request() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let client = h1();
    let url = site.url("/hang");
    let hanging = tokio::spawn(async move { get_with(&client, &url, &[]).await });
    wait_for_requests(&site, 1).await;
    tokio::time::timeout(Duration::from_secs(30), site.shutdown())
        .await
        .expect("shutdown hung");
    assert!(hanging.await.unwrap().is_err());
}

#[tokio::test]
async fn dropping_the_site_ends_a_hanging_request() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let client = h1();
    let url = site.url("/hang");
    let hanging = tokio::spawn(async move { get_with(&client, &url, &[]).await });
    wait_for_requests(&site, 1).await;
    drop(site);
    let result = tokio::time::timeout(Duration::from_secs(30), hanging)
        .await
        .expect("still hanging");
    assert!(result.unwrap().is_err());
}

#[tokio::test]
async fn root_robots_and_sitemap_follow_the_config() {
    let config = SiteConfig {
        pages: 2,
        robots_txt: Some((
            200,
            "User-agent: *\nDisallow: /p/1\nSitemap: {origin}/sitemap.xml\n".into(),
        )),
        sitemap_xml: Some("<urlset><url><loc>{origin}/p/1</loc></url></urlset>".into()),
        extra_root_links: vec!["{origin}/other".into(), "http://127.0.0.1:1/".into()],
        specials: true,
        traps: true,
        ..SiteConfig::default()
    };
    let site = TestSite::start(config).unwrap();
    let client = h1();
    let root = hrefs(&get(&client, &site.url("/")).await.text());
    assert_eq!(
        root[..4],
        [
            "/p/0".to_string(),
            site.url("/other"),
            "http://127.0.0.1:1/".into(),
            "/specials".into()
        ]
    );
    assert!(root.contains(&"/cal/2024/1".to_string()));
    let robots = get(&client, &site.url("/robots.txt")).await;
    assert!(
        robots
            .text()
            .contains(&format!("Sitemap: {}/sitemap.xml", site.origin()))
    );
    let sitemap = get(&client, &site.url("/sitemap.xml")).await;
    assert!(sitemap.text().contains(&site.url("/p/1")));
    let plain = TestSite::start(SiteConfig::default()).unwrap();
    assert_eq!(
        get(&client, &plain.url("/robots.txt")).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        get(&client, &plain.url("/sitemap.xml")).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(hrefs(&get(&client, &plain.url("/")).await.text()), ["/p/0"]);
    site.shutdown().await;
    plain.shutdown().await;
}
