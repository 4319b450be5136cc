//! URL normalisation: the one place that decides when two spellings are the same URL.
//!
//! The crawl's seen set is keyed on the normalised URL, so this module has two duties
//! that pull against each other: merge every spelling of one resource
//! (`/p/7`, `/p/./7`, `../p/7`, `HTTP://Host:80/p/7#top`, `/p/%37`), and never merge two
//! URLs a server may treat differently. Everything here is a transformation that
//! RFC 3986 §6.2.2 (syntax-based normalisation) or the WHATWG URL Standard declares
//! equivalence-preserving; nothing is heuristic.
//!
//! What [`normalize`] does, on top of WHATWG parsing by the `url` crate (which already
//! lowercases scheme and host, converts IDNs to punycode, canonicalises IP literals,
//! drops the scheme's default port and resolves `.`/`..` segments):
//!
//! - drops the fragment (`#...`), which is never sent to the server;
//! - uppercases the hex digits of percent-escapes (`%2f` → `%2F`);
//! - decodes percent-escaped *unreserved* characters (ALPHA, DIGIT, `-._~`) in the
//!   path, query and userinfo (`%37` → `7`, `%7E` → `~`).
//!
//! What it deliberately leaves alone, because servers may distinguish them:
//!
//! - the case of path and query (`/Docs` ≠ `/docs`) and the order of query pairs;
//! - escaped reserved characters and the escape character itself (`%2F` ≠ `/`,
//!   `%3F` ≠ `?`, `%25` stays) and `+` (which is a space only in form encoding);
//! - a trailing slash (`/a` ≠ `/a/`);
//! - an empty query: `/p?` and `/p` stay distinct. RFC 3986 §6.2.3 only says they
//!   *should* be equivalent for schemes that define it; HTTP does not, and a server
//!   sees a different request-target for each.
//! - the opaque host of a non-special URL (not http/https/ws/wss/ftp/file): WHATWG
//!   keeps its case, and the crawler never fetches such URLs anyway.

use std::borrow::Cow;

use url::Url;

/// Why a string could not become a URL.
///
/// Every variant carries the offending input so that a message on its own is
/// enough to find the bad link or argument.
#[derive(Debug, thiserror::Error)]
pub enum UrlError {
    /// The string is not a URL (WHATWG parsing failed).
    #[error("invalid URL {input:?}: {source}")]
    Invalid {
        /// The text as given, before trimming or prefixing.
        input: String,
        /// What the WHATWG parser objected to.
        #[source]
        source: url::ParseError,
    },
    /// The string could not be resolved against the page it appeared on.
    #[error("cannot resolve {input:?} against {base}: {source}")]
    Unresolvable {
        /// The reference as found, before trimming.
        input: String,
        /// The base URL it was resolved against.
        base: Box<Url>,
        /// What the WHATWG parser objected to.
        #[source]
        source: url::ParseError,
    },
    /// The URL parsed, but its scheme is one skitter cannot crawl.
    #[error("unsupported scheme {scheme:?} in {input:?}: only http and https can be crawled")]
    UnsupportedScheme {
        /// The text as given.
        input: String,
        /// The scheme found in it, lowercased.
        scheme: String,
    },
}

impl UrlError {
    /// The offending input, exactly as it was given.
    pub fn input(&self) -> &str {
        match self {
            UrlError::Invalid { input, .. }
            | UrlError::Unresolvable { input, .. }
            | UrlError::UnsupportedScheme { input, .. } => input,
        }
    }
}

/// Normalises a parsed URL so that equivalent spellings compare equal.
///
/// Drops the fragment, uppercases percent-escape hex digits and decodes escaped
/// unreserved characters (ALPHA, DIGIT, `-._~`); see the module documentation for
/// the full list of what is and is not changed. The result is idempotent:
/// `normalize(normalize(u)) == normalize(u)`.
pub fn normalize(mut url: Url) -> Url {
    url.set_fragment(None);
    if let Some(path) = normalize_escapes(url.path()) {
        url.set_path(&path);
    }
    if let Some(query) = url.query().and_then(normalize_escapes) {
        url.set_query(Some(&query));
    }
    if let Some(user) = normalize_escapes(url.username()) {
        // Only fails for URLs that cannot carry credentials, which then have none.
        let _ = url.set_username(&user);
    }
    if let Some(password) = url.password().and_then(normalize_escapes) {
        let _ = url.set_password(Some(&password));
    }
    url
}

/// Resolves a reference found on the page at `base` and normalises the result.
///
/// Leading and trailing ASCII whitespace is trimmed first, as browsers do for
/// `href` values; an empty reference resolves to `base` itself (without fragment).
/// The result may have any scheme: filter with [`is_crawlable_scheme`].
///
/// # Errors
///
/// [`UrlError::Unresolvable`] when the reference is not a valid URL even relative
/// to `base`, e.g. `http://[bad/`.
pub fn resolve(raw: &str, base: &Url) -> Result<Url, UrlError> {
    let trimmed = raw.trim_matches(|c: char| c.is_ascii_whitespace());
    base.join(trimmed)
        .map(normalize)
        .map_err(|source| UrlError::Unresolvable {
            input: raw.to_owned(),
            base: Box::new(base.clone()),
            source,
        })
}

/// Parses a crawl root given on the command line and normalises it.
///
/// People type hosts, not URLs: when the argument has no scheme, `http://` is
/// prefixed, so `example.com/x`, `127.0.0.1:8080` and `localhost:3000/a` all work.
/// A `name:digits` prefix is read as host and port, not as a scheme.
///
/// # Errors
///
/// [`UrlError::Invalid`] when the argument is not a URL, and
/// [`UrlError::UnsupportedScheme`] when its scheme is not http or https.
pub fn parse_root(arg: &str) -> Result<Url, UrlError> {
    let trimmed = arg.trim_matches(|c: char| c.is_ascii_whitespace());
    let text: Cow<'_, str> = if has_scheme(trimmed) {
        Cow::Borrowed(trimmed)
    } else {
        Cow::Owned(format!("http://{trimmed}"))
    };
    let url = Url::parse(&text).map_err(|source| UrlError::Invalid {
        input: arg.to_owned(),
        source,
    })?;
    if !is_crawlable_scheme(&url) {
        return Err(UrlError::UnsupportedScheme {
            input: arg.to_owned(),
            scheme: url.scheme().to_owned(),
        });
    }
    Ok(normalize(url))
}

/// Whether skitter can fetch this URL at all: its scheme is http or https.
pub fn is_crawlable_scheme(url: &Url) -> bool {
    matches!(url.scheme(), "http" | "https")
}

/// Whether a command-line argument starts with a scheme, as opposed to a bare host.
///
/// WHATWG would read `localhost:3000` as scheme `localhost`; a scheme followed by
/// a digit is far more likely a host and port, so that case counts as no scheme.
fn has_scheme(arg: &str) -> bool {
    let Some((scheme, rest)) = arg.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    let well_formed = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    well_formed && !rest.starts_with(|c: char| c.is_ascii_digit())
}

/// Rewrites percent-escapes to their RFC 3986 §6.2.2 normal form.
///
/// Returns `None` when nothing changes, so callers skip the (re-parsing) setter.
/// Escapes of reserved or other characters keep their encoding, with uppercase
/// hex; a `%` not followed by two hex digits is left as it is.
fn normalize_escapes(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let Some(decoded) = escape_at(bytes, i) else {
            i += 1;
            continue;
        };
        let replacement = if is_unreserved(decoded) {
            char::from(decoded).to_string()
        } else {
            format!("%{decoded:02X}")
        };
        // `%` is ASCII, so `i` and `i + 3` are char boundaries.
        if replacement != s[i..i + 3] {
            let buf = out.get_or_insert_with(|| String::with_capacity(s.len()));
            buf.push_str(&s[copied..i]);
            buf.push_str(&replacement);
            copied = i + 3;
        }
        i += 3;
    }
    let mut buf = out?;
    buf.push_str(&s[copied..]);
    Some(buf)
}

/// RFC 3986 §2.3: ALPHA / DIGIT / "-" / "." / "_" / "~".
fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

/// The byte encoded by a well-formed `%XX` escape starting at `i`, if there is one.
fn escape_at(bytes: &[u8], i: usize) -> Option<u8> {
    match bytes.get(i..i + 3)? {
        [b'%', hi, lo] => Some(hex_value(*hi)? << 4 | hex_value(*lo)?),
        _ => None,
    }
}

fn hex_value(byte: u8) -> Option<u8> {
    char::from(byte)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Url {
        Url::parse("http://host.test/x/y").expect("valid base")
    }

    fn norm(raw: &str) -> String {
        let url = Url::parse(raw).unwrap_or_else(|e| panic!("{raw:?}: {e}"));
        normalize(url).to_string()
    }

    /// Spellings that must collapse to one normal form.
    #[test]
    fn normalizes_each_rule() {
        let cases = [
            // fragment
            ("http://h.test/p#frag", "http://h.test/p"),
            ("http://h.test/p#", "http://h.test/p"),
            ("http://h.test/p?q=1#f", "http://h.test/p?q=1"),
            // scheme and host case, IDN
            ("HTTP://Host.TEST/p", "http://host.test/p"),
            ("http://BÜCHER.example/", "http://xn--bcher-kva.example/"),
            // default port, empty path
            ("http://h.test:80/p", "http://h.test/p"),
            ("https://h.test:443/p", "https://h.test/p"),
            ("http://h.test", "http://h.test/"),
            // dot segments, also escaped ones
            ("http://h.test/a/./b/../c", "http://h.test/a/c"),
            ("http://h.test/a/%2E/b/%2e%2E/c", "http://h.test/a/c"),
            ("http://h.test/../../a", "http://h.test/a"),
            // hex case of escapes that stay escaped
            ("http://h.test/a%2fb", "http://h.test/a%2Fb"),
            ("http://h.test/p?x=%3f%2b", "http://h.test/p?x=%3F%2B"),
            ("http://h.test/%e2%82%ac", "http://h.test/%E2%82%AC"),
            // escaped unreserved characters are decoded everywhere
            ("http://h.test/p/%37", "http://h.test/p/7"),
            ("http://h.test/%41%7a%2D%2E%5F%7E", "http://h.test/Az-._~"),
            ("http://h.test/p?%6B=%76", "http://h.test/p?k=v"),
            ("http://%75ser:p%61ss@h.test/", "http://user:pass@h.test/"),
            // IP literals
            ("http://[0:0:0:0:0:0:0:1]:8080/", "http://[::1]:8080/"),
            ("http://0x7f.1/", "http://127.0.0.1/"),
            // malformed escapes are left alone
            ("http://h.test/100%", "http://h.test/100%"),
            ("http://h.test/%zz%4", "http://h.test/%zz%4"),
        ];
        for (raw, want) in cases {
            assert_eq!(norm(raw), want, "normalize({raw:?})");
        }
    }

    /// Pairs that a server may treat differently, so they must stay distinct.
    #[test]
    fn never_merges_distinct_urls() {
        let pairs = [
            ("http://h.test/Docs", "http://h.test/docs"),
            ("http://h.test/a%2Fb", "http://h.test/a/b"),
            ("http://h.test/a%3Fb", "http://h.test/a?b"),
            ("http://h.test/a%25", "http://h.test/a%"),
            ("http://h.test/a%2541", "http://h.test/a%41"),
            ("http://h.test/p?a=1&b=2", "http://h.test/p?b=2&a=1"),
            ("http://h.test/p?", "http://h.test/p"),
            ("http://h.test/p?q=A", "http://h.test/p?q=a"),
            ("http://h.test/p?q=a+b", "http://h.test/p?q=a%20b"),
            ("http://h.test/a", "http://h.test/a/"),
            ("http://h.test/p", "https://h.test/p"),
            ("http://h.test/p", "http://h.test:8080/p"),
            ("http://h.test/p", "http://www.h.test/p"),
            ("http://h.test/p", "http://h.test./p"),
            ("http://user@h.test/p", "http://h.test/p"),
            ("http://h.test/%7e", "http://h.test/%7E%7E"),
        ];
        for (a, b) in pairs {
            assert_ne!(norm(a), norm(b), "{a:?} and {b:?} must not merge");
        }
    }

    #[test]
    fn keeps_plus_and_empty_query() {
        assert_eq!(norm("http://h.test/a+b?c+d"), "http://h.test/a+b?c+d");
        assert_eq!(norm("http://h.test/p?"), "http://h.test/p?");
    }

    #[test]
    fn resolve_merges_spellings_of_one_page() {
        let spellings = [
            "/p/7",
            "/p/./7",
            "../p/7",
            "http://host.test:80/p/7#x",
            "/p/%37",
            "  /p/7\n",
            "\t//HOST.test/p/7",
            "/p/q/../7",
        ];
        for raw in spellings {
            let got = resolve(raw, &base()).expect("resolves");
            assert_eq!(got.as_str(), "http://host.test/p/7", "resolve({raw:?})");
        }
    }

    #[test]
    fn resolve_handles_edge_references() {
        let cases = [
            ("", "http://host.test/x/y"),
            ("?q", "http://host.test/x/y?q"),
            ("#only", "http://host.test/x/y"),
            ("mailto:a@b.test", "mailto:a@b.test"),
            ("https:other.test", "https://other.test/"),
            ("http:z", "http://host.test/x/z"),
        ];
        for (raw, want) in cases {
            let got = resolve(raw, &base()).expect("resolves");
            assert_eq!(got.as_str(), want, "resolve({raw:?})");
        }
    }

    #[test]
    fn resolve_reports_bad_input() {
        for raw in [
            "http://[bad/",
            "http://a b.test/",
            "https://x:99999/",
            "http://",
        ] {
            let err = resolve(raw, &base()).expect_err(raw);
            assert!(
                matches!(err, UrlError::Unresolvable { .. }),
                "{raw:?}: {err:?}"
            );
            assert_eq!(err.input(), raw);
            assert!(err.to_string().contains(&format!("{raw:?}")), "{err}");
        }
    }

    #[test]
    fn parse_root_adds_missing_scheme() {
        let cases = [
            ("example.com/x", "http://example.com/x"),
            ("127.0.0.1:8080", "http://127.0.0.1:8080/"),
            ("localhost:3000/a", "http://localhost:3000/a"),
            ("localhost", "http://localhost/"),
            ("[::1]:9000", "http://[::1]:9000/"),
            ("Example.COM:80/Docs#top", "http://example.com/Docs"),
            ("https://example.com", "https://example.com/"),
            (
                "HTTPS://example.com:443/%7euser",
                "https://example.com/~user",
            ),
            (" example.com\n", "http://example.com/"),
        ];
        for (arg, want) in cases {
            let got = parse_root(arg).unwrap_or_else(|e| panic!("{arg:?}: {e}"));
            assert_eq!(got.as_str(), want, "parse_root({arg:?})");
        }
    }

    #[test]
    fn parse_root_rejects_other_schemes_and_garbage() {
        let unsupported = [
            ("ftp://example.com/", "ftp"),
            ("mailto:a@b.test", "mailto"),
            ("file:///etc/passwd", "file"),
            ("javascript:alert(1)", "javascript"),
        ];
        for (arg, scheme) in unsupported {
            match parse_root(arg) {
                Err(UrlError::UnsupportedScheme { scheme: got, .. }) => assert_eq!(got, scheme),
                other => panic!("parse_root({arg:?}) = {other:?}"),
            }
        }
        for arg in ["", "   ", "http://[bad/", "exa mple.com", "host:99999"] {
            let err = parse_root(arg).expect_err(arg);
            assert!(matches!(err, UrlError::Invalid { .. }), "{arg:?}: {err:?}");
            assert_eq!(err.input(), arg);
        }
    }

    #[test]
    fn crawlable_schemes() {
        let cases = [
            ("http://h.test/", true),
            ("https://h.test/", true),
            ("ftp://h.test/", false),
            ("ws://h.test/", false),
            ("mailto:a@h.test", false),
            ("data:,x", false),
        ];
        for (raw, want) in cases {
            let url = Url::parse(raw).expect("valid");
            assert_eq!(is_crawlable_scheme(&url), want, "{raw}");
        }
    }

    #[test]
    fn normalize_is_idempotent_on_odd_urls() {
        let urls = [
            "http://h.test/%2e%2E%2e/%7E%7e?%7e#%7e",
            "web+demo:/.//not-a-host/%41",
            "foo://Host/%6a/%2e/..",
            "mailto:%61@b.test",
            "file:///C:/%7e",
            "http://u%3a:p%40%41@h.test/",
        ];
        for raw in urls {
            let once = normalize(Url::parse(raw).expect("valid"));
            let twice = normalize(once.clone());
            assert_eq!(once, twice, "{raw}");
            let reparsed = Url::parse(once.as_str()).expect("round-trips");
            assert_eq!(reparsed, once, "{raw}");
        }
    }
}
