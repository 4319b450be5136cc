//! Code: the text of `<pre>` blocks and inline `<code>`, their language
//! (from the class names Sphinx, rustdoc, highlight.js and Prism write) and
//! fences long enough for what they hold.

use super::tree::{Tag, Tree};

/// The text of the code block `i` as written: text nodes in order, `<br>`
/// and block elements (one per line in some highlighters) as line breaks.
/// A block ends its line as well as starting one, as a browser shows it
/// (rustdoc puts an attribute in a `div` before the declaration it belongs
/// to: `#[repr(C)]`, then `pub struct stat {`), unless the text after it
/// starts with its own line break.
pub(crate) fn block_text(tree: &Tree<'_>, keep: &[bool], i: usize) -> String {
    let mut out = String::new();
    // Where the blocks open around `j` end; as deep as the tree, which the
    // parser caps.
    let mut open: Vec<usize> = Vec::new();
    // A block ended since the last text: the next text starts a line.
    let mut ended = false;
    let mut j = i + 1;
    while j < tree.end(i) {
        while open.last().is_some_and(|&end| end <= j) {
            open.pop();
            ended = true;
        }
        if !keep[j] {
            j = tree.end(j);
            continue;
        }
        match tree.tag(j) {
            Tag::Text => {
                let text = tree.text(j).unwrap_or("");
                if ended && !text.is_empty() {
                    if !text.starts_with(['\n', '\r']) {
                        break_line(&mut out);
                    }
                    ended = false;
                }
                out.push_str(text);
            }
            Tag::Br => {
                out.push('\n');
                ended = false;
            }
            t if t.is_block() => {
                break_line(&mut out);
                ended = false;
                open.push(tree.end(j));
            }
            _ => {}
        }
        j += 1;
    }
    let out = out.replace("\r\n", "\n").replace('\r', "\n");
    let trimmed = out.trim_end_matches([' ', '\n', '\t']);
    let start = trimmed.len() - trimmed.trim_start_matches('\n').len();
    trimmed[start..].to_string()
}

/// Ends the line unless it is empty or ended.
fn break_line(out: &mut String) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
}

/// The text of the inline code element `i`, whitespace collapsed.
pub(crate) fn inline_text(tree: &Tree<'_>, keep: &[bool], i: usize) -> String {
    let mut raw = String::new();
    let mut j = i + 1;
    while j < tree.end(i) {
        if !keep[j] {
            j = tree.end(j);
            continue;
        }
        if let Some(t) = tree.text(j) {
            raw.push_str(t);
        } else if tree.tag(j) == Tag::Br {
            raw.push(' ');
        }
        j += 1;
    }
    raw.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` as a code span: backticks one more than its longest run, padded
/// when it starts or ends with one; `|` escaped inside a table cell.
pub(crate) fn span(text: &str, in_cell: bool) -> String {
    if text.is_empty() {
        return String::new();
    }
    let ticks = "`".repeat(longest_run(text, '`') + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    let body = if in_cell {
        text.replace('|', "\\|")
    } else {
        text.to_string()
    };
    format!("{ticks}{pad}{body}{pad}{ticks}")
}

/// A fence for `body`: at least three backticks, more than any run inside.
pub(crate) fn fence(body: &str) -> String {
    "`".repeat((longest_run(body, '`') + 1).max(3))
}

fn longest_run(text: &str, c: char) -> usize {
    let mut best = 0;
    let mut run = 0;
    for ch in text.chars() {
        if ch == c {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// The language of code block `i`: from a `language-x`, `lang-x` or
/// `highlight-x` class (or `data-lang`) on the block, its first child or
/// up to three enclosing elements.
pub(crate) fn language(tree: &Tree<'_>, i: usize) -> Option<String> {
    let mut candidates = vec![i];
    if let Some(c) = tree.children(i).find(|&c| tree.tag(c) != Tag::Text) {
        candidates.insert(0, c);
    }
    let mut at = i;
    for _ in 0..3 {
        match tree.parent(at) {
            Some(p) => {
                candidates.push(p);
                at = p;
            }
            None => break,
        }
    }
    candidates.into_iter().find_map(|n| {
        if let Some(lang) = tree.attr(n, "data-lang").and_then(clean) {
            return Some(lang);
        }
        let class = tree.attr(n, "class")?;
        class.split_whitespace().find_map(|token| {
            let lower = token.to_ascii_lowercase();
            ["language-", "lang-", "highlight-source-", "highlight-"]
                .iter()
                .find_map(|p| lower.strip_prefix(p).map(str::to_string))
                .or_else(|| KNOWN.contains(&lower.as_str()).then_some(lower.clone()))
                .and_then(|l| clean(&l))
        })
    })
}

/// Bare class names that name a language (rustdoc writes `class="rust"`).
const KNOWN: &[&str] = &[
    "rust",
    "python",
    "javascript",
    "console",
    "bash",
    "shell",
    "sql",
];

/// A language name fit for a fence's info string, or `None` for the
/// placeholders (`default`, `none`, `text`).
fn clean(lang: &str) -> Option<String> {
    let lang = lang.trim();
    if lang.is_empty()
        || matches!(
            lang,
            "default" | "none" | "text" | "plain" | "plaintext" | "nohighlight"
        )
        || !lang
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '#' | '_' | '.'))
        || lang.len() > 32
    {
        return None;
    }
    Some(lang.to_string())
}
