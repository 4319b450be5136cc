//! Blocks whose pieces each need the block's frame again to stay valid
//! Markdown when the block is cut: a fenced code block its fences, a GFM
//! table its header row and delimiter row. Such a block is cut at its lines
//! (see [`super::split`]) and each piece framed again; a block without its
//! frame, or whose frame would leave too little room, is cut as text.

use super::{split, token};
use crate::content::BlockKind;

/// The block `markdown` of `kind`, over `budget`, as pieces within it.
pub fn split_block(kind: BlockKind, markdown: &str, budget: usize) -> Vec<String> {
    let framed = match kind {
        BlockKind::Code => code_frame(markdown),
        BlockKind::Table => table_frame(markdown),
        _ => None,
    };
    match framed {
        Some((head, inner, tail)) => split_framed(head, inner, tail, budget)
            .unwrap_or_else(|| split::split(markdown, budget)),
        None => split::split(markdown, budget),
    }
}

/// A fenced block's opening fence, body and closing fence.
fn code_frame(markdown: &str) -> Option<(&str, &str, &str)> {
    let fenced = |line: &str| line.starts_with("```") || line.starts_with("~~~");
    let (open, rest) = markdown.split_once('\n')?;
    let (inner, close) = rest.rsplit_once('\n')?;
    (fenced(open) && fenced(close.trim_start())).then_some((open, inner, close))
}

/// A table's header and delimiter rows, and its other rows.
fn table_frame(markdown: &str) -> Option<(&str, &str, &str)> {
    let first = markdown.find('\n')?;
    let second = first + 1 + markdown[first + 1..].find('\n')?;
    let delimiter = &markdown[first + 1..second];
    let is_delimiter = delimiter.contains('-')
        && delimiter
            .chars()
            .all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'));
    is_delimiter.then(|| (&markdown[..second], &markdown[second + 1..], ""))
}

/// `inner` cut to fit `budget` with `head` before each piece (and `tail`
/// after, when there is one); `None` when the frame takes over half of it.
fn split_framed(head: &str, inner: &str, tail: &str, budget: usize) -> Option<Vec<String>> {
    let overhead = token::count(head) + token::count(tail) + 2;
    let inner_budget = budget.checked_sub(overhead).filter(|b| *b >= budget / 2)?;
    let mut out = Vec::new();
    for piece in split::split(inner, inner_budget) {
        let framed = if tail.is_empty() {
            format!("{head}\n{piece}")
        } else {
            format!("{head}\n{piece}\n{tail}")
        };
        if token::count(&framed) <= budget {
            out.push(framed);
        } else {
            out.extend(split::split(&framed, budget));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_table_repeats_its_header_in_every_piece() {
        let rows: String = (0..100)
            .map(|i| format!("| row {i} | value {} |\n", i * 7))
            .collect();
        let table = format!("| Name | Value |\n| --- | ---: |\n{}", rows.trim_end());
        let pieces = split_block(BlockKind::Table, &table, 60);
        assert!(pieces.len() > 3);
        for p in &pieces {
            assert!(token::count(p) <= 60);
            assert!(
                p.starts_with("| Name | Value |\n| --- | ---: |\n| row "),
                "{p}"
            );
        }
        let kept: usize = pieces.iter().map(|p| p.matches("| row ").count()).sum();
        assert_eq!(kept, 100);
    }

    #[test]
    fn frames_are_recognised_only_when_whole() {
        assert!(code_frame("```rust\nfn main() {}\n```").is_some());
        assert!(code_frame("```rust\nfn main() {}").is_none());
        assert!(table_frame("| a |\n| - |\n| 1 |").is_some());
        assert!(table_frame("| a |\n| b |\n| 1 |").is_none());
    }
}
