//! The unit of crawl work: one URL to fetch and how the crawl came to it. A
//! leaf module, shared by the frontier that queues requests and the stores that
//! keep them.

use serde::{Deserialize, Serialize};
use url::Url;

use crate::base::varint::{get_varint, put_varint};

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
    /// What the URL is to the crawl. Queued with the request so that every
    /// process that claims it (a resumed run, another worker of a shared
    /// crawl) reads it the same way; absent in old entries, which are pages.
    #[serde(default, skip_serializing_if = "RequestKind::is_page")]
    pub kind: RequestKind,
}

/// What a queued URL is: a page, or a sitemap whose entries are URLs to crawl.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RequestKind {
    /// A page: fetched, recorded, and its links followed.
    #[default]
    Page,
    /// A sitemap or sitemap index.
    Sitemap {
        /// Whether robots.txt named it (or an index it named lists it): only
        /// then may it add URLs outside its own directory.
        trusted: bool,
        /// How many sitemap indexes lead to it from one robots.txt named or
        /// that was probed (which are at 0).
        nesting: u32,
    },
}

/// Marks a kind before a binary queue entry, whose first number is its depth
/// (a `u32`): above any depth, so an entry without it (every page, and every
/// entry written before kinds were) reads as before.
const KIND_MARK: u64 = 1 << 32;

/// The byte form's bit for a sitemap; the next bit is its trust, the rest its
/// nesting (capped: indexes nest only a few levels deep).
const SITEMAP_BIT: u8 = 1;
const TRUSTED_BIT: u8 = 2;
const MAX_BYTE_NESTING: u32 = (u8::MAX >> 2) as u32;

impl RequestKind {
    /// Whether this is a page (the kind of every entry written before kinds were).
    pub fn is_page(&self) -> bool {
        *self == RequestKind::Page
    }

    /// One byte for the compact queue encodings; 0 is a page.
    pub(crate) fn to_byte(self) -> u8 {
        match self {
            RequestKind::Page => 0,
            RequestKind::Sitemap { trusted, nesting } => {
                // At most 63 after the cap, so the shift keeps every bit.
                let nesting = u8::try_from(nesting.min(MAX_BYTE_NESTING)).unwrap_or(0);
                SITEMAP_BIT | if trusted { TRUSTED_BIT } else { 0 } | nesting << 2
            }
        }
    }

    /// Starts a binary queue entry (whose next number is the depth) with this
    /// kind; nothing for a page.
    pub(crate) fn put_mark(self, out: &mut Vec<u8>) {
        if !self.is_page() {
            put_varint(out, KIND_MARK + u64::from(self.to_byte()));
        }
    }

    /// Reads the start of a binary queue entry: its kind (a page without a
    /// mark) and its depth. `None` on bytes [`RequestKind::put_mark`] and a
    /// depth varint do not make.
    pub(crate) fn get_with_depth(bytes: &mut &[u8]) -> Option<(RequestKind, u32)> {
        let first = get_varint(bytes)?;
        let (kind, depth) = match first.checked_sub(KIND_MARK) {
            Some(byte) => (
                RequestKind::from_byte(u8::try_from(byte).ok()?)?,
                get_varint(bytes)?,
            ),
            None => (RequestKind::Page, first),
        };
        Some((kind, u32::try_from(depth).ok()?))
    }

    /// The kind [`RequestKind::to_byte`] wrote; `None` for a byte it never writes.
    pub(crate) fn from_byte(byte: u8) -> Option<RequestKind> {
        match byte {
            0 => Some(RequestKind::Page),
            b if b & SITEMAP_BIT != 0 => Some(RequestKind::Sitemap {
                trusted: b & TRUSTED_BIT != 0,
                nesting: u32::from(b >> 2),
            }),
            _ => None,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_through_their_byte() {
        let kinds = [
            RequestKind::Page,
            RequestKind::Sitemap {
                trusted: true,
                nesting: 0,
            },
            RequestKind::Sitemap {
                trusted: false,
                nesting: 3,
            },
        ];
        for kind in kinds {
            assert_eq!(RequestKind::from_byte(kind.to_byte()), Some(kind));
        }
        assert_eq!(RequestKind::from_byte(2), None);
        let mut bytes = Vec::new();
        for kind in kinds {
            kind.put_mark(&mut bytes);
            put_varint(&mut bytes, 7);
        }
        let mut rest = &bytes[..];
        for kind in kinds {
            assert_eq!(RequestKind::get_with_depth(&mut rest), Some((kind, 7)));
        }
        assert!(rest.is_empty());
    }
}
