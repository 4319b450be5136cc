//! Pages that change between crawl passes, for recrawl tests and benches.
//!
//! With [`SiteConfig::versions`](crate::SiteConfig::versions) set, the site
//! has a pass number (0 at start; [`RunningSite::next_pass`](crate::RunningSite::next_pass)
//! or a request for [`NEXT_PASS_PATH`] moves it on). At each pass a seeded,
//! fixed share of the generated pages (`/` and `/p/N`) changes: its body says
//! its version and links to a page new in that version (`/n/N/V`). Another
//! share is gone from a pass on (`410 Gone`). A page's version at pass `p` is
//! how many of passes `1..=p` changed it, so the same seed gives the same
//! site at every run.
//!
//! Validators follow the version: `ETag: "pN-vV"` and a `Last-Modified` one
//! day later per version. Per [`ValidatorMode`] the site answers conditional
//! requests with `304 Not Modified` (as RFC 9110 §13 says: `If-None-Match`
//! first, `If-Modified-Since` only without it), ignores them (always 200
//! with validators, as some servers do), or sends no validators at all.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime};

use hyper::header::{
    ETAG, HeaderMap, HeaderValue, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED,
};
use hyper::{Response, StatusCode};

use crate::body::SiteBody;
use crate::reply::{HTML, reply};

/// A `GET` here moves the site to its next pass; the body is the new pass
/// number. Not linked from any page, so a crawl never finds it.
pub const NEXT_PASS_PATH: &str = "/_testsite/next-pass";

/// `Last-Modified` of version 0 of every page: 2026-01-01T00:00:00Z.
const EPOCH_SECS: u64 = 1_767_225_600;

/// How the site treats validators.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ValidatorMode {
    /// Send `ETag` and `Last-Modified`; answer a matching conditional request
    /// with `304`.
    #[default]
    Honour,
    /// Send them but always answer `200` with the body.
    Ignore,
    /// Send none.
    Absent,
}

/// Which pages change between passes, and how the site answers revalidation.
#[derive(Clone, Debug)]
pub struct Versions {
    /// Share (0..=1) of the pages that change at each pass.
    pub change: f64,
    /// Share (0..=1) of the pages that are gone from each pass on.
    pub gone: f64,
    /// Picks which pages change and go; same seed, same site.
    pub seed: u64,
    /// Validators sent and honoured, or not.
    pub validators: ValidatorMode,
}

impl Default for Versions {
    fn default() -> Self {
        Versions {
            change: 0.05,
            gone: 0.0,
            seed: 1,
            validators: ValidatorMode::Honour,
        }
    }
}

/// The page a path names, for versioning: 0 for `/`, `i + 1` for `/p/i`.
pub(crate) type Slot = usize;

/// What a page is at the current pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Served at this version (0 = as first generated).
    Version(u32),
    /// Gone since some pass.
    Gone,
}

impl Versions {
    /// The state of page `slot` at `pass`.
    pub(crate) fn state(&self, slot: Slot, pass: u32) -> State {
        let mut version = 0;
        for q in 1..=pass {
            if unit(self.seed ^ GONE_SALT, slot, q) < self.gone {
                return State::Gone;
            }
            if unit(self.seed, slot, q) < self.change {
                version += 1;
            }
        }
        State::Version(version)
    }
}

const GONE_SALT: u64 = 0x9e37_79b9_7f4a_7c15;

/// A uniform number in `[0, 1)` from `(seed, slot, pass)` (splitmix64).
fn unit(seed: u64, slot: Slot, pass: u32) -> f64 {
    let mut z = seed
        .wrapping_add((slot as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9))
        .wrapping_add(u64::from(pass).wrapping_mul(0x94d0_49bb_1331_11eb));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// The site's current pass, shared by all connections.
#[derive(Debug, Default)]
pub(crate) struct Pass(AtomicU32);

impl Pass {
    pub(crate) fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }

    /// Moves to the next pass; returns its number.
    pub(crate) fn advance(&self) -> u32 {
        self.0.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// The slot of a generated page's path, if it is one.
pub(crate) fn slot_of(path: &str, pages: usize) -> Option<Slot> {
    if path == "/" {
        return Some(0);
    }
    let i: usize = crate::number::page_index(path.strip_prefix("/p/")?)?;
    (i < pages).then_some(i + 1)
}

/// Applies the current pass to a generated page's response: `410` when gone;
/// else the version's body, validators, and `304` to a matching conditional
/// request. Returns whether it answered `304`.
pub(crate) fn apply(
    versions: &Versions,
    pass: u32,
    slot: Slot,
    req: &HeaderMap,
    resp: &mut Response<SiteBody>,
) -> bool {
    let version = match versions.state(slot, pass) {
        State::Gone => {
            *resp = reply(StatusCode::GONE, Some(HTML), "<h1>Gone</h1>");
            return false;
        }
        State::Version(v) => v,
    };
    let etag = format!("\"p{slot}-v{version}\"");
    let modified =
        SystemTime::UNIX_EPOCH + Duration::from_secs(EPOCH_SECS + u64::from(version) * 86_400);
    if versions.validators != ValidatorMode::Absent {
        let headers = resp.headers_mut();
        if let Ok(v) = HeaderValue::from_str(&etag) {
            headers.insert(ETAG, v);
        }
        if let Ok(v) = HeaderValue::from_str(&httpdate::fmt_http_date(modified)) {
            headers.insert(LAST_MODIFIED, v);
        }
    }
    if versions.validators == ValidatorMode::Honour && not_modified(req, &etag, modified) {
        *resp.status_mut() = StatusCode::NOT_MODIFIED;
        resp.headers_mut().remove(hyper::header::CONTENT_TYPE);
        *resp.body_mut() = SiteBody::full(bytes::Bytes::new());
        return true;
    }
    if version > 0
        && let Some(html) = resp.body().full_bytes()
    {
        let html = String::from_utf8_lossy(html);
        let page = slot.saturating_sub(1);
        let extra = format!(
            "<p>Version {version}</p>\n<a href=\"/n/{page}/{version}\">New in version {version}</a>\n"
        );
        let html = match html.rfind("</body>") {
            Some(at) => format!("{}{extra}{}", &html[..at], &html[at..]),
            None => format!("{html}{extra}"),
        };
        *resp.body_mut() = SiteBody::full(html);
    }
    false
}

/// RFC 9110 §13.1: `If-None-Match` decides when present (weak comparison);
/// else `If-Modified-Since` when it parses.
fn not_modified(req: &HeaderMap, etag: &str, modified: SystemTime) -> bool {
    if let Some(inm) = req.get(IF_NONE_MATCH) {
        let Ok(inm) = inm.to_str() else {
            return false;
        };
        return inm
            .split(',')
            .map(str::trim)
            .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag);
    }
    req.get(IF_MODIFIED_SINCE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| httpdate::parse_http_date(v).ok())
        .is_some_and(|since| since >= modified)
}

/// `/n/PAGE/VERSION`: a page that first appears when `PAGE` reaches `VERSION`.
pub(crate) fn new_page(path: &str, pages: usize) -> Option<Response<SiteBody>> {
    let rest = path.strip_prefix("/n/")?;
    let (page, version) = rest.split_once('/')?;
    let page = crate::number::page_index(page)?;
    let version = crate::number::page_index(version)?;
    (page < pages && version > 0).then(|| {
        reply(
            StatusCode::OK,
            Some(HTML),
            format!(
                "<!DOCTYPE html>\n<html><head><title>New {page}.{version}</title></head>\
                 <body><h1>New in version {version} of page {page}</h1>\
                 <a href=\"/p/{page}\">Back</a></body></html>\n"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(change: f64, gone: f64) -> Versions {
        Versions {
            change,
            gone,
            seed: 7,
            validators: ValidatorMode::Honour,
        }
    }

    #[test]
    fn pass_zero_is_the_first_version_everywhere() {
        let v = versions(1.0, 0.0);
        assert!((0..100).all(|s| v.state(s, 0) == State::Version(0)));
    }

    #[test]
    fn about_the_chosen_share_changes_per_pass() {
        let v = versions(0.05, 0.0);
        let changed = (0..20_000)
            .filter(|&s| v.state(s, 1) != State::Version(0))
            .count();
        assert!((800..1200).contains(&changed), "{changed} of 20000 changed");
        // Versions only grow, and a second pass changes more pages.
        let twice = (0..20_000)
            .filter(|&s| v.state(s, 2) != State::Version(0))
            .count();
        assert!(twice > changed);
    }

    #[test]
    fn gone_pages_stay_gone() {
        let v = versions(0.0, 0.1);
        let gone1: Vec<_> = (0..1000)
            .filter(|&s| v.state(s, 1) == State::Gone)
            .collect();
        assert!(!gone1.is_empty());
        assert!(gone1.iter().all(|&s| v.state(s, 3) == State::Gone));
    }

    #[test]
    fn conditional_requests_follow_rfc_9110_precedence() {
        let modified = SystemTime::UNIX_EPOCH + Duration::from_secs(EPOCH_SECS);
        let mut h = HeaderMap::new();
        h.insert(
            IF_NONE_MATCH,
            HeaderValue::from_static("\"x\", W/\"p1-v0\""),
        );
        assert!(not_modified(&h, "\"p1-v0\"", modified));
        // A mismatching ETag wins over a matching date.
        h.insert(IF_NONE_MATCH, HeaderValue::from_static("\"p1-v1\""));
        h.insert(
            IF_MODIFIED_SINCE,
            HeaderValue::from_str(&httpdate::fmt_http_date(modified)).unwrap(),
        );
        assert!(!not_modified(&h, "\"p1-v0\"", modified));
        h.remove(IF_NONE_MATCH);
        assert!(not_modified(&h, "\"p1-v0\"", modified));
        assert!(!not_modified(
            &h,
            "\"p1-v0\"",
            modified + Duration::from_secs(1)
        ));
    }

    #[test]
    fn slots_name_generated_pages_only() {
        assert_eq!(slot_of("/", 10), Some(0));
        assert_eq!(slot_of("/p/9", 10), Some(10));
        assert_eq!(slot_of("/p/10", 10), None);
        assert_eq!(slot_of("/p/07", 10), None);
        assert_eq!(slot_of("/specials", 10), None);
    }
}
