//! `srcset` attribute parsing: the candidate URLs of `img` and `source`.
//!
//! Follows the HTML standard's "parse a srcset attribute" closely enough to
//! get URLs right, which is all a crawler needs: a URL is a run of
//! non-whitespace, so commas *inside* a URL (common in image-CDN paths such as
//! `/format=webp,width=640/x.jpg`) stay in it, while trailing commas end the
//! candidate. Descriptors (`2x`, `640w`, and anything in parentheses) are
//! skipped, not validated: a malformed descriptor does not hide a URL.

/// Returns the candidate URLs of a `srcset` value, in order, as written.
pub fn parse_srcset(value: &str) -> Vec<String> {
    let mut urls = Vec::new();
    let mut rest = value;
    loop {
        rest = rest.trim_start_matches(|c: char| is_space(c) || c == ',');
        if rest.is_empty() {
            return urls;
        }
        let end = rest.find(is_space).unwrap_or(rest.len());
        let (url, after) = rest.split_at(end);
        let trimmed = url.trim_end_matches(',');
        if !trimmed.is_empty() {
            urls.push(trimmed.to_owned());
        }
        rest = if trimmed.len() < url.len() {
            after
        } else {
            skip_descriptors(after)
        };
    }
}

/// Skips a candidate's descriptors up to and including the comma that ends
/// it; commas inside parentheses belong to a descriptor.
fn skip_descriptors(s: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => return &s[i + 1..],
            _ => {}
        }
    }
    ""
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0C' | '\r')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_split_like_browsers_do() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("  ,, ", &[]),
            ("a.jpg", &["a.jpg"]),
            ("a.jpg 1x, b.jpg 2x", &["a.jpg", "b.jpg"]),
            ("a.jpg,b.jpg", &["a.jpg,b.jpg"]), // no space: one URL with a comma
            ("a.jpg, b.jpg", &["a.jpg", "b.jpg"]), // trailing comma ends the URL
            ("a.jpg 100w,b.jpg 200w", &["a.jpg", "b.jpg"]),
            (
                "/f=webp,w=640/x.jpg 640w, /f=webp,w=750/x.jpg 750w",
                &["/f=webp,w=640/x.jpg", "/f=webp,w=750/x.jpg"],
            ),
            ("a.jpg (foo, bar) 1x, b.jpg", &["a.jpg", "b.jpg"]),
            ("\ta.jpg\n2x ,\r\nb.jpg", &["a.jpg", "b.jpg"]),
            ("a.jpg bogus descriptor, b.jpg", &["a.jpg", "b.jpg"]),
            (
                "data:image/png;base64,iVBOR 1x",
                &["data:image/png;base64,iVBOR"],
            ),
            ("a.jpg 1x (unclosed, b.jpg", &["a.jpg"]),
        ];
        for (input, want) in cases {
            assert_eq!(parse_srcset(input), *want, "input {input:?}");
        }
    }
}
