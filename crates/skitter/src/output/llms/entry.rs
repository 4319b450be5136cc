//! What llms.txt keeps of each page until the crawl ends: its URL, depth, a
//! title and a one-line description, each capped, so the index costs a few
//! hundred bytes a page whatever the pages hold.

use url::Url;

use crate::content::{Block, BlockKind, Document};

/// The longest title kept, in characters.
const TITLE_CHARS: usize = 120;
/// The longest description kept, in characters.
const DESCRIPTION_CHARS: usize = 160;

/// One page of the index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) url: Url,
    pub(super) depth: u32,
    pub(super) title: String,
    pub(super) description: Option<String>,
}

impl Entry {
    /// The entry for `doc`, found at `url`.
    pub(super) fn new(url: &Url, depth: u32, doc: &Document) -> Entry {
        Entry {
            url: url.clone(),
            depth,
            title: title(url, doc),
            description: description(doc),
        }
    }
}

/// The page's title; else its first heading; else its URL's path.
pub(super) fn title(url: &Url, doc: &Document) -> String {
    let heading = || {
        doc.blocks
            .iter()
            .find(|b| matches!(b.kind, BlockKind::Heading(_)))
            .map(|b| b.text.clone())
    };
    let title = doc
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .or_else(heading)
        .map(|t| one_line(&t, TITLE_CHARS))
        .filter(|t| !t.is_empty());
    title.unwrap_or_else(|| url.path().to_string())
}

/// The description meta; else the first sentence of the first paragraph
/// that is more than a row of links.
fn description(doc: &Document) -> Option<String> {
    let first_sentence = || {
        let text = doc
            .blocks
            .iter()
            .filter(|b| matches!(b.kind, BlockKind::Paragraph | BlockKind::Other))
            .find(|b| !mostly_links(b))
            .map(|b| b.text.as_str())?;
        Some(sentence(text).to_string())
    };
    doc.description
        .clone()
        .filter(|d| !d.trim().is_empty())
        .or_else(first_sentence)
        .map(|d| one_line(&d, DESCRIPTION_CHARS))
        .filter(|d| !d.is_empty())
}

/// Whether most of a block's text is the text of its links (a menu, a row of
/// "related" links), judged on its Markdown: each `[text](target)` cut out.
fn mostly_links(block: &Block) -> bool {
    let md = block.markdown.as_str();
    let mut outside = 0;
    let mut at = 0;
    for link in &block.links {
        let (start, end) = (link.range.start, link.range.end);
        let Some(open) = md.get(..start).and_then(|before| before.rfind('[')) else {
            continue;
        };
        if open < at || end > md.len() {
            continue;
        }
        outside += md[at..open].split_whitespace().count();
        at = (end + 1).min(md.len());
    }
    if at == 0 {
        return false;
    }
    outside += md[at..].split_whitespace().count();
    outside * 2 < block.text.split_whitespace().count()
}

/// `text` up to the end of its first sentence (a `.`, `!` or `?` before
/// white space or the end).
fn sentence(text: &str) -> &str {
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        if matches!(c, '.' | '!' | '?' | '。' | '！' | '？') && end {
            return &text[..i + c.len_utf8()];
        }
    }
    text
}

/// `text` on one line, white space collapsed, cut to `max` characters at a
/// word boundary with an ellipsis.
pub(super) fn one_line(text: &str, max: usize) -> String {
    let mut out = String::new();
    for word in text.split_whitespace() {
        let room = max.saturating_sub(out.chars().count() + usize::from(!out.is_empty()));
        if word.chars().count() > room {
            if out.is_empty() {
                out.extend(word.chars().take(max.saturating_sub(1)));
            }
            out.push('…');
            return out;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::LinkSpan;

    fn para(text: &str) -> Block {
        Block {
            kind: BlockKind::Paragraph,
            markdown: text.into(),
            text: text.into(),
            links: Vec::new(),
        }
    }

    #[test]
    fn describes_by_meta_then_first_sentence() {
        let url = Url::parse("http://h/docs/a").unwrap();
        let mut doc = Document {
            blocks: vec![para("First one. Second one.")],
            ..Document::default()
        };
        let e = Entry::new(&url, 1, &doc);
        assert_eq!(e.title, "/docs/a");
        assert_eq!(e.description.as_deref(), Some("First one."));
        doc.title = Some("  A\n title ".into());
        doc.description = Some("The meta.".into());
        let e = Entry::new(&url, 1, &doc);
        assert_eq!(e.title, "A title");
        assert_eq!(e.description.as_deref(), Some("The meta."));
        assert_eq!(sentence("v1.2 is out! Yes"), "v1.2 is out!");
    }

    #[test]
    fn a_row_of_links_describes_nothing() {
        let md = "[Home](http://h/) [Docs](http://h/docs) and";
        let links = ["http://h/", "http://h/docs"]
            .iter()
            .map(|u| {
                let start = md.find(u).unwrap();
                LinkSpan {
                    range: start..start + u.len(),
                    url: Url::parse(u).unwrap(),
                }
            })
            .collect();
        let menu = Block {
            kind: BlockKind::Paragraph,
            markdown: md.into(),
            text: "Home Docs and".into(),
            links,
        };
        assert!(mostly_links(&menu));
        assert!(!mostly_links(&para("Plain words here.")));
        let doc = Document {
            blocks: vec![menu, para("The real text. More.")],
            ..Document::default()
        };
        assert_eq!(description(&doc).as_deref(), Some("The real text."));
    }

    #[test]
    fn caps_at_a_word() {
        assert_eq!(one_line("aaa bbb ccc", 7), "aaa bbb…");
        assert_eq!(one_line("aaa bbb", 7), "aaa bbb");
        assert_eq!(one_line("abcdefghij", 5), "abcd…");
        assert!(
            one_line(&"word ".repeat(100), DESCRIPTION_CHARS)
                .chars()
                .count()
                <= 161
        );
    }
}
