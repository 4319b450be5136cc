//! The cookie jar (`--cookies`): reqwest's, behind a public-suffix check.
//!
//! reqwest's jar takes a `Set-Cookie` for any parent domain of the host that
//! sent it, `Domain=co.uk` included, and would then send that cookie to every
//! `*.co.uk` host: one site could plant cookies on (or fix sessions of) all its
//! neighbours. As browsers do, a cookie whose `Domain` is a public suffix is
//! refused, unless the host that set it is that suffix itself, which may set
//! it for itself alone (the `Domain` attribute dropped: a host-only cookie).

use reqwest::cookie::{CookieStore, Jar};
use reqwest::header::HeaderValue;
use url::Url;

/// The jar every client of a fetcher shares.
#[derive(Debug, Default)]
pub(crate) struct CookieJar {
    jar: Jar,
}

impl CookieStore for CookieJar {
    fn set_cookies(&self, headers: &mut dyn Iterator<Item = &HeaderValue>, url: &Url) {
        let Some(host) = url.host_str() else {
            return;
        };
        let admitted: Vec<HeaderValue> = headers.filter_map(|v| admit(v, host)).collect();
        self.jar.set_cookies(&mut admitted.iter(), url);
    }

    fn cookies(&self, url: &Url) -> Option<HeaderValue> {
        self.jar.cookies(url)
    }
}

/// The `Set-Cookie` value `host` sent, as the jar may store it: unchanged,
/// host-only (its `Domain` dropped) when `host` is the public suffix it
/// names, or `None` when it names a public suffix for other hosts. A value
/// that does not parse goes through as it is (the jar drops it itself).
fn admit(value: &HeaderValue, host: &str) -> Option<HeaderValue> {
    let Some(cookie) = value
        .to_str()
        .ok()
        .and_then(|text| cookie::Cookie::parse(text).ok())
    else {
        return Some(value.clone());
    };
    let Some(domain) = cookie.domain() else {
        return Some(value.clone());
    };
    // `cookie` strips one leading dot; a domain is matched in any case.
    let domain = domain.trim_start_matches('.').to_ascii_lowercase();
    if !is_public_suffix(&domain) {
        return Some(value.clone());
    }
    if domain != host.trim_end_matches('.').to_ascii_lowercase() {
        tracing::debug!(%host, %domain, "cookie for a public suffix refused");
        return None;
    }
    let mut host_only = cookie.into_owned();
    host_only.unset_domain();
    HeaderValue::from_str(&host_only.to_string()).ok()
}

/// Whether `domain` is a public suffix (`com`, `co.uk`, `github.io`; by the
/// list's default rule, any name of one label not on the list).
fn is_public_suffix(domain: &str) -> bool {
    psl::suffix(domain.as_bytes()).is_some_and(|s| s.as_bytes() == domain.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_for_a_public_suffix_are_refused() {
        // (host, Set-Cookie, what the jar gets)
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("a.example.co.uk", "s=1; Domain=co.uk", None),
            ("a.example.co.uk", "s=1; Domain=.CO.UK; Path=/", None),
            ("a.example.com", "s=1; Domain=com", None),
            ("user.github.io", "s=1; Domain=github.io", None),
            (
                "a.example.co.uk",
                "s=1; Domain=example.co.uk",
                Some("s=1; Domain=example.co.uk"),
            ),
            ("a.example.co.uk", "s=1; Path=/", Some("s=1; Path=/")),
            // The suffix itself may set a cookie for itself alone.
            ("co.uk", "s=1; Domain=co.uk; Path=/", Some("s=1; Path=/")),
            ("not a cookie", "=", Some("=")),
        ];
        for (host, set, kept) in cases {
            let got = admit(&HeaderValue::from_str(set).unwrap(), host);
            let got = got.as_ref().map(|v| v.to_str().unwrap());
            assert_eq!(got, *kept, "{host}: {set}");
        }
    }

    #[test]
    fn a_refused_cookie_is_sent_nowhere() {
        let jar = CookieJar::default();
        let from = Url::parse("http://a.example.co.uk/").unwrap();
        let set = [
            HeaderValue::from_static("planted=1; Domain=co.uk"),
            HeaderValue::from_static("own=2; Domain=example.co.uk"),
        ];
        jar.set_cookies(&mut set.iter(), &from);
        let other = Url::parse("http://b.other.co.uk/").unwrap();
        assert_eq!(jar.cookies(&other), None);
        let sibling = Url::parse("http://b.example.co.uk/").unwrap();
        assert_eq!(jar.cookies(&sibling).unwrap(), "own=2");
    }
}
