//! Links carried by HTTP headers and header-like values: `Refresh` (and the
//! identical `<meta http-equiv=refresh content>`) and RFC 8288 `Link`.
//!
//! `Location` needs no parsing beyond URL resolution, so it has no function
//! here: the caller resolves it against the request URL.

use url::Url;

use super::rel::{self, Rel};
use super::{ExtractMode, Link, LinkKind};

/// Returns the target URL of a refresh value such as `5; url=/next`, as
/// written (unresolved), or `None` when the value only reloads the page
/// (`"30"`) or is malformed (no leading delay).
///
/// Follows the HTML standard's "shared declarative refresh steps": a delay
/// (digits and dots), then `;` or `,` or whitespace, then either
/// `url=<target>` (case-insensitive, optionally quoted) or the bare target.
pub fn refresh_target(value: &str) -> Option<String> {
    let s = value.trim_start_matches(is_space);
    let delay_len = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    if delay_len == 0 {
        return None;
    }
    let s = &s[delay_len..];
    if s.starts_with(|c: char| !is_space(c) && c != ';' && c != ',') {
        return None;
    }
    let s = s.trim_start_matches(is_space);
    let s = s
        .strip_prefix([';', ','])
        .unwrap_or(s)
        .trim_start_matches(is_space);
    let target = strip_url_equals(s).unwrap_or(s);
    let target = match target.chars().next() {
        Some(quote @ ('"' | '\'')) => {
            let inner = &target[1..];
            &inner[..inner.find(quote).unwrap_or(inner.len())]
        }
        _ => target,
    };
    let target = target.trim_end_matches(is_space);
    (!target.is_empty()).then(|| target.to_owned())
}

/// Strips a leading `url` `=` (case-insensitive, whitespace around `=`).
fn strip_url_equals(s: &str) -> Option<&str> {
    let head = s.get(..3)?;
    if !head.eq_ignore_ascii_case("url") {
        return None;
    }
    let rest = s[3..].trim_start_matches(is_space).strip_prefix('=')?;
    Some(rest.trim_start_matches(is_space))
}

/// Returns the target of every link in an RFC 8288 `Link` header value
/// (`<url>; rel=preload, <url2>; rel="next"`), as written, in order.
///
/// Links whose `rel` is only a connection hint (`preconnect`, `dns-prefetch`)
/// are left out, as for `<link>` elements: they name an origin to warm up,
/// not a resource. Commas inside quoted parameter values do not split links.
pub fn link_header_targets(value: &str) -> Vec<String> {
    link_header_entries(value)
        .into_iter()
        .filter(|(_, rel)| *rel != Rel::Hint)
        .map(|(target, _)| target)
        .collect()
}

/// The first target of a `Link` header value whose `rel` has the token `rel`
/// (any case), as written: `link_with_rel(v, "next")` is the next page of a
/// paginated API.
pub fn link_with_rel(value: &str, rel: &str) -> Option<String> {
    let mut rest = value;
    while let Some(open) = rest.find('<') {
        let after_open = &rest[open + 1..];
        let close = after_open.find('>')?;
        let target = after_open[..close].trim_matches(is_space);
        let (params, next) = split_params(&after_open[close + 1..]);
        let rels = rel_param(params);
        if rels
            .split_ascii_whitespace()
            .any(|r| r.eq_ignore_ascii_case(rel))
        {
            return Some(target.to_owned());
        }
        rest = next;
    }
    None
}

/// Every link of a `Link` header value with what its `rel` names.
pub(crate) fn link_header_entries(value: &str) -> Vec<(String, Rel)> {
    let mut entries = Vec::new();
    let mut rest = value;
    while let Some(open) = rest.find('<') {
        let after_open = &rest[open + 1..];
        let Some(close) = after_open.find('>') else {
            break;
        };
        let target = after_open[..close].trim_matches(is_space);
        let (params, next) = split_params(&after_open[close + 1..]);
        entries.push((target.to_owned(), rel::classify(&rel_param(params))));
        rest = next;
    }
    entries
}

/// Splits `; a=b; c="d,e", <next>` into the parameters of this link and the
/// text after the comma that ends it.
fn split_params(s: &str) -> (&str, &str) {
    let mut in_quotes = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_quotes => escaped = true,
            '"' => in_quotes = !in_quotes,
            ',' if !in_quotes => return (&s[..i], &s[i + 1..]),
            _ => {}
        }
    }
    (s, "")
}

/// The value of the `rel` parameter (empty without one).
fn rel_param(params: &str) -> String {
    params
        .split(';')
        .filter_map(|param| param.split_once('='))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("rel"))
        .map(|(_, value)| {
            value
                .trim_matches(|c: char| is_space(c) || c == '"')
                .to_owned()
        })
        .unwrap_or_default()
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0C' | '\r')
}

/// The links a response's headers carry: `Refresh` always (it is navigation),
/// `Link` targets of hyperlink relations (`rel=next`, …) always, other `Link`
/// targets in resources mode, resolved against `base`.
pub fn header_links<'a>(
    refresh: Option<&str>,
    link_values: impl Iterator<Item = &'a str>,
    base: &Url,
    mode: ExtractMode,
) -> Vec<Link> {
    let mut raws: Vec<(String, LinkKind)> = Vec::new();
    if let Some(target) = refresh.and_then(refresh_target) {
        raws.push((target, LinkKind::Navigation));
    }
    for v in link_values {
        for (target, rel) in link_header_entries(v) {
            match rel {
                Rel::Hyperlink => raws.push((target, LinkKind::Anchor)),
                Rel::Resource if mode == ExtractMode::Resources => {
                    raws.push((target, LinkKind::Resource))
                }
                Rel::Resource | Rel::Hint => {}
            }
        }
    }
    raws.into_iter()
        .map(|(raw, kind)| Link {
            url: base.join(raw.trim()).map_err(|e| e.to_string()),
            raw,
            kind,
            element: "header",
            attr: if kind == LinkKind::Navigation {
                "refresh"
            } else {
                "link"
            },
            at: 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_picked_by_its_relation() {
        let v = r#"</a?page=1>; rel="first", </a?x=1,2>; rel="prev next"; title="a, b""#;
        assert_eq!(link_with_rel(v, "next").as_deref(), Some("/a?x=1,2"));
        assert_eq!(link_with_rel(v, "FIRST").as_deref(), Some("/a?page=1"));
        assert_eq!(link_with_rel(v, "last"), None);
    }

    #[test]
    fn refresh_targets() {
        let cases: &[(&str, Option<&str>)] = &[
            ("5; url=/x", Some("/x")),
            ("0;URL='http://a.example/b c'", Some("http://a.example/b c")),
            ("0; url=\"/q\" trailing", Some("/q")),
            ("3,url=/comma", Some("/comma")),
            ("1 /bare", Some("/bare")),
            ("1; /bare-after-semicolon ", Some("/bare-after-semicolon")),
            ("0.5; Url = /spaced", Some("/spaced")),
            ("0; urlx=/y", Some("urlx=/y")), // not `url=`: the whole rest is the URL
            ("30", None),
            ("30;", None),
            ("url=/no-delay", None),
            ("5x; url=/bad-delay", None),
            ("", None),
            ("0; url=''", None),
        ];
        for (input, want) in cases {
            assert_eq!(refresh_target(input).as_deref(), *want, "input {input:?}");
        }
    }

    #[test]
    fn hyperlink_relations_in_link_headers_are_followed_in_every_mode() {
        let base = Url::parse("http://a.example/list?page=1").unwrap();
        let value =
            "<?page=2>; rel=\"next\", </s.css>; rel=stylesheet, <//cdn.example>; rel=preconnect";
        let kinds = |mode| -> Vec<(LinkKind, String)> {
            header_links(None, std::iter::once(value), &base, mode)
                .into_iter()
                .map(|l| (l.kind, l.url.unwrap().to_string()))
                .collect()
        };
        assert_eq!(
            kinds(ExtractMode::Pages),
            [(LinkKind::Anchor, "http://a.example/list?page=2".to_owned())]
        );
        assert_eq!(
            kinds(ExtractMode::Resources),
            [
                (LinkKind::Anchor, "http://a.example/list?page=2".to_owned()),
                (LinkKind::Resource, "http://a.example/s.css".to_owned())
            ]
        );
    }

    #[test]
    fn link_header_target_lists() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            (
                "<https://a.example/style.css>; rel=preload; as=style",
                &["https://a.example/style.css"],
            ),
            ("</p2>; rel=\"next\", </p0>; rel=\"prev\"", &["/p2", "/p0"]),
            ("</a>; title=\"x, y\"; rel=next, </b>", &["/a", "/b"]),
            (
                "<https://cdn.example>; rel=preconnect, </c.js>; rel=modulepreload",
                &["/c.js"],
            ),
            (
                "<https://cdn.example>; rel=\"dns-prefetch preconnect\"",
                &[],
            ),
            ("< /spaced >; rel=x", &["/spaced"]),
            ("<unterminated; rel=x", &[]),
            ("garbage without brackets", &[]),
        ];
        for (input, want) in cases {
            assert_eq!(link_header_targets(input), *want, "input {input:?}");
        }
    }
}
