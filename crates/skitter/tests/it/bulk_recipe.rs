//! Requests that depend on other responses, through the library: values
//! read from one response of an item name its later requests and its file
//! (the flags downloader), and every way a value can be missing fails its
//! item alone, with a message naming the value and the URL.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use skitter::bulk::{self, BulkFetcher, BulkFetcherBuilder, Summary};
use skitter_testsite::flags::{self, BROKEN_JSON, NO_COUNTRY, NO_IMAGE, NO_METADATA};
use skitter_testsite::{RunningSite, SiteConfig, TestSite};
use tokio_util::sync::CancellationToken;

fn site() -> RunningSite {
    TestSite::start(SiteConfig::default()).expect("test site starts")
}

/// Runs `b` over `patterns`; the summary and each item's line by its URL.
pub(crate) async fn run(
    b: BulkFetcherBuilder,
    patterns: &[String],
) -> (Summary, BTreeMap<String, String>) {
    let lines = Arc::new(Mutex::new(BTreeMap::new()));
    let seen = lines.clone();
    let fetcher = b
        .on_item(move |r| {
            let url = r.url.as_ref().map(|u| u.to_string()).unwrap_or_default();
            seen.lock().unwrap().insert(url, r.to_string());
        })
        .build()
        .expect("valid recipe");
    let items = bulk::from_args(patterns.to_vec(), true);
    let summary = fetcher.run(items, CancellationToken::new()).await;
    let lines = lines.lock().unwrap().clone();
    (summary, lines)
}

fn flags_recipe(dir: &std::path::Path) -> BulkFetcherBuilder {
    BulkFetcher::builder()
        .value("country=json:/country")
        .then("{1}.gif")
        .output_dir(dir)
        .name_template("{country}.gif")
}

#[tokio::test]
async fn each_flag_is_saved_under_its_country_name() {
    let site = site();
    let dir = tempfile::tempdir().unwrap();
    let pattern = site.url("/flags/{br,cn,de,fr,in,jp}/metadata.json");
    let (summary, lines) = run(flags_recipe(dir.path()), &[pattern]).await;
    assert_eq!(
        (summary.ok, summary.failed(), summary.files),
        (6, 0, 6),
        "{lines:?}"
    );
    for (code, country) in flags::FLAGS {
        let saved = std::fs::read(dir.path().join(format!("{country}.gif"))).unwrap();
        assert_eq!(saved, flags::image(code), "{country}");
    }
    // Two requests per item, the metadata first.
    assert_eq!(site.stats().total_requests, 12);
    // Again with --skip-existing: the metadata names the file, which is
    // there, so no image is fetched.
    let again = flags_recipe(dir.path()).skip_existing(true);
    let pattern = site.url("/flags/{br,cn,de,fr,in,jp}/metadata.json");
    let (summary, _) = run(again, &[pattern]).await;
    assert_eq!(summary.skipped_existing, 6);
    assert_eq!(site.stats().requests("/flags/br/br.gif"), 1);
}

#[tokio::test]
async fn each_failure_is_reported_for_its_item_alone() {
    let site = site();
    let dir = tempfile::tempdir().unwrap();
    let codes = [NO_METADATA, NO_IMAGE, BROKEN_JSON, NO_COUNTRY, "br"].join(",");
    let pattern = site.url(&format!("/flags/{{{codes}}}/metadata.json"));
    let (summary, lines) = run(flags_recipe(dir.path()), &[pattern]).await;
    let line = |code: &str| lines[&site.url(&format!("/flags/{code}/metadata.json"))].clone();
    assert_eq!(
        (summary.ok, summary.not_found, summary.value_errors),
        (1, 2, 2),
        "{lines:?}"
    );
    assert!(
        line(NO_METADATA).ends_with(": HTTP 404"),
        "{}",
        line(NO_METADATA)
    );
    assert!(line(NO_IMAGE).ends_with(": HTTP 404"), "{}", line(NO_IMAGE));
    let broken = line(BROKEN_JSON);
    assert!(
        broken.contains("value country (json:/country) of http://"),
        "{broken}"
    );
    assert!(
        broken.contains("/flags/xc/metadata.json: the body is not JSON"),
        "{broken}"
    );
    let missing = line(NO_COUNTRY);
    assert!(
        missing.contains("value country (json:/country) of http://"),
        "{missing}"
    );
    assert!(
        missing.ends_with("/flags/xd/metadata.json: missing"),
        "{missing}"
    );
    // The image of an item whose name could not be read is never fetched.
    assert_eq!(site.stats().requests("/flags/xc/xc.gif"), 0);
    assert!(dir.path().join("Brazil.gif").exists());
    let text = summary.to_string();
    assert!(
        text.contains("value not read                   2"),
        "{text}"
    );
}

#[tokio::test]
async fn a_value_is_put_into_the_next_url_percent_encoded() {
    let site = site();
    let dir = tempfile::tempdir().unwrap();
    // The second step asks for /flags/<the metadata's code>/<code>.gif
    // through values alone, and a header names the file.
    let b = BulkFetcher::builder()
        .value("code=json:/code")
        .value("2:kind=header:content-type")
        .then("../{code}/{code}.gif")
        .then("/flags/{code}/metadata.json?kind={kind}")
        .output_dir(dir.path())
        .name_template("{code}-{kind}.json");
    let (summary, lines) = run(b, &[site.url("/flags/jp/metadata.json")]).await;
    assert_eq!(summary.ok, 1, "{lines:?}");
    assert!(dir.path().join("jp-image%2Fgif.json").exists(), "{lines:?}");
    assert_eq!(
        site.stats()
            .requests("/flags/jp/metadata.json?kind=image%2Fgif"),
        1
    );
}

#[tokio::test]
async fn recipes_that_cannot_work_are_refused_by_build() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            flags_recipe(dir.path()).name_template("{nope}.gif"),
            "unknown placeholder",
        ),
        (
            BulkFetcher::builder().then("{country}.gif"),
            "unknown placeholder",
        ),
        (
            BulkFetcher::builder()
                .next_page("json:/next")
                .output_dir(dir.path())
                .name_template("x.json"),
            "{page}",
        ),
    ];
    for (b, words) in cases {
        match b.build() {
            Err(e) => assert!(e.to_string().contains(words), "{e}"),
            Ok(_) => panic!("{words}: accepted"),
        }
    }
}

#[tokio::test]
async fn every_step_is_archived() {
    let site = site();
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("flags.warc");
    let sink = skitter::output::WarcSink::create(&warc, Default::default()).unwrap();
    let b = flags_recipe(&dir.path().join("flags")).sink(Box::new(sink));
    let (summary, _) = run(b, &[site.url("/flags/{br,cn}/metadata.json")]).await;
    assert_eq!(summary.ok, 2);
    let text = String::from_utf8_lossy(&std::fs::read(&warc).unwrap()).into_owned();
    for path in [
        "br/metadata.json",
        "br/br.gif",
        "cn/metadata.json",
        "cn/cn.gif",
    ] {
        let uri = format!("WARC-Target-URI: {}", site.url(&format!("/flags/{path}")));
        assert_eq!(
            text.matches(&uri).count(),
            2,
            "{path}: a request and a response"
        );
    }
}

#[tokio::test]
async fn later_steps_are_made_on_behalf_of_the_input() {
    // The second step is on another service of the same machine: like a
    // redirect there, it is refused (only the input's host and port may be
    // private), so no response can lead the fetcher to it either.
    let site = site();
    let other = TestSite::start(SiteConfig::default()).unwrap();
    let b = BulkFetcher::builder()
        .value("code=json:/code")
        .then(other.url("/flags/{code}/{code}.gif"));
    let (summary, lines) = run(b, &[site.url("/flags/br/metadata.json")]).await;
    assert_eq!(summary.failed(), 1, "{lines:?}");
    let line = lines.values().next().unwrap();
    assert!(line.contains("blocked"), "{line}");
    assert_eq!(other.stats().total_requests, 0);
}
