//! The trap guard against the test site's traps (simulated by generating each
//! trap's URL sequence), against an ordinary 20,000-page site, rule by rule, and
//! under concurrent use.

use std::collections::HashSet;

use skitter::base::trap::{TrapGuard, TrapKind, TrapRules};
use url::Url;

const HOST: &str = "http://127.0.0.1:8080";

/// The defaults, with the year range fixed so results do not depend on the clock.
fn rules() -> TrapRules {
    TrapRules {
        plausible_years: Some(1900..=2035),
        ..TrapRules::default()
    }
}

fn url(path: &str) -> Url {
    Url::parse(&format!("{HOST}{path}")).expect("test URL parses")
}

/// Checks each URL in turn, as a crawler would follow a trap, and returns how many
/// passed before the first one that did not, and the rule that stopped it.
fn follow(guard: &TrapGuard, urls: impl Iterator<Item = Url>) -> (usize, Option<TrapKind>) {
    let mut admitted = 0;
    for u in urls {
        match guard.check(&u) {
            Ok(()) => admitted += 1,
            Err(kind) => return (admitted, Some(kind)),
        }
    }
    (admitted, None)
}

fn run_table(rules: TrapRules, cases: &[(&str, Option<TrapKind>)]) {
    let guard = TrapGuard::new(rules);
    for (path, want) in cases {
        let got = guard.check(&url(path)).err();
        assert_eq!(got, *want, "{path}");
    }
}

#[test]
fn defaults_are_as_documented() {
    let r = TrapRules::default();
    assert_eq!(r.max_url_length, 2048);
    assert_eq!(r.max_path_segments, 32);
    assert_eq!(r.max_segment_repeats, 3);
    assert_eq!(r.max_query_variants, 1000);
    assert_eq!(r.max_similar_chain, 50);
    let years = r.plausible_years.expect("date rule on by default");
    assert_eq!(*years.start(), 1900);
    assert!(*years.end() >= 2035, "ends ten years after now: {years:?}");
}

#[test]
fn url_length_table() {
    let fill = |total: usize| format!("/{}", "x".repeat(total - HOST.len() - 1));
    let (at, over) = (fill(2048), fill(2049));
    run_table(
        rules(),
        &[
            ("/short", None),
            (&at, None),
            (&over, Some(TrapKind::UrlTooLong)),
        ],
    );
}

#[test]
fn path_segment_table() {
    let deep = |n: usize| (0..n).map(|i| format!("/s{i}")).collect::<String>();
    let (at, over) = (deep(32), deep(33));
    let at_slash = format!("{at}/");
    run_table(
        rules(),
        &[
            ("/a/b/c/d/e", None),
            (&at, None),
            (&at_slash, None),
            (&over, Some(TrapKind::TooManySegments)),
        ],
    );
}

#[test]
fn repeated_segment_table() {
    let r = Some(TrapKind::RepeatedSegments);
    run_table(
        rules(),
        &[
            ("/2024/01/01/", None),
            ("/a/b/c/d/e", None),
            ("/en/docs/en/guide/en/", None),
            ("/docs/api/v1/api/v1/", None),
            ("/docs/api/v1/api/v1/api/v1/", r),
            ("/a/b/a/b/a/b", r),
            ("/x/a/x/b/x/c/x/", r),
            ("/loop/a/a/a/", r),
            ("/a//b//c//d//e", r),
        ],
    );
}

#[test]
fn implausible_date_table() {
    let d = Some(TrapKind::ImplausibleDate);
    run_table(
        rules(),
        &[
            ("/cal/2024/1", None),
            ("/2024/01/01/hello", None),
            ("/archive/1901/07/", None),
            ("/p/1234", None),
            ("/p/19999", None),
            ("/events/2030-05-17/", None),
            ("/cal/1899/12", d),
            ("/cal/2036/1", d),
            ("/events/3024-05-17/", d),
        ],
    );
}

#[test]
fn query_variants_count_distinct_strings_per_path() {
    let guard = TrapGuard::new(TrapRules {
        max_query_variants: 2,
        ..rules()
    });
    let q = Some(TrapKind::TooManyQueryVariants);
    let cases: [(&str, Option<TrapKind>); 10] = [
        ("http://a.test/list?page=1", None),
        ("http://a.test/list?page=1", None),
        ("http://a.test/list?page=2", None),
        ("http://a.test/list?page=3", q),
        ("http://a.test/list?page=1", None),
        ("http://a.test/list", None),
        ("http://a.test/other?page=3", None),
        ("https://a.test/list?page=3", None),
        ("http://a.test:8080/list?page=3", None),
        ("http://b.test/list?page=3", None),
    ];
    for (u, want) in cases {
        let got = guard.check(&Url::parse(u).expect("parses")).err();
        assert_eq!(got, want, "{u}");
    }
}

#[test]
fn a_url_rejected_by_another_rule_uses_no_query_variant() {
    let guard = TrapGuard::new(TrapRules {
        max_query_variants: 1,
        ..rules()
    });
    let long = url(&format!("/list?q={}", "x".repeat(3000)));
    assert_eq!(guard.check(&long), Err(TrapKind::UrlTooLong));
    assert_eq!(guard.check(&url("/list?q=short")), Ok(()));
}

#[test]
fn zero_turns_one_rule_off_and_off_turns_all_off() {
    let long = format!("/{}", "x".repeat(5000));
    let deep = "/s".repeat(100);
    let paths = [long.as_str(), deep.as_str(), "/a/a/a/a/a", "/cal/1066/10"];
    let off = TrapGuard::new(TrapRules::off());
    for p in paths {
        assert_eq!(off.check(&url(p)), Ok(()), "{p}");
    }
    for sid in 0..5000 {
        assert_eq!(off.check(&url(&format!("/s?sid={sid}"))), Ok(()));
    }
    let no_length = TrapGuard::new(TrapRules {
        max_url_length: 0,
        ..rules()
    });
    assert_eq!(no_length.check(&url(&long)), Ok(()));
    assert_eq!(no_length.check(&url(&deep)), Err(TrapKind::TooManySegments));
}

#[test]
fn calendar_trap_stops_at_the_year_range_both_ways() {
    let next = |(y, m): (u32, u32)| if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    let prev = |(y, m): (u32, u32)| if m == 1 { (y - 1, 12) } else { (y, m - 1) };
    let cal = |(y, m): (u32, u32)| url(&format!("/cal/{y}/{m}"));
    let guard = TrapGuard::new(rules());
    // Forward from 2024/1 through 2035/12; backward from 2023/12 down to 1900/1.
    let forward = std::iter::successors(Some((2024, 1)), |&d| Some(next(d))).map(cal);
    assert_eq!(
        follow(&guard, forward),
        (12 * 12, Some(TrapKind::ImplausibleDate))
    );
    let backward = std::iter::successors(Some((2023, 12)), |&d| Some(prev(d))).map(cal);
    assert_eq!(
        follow(&guard, backward),
        (124 * 12, Some(TrapKind::ImplausibleDate))
    );
}

#[test]
fn loop_trap_stops_within_the_repeat_limit_and_else_the_depth_limit() {
    let deeper = || (1..).map(|n| url(&format!("/loop/{}", "a/".repeat(n))));
    let guard = TrapGuard::new(rules());
    // `/loop/a/` and `/loop/a/a/`; the third `a` in a row is a loop.
    assert_eq!(
        follow(&guard, deeper()),
        (2, Some(TrapKind::RepeatedSegments))
    );
    let without_repeats = TrapGuard::new(TrapRules {
        max_segment_repeats: 0,
        ..rules()
    });
    // `loop` plus up to 31 `a`s fill the 32 segments.
    assert_eq!(
        follow(&without_repeats, deeper()),
        (31, Some(TrapKind::TooManySegments))
    );
}

#[test]
fn session_trap_stops_at_the_variant_limit() {
    let guard = TrapGuard::new(rules());
    // The site links `/session?sid=0` from `/`, and each session page the next id.
    let sessions = (0..).map(|sid| url(&format!("/session?sid={sid}")));
    assert_eq!(
        follow(&guard, sessions),
        (1000, Some(TrapKind::TooManyQueryVariants))
    );
    // The bare path is not a query variant.
    assert_eq!(guard.check(&url("/session")), Ok(()));
    // Rediscovering an admitted session URL is not a new variant.
    assert_eq!(guard.check(&url("/session?sid=500")), Ok(()));
    assert_eq!(guard.trips(), vec![(TrapKind::TooManyQueryVariants, 1)]);
}

#[test]
fn an_ordinary_twenty_thousand_page_site_passes_untouched() {
    let guard = TrapGuard::new(TrapRules::default());
    let pages = || std::iter::once(url("/")).chain((0..20_000).map(|i| url(&format!("/p/{i}"))));
    // Every page is linked from several others, so each is checked more than once.
    for _ in 0..2 {
        assert_eq!(follow(&guard, pages()), (20_001, None));
    }
    assert!(guard.trips().is_empty());
}

#[test]
fn odd_urls_never_panic() {
    let odd = [
        "http://[::1]:8080/a/../b?x#y",
        "http://user:pw@example.test/?",
        "http://example.test/%E2%82%AC/%E2%82%AC/%E2%82%AC/%E2%82%AC",
        "http://example.test/\u{0662}\u{0660}\u{0662}\u{0664}/1",
        "http://example.test/2024-\u{00e9}",
        "http://example.test//////////",
        "mailto:someone@example.test",
        "data:text/plain,2024/1/1",
        "file:///9999/12/31",
    ];
    let guards = [
        TrapGuard::new(rules()),
        TrapGuard::new(TrapRules::off()),
        TrapGuard::new(TrapRules {
            max_path_segments: 0,
            ..rules()
        }),
    ];
    for u in odd {
        let u = Url::parse(u).expect("test URL parses");
        for g in &guards {
            let _ = g.check(&u);
        }
    }
    let huge = url(&"/a/b".repeat(50_000));
    assert_eq!(guards[2].check(&huge), Err(TrapKind::UrlTooLong));
}

/// Walks a pager from page 0 as a crawler would: each page `n`, with the
/// fingerprint `print(n)`, offers its links to `n - 1` and `n + 1`. Returns how
/// many pages were reached before no further page was admitted (at most `cap`).
fn walk_pager(guard: &TrapGuard, print: impl Fn(u64) -> Option<u64>, cap: u64) -> u64 {
    let mut reached = 0;
    while reached < cap {
        let page = url(&format!("/pager/{reached}"));
        let mut chains = guard.page(&page, print(reached));
        if let Some(prev) = reached.checked_sub(1) {
            let _ = chains.check(&url(&format!("/pager/{prev}")));
        }
        let next = url(&format!("/pager/{}", reached + 1));
        // A link elsewhere is never a step, trap or not.
        assert_eq!(chains.check(&url("/about")), Ok(()));
        if chains.check(&next).is_err() {
            break;
        }
        reached += 1;
    }
    reached + 1
}

#[test]
fn an_endless_pager_of_like_pages_is_cut_a_differing_listing_is_not() {
    let guard = TrapGuard::new(rules());
    // The same page under every number: pages 0..=50, then a trap.
    assert_eq!(walk_pager(&guard, |_| Some(0xABCD), 100_000), 51);
    let trips = guard.trips();
    assert_eq!(
        trips,
        vec![(TrapKind::EndlessPager, 2)],
        "prev and next of page 50"
    );
    // The cut chain stays cut, from any of its pages.
    let seven = url("/pager/7");
    let mut chains = guard.page(&seven, Some(0xABCD));
    assert_eq!(chains.check(&url("/pager/8")), Err(TrapKind::EndlessPager));
    // A listing of 10,000 pages that differ is followed to its end.
    let listing = TrapGuard::new(rules());
    let print = |n: u64| Some(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    assert_eq!(walk_pager(&listing, print, 10_000), 10_001);
    assert!(listing.trips().is_empty());
    // Pages with no fingerprint (not HTML) never trip the rule.
    assert_eq!(walk_pager(&TrapGuard::new(rules()), |_| None, 1000), 1001);
    // Off, with the other rules.
    let off = TrapGuard::new(TrapRules::off());
    assert_eq!(walk_pager(&off, |_| Some(0xABCD), 1000), 1001);
}

#[test]
fn a_tree_of_like_pages_is_not_a_chain() {
    // 20,000 identical pages `/p/{i}` linked as a tree of fanout 2 (the test
    // site's shape): every link is a step of `/p/#` from a near-duplicate
    // page, but runs grow only as deep as the tree (14 levels).
    let guard = TrapGuard::new(rules());
    let pages = 20_000;
    let mut queue = std::collections::VecDeque::from([0usize]);
    let mut reached = 0;
    while let Some(i) = queue.pop_front() {
        reached += 1;
        let page = url(&format!("/p/{i}"));
        let mut chains = guard.page(&page, Some(0xABCD));
        for child in (2 * i + 1..2 * i + 3).filter(|c| *c < pages) {
            if chains.check(&url(&format!("/p/{child}"))).is_ok() {
                queue.push_back(child);
            }
        }
    }
    assert_eq!(reached, pages);
    assert!(guard.trips().is_empty());
}

#[test]
fn kinds_have_stable_names() {
    let names: Vec<String> = TrapKind::ALL.iter().map(ToString::to_string).collect();
    assert_eq!(
        names,
        [
            "url_too_long",
            "too_many_segments",
            "repeated_segments",
            "implausible_date",
            "too_many_query_variants",
            "endless_pager"
        ]
    );
}

#[test]
fn concurrent_checks_agree_and_count_each_variant_once() {
    const THREADS: usize = 8;
    const VARIANTS: usize = 2000;
    let guard = TrapGuard::new(rules());
    let results: Vec<Vec<bool>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let guard = &guard;
                s.spawn(move || {
                    // Each thread walks the variants from a different starting point.
                    let mut seen = vec![false; VARIANTS];
                    for i in 0..VARIANTS {
                        let sid = (i + t * 251) % VARIANTS;
                        let ok = guard.check(&url(&format!("/session?sid={sid}"))).is_ok();
                        seen[sid] = ok;
                        assert!(guard.check(&url(&format!("/p/{i}"))).is_ok());
                    }
                    seen
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no thread panics"))
            .collect()
    });
    let admitted: HashSet<usize> = (0..VARIANTS).filter(|&i| results[0][i]).collect();
    assert_eq!(admitted.len(), 1000);
    for (t, seen) in results.iter().enumerate() {
        assert_eq!(seen, &results[0], "thread {t} disagrees with thread 0");
    }
    let rejected = (THREADS * (VARIANTS - 1000)) as u64;
    assert_eq!(
        guard.trips(),
        vec![(TrapKind::TooManyQueryVariants, rejected)]
    );
}
