//! The unit of crawl work: one URL to fetch and how the crawl came to it. A
//! leaf module, shared by the frontier that queues requests and the stores that
//! keep them.

use serde::{Deserialize, Serialize};
use url::Url;

/// One URL waiting to be fetched, with what the crawl knows about how it got there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// The normalised URL.
    pub url: Url,
    /// Link distance from the roots.
    pub depth: u32,
    /// Redirect hops this chain may still take.
    pub redirects_left: u32,
    /// The page it was found on (absent for roots).
    pub parent: Option<Url>,
}

/// What an earlier fetch of a URL returned to make the next one conditional
/// (RFC 9110 §13): its `ETag` and `Last-Modified`, verbatim.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Validators {
    /// The `ETag` response header (sent back as `If-None-Match`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// The `Last-Modified` response header (sent back as `If-Modified-Since`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl Validators {
    /// Whether there is nothing to revalidate with.
    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }
}
