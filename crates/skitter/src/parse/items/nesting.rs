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

/// Whether an element (its name lowered) has no end tag, or HTML closes it
/// implicitly: it is not counted.
fn not_counted(name: &[u8]) -> bool {
    matches!(
        name,
        b"area"
            | b"base"
            | b"br"
            | b"col"
            | b"embed"
            | b"hr"
            | b"img"
            | b"input"
            | b"link"
            | b"meta"
            | b"source"
            | b"track"
            | b"wbr"
            | b"param"
            | b"keygen"
            | b"frame"
            | b"basefont"
            | b"bgsound"
            | b"p"
            | b"li"
            | b"dt"
            | b"dd"
            | b"tr"
            | b"td"
            | b"th"
            | b"thead"
            | b"tbody"
            | b"tfoot"
            | b"option"
            | b"optgroup"
            | b"rb"
            | b"rp"
            | b"rt"
            | b"rtc"
            | b"colgroup"
            | b"caption"
    )
}

/// Whether an element (its name lowered) holds text, not tags.
fn raw_text(name: &[u8]) -> bool {
    matches!(
        name,
        b"script"
            | b"style"
            | b"textarea"
            | b"title"
            | b"xmp"
            | b"iframe"
            | b"noembed"
            | b"noframes"
    )
}

/// Bytes of a tag name lowered for the lists above: no name in them is
/// longer, so a longer name is in neither.
const NAME_MAX: usize = 8;

/// The byte offset of the tag that first nests deeper than [`MAX_DEPTH`], if any.
///
/// Linear in the page: each byte is looked at a bounded number of times
/// (`memchr` to the next `<`, the name, `memchr3` to the tag's end).
pub(crate) fn too_deep_at(html: &str) -> Option<usize> {
    let bytes = html.as_bytes();
    // Every counted tag starts with a `<`: a page with no more of them than
    // the limit cannot pass it, and a count is far cheaper than the scan.
    memchr::memchr_iter(b'<', bytes).nth(MAX_DEPTH)?;
    let mut depth = 0usize;
    let mut pos = 0;
    while let Some(found) = memchr::memchr(b'<', &bytes[pos..]) {
        let at = pos + found;
        let rest = &bytes[at + 1..];
        if rest.starts_with(b"!--") {
            pos = memchr::memmem::find(&bytes[at + 4..], b"-->")
                .map_or(bytes.len(), |e| at + 4 + e + 3);
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
        let mut lowered = [0u8; NAME_MAX];
        let name: &[u8] = if name_len <= NAME_MAX {
            lowered[..name_len].copy_from_slice(&bytes[name_start..name_start + name_len]);
            lowered[..name_len].make_ascii_lowercase();
            &lowered[..name_len]
        } else {
            b""
        };
        let end = tag_end(bytes, name_start + name_len);
        if closing {
            if !not_counted(name) {
                depth = depth.saturating_sub(1);
            }
            pos = end;
            continue;
        }
        if raw_text(name) {
            pos = closing_tag(bytes, end, name).unwrap_or(bytes.len());
            continue;
        }
        if !not_counted(name) {
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
fn tag_end(bytes: &[u8], mut from: usize) -> usize {
    while let Some(i) = memchr::memchr3(b'"', b'\'', b'>', &bytes[from..]) {
        let b = bytes[from + i];
        if b == b'>' {
            return from + i + 1;
        }
        // A quoted value: on past its closing quote.
        match memchr::memchr(b, &bytes[from + i + 1..]) {
            Some(j) => from += i + 1 + j + 1,
            None => return bytes.len(),
        }
    }
    bytes.len()
}

/// Where the first `</name` (any case) at or after `from` starts.
fn closing_tag(bytes: &[u8], from: usize, name: &[u8]) -> Option<usize> {
    let mut at = from;
    while let Some(i) = memchr::memmem::find(bytes.get(at..)?, b"</") {
        let start = at + i;
        let tail = &bytes[start + 2..];
        if tail.len() >= name.len() && tail[..name.len()].eq_ignore_ascii_case(name) {
            return Some(start);
        }
        at = start + 2;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The scan as first written (a byte loop, a list search per tag), kept
    /// as the oracle the `memchr` scan must agree with.
    mod reference {
        const NOT_COUNTED: [&str; 36] = [
            "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
            "track", "wbr", "param", "keygen", "frame", "basefont", "bgsound", "p", "li", "dt",
            "dd", "tr", "td", "th", "thead", "tbody", "tfoot", "option", "optgroup", "rb", "rp",
            "rt", "rtc", "colgroup", "caption",
        ];
        const RAW_TEXT: [&str; 8] = [
            "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes",
        ];

        pub(super) fn too_deep_at(html: &str, max: usize) -> Option<usize> {
            let bytes = html.as_bytes();
            let mut depth = 0usize;
            let mut pos = 0;
            while let Some(found) = bytes[pos..].iter().position(|&b| b == b'<') {
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
                    if depth > max {
                        return Some(at);
                    }
                }
                pos = end;
            }
            None
        }

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

        fn is_one_of(name: &[u8], list: &[&str]) -> bool {
            list.iter().any(|n| n.as_bytes().eq_ignore_ascii_case(name))
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
    }

    /// Pieces of tag soup: nesting and closing tags in mixed case, void and
    /// implicitly closed elements, raw text, comments, quotes holding `>`,
    /// stray `<`, `>` and quotes, names too long for the lists.
    fn soup() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            6 => Just("<div>"),
            4 => Just("</div>"),
            2 => Just("<DiV class='a>b'>"),
            2 => Just("<span title=\"x\">"),
            1 => Just("</SPAN>"),
            1 => Just("<p>"),
            1 => Just("</P>"),
            1 => Just("<br>"),
            1 => Just("<li>"),
            1 => Just("<Script>"),
            1 => Just("</scRIPT>"),
            1 => Just("<textarea>"),
            1 => Just("</textareA"),
            1 => Just("<!--"),
            1 => Just("-->"),
            1 => Just("<"),
            1 => Just(">"),
            1 => Just("\""),
            1 => Just("'"),
            1 => Just("</"),
            1 => Just("<blockquotes>"),
            1 => Just("<optgroupx>"),
            1 => Just("<1>"),
            2 => Just("text "),
        ];
        // A run of open elements first, so the soup after it decides
        // whether the limit is passed, and where.
        (400..600usize, proptest::collection::vec(piece, 0..1500))
            .prop_map(|(open, pieces)| "<div>".repeat(open) + &pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 200,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_0512),
            ..ProptestConfig::default()
        })]
        /// The `memchr` scan cuts where the first one did, on any soup.
        #[test]
        fn the_fast_scan_agrees_with_the_first_one(html in soup()) {
            let cut = too_deep_at(&html);
            // The fast scan skips pages with too few `<` to count at all.
            let enough = html.bytes().filter(|&b| b == b'<').count() > MAX_DEPTH;
            let want = if enough { reference::too_deep_at(&html, MAX_DEPTH) } else { None };
            prop_assert_eq!(cut, want);
        }
    }

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
