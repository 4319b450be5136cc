//! Incremental recrawl: what a crawl remembers of each URL it fetched (a
//! [`Visit`]), how a fetch in a later pass compares with it (`settle`), and
//! which known URLs a new pass revisits, in which order ([`RecrawlOrder`],
//! `plan`).
//!
//! A pass revisits every known URL with its validators; the answer is judged
//! against the visit: a `304`, or the same payload digest as before, is
//! *unchanged* and is archived as a WARC revisit of the earlier capture (the
//! original one, not the previous revisit, so a chain of revisits always points
//! at a record holding the payload). On a `304` the page's links are not
//! extracted again: they were offered when the payload was captured, and every
//! URL they led to is itself known and revisited by the pass.

mod codec;

use std::time::Duration;

use crate::base::outcome::{Change, OutcomeKind, PageRecord};
use crate::base::request::Validators;
use crate::fetch::{Revisit, RevisitProfile};
use chrono::{DateTime, TimeZone, Utc};

pub(crate) use codec::{decode, encode};

/// What a crawl keeps of one fetched URL for the next pass (about 60 bytes
/// encoded, see the README's figure).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Visit {
    /// The status of the last answer (for a `304`: the status it confirmed).
    pub status: u16,
    /// The kind of the last outcome (a `304` keeps the earlier kind).
    pub kind: OutcomeKind,
    /// When the URL was last fetched, in seconds since the Unix epoch.
    pub fetched_s: u64,
    /// When the payload now held was captured (microseconds since the epoch):
    /// the WARC record a revisit refers to.
    pub captured_us: i64,
    /// SHA-1 of that payload as received, when the body was kept.
    pub sha1: Option<[u8; 20]>,
    /// The validators to send next time.
    pub validators: Validators,
    /// The adaptive revisit interval, in seconds.
    pub interval_s: u32,
}

/// The order in which a new pass revisits the known URLs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RecrawlOrder {
    /// Every known URL, least recently fetched first.
    #[default]
    Oldest,
    /// Only the URLs whose adaptive interval has passed since their last
    /// fetch, most overdue first; the others are skipped and counted.
    Adaptive,
}

/// Which pass a frontier that remembers visits is in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassInfo {
    /// 1 for the first crawl, one more per recrawl.
    pub number: u32,
    /// Known URLs this pass skipped as not due (adaptive order).
    pub not_due: u64,
}

/// The interval a URL starts with.
pub const FIRST_INTERVAL: Duration = Duration::from_secs(24 * 3600);
/// The shortest interval: a page that changes at every visit is revisited
/// at most hourly under `adaptive`.
pub const MIN_INTERVAL: Duration = Duration::from_secs(3600);
/// The longest interval: a page that never changes is still revisited monthly.
pub const MAX_INTERVAL: Duration = Duration::from_secs(30 * 24 * 3600);

/// The next adaptive interval: halved after a change, doubled after none,
/// within [`MIN_INTERVAL`, `MAX_INTERVAL`].
pub(crate) fn next_interval(previous: u32, change: Change) -> u32 {
    let (min, max) = (MIN_INTERVAL.as_secs() as u32, MAX_INTERVAL.as_secs() as u32);
    let next = match change {
        Change::New => FIRST_INTERVAL.as_secs() as u32,
        Change::Changed | Change::Gone => previous / 2,
        Change::Unchanged => previous.saturating_mul(2),
        Change::Failed => previous,
    };
    next.clamp(min, max)
}

/// A known URL a new pass may queue.
#[derive(Debug)]
pub(crate) struct Known {
    pub(crate) url: String,
    pub(crate) depth: u32,
    pub(crate) visit: Visit,
}

/// Where a known URL goes in a new pass's queue (smaller first), or `None`
/// when `order` finds it not due at `now` (seconds since the epoch).
pub(crate) fn queue_key(visit: &Visit, order: RecrawlOrder, now: u64) -> Option<u64> {
    let due_at = visit.fetched_s.saturating_add(u64::from(visit.interval_s));
    match order {
        RecrawlOrder::Oldest => Some(visit.fetched_s),
        RecrawlOrder::Adaptive => (due_at <= now).then_some(due_at),
    }
}

/// Splits the known URLs into those the pass revisits, in order, and those
/// not due yet.
pub(crate) fn plan(known: Vec<Known>, order: RecrawlOrder, now: u64) -> (Vec<Known>, Vec<Known>) {
    let (mut due, later): (Vec<_>, Vec<_>) = known
        .into_iter()
        .map(|k| (queue_key(&k.visit, order, now), k))
        .partition(|(key, _)| key.is_some());
    due.sort_by_key(|(key, _)| *key);
    (
        due.into_iter().map(|(_, k)| k).collect(),
        later.into_iter().map(|(_, k)| k).collect(),
    )
}

/// What a fetch in a recrawl pass came to, compared with the URL's visit.
pub(crate) struct Settled {
    /// The URL's visit as it now stands (`None`: keep the earlier one).
    pub(crate) visit: Option<Visit>,
    /// The revisit to archive instead of the payload, if any.
    pub(crate) revisit: Option<Revisit>,
}

/// Judges a finished record against the URL's earlier visit, fills in its
/// [`Change`] (only when `pass > 1`), and says what to remember.
/// `sha1` is the digest of the body received, when it was kept;
/// `validators` those the answer carried; `started` when the request went.
pub(crate) fn settle(
    record: &mut PageRecord,
    earlier: Option<&Visit>,
    pass: u32,
    sha1: Option<[u8; 20]>,
    validators: Validators,
    started: DateTime<Utc>,
) -> Settled {
    let now_s = started.timestamp().max(0) as u64;
    let captured_us = started.timestamp_micros();
    let status = record.status;
    let change = match (status, earlier) {
        _ if matches!(record.kind, OutcomeKind::Failed | OutcomeKind::Skipped) => Change::Failed,
        (None, _) => Change::Failed,
        (_, None) => Change::New,
        (Some(304), Some(_)) => Change::Unchanged,
        (Some(404 | 410), Some(e)) if (200..300).contains(&e.status) => Change::Gone,
        (Some(s), Some(e)) if (200..300).contains(&s) => match (sha1, e.sha1) {
            (Some(now), Some(before)) if now == before && s == e.status => Change::Unchanged,
            _ => Change::Changed,
        },
        (Some(s), Some(e)) if s == e.status => Change::Unchanged,
        _ => Change::Changed,
    };
    if pass > 1 {
        record.change = Some(change);
    }
    let interval_s = next_interval(earlier.map_or(0, |e| e.interval_s), change);
    match (change, earlier) {
        (Change::Failed, _) => Settled {
            visit: None,
            revisit: None,
        },
        (Change::Unchanged, Some(e)) => {
            let not_modified = status == Some(304);
            let same_digest = sha1.is_some() && sha1 == e.sha1;
            let revisit = (not_modified || same_digest).then(|| Revisit {
                profile: if not_modified {
                    RevisitProfile::ServerNotModified
                } else {
                    RevisitProfile::IdenticalPayloadDigest
                },
                refers_to_uri: record.url.clone(),
                refers_to_date: from_micros(e.captured_us),
                payload_sha1: e.sha1,
            });
            if not_modified {
                // The 304 confirms the earlier answer: keep its kind and status.
                record.kind = e.kind;
            }
            // A 304 may carry fresher validators; keep the earlier ones for
            // what it left out.
            let validators = Validators {
                etag: validators.etag.or_else(|| e.validators.etag.clone()),
                last_modified: validators
                    .last_modified
                    .or_else(|| e.validators.last_modified.clone()),
            };
            Settled {
                visit: Some(Visit {
                    fetched_s: now_s,
                    validators,
                    interval_s,
                    ..e.clone()
                }),
                revisit,
            }
        }
        _ => Settled {
            visit: Some(Visit {
                status: status.unwrap_or(0),
                kind: record.kind,
                fetched_s: now_s,
                captured_us,
                sha1,
                validators,
                interval_s,
            }),
            revisit: None,
        },
    }
}

fn from_micros(us: i64) -> DateTime<Utc> {
    Utc.timestamp_micros(us).single().unwrap_or_default()
}

#[cfg(test)]
mod tests;
