//! The gate's answers remembered across pages, so that the links every page
//! of a site repeats (its menus, sidebars, footers) are gated once, not on
//! every page.
//!
//! A docs site's pages link mostly to pages the crawl has met already: on
//! rust-doc, 21,649 pages yield about 800,000 distinct-per-page links for
//! 21,649 URLs. Each was normalised, scoped, matched against `--include`
//! and `--exclude` and judged by the trap rules again, to be dropped by the
//! frontier's de-duplication. The gate's answer for one URL does not change
//! during a crawl, except where it depends on the depth (the depth limit)
//! or counts its trips (the trap rules): so an admitted URL is remembered
//! with its normalised form, and checked again only against the depth
//! limit; a URL skipped for its scheme, scope or patterns is remembered
//! with its reason, which the caller counts again for every occurrence; a
//! URL skipped for the depth limit or a trap rule is not remembered.
//!
//! The trap rules passed once pass again for the same URL (their counts
//! are of distinct paths and queries), so a remembered admission skips
//! them. The one exception is a query-variant table that had to forget
//! the URL's path to stay within its memory: a remembered URL is then
//! admitted where a fresh judgement could have tripped the rule — for a
//! URL already offered to the frontier, which drops it as a duplicate.
//!
//! Bounded: at most [`MEMO_ENTRIES`] URLs (about 2 MB); a full memo is
//! emptied and starts again, which costs only fresh judgements.

use std::collections::HashMap;
use std::sync::Mutex;

use url::Url;

use crate::base::outcome::SkipReason;

/// URLs remembered at most. A site's repeated links (a few hundred on a
/// docs site, a few thousand on a news site) fit many times over.
pub(crate) const MEMO_ENTRIES: usize = 8_192;

/// What the gate said of a URL, as long as it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Remembered {
    /// Admitted, as this normalised URL, at a depth within the limit.
    Admit(Url),
    /// Skipped for a reason that does not depend on the depth or a count.
    Skip(SkipReason),
}

impl Remembered {
    /// Whether a skip for `reason` may be remembered.
    pub(crate) fn lasts(reason: SkipReason) -> bool {
        matches!(
            reason,
            SkipReason::Scheme | SkipReason::Scope | SkipReason::Exclude
        )
    }
}

/// The gate's remembered answers, keyed by the resolved URL as written
/// (before normalisation).
#[derive(Debug, Default)]
pub(crate) struct Memo {
    answers: Mutex<HashMap<Box<str>, Remembered>>,
}

impl Memo {
    /// The answer remembered for `url`, if any.
    pub(crate) fn get(&self, url: &str) -> Option<Remembered> {
        // A poisoned lock only means a panic elsewhere mid-insert: the map
        // is still a map.
        let answers = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        answers.get(url).cloned()
    }

    /// Remembers `answer` for `url`; a full memo is emptied first.
    pub(crate) fn put(&self, url: &str, answer: Remembered) {
        let mut answers = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        if answers.len() >= MEMO_ENTRIES {
            answers.clear();
        }
        answers.insert(url.into(), answer);
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.answers.lock().map_or(0, |a| a.len())
    }
}

#[cfg(test)]
mod tests {
    use regex::Regex;

    use super::*;
    use crate::base::scope::{Scope, ScopeMode};
    use crate::base::trap::{TrapGuard, TrapKind, TrapRules};
    use crate::crawl::admission::{Admission, Gate};

    fn gate(max_depth: Option<u32>) -> Gate {
        let root = Url::parse("http://site.test/").unwrap();
        Gate {
            scope: Scope::new(&[root], ScopeMode::Strict),
            exclude: vec![Regex::new("/private/").unwrap()],
            include: Vec::new(),
            max_depth,
        }
    }

    fn url(s: &str) -> Result<Url, String> {
        Ok(Url::parse(s).unwrap())
    }

    #[test]
    fn an_admitted_url_is_remembered_and_checked_again_against_the_depth() {
        let (gate, memo) = (gate(Some(3)), Memo::default());
        let traps = TrapGuard::new(TrapRules::default());
        let link = "http://site.test/a/%7Eb";
        let normal = Admission::Admit(Url::parse("http://site.test/a/~b").unwrap());
        assert_eq!(gate.admit_link(&memo, &traps, url(link), 1), normal);
        assert_eq!(memo.len(), 1);
        assert_eq!(gate.admit_link(&memo, &traps, url(link), 3), normal);
        // Remembered, and still turned away past the depth limit.
        let deep = gate.admit_link(&memo, &traps, url(link), 4);
        assert_eq!(deep, Admission::Skip(SkipReason::Limit));
    }

    #[test]
    fn lasting_skips_are_remembered_and_the_others_judged_each_time() {
        let (gate, memo) = (gate(Some(1)), Memo::default());
        let rules = TrapRules {
            max_path_segments: 2,
            ..TrapRules::default()
        };
        let traps = TrapGuard::new(rules);
        for (link, reason) in [
            ("http://other.test/", SkipReason::Scope),
            ("http://site.test/private/x", SkipReason::Exclude),
            ("mailto:a@site.test", SkipReason::Scheme),
        ] {
            for _ in 0..2 {
                let got = gate.admit_link(&memo, &traps, url(link), 0);
                assert_eq!(got, Admission::Skip(reason), "{link}");
            }
        }
        assert_eq!(memo.len(), 3);
        // A trap and the depth limit are not remembered: each occurrence is
        // judged, and the trap counts each trip.
        for _ in 0..2 {
            let got = gate.admit_link(&memo, &traps, url("http://site.test/a/b/c/d"), 0);
            assert_eq!(got, Admission::Skip(SkipReason::Trap));
            let got = gate.admit_link(&memo, &traps, url("http://site.test/x"), 2);
            assert_eq!(got, Admission::Skip(SkipReason::Limit));
        }
        assert_eq!(memo.len(), 3);
        assert_eq!(traps.trips(), [(TrapKind::TooManySegments, 2)]);
        // Admitted at a depth within the limit, the same URL is then remembered.
        let got = gate.admit_link(&memo, &traps, url("http://site.test/x"), 1);
        assert!(matches!(got, Admission::Admit(_)));
        assert_eq!(memo.len(), 4);
    }

    #[test]
    fn a_full_memo_starts_again() {
        let memo = Memo::default();
        for i in 0..MEMO_ENTRIES + 10 {
            memo.put(
                &format!("http://site.test/{i}"),
                Remembered::Skip(SkipReason::Scope),
            );
        }
        assert_eq!(memo.len(), 10);
        assert!(memo.get("http://site.test/0").is_none());
    }
}
