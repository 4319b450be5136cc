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
