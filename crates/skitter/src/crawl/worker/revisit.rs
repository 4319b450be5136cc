//! The recrawl's part of a URL's pipeline (see `recrawl`): the URL's earlier
//! visit recalled before the fetch, the payload digest taken after it, and
//! the answer settled against the visit — its change, its WARC revisit, and
//! what to remember for the next pass.

use url::Url;

use crate::base::outcome::PageRecord;
use crate::base::request::Validators;
use crate::fetch::{Exchange, Response};
use crate::frontier::Frontier;
use crate::state::recrawl::{self, PassInfo, Visit};

/// The URL's visit from the previous pass, in a recrawl pass (a store that
/// cannot answer costs the conditional request, not the URL).
pub(super) async fn recall(frontier: &dyn Frontier, url: &Url) -> Option<Visit> {
    if frontier.pass().is_none_or(|p| p.number < 2) {
        return None;
    }
    frontier.recall(url).await.unwrap_or_else(|e| {
        tracing::warn!(%url, "cannot read the earlier visit: {e}");
        None
    })
}

/// SHA-1 of a success's body as received, when it was kept: computed once,
/// for the recrawl's comparison and the archive's payload digest alike.
pub(super) fn payload_digest(resp: &Response, exchange: Option<&mut Exchange>) -> Option<[u8; 20]> {
    use sha1::Digest as _;
    if !(200..300).contains(&resp.status) {
        return None;
    }
    match exchange {
        Some(x) => {
            let digest = x.body_sha1();
            x.body_sha1 = Some(digest);
            Some(digest)
        }
        None => resp.body.as_ref().map(|b| sha1::Sha1::digest(b).into()),
    }
}

/// Settles the record against the earlier visit when the frontier remembers
/// visits (`pass`): fills in its change, sets the exchange's revisit, and answers the
/// visit to store (`None`: keep the earlier one, or remember nothing).
pub(super) fn settle(
    pass: Option<PassInfo>,
    record: &mut PageRecord,
    exchange: Option<&mut Exchange>,
    earlier: Option<&Visit>,
    (sha1, validators, fetched_at): (Option<[u8; 20]>, Validators, chrono::DateTime<chrono::Utc>),
) -> Option<Visit> {
    let pass = pass?;
    let settled = recrawl::settle(record, earlier, pass.number, sha1, validators, fetched_at);
    if let Some(x) = exchange {
        x.revisit = settled.revisit;
    }
    settled.visit
}
