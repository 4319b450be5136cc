//! Tests of the report's text and JSON forms and of its spilled records.

use super::*;
use crate::base::outcome::{ErrorKind, FetchFailure};
use url::Url;

fn rec(url: &str, kind: OutcomeKind) -> PageRecord {
    let mut r = PageRecord::skipped(Url::parse(url).unwrap(), SkipReason::Robots, 0, None);
    r.kind = kind;
    r.skip = None;
    r.attempts = 1;
    r
}

fn sample() -> Report {
    let mut t = Tally::default();
    let mut html = rec("http://h/", OutcomeKind::Html);
    html.status = Some(200);
    html.content_type = Some("text/html".into());
    html.encoding = Some("utf-8".into());
    html.size = 908;
    html.num_urls = 4;
    html.num_new_urls = 3;
    t.add(&html).unwrap();
    let mut missing = rec("http://h/missing", OutcomeKind::HttpError);
    missing.status = Some(404);
    missing.size = 14;
    t.add(&missing).unwrap();
    let mut redirect = rec("http://h/old", OutcomeKind::Redirect);
    redirect.status = Some(301);
    redirect.next_url = Some(Url::parse("http://h/new").unwrap());
    t.add(&redirect).unwrap();
    let mut fail = rec("http://h:1/", OutcomeKind::Failed);
    fail.error = Some(FetchFailure {
        kind: ErrorKind::Connect,
        message: "connection refused".into(),
    });
    t.add(&fail).unwrap();
    t.add(&PageRecord::skipped(
        Url::parse("http://h/private").unwrap(),
        SkipReason::Robots,
        1,
        None,
    ))
    .unwrap();
    t.finish(ReportSummary {
        todo: 0,
        elapsed: Duration::from_millis(500),
        max_tasks: 4,
        stopped: None,
        sinks: vec![],
        proxies: vec![],
    })
}

#[test]
fn text_report_has_the_baseline_shape() {
    let text = sample().to_text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "*** Report ***");
    assert_eq!(lines[1], "http://h/ 200 text/html utf-8 908 3/4");
    assert_eq!(lines[2], "http://h/missing 404 None None 14");
    assert_eq!(lines[3], "http://h/old 301 redirect http://h/new");
    assert_eq!(lines[4], "http://h/private skipped robots");
    assert_eq!(lines[5], "http://h:1/ error connect: connection refused");
    assert_eq!(
        lines[6],
        "Finished 5 urls in 0.500 secs (max_tasks=4) (2.500 urls/sec/task) (10.000 urls/sec)"
    );
    assert!(lines.contains(&"         1 status_404"));
    assert!(lines.contains(&"       908 html_bytes"));
    assert!(lines.contains(&"         1 fail_connect"));
    assert!(lines.contains(&"         1 skipped_robots"));
    assert!(lines.contains(&"Todo: 0"));
    assert!(lines.contains(&"Done: 5"));
    assert!(lines.last().unwrap().starts_with("Date: ") && text.ends_with("local time\n"));
}

#[test]
fn json_report_matches_text_totals() {
    let json = sample().to_json();
    assert_eq!(json["done"], 5);
    assert_eq!(json["todo"], 0);
    assert_eq!(json["completed"], true);
    assert_eq!(json["counters"]["html"], 1);
    assert_eq!(json["pages"].as_array().unwrap().len(), 5);
    assert_eq!(json["pages"][0]["url"], "http://h/");
}

/// Records in a scrambled URL order, some URLs twice, of every kind.
fn scrambled(n: u32) -> Vec<PageRecord> {
    let kinds = [
        OutcomeKind::Html,
        OutcomeKind::HttpError,
        OutcomeKind::Redirect,
        OutcomeKind::Failed,
        OutcomeKind::Other,
    ];
    (0..n)
        .map(|i| {
            let page = (i * 7919) % (n - n / 10);
            let mut r = rec(
                &format!("http://h{}/p/{page}", page % 3),
                kinds[(i % 5) as usize],
            );
            r.status = Some(200 + (i % 7) as u16);
            r.size = u64::from(i);
            r.elapsed = Duration::from_micros(u64::from(i) * 13);
            r.parent = Some(Url::parse("http://h0/").unwrap());
            if r.kind == OutcomeKind::Failed {
                r.error = Some(FetchFailure {
                    kind: ErrorKind::Timeout,
                    message: format!("slow {i}"),
                });
            }
            r
        })
        .collect()
}

fn report_with(records: &[PageRecord], options: &ReportOptions) -> Report {
    let mut t = Tally::new(options);
    for r in records {
        t.add(r).unwrap();
    }
    let mut unrecorded = Counters::default();
    unrecorded.links_skipped.insert(SkipReason::Scope, 3);
    t.add_unrecorded(&unrecorded);
    t.finish(ReportSummary {
        elapsed: Duration::from_secs(2),
        max_tasks: 8,
        ..ReportSummary::default()
    })
}

/// Everything but the `Date:` line, which may tick between two reports.
fn undated(report: &Report) -> String {
    let text = report.to_text();
    text.lines()
        .filter(|l| !l.starts_with("Date: "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_spilled_report_equals_the_in_memory_one() {
    let records = scrambled(5000);
    let spill = tempfile::tempdir().unwrap();
    let tiny = ReportOptions {
        memory_budget: 4 << 10,
        spill_dir: Some(spill.path().to_path_buf()),
        ..ReportOptions::default()
    };
    let spilled = report_with(&records, &tiny);
    let in_memory = report_with(&records, &ReportOptions::default());
    assert!(
        spilled.pages.spill_files() > 16,
        "a 4 KiB budget must write many runs, wrote {}",
        spilled.pages.spill_files()
    );
    assert!(spilled.pages.spilled_bytes() > 0);
    assert_eq!(
        in_memory.pages.spill_files(),
        0,
        "5000 records fit in 32 MiB"
    );
    assert_eq!(spilled.pages.len(), 5000);
    assert_eq!(undated(&spilled), undated(&in_memory));

    let mut expected = records.clone();
    expected.sort_by(|a, b| a.url.as_str().cmp(b.url.as_str()));
    for r in &mut expected {
        r.parent = None;
    }
    assert_eq!(spilled.pages.to_vec().unwrap(), expected);
    assert_eq!(in_memory.pages.to_vec().unwrap(), expected);

    let mut streamed = Vec::new();
    spilled.write_json(&mut streamed).unwrap();
    let mut streamed: serde_json::Value = serde_json::from_slice(&streamed).unwrap();
    let mut built = in_memory.to_json();
    for json in [&mut streamed, &mut built] {
        json.as_object_mut().unwrap().remove("date");
    }
    assert_eq!(streamed, built);
    assert_eq!(built["pages"].as_array().unwrap().len(), 5000);
    assert_eq!(built["completed"], true);
}

#[test]
fn a_tally_without_records_keeps_none_but_counts_all() {
    let records = scrambled(100);
    let report = report_with(
        &records,
        &ReportOptions {
            records: false,
            ..ReportOptions::default()
        },
    );
    assert!(report.pages.is_empty());
    assert_eq!(report.done, 100);
    assert_eq!(report.counters.html, 20);
    assert_eq!(report.unrecorded.links_skipped[&SkipReason::Scope], 3);
    assert_eq!(report.unrecorded.get("links_skipped_scope"), 3);
    assert_eq!(
        report.to_text().lines().nth(1).unwrap().split(' ').next(),
        Some("Finished")
    );
}
