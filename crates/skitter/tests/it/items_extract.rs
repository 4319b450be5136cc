//! Extraction on the test site's `/items/` pages (a proxy table, detail pages,
//! broken markup, JSON bodies) with exact values, and on hostile input: deep
//! nesting, too many records, huge values, deep JSON, random markup.

use chrono::{TimeZone, Utc};
use serde_json::{Value, json};
use skitter::parse::items::limits::{MAX_RECORDS, MAX_VALUE_BYTES};
use skitter::parse::items::{Items, PageInput, Rules};
use skitter_testsite::items as site;
use url::Url;

fn run(rules: &Rules, url: &str, body: &str) -> Items {
    let url = Url::parse(url).unwrap();
    let page = PageInput {
        url: &url,
        body: body.as_bytes(),
        charset: None,
        fetched_at: Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap(),
    };
    rules.extract(&page).expect("a rule set matches")
}

/// The records of one rule set as JSON objects, in order.
fn records(items: &Items, set: &str) -> Vec<Value> {
    items
        .records
        .iter()
        .filter(|i| i.rule_set == set)
        .enumerate()
        .map(|(n, i)| {
            assert_eq!(i.index as usize, n, "indexes count from 0 without gaps");
            Value::Object(i.fields.iter().cloned().collect())
        })
        .collect()
}

const PROXIES: &str = r#"
[proxies]
url = "/items/list/"
item = "table.proxies tbody tr"
[proxies.fields]
address = { css = "td.address", required = true }
port = { css = "td.port", type = "integer" }
protocol = "css:td.protocol"
speed = { css = "td.speed", regex = "([0-9]+) ms", type = "number" }
details = { css = "a@href", type = "url" }
"#;

#[test]
fn table_rows_become_typed_records() {
    let rules = Rules::from_toml(PROXIES).unwrap();
    let items = run(&rules, "http://h/items/list/2", &site::list(2));
    assert_eq!(items.errors, []);
    assert_eq!(items.rule_sets, ["proxies"]);
    assert_eq!(items.fetched_at.to_rfc3339(), "2026-01-02T03:04:05+00:00");
    let got = records(&items, "proxies");
    assert_eq!(got.len(), site::ROWS as usize);
    for (r, record) in got.iter().enumerate() {
        let k = site::ROWS + r as u32;
        let (address, port, protocol, speed) = site::proxy(k);
        let want = json!({
            "address": address,
            "port": port,
            "protocol": protocol,
            "speed": f64::from(speed),
            "details": format!("http://h/items/detail/{k}"),
        });
        assert_eq!(record, &want, "row {r}");
    }
}

#[test]
fn page_fields_text_inner_html_all_and_regex() {
    let rules = Rules::from_toml(
        r#"
        [detail]
        [detail.fields]
        title = "css:h1"
        notes = "html:div.notes"
        notes_text = "css:div.notes"
        tags = { css = "ul.tags li", all = true }
        endpoint = "regex:Endpoint: ([a-z0-9]+://[0-9.]+:[0-9]+)"
        port = { css = "p.endpoint", regex = ":([0-9]+)$", type = "integer" }
        back = { css = "a.back@href", type = "url" }
        raw_back = "css:a.back@href"
        missing = "css:table"
        none_found = { css = "table td", all = true }
        "#,
    )
    .unwrap();
    let items = run(&rules, "http://h/items/detail/3", &site::detail(3));
    assert_eq!(items.errors, []);
    let got = records(&items, "detail");
    assert_eq!(
        got,
        [json!({
            "title": "Proxy 3",
            "notes": "<p>Checked <b>daily</b> &amp; kept</p>",
            "notes_text": "Checked daily & kept",
            "tags": ["fast", "anonymous", "http"],
            "endpoint": "http://10.0.1.4:8003",
            "port": 8003,
            "back": "http://h/items/list/1",
            "raw_back": "../list/1",
            "missing": null,
            "none_found": [],
        })]
    );
}

#[test]
fn json_bodies_by_pointer_as_items_and_as_fields() {
    let rules = Rules::from_toml(
        r#"
        [api]
        url = "\\.json$"
        item = "json:/items"
        [api.fields]
        id = { json = "/id", required = true }
        name = "json:/name"
        price = { json = "/price", type = "number" }
        cents = { json = "/price", regex = "([0-9]+)\\.", type = "integer" }
        tags = "json:/tags"
        first_tag = "json:/tags/0"
        all_tags = { json = "/tags", all = true }

        [page]
        url = "\\.json$"
        [page.fields]
        page = { json = "/page", type = "integer" }
        next = { json = "/next", type = "url" }
        "#,
    )
    .unwrap();
    let items = run(&rules, "http://h/items/api/2.json", &site::api(2));
    assert_eq!(items.errors, []);
    let api = records(&items, "api");
    assert_eq!(api.len(), site::API_ITEMS as usize);
    assert_eq!(
        api[0],
        json!({
            "id": 3, "name": "item 3", "price": 3.5, "cents": 3,
            "tags": ["api", "odd"], "first_tag": "api", "all_tags": ["api", "odd"],
        })
    );
    assert_eq!(api[2]["id"], 5);
    assert_eq!(
        records(&items, "page"),
        [json!({"page": 2, "next": "http://h/items/api/3.json"})]
    );
    // The last page has no next: null, not a failure.
    let last = run(&rules, "http://h/items/api/3.json", &site::api(3));
    assert_eq!(records(&last, "page")[0]["next"], Value::Null);
    // Not JSON: the rule sets fail on the page, nothing crashes.
    let broken = run(&rules, "http://h/x.json", "{\"items\": [1, 2");
    assert!(broken.records.iter().all(|i| i.rule_set != "api"));
    assert!(
        broken.errors.iter().any(|e| e.message.contains("not JSON")),
        "{:?}",
        broken.errors
    );
}

#[test]
fn broken_markup_still_yields_its_rows() {
    let rules = Rules::from_toml(
        r#"
        [broken]
        item = "table.proxies tr"
        [broken.fields]
        address = { css = "td.address", required = true }
        port = { css = "td.port", type = "integer" }
        protocol = { css = "td.protocol", regex = "^([a-z0-9]+)" }
        "#,
    )
    .unwrap();
    let items = run(&rules, "http://h/items/broken", &site::broken());
    let got = records(&items, "broken");
    assert_eq!(
        got,
        [
            json!({"address": "10.0.1.1", "port": 8000, "protocol": "http"}),
            json!({"address": "10.0.1.2", "port": 8001, "protocol": "https"}),
            json!({"address": "10.0.1.3", "port": 8002, "protocol": "socks5"}),
        ]
    );
    // The header row has no address: required, so it is dropped and said.
    assert_eq!(items.errors.len(), 1, "{:?}", items.errors);
    assert_eq!(items.errors[0].field.as_deref(), Some("address"));
    assert!(
        items.errors[0]
            .message
            .contains("record 0: required field missing")
    );
}

#[test]
fn values_that_do_not_convert_are_null_and_recorded() {
    let rules = Rules::from_fields(&[
        r#"n={ css = "h1", type = "integer" }"#,
        r#"x={ css = "h1", type = "number" }"#,
        "t=css:h1",
    ])
    .unwrap();
    let items = run(&rules, "http://h/", "<h1>twelve</h1>");
    assert_eq!(
        records(&items, "items"),
        [json!({"n": null, "x": null, "t": "twelve"})]
    );
    let fields: Vec<_> = items.errors.iter().map(|e| e.field.as_deref()).collect();
    assert_eq!(fields, [Some("n"), Some("x")]);
    assert!(
        items.errors[0]
            .message
            .contains("cannot read \"twelve\" as an integer")
    );
}

#[test]
fn pages_no_rule_set_matches_are_not_read() {
    let rules = Rules::from_toml(PROXIES).unwrap();
    let url = Url::parse("http://h/p/1").unwrap();
    let page = PageInput {
        url: &url,
        body: b"<table class=proxies>",
        charset: None,
        fetched_at: Utc::now(),
    };
    assert_eq!(rules.extract(&page), None);
}

#[test]
fn deep_nesting_neither_overflows_nor_runs_away() {
    let depth = 100_000;
    let body = format!(
        "{}<span>deep</span>{}",
        "<div>".repeat(depth),
        "</div>".repeat(depth)
    );
    let rules = Rules::from_toml(
        r#"
        [nested]
        item = "div"
        [nested.fields]
        text = "css:span"
        inner = "html:"
        "#,
    )
    .unwrap();
    let started = std::time::Instant::now();
    let items = run(&rules, "http://h/", &body);
    eprintln!("100,000 nested divs: {:?}", started.elapsed());
    assert!(items.records.len() <= MAX_RECORDS);
    assert!(
        items.errors.iter().any(|e| e
            .message
            .starts_with("limit: elements nested deeper than 512")),
        "the cap was hit and said: {:?}",
        items.errors
    );
    // The DOM holds the part before the cut: 512 divs deep, no span.
    assert_eq!(items.records.len(), 512);
    assert_eq!(items.records[0].fields[0].1, Value::Null);
    for item in &items.records {
        for (_, v) in &item.fields {
            assert!(v.as_str().is_none_or(|s| s.len() <= MAX_VALUE_BYTES));
        }
    }
}

#[test]
fn caps_on_records_and_value_size_are_recorded() {
    let body = format!(
        "<ul>{}</ul><p>{}</p>",
        "<li>x</li>".repeat(MAX_RECORDS + 5),
        "y".repeat(100_000)
    );
    let rules = Rules::from_toml(
        r#"
        [li]
        item = "li"
        [li.fields]
        t = "css:"
        [big]
        [big.fields]
        p = "css:p"
        "#,
    )
    .unwrap();
    let items = run(&rules, "http://h/", &body);
    assert_eq!(records(&items, "li").len(), MAX_RECORDS);
    let big = records(&items, "big");
    assert_eq!(big[0]["p"].as_str().unwrap().len(), MAX_VALUE_BYTES);
    let limits: Vec<_> = items
        .errors
        .iter()
        .filter(|e| e.message.contains("limit:"))
        .map(|e| e.rule_set.as_str())
        .collect();
    assert_eq!(limits, ["li", "big"], "{:?}", items.errors);
}

#[test]
fn json_deeper_than_serde_json_allows_is_a_page_failure() {
    let rules = Rules::from_fields(&["a=json:/a"]).unwrap();
    let depth = 100_000;
    let body = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let items = run(&rules, "http://h/deep.json", &body);
    assert!(items.records.is_empty());
    assert!(
        items.errors[0].message.contains("recursion limit"),
        "{:?}",
        items.errors
    );
}

mod random {
    //! Random markup and random rules never panic and stay within the caps.
    use super::*;
    use proptest::prelude::*;

    const TOKENS: &[&str] = &[
        "<div>",
        "</div>",
        "<p class=a>",
        "</p>",
        "<a href='/x'>",
        "</a>",
        "<table>",
        "<tr>",
        "<td>",
        "</td>",
        "<li>",
        "text",
        " 12 ",
        "&amp;",
        "<!--",
        "-->",
        "<b>",
        "</i>",
        "<script>",
        "</script>",
        "\u{0}",
        "é",
        "<",
        ">",
        "\"",
        "<br/>",
        "<ul>",
    ];
    const SELECTORS: &[&str] = &[
        "div", "p.a", "a", "td", "li", "div div", "*", "b i", "tr > td", "",
    ];
    const TAKES: &[&str] = &["", "@href", "@class"];

    fn markup() -> impl Strategy<Value = String> {
        prop::collection::vec(0..TOKENS.len(), 0..300)
            .prop_map(|ix| ix.into_iter().map(|i| TOKENS[i]).collect())
    }

    fn rules() -> impl Strategy<Value = Rules> {
        (
            0..SELECTORS.len(),
            prop::collection::vec((0..SELECTORS.len(), 0..TAKES.len(), any::<bool>(), 0..4u8), 1..5),
        )
            .prop_map(|(item, fields)| {
                let mut text = String::from("[r]\n");
                if !SELECTORS[item].is_empty() {
                    text.push_str(&format!("item = {:?}\n", SELECTORS[item]));
                }
                text.push_str("[r.fields]\n");
                for (n, (sel, take, all, ty)) in fields.into_iter().enumerate() {
                    let ty = ["string", "integer", "number", "url"][ty as usize];
                    text.push_str(&format!(
                        "f{n} = {{ css = {:?}, all = {all}, type = {ty:?}, regex = \"([0-9a-z]+)\" }}\n",
                        format!("{}{}", SELECTORS[sel], TAKES[take]),
                    ));
                }
                Rules::from_toml(&text).expect("generated rules are valid")
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            failure_persistence: None,
            rng_seed: proptest::test_runner::RngSeed::Fixed(19),
            ..ProptestConfig::default()
        })]

        #[test]
        fn never_panics_and_stays_within_caps(body in markup(), rules in rules()) {
            let items = run(&rules, "http://h/items/", &body);
            prop_assert!(items.records.len() <= MAX_RECORDS);
            prop_assert!(!items.errors.iter().any(|e| e.message.contains("internal error")));
            for item in &items.records {
                for (_, v) in &item.fields {
                    let strings: Vec<&Value> = match v {
                        Value::Array(a) => a.iter().collect(),
                        v => vec![v],
                    };
                    for s in strings {
                        prop_assert!(s.as_str().is_none_or(|s| s.len() <= MAX_VALUE_BYTES));
                    }
                }
            }
        }

        #[test]
        fn random_bytes_as_json_never_panic(body in prop::collection::vec(any::<u8>(), 0..200)) {
            let rules = Rules::from_fields(&["a=json:/a", "b=json:"]).unwrap();
            let url = Url::parse("http://h/a.json").unwrap();
            let page = PageInput { url: &url, body: &body, charset: None, fetched_at: Utc::now() };
            let items = rules.extract(&page).unwrap();
            prop_assert!(items.records.len() <= 1);
        }
    }
}
