//! Character encoding of HTML bodies: which encoding to decode with, and the
//! decoding itself.
//!
//! The order is the WHATWG one, simplified: a byte order mark wins, then the
//! `charset` parameter of the `Content-Type` header, then a `<meta>`
//! declaration found by a prescan of the first 1024 bytes, then UTF-8. Bytes
//! that do not decode become U+FFFD; decoding never fails, so a page with a
//! broken byte still yields its links.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252, X_USER_DEFINED};

/// How far into the body the `<meta>` prescan looks, as in the HTML standard.
const PRESCAN_LIMIT: usize = 1024;

/// Decodes an HTML body to text.
///
/// The encoding is chosen by BOM, else `content_type_charset` (the `charset`
/// parameter of the `Content-Type` header, as an encoding label), else a
/// `<meta charset>` or `<meta http-equiv=content-type>` in the first 1024
/// bytes, else UTF-8. Unknown labels are ignored and the next source is
/// tried. Returns the text (borrowed from `body` when it is valid UTF-8 with
/// no BOM), the encoding used, and whether any bytes were malformed (they are
/// replaced by U+FFFD).
pub fn decode_html<'a>(
    body: &'a [u8],
    content_type_charset: Option<&str>,
) -> (Cow<'a, str>, &'static Encoding, bool) {
    let (encoding, bom_len) = match Encoding::for_bom(body) {
        Some(found) => found,
        None => (choose_without_bom(body, content_type_charset), 0),
    };
    let (text, had_errors) = encoding.decode_without_bom_handling(&body[bom_len..]);
    (text, encoding, had_errors)
}

/// Picks the encoding when there is no BOM: header, then meta prescan, then UTF-8.
fn choose_without_bom(body: &[u8], content_type_charset: Option<&str>) -> &'static Encoding {
    let declared =
        content_type_charset.and_then(|label| Encoding::for_label(label.trim().as_bytes()));
    declared
        .or_else(|| prescan_meta(&body[..body.len().min(PRESCAN_LIMIT)]))
        .unwrap_or(UTF_8)
}

/// Finds the encoding declared by the first `<meta>` that declares one.
///
/// A simplified "prescan a byte stream to determine its encoding": comments
/// are skipped, other tags are skipped whole, and `<meta>` attributes are
/// read with HTML's attribute syntax (quoted or unquoted values).
fn prescan_meta(bytes: &[u8]) -> Option<&'static Encoding> {
    let mut pos = 0;
    while pos < bytes.len() {
        let rest = &bytes[pos..];
        if rest.starts_with(b"<!--") {
            pos += find(&rest[4..], b"-->").map_or(rest.len(), |end| end + 4 + 3);
        } else if starts_with_ignore_case(rest, b"<meta")
            && rest.get(5).is_some_and(|&b| is_space(b) || b == b'/')
        {
            let (found, consumed) = meta_declaration(&rest[5..]);
            if found.is_some() {
                return found.map(for_meta);
            }
            pos += 5 + consumed;
        } else {
            pos += 1;
        }
    }
    None
}

/// Reads the attributes of one `<meta>` tag; returns the declared encoding and
/// how many bytes the tag took.
fn meta_declaration(tag: &[u8]) -> (Option<&'static Encoding>, usize) {
    let mut pos = 0;
    let mut charset = None;
    let mut http_equiv_content_type = false;
    let mut content_charset = None;
    while let Some((name, value, next)) = next_attribute(tag, pos) {
        pos = next;
        if name.eq_ignore_ascii_case(b"charset") && charset.is_none() {
            charset = Some(Encoding::for_label(value));
        } else if name.eq_ignore_ascii_case(b"http-equiv") {
            http_equiv_content_type |= value.eq_ignore_ascii_case(b"content-type");
        } else if name.eq_ignore_ascii_case(b"content") && content_charset.is_none() {
            content_charset = Some(charset_from_content(value));
        }
    }
    let found = match (charset, http_equiv_content_type, content_charset) {
        (Some(label), _, _) => label,
        (None, true, Some(label)) => label,
        _ => None,
    };
    (found, pos)
}

/// Parses the next `name[=value]` attribute starting at `pos`; `None` at `>`
/// or the end of input. Returns the name, the value and the position after it.
fn next_attribute(tag: &[u8], mut pos: usize) -> Option<(&[u8], &[u8], usize)> {
    while pos < tag.len() && (is_space(tag[pos]) || tag[pos] == b'/') {
        pos += 1;
    }
    if pos >= tag.len() || tag[pos] == b'>' {
        return None;
    }
    let name_start = pos;
    while pos < tag.len() && !is_space(tag[pos]) && !matches!(tag[pos], b'=' | b'>' | b'/') {
        pos += 1;
    }
    let name = &tag[name_start..pos];
    while pos < tag.len() && is_space(tag[pos]) {
        pos += 1;
    }
    if tag.get(pos) != Some(&b'=') {
        return Some((name, &[], pos));
    }
    pos += 1;
    while pos < tag.len() && is_space(tag[pos]) {
        pos += 1;
    }
    let (value, next) = match tag.get(pos) {
        Some(&quote @ (b'"' | b'\'')) => {
            let start = pos + 1;
            let end = tag[start..]
                .iter()
                .position(|&b| b == quote)
                .map_or(tag.len(), |i| start + i);
            (&tag[start..end], (end + 1).min(tag.len()))
        }
        _ => {
            let start = pos;
            while pos < tag.len() && !is_space(tag[pos]) && tag[pos] != b'>' {
                pos += 1;
            }
            (&tag[start..pos], pos)
        }
    };
    Some((name, value, next))
}

/// "Extract a character encoding from a meta element": the `charset=` inside
/// a `content` attribute such as `text/html; charset=windows-1251`.
fn charset_from_content(content: &[u8]) -> Option<&'static Encoding> {
    let mut pos = 0;
    loop {
        let at = pos + find_ignore_case(&content[pos..], b"charset")?;
        let mut i = at + b"charset".len();
        while i < content.len() && is_space(content[i]) {
            i += 1;
        }
        if content.get(i) != Some(&b'=') {
            pos = i;
            continue;
        }
        i += 1;
        while i < content.len() && is_space(content[i]) {
            i += 1;
        }
        let value = match content.get(i) {
            Some(&quote @ (b'"' | b'\'')) => {
                let rest = &content[i + 1..];
                &rest[..rest.iter().position(|&b| b == quote)?]
            }
            _ => {
                let rest = &content[i..];
                let end = rest
                    .iter()
                    .position(|&b| is_space(b) || b == b';')
                    .unwrap_or(rest.len());
                &rest[..end]
            }
        };
        return Encoding::for_label(value);
    }
}

/// A document cannot really be UTF-16 if its `<meta>` was readable as ASCII,
/// and `x-user-defined` is a legacy alias: the standard maps both.
fn for_meta(encoding: &'static Encoding) -> &'static Encoding {
    if encoding == UTF_16LE || encoding == UTF_16BE {
        UTF_8
    } else if encoding == X_USER_DEFINED {
        WINDOWS_1252
    } else {
        encoding
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0C' | b'\r')
}

fn starts_with_ignore_case(haystack: &[u8], prefix: &[u8]) -> bool {
    haystack.len() >= prefix.len() && haystack[..prefix.len()].eq_ignore_ascii_case(prefix)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_is_chosen_in_standard_order() {
        let cases: [(&[u8], Option<&str>, &str); 14] = [
            (b"<p>plain", None, "UTF-8"),
            (b"<p>plain", Some("iso-8859-1"), "windows-1252"),
            (b"<p>plain", Some(" Shift_JIS "), "Shift_JIS"),
            (b"<p>plain", Some("no-such-charset"), "UTF-8"),
            (
                b"\xEF\xBB\xBF<meta charset=koi8-r>",
                Some("latin1"),
                "UTF-8",
            ),
            (b"\xFF\xFE<\0p\0", Some("latin1"), "UTF-16LE"),
            (b"<meta charset=koi8-r>", None, "KOI8-R"),
            (b"<META CHARSET='windows-1251'>", None, "windows-1251"),
            (b"<meta charset=koi8-r>", Some("gbk"), "GBK"),
            (
                b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=euc-jp\">",
                None,
                "EUC-JP",
            ),
            (
                b"<meta content='text/html;charset=\"big5\"' http-equiv=content-type>",
                None,
                "Big5",
            ),
            (b"<meta content='text/html; charset=big5'>", None, "UTF-8"), // no http-equiv
            (
                b"<!-- <meta charset=koi8-r> --><meta charset=iso-8859-2>",
                None,
                "ISO-8859-2",
            ),
            (b"<meta charset=utf-16le>", None, "UTF-8"),
        ];
        for (body, header, want) in cases {
            let (_, encoding, _) = decode_html(body, header);
            assert_eq!(
                encoding.name(),
                want,
                "body {:?} header {header:?}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn meta_after_the_first_1024_bytes_is_not_seen() {
        let mut body = vec![b' '; PRESCAN_LIMIT];
        body.extend_from_slice(b"<meta charset=koi8-r>");
        assert_eq!(decode_html(&body, None).1, UTF_8);
    }

    #[test]
    fn bad_bytes_become_replacement_characters() {
        let cases: [(&[u8], Option<&str>, &str, bool); 4] = [
            (b"caf\xE9", None, "caf\u{FFFD}", true),
            (b"caf\xE9", Some("windows-1252"), "caf\u{E9}", false),
            (b"\xC3\xA9t\xC3\xA9", None, "\u{E9}t\u{E9}", false),
            (b"<meta charset=\"", None, "<meta charset=\"", false), // unterminated tag
        ];
        for (body, header, want, want_errors) in cases {
            let (text, _, errors) = decode_html(body, header);
            assert_eq!((text.as_ref(), errors), (want, want_errors));
        }
    }

    #[test]
    fn valid_utf8_is_borrowed() {
        let (text, _, _) = decode_html(b"<a href=x>", None);
        assert!(matches!(text, Cow::Borrowed(_)));
    }
}
