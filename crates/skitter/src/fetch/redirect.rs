//! What a redirect answer means, for every caller that follows redirects
//! itself (the crawl worker, `skitter fetch`, the robots.txt fetch): which
//! statuses redirect, where to, and the failures a bad one becomes.

use url::Url;

use super::Response;
use crate::base::outcome::{ErrorKind, FetchFailure};
use crate::base::urlnorm;

/// Statuses whose `Location` is followed. `300 Multiple Choices` and `304 Not
/// Modified` carry no single target to follow.
pub(crate) const REDIRECT_STATUSES: [u16; 5] = [301, 302, 303, 307, 308];

/// Whether `status` redirects.
pub(crate) fn is_redirect(status: u16) -> bool {
    REDIRECT_STATUSES.contains(&status)
}

/// The absolute target of a redirect `resp` to a request for `base`, or the
/// failure (kind `BadRedirect`) that a missing or unusable `Location` is.
pub(crate) fn target(resp: &Response, base: &Url) -> Result<Url, FetchFailure> {
    let bad = |message: String| FetchFailure {
        kind: ErrorKind::BadRedirect,
        message,
    };
    match resp.location() {
        None => Err(bad("redirect without a Location header".into())),
        Some(loc) => {
            urlnorm::resolve(loc, base).map_err(|e| bad(format!("unusable Location {loc:?}: {e}")))
        }
    }
}

/// The failure of a redirect chain longer than `max` hops.
pub(crate) fn too_many(max: u32) -> FetchFailure {
    FetchFailure {
        kind: ErrorKind::TooManyRedirects,
        message: format!("more than {max} redirects"),
    }
}
