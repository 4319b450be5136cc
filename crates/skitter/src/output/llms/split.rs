//! Splitting one text that is over a token budget into pieces within it: at
//! line ends first, then after sentences, then after clauses (a `,`, `;`,
//! `:` or a link's closing `)`), then between words, and only as a last
//! resort between characters (a long URL, a run of base64). Each piece
//! is non-empty (blank lines and trailing space cut, a first line's
//! indentation kept), and its count is checked, not estimated.

use super::token;

/// The ways to cut, coarsest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cut {
    Lines,
    Sentences,
    Clauses,
    Words,
    Chars,
}

impl Cut {
    fn finer(self) -> Cut {
        match self {
            Cut::Lines => Cut::Sentences,
            Cut::Sentences => Cut::Clauses,
            Cut::Clauses => Cut::Words,
            Cut::Words | Cut::Chars => Cut::Chars,
        }
    }

    /// `text` cut into segments that concatenate back to it.
    fn segments(self, text: &str) -> Vec<&str> {
        match self {
            Cut::Lines => text.split_inclusive('\n').collect(),
            // The space after a cut stays with the segment before it, so a
            // segment starts where its text does.
            Cut::Sentences => cut_before(text, |before, prev, c| {
                matches!(before, '.' | '!' | '?' | '。' | '！' | '？')
                    && prev.is_whitespace()
                    && !c.is_whitespace()
            }),
            Cut::Clauses => cut_before(text, |before, prev, c| {
                matches!(before, ',' | ';' | ':' | ')' | '，' | '；')
                    && prev.is_whitespace()
                    && !c.is_whitespace()
            }),
            Cut::Words => cut_before(text, |_, prev, c| {
                prev.is_whitespace() && !c.is_whitespace()
            }),
            Cut::Chars => Vec::new(),
        }
    }
}

/// `text` cut before each character `c` for which `at(before, prev, c)`
/// holds, `prev` and `before` being the two characters before it.
fn cut_before(text: &str, at: impl Fn(char, char, char) -> bool) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let (mut before, mut prev) = ('\0', '\0');
    for (i, c) in text.char_indices() {
        if i > 0 && at(before, prev, c) {
            out.push(&text[start..i]);
            start = i;
        }
        (before, prev) = (prev, c);
    }
    out.push(&text[start..]);
    out
}

/// `text` without trailing white space nor leading blank lines (a first
/// line's indentation stays: it matters in code).
pub fn tidy(text: &str) -> &str {
    text.trim_end().trim_start_matches(['\n', '\r'])
}

/// `text` as [tidy](tidy), non-empty pieces of at most `budget` tokens each, in
/// order. `budget` must be at least 4 (the most one character can take).
pub fn split(text: &str, budget: usize) -> Vec<String> {
    let mut out = Vec::new();
    split_at(text, budget, Cut::Lines, &mut out);
    out
}

fn split_at(text: &str, budget: usize, cut: Cut, out: &mut Vec<String>) {
    let text = tidy(text);
    if text.trim_start().is_empty() {
        return;
    }
    if cut == Cut::Chars {
        return split_chars(text, budget, out);
    }
    let mut current = String::new();
    let mut estimate = 0;
    for segment in cut.segments(text) {
        let tokens = token::count(segment);
        if tokens > budget {
            flush(&mut current, budget, cut, out);
            estimate = 0;
            split_at(segment, budget, cut.finer(), out);
        } else if estimate + tokens <= budget {
            current.push_str(segment);
            estimate += tokens;
        } else {
            flush(&mut current, budget, cut, out);
            current.push_str(segment);
            estimate = tokens;
        }
    }
    flush(&mut current, budget, cut, out);
}

/// Emits the segments gathered in `current`: their summed count was within
/// the budget, and the joined text almost always is too; when it is not (a
/// merge across a segment boundary), it is cut finer.
fn flush(current: &mut String, budget: usize, cut: Cut, out: &mut Vec<String>) {
    let text = tidy(current);
    if !text.trim_start().is_empty() {
        if token::count(text) <= budget {
            out.push(text.to_string());
        } else {
            split_at(text, budget, cut.finer(), out);
        }
    }
    current.clear();
}

/// Cuts `text` into the longest prefixes within `budget`, preferring to cut
/// at a space in the prefix's second half. Binary search over character
/// boundaries; a token is never longer than [`MAX_TOKEN_BYTES`], which
/// bounds the search.
fn split_chars(mut text: &str, budget: usize, out: &mut Vec<String>) {
    while !text.is_empty() {
        if token::count(text) <= budget {
            out.push(text.to_string());
            return;
        }
        let mut lo = 0; // a prefix known to fit (bytes)
        let mut hi = text.len().min(budget.saturating_mul(MAX_TOKEN_BYTES)); // maybe not
        while lo < hi {
            let mid = floor_char_boundary(text, lo + (hi - lo).div_ceil(2));
            if mid <= lo {
                break;
            }
            if token::count(&text[..mid]) <= budget {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        if lo == 0 {
            // One character over the budget cannot happen for budget >= 4;
            // take it anyway rather than loop.
            lo = text.chars().next().map_or(text.len(), char::len_utf8);
        }
        let cut = text[..lo]
            .rfind(char::is_whitespace)
            .filter(|&at| at > lo / 2)
            .unwrap_or(lo);
        let piece = text[..cut].trim();
        if !piece.is_empty() {
            out.push(piece.to_string());
        }
        text = text[cut..].trim_start();
    }
}

/// The longest token of `cl100k_base` is well under this many bytes.
const MAX_TOKEN_BYTES: usize = 256;

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_lines_then_sentences_then_words_then_characters() {
        let lines = "one two three\nfour five six\nseven eight nine";
        assert_eq!(
            split(lines, 4),
            ["one two three", "four five six", "seven eight nine"]
        );
        let sentences = "One two. Three four. Five six.";
        assert_eq!(
            split(sentences, 4),
            ["One two.", "Three four.", "Five six."]
        );
        let words = "alpha beta gamma delta epsilon zeta eta theta";
        for piece in split(words, 4) {
            assert!(token::count(&piece) <= 4, "{piece:?}");
        }
        let blob = "x".repeat(5000);
        let pieces = split(&blob, 8);
        assert!(pieces.iter().all(|p| token::count(p) <= 8));
        assert_eq!(pieces.concat(), blob);
    }

    #[test]
    fn keeps_what_fits_whole_and_drops_blank_text() {
        // Blank lines and trailing space go; a first line's indentation stays.
        assert_eq!(split("\n  hello world \n", 10), ["  hello world"]);
        assert!(split(" \n\n ", 10).is_empty());
    }
}
