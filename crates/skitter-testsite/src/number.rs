//! Numbers in request paths, read only when written canonically (digits, no
//! sign, no leading zero), so each number has exactly one URL and every other
//! spelling of it is a different, missing one.

/// Parses a page index written canonically: digits only, no leading zero,
/// so `/p/07` and `/p/+7` are different, missing URLs.
pub(crate) fn page_index(s: &str) -> Option<usize> {
    let canonical =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    canonical.then(|| s.parse().ok()).flatten()
}

/// Digits without a leading zero, so each number has exactly one URL.
pub(crate) fn canonical_u32(s: &str) -> Option<u32> {
    let canonical =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    canonical.then(|| s.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_index_table() {
        let cases = [
            ("0", Some(0)),
            ("7", Some(7)),
            ("123", Some(123)),
            ("07", None),
            ("+7", None),
            ("", None),
            ("7a", None),
            ("99999999999999999999999", None),
        ];
        for (s, want) in cases {
            assert_eq!(page_index(s), want, "{s:?}");
        }
    }
}
