//! Links and anchors of a Markdown file, for checking a docs tree before it
//! is built or deployed: inline links and images (`[text](dest "title")`,
//! `![alt](dest)`), autolinks (`<https://…>`), reference definitions
//! (`[name]: dest`), and the `href`/`src` of inline HTML (read by the HTML
//! pass); anchors are the headings' slugs as GitHub and most generators make
//! them, and the `id`s and `<a name>`s of inline HTML.
//!
//! A line scanner, not a full CommonMark parser: fenced and indented code
//! blocks and code spans are skipped, which is what keeps example links out;
//! nesting of brackets in link text is followed one level deep. Each line is
//! read once, so the work is linear in the file.

use url::Url;

use super::anchored::{AnchoredDocument, MAX_ANCHOR_LEN};
use super::{HtmlDocument, Link, LinkKind, extract_anchored};

/// Reads `text` (a Markdown file at `page_url`) for at most `max_links`
/// links and `max_anchors` anchors.
pub fn extract_markdown(
    text: &str,
    page_url: &Url,
    max_links: usize,
    max_anchors: usize,
) -> AnchoredDocument {
    let mut links = Vec::new();
    let mut lines = Vec::new();
    let mut anchors = Vec::new();
    let (mut cut, mut anchors_cut) = (0u64, 0u64);
    let mut fence: Option<&str> = None;
    let mut html = String::new();
    let mut html_lines = Vec::new();
    let mut slugs = std::collections::HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let number = u32::try_from(n + 1).unwrap_or(u32::MAX);
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
            continue;
        }
        if line.starts_with("    ") || line.starts_with('\t') {
            continue;
        }
        if let Some(heading) = heading_text(trimmed) {
            let slug = unique(slugify(heading), &mut slugs);
            if anchors.len() < max_anchors && slug.len() <= MAX_ANCHOR_LEN {
                anchors.push(slug);
            } else {
                anchors_cut += 1;
            }
        }
        if line.contains('<') {
            html.push_str(line);
            html.push('\n');
            html_lines.push(number);
        }
        for (raw, element, attr) in line_links(line) {
            if links.len() >= max_links {
                cut += 1;
                continue;
            }
            let url = page_url.join(&raw).map_err(|e| e.to_string());
            links.push(Link {
                raw,
                url,
                kind: if element == "img" {
                    LinkKind::Resource
                } else {
                    LinkKind::Anchor
                },
                element,
                attr,
                at: 0,
            });
            lines.push(number);
        }
    }
    // Inline HTML, each line as its own line of a small document.
    if !html.is_empty() {
        let room = max_links.saturating_sub(links.len()).max(1);
        let anchors_left = max_anchors.saturating_sub(anchors.len());
        let inner = extract_anchored(html.as_bytes(), Some("utf-8"), page_url, room, anchors_left);
        for (link, line) in inner.doc.links.into_iter().zip(inner.lines) {
            if links.len() >= max_links {
                cut += 1;
                continue;
            }
            let index = usize::try_from(line).unwrap_or(1).saturating_sub(1);
            lines.push(html_lines.get(index).copied().unwrap_or(0));
            links.push(link);
        }
        anchors.extend(inner.anchors);
        anchors_cut += inner.anchors_cut;
    }
    AnchoredDocument {
        doc: HtmlDocument {
            links,
            charset: "UTF-8",
            had_decode_errors: false,
            base: page_url.clone(),
            cut,
        },
        lines,
        anchors,
        anchors_cut,
    }
}

/// The text of an ATX heading (`## Title ##`), if the line is one.
fn heading_text(line: &str) -> Option<&str> {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    if hashes == 0 || hashes > 6 {
        return None;
    }
    let rest = &line[hashes..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    Some(rest.trim().trim_end_matches('#').trim_end())
}

/// A heading's anchor as GitHub makes it: lower case, punctuation other than
/// `-` and `_` dropped, spaces made `-`.
pub fn slugify(heading: &str) -> String {
    let mut slug = String::with_capacity(heading.len());
    for c in heading.chars() {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            slug.extend(c.to_lowercase());
        } else if c == ' ' {
            slug.push('-');
        }
    }
    slug
}

/// `slug`, or `slug-1`, `slug-2`… for its later repeats.
fn unique(slug: String, seen: &mut std::collections::HashMap<String, u32>) -> String {
    let n = seen.entry(slug.clone()).or_insert(0);
    let out = if *n == 0 { slug } else { format!("{slug}-{n}") };
    *n += 1;
    out
}

/// The links of one line outside code spans: (destination, element, attribute).
fn line_links(line: &str) -> Vec<(String, &'static str, &'static str)> {
    let mut out = Vec::new();
    let trimmed = line.trim_start();
    // A reference definition: `[name]: dest "title"`.
    if trimmed.starts_with('[')
        && let Some(close) = trimmed.find("]:")
        && !trimmed[..close].contains('`')
    {
        if let Some(dest) = destination(trimmed[close + 2..].trim_start()) {
            out.push((dest, "a", "reference"));
        }
        return out;
    }
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut in_code = false;
    while i < bytes.len() {
        match bytes[i] {
            b'`' => in_code = !in_code,
            b']' if !in_code && bytes.get(i + 1) == Some(&b'(') => {
                let image = line[..i]
                    .rfind('[')
                    .is_some_and(|open| open > 0 && bytes[open - 1] == b'!');
                let rest = &line[i + 2..];
                if let Some(end) = closing_paren(rest) {
                    if let Some(dest) = destination(&rest[..end]) {
                        let (element, attr) = if image { ("img", "src") } else { ("a", "href") };
                        out.push((dest, element, attr));
                    }
                    i += 2 + end;
                }
            }
            b'<' if !in_code => {
                let rest = &line[i + 1..];
                if let Some(end) = rest.find('>') {
                    let inner = &rest[..end];
                    if (inner.starts_with("http://") || inner.starts_with("https://"))
                        && !inner.contains(char::is_whitespace)
                    {
                        out.push((inner.to_owned(), "a", "autolink"));
                        i += 1 + end;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Where the `)` closing a link destination is, one level of parentheses
/// inside it allowed.
fn closing_paren(text: &str) -> Option<usize> {
    let mut depth = 0u32;
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' if depth == 0 => return Some(i),
            b')' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// A link destination without its title: `<dest>` or up to the first space.
fn destination(text: &str) -> Option<String> {
    let text = text.trim();
    let dest = match text.strip_prefix('<') {
        Some(rest) => &rest[..rest.find('>')?],
        None => text.split_whitespace().next()?,
    };
    (!dest.is_empty()).then(|| dest.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_lines_and_heading_anchors() {
        let text = "# Install skitter\n\nSee [the guide](guide.md#first-steps \"Guide\") and \
                    ![logo](img/logo.png).\n\n```\n[not a link](x.md)\n```\n    [code](y.md)\n\
                    Use `[code](z.md)` or <https://example.org/a>.\n[ref]: ../ref.md\n\
                    ## Install skitter\n<a href=\"raw.html\" id=\"raw\">raw</a>\n";
        let url = Url::parse("http://example.org/docs/index.md").unwrap();
        let doc = extract_markdown(text, &url, 100, 100);
        let got: Vec<(&str, &str, u32)> = doc
            .doc
            .links
            .iter()
            .zip(&doc.lines)
            .map(|(l, &n)| (l.raw.as_str(), l.element, n))
            .collect();
        assert_eq!(
            got,
            [
                ("guide.md#first-steps", "a", 3),
                ("img/logo.png", "img", 3),
                ("https://example.org/a", "a", 9),
                ("../ref.md", "a", 10),
                ("raw.html", "a", 12),
            ]
        );
        assert_eq!(doc.anchors, ["install-skitter", "install-skitter-1", "raw"]);
        assert_eq!(slugify("What's new in 2.0?"), "whats-new-in-20");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 256,
            rng_seed: proptest::test_runner::RngSeed::Fixed(37),
            ..Default::default()
        })]
        #[test]
        fn any_text_is_read_within_its_caps(text in "(?s)[\\[\\]()<>`#!a-z:/. \\n-]{0,400}") {
            let url = Url::parse("http://example.org/a.md").unwrap();
            let doc = extract_markdown(&text, &url, 5, 3);
            proptest::prop_assert!(doc.doc.links.len() <= 5);
            proptest::prop_assert_eq!(doc.doc.links.len(), doc.lines.len());
            proptest::prop_assert!(doc.anchors.len() <= 3);
        }
    }
}
