//! The endless-pager rule: numeric chains whose pages are all the same.
//!
//! A link is a *step* of a numeric chain when its URL differs from its page's
//! URL (same origin) in exactly one run of digits in the path or query
//! (`/cal/7` → `/cal/8`, `/search?q=x&page=3` → `…&page=4`, `/p-2.html` →
//! `/p-3.html`); the chain's *template* is the URL with that run masked. A URL
//! rule cannot tell a pager without end from a long real listing, but the pages
//! can: an endless pager serves the same page with another number, a listing
//! shows other items.
//!
//! So the run is carried along the chain, from page to linked page. Each page
//! that steps along a template has a near-duplicate fingerprint of its visible
//! text (digits masked, computed where the page is parsed). Its *run* is one
//! more than the run of the page that linked to it along the same template
//! when the two are near-duplicates, else 0; it leaves its fingerprint and run
//! for the pages it links to. Once a page's run reaches `max_similar_chain`,
//! its steps along the template are skipped and the template is remembered as
//! a trap. The run counts pages one after the other along a chain, not pages
//! of a template in all: a site of many same-template pages linked as a tree
//! (`/item/3` → `/item/31`…`/item/39`) grows runs only as deep as its tree,
//! while a pager's run grows with every page. One differing page resets the
//! run, so a listing whose pages differ is followed to its end.
//!
//! Memory: at most [`MAX_STEPS`] pending steps (a URL hash, a template hash, a
//! fingerprint and a run: ≈ 40 bytes each with the table), each used up when
//! its page is handled; when full, the one with the shortest run among a small
//! sample is forgotten (a pager's steps have long runs and stay). At most
//! 4,096 templates are remembered as traps.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use url::{Position, Url};
use xxhash_rust::xxh3::Xxh3;

/// Pending steps remembered at once per crawl (≈ 5 MB at most with table overhead).
pub(super) const MAX_STEPS: usize = 1 << 17;

/// Templates remembered as traps per crawl.
const MAX_TRIPPED: usize = 4096;

/// Entries looked at to pick one to forget.
const EVICTION_SAMPLE: usize = 8;

/// Fingerprints this many bits apart or fewer (of 64) are near-duplicates.
const NEAR_DUPLICATE_BITS: u32 = 3;

/// The template (hashed) `link` is a step of from `page`, if it is one.
/// Whether it is one is found first ([`is_step`]), without hashing: most
/// links of most pages are not. Telling that was the largest single cost of a
/// crawl of Debian's rust-doc (4.4% of its CPU: twice a link, once for
/// [`may_step`](super::may_step) and once to check it).
pub(super) fn step(page: &Url, link: &Url) -> Option<u64> {
    if !is_step(page, link) {
        return None;
    }
    let a = &page[Position::BeforePath..Position::AfterQuery];
    let b = &link[Position::BeforePath..Position::AfterQuery];
    let mut hash = Xxh3::new();
    hash.update(page[..Position::BeforePath].as_bytes());
    // A step: the tokens pair up, and the one pair that differs is numbers.
    for (s, t) in Tokens(a).zip(Tokens(b)) {
        if s == t {
            hash.update(s.as_bytes());
        } else {
            // A byte no URL holds marks where the number was.
            hash.update(b"\0");
        }
    }
    Some(hash.digest())
}

/// `link` has `page`'s origin, and its path and query differ from the
/// page's in exactly one run of digits.
pub(super) fn is_step(page: &Url, link: &Url) -> bool {
    if page[..Position::BeforePath] != link[..Position::BeforePath] {
        return false;
    }
    let a = &page[Position::BeforePath..Position::AfterQuery];
    let b = &link[Position::BeforePath..Position::AfterQuery];
    // A step is `P n1 S` against `P n2 S`, n1 and n2 runs of digits: where
    // the two first differ is in or just after a run of digits in each. Most
    // same-origin links (a site's menus) fail this at their first differing
    // byte, without splitting both URLs into tokens.
    let first_difference = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let at_a_number = |s: &str| {
        let s = s.as_bytes();
        s.get(first_difference).is_some_and(u8::is_ascii_digit)
            || first_difference
                .checked_sub(1)
                .and_then(|i| s.get(i))
                .is_some_and(u8::is_ascii_digit)
    };
    if !at_a_number(a) || !at_a_number(b) {
        return false;
    }
    let mut differing = 0;
    let (mut x, mut y) = (Tokens(a), Tokens(b));
    loop {
        match (x.next(), y.next()) {
            (None, None) => return differing == 1,
            (Some(s), Some(t)) if s == t => {}
            (Some(s), Some(t)) if is_number(s) && is_number(t) => {
                differing += 1;
                if differing > 1 {
                    return false;
                }
            }
            _ => return false,
        }
    }
}

/// `a` and `b` are fingerprints of near-duplicate pages.
pub(super) fn near_duplicates(a: u64, b: u64) -> bool {
    (a ^ b).count_ones() <= NEAR_DUPLICATE_BITS
}

fn is_number(s: &str) -> bool {
    s.as_bytes().first().is_some_and(u8::is_ascii_digit)
}

/// Maximal runs of ASCII digits and of everything else.
struct Tokens<'a>(&'a str);

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let first = *self.0.as_bytes().first()?;
        let digits = first.is_ascii_digit();
        let end = self
            .0
            .bytes()
            .position(|c| c.is_ascii_digit() != digits)
            .unwrap_or(self.0.len());
        let (token, rest) = self.0.split_at(end);
        self.0 = rest;
        Some(token)
    }
}

/// What a page that stepped along a template left for the page it links to.
#[derive(Clone, Copy)]
struct Step {
    template: u64,
    /// The linking page's fingerprint.
    fingerprint: u64,
    /// How many pages in a row before the linking page, along this template,
    /// were near-duplicates of the one before them.
    run: u32,
}

/// Chain runs carried from page to page, memory-bounded.
#[derive(Default)]
pub(super) struct Chains {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Keyed by the hash of the linked URL: what its linking page left.
    steps: HashMap<u64, Step>,
    /// Templates found to be traps.
    tripped: HashSet<u64>,
}

impl Chains {
    /// The run of the page at `page` (URL hash) with `fingerprint` along
    /// `template`: one more than its linking page's when it is a near-duplicate
    /// of it, else 0. `None` when the template is known to be a trap.
    pub(super) fn run(&self, page: u64, template: u64, fingerprint: Option<u64>) -> Option<u32> {
        let mut state = self.lock();
        if state.tripped.contains(&template) {
            return None;
        }
        let Some(fingerprint) = fingerprint else {
            return Some(0);
        };
        // Each page is handled once: what was left for it is used up.
        let run = match state.steps.remove(&page) {
            Some(step)
                if step.template == template && near_duplicates(step.fingerprint, fingerprint) =>
            {
                step.run.saturating_add(1)
            }
            _ => 0,
        };
        Some(run)
    }

    /// Remembers that `template` is a trap (while fewer than [`MAX_TRIPPED`]
    /// are: beyond that, each chain still stops by its own run).
    pub(super) fn trip(&self, template: u64) {
        let mut state = self.lock();
        if state.tripped.len() < MAX_TRIPPED {
            state.tripped.insert(template);
        }
    }

    /// Leaves a page's run and fingerprint for the page at `link` (URL hash),
    /// unless an earlier page already did.
    pub(super) fn leave(&self, link: u64, template: u64, fingerprint: Option<u64>, run: u32) {
        let Some(fingerprint) = fingerprint else {
            return;
        };
        let mut state = self.lock();
        if state.steps.contains_key(&link) {
            return;
        }
        if state.steps.len() >= MAX_STEPS {
            let victim = state
                .steps
                .iter()
                .take(EVICTION_SAMPLE)
                .min_by_key(|(_, step)| step.run)
                .map(|(k, _)| *k);
            if let Some(victim) = victim {
                state.steps.remove(&victim);
            }
        }
        let step = Step {
            template,
            fingerprint,
            run,
        };
        state.steps.insert(link, step);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Nothing panics while this is held; a poisoned map is still consistent.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().steps.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    /// `step` as first written (hashing as it compared), the reference for
    /// the one that checks first and hashes after.
    fn step_reference(page: &Url, link: &Url) -> Option<u64> {
        if page[..Position::BeforePath] != link[..Position::BeforePath] {
            return None;
        }
        let a = &page[Position::BeforePath..Position::AfterQuery];
        let b = &link[Position::BeforePath..Position::AfterQuery];
        let mut hash = Xxh3::new();
        hash.update(page[..Position::BeforePath].as_bytes());
        let mut differing = 0;
        let (mut x, mut y) = (Tokens(a), Tokens(b));
        loop {
            match (x.next(), y.next()) {
                (None, None) => break,
                (Some(s), Some(t)) if s == t => hash.update(s.as_bytes()),
                (Some(s), Some(t)) if is_number(s) && is_number(t) => {
                    differing += 1;
                    if differing > 1 {
                        return None;
                    }
                    hash.update(b"\0");
                }
                _ => return None,
            }
        }
        (differing == 1).then(|| hash.digest())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 1024,
            rng_seed: proptest::test_runner::RngSeed::Fixed(54),
            ..proptest::prelude::ProptestConfig::default()
        })]
        /// The check-then-hash `step` gives what hashing as it compared gave,
        /// on pairs of URLs built from a few segments, numbers among them, so
        /// that many pairs are steps and many are near misses.
        #[test]
        fn step_matches_the_reference(
            page in proptest::collection::vec("(cal|p-|[0-9]{1,3}|/|\\?page=|&q=x|\\.html)", 0..6),
            link in proptest::collection::vec("(cal|p-|[0-9]{1,3}|/|\\?page=|&q=x|\\.html)", 0..6),
            host in "(h|g)",
        ) {
            let page = u(&format!("http://h/{}", page.concat()));
            let link = u(&format!("http://{host}/{}", link.concat()));
            proptest::prop_assert_eq!(step(&page, &link), step_reference(&page, &link));
            proptest::prop_assert_eq!(is_step(&page, &link), step_reference(&page, &link).is_some());
            // A page and a link one number apart, built to be a step.
            let stepped = u(&page.as_str().replacen(char::is_numeric, "9", 1));
            proptest::prop_assert_eq!(step(&page, &stepped), step_reference(&page, &stepped));
            // And one digit longer, where one number is a prefix of the other.
            if let Some(at) = page.as_str().find(char::is_numeric) {
                let mut longer = page.as_str().to_string();
                longer.insert(at + 1, '7');
                let longer = u(&longer);
                proptest::prop_assert_eq!(step(&page, &longer), step_reference(&page, &longer));
                proptest::prop_assert_eq!(step(&longer, &page), step_reference(&longer, &page));
            }
        }
    }

    #[test]
    fn steps_table() {
        // (page, link, the link is a step of a numeric chain from the page).
        let cases: [(&str, &str, bool); 17] = [
            ("http://h/cal/0", "http://h/cal/1", true),
            ("http://h/cal/1", "http://h/cal/10", true),
            ("http://h/cal/10", "http://h/cal/1", true),
            ("http://h/p-1.html", "http://h/p-12.html", true),
            ("http://h/cal/41", "http://h/cal/40", true),
            ("http://h/cal/9", "http://h/cal/10", true),
            ("http://h/s?q=x&page=3", "http://h/s?q=x&page=4", true),
            ("http://h/p-2.html", "http://h/p-3.html", true),
            ("http://h/t/77/2", "http://h/t/77/3", true),
            ("http://h/cal/1", "http://h/cal/1", false),
            ("http://h/a/1/b/2", "http://h/a/2/b/3", false),
            ("http://h/cal/1", "http://h/other/2", false),
            ("http://h/cal/1", "http://h/cal/x", false),
            ("http://h/s?page=3", "http://h/s?page=4&sort=a", false),
            ("http://h/cal/1", "http://g/cal/2", false),
            ("http://h/cal/1", "https://h/cal/2", false),
            ("http://h/", "http://h/1", false),
        ];
        for (page, link, want) in cases {
            assert_eq!(step(&u(page), &u(link)).is_some(), want, "{page} → {link}");
        }
    }

    #[test]
    fn one_template_per_chain() {
        let t = |p: &str, l: &str| step(&u(p), &u(l)).unwrap();
        let cal = t("http://h/cal/0", "http://h/cal/1");
        assert_eq!(t("http://h/cal/500", "http://h/cal/499"), cal);
        assert_ne!(t("http://h/pager/0", "http://h/pager/1"), cal);
        assert_ne!(t("http://g/cal/0", "http://g/cal/1"), cal);
        // The same path with the other number moving is another chain.
        assert_ne!(
            t("http://h/t/1/2", "http://h/t/1/3"),
            t("http://h/t/1/2", "http://h/t/2/2")
        );
    }

    /// Pages `0..prints.len()` of a chain (template 1), page `n` linking page
    /// `n + 1`: each page's run.
    fn runs(chains: &Chains, prints: &[Option<u64>]) -> Vec<Option<u32>> {
        let base = 1000;
        prints
            .iter()
            .enumerate()
            .map(|(n, &fp)| {
                let n = base + n as u64;
                let run = chains.run(n, 1, fp);
                chains.leave(n + 1, 1, fp, run.unwrap_or(0));
                run
            })
            .collect()
    }

    #[test]
    fn runs_grow_along_near_duplicates_and_reset_on_a_differing_page() {
        let near = [Some(0b1010), Some(0b1010), Some(0b1011), Some(0b1011)];
        assert_eq!(
            runs(&Chains::default(), &near),
            [Some(0), Some(1), Some(2), Some(3)]
        );
        let reset = [Some(0), Some(0), Some(u64::MAX), Some(u64::MAX), Some(0)];
        assert_eq!(
            runs(&Chains::default(), &reset),
            [Some(0), Some(1), Some(0), Some(1), Some(0)]
        );
        let listing: Vec<_> = (0..100u64)
            .map(|i| Some(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
            .collect();
        assert!(
            runs(&Chains::default(), &listing)
                .iter()
                .all(|r| *r == Some(0))
        );
        // No fingerprint (not HTML): not counted, and nothing left behind.
        let chains = Chains::default();
        assert_eq!(runs(&chains, &[None, None]), [Some(0), Some(0)]);
        assert_eq!(chains.len(), 0);
        // Another template's step does not carry the run.
        let chains = Chains::default();
        chains.leave(5, 1, Some(0), 40);
        assert_eq!(chains.run(5, 2, Some(0)), Some(0));
        // A tripped template is a trap from any page.
        chains.trip(1);
        assert_eq!(chains.run(77, 1, Some(0)), None);
    }

    #[test]
    fn pending_steps_are_bounded_and_long_runs_stay() {
        let chains = Chains::default();
        chains.leave(u64::MAX, 1, Some(7), 40);
        for link in 0..(MAX_STEPS as u64 + 500) {
            chains.leave(link, 2, Some(link), 0);
        }
        assert!(chains.len() <= MAX_STEPS);
        assert_eq!(chains.run(u64::MAX, 1, Some(7)), Some(41));
    }
}
