//! Structured extraction from the command line: `crawl --extract` to JSONL,
//! `fetch` with inline JSON pointer fields, and rules refused before anything
//! is fetched.

use std::process::{Command, Stdio};

use serde_json::{Value, json};
use skitter_testsite::items as site;
use skitter_testsite::{SiteConfig, TestSite};

fn skitter() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skitter"));
    cmd.stdin(Stdio::null());
    cmd
}

const RULES: &str = r#"
[proxies]
url = "/items/list/"
item = "table.proxies tbody tr"
[proxies.fields]
address = { css = "td.address", required = true }
port = { css = "td.port", type = "integer" }
protocol = "css:td.protocol"
details = { css = "a@href", type = "url" }

[detail]
url = "/items/detail/"
[detail.fields]
title = "css:h1"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_writes_item_lines_after_their_pages() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(&rules, RULES).unwrap();
    let jsonl = dir.path().join("out.jsonl");
    let out = skitter()
        .args(["-q", "crawl", "--extract"])
        .arg(&rules)
        .arg("--jsonl")
        .arg(&jsonl)
        .arg(site.url("/items/list/1"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let total = site::LIST_PAGES * site::ROWS;
    // Every list page's rows, and one record per detail page.
    let items = (2 * total) as usize;
    assert!(stdout.contains(&format!("{items:>10} items\n")), "{stdout}");
    assert!(!stdout.contains("extract_errors"), "{stdout}");

    let lines: Vec<Value> = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut proxies = Vec::new();
    let mut page_url = None;
    let mut announced = 0;
    for line in &lines {
        match line["type"].as_str().unwrap() {
            "page" => {
                assert_eq!(announced, 0, "every announced item line came");
                page_url = Some(line["url"].clone());
                announced = line["items"].as_u64().unwrap_or(0);
            }
            "item" => {
                assert_eq!(
                    Some(&line["url"]),
                    page_url.as_ref(),
                    "an item follows its page"
                );
                announced -= 1;
                if line["rule_set"] == "proxies" {
                    proxies.push(line["fields"].clone());
                }
            }
            other => panic!("unexpected line type {other}"),
        }
    }
    proxies.sort_by_key(|f| f["port"].as_u64());
    let want: Vec<Value> = (0..total)
        .map(|k| {
            let (address, port, protocol, _) = site::proxy(k);
            json!({
                "address": address, "port": port, "protocol": protocol,
                "details": site.url(&format!("/items/detail/{k}")),
            })
        })
        .collect();
    assert_eq!(proxies, want);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_gathers_json_fields_by_pointer() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let out = skitter()
        .args(["fetch", "--jsonl", "-", "--no-progress"])
        .args(["--field", "page=json:/page"])
        .args(["--field", r#"ids={ json = "/items", all = true }"#])
        .args([
            "--field",
            r#"first={ json = "/items/0/price", type = "number" }"#,
        ])
        .arg(site.url(&format!("/items/api/[1-{}].json", site::API_PAGES)))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let counted = format!("items extracted{:>19}", site::API_PAGES);
    assert!(stderr.contains(&counted), "{stderr}");
    let mut items: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "item")
        .map(|l| {
            assert_eq!(l["rule_set"], "items");
            l["fields"].clone()
        })
        .collect();
    items.sort_by_key(|f| f["page"].as_u64());
    assert_eq!(items.len(), site::API_PAGES as usize);
    assert_eq!(items[1]["page"], 2);
    assert_eq!(items[1]["first"], 3.5);
    assert_eq!(
        items[1]["ids"].as_array().unwrap().len(),
        site::API_ITEMS as usize
    );
    assert_eq!(items[1]["ids"][0]["name"], "item 3");
}

#[test]
fn bad_rules_are_refused_before_any_fetch() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "[shop]\n[shop.fields]\nprice = { css = \"span[\", type = \"number\" }\n",
    )
    .unwrap();
    for cmd in ["crawl", "fetch"] {
        let out = skitter()
            .args(["-q", cmd, "--extract"])
            .arg(&rules)
            .arg("http://127.0.0.1:9/")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {stderr}");
        assert!(
            stderr.contains("rule set `shop`, field `price`")
                && stderr.contains("bad CSS selector"),
            "{cmd}: {stderr}"
        );
    }
    let out = skitter()
        .args(["-q", "crawl", "--field", "title", "http://127.0.0.1:9/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NAME=SPEC"));
}
