//! A page file's front matter: YAML between `---` lines, before the Markdown.
//!
//! ```text
//! ---
//! url: "https://example.org/post"
//! title: "A post"
//! fetched: "2026-01-02T03:04:05.678Z"
//! lang: "en"
//! canonical: "https://example.org/post"
//! description: "What the post is about"
//! ---
//! ```
//!
//! `url` and `fetched` (RFC 3339, UTC) are always there, the others when the
//! page has them. Every value is a JSON string, which is also a YAML
//! double-quoted scalar; the characters YAML does not allow raw in one (C1
//! controls, DEL, line and paragraph separators, the byte-order mark) are
//! written as `\uXXXX` escapes too, so any YAML or JSON-aware reader gets
//! the text back exactly.

use chrono::{DateTime, SecondsFormat, Utc};
use url::Url;

use crate::content::Document;

/// The front matter of the page at `url`, fetched at `fetched`, with a
/// trailing blank line.
pub fn front_matter(url: &Url, fetched: DateTime<Utc>, doc: &Document) -> String {
    let fetched = fetched.to_rfc3339_opts(SecondsFormat::Millis, true);
    let canonical = doc.canonical.as_ref().map(Url::as_str);
    let fields = [
        ("url", Some(url.as_str())),
        ("title", doc.title.as_deref()),
        ("fetched", Some(fetched.as_str())),
        ("lang", doc.lang.as_deref()),
        ("canonical", canonical),
        ("description", doc.description.as_deref()),
    ];
    let mut out = String::from("---\n");
    for (key, value) in fields {
        if let Some(value) = value {
            out.push_str(key);
            out.push_str(": ");
            out.push_str(&quoted(value));
            out.push('\n');
        }
    }
    out.push_str("---\n\n");
    out
}

/// Where the front matter of a file's text ends (just past its closing
/// `---` line and the blank line after it), when it has one.
pub fn end_of(text: &str) -> Option<usize> {
    let rest = text.strip_prefix("---\n")?;
    let close = rest.find("\n---\n")? + "---\n".len() + "\n---\n".len();
    Some(if text[close..].starts_with('\n') {
        close + 1
    } else {
        close
    })
}

/// `value` as a JSON string that is also a valid YAML double-quoted scalar.
fn quoted(value: &str) -> String {
    let json = serde_json::to_string(value).unwrap_or_else(|_| "\"\"".into());
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        let u = u32::from(c);
        if (0x7f..=0x9f).contains(&u) || matches!(u, 0x2028 | 0x2029 | 0xfeff | 0xfffe | 0xffff) {
            out.push_str(&format!("\\u{u:04x}"));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_quoted_for_json_and_yaml() {
        let cases = [
            ("plain", r#""plain""#),
            ("say \"hi\"\\", r#""say \"hi\"\\""#),
            ("two\nlines\ttab", r#""two\nlines\ttab""#),
            ("a: b # c - [d] {e} 'f'", r#""a: b # c - [d] {e} 'f'""#),
            (
                "nel\u{85}ls\u{2028}bom\u{feff}",
                r#""nel\u0085ls\u2028bom\ufeff""#,
            ),
            ("été", r#""été""#),
        ];
        for (given, want) in cases {
            let q = quoted(given);
            assert_eq!(q, want, "{given:?}");
            let back: String = serde_json::from_str(&q).unwrap();
            assert_eq!(back, given);
        }
    }

    #[test]
    fn only_present_fields_are_written_and_the_end_is_found() {
        let url = Url::parse("http://h.test/p").unwrap();
        let at = DateTime::parse_from_rfc3339("2026-01-02T03:04:05.678Z")
            .unwrap()
            .with_timezone(&Utc);
        let doc = Document {
            title: Some("T".into()),
            lang: Some("fr".into()),
            ..Document::default()
        };
        let front = front_matter(&url, at, &doc);
        assert_eq!(
            front,
            "---\nurl: \"http://h.test/p\"\ntitle: \"T\"\nfetched: \"2026-01-02T03:04:05.678Z\"\nlang: \"fr\"\n---\n\n"
        );
        let text = format!("{front}# Body\n");
        assert_eq!(&text[end_of(&text).unwrap()..], "# Body\n");
        assert_eq!(end_of("# no front matter"), None);
    }
}
