//! A linear pre-scan that finds where an HTML document nests elements deeper
//! than [`MAX_DEPTH`], so the DOM is only built from the part before it.
//!
//! Why: html5ever never recurses, but its tree builder searches the stack of
//! open elements on many start and end tags ("has a `p` in button scope"), so
//! building a DOM of N nested elements costs N² (100,000 nested `<div>`s took
//! over a minute). Browsers cap the depth for the same reason (Chromium's
//! parser at 512). With the stack held to about [`MAX_DEPTH`], each tag costs
//! at most that much and parsing stays linear in the page's size.
//!
//! The count is deliberately simple: start tags minus end tags, leaving out
//! void elements and those HTML closes implicitly (`p`, `li`, `td`, …), which
//! pages routinely leave open; raw-text elements (`script`, `style`, …) and
//! comments are skipped whole. It can only over-count by the elements it
//! leaves open, which the DOM would also hold.

/// Deepest nesting of elements read into the DOM.
pub const MAX_DEPTH: usize = 512;

/// Elements without an end tag, and elements HTML closes implicitly.
const NOT_COUNTED: [&str; 36] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param", "keygen", "frame", "basefont", "bgsound", "p", "li", "dt", "dd", "tr", "td",
    "th", "thead", "tbody", "tfoot", "option", "optgroup", "rb", "rp", "rt", "rtc", "colgroup",
    "caption",
];

/// Elements whose content is text, not tags.
const RAW_TEXT: [&str; 8] = [
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes",
];

/// The byte offset of the tag that first nests deeper than [`MAX_DEPTH`], if any.
pub(crate) fn too_deep_at(html: &str) -> Option<usize> {
    let bytes = html.as_bytes();
    // Every counted tag starts with a `<`: a page with no more of them than
    // the limit cannot pass it, and a count is far cheaper than the scan.
    memchr::memchr_iter(b'<', bytes).nth(MAX_DEPTH)?;
    let mut depth = 0usize;
    let mut pos = 0;
    while let Some(found) = memchr(b'<', &bytes[pos..]) {
        let at = pos + found;
        let rest = &bytes[at + 1..];
        if rest.starts_with(b"!--") {
            pos = find(bytes, at + 4, b"-->").map_or(bytes.len(), |e| e + 3);
            continue;
        }
        let closing = rest.first() == Some(&b'/');
        let name_start = at + 1 + usize::from(closing);
        let name_len = bytes[name_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        if name_len == 0 || !bytes[name_start].is_ascii_alphabetic() {
            pos = at + 1;
            continue;
        }
        let name = &bytes[name_start..name_start + name_len];
        let end = tag_end(bytes, name_start + name_len);
        if closing {
            if !is_one_of(name, &NOT_COUNTED) {
                depth = depth.saturating_sub(1);
            }
            pos = end;
            continue;
        }
        if is_one_of(name, &RAW_TEXT) {
            let close = [b"</", name].concat();
            pos = find_ignore_case(bytes, end, &close).unwrap_or(bytes.len());
            continue;
        }
        if !is_one_of(name, &NOT_COUNTED) {
            depth += 1;
            if depth > MAX_DEPTH {
                return Some(at);
            }
        }
        pos = end;
    }
    None
}

/// Just past the `>` closing a tag whose attributes start at `from` (quoted
/// values may hold `>`).
fn tag_end(bytes: &[u8], from: usize) -> usize {
    let mut quote = None;
    for (i, &b) in bytes[from..].iter().enumerate() {
        match (quote, b) {
            (None, b'"' | b'\'') => quote = Some(b),
            (Some(q), _) if q == b => quote = None,
            (None, b'>') => return from + i + 1,
            _ => {}
        }
    }
    bytes.len()
}

/// Whether a tag name is in `list` (lower case), ignoring ASCII case.
fn is_one_of(name: &[u8], list: &[&str]) -> bool {
    list.iter().any(|n| n.as_bytes().eq_ignore_ascii_case(name))
}

fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&b| b == needle)
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| from + i)
}

fn find_ignore_case(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
        .map(|i| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_what_nests_and_skips_the_rest() {
        let deep = |n: usize| format!("{}x{}", "<div>".repeat(n), "</div>".repeat(n));
        assert_eq!(too_deep_at(&deep(MAX_DEPTH)), None);
        assert_eq!(too_deep_at(&deep(MAX_DEPTH + 1)), Some(MAX_DEPTH * 5));
        // Implicitly closed, void, raw text, comments and closed siblings do not nest.
        let flat = format!(
            "{}{}{}<script>{}</script><!--{}-->{}",
            "<p>".repeat(2000),
            "<li><br><img src='>'>".repeat(2000),
            "<div></div>".repeat(2000),
            "<div>".repeat(2000),
            "<div>".repeat(2000),
            "<span>a</SPAN>".repeat(2000),
        );
        assert_eq!(too_deep_at(&flat), None);
        assert_eq!(too_deep_at("<<<>>> < / </ <1 <!-- "), None);
    }
}
