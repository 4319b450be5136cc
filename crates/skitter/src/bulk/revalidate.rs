//! Conditional re-downloads (`--if-modified`): what the [`index`](super::index)
//! knows about an item decides the request, and the response decides the
//! item's [`Change`], whether its file is written, and the index row.
//!
//! - A `304` to the conditional request: unchanged; the file is not touched,
//!   and an archived exchange becomes a `server-not-modified` revisit.
//! - A `2xx` whose payload digest is the one the index holds (a server that
//!   ignores validators): unchanged too, the file not rewritten, and an
//!   `identical-payload-digest` revisit.
//! - Another `2xx`: changed (new when the index did not know the URL); the
//!   file is replaced.
//! - `404`/`410` for a URL the index knew: gone; its row is dropped, its file kept.
//! - Anything else: failed; the row is kept for the next run.

use chrono::Utc;
use url::Url;

use super::index::{Known, Update};
use super::summary::Outcome;
use crate::base::outcome::Change;
use crate::fetch::{Revisit, RevisitProfile, Validators};
use crate::output::Page;

/// The validators to send with a request for `hop`: the index's, when they
/// belong to that URL (the one redirects led to last time).
pub(super) fn validators_for<'a>(known: Option<&'a Known>, hop: &Url) -> Option<&'a Validators> {
    known
        .filter(|k| &k.final_url == hop && !k.validators.is_empty())
        .map(|k| &k.validators)
}

/// What a final response means for an item fetched with `--if-modified`.
#[derive(Debug)]
pub(super) struct Judged {
    /// How it compares with the last run.
    pub change: Change,
    /// Write the body to the item's file.
    pub save: bool,
    /// The index row to write once the file is in place.
    pub update: Option<Update>,
}

/// Judges the final `page` of item `url` against what the index `known`
/// holds, and marks its exchange as a revisit when the payload is the
/// archived one. `outcome` is how the item ended; `validators` are the final
/// response's.
pub(super) fn judge(
    (url, known): (&Url, Option<&Known>),
    page: &mut Page,
    outcome: &Outcome,
    validators: Validators,
) -> Judged {
    let status = match outcome {
        Outcome::Ok { status } => *status,
        Outcome::HttpError {
            status: 404 | 410, ..
        } if known.is_some() => {
            return Judged {
                change: Change::Gone,
                save: false,
                update: Some(Update::Remove(url.clone())),
            };
        }
        _ => return not_saved(Change::Failed),
    };
    let now = Utc::now();
    if status == 304 {
        let Some(known) = known else {
            return not_saved(Change::Failed);
        };
        mark_revisit(page, known, RevisitProfile::ServerNotModified);
        let mut kept = known.clone();
        // A 304 need not repeat every validator; the ones it leaves out stand.
        kept.validators = Validators {
            etag: validators.etag.or_else(|| known.validators.etag.clone()),
            last_modified: validators
                .last_modified
                .or_else(|| known.validators.last_modified.clone()),
        };
        return Judged {
            change: Change::Unchanged,
            save: false,
            update: Some(put(url, kept, now)),
        };
    }
    let Some(exchange) = page.exchange.as_ref() else {
        // Without the exchange there is no digest to index: saved, not indexed.
        return Judged {
            change: if known.is_some() {
                Change::Changed
            } else {
                Change::New
            },
            save: true,
            update: None,
        };
    };
    let sha1 = exchange.body_sha1();
    let fresh = Known {
        final_url: page.record.url.clone(),
        validators,
        sha1,
        captured_at: exchange.started,
    };
    match known {
        Some(old) if old.sha1 == sha1 => {
            mark_revisit(page, old, RevisitProfile::IdenticalPayloadDigest);
            // The payload stays the one captured then; the validators are today's.
            let kept = Known {
                validators: fresh.validators,
                final_url: fresh.final_url,
                ..old.clone()
            };
            Judged {
                change: Change::Unchanged,
                save: false,
                update: Some(put(url, kept, now)),
            }
        }
        Some(_) => saved(Change::Changed, put(url, fresh, now)),
        None => saved(Change::New, put(url, fresh, now)),
    }
}

fn not_saved(change: Change) -> Judged {
    Judged {
        change,
        save: false,
        update: None,
    }
}

fn saved(change: Change, update: Update) -> Judged {
    Judged {
        change,
        save: true,
        update: Some(update),
    }
}

fn put(url: &Url, known: Known, checked_at: chrono::DateTime<Utc>) -> Update {
    Update::Put {
        url: url.clone(),
        known,
        checked_at,
    }
}

fn mark_revisit(page: &mut Page, known: &Known, profile: RevisitProfile) {
    if let Some(exchange) = page.exchange.as_mut() {
        exchange.revisit = Some(Revisit {
            profile,
            refers_to_uri: known.final_url.clone(),
            refers_to_date: known.captured_at,
            payload_sha1: Some(known.sha1),
        });
    }
}
