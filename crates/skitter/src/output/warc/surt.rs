//! SURT keys (Sort-friendly URI Reordering Transform) for the CDXJ index, exactly as
//! the Python `surt` library's `surt.surt(url)` writes them, which is what pywb and
//! its `cdxj-indexer` use. A lookup in pywb canonicalises the requested URL with that
//! library and binary-searches the index for the result, so a key that differs by a
//! single byte is a miss.
//!
//! The rules, in the library's order (its `GoogleURLCanonicalizer`, then its
//! `IAURLCanonicalizer`, then `hostToSURT`):
//! - host: lowercased, `..` collapsed, dots trimmed, a leading `www`, `www2`, … label
//!   dropped, labels reversed and joined by commas, IPv4 octets included
//!   (`127.0.0.1` → `1,0,0,127`); IPv6 hosts lose their brackets (`::1`);
//! - port: kept unless it is the scheme's default (or 0); user and password dropped;
//! - path: percent-decoded until nothing changes, dot segments resolved, empty
//!   segments dropped, re-escaped (controls, space, `#`, `%` and non-ASCII bytes),
//!   lowercased (escapes included: `%c3%a9`), ASP.NET session segments removed, a
//!   trailing `/` dropped unless the path is `/`;
//! - query: decoded and re-escaped the same way, `jsessionid`, `phpsessid`, `sid`,
//!   `ASPSESSIONID` and ColdFusion session parameters removed, lowercased, its
//!   parameters sorted by (name, value) with a bare `name` before `name=`; an empty
//!   query is dropped, as is the fragment.
//!
//! Not ported: the library's handling of numeric host spellings (`0x7f.1`, `2130706433`)
//! and of `http://https://…`, since the `url` crate has already turned the former
//! into dotted IPv4 and never produces the latter.

use std::sync::LazyLock;

use regex::Regex;
use url::{Host, Url};

/// The SURT key of `url`, without the scheme: `com,example)/a?a=2&b=1`.
pub(crate) fn surt(url: &Url) -> String {
    // A `urn:thumbnail:…` picture has no host to reverse: its key is the URI
    // itself, the key ReplayWeb.page (wabac.js `getSurt`) looks it up by.
    if !matches!(url.scheme(), "http" | "https") {
        return url.as_str().to_string();
    }
    let mut key = host(url);
    // The library takes the port from Python's urlsplit, where a port of 0 is falsy.
    if let Some(port) = url.port().filter(|p| *p != 0) {
        key.push_str(&format!(":{port}"));
    }
    key.push(')');
    key.push_str(&path(url.path()));
    if let Some(query) = url.query().and_then(query) {
        key.push('?');
        key.push_str(&query);
    }
    key
}

fn host(url: &Url) -> String {
    match url.host() {
        // The url crate has already percent-decoded and lowercased a domain, so of
        // the library's decoding and lowercasing only the dot rules are left.
        Some(Host::Domain(d)) => {
            let d = d.to_ascii_lowercase().replace("..", ".");
            let d = escape_once(d.trim_matches('.').as_bytes());
            let d = strip_www(&d);
            d.split('.').rev().collect::<Vec<_>>().join(",")
        }
        Some(Host::Ipv4(ip)) => {
            let octets: Vec<String> = ip.octets().iter().rev().map(u8::to_string).collect();
            octets.join(",")
        }
        // As written in the URL (`[::ffff:102:304]`, never the dotted form), unbracketed.
        Some(Host::Ipv6(_)) => url
            .host_str()
            .unwrap_or_default()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
        None => String::new(),
    }
}

/// Drops a leading `www.`, `www2.`, `www10.` label (the library's `massageHost`).
fn strip_www(host: &str) -> &str {
    let Some(rest) = host.strip_prefix("www") else {
        return host;
    };
    rest.trim_start_matches(|c: char| c.is_ascii_digit())
        .strip_prefix('.')
        .unwrap_or(host)
}

fn path(raw: &str) -> String {
    let decoded = unescape_repeatedly(raw);
    let mut path = escape_once(&normalize_path(&decoded)).to_ascii_lowercase();
    for pattern in PATH_SESSION.iter() {
        if let Some(c) = pattern.captures(&path) {
            path = format!("{}{}", &c[1], &c[3]);
        }
    }
    if path.len() > 1 && path.ends_with('/') {
        path.pop();
    }
    path
}

/// Resolves `.` and `..` segments and drops empty ones, but keeps a trailing `/`
/// (the library's `normalizePath`: a `..` above the root is kept as a segment).
fn normalize_path(path: &[u8]) -> Vec<u8> {
    if path.is_empty() {
        return b"/".to_vec();
    }
    let mut kept: Vec<&[u8]> = Vec::new();
    for segment in path.split(|b| *b == b'/').skip(1) {
        match segment {
            b"." => {}
            b".." if !kept.is_empty() => {
                kept.pop();
            }
            _ => kept.push(segment),
        }
    }
    let mut out = b"/".to_vec();
    if let Some((last, inner)) = kept.split_last() {
        for segment in inner.iter().filter(|s| !s.is_empty()) {
            out.extend_from_slice(segment);
            out.push(b'/');
        }
        out.extend_from_slice(last);
    }
    out
}

fn query(raw: &str) -> Option<String> {
    if raw.is_empty() {
        return None;
    }
    let mut query = escape_once(&unescape_repeatedly(raw));
    for pattern in QUERY_SESSION.iter() {
        if let Some(c) = pattern.captures(&query) {
            query = match c.get(2) {
                Some(rest) if !rest.is_empty() => format!("{}{}", &c[1], rest.as_str()),
                _ => c[1].to_string(),
            };
        }
    }
    let query = query.to_ascii_lowercase();
    if query.is_empty() {
        return None;
    }
    Some(sort_params(&query))
}

/// Sorts `&`-separated parameters as Python sorts `(name,)` and `(name, value)`
/// tuples: by name, a bare name first, then by value.
fn sort_params(query: &str) -> String {
    if query.len() <= 1 {
        return query.to_string();
    }
    let mut params: Vec<(&str, Option<&str>)> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (p, None),
        })
        .collect();
    params.sort_unstable();
    params
        .iter()
        .map(|(name, value)| match value {
            Some(v) => format!("{name}={v}"),
            None => (*name).to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// Percent-decodes until the text stops changing (`%2541` → `%41` → `A`). Each pass
/// that changes anything shortens the text, so the loop ends.
fn unescape_repeatedly(text: &str) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    loop {
        let next: Vec<u8> = percent_encoding::percent_decode(&bytes).collect();
        if next == bytes {
            return bytes;
        }
        bytes = next;
    }
}

/// Percent-encodes what Python's `quote` with the library's safe set encodes:
/// controls, space, `#`, `%`, DEL and every non-ASCII byte, as `%XX`.
fn escape_once(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_graphic() && b != b'#' && b != b'%' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// ASP.NET cookieless session segments, `/(S(…24…))/` and `/(…24…)/`, before a `.aspx`.
static PATH_SESSION: LazyLock<[Regex; 2]> = LazyLock::new(|| {
    [
        r"(?i)^(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^\?]+\.aspx.*)$",
        r"(?i)^(.*/)(\([0-9a-z]{24}\)/)([^\?]+\.aspx.*)$",
    ]
    .map(|p| Regex::new(p).expect("valid session pattern"))
});

/// Session parameters; each pattern keeps what comes before and after the match.
static QUERY_SESSION: LazyLock<[Regex; 5]> = LazyLock::new(|| {
    [
        r"(?i)^(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?$",
        r"(?i)^(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?$",
        r"(?i)^(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?$",
        r"(?i)^(.*)(?:ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?$",
        r"(?i)^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$",
    ]
    .map(|p| Regex::new(p).expect("valid session pattern"))
});

#[cfg(test)]
mod tests {
    use super::*;

    /// Each URL as the url crate writes it, and the key `surt.surt(url)` (surt 0.3.1,
    /// the version pywb and cdxj-indexer install) gave for it.
    #[test]
    fn keys_match_the_surt_library() {
        let cases = [
            ("http://www.example.com/A?b=1&a=2", "com,example)/a?a=2&b=1"),
            ("https://example.com/", "com,example)/"),
            ("http://sub.example.co.uk/x", "uk,co,example,sub)/x"),
            ("http://127.0.0.1:8080/p?q", "1,0,0,127:8080)/p?q"),
            ("http://10.0.0.1/", "1,0,0,10)/"),
            ("http://[::1]:81/", "::1:81)/"),
            ("http://[::ffff:102:304]/x", "::ffff:102:304)/x"),
            ("http://www./", "www)/"),
            ("http://www2.example.com/a/", "com,example)/a"),
            ("http://wwwx.example.com/", "com,example,wwwx)/"),
            ("http://example.com/a/b/?x=1", "com,example)/a/b?x=1"),
            ("http://example.com:8080/", "com,example:8080)/"),
            ("http://user:pw@example.com/p", "com,example)/p"),
            ("http://example.com/caf%C3%A9", "com,example)/caf%c3%a9"),
            ("http://example.com/caf%c3%a9", "com,example)/caf%c3%a9"),
            ("http://example.com/A%2541", "com,example)/aa"),
            ("http://example.com/a%2Fb/", "com,example)/a/b"),
            ("http://example.com/a%2F..%2Fb", "com,example)/b"),
            ("http://example.com/a%20b", "com,example)/a%20b"),
            ("http://example.com/%7Euser", "com,example)/~user"),
            ("http://example.com/a//b//", "com,example)/a/b"),
            ("http://example.com/a%23b", "com,example)/a%23b"),
            ("http://example.com/a%25", "com,example)/a%25"),
            ("http://example.com/?", "com,example)/"),
            (
                "http://example.com/p?b=2&a=1&A=0",
                "com,example)/p?a=0&a=1&b=2",
            ),
            ("http://example.com/p?a-b=1&a=2", "com,example)/p?a=2&a-b=1"),
            ("http://example.com/p?x=&x", "com,example)/p?x&x="),
            ("http://example.com/p?%26=1", "com,example)/p?&=1"),
            ("http://example.com/p?b=%41", "com,example)/p?b=a"),
            (
                "http://example.com/p?q=a+b&q=a%20b",
                "com,example)/p?q=a%20b&q=a+b",
            ),
            (
                "http://example.com/p?a=1&jsessionid=0123456789abcdef0123456789ABCDEF&z=2",
                "com,example)/p?a=1&z=2",
            ),
            (
                "http://example.com/p?PHPSESSID=0123456789abcdef0123456789abcdef",
                "com,example)/p",
            ),
            (
                "http://example.com/p?cfid=12&cftoken=34&x=1",
                "com,example)/p?x=1",
            ),
            (
                "http://example.com/(a(0123456789abcdefghijklmn))/Page.aspx?x=1",
                "com,example)/page.aspx?x=1",
            ),
            (
                "http://example.com/dir/(0123456789abcdefghijklmn)/page.aspx",
                "com,example)/dir/page.aspx",
            ),
            ("http://xn--caf-dma.example/", "example,xn--caf-dma)/"),
            ("http://example.com/%00%ff", "com,example)/%00%ff"),
            ("http://a.b.example.com./x", "com,example,b,a)/x"),
        ];
        for (url, want) in cases {
            let parsed = Url::parse(url).unwrap();
            assert_eq!(
                parsed.as_str(),
                url,
                "the case is not in the url crate's form"
            );
            assert_eq!(surt(&parsed), want, "{url}");
        }
    }

    #[test]
    fn params_sort_as_python_sorts_tuples() {
        let cases = [
            ("b&a", "a&b"),
            ("a=2&a", "a&a=2"),
            ("a=1&a-b=0", "a=1&a-b=0"),
            ("&b&", "&&b"),
            ("x", "x"),
        ];
        for (query, want) in cases {
            assert_eq!(sort_params(query), want, "{query}");
        }
    }
}
