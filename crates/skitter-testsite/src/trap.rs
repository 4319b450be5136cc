//! Crawler traps: URL spaces without end, each page linking to a new URL.
//! `/pager/{n}` is the endless pager: the same page under every number, its
//! "next" never running out, with no date, repeat or query in its URLs.
//!
//! They are served always but linked from `/` only when `traps` is on, so a
//! crawler's depth and page limits can be tested against them.

use std::fmt::Write;

use hyper::{Response, StatusCode};

use crate::body::SiteBody;
use crate::number::canonical_u32;
use crate::reply::{HTML, reply};

/// Answers a trap path, or `None` if `path` is not one.
pub(crate) fn route(path: &str, query: Option<&str>) -> Option<Response<SiteBody>> {
    let links = if let Some(rest) = path.strip_prefix("/cal/") {
        calendar(rest)?
    } else if let Some(rest) = path.strip_prefix("/loop/") {
        // `/loop/a/`, `/loop/a/a/`, ...: the relative `a/` always goes one deeper.
        let depth = rest.len() / 2;
        (depth > 0 && rest == "a/".repeat(depth)).then(|| vec!["a/".to_string()])?
    } else if let Some(n) = path.strip_prefix("/pager/") {
        pager(canonical_u32(n)?)
    } else if path == "/session" {
        let sid = match query {
            None => 0,
            Some(q) => canonical_u32(q.strip_prefix("sid=")?)?,
        };
        vec![format!("/session?sid={}", sid.checked_add(1)?)]
    } else {
        return None;
    };
    let mut out = String::from("<!DOCTYPE html>\n<html><head><title>Trap</title></head><body>\n");
    for href in links.iter().map(String::as_str).chain(["/"]) {
        let _ = writeln!(out, "<a href=\"{href}\">{href}</a>");
    }
    out.push_str("</body></html>\n");
    Some(reply(StatusCode::OK, Some(HTML), out))
}

/// Page `n` of the endless pager links to the previous and the next page.
fn pager(n: u32) -> Vec<String> {
    let previous = n.checked_sub(1).map(|p| format!("/pager/{p}"));
    let next = n.checked_add(1).map(|p| format!("/pager/{p}"));
    previous.into_iter().chain(next).collect()
}

/// `{year}/{month}` links to the previous and the next month.
fn calendar(rest: &str) -> Option<Vec<String>> {
    let (year, month) = rest.split_once('/')?;
    let (year, month) = (canonical_u32(year)?, canonical_u32(month)?);
    if !(1..=12).contains(&month) {
        return None;
    }
    let mut links = Vec::with_capacity(2);
    match month {
        1 => links.extend(year.checked_sub(1).map(|y| format!("/cal/{y}/12"))),
        m => links.push(format!("/cal/{year}/{}", m - 1)),
    }
    match month {
        12 => links.extend(year.checked_add(1).map(|y| format!("/cal/{y}/1"))),
        m => links.push(format!("/cal/{year}/{}", m + 1)),
    }
    Some(links)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_table() {
        let cases: [(&str, Option<Vec<&str>>); 6] = [
            ("2024/1", Some(vec!["/cal/2023/12", "/cal/2024/2"])),
            ("2024/12", Some(vec!["/cal/2024/11", "/cal/2025/1"])),
            ("0/1", Some(vec!["/cal/0/2"])),
            ("2024/13", None),
            ("2024/01", None),
            ("2024", None),
        ];
        for (rest, want) in cases {
            let want = want.map(|v| v.into_iter().map(String::from).collect::<Vec<_>>());
            assert_eq!(calendar(rest), want, "{rest}");
        }
    }

    #[test]
    fn pager_table() {
        assert_eq!(pager(0), vec!["/pager/1"]);
        assert_eq!(pager(7), vec!["/pager/6", "/pager/8"]);
        assert_eq!(pager(u32::MAX), vec![format!("/pager/{}", u32::MAX - 1)]);
    }

    #[test]
    fn trap_paths_table() {
        let cases = [
            ("/loop/a/", None, true),
            ("/loop/a/a/a/", None, true),
            ("/loop/", None, false),
            ("/loop/a/b/", None, false),
            ("/loop/a", None, false),
            ("/session", None, true),
            ("/session", Some("sid=41"), true),
            ("/session", Some("sid=x"), false),
            ("/session", Some("sid=4294967295"), false),
            ("/pager/0", None, true),
            ("/pager/12345", None, true),
            ("/pager/012", None, false),
            ("/pager/", None, false),
            ("/elsewhere", None, false),
        ];
        for (path, query, found) in cases {
            assert_eq!(route(path, query).is_some(), found, "{path} {query:?}");
        }
    }
}
