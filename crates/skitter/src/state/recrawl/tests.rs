use chrono::TimeZone;

use super::*;

fn visit() -> Visit {
    Visit {
        status: 200,
        kind: OutcomeKind::Html,
        fetched_s: 1_790_000_000,
        captured_us: 1_790_000_000_123_456,
        sha1: Some([7; 20]),
        validators: Validators {
            etag: Some("\"v1-3\"".into()),
            last_modified: Some("Tue, 01 Dec 2026 21:21:50 GMT".into()),
        },
        interval_s: 86_400,
    }
}

#[test]
fn a_visit_round_trips_compactly() {
    let cases = [
        visit(),
        Visit {
            sha1: None,
            validators: Validators::default(),
            ..visit()
        },
        Visit {
            validators: Validators {
                etag: None,
                // Not an IMF-fixdate: kept as text.
                last_modified: Some("Tuesday, 01-Dec-26 21:21:50 GMT".into()),
            },
            ..visit()
        },
    ];
    for v in cases {
        let bytes = encode(&v);
        assert_eq!(decode(&bytes), Some(v.clone()), "{bytes:?}");
    }
    // Digest, ETag and date included, the typical visit is small.
    let size = encode(&visit()).len();
    assert!(size <= 56, "{size} bytes");
}

#[test]
fn damaged_bytes_decode_to_none() {
    let bytes = encode(&visit());
    for cut in 0..bytes.len() {
        assert_eq!(decode(&bytes[..cut]), None, "cut at {cut}");
    }
    let mut other = bytes.clone();
    other[0] = 9;
    assert_eq!(decode(&other), None);
}

#[test]
fn the_interval_halves_on_change_and_doubles_without() {
    let (min, max) = (MIN_INTERVAL.as_secs() as u32, MAX_INTERVAL.as_secs() as u32);
    let cases = [
        (0, Change::New, FIRST_INTERVAL.as_secs() as u32),
        (86_400, Change::Changed, 43_200),
        (86_400, Change::Unchanged, 172_800),
        (86_400, Change::Gone, 43_200),
        (86_400, Change::Failed, 86_400),
        (min, Change::Changed, min),
        (max, Change::Unchanged, max),
    ];
    for (previous, change, want) in cases {
        assert_eq!(
            next_interval(previous, change),
            want,
            "{previous} {change:?}"
        );
    }
}

fn known(n: u128, fetched_s: u64, interval_s: u32) -> Known {
    Known {
        url: format!("http://h/{n}"),
        depth: 1,
        visit: Visit {
            fetched_s,
            interval_s,
            ..visit()
        },
    }
}

#[test]
fn a_plan_orders_oldest_first_or_skips_what_is_not_due() {
    let all = || vec![known(1, 300, 10), known(2, 100, 1000), known(3, 200, 50)];
    let (due, later) = plan(all(), RecrawlOrder::Oldest, 0);
    let fps: Vec<&str> = due.iter().map(|k| &k.url[9..]).collect();
    assert_eq!((fps, later.len()), (vec!["2", "3", "1"], 0));
    // At 310: 1 is due at 310, 3 at 250, 2 only at 1100.
    let (due, later) = plan(all(), RecrawlOrder::Adaptive, 310);
    let fps: Vec<&str> = due.iter().map(|k| &k.url[9..]).collect();
    assert_eq!(fps, vec!["3", "1"]);
    assert_eq!(
        later.iter().map(|k| &k.url[9..]).collect::<Vec<_>>(),
        vec!["2"]
    );
}

fn record(status: Option<u16>, kind: OutcomeKind) -> PageRecord {
    let mut r = PageRecord::new(url::Url::parse("http://h/p").unwrap(), 1, None);
    r.status = status;
    r.kind = kind;
    r
}

/// (status, kind, digest, earlier visit, change, revisit profile)
type Case<'a> = (
    Option<u16>,
    OutcomeKind,
    Option<[u8; 20]>,
    Option<&'a Visit>,
    Change,
    Option<RevisitProfile>,
);

#[test]
fn settling_classifies_each_answer_and_sets_the_revisit() {
    use RevisitProfile::*;
    let at = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
    let earlier = visit();
    let gone = Visit {
        status: 404,
        kind: OutcomeKind::HttpError,
        sha1: None,
        ..visit()
    };
    // (status, kind, digest, earlier, change, revisit profile)
    let cases: [Case<'_>; 8] = [
        (
            Some(200),
            OutcomeKind::Html,
            Some([1; 20]),
            None,
            Change::New,
            None,
        ),
        (
            Some(304),
            OutcomeKind::HttpError,
            None,
            Some(&earlier),
            Change::Unchanged,
            Some(ServerNotModified),
        ),
        (
            Some(200),
            OutcomeKind::Html,
            Some([7; 20]),
            Some(&earlier),
            Change::Unchanged,
            Some(IdenticalPayloadDigest),
        ),
        (
            Some(200),
            OutcomeKind::Html,
            Some([8; 20]),
            Some(&earlier),
            Change::Changed,
            None,
        ),
        (
            Some(410),
            OutcomeKind::HttpError,
            None,
            Some(&earlier),
            Change::Gone,
            None,
        ),
        (
            Some(404),
            OutcomeKind::HttpError,
            None,
            Some(&gone),
            Change::Unchanged,
            None,
        ),
        (
            None,
            OutcomeKind::Failed,
            None,
            Some(&earlier),
            Change::Failed,
            None,
        ),
        (
            Some(200),
            OutcomeKind::Html,
            None,
            Some(&earlier),
            Change::Changed,
            None,
        ),
    ];
    for (status, kind, digest, before, change, profile) in cases {
        let mut r = record(status, kind);
        let s = settle(&mut r, before, 2, digest, Validators::default(), at);
        let label = format!("{status:?} {digest:?}");
        assert_eq!(r.change, Some(change), "{label}");
        assert_eq!(s.revisit.as_ref().map(|r| r.profile), profile, "{label}");
        if let Some(revisit) = &s.revisit {
            // Points at the original capture, with its digest.
            assert_eq!(
                revisit.refers_to_date.timestamp_micros(),
                earlier.captured_us
            );
            assert_eq!(revisit.payload_sha1, earlier.sha1);
            assert_eq!(revisit.refers_to_uri, r.url);
        }
        match change {
            Change::Failed => assert!(s.visit.is_none(), "{label}: the earlier visit stays"),
            Change::Unchanged => {
                let v = s.visit.expect("a visit");
                assert_eq!(v.captured_us, before.unwrap().captured_us, "{label}");
                assert_eq!(v.fetched_s, 1_800_000_000);
            }
            _ => assert_eq!(s.visit.expect("a visit").captured_us, at.timestamp_micros()),
        }
    }
    // A 304 keeps the page's kind and, where it sent none, its validators.
    let mut r = record(Some(304), OutcomeKind::HttpError);
    let s = settle(&mut r, Some(&earlier), 2, None, Validators::default(), at);
    assert_eq!(r.kind, OutcomeKind::Html);
    assert_eq!(s.visit.unwrap().validators, earlier.validators);
    // The first pass fills no change.
    let mut r = record(Some(200), OutcomeKind::Html);
    let s = settle(&mut r, None, 1, Some([1; 20]), Validators::default(), at);
    assert_eq!((r.change, s.visit.is_some()), (None, true));
}
