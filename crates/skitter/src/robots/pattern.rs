//! One `Allow`/`Disallow` path pattern and its matcher (RFC 9309 §2.2.2–2.2.3).
//!
//! Patterns are normalised once, when the file is parsed: octets outside US-ASCII
//! are percent-encoded and existing `%xx` escapes are upper-cased, so a rule
//! written as `/ツ` matches the path `/%E3%83%84` a crawler actually sends. The
//! matcher splits the pattern at its `*`s and finds each piece in order, leftmost
//! first (which is enough for `*` globs), with a linear substring search: its
//! cost is linear in the pattern and path lengths, however many `*` a hostile
//! file uses.

use std::borrow::Cow;

/// A normalised robots.txt path pattern, with `*` wildcards and an optional `$` end
/// anchor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// The escaped pattern as written (including a trailing `$`), used for
    /// specificity: RFC 9309 picks the matching rule with the most octets.
    escaped: String,
    /// Whether the pattern ended in `$`, so it must match the whole path.
    anchored: bool,
}

impl Pattern {
    /// Normalises `raw` (a rule value) into a pattern.
    pub fn new(raw: &[u8]) -> Pattern {
        let escaped = escape(raw);
        let anchored = escaped.ends_with('$');
        Pattern { escaped, anchored }
    }

    /// The normalised pattern text, e.g. `"/%C3%A1*$"` for `/á*$`.
    pub fn as_str(&self) -> &str {
        &self.escaped
    }

    /// Specificity of a match: the pattern's length in octets.
    pub fn len(&self) -> usize {
        self.escaped.len()
    }

    /// Whether the pattern is empty (an empty rule, which matches nothing).
    pub fn is_empty(&self) -> bool {
        self.escaped.is_empty()
    }

    /// Whether the pattern matches `path` (a path and query as sent on the wire,
    /// with `%xx` escapes upper-cased, as `Robots` does before matching).
    pub fn matches(&self, path: &str) -> bool {
        let body = if self.anchored {
            &self.escaped[..self.escaped.len() - 1]
        } else {
            &self.escaped[..]
        };
        wildcard_match(body, path, self.anchored)
    }
}

/// Percent-encodes non-ASCII octets and upper-cases the hex digits of existing
/// escapes, as RFC 9309 §2.2.2 requires before comparing patterns with paths.
fn escape(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b == b'%' && is_escape_at(raw, i) {
            out.push('%');
            out.push(raw[i + 1].to_ascii_uppercase() as char);
            out.push(raw[i + 2].to_ascii_uppercase() as char);
            i += 3;
            continue;
        }
        if b.is_ascii() {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
        i += 1;
    }
    out
}

fn is_escape_at(s: &[u8], i: usize) -> bool {
    s.len() > i + 2 && s[i + 1].is_ascii_hexdigit() && s[i + 2].is_ascii_hexdigit()
}

/// Upper-cases the hex digits of `%xx` escapes in a path so that `%e3` and `%E3`
/// compare equal; other octets are left alone, because the path is expected to be
/// exactly what goes on the wire.
pub(crate) fn normalize_path(path: &str) -> Cow<'_, str> {
    let bytes = path.as_bytes();
    let needs_work = (0..bytes.len()).any(|i| {
        bytes[i] == b'%' && is_escape_at(bytes, i) && {
            bytes[i + 1].is_ascii_lowercase() || bytes[i + 2].is_ascii_lowercase()
        }
    });
    if !needs_work {
        return Cow::Borrowed(path);
    }
    let mut out = String::with_capacity(path.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && is_escape_at(bytes, i) {
            out.push('%');
            out.push(bytes[i + 1].to_ascii_uppercase() as char);
            out.push(bytes[i + 2].to_ascii_uppercase() as char);
            i += 3;
        } else {
            // Copy the whole (possibly multi-byte) character starting here.
            let ch_len = path[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&path[i..i + ch_len]);
            i += ch_len;
        }
    }
    Cow::Owned(out)
}

/// Glob match where `*` matches any run of octets. Without `anchored` the pattern
/// only has to match a prefix of `text` (robots rules are prefix rules).
///
/// The pieces between `*`s must occur in order: the first at the start, each
/// later one at its leftmost place after the one before (a later match could only
/// leave less room for the rest), and with `anchored` the last at the very end.
fn wildcard_match(pattern: &str, text: &str, anchored: bool) -> bool {
    let mut pieces = pattern.split('*');
    let first = pieces.next().unwrap_or("");
    if !text.starts_with(first) {
        return false;
    }
    let mut pos = first.len();
    let rest: Vec<&str> = pieces.filter(|p| !p.is_empty()).collect();
    let starred = pattern.contains('*');
    let Some((last, middle)) = rest.split_last() else {
        // No piece after a star: `first` alone, or `first*`.
        return !anchored || starred || pos == text.len();
    };
    for piece in middle {
        match text[pos..].find(piece) {
            Some(at) => pos += at + piece.len(),
            None => return false,
        }
    }
    if anchored && !pattern.ends_with('*') {
        text.len() >= pos + last.len() && text.ends_with(last)
    } else {
        text[pos..].contains(last)
    }
}

/// The previous matcher (greedy with one backtrack point), kept to check the
/// linear one against.
#[cfg(test)]
fn reference_match(pattern: &[u8], text: &[u8], anchored: bool) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut retry: Option<(usize, usize)> = None;
    loop {
        if p == pattern.len() {
            if !anchored || t == text.len() {
                return true;
            }
        } else if pattern[p] == b'*' {
            retry = Some((p + 1, t));
            p += 1;
            continue;
        } else if t < text.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
            continue;
        }
        match retry {
            Some((star_p, star_t)) if star_t < text.len() => {
                retry = Some((star_p, star_t + 1));
                p = star_p;
                t = star_t + 1;
            }
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_table() {
        let cases: &[(&str, &str, bool)] = &[
            ("/", "/", true),
            ("/fish", "/fish.html", true),
            ("/fish", "/Fish.asp", false),
            ("/fish", "/catfish", false),
            ("/fish*", "/fishheads", true),
            ("/*.php", "/folder/filename.php?x", true),
            ("/*.php", "/index?php", false),
            ("/*.php$", "/filename.php", true),
            ("/*.php$", "/filename.php?x", false),
            ("/*.php$", "/filename.php5", false),
            ("/fish*.php", "/fishheads/catfish.php?p", true),
            ("/$", "/", true),
            ("/$", "/page", false),
            ("$", "", true),
            ("/a$b", "/a$b/c", true),
            ("*", "/anything", true),
            ("/**/x$", "/a/b/x", true),
            ("/*a*b*c$", "/xaybzc", true),
            ("/*a*b*c$", "/xaybzcd", false),
            ("/%E3%83%84", "/%E3%83%84/x", true),
        ];
        for &(pattern, path, want) in cases {
            let got = Pattern::new(pattern.as_bytes()).matches(path);
            assert_eq!(got, want, "pattern {pattern:?} path {path:?}");
        }
    }

    #[test]
    fn escaping_table() {
        let cases: &[(&[u8], &str)] = &[
            ("/a/b".as_bytes(), "/a/b"),
            ("/á".as_bytes(), "/%C3%A1"),
            (b"/%aa/%zz%4", "/%AA/%zz%4"),
            (b"/\xff\xfe", "/%FF%FE"),
        ];
        for &(raw, want) in cases {
            assert_eq!(Pattern::new(raw).as_str(), want);
        }
        assert_eq!(normalize_path("/%e3%83%84?q=ツ"), "/%E3%83%84?q=ツ");
        assert!(matches!(normalize_path("/plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn many_stars_stay_linear() {
        // Quadratic for a backtracking matcher (40 stars × 200,000 octets, and a
        // 500 KiB file may hold thousands of such rules); one pass here.
        let pattern = format!("{}b$", "/*a".repeat(40));
        let path = format!("/{}", "a".repeat(200_000));
        assert!(!Pattern::new(pattern.as_bytes()).matches(&path));
        let long = format!("/{}*b", "a*".repeat(50_000));
        assert!(!Pattern::new(long.as_bytes()).matches(&path));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 4000,
            failure_persistence: None,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x0b07_5eed),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// The linear matcher agrees with the backtracking one on small
        /// alphabets, where stars and near-misses are frequent.
        #[test]
        fn linear_matcher_agrees_with_backtracking(
            pattern in "[ab*]{0,8}[$]?",
            text in "[ab]{0,12}",
        ) {
            let anchored = pattern.ends_with('$');
            let body = pattern.trim_end_matches('$');
            proptest::prop_assert_eq!(
                wildcard_match(body, &text, anchored),
                reference_match(body.as_bytes(), text.as_bytes(), anchored),
                "pattern {:?} text {:?}", pattern, text
            );
        }
    }
}
