//! What a link check found: one [`LinkResult`] per distinct link (its URL
//! with its fragment), each with the places it appears, and the
//! [`CheckReport`] that holds them. Serialisable: the JSON output of
//! `skitter check` is this report.

use serde::{Deserialize, Serialize};
use url::Url;

use crate::base::outcome::ErrorKind;

/// One place a link appears.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Occurrence {
    /// The page it is on.
    pub page: Url,
    /// The element (`a`, `img`, `link`, `script`…; `style` for CSS in a
    /// `<style>` element).
    pub element: String,
    /// The attribute (`href`, `src`, `srcset`…; `url()` or `@import` in CSS).
    pub attribute: String,
    /// The 1-based line of the element in the page's source.
    pub line: u32,
    /// The link as written.
    pub raw: String,
    /// Its `#fragment`, percent-decoded, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragment: Option<String>,
}

/// Why a link is broken.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Problem {
    /// The link ended with a status outside the accepted set.
    Status {
        /// The final status.
        status: u16,
    },
    /// No response: DNS, connection, timeout, TLS…, as the fetcher names it.
    Failed {
        /// The failure's kind.
        error: ErrorKind,
        /// The failure as the fetcher put it.
        message: String,
    },
    /// The redirects went round in a circle.
    RedirectLoop,
    /// More redirect hops than allowed.
    TooManyRedirects,
    /// The page was fetched but has no `id` or `<a name>` for the fragment.
    MissingFragment {
        /// The fragment looked for.
        fragment: String,
    },
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Status { status } => write!(f, "status {status}"),
            Problem::Failed { error, message } => write!(f, "{error}: {message}"),
            Problem::RedirectLoop => f.write_str("redirect loop"),
            Problem::TooManyRedirects => f.write_str("too many redirects"),
            Problem::MissingFragment { fragment } => write!(f, "no anchor #{fragment}"),
        }
    }
}

/// How a link came out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkState {
    /// It works.
    Ok,
    /// It is broken, for this reason.
    Broken(Problem),
    /// It was not checked: `offline` (another site, in an offline check),
    /// `robots` (the site's robots.txt forbids it), `excluded` (an exclude
    /// pattern, or no include pattern, matched), `limit` (a crawl limit
    /// stopped before it), `cached` results are [`LinkResult::cached`].
    Skipped(String),
}

/// The result of one distinct link: its URL and fragment, how it came out,
/// and where it appears.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkResult {
    /// The link, normalised, with its fragment when it has one.
    pub url: Url,
    /// Whether it is on the crawled site (checked by the crawl) or another.
    pub internal: bool,
    /// How it came out.
    pub state: LinkState,
    /// The final status, when a response came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Where a permanent redirect (301, 308) of the link points: a link
    /// worth updating even when it works.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_to: Option<Url>,
    /// It failed at first and then answered (attempts made): a flaky host,
    /// reported but not broken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flaky: Option<u32>,
    /// The result came from the cache of an earlier check.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
    /// The places it appears, in crawl order (at most
    /// [`MAX_OCCURRENCES`](super::MAX_OCCURRENCES)).
    pub occurrences: Vec<Occurrence>,
    /// Places past that cap.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub occurrences_cut: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl LinkResult {
    /// Whether it is broken.
    pub fn is_broken(&self) -> bool {
        matches!(self.state, LinkState::Broken(_))
    }
}

/// Counts over a check.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckSummary {
    /// HTML pages read for links.
    pub pages: u64,
    /// Distinct links (URL and fragment) found.
    pub links: u64,
    /// Of those, broken.
    pub broken: u64,
    /// Permanently redirected (whether or not they work in the end).
    pub redirects: u64,
    /// Flaky: failed at first, then answered.
    pub flaky: u64,
    /// Not checked (offline, robots, excluded, limits).
    pub skipped: u64,
    /// Links that are not http(s) (`mailto:`, `tel:`…) or do not parse.
    pub not_http: u64,
    /// External results taken from the cache.
    pub cached: u64,
    /// Wall time in seconds.
    pub elapsed_secs: f64,
}

/// The result of a link check: every distinct link, sorted by URL.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    /// The counts.
    pub summary: CheckSummary,
    /// Every distinct link found, sorted by URL.
    pub links: Vec<LinkResult>,
    /// Why the crawl stopped early, when it did (`interrupted`, a limit…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

impl CheckReport {
    /// The broken links.
    pub fn broken(&self) -> impl Iterator<Item = &LinkResult> {
        self.links.iter().filter(|l| l.is_broken())
    }

    /// The links with a permanent redirect.
    pub fn moved(&self) -> impl Iterator<Item = &LinkResult> {
        self.links.iter().filter(|l| l.moved_to.is_some())
    }

    /// The flaky links.
    pub fn flaky(&self) -> impl Iterator<Item = &LinkResult> {
        self.links.iter().filter(|l| l.flaky.is_some())
    }
}
