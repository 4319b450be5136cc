//! Pages that change between passes: versions, validators, 304s, gone pages
//! and new pages, through a real HTTP client on loopback.

use hyper::StatusCode;
use skitter_testsite::{SiteConfig, TestSite, ValidatorMode, Versions};

use crate::support::{get, get_with, h1, hrefs};

fn config(validators: ValidatorMode, change: f64, gone: f64) -> SiteConfig {
    SiteConfig {
        pages: 200,
        versions: Some(Versions {
            change,
            gone,
            seed: 3,
            validators,
        }),
        ..SiteConfig::default()
    }
}

#[tokio::test]
async fn an_unchanged_page_answers_304_and_a_changed_one_its_new_body() {
    let site = TestSite::start(config(ValidatorMode::Honour, 0.5, 0.0)).unwrap();
    let client = h1();
    let mut tags = Vec::new();
    for i in 0..200 {
        let got = get(&client, &site.url(&format!("/p/{i}"))).await;
        assert_eq!(got.status, StatusCode::OK);
        let etag = got.header("etag").expect("an ETag").to_string();
        assert!(got.header("last-modified").is_some());
        tags.push((etag, got.header("last-modified").unwrap().to_string()));
    }
    assert_eq!(site.next_pass(), 1);
    let (mut same, mut changed) = (0, 0);
    for (i, (etag, modified)) in tags.iter().enumerate() {
        let url = site.url(&format!("/p/{i}"));
        let by_tag = get_with(&client, &url, &[("if-none-match", etag)])
            .await
            .unwrap();
        let by_date = get_with(&client, &url, &[("if-modified-since", modified)])
            .await
            .unwrap();
        assert_eq!(by_tag.status, by_date.status, "{url}");
        match by_tag.status {
            StatusCode::NOT_MODIFIED => {
                assert!(by_tag.body.is_empty());
                same += 1;
            }
            StatusCode::OK => {
                assert_ne!(by_tag.header("etag"), Some(etag.as_str()));
                let new = hrefs(&by_tag.text())
                    .into_iter()
                    .find(|h| h.starts_with("/n/"))
                    .expect("a changed page links a new page");
                assert_eq!(get(&client, &site.url(&new)).await.status, StatusCode::OK);
                changed += 1;
            }
            other => panic!("{url}: {other}"),
        }
    }
    assert!(same > 50 && changed > 50, "{same} same, {changed} changed");
    assert_eq!(site.stats().not_modified, 2 * same);
}

#[tokio::test]
async fn ignoring_and_absent_validators_always_send_the_body() {
    for mode in [ValidatorMode::Ignore, ValidatorMode::Absent] {
        let site = TestSite::start(config(mode, 0.0, 0.0)).unwrap();
        let client = h1();
        let first = get(&client, &site.url("/p/1")).await;
        assert_eq!(
            first.header("etag").is_some(),
            mode == ValidatorMode::Ignore
        );
        let again = get_with(
            &client,
            &site.url("/p/1"),
            &[("if-none-match", "\"p2-v0\"")],
        )
        .await
        .unwrap();
        assert_eq!(again.status, StatusCode::OK, "{mode:?}");
        assert_eq!(again.body, first.body);
    }
}

#[tokio::test]
async fn gone_pages_answer_410_from_their_pass_on() {
    let site = TestSite::start(config(ValidatorMode::Honour, 0.0, 0.2)).unwrap();
    let client = h1();
    let next = get(&client, &site.url(skitter_testsite::NEXT_PASS_PATH)).await;
    assert_eq!(next.text(), "1\n");
    let mut gone = Vec::new();
    for i in 0..200 {
        let got = get(&client, &site.url(&format!("/p/{i}"))).await;
        if got.status == StatusCode::GONE {
            gone.push(i);
        }
    }
    assert!((10..80).contains(&gone.len()), "{} gone", gone.len());
    site.next_pass();
    for i in gone {
        let got = get(&client, &site.url(&format!("/p/{i}"))).await;
        assert_eq!(got.status, StatusCode::GONE);
    }
}
