//! Pagination through the library: each way an API names its next page
//! followed to the end, the page limit, a chain that loops stopped with a
//! note, pages of one chain in order while chains run side by side, and the
//! records of every page extracted like any page's.

use skitter::bulk::{BulkFetcher, ChainStop};
use skitter::output::JsonlSink;
use skitter_testsite::{RunningSite, SiteConfig, TestSite};

use crate::bulk_recipe::run;

fn site(config: SiteConfig) -> RunningSite {
    TestSite::start(config).expect("test site starts")
}

#[tokio::test]
async fn each_style_is_followed_to_its_last_page() {
    let site = site(SiteConfig::default());
    let cases = [
        ("link", "link:next"),
        ("json", "json:/next"),
        ("cursor", "after=json:/cursor"),
        ("html", "css:a[rel=next]@href"),
    ];
    for (style, rule) in cases {
        let dir = tempfile::tempdir().unwrap();
        let b = BulkFetcher::builder()
            .next_page(rule)
            .output_dir(dir.path())
            .name_template("{page}.body");
        let (summary, lines) = run(b, &[site.url(&format!("/paged/{style}/7/5"))]).await;
        assert_eq!(
            (summary.ok, summary.pages, summary.files),
            (1, 5, 5),
            "{style}: {lines:?}"
        );
        let last = std::fs::read_to_string(dir.path().join("5.body")).unwrap();
        assert!(last.contains("7-5-3"), "{style}: {last}");
        assert!(!dir.path().join("6.body").exists(), "{style}");
    }
}

#[tokio::test]
async fn max_pages_cuts_a_chain_and_a_loop_stops_it_with_a_note() {
    let site = site(SiteConfig::default());
    let b = BulkFetcher::builder().next_page("json:/next").max_pages(3);
    let (summary, lines) = run(b, &[site.url("/paged/json/1/10")]).await;
    assert_eq!((summary.pages, summary.cut_chains), (3, 1), "{lines:?}");
    assert_eq!(site.stats().requests("/paged/json/1/10?page=4"), 0);

    let b = BulkFetcher::builder().next_page("json:/next");
    let start = site.url("/paged/loop/2/4?page=1");
    let (summary, lines) = run(b, std::slice::from_ref(&start)).await;
    assert_eq!(
        (summary.ok, summary.pages, summary.loops),
        (1, 4, 1),
        "{lines:?}"
    );
    let line = &lines[&start];
    let note = ChainStop::Loop(start.parse().unwrap()).to_string();
    assert!(line.contains(&note), "{line}");
    assert_eq!(site.stats().requests("/paged/loop/2/4?page=1"), 1);
}

#[tokio::test]
async fn chains_run_side_by_side_and_records_reach_the_outputs() {
    let site = site(SiteConfig {
        latency: std::time::Duration::from_millis(20),
        ..SiteConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("out.jsonl");
    let b = BulkFetcher::builder()
        .per_host(8)
        .next_page("link:next")
        .extract(skitter::parse::items::Rules::from_fields(&["id=json:/items/0/id"]).unwrap())
        .sink(Box::new(JsonlSink::create(&jsonl).unwrap()));
    let (summary, lines) = run(b, &[site.url("/paged/link/[1-6]/4")]).await;
    assert_eq!(
        (summary.ok, summary.pages, summary.items),
        (6, 24, 24),
        "{lines:?}"
    );
    // Each page depends on the one before: a chain has one request in
    // flight, the site saw several at once.
    assert!(site.stats().in_flight_peak > 1);
    let text = std::fs::read_to_string(&jsonl).unwrap();
    for chain in 1..=6 {
        for page in 1..=4 {
            assert!(
                text.contains(&format!("\"{chain}-{page}-1\"")),
                "{chain}-{page}"
            );
        }
    }
}

#[tokio::test]
async fn pages_go_through_the_proxy_pool() {
    use skitter::fetch::{FetchConfig, Rotation};
    use skitter_testsite::{ProxyMode, TestProxy};
    let site = site(SiteConfig::default());
    let proxies: Vec<TestProxy> = (0..2)
        .map(|_| TestProxy::http(ProxyMode::Good, None).unwrap())
        .collect();
    let fetch = FetchConfig {
        proxy_list: proxies.iter().map(TestProxy::url).collect(),
        proxy_rotation: Rotation::RoundRobin,
        ..FetchConfig::default()
    };
    let b = BulkFetcher::builder()
        .fetch_config(fetch)
        .next_page("link:next");
    let (summary, lines) = run(b, &[site.url("/paged/link/3/6")]).await;
    assert_eq!((summary.ok, summary.pages), (1, 6), "{lines:?}");
    let served: Vec<u64> = proxies.iter().map(TestProxy::served).collect();
    assert_eq!(served, [3, 3]);
}

/// An output that fails on the page whose URL ends with `at`, stopping the
/// run there as a kill would.
struct FailAt(&'static str);

#[async_trait::async_trait]
impl skitter::output::Sink for FailAt {
    async fn record(
        &mut self,
        page: &skitter::output::Page,
    ) -> Result<(), skitter::output::SinkError> {
        if page.record.url.as_str().ends_with(self.0) {
            return Err(skitter::output::SinkError::new("fail-at", "stopped here"));
        }
        Ok(())
    }

    async fn finish(&mut self) -> Result<skitter::output::SinkSummary, skitter::output::SinkError> {
        Ok(skitter::output::SinkSummary::default())
    }
}

#[tokio::test]
async fn a_resumed_run_continues_a_chain_from_its_last_page() {
    // The failing output stops the first run from its own task, while the
    // chain goes on fetching: without a latency the chain could reach its
    // last page before the stop was seen (it did, once, on a loaded machine),
    // and the item would count as done. 150 ms a response leaves the stop
    // five pages' time (750 ms) to land: 30 ms (150 ms) was not enough once
    // beside a full suite and other crawls on two cores.
    let site = site(SiteConfig {
        latency: std::time::Duration::from_millis(150),
        ..SiteConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("fetch.state");
    // Two steps: a value from the metadata, then a chain of 8 pages.
    let recipe = || {
        BulkFetcher::builder()
            .value("code=json:/code")
            .then("/paged/json/5/8?page=1&c={code}")
            .next_page("json:/next")
            .state(&state)
    };
    let items = [
        site.url("/flags/br/metadata.json"),
        site.url("/flags/cn/metadata.json"),
    ];
    let b = recipe().sink(Box::new(FailAt("/paged/json/5/8?page=3")));
    let (first, _) = run(b, &items[..1]).await;
    assert!(first.stopped.is_some(), "{first}");
    assert_eq!(first.ok, 0);
    let (second, lines) = run(recipe(), &items).await;
    assert_eq!((second.ok, second.failed()), (2, 0), "{lines:?}");
    // The metadata of the resumed item is not fetched again, and no page twice.
    assert_eq!(site.stats().requests("/flags/br/metadata.json"), 1);
    assert_eq!(site.stats().requests("/paged/json/5/8?page=1&c=br"), 1);
    for page in 2..=8 {
        let path = format!("/paged/json/5/8?page={page}");
        // Each page once for br and once for cn.
        assert_eq!(site.stats().requests(&path), 2, "{path}");
    }
    assert!(
        second.pages < 16,
        "the first item resumed: {}",
        second.pages
    );
    // A third run finds both done.
    let (third, _) = run(recipe(), &items).await;
    assert_eq!(third.skipped_done, 2);
    assert_eq!(site.stats().requests("/flags/cn/metadata.json"), 1);
}
