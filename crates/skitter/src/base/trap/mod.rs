//! Crawler-trap defences: rules that stop a crawl from wandering forever through
//! URL spaces without end (calendars, self-deepening relative links, session ids,
//! pagers whose "next" never runs out).
//!
//! The gate asks [`TrapGuard::check`] about every URL that passed scope. Four rules
//! look only at the URL itself (length, path depth, repeated segments, implausible
//! dates) and are checked first, cheapest first; the next rule
//! (distinct query strings per path) keeps a memory-bounded tally, so a URL that a
//! stateless rule rejects never uses up a query-variant slot.
//!
//! The last rule needs what no URL shows: the page a link was found on. An
//! endless pager (`/cal/0` → `/cal/1` → …, no date, no repeat, no query) looks
//! like any deep listing by its URLs; what gives it away is that its pages are
//! the same template with another number. So a page's links are also checked
//! against [`PageChains`] (see `chain`): a link that differs from its page's URL
//! in one number is a step of a numeric chain, and once `max_similar_chain`
//! pages one after the other along one chain were each a near-duplicate of the
//! one that linked to it (a simhash of the visible text, digits masked), further
//! steps along it are skipped as [`TrapKind::EndlessPager`]. The run is carried
//! from page to linked page, so many same-template pages linked as a tree are
//! not a chain: their runs grow only as deep as the tree. A paginated listing whose pages differ is never
//! cut by this rule, however long; a pager of identical pages costs at most
//! `max_similar_chain + 1` fetches. Known blind spots: a pager whose pages
//! differ (a counter, random text) is left to the other limits, and a real
//! listing whose pages differ only in numbers (digits are masked) is cut.
//!
//! Every rule can be turned off on its own, and each trip is counted by
//! [`TrapKind`] so the report can say which rule fired how often.

mod chain;
mod path;
mod variants;

use std::fmt;
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::Datelike;
use url::{Position, Url};
use xxhash_rust::xxh3::xxh3_64;

use self::chain::Chains;
use self::variants::QueryVariants;

/// The limits a [`TrapGuard`] enforces. For the `usize` limits, `0` turns that
/// rule off (as `wget -l 0` means "no limit").
///
/// The defaults are meant to be invisible on ordinary sites and to stop the
/// classic traps within a few hundred to a couple of thousand URLs:
///
/// | rule | default | why |
/// |---|---|---|
/// | `max_url_length` | 2048 | the de-facto limit of browsers, CDNs and sitemaps; longer URLs are almost always generated junk |
/// | `max_path_segments` | 32 | real sites rarely nest past 10–15; a relative link that deepens itself passes 32 quickly |
/// | `max_segment_repeats` | 3 | `/a/b/a/b/a/b/` and `/docs/api/v1/api/v1/api/v1/` are loops; `/2024/01/01/` is not |
/// | `max_query_variants` | 1000 | a search or listing page with more distinct query strings than that is a session id or a faceted explosion |
/// | `plausible_years` | 1900 ..= this year + 10 | calendars that page on forever leave this range; archives and event listings stay in it |
/// | `max_similar_chain` | 50 | a pager serving the same page under 50 numbers in a row is not going to start showing content; a listing whose pages differ never trips it |
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TrapRules {
    /// Longest URL (bytes of the normalised, percent-encoded form) that is followed.
    pub max_url_length: usize,
    /// Most path segments a followed URL may have (a trailing `/` adds none).
    pub max_path_segments: usize,
    /// A path is a loop when one segment occurs more than this many times in it, or
    /// when a run of one or more segments occurs this many times back to back (at
    /// least twice): with 3, `/a/x/a/y/a/z/a/` and `/api/v1/api/v1/api/v1/` trip,
    /// `/2024/01/01/` and `/a/b/a/` do not.
    pub max_segment_repeats: usize,
    /// Distinct query strings followed per path (scheme, host, port and path); a URL
    /// already seen keeps passing, only a new query string beyond the limit trips.
    pub max_query_variants: usize,
    /// Years a date-shaped path may name (`None` turns the rule off). A path is
    /// date-shaped when a four-digit segment is followed by a month segment
    /// (`1`–`12` or `01`–`12`), as in `/cal/2024/5` or `/2024/05/slug`, or when one
    /// segment starts `YYYY-MM`. Plain four-digit ids such as `/p/1234` are not
    /// dates; ids followed by a small number (`/t/slug/1234/5`) look like one, which
    /// is the rule's known false positive.
    pub plausible_years: Option<RangeInclusive<u16>>,
    /// Near-duplicate pages in a row along one numeric chain before the chain is
    /// a trap. A link is a step of a chain when its URL differs from its page's
    /// only in one number (`/cal/7` → `/cal/8`, `?page=3` → `?page=4`); pages
    /// are near-duplicates when their visible text, digits masked, is nearly the
    /// same. After the limit, links stepping along that chain are skipped; a
    /// page that differs starts the count again. At most 65,536 chains are
    /// tracked per crawl (the least advanced are forgotten first).
    pub max_similar_chain: usize,
}

impl Default for TrapRules {
    fn default() -> Self {
        let this_year = u16::try_from(chrono::Utc::now().year()).unwrap_or(2025);
        TrapRules {
            max_url_length: 2048,
            max_path_segments: 32,
            max_segment_repeats: 3,
            max_query_variants: 1000,
            plausible_years: Some(1900..=this_year.saturating_add(10)),
            max_similar_chain: 50,
        }
    }
}

impl TrapRules {
    /// Every rule off: [`TrapGuard::check`] then admits everything (`--no-trap-rules`).
    pub fn off() -> Self {
        TrapRules {
            max_url_length: 0,
            max_path_segments: 0,
            max_segment_repeats: 0,
            max_query_variants: 0,
            plausible_years: None,
            max_similar_chain: 0,
        }
    }
}

/// Which trap rule rejected a URL; the suffix of the report's `trap_<kind>` counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TrapKind {
    /// Longer than `max_url_length`.
    UrlTooLong,
    /// More path segments than `max_path_segments`.
    TooManySegments,
    /// A segment or a run of segments repeats (`max_segment_repeats`).
    RepeatedSegments,
    /// A date-shaped path outside `plausible_years`.
    ImplausibleDate,
    /// A new query string on a path that already has `max_query_variants`.
    TooManyQueryVariants,
    /// A step along a numeric chain of near-duplicate pages (`max_similar_chain`).
    EndlessPager,
}

impl TrapKind {
    /// Every kind, in counter order.
    pub const ALL: [TrapKind; 6] = [
        TrapKind::UrlTooLong,
        TrapKind::TooManySegments,
        TrapKind::RepeatedSegments,
        TrapKind::ImplausibleDate,
        TrapKind::TooManyQueryVariants,
        TrapKind::EndlessPager,
    ];

    /// The stable snake_case name used in counters and the report.
    pub fn as_str(self) -> &'static str {
        match self {
            TrapKind::UrlTooLong => "url_too_long",
            TrapKind::TooManySegments => "too_many_segments",
            TrapKind::RepeatedSegments => "repeated_segments",
            TrapKind::ImplausibleDate => "implausible_date",
            TrapKind::TooManyQueryVariants => "too_many_query_variants",
            TrapKind::EndlessPager => "endless_pager",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for TrapKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Applies [`TrapRules`] to the URLs of one crawl. Shared by all workers (`&self`
/// methods, internally sharded locks); its memory is bounded (see
/// [`TrapGuard::new`]).
pub struct TrapGuard {
    rules: TrapRules,
    variants: QueryVariants,
    chains: Chains,
    trips: [AtomicU64; TrapKind::ALL.len()],
}

impl fmt::Debug for TrapGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrapGuard")
            .field("rules", &self.rules)
            .field("trips", &self.trips())
            .finish_non_exhaustive()
    }
}

impl TrapGuard {
    /// A guard with no history. The query-variant tally stores 64-bit hashes only
    /// (of the path, and of each query string seen on it) and holds at most about
    /// two million of them (≈ 40 MB at worst); when full, it forgets the paths with
    /// the fewest variants first, so a trap path (many variants) stays tracked
    /// while one-off paths make room.
    pub fn new(rules: TrapRules) -> Self {
        TrapGuard {
            rules,
            variants: QueryVariants::new(variants::DEFAULT_BUDGET),
            chains: Chains::default(),
            trips: Default::default(),
        }
    }

    /// The rules in force.
    pub fn rules(&self) -> &TrapRules {
        &self.rules
    }

    /// `Ok` when `url` (normalised, already in scope) may be followed, else the rule
    /// it breaks. Counts the trip. Never panics; takes microseconds.
    pub fn check(&self, url: &Url) -> Result<(), TrapKind> {
        let verdict = self.judge(url);
        if let Err(kind) = verdict {
            self.trips[kind.index()].fetch_add(1, Ordering::Relaxed);
        }
        verdict
    }

    /// The chain check for the links of one page: `page` is its URL and
    /// `fingerprint` the near-duplicate fingerprint of its text (`None` when it
    /// has none, such as a non-HTML body: it then only meets chains already
    /// found to be traps).
    pub fn page<'a>(&'a self, page: &'a Url, fingerprint: Option<u64>) -> PageChains<'a> {
        PageChains {
            guard: self,
            page,
            fingerprint,
            seen: Vec::new(),
        }
    }

    /// How often each rule has tripped so far, for the kinds that did.
    pub fn trips(&self) -> Vec<(TrapKind, u64)> {
        TrapKind::ALL
            .into_iter()
            .map(|k| (k, self.trips[k.index()].load(Ordering::Relaxed)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    fn judge(&self, url: &Url) -> Result<(), TrapKind> {
        let rules = &self.rules;
        if exceeds(url.as_str().len(), rules.max_url_length) {
            return Err(TrapKind::UrlTooLong);
        }
        let segments = path::Segments::of(url);
        if exceeds(segments.count, rules.max_path_segments) {
            return Err(TrapKind::TooManySegments);
        }
        if rules.max_segment_repeats > 0 && segments.repeat(rules.max_segment_repeats) {
            return Err(TrapKind::RepeatedSegments);
        }
        if let Some(years) = &rules.plausible_years
            && segments.implausible_date(years)
        {
            return Err(TrapKind::ImplausibleDate);
        }
        if let Some(query) = url.query()
            && rules.max_query_variants > 0
        {
            let path = xxh3_64(url[..Position::AfterPath].as_bytes());
            let query = xxh3_64(query.as_bytes());
            if !self.variants.admit(path, query, rules.max_query_variants) {
                return Err(TrapKind::TooManyQueryVariants);
            }
        }
        Ok(())
    }
}

/// Checks the links of one page against the endless-pager rule (see
/// [`TrapGuard::page`]); the page counts once per chain, however many of its
/// links step along it.
pub struct PageChains<'a> {
    guard: &'a TrapGuard,
    page: &'a Url,
    fingerprint: Option<u64>,
    /// The chains this page steps along, and its run along each (`None`: a
    /// trap). A page has few (next, previous, a page bar), so a list beats a map.
    seen: Vec<(u64, Option<u32>)>,
}

impl PageChains<'_> {
    /// `Ok` when `link` (found on the page, normalised, admitted by
    /// [`TrapGuard::check`]) may be followed; counts the trip if not.
    pub fn check(&mut self, link: &Url) -> Result<(), TrapKind> {
        let max = self.guard.rules.max_similar_chain;
        if max == 0 {
            return Ok(());
        }
        let Some(template) = chain::step(self.page, link) else {
            return Ok(());
        };
        let run = match self.seen.iter().find(|(t, _)| *t == template) {
            Some(&(_, run)) => run,
            None => {
                let page = xxh3_64(self.page.as_str().as_bytes());
                let run = self.guard.chains.run(page, template, self.fingerprint);
                let run = run.filter(|run| (*run as usize) < max);
                if run.is_none() {
                    self.guard.chains.trip(template);
                }
                self.seen.push((template, run));
                run
            }
        };
        if let Some(run) = run {
            // The linked page continues this page's run if it is like it.
            let link = xxh3_64(link.as_str().as_bytes());
            self.guard
                .chains
                .leave(link, template, self.fingerprint, run);
            return Ok(());
        }
        let kind = TrapKind::EndlessPager;
        self.guard.trips[kind.index()].fetch_add(1, Ordering::Relaxed);
        Err(kind)
    }
}

/// Whether `link` (resolved, not yet normalised) could be a step of a numeric
/// chain from `page` once normalised: [`PageChains::check`] would then need
/// the page's fingerprint. A page with no such link never has its fingerprint
/// read, so the crawl can skip computing it (a tenth of a real site's CPU).
///
/// Errs towards `true`: normalisation only changes percent-escapes within the
/// path and query (`%37` becomes `7`), so any same-origin link with a `%`
/// there counts, whatever its spelling.
pub fn may_step(page: &Url, link: &Url) -> bool {
    if page[..Position::BeforePath] != link[..Position::BeforePath] {
        return false;
    }
    link[Position::BeforePath..Position::AfterQuery].contains('%') || chain::is_step(page, link)
}

/// `value` is over a limit, where a limit of 0 means none.
fn exceeds(value: usize, limit: usize) -> bool {
    limit > 0 && value > limit
}
