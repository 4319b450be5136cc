//! `skitter check` against the test site's `/check/` section: each output
//! format parsed back (JSON with serde, JUnit with an XML reader, Markdown
//! and text by their lines), every planted breakage in each with its page
//! and line (links in HTML, in a stylesheet, in a `Link` header, in a
//! sitemap), and the exit statuses (0 clean, 1 broken, 2 bad usage).

use std::collections::BTreeSet;

use skitter_testsite::check::{EXTERNAL_HOSTS, planted};
use skitter_testsite::{RunningSite, SiteConfig, TestSite};

use crate::support::cli::{Run, run};

/// The command line of a check of the section, with `extra` flags.
fn args(site: &RunningSite, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["check", &site.url("/check/")]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for host in EXTERNAL_HOSTS {
        args.push("--resolve".into());
        args.push(format!("{host}:*:127.0.0.1"));
    }
    for flag in [
        "--timeout=800ms",
        "--read-timeout=800ms",
        "--max-tries=2",
        "--retry-delay=10ms",
        "--max-retry-after=1s",
        "--no-progress",
    ] {
        args.push(flag.into());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

async fn check(site: &RunningSite, extra: &[&str]) -> Run {
    let args = args(site, extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&args).await
}

/// (page path, line, link) of every planted breakage.
fn planted_places(port: u16) -> BTreeSet<(String, u32, String)> {
    planted(port)
        .into_iter()
        .map(|p| (p.page.to_string(), p.line, p.url))
        .collect()
}

/// (page path, line, link) of every broken link in a JSON report.
fn broken_places(report: &skitter::check::CheckReport) -> BTreeSet<(String, u32, String)> {
    let mut got = BTreeSet::new();
    for link in report.broken() {
        for at in &link.occurrences {
            got.insert((at.page.path().to_string(), at.line, link.url.to_string()));
        }
    }
    got
}

fn path_of(url: &str) -> String {
    url::Url::parse(url).unwrap().path().to_string()
}

#[tokio::test]
async fn json_lists_every_planted_breakage_and_exits_1() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let run = check(&site, &["--format", "json"]).await;
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let report: skitter::check::CheckReport =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    assert_eq!(broken_places(&report), planted_places(site.addr().port()));
    // The stylesheet's link says where it is written: `url()` in a file.
    let css = report
        .broken()
        .flat_map(|l| &l.occurrences)
        .find(|at| at.page.path() == "/check/style.css")
        .expect("the stylesheet's broken link");
    assert_eq!(
        (css.element.as_str(), css.attribute.as_str()),
        ("", "url()")
    );
}

#[tokio::test]
async fn a_sitemap_robots_names_has_its_entries_checked() {
    use skitter_testsite::check::{SITEMAP_ROBOTS_TXT, planted_in_sitemap};
    let site = TestSite::start(SiteConfig {
        robots_txt: Some((200, SITEMAP_ROBOTS_TXT.into())),
        ..SiteConfig::default()
    })
    .unwrap();
    let port = site.addr().port();
    let run = check(&site, &["--format", "json"]).await;
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let report: skitter::check::CheckReport =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    let mut want = planted_places(port);
    for p in planted_in_sitemap(port) {
        want.insert((p.page.to_string(), p.line, p.url));
    }
    assert_eq!(broken_places(&report), want);
    let entry = report
        .broken()
        .flat_map(|l| &l.occurrences)
        .find(|at| at.page.path() == "/check/sitemap.xml")
        .expect("the sitemap's broken entry");
    assert_eq!(
        (entry.element.as_str(), entry.attribute.as_str()),
        ("sitemap", "loc")
    );
}

#[tokio::test]
async fn junit_reads_back_as_one_failure_per_planted_breakage() {
    use quick_xml::events::Event;
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let run = check(&site, &["--format", "junit"]).await;
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let mut reader = quick_xml::Reader::from_str(&run.stdout);
    let mut got = BTreeSet::new();
    let mut case: Option<(String, u32, String)> = None;
    let mut failures = 0;
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) if e.name().as_ref() == "testcase" => {
                let attr = |name: &str| {
                    e.try_get_attribute(name)
                        .unwrap()
                        .unwrap()
                        .normalized_value(quick_xml::XmlVersion::Explicit1_0)
                        .unwrap()
                        .into_owned()
                };
                case = Some((
                    path_of(&attr("classname")),
                    attr("line").parse().unwrap(),
                    attr("name"),
                ));
            }
            Event::Start(e) if e.name().as_ref() == "failure" => {
                failures += 1;
                got.insert(case.clone().expect("a failure inside a test case"));
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(got, planted_places(site.addr().port()));
    assert_eq!(failures, got.len());
}

#[tokio::test]
async fn markdown_and_text_name_page_line_and_link() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let port = site.addr().port();
    let markdown = check(&site, &["--format", "markdown"]).await;
    assert_eq!(markdown.code, Some(1), "{}", markdown.stderr);
    let rows: BTreeSet<(String, u32, String)> = markdown
        .stdout
        .lines()
        .filter(|l| l.starts_with("| http"))
        .map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            (
                path_of(cells[0].trim_start_matches("| ")),
                cells[1].parse().unwrap(),
                cells[2].trim_matches('`').to_string(),
            )
        })
        .collect();
    assert_eq!(rows, planted_places(port));
    assert!(markdown.stdout.contains("### Permanent redirects"));
    assert!(markdown.stdout.contains("### Flaky"));
    let text = check(&site, &[]).await;
    assert_eq!(text.code, Some(1));
    for p in planted(port) {
        let line = match p.line {
            0 => "  no line: ".to_string(),
            n => format!("  line {n}: "),
        };
        assert!(
            text.stdout
                .lines()
                .any(|l| l.starts_with(&line) && l.contains(&format!(" {}: ", p.url))),
            "{p:?} not in\n{}",
            text.stdout
        );
    }
}

#[tokio::test]
async fn a_clean_site_exits_0_and_bad_usage_2() {
    let site = TestSite::start(SiteConfig {
        pages: 5,
        ..SiteConfig::default()
    })
    .unwrap();
    // The generated site's broken links are `/P/N` (for `/p/N`), excluded
    // here, and a `#frag` no page has, not checked here.
    let clean = run(&[
        "check",
        &site.url("/"),
        "--exclude",
        "/P/",
        "--no-fragments",
        "--no-progress",
    ])
    .await;
    assert_eq!(clean.code, Some(0), "{}\n{}", clean.stderr, clean.stdout);
    assert!(clean.stdout.contains(" 0 broken"), "{}", clean.stdout);
    let bad = run(&["check", &site.url("/"), "--accept", "200..=x"]).await;
    assert_eq!(bad.code, Some(2), "{}", bad.stderr);
    let bad = run(&["check", &site.url("/"), "--remap", "nothing"]).await;
    assert_eq!(bad.code, Some(2), "{}", bad.stderr);
}

#[tokio::test]
async fn a_docs_folder_with_a_base() {
    use skitter_testsite::check::{DOCS_BASE, write_docs_tree};
    let dir = tempfile::tempdir().unwrap();
    let want: BTreeSet<(String, u32, String)> = write_docs_tree(dir.path())
        .unwrap()
        .into_iter()
        .map(|p| (p.page.to_string(), p.line, p.url))
        .collect();
    let folder = dir.path().to_str().unwrap();
    let run = run(&["check", folder, "--base", DOCS_BASE, "--format", "json"]).await;
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let report: skitter::check::CheckReport = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(broken_places(&report), want);
}

/// Each broken link's places, and every link's URL with its places, as
/// sets: what two runs of one check must agree on whatever their order.
type Findings = (
    BTreeSet<(String, u32, String)>,
    BTreeSet<(String, Vec<(String, u32, String)>)>,
);

fn findings(report: &skitter::check::CheckReport) -> Findings {
    let links = report
        .links
        .iter()
        .map(|l| {
            let mut places: Vec<(String, u32, String)> = l
                .occurrences
                .iter()
                .map(|o| (o.page.to_string(), o.line, o.raw.clone()))
                .collect();
            places.sort();
            (l.url.to_string(), places)
        })
        .collect();
    (broken_places(report), links)
}

#[tokio::test]
async fn a_check_stopped_midway_resumes_with_what_it_found_before() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let port = site.addr().port();
    let whole = check(&site, &["--format", "json"]).await;
    let whole: skitter::check::CheckReport = serde_json::from_str(&whole.stdout).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let state = state.to_str().unwrap();
    // Stopped by a limit after the index and one more page: the links of
    // both are found in the first run only.
    let first = check(
        &site,
        &[
            "--format",
            "json",
            "--state",
            state,
            "--max-pages",
            "2",
            "--max-tasks",
            "1",
        ],
    )
    .await;
    let first: skitter::check::CheckReport =
        serde_json::from_str(&first.stdout).unwrap_or_else(|e| panic!("{e}: {}", first.stdout));
    assert!(first.stopped.is_some(), "the first run was not stopped");
    assert_ne!(findings(&first), findings(&whole));
    let second = check(&site, &["--format", "json", "--state", state]).await;
    assert_eq!(second.code, Some(1), "{}", second.stderr);
    let second: skitter::check::CheckReport =
        serde_json::from_str(&second.stdout).unwrap_or_else(|e| panic!("{e}: {}", second.stdout));
    assert_eq!(second.stopped, None);
    assert_eq!(broken_places(&second), planted_places(port));
    // Every link once, each place once: what the uninterrupted run found.
    assert_eq!(findings(&second), findings(&whole));
}

#[tokio::test]
async fn the_html_report_has_a_section_of_broken_links_by_page() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let port = site.addr().port();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.html");
    let run = check(&site, &["--report-html", path.to_str().unwrap()]).await;
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let html = std::fs::read_to_string(&path).unwrap();
    let planted = planted(port);
    assert!(
        html.contains(&format!(r#"<h2>Link check: {} broken</h2>"#, planted.len())),
        "{html}"
    );
    for p in &planted {
        assert!(
            html.contains(&format!("{}</td>", p.url)),
            "{p:?} not in the report"
        );
        let page = format!(r#"<h3 class="url">http://127.0.0.1:{port}{}</h3>"#, p.page);
        assert!(html.contains(&page), "{page} not in the report");
    }
    assert!(html.contains("<h2 style=\"margin-top:16px\">Permanent redirects</h2>"));
    // Still the report's policy: one inline script, allowed by its hash,
    // nothing loaded from elsewhere.
    assert!(html.contains("Content-Security-Policy"));
    assert_eq!(html.matches("<script").count(), 1);
    assert!(!html.contains("<script src"));
    // A folder has no crawl to report.
    let folder = dir.path().to_str().unwrap();
    let bad = crate::support::cli::run(&["check", folder, "--report-html", "x.html"]).await;
    assert_eq!(bad.code, Some(2), "{}", bad.stderr);
}
