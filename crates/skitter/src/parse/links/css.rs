//! CSS link scanning: `url(...)` and `@import` targets in stylesheets,
//! `<style>` elements and `style` attributes.
//!
//! A small hand-written scanner, not a CSS parser and not a regex: it walks the
//! text once, skipping comments and ordinary strings (so `content: "url(x)"`
//! is not a link), and decodes CSS escapes in the URLs it returns. That is the
//! part of CSS tokenization that decides what a URL is; selectors and values
//! are irrelevant to a crawler. `image-set()` with bare strings is not read.

use super::{Link, LinkKind};

/// Returns the links of a stylesheet, resolved against `base` (the
/// stylesheet's own URL for a file, the document base for inline CSS).
///
/// Finds `url(x)`, `url('x')`, `url("x")`, `@import "x"` and
/// `@import url(x)`; ignores `/* comments */`. Each link has kind
/// [`LinkKind::Resource`], element `""`, attr `"url()"` or `"@import"`, and
/// as [`Link::at`] the byte offset in `css` of its construct (where a link
/// checker says it is).
pub fn extract_css(css: &str, base: &url::Url) -> Vec<Link> {
    let mut links = Vec::new();
    scan(css, |raw, attr, at| {
        links.push(Link::resolve(raw, base, (LinkKind::Resource, "", attr), at))
    });
    links
}

/// Calls `found(raw, construct, at)` for each URL in `css`, in order, `at`
/// the byte offset of its `url(` or `@import`; empty URLs are skipped (they
/// refer to the stylesheet itself). One pass, no recursion: the cost is
/// linear in the text whatever it holds.
pub(super) fn scan(css: &str, mut found: impl FnMut(String, &'static str, usize)) {
    let bytes = css.as_bytes();
    let mut pos = 0;
    while pos < bytes.len() {
        pos = match bytes[pos] {
            b'/' if bytes.get(pos + 1) == Some(&b'*') => skip_comment(css, pos + 2),
            b'"' | b'\'' => read_string(css, pos).1,
            b'\\' => pos + 1 + css[pos + 1..].chars().next().map_or(0, char::len_utf8),
            b'@' if starts_with_ignore_case(&css[pos + 1..], "import") => {
                let after = skip_space_and_comments(css, pos + 7);
                match bytes.get(after) {
                    Some(b'"' | b'\'') => {
                        let (value, next) = read_string(css, after);
                        emit(value, ("@import", pos), &mut found);
                        next
                    }
                    // `@import url(...)` is picked up by the url( branch next.
                    _ => after,
                }
            }
            b'u' | b'U' if starts_url(css, pos) => {
                let (value, next) = read_url(css, pos + 4);
                emit(value, ("url()", pos), &mut found);
                next
            }
            _ => pos + 1,
        };
    }
}

fn emit(
    value: String,
    (construct, at): (&'static str, usize),
    found: &mut impl FnMut(String, &'static str, usize),
) {
    let trimmed = value.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\x0C' | '\r'));
    if !trimmed.is_empty() {
        let raw = if trimmed.len() == value.len() {
            value
        } else {
            trimmed.to_owned()
        };
        found(raw, construct, at);
    }
}

/// True at the start of a `url(` function token: not the tail of a longer
/// identifier such as `myurl(`.
fn starts_url(css: &str, pos: usize) -> bool {
    let preceded_by_ident = pos > 0 && {
        let b = css.as_bytes()[pos - 1];
        b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b >= 0x80
    };
    !preceded_by_ident && starts_with_ignore_case(&css[pos..], "url(")
}

/// Reads a `url(` argument starting after the parenthesis: either a quoted
/// string or an unquoted URL token. Returns the decoded value and the position
/// after the closing parenthesis.
fn read_url(css: &str, start: usize) -> (String, usize) {
    let pos = skip_space(css, start);
    if matches!(css.as_bytes().get(pos), Some(b'"' | b'\'')) {
        let (value, after) = read_string(css, pos);
        let close = css[after..].find(')').map_or(css.len(), |i| after + i + 1);
        return (value, close);
    }
    let mut value = String::new();
    let mut chars = css[pos..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            ')' => return (value, pos + i + 1),
            '\\' => {
                let (decoded, used) = read_escape(&css[pos + i + 1..]);
                value.extend(decoded);
                for _ in 0..css[pos + i + 1..pos + i + 1 + used].chars().count() {
                    chars.next();
                }
            }
            c => value.push(c),
        }
    }
    (value, css.len())
}

/// Reads a quoted string starting at its opening quote; returns the decoded
/// contents and the position after the closing quote. An unescaped newline
/// ends a string, as in CSS tokenization.
fn read_string(css: &str, start: usize) -> (String, usize) {
    let quote = css.as_bytes()[start] as char;
    let mut value = String::new();
    let body = &css[start + 1..];
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c == quote => return (value, start + 1 + i + 1),
            '\n' => return (value, start + 1 + i),
            '\\' => {
                let (decoded, used) = read_escape(&body[i + 1..]);
                value.extend(decoded);
                for _ in 0..body[i + 1..i + 1 + used].chars().count() {
                    chars.next();
                }
            }
            c => value.push(c),
        }
    }
    (value, css.len())
}

/// Decodes the escape after a backslash: up to six hex digits (plus one
/// optional whitespace), an escaped newline (a line continuation: nothing),
/// or any other character as itself. Returns the character and the bytes used.
fn read_escape(s: &str) -> (Option<char>, usize) {
    let hex_len = s.bytes().take(6).take_while(u8::is_ascii_hexdigit).count();
    if hex_len > 0 {
        let code = u32::from_str_radix(&s[..hex_len], 16).unwrap_or(0);
        let c = char::from_u32(code)
            .filter(|&c| c != '\0')
            .unwrap_or('\u{FFFD}');
        let space = s[hex_len..]
            .chars()
            .next()
            .filter(|c| c.is_ascii_whitespace())
            .map_or(0, char::len_utf8);
        return (Some(c), hex_len + space);
    }
    match s.chars().next() {
        None => (Some('\u{FFFD}'), 0),
        Some('\n') => (None, 1),
        Some(c) => (Some(c), c.len_utf8()),
    }
}

fn skip_comment(css: &str, from: usize) -> usize {
    css[from..].find("*/").map_or(css.len(), |i| from + i + 2)
}

fn skip_space(css: &str, mut pos: usize) -> usize {
    while css.as_bytes().get(pos).is_some_and(u8::is_ascii_whitespace) {
        pos += 1;
    }
    pos
}

fn skip_space_and_comments(css: &str, mut pos: usize) -> usize {
    loop {
        pos = skip_space(css, pos);
        if css[pos..].starts_with("/*") {
            pos = skip_comment(css, pos + 2);
        } else {
            return pos;
        }
    }
}

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw_links(css: &str) -> Vec<(String, &'static str)> {
        let mut out = Vec::new();
        scan(css, |raw, construct, _| out.push((raw, construct)));
        out
    }

    #[test]
    fn urls_and_imports_are_found() {
        let cases: &[(&str, &[(&str, &str)])] = &[
            ("a{background:url(x.png)}", &[("x.png", "url()")]),
            ("a{background:URL( 'y.png' )}", &[("y.png", "url()")]),
            ("a{background:url(\"z.png\")}", &[("z.png", "url()")]),
            ("@import \"a.css\";", &[("a.css", "@import")]),
            ("@IMPORT 'b.css' screen;", &[("b.css", "@import")]),
            ("@import url(c.css);", &[("c.css", "url()")]),
            ("@import /* why */ \"d.css\";", &[("d.css", "@import")]),
            (
                "/* url(no.png) */ b{x:url(yes.png)}",
                &[("yes.png", "url()")],
            ),
            ("a{content:\"url(no.png)\"}", &[]),
            ("a{b:myurl(no.png)}", &[]),
            ("a{b:url()} c{d:url('')}", &[]),
            ("a{b:url(  spaced.png  )}", &[("spaced.png", "url()")]),
            ("a{b:url(a\\)b.png)}", &[("a)b.png", "url()")]),
            ("a{b:url('q\\'uote.png')}", &[("q'uote.png", "url()")]),
            ("a{b:url(\\41 bc.png)}", &[("Abc.png", "url()")]),
            ("a{b:url('line\\\ncont.png')}", &[("linecont.png", "url()")]),
            (
                "a{b:url(data:image/png;base64,AAA=)}",
                &[("data:image/png;base64,AAA=", "url()")],
            ),
            (
                "@font-face{src:url(f.woff2) format('woff2'),url(f.woff)}",
                &[("f.woff2", "url()"), ("f.woff", "url()")],
            ),
            ("a{b:url(unterminated", &[("unterminated", "url()")]),
            ("a{b:url('unterminated", &[("unterminated", "url()")]),
            ("/* unterminated comment url(x)", &[]),
            ("é{b:url(é.png)}", &[("é.png", "url()")]),
            ("a{b:url(\\", &[("\u{FFFD}", "url()")]),
        ];
        for (css, want) in cases {
            let want: Vec<(String, &str)> = want.iter().map(|(r, c)| (r.to_string(), *c)).collect();
            assert_eq!(raw_links(css), want, "css {css:?}");
        }
    }

    #[test]
    fn each_link_points_at_its_construct() {
        let base = url::Url::parse("http://example.com/s.css").unwrap();
        let css = "a{}\n@import 'x.css';\nb{c:url(y.png)}";
        let at: Vec<usize> = extract_css(css, &base).iter().map(|l| l.at).collect();
        assert_eq!(at, [4, 25]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 512,
            rng_seed: proptest::test_runner::RngSeed::Fixed(37),
            ..Default::default()
        })]
        /// Any text: no panic, and each link's offset is in the text, on
        /// the `url(` or `@import` it came from.
        #[test]
        fn any_text_is_scanned_with_offsets_on_their_constructs(
            css in "(?s)(url\\(|@import|[\"'()\\\\/*uU@ a-z\n]|é){0,200}"
        ) {
            let mut seen = 0;
            scan(&css, |_, construct, at| {
                seen += 1;
                let head = css.get(at..).unwrap_or("");
                let want = if construct == "@import" { "@import" } else { "url(" };
                assert!(starts_with_ignore_case(head, want), "{construct} at {at} of {css:?}");
            });
            proptest::prop_assert!(seen <= css.len());
        }
    }

    #[test]
    fn links_resolve_against_the_stylesheet() {
        let base = url::Url::parse("http://example.com/css/site.css").unwrap();
        let links = extract_css(
            "@import 'print.css'; a{b:url(../img/x.png)} c{d:url(http://[bad/)}",
            &base,
        );
        let got: Vec<_> = links
            .iter()
            .map(|l| (l.attr, l.url.as_ref().map(url::Url::as_str).ok()))
            .collect();
        assert_eq!(
            got,
            [
                ("@import", Some("http://example.com/css/print.css")),
                ("url()", Some("http://example.com/img/x.png")),
                ("url()", None),
            ]
        );
        assert!(
            links
                .iter()
                .all(|l| l.kind == LinkKind::Resource && l.element.is_empty())
        );
    }
}
