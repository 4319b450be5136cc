//! The report's counters as one typed value, [`Counters`].
//!
//! Code reads and writes fields (`counters.html`, `counters.fail[&ErrorKind::Timeout]`);
//! the flat names the baseline's report printed (`html`, `fail_timeout`,
//! `status_404`, `links_skipped_scope`…) exist only at the edges: the text and
//! JSON report, the HTML report's table, and the crawl-wide totals a Redis crawl
//! keeps as one hash field per name. [`Counters::entries`] makes the names and
//! [`Counters::from_entries`] reads them back, so the two cannot drift (a unit
//! test round-trips every field).
//!
//! A counter that is zero is not shown, as before: a family (`fail_*`) lists
//! only the kinds that happened. A byte counter (`html_bytes`) is shown whenever
//! its count (`html`) is, even at zero bytes.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::IntoDeserializer;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};

use crate::base::outcome::{Change, ErrorKind, OutcomeKind, PageRecord, RenderReason, SkipReason};
use crate::base::trap::TrapKind;
use crate::host::politeness::ThrottleReason;

/// Declares the counters that are one number each, once: the struct's fields and
/// the list of names `entries` and `from_entries` use are made from the same
/// lines, so a new counter cannot be printed and lost on the way back.
macro_rules! counters {
    ($( $(#[$doc:meta])* $field:ident, )* ; $( $(#[$fdoc:meta])* $family:ident: $key:ty = $prefix:literal, )*) => {
        /// Every counter of a crawl's report, typed. See the module header for
        /// the names they are shown under.
        #[derive(Clone, Debug, Default, PartialEq, Eq)]
        #[non_exhaustive]
        pub struct Counters {
            $( $(#[$doc])* pub $field: u64, )*
            $( $(#[$fdoc])* pub $family: BTreeMap<$key, u64>, )*
        }

        impl Counters {
            fn single(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
                [$( (stringify!($field), self.$field), )*].into_iter()
            }

            fn single_mut(&mut self, name: &str) -> Option<&mut u64> {
                match name {
                    $( stringify!($field) => Some(&mut self.$field), )*
                    _ => None,
                }
            }

            fn families(&self, out: &mut Vec<(String, u64)>) {
                $( family(out, $prefix, &self.$family); )*
            }

            /// Adds `name` = `n` from the flat form; false when the name is unknown.
            fn set_entry(&mut self, name: &str, n: u64) -> bool {
                if let Some(slot) = self.single_mut(name) {
                    *slot = slot.saturating_add(n);
                    return true;
                }
                $(
                    if let Some(key) = name.strip_prefix($prefix).and_then(<$key as Named>::parse) {
                        let slot = self.$family.entry(key).or_default();
                        *slot = slot.saturating_add(n);
                        return true;
                    }
                )*
                false
            }

            /// Adds every counter of `other` to this one.
            pub fn add(&mut self, other: &Counters) {
                $( self.$field = self.$field.saturating_add(other.$field); )*
                $(
                    for (key, n) in &other.$family {
                        let slot = self.$family.entry(*key).or_default();
                        *slot = slot.saturating_add(*n);
                    }
                )*
            }
        }
    };
}

counters! {
    /// 2xx HTML pages, parsed for links (`html`).
    html,
    /// Their body bytes as received (`html_bytes`).
    html_bytes,
    /// 2xx responses of other types (`other`).
    other,
    /// Their body bytes (`other_bytes`).
    other_bytes,
    /// Responses with an error status (`error`).
    error,
    /// Their body bytes (`error_bytes`).
    error_bytes,
    /// Redirects (`redirect`).
    redirect,
    /// URLs with no usable response after every attempt (`fail`).
    fail,
    /// URLs never fetched (`skipped`).
    skipped,
    /// Bodies cut at the size cap (`truncated`).
    truncated,
    /// Links pages had past `--max-links-per-page`, dropped unread (`links_cut`).
    links_cut,
    /// Records the extraction rules found (`items`).
    items,
    /// Items an items database refused with the rest of their page's, for
    /// a value in it, and left out (`items_refused`).
    items_refused,
    /// Pages where an extraction rule failed (`extract_errors`).
    extract_errors,
    /// Pages rendered in the browser (`rendered`).
    rendered,
    /// Rendered pages whose render failed (`render_failed`).
    render_failed,
    /// URLs whose handling failed by a bug in skitter, a panic while handling
    /// them (`internal_errors`).
    internal_errors,
    /// Attempts handed back for another try (`retries`).
    retries,
    /// URLs whose attempts used up their shared deadline (`--url-deadline`)
    /// and failed as timeouts (`url_deadline_exceeded`).
    url_deadline_exceeded,
    /// The recrawl pass, from the second on (`recrawl_pass`).
    recrawl_pass,
    /// URLs of the state a recrawl pass left alone as not due (`recrawl_not_due`).
    recrawl_not_due,
    /// Requests the browser made that the crawl fetched (`render_requests`).
    render_requests,
    /// Times the browser was restarted (`render_restarts`).
    render_restarts,
    /// Browser requests refused as out of scope (`render_refused_scope`).
    render_refused_scope,
    /// Browser requests refused by robots.txt (`render_refused_robots`).
    render_refused_robots,
    /// Browser requests refused by the address policy (`render_refused_address`).
    render_refused_address,
    /// Browser requests refused for their method (`render_refused_method`).
    render_refused_method,
    /// Browser requests that failed (`render_request_failed`).
    render_request_failed,
    /// Browser requests refused past their render's budget of requests or
    /// bytes (`render_refused_budget`).
    render_refused_budget,
    /// Browser starts without Chromium's sandbox (`render_unsandboxed`).
    render_unsandboxed,
    /// HTML pages turned into Markdown and text for an output that reads
    /// them (`content_pages`).
    content_pages,
    /// Blocks dropped from those pages as their host's boilerplate, a block
    /// repeated on most of its pages (`content_boilerplate_blocks`).
    content_boilerplate_blocks,
    /// The Markdown bytes of those blocks (`content_boilerplate_bytes`).
    content_boilerplate_bytes,
    ;
    /// Error responses by status (`status_404`).
    status: u16 = "status_",
    /// Failed URLs by kind (`fail_timeout`).
    fail_by: ErrorKind = "fail_",
    /// Error responses by the kind of the problem noted with them (`error_body`).
    error_by: ErrorKind = "error_",
    /// Redirects not followed, by why (`redirect_too_many_redirects`).
    redirect_by: ErrorKind = "redirect_",
    /// Skipped URLs by reason (`skipped_robots`).
    skipped_by: SkipReason = "skipped_",
    /// Discovered links not followed, by reason (`links_skipped_scope`).
    links_skipped: SkipReason = "links_skipped_",
    /// Trap rule trips by rule (`trap_url_too_long`).
    traps: TrapKind = "trap_",
    /// Host slow-downs by reason (`throttle_429`).
    throttles: ThrottleReason = "throttle_",
    /// Rendered pages by why (`rendered_noscript`).
    rendered_by: RenderReason = "rendered_",
    /// Recrawled URLs by how they compare with the last pass (`change_unchanged`).
    changes: Change = "change_",
}

impl Counters {
    /// Counts one finished URL's record, by the baseline's rules.
    pub fn count(&mut self, p: &PageRecord) {
        self.items += p.items;
        self.extract_errors += u64::from(p.extract_failed);
        if let Some(reason) = p.rendered {
            self.rendered += 1;
            bump(&mut self.rendered_by, reason);
            if p.kind == OutcomeKind::Failed {
                self.render_failed += 1;
            }
        }
        match p.kind {
            OutcomeKind::Failed => {
                self.fail += 1;
                bump(
                    &mut self.fail_by,
                    p.error.as_ref().map_or(ErrorKind::Other, |e| e.kind),
                );
                if p.error.as_ref().is_some_and(|e| e.is_internal()) {
                    self.internal_errors += 1;
                }
            }
            OutcomeKind::Redirect => {
                self.redirect += 1;
                if let Some(e) = &p.error {
                    bump(&mut self.redirect_by, e.kind);
                }
            }
            OutcomeKind::Html => {
                self.html += 1;
                self.html_bytes += p.size;
            }
            OutcomeKind::Other => {
                self.other += 1;
                self.other_bytes += p.size;
            }
            OutcomeKind::HttpError => {
                self.error += 1;
                self.error_bytes += p.size;
                if let Some(s) = p.status {
                    bump(&mut self.status, s);
                }
                if let Some(e) = &p.error {
                    bump(&mut self.error_by, e.kind);
                }
            }
            OutcomeKind::Skipped => {
                self.skipped += 1;
                if let Some(why) = p.skip {
                    bump(&mut self.skipped_by, why);
                }
            }
        }
        self.truncated += u64::from(p.truncated);
        if let Some(change) = p.change {
            bump(&mut self.changes, change);
        }
    }

    /// Every counter that is not zero under its flat name (`html`,
    /// `fail_timeout`…), sorted by name: what the text report prints and the
    /// JSON report holds. A byte counter comes with its count, even at zero.
    pub fn entries(&self) -> Vec<(String, u64)> {
        let mut out: Vec<(String, u64)> = self
            .single()
            .filter(|&(name, n)| n > 0 || self.bytes_shown(name))
            .map(|(name, n)| (name.to_string(), n))
            .collect();
        self.families(&mut out);
        out.sort_unstable();
        out
    }

    fn bytes_shown(&self, name: &str) -> bool {
        match name {
            "html_bytes" => self.html > 0,
            "other_bytes" => self.other > 0,
            "error_bytes" => self.error > 0,
            _ => false,
        }
    }

    /// The counter shown as `name` (0 when it is not one, or did not happen).
    pub fn get(&self, name: &str) -> u64 {
        self.entries()
            .into_iter()
            .find(|(k, _)| k == name)
            .map_or(0, |(_, n)| n)
    }

    /// Counters from their flat names, as [`Counters::entries`] writes them
    /// (the same name twice adds up). Names that are no counter are handed
    /// back, for the caller to report: totals written by a newer version, or
    /// by something other than skitter.
    pub fn from_entries<I, S>(entries: I) -> (Counters, Vec<(String, u64)>)
    where
        I: IntoIterator<Item = (S, u64)>,
        S: AsRef<str>,
    {
        let mut counters = Counters::default();
        let mut unknown = Vec::new();
        for (name, n) in entries {
            if !counters.set_entry(name.as_ref(), n) {
                unknown.push((name.as_ref().to_string(), n));
            }
        }
        (counters, unknown)
    }

    /// Whether no counter is above zero.
    pub fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }
}

fn bump<K: Ord>(map: &mut BTreeMap<K, u64>, key: K) {
    *map.entry(key).or_default() += 1;
}

fn family<K: Named>(out: &mut Vec<(String, u64)>, prefix: &str, map: &BTreeMap<K, u64>) {
    out.extend(
        map.iter()
            .filter(|&(_, &n)| n > 0)
            .map(|(k, &n)| (format!("{prefix}{}", k.name()), n)),
    );
}

impl Serialize for Counters {
    /// A JSON object of [`Counters::entries`]: the report's keys as before.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let entries = self.entries();
        let mut map = s.serialize_map(Some(entries.len()))?;
        for (name, n) in &entries {
            map.serialize_entry(name, n)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Counters {
    /// Reads the object [`Serialize`] writes; a key that is no counter is an error.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let flat = BTreeMap::<String, u64>::deserialize(d)?;
        let (counters, unknown) = Counters::from_entries(flat);
        match unknown.first() {
            Some((name, _)) => Err(serde::de::Error::custom(format!(
                "unknown report counter {name:?}"
            ))),
            None => Ok(counters),
        }
    }
}

impl fmt::Display for Counters {
    /// The report's counter lines: the value right-aligned, then the name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, n) in self.entries() {
            writeln!(f, "{n:>10} {name}")?;
        }
        Ok(())
    }
}

/// A kind that names the members of a counter family (`fail_` + `timeout`).
trait Named: Copy + Ord {
    fn name(self) -> String;
    fn parse(name: &str) -> Option<Self>;
}

/// Kinds whose serde names are their counter names.
fn by_serde<'de, T: Deserialize<'de>>(name: &'de str) -> Option<T> {
    T::deserialize(IntoDeserializer::<serde::de::value::Error>::into_deserializer(name)).ok()
}

impl Named for u16 {
    fn name(self) -> String {
        self.to_string()
    }
    fn parse(name: &str) -> Option<Self> {
        // `status_0404` is not a name the report writes.
        name.parse().ok().filter(|s: &u16| s.to_string() == name)
    }
}

impl Named for ErrorKind {
    fn name(self) -> String {
        self.as_str().to_string()
    }
    fn parse(name: &str) -> Option<Self> {
        by_serde(name)
    }
}

impl Named for SkipReason {
    fn name(self) -> String {
        self.as_str().to_string()
    }
    fn parse(name: &str) -> Option<Self> {
        by_serde(name)
    }
}

impl Named for Change {
    fn name(self) -> String {
        self.as_str().to_string()
    }
    fn parse(name: &str) -> Option<Self> {
        by_serde(name)
    }
}

impl Named for RenderReason {
    /// `empty-root` is shown as `rendered_empty_root`.
    fn name(self) -> String {
        self.as_str().replace('-', "_")
    }
    fn parse(name: &str) -> Option<Self> {
        if name.contains('-') {
            return None;
        }
        let kebab = name.replace('_', "-");
        by_serde::<RenderReason>(&kebab)
    }
}

impl Named for TrapKind {
    fn name(self) -> String {
        self.as_str().to_string()
    }
    fn parse(name: &str) -> Option<Self> {
        TrapKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl Named for ThrottleReason {
    fn name(self) -> String {
        self.as_str().to_string()
    }
    fn parse(name: &str) -> Option<Self> {
        ThrottleReason::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use url::Url;

    use super::*;
    use crate::base::outcome::FetchFailure;

    fn record(kind: OutcomeKind) -> PageRecord {
        let url = Url::parse("http://a.test/").unwrap();
        PageRecord {
            kind,
            skip: None,
            elapsed: Duration::ZERO,
            ..PageRecord::skipped(url, SkipReason::Limit, 0, None)
        }
    }

    fn names(c: &Counters) -> Vec<String> {
        c.entries().into_iter().map(|(k, _)| k).collect()
    }

    /// The names one record adds to are the baseline's, as the string-keyed
    /// counters wrote them before they were typed.
    #[test]
    fn a_record_counts_under_the_baseline_names() {
        let failure = |kind| FetchFailure {
            kind,
            message: String::new(),
        };
        let mut html = record(OutcomeKind::Html);
        html.size = 0;
        html.rendered = Some(RenderReason::EmptyRoot);
        html.change = Some(Change::Unchanged);
        html.items = 2;
        let mut failed = record(OutcomeKind::Failed);
        failed.error = Some(FetchFailure::internal("boom"));
        failed.truncated = true;
        let mut redirect = record(OutcomeKind::Redirect);
        redirect.error = Some(failure(ErrorKind::TooManyRedirects));
        let mut http = record(OutcomeKind::HttpError);
        http.status = Some(404);
        http.size = 7;
        let mut skipped = record(OutcomeKind::Skipped);
        skipped.skip = Some(SkipReason::RobotsUnavailable);
        let cases: [(PageRecord, &[&str]); 5] = [
            (
                html,
                &[
                    "change_unchanged",
                    "html",
                    "html_bytes",
                    "items",
                    "rendered",
                    "rendered_empty_root",
                ],
            ),
            (
                failed,
                &["fail", "fail_other", "internal_errors", "truncated"],
            ),
            (redirect, &["redirect", "redirect_too_many_redirects"]),
            (http, &["error", "error_bytes", "status_404"]),
            (skipped, &["skipped", "skipped_robots_unavailable"]),
        ];
        for (record, want) in cases {
            let mut c = Counters::default();
            c.count(&record);
            assert_eq!(names(&c), want, "{:?}", record.kind);
        }
    }

    /// Every field, set to a value of its own, reads back from its names:
    /// the list `entries` writes and the one `from_entries` reads are one.
    #[test]
    fn every_counter_round_trips_through_its_names() {
        let mut c = Counters::default();
        let mut n = 0;
        let mut next = || {
            n += 1;
            n
        };
        for name in Counters::default().single().map(|(name, _)| name) {
            *c.single_mut(name).unwrap() = next();
        }
        c.status.insert(503, next());
        for kind in [ErrorKind::Timeout, ErrorKind::NoSuchHost] {
            c.fail_by.insert(kind, next());
            c.error_by.insert(kind, next());
            c.redirect_by.insert(kind, next());
        }
        for why in [SkipReason::Robots, SkipReason::RobotsUnavailable] {
            c.skipped_by.insert(why, next());
            c.links_skipped.insert(why, next());
        }
        for kind in TrapKind::ALL {
            c.traps.insert(kind, next());
        }
        for why in ThrottleReason::ALL {
            c.throttles.insert(why, next());
        }
        for why in [
            RenderReason::Always,
            RenderReason::Noscript,
            RenderReason::EmptyRoot,
            RenderReason::ScriptFewLinks,
            RenderReason::Screenshot,
        ] {
            c.rendered_by.insert(why, next());
        }
        for change in [Change::New, Change::Gone] {
            c.changes.insert(change, next());
        }
        let entries = c.entries();
        let values: Vec<u64> = entries.iter().map(|(_, n)| *n).collect();
        let mut distinct = values.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), values.len(), "two fields share a name");
        let (back, unknown) = Counters::from_entries(entries.clone());
        assert!(unknown.is_empty(), "{unknown:?}");
        assert_eq!(back, c);
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<Counters>(&json).unwrap(), c);
        for (name, n) in entries {
            assert_eq!(c.get(&name), n, "{name}");
        }
    }

    #[test]
    fn names_that_are_no_counter_are_handed_back() {
        let (c, unknown) = Counters::from_entries([
            ("html", 2),
            ("html", 3),
            ("fail_sunspots", 1),
            ("status_0404", 1),
            ("rendered_empty-root", 1),
            ("mystery", 4),
        ]);
        assert_eq!(c.html, 5);
        assert_eq!(names(&c), ["html", "html_bytes"]);
        let unknown: Vec<&str> = unknown.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            unknown,
            [
                "fail_sunspots",
                "status_0404",
                "rendered_empty-root",
                "mystery"
            ]
        );
        let err = serde_json::from_str::<Counters>(r#"{"html":1,"mystery":2}"#).unwrap_err();
        assert!(err.to_string().contains("mystery"), "{err}");
    }

    #[test]
    fn zeros_are_hidden_but_bytes_go_with_their_count() {
        let mut c = Counters::default();
        c.links_skipped.insert(SkipReason::Scope, 0);
        assert!(c.is_empty());
        c.other = 1;
        assert_eq!(c.to_string(), "         1 other\n         0 other_bytes\n");
    }

    #[test]
    fn adding_saturates() {
        let mut a = Counters {
            html: u64::MAX,
            status: BTreeMap::from([(404, u64::MAX)]),
            ..Counters::default()
        };
        let b = a.clone();
        a.add(&b);
        assert_eq!((a.html, a.status[&404]), (u64::MAX, u64::MAX));
    }
}
