//! `/listing/{n}`: a long paginated listing that is not a trap. Its
//! [`LISTING_PAGES`] pages share one template like an endless pager's, but each
//! lists other items, so a crawler's trap defences can be shown to follow it
//! to its end.

use std::fmt::Write;

use hyper::{Response, StatusCode};

use crate::body::SiteBody;
use crate::number::canonical_u32;
use crate::reply::{HTML, reply};

/// Pages in the listing: `/listing/0` to `/listing/1999`.
pub const LISTING_PAGES: u32 = 2000;

/// Items listed on each page.
const PER_PAGE: u32 = 10;

/// Answers a listing page, or `None` if `path` is not one.
pub(crate) fn route(path: &str) -> Option<Response<SiteBody>> {
    let n = canonical_u32(path.strip_prefix("/listing/")?)?;
    (n < LISTING_PAGES).then(|| reply(StatusCode::OK, Some(HTML), page(n)))
}

fn page(n: u32) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html><head><title>Listing page {n}</title></head><body>\n\
         <h1>Listing, page {n}</h1>\n<ul>\n"
    );
    for item in n * PER_PAGE..(n + 1) * PER_PAGE {
        let _ = writeln!(out, "<li>{} {}</li>", word(item), word(item ^ 0x5555));
    }
    out.push_str("</ul>\n");
    if n > 0 {
        let _ = writeln!(out, "<a href=\"/listing/{}\">previous</a>", n - 1);
    }
    if n + 1 < LISTING_PAGES {
        let _ = writeln!(out, "<a href=\"/listing/{}\">next</a>", n + 1);
    }
    out.push_str("<a href=\"/\">home</a>\n</body></html>\n");
    out
}

/// A made-up word of seven letters for item `k`, different for every item (no
/// digits: a crawler may well ignore numbers when comparing pages).
fn word(k: u32) -> String {
    // An odd multiplier is a bijection on u32: distinct items, distinct words.
    let mut x = k.wrapping_mul(0x9E37_79B1);
    (0..7)
        .map(|_| {
            let c = char::from(b'a' + (x % 26) as u8);
            x /= 26;
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_link_along_and_end() {
        assert!(page(0).contains("href=\"/listing/1\""));
        assert!(!page(0).contains("previous"));
        let last = page(LISTING_PAGES - 1);
        assert!(!last.contains("next"));
        assert!(route("/listing/1999").is_some());
        assert!(route("/listing/2000").is_none());
        assert!(route("/listing/01").is_none());
    }

    #[test]
    fn every_item_has_its_own_word() {
        let words: std::collections::HashSet<String> =
            (0..LISTING_PAGES * PER_PAGE).map(word).collect();
        assert_eq!(words.len(), (LISTING_PAGES * PER_PAGE) as usize);
    }
}
