//! The stateless trap rules that read a URL's path: repeated segments and
//! implausible dates. Pure functions over the segment list, so they are
//! table-tested here without a guard.

use std::ops::RangeInclusive;

use url::Url;

/// Only this many leading segments are examined by the repeat and date rules, so a
/// pathological path (with the segment limit off) still costs microseconds.
const MAX_ANALYSED: usize = 256;

/// A URL's path split at `/`, without the leading `/` and without the empty
/// segment a trailing `/` would add.
pub(super) struct Segments<'a> {
    /// All segments, including those beyond `MAX_ANALYSED`.
    pub(super) count: usize,
    analysed: Vec<&'a str>,
}

impl<'a> Segments<'a> {
    pub(super) fn of(url: &'a Url) -> Self {
        Self::from_path(url.path())
    }

    fn from_path(path: &'a str) -> Self {
        let body = path.strip_prefix('/').unwrap_or(path);
        let body = body.strip_suffix('/').unwrap_or(body);
        let mut segments = Segments {
            count: 0,
            analysed: Vec::new(),
        };
        if body.is_empty() {
            return segments;
        }
        for segment in body.split('/') {
            if segments.count < MAX_ANALYSED {
                segments.analysed.push(segment);
            }
            segments.count += 1;
        }
        segments
    }

    /// One segment occurs more than `max` times, or a run of segments occurs
    /// `max` times back to back (at least twice).
    pub(super) fn repeat(&self, max: usize) -> bool {
        let mut sorted = self.analysed.clone();
        sorted.sort_unstable();
        let most = sorted
            .chunk_by(|a, b| a == b)
            .map(<[&str]>::len)
            .max()
            .unwrap_or(0);
        most > max || self.back_to_back(max.max(2))
    }

    /// Some run of `k` segments is followed by `copies - 1` copies of itself. For
    /// each `k` this is a streak of `(copies - 1) * k` positions `j` where segment
    /// `j` equals segment `j + k`.
    fn back_to_back(&self, copies: usize) -> bool {
        let s = &self.analysed;
        for k in 1..=s.len() / copies {
            let needed = (copies - 1) * k;
            let mut streak = 0;
            for j in 0..s.len() - k {
                streak = if s[j] == s[j + k] { streak + 1 } else { 0 };
                if streak >= needed {
                    return true;
                }
            }
        }
        false
    }

    /// A date-shaped part of the path names a year outside `years`.
    pub(super) fn implausible_date(&self, years: &RangeInclusive<u16>) -> bool {
        let s = &self.analysed;
        (0..s.len()).any(|i| {
            let year = if is_year(s[i]) && s.get(i + 1).is_some_and(|m| is_month(m)) {
                number(&s[i].as_bytes()[..4])
            } else {
                joined_year(s[i])
            };
            year.is_some_and(|y| !years.contains(&y))
        })
    }
}

/// Exactly four ASCII digits.
fn is_year(s: &str) -> bool {
    s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit())
}

/// `1`–`12` or `01`–`12`.
fn is_month(s: &str) -> bool {
    (1..=2).contains(&s.len()) && number(s.as_bytes()).is_some_and(|m| (1..=12).contains(&m))
}

/// The year of a `YYYY-MM` segment, which may go on with `-…` (`2024-05-17`,
/// `2024-5-slug`).
fn joined_year(s: &str) -> Option<u16> {
    let (year, rest) = s.split_at_checked(4)?;
    let month = rest.strip_prefix('-')?;
    let month = month.split_once('-').map_or(month, |(m, _)| m);
    (is_year(year) && is_month(month))
        .then(|| number(year.as_bytes()))
        .flatten()
}

/// Digits as a number; `None` for anything else or overflow.
fn number(digits: &[u8]) -> Option<u16> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u16, |n, &b| {
        if !b.is_ascii_digit() {
            return None;
        }
        n.checked_mul(10)?.checked_add(u16::from(b - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(path: &str) -> Segments<'_> {
        Segments::from_path(path)
    }

    #[test]
    fn splitting_table() {
        let cases: [(&str, &[&str]); 7] = [
            ("/", &[]),
            ("", &[]),
            ("/a", &["a"]),
            ("/a/", &["a"]),
            ("/a/b/c", &["a", "b", "c"]),
            ("/a//b/", &["a", "", "b"]),
            ("/a//", &["a", ""]),
        ];
        for (path, want) in cases {
            let s = segs(path);
            assert_eq!(s.analysed, want, "{path}");
            assert_eq!(s.count, want.len(), "{path}");
        }
    }

    #[test]
    fn analysis_is_capped_but_count_is_not() {
        let path = "/x".repeat(MAX_ANALYSED + 10);
        let s = segs(&path);
        assert_eq!(s.count, MAX_ANALYSED + 10);
        assert_eq!(s.analysed.len(), MAX_ANALYSED);
    }

    #[test]
    fn repeat_table() {
        let cases = [
            // (path, max, loop?)
            ("/a/b/c/d/e", 3, false),
            ("/2024/01/01/", 3, false),
            ("/a/b/a/", 3, false),
            ("/a/x/a/y/a/", 3, false),
            ("/a/x/a/y/a/z/a/", 3, true),
            ("/loop/a/a/", 3, false),
            ("/loop/a/a/a/", 3, true),
            ("/a/b/a/b/", 3, false),
            ("/a/b/a/b/a/b/", 3, true),
            ("/docs/api/v1/api/v1/", 3, false),
            ("/docs/api/v1/api/v1/api/v1/", 3, true),
            ("/x/p/q/r/p/q/r/p/q/r/y", 3, true),
            ("/en/docs/en/guide/", 3, false),
            ("/a/a/", 1, true),
            ("/a/b/", 1, false),
            ("/a/b/a/", 1, true),
            ("/a/a/", 2, true),
            ("/a/b/a/", 2, false),
            ("/a/b/a/b/", 2, true),
            ("/a/a/a/", 4, false),
            ("/a/a/a/a/", 4, true),
            ("/", 3, false),
        ];
        for (path, max, want) in cases {
            assert_eq!(segs(path).repeat(max), want, "{path} with {max}");
        }
    }

    #[test]
    fn date_table() {
        let years = 1900..=2035;
        let cases = [
            ("/cal/2024/1", false),
            ("/cal/1900/12", false),
            ("/cal/2035/12", false),
            ("/cal/1899/12", true),
            ("/cal/2036/1", true),
            ("/2024/01/01/slug", false),
            ("/1850/05/old-news", true),
            ("/p/1234", false),
            ("/p/1234/x", false),
            ("/p/1234/13", false),
            ("/p/1234/0", false),
            ("/p/1234/012", false),
            ("/p/12345/1", false),
            ("/t/slug/1234/5", true),
            ("/events/2024-05", false),
            ("/events/2024-05-17/party", false),
            ("/events/2999-05-17", true),
            ("/events/2999-5-slug", true),
            ("/events/2999-13", false),
            ("/events/2999-x", false),
            ("/events/29990-05", false),
            ("/events/٢٠٢٤/1", false),
            ("/2999", false),
            ("/", false),
        ];
        for (path, want) in cases {
            assert_eq!(segs(path).implausible_date(&years), want, "{path}");
        }
    }

    #[test]
    fn number_table() {
        let cases: [(&[u8], Option<u16>); 6] = [
            (b"0", Some(0)),
            (b"2024", Some(2024)),
            (b"65535", Some(65535)),
            (b"65536", None),
            (b"", None),
            (b"1a", None),
        ];
        for (digits, want) in cases {
            assert_eq!(number(digits), want, "{digits:?}");
        }
    }
}
