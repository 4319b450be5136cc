//! `/paged/`: APIs and listings that paginate until they end, one per way a
//! server names the next page, for following chains of dependent requests.
//!
//! `/paged/{style}/{chain}/{pages}` is page 1 of chain `chain` (any number,
//! so a benchmark can run many chains), which has `pages` pages (1 ≤ pages ≤
//! [`MAX_PAGES`]); page K is the same path with `?page=K`. Every page lists
//! [`PER_PAGE`] records `{"id": "C-K-i", "chain": C, "page": K}`. The styles:
//!
//! - `link`: JSON, the next page in a `Link: <…>; rel="next"` header (beside
//!   a `rel="first"` one, so the relation is what picks it);
//! - `json`: JSON with `"next": "/paged/json/…?page=K+1"`, `null` on the last;
//! - `cursor`: JSON with `"cursor": TOKEN` (`null` on the last); the next
//!   page is the same path with `?after=TOKEN`;
//! - `html`: an HTML listing with `<a rel="next" href=…>`;
//! - `loop`: as `json`, but the last page's `next` is page 1 (`?page=1`),
//!   so a chain started there comes back to a page it has seen.
//!
//! None is linked from the generated site.

use std::fmt::Write as _;

use hyper::header::LINK;
use hyper::{Response, StatusCode};

use crate::body::SiteBody;
use crate::number::canonical_u32;
use crate::reply::{HTML, reply, with_header};

/// The most pages a chain may be asked to have.
pub const MAX_PAGES: u32 = 100_000;
/// Records per page.
pub const PER_PAGE: u32 = 3;

const JSON: &str = "application/json";

/// Answers a `/paged/` path, or `None` if `path` is not one.
pub(crate) fn route(path: &str, query: Option<&str>) -> Option<Response<SiteBody>> {
    let mut parts = path.strip_prefix("/paged/")?.split('/');
    let (style, chain, pages) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let chain = canonical_u32(chain)?;
    let pages = canonical_u32(pages).filter(|n| (1..=MAX_PAGES).contains(n))?;
    let page = page_of(style, chain, query)?;
    if page > pages {
        return None;
    }
    let base = format!("/paged/{style}/{chain}/{pages}");
    let last = page == pages;
    let next = (!last).then(|| format!("{base}?page={}", page + 1));
    Some(match style {
        "link" => {
            let mut link = format!("<{base}?page=1>; rel=\"first\"");
            if let Some(next) = &next {
                let _ = write!(link, ", <{next}>; rel=\"next\"");
            }
            with_header(json(chain, page, ""), LINK, &link)
        }
        "json" => json(
            chain,
            page,
            &format!(r#","next":{}"#, quoted(next.as_deref())),
        ),
        "loop" => {
            let next = next.unwrap_or_else(|| format!("{base}?page=1"));
            json(chain, page, &format!(r#","next":"{next}""#))
        }
        "cursor" => {
            let token = (!last).then(|| token(chain, page));
            json(
                chain,
                page,
                &format!(r#","cursor":{}"#, quoted(token.as_deref())),
            )
        }
        "html" => reply(
            StatusCode::OK,
            Some(HTML),
            html(chain, page, next.as_deref()),
        ),
        _ => return None,
    })
}

/// The page a query asks for: `page=K`, or for cursors `after=TOKEN` (the
/// page after the one that handed the token out); page 1 without either.
/// Other parameters are ignored.
fn page_of(style: &str, chain: u32, query: Option<&str>) -> Option<u32> {
    let pairs = query
        .unwrap_or("")
        .split('&')
        .filter_map(|p| p.split_once('='));
    for (key, value) in pairs {
        match (style, key) {
            ("cursor", "after") => return untoken(chain, value).map(|k| k + 1),
            (_, "page") => return canonical_u32(value).filter(|&k| k >= 1),
            _ => {}
        }
    }
    Some(1)
}

/// The opaque cursor page `page` of `chain` hands out.
fn token(chain: u32, page: u32) -> String {
    format!("c{chain:x}.{:x}", page ^ mask(chain))
}

/// The page whose cursor `token` is, if it is one of `chain`'s.
fn untoken(chain: u32, token: &str) -> Option<u32> {
    let (c, p) = token.strip_prefix('c')?.split_once('.')?;
    let c = u32::from_str_radix(c, 16).ok().filter(|&c| c == chain)?;
    let page = u32::from_str_radix(p, 16).ok()? ^ mask(c);
    (1..MAX_PAGES).contains(&page).then_some(page)
}

fn mask(chain: u32) -> u32 {
    chain.wrapping_mul(0x9e37_79b9) & 0x00ff_ffff
}

fn quoted(s: Option<&str>) -> String {
    s.map_or_else(|| "null".into(), |s| format!("\"{s}\""))
}

fn json(chain: u32, page: u32, tail: &str) -> Response<SiteBody> {
    let records: Vec<String> = (1..=PER_PAGE)
        .map(|i| format!(r#"{{"id":"{chain}-{page}-{i}","chain":{chain},"page":{page}}}"#))
        .collect();
    let body = format!(
        r#"{{"chain":{chain},"page":{page},"items":[{}]{tail}}}"#,
        records.join(",")
    );
    reply(StatusCode::OK, Some(JSON), body)
}

fn html(chain: u32, page: u32, next: Option<&str>) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html><head><title>Chain {chain}, page {page}</title></head><body>\n<ul>\n"
    );
    for i in 1..=PER_PAGE {
        let _ = writeln!(out, "<li class=\"item\">{chain}-{page}-{i}</li>");
    }
    out.push_str("</ul>\n");
    if let Some(next) = next {
        let _ = writeln!(
            out,
            "<a href=\"{next}\">more</a> <a rel=\"next\" href=\"{next}\">next</a>"
        );
    }
    out.push_str("</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(path: &str, query: Option<&str>) -> Option<Response<SiteBody>> {
        route(path, query)
    }

    #[test]
    fn pages_exist_up_to_the_count() {
        assert!(get("/paged/json/3/2", None).is_some());
        assert!(get("/paged/json/3/2", Some("page=2")).is_some());
        assert!(get("/paged/json/3/2", Some("page=3")).is_none());
        assert!(get("/paged/json/3/0", None).is_none());
        assert!(get("/paged/nope/3/2", None).is_none());
    }

    #[test]
    fn a_cursor_names_the_page_after_the_one_that_gave_it() {
        let t = token(5, 1);
        assert_eq!(page_of("cursor", 5, Some(&format!("after={t}"))), Some(2));
        assert_eq!(page_of("cursor", 6, Some(&format!("after={t}"))), None);
        assert_eq!(page_of("json", 6, Some("x=1&page=3")), Some(3));
    }

    #[test]
    fn the_link_header_names_next_until_the_last_page() {
        let first = get("/paged/link/1/2", None).unwrap();
        let link = first.headers()[LINK].to_str().unwrap().to_string();
        assert!(
            link.contains("</paged/link/1/2?page=2>; rel=\"next\""),
            "{link}"
        );
        let last = get("/paged/link/1/2", Some("page=2")).unwrap();
        assert!(!last.headers()[LINK].to_str().unwrap().contains("next"));
    }
}
