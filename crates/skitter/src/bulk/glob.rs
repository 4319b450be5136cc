//! curl-style URL globbing: `{a,b,c}` sets and `[1-20]`, `[001-100]`, `[a-z]`,
//! `[0-100:10]` ranges, several per URL, expanded lazily.
//!
//! A pattern is parsed once into literal text and "axes"; the URLs are its
//! cartesian product, rightmost axis varying fastest (as curl does). URL number `k`
//! is computed from `k` by mixed-radix decomposition, so a pattern naming 10^12
//! URLs costs no more memory than one naming two.
//!
//! Rules (curl's, with errors instead of guesses):
//! - `\` before `[ ] { } , \` makes that character literal;
//! - a `[...]` holding an IPv6 address (`http://[::1]:8080/`) is literal;
//! - ranges are `[A-B]` or `[A-B:STEP]`, `A ≤ B`, both numbers or both letters of
//!   one case; a number range whose start has a leading zero is zero-padded to the
//!   start's width (`[001-100]` → `001` … `100`);
//! - sets may hold empty alternatives (`{,s}` → `` and `s`) but not be empty;
//! - nesting, an unclosed `[`/`{` and a stray `]`/`}` are errors.

use std::fmt;
use std::net::Ipv6Addr;

/// Why a pattern could not be parsed. `column` is 1-based, in characters.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GlobError {
    /// A `[` or `{` without its closing bracket.
    #[error("column {column}: unclosed '{open}'")]
    Unclosed {
        /// Where the opening bracket is.
        column: usize,
        /// `[` or `{`.
        open: char,
    },
    /// A `]` or `}` that closes nothing.
    #[error("column {column}: unmatched '{close}' (escape it as '\\{close}' or use --no-glob)")]
    Unmatched {
        /// Where it is.
        column: usize,
        /// `]` or `}`.
        close: char,
    },
    /// A `[` or `{` inside another glob.
    #[error("column {column}: globs cannot be nested")]
    Nested {
        /// Where the inner bracket is.
        column: usize,
    },
    /// `{}`.
    #[error("column {column}: empty set '{{}}'")]
    EmptySet {
        /// Where the set starts.
        column: usize,
    },
    /// A `[...]` that is not a valid range.
    #[error("column {column}: bad range [{text}]: {why}")]
    BadRange {
        /// Where the range starts.
        column: usize,
        /// What was between the brackets.
        text: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The product of the globs does not fit in a `u64`.
    #[error("the pattern expands to more than 2^64 URLs")]
    TooMany,
}

/// One piece of a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Set(Vec<String>),
    Numbers {
        start: u64,
        step: u64,
        count: u64,
        width: usize,
    },
    Letters {
        start: u8,
        step: u8,
        count: u64,
    },
}

impl Part {
    fn len(&self) -> u64 {
        match self {
            Part::Literal(_) => 1,
            Part::Set(items) => items.len() as u64,
            Part::Numbers { count, .. } | Part::Letters { count, .. } => *count,
        }
    }

    fn push_value(&self, i: u64, out: &mut String) {
        use std::fmt::Write;
        match self {
            Part::Literal(s) => out.push_str(s),
            Part::Set(items) => out.push_str(&items[i as usize]),
            Part::Numbers {
                start, step, width, ..
            } => {
                let _ = write!(out, "{:0width$}", start + i * step, width = *width);
            }
            Part::Letters { start, step, .. } => out.push((start + i as u8 * step) as char),
        }
    }
}

/// A parsed pattern: the URLs it names, without listing them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Glob {
    parts: Vec<Part>,
    len: u64,
}

impl Glob {
    /// Parses a curl-style pattern (see the module docs for the syntax).
    pub fn parse(pattern: &str) -> Result<Glob, GlobError> {
        let parts = Parser::new(pattern).parts()?;
        let len = parts
            .iter()
            .try_fold(1u64, |acc, p| acc.checked_mul(p.len()))
            .ok_or(GlobError::TooMany)?;
        Ok(Glob { parts, len })
    }

    /// A pattern that names exactly `text` (for `--no-glob`).
    pub fn literal(text: &str) -> Glob {
        Glob {
            parts: vec![Part::Literal(text.to_string())],
            len: 1,
        }
    }

    /// How many URLs the pattern names.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Always false: every valid pattern names at least one URL.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// URL number `k` (0-based), if `k < len()`.
    pub fn get(&self, k: u64) -> Option<String> {
        self.get_with_ranges(k).map(|(url, _)| url)
    }

    /// URL number `k` and the value each range (`[…]`, `{…}`) took in it,
    /// in order: what `{1}`, `{2}`… stand for in templates.
    pub fn get_with_ranges(&self, mut k: u64) -> Option<(String, Vec<String>)> {
        if k >= self.len {
            return None;
        }
        let mut picks = vec![0u64; self.parts.len()];
        for (pick, part) in picks.iter_mut().zip(&self.parts).rev() {
            let n = part.len();
            *pick = k % n;
            k /= n;
        }
        let mut out = String::new();
        let mut ranges = Vec::new();
        for (part, pick) in self.parts.iter().zip(picks) {
            if matches!(part, Part::Literal(_)) {
                part.push_value(pick, &mut out);
            } else {
                let mut value = String::new();
                part.push_value(pick, &mut value);
                out.push_str(&value);
                ranges.push(value);
            }
        }
        Some((out, ranges))
    }
}

impl IntoIterator for Glob {
    type Item = String;
    type IntoIter = Expansion;

    fn into_iter(self) -> Expansion {
        Expansion {
            glob: self,
            next: 0,
        }
    }
}

/// The URLs of a [`Glob`], one at a time.
#[derive(Clone, Debug)]
pub struct Expansion {
    glob: Glob,
    next: u64,
}

impl Expansion {
    /// The next URL with the values its ranges took (see
    /// [`Glob::get_with_ranges`]).
    pub fn next_with_ranges(&mut self) -> Option<(String, Vec<String>)> {
        let got = self.glob.get_with_ranges(self.next)?;
        self.next += 1;
        Some(got)
    }
}

impl Iterator for Expansion {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        self.next_with_ranges().map(|(url, _)| url)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.glob.len - self.next).ok();
        (left.unwrap_or(usize::MAX), left)
    }
}

struct Parser<'a> {
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
    text: &'a str,
    parts: Vec<Part>,
    literal: String,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser {
            chars: text.char_indices().peekable(),
            text,
            parts: Vec::new(),
            literal: String::new(),
        }
    }

    fn column(&self, byte: usize) -> usize {
        self.text[..byte].chars().count() + 1
    }

    fn parts(mut self) -> Result<Vec<Part>, GlobError> {
        while let Some((at, c)) = self.chars.next() {
            match c {
                '\\' => self.escape(),
                '{' => self.axis(at, '}')?,
                '[' => self.axis(at, ']')?,
                ']' | '}' => {
                    return Err(GlobError::Unmatched {
                        column: self.column(at),
                        close: c,
                    });
                }
                c => self.literal.push(c),
            }
        }
        self.flush_literal();
        Ok(self.parts)
    }

    fn escape(&mut self) {
        match self.chars.peek() {
            Some(&(_, c @ ('[' | ']' | '{' | '}' | ',' | '\\'))) => {
                self.literal.push(c);
                self.chars.next();
            }
            _ => self.literal.push('\\'),
        }
    }

    fn flush_literal(&mut self) {
        if !self.literal.is_empty() {
            self.parts
                .push(Part::Literal(std::mem::take(&mut self.literal)));
        }
    }

    /// Reads a `{...}` or `[...]` body (escapes undone, commas of sets kept as
    /// separators) and turns it into an axis or, for IPv6 hosts, literal text.
    fn axis(&mut self, open_at: usize, close: char) -> Result<(), GlobError> {
        let column = self.column(open_at);
        let mut items = vec![String::new()];
        let mut raw = String::new();
        loop {
            let Some((at, c)) = self.chars.next() else {
                let open = if close == '}' { '{' } else { '[' };
                return Err(GlobError::Unclosed { column, open });
            };
            match c {
                c if c == close => break,
                '[' | '{' => {
                    return Err(GlobError::Nested {
                        column: self.column(at),
                    });
                }
                '\\' if close == '}' => match self.chars.peek() {
                    Some(&(_, e @ ('[' | ']' | '{' | '}' | ',' | '\\'))) => {
                        push_last(&mut items, e);
                        self.chars.next();
                    }
                    _ => push_last(&mut items, '\\'),
                },
                ',' if close == '}' => items.push(String::new()),
                c => {
                    raw.push(c);
                    push_last(&mut items, c);
                }
            }
        }
        if close == '}' {
            if items.len() == 1 && items[0].is_empty() {
                return Err(GlobError::EmptySet { column });
            }
            self.flush_literal();
            self.parts.push(Part::Set(items));
        } else if is_ipv6_literal(&raw) {
            self.literal.push('[');
            self.literal.push_str(&raw);
            self.literal.push(']');
        } else {
            let range = range(&raw).map_err(|why| GlobError::BadRange {
                column,
                text: raw.clone(),
                why,
            })?;
            self.flush_literal();
            self.parts.push(range);
        }
        Ok(())
    }
}

fn push_last(items: &mut [String], c: char) {
    if let Some(last) = items.last_mut() {
        last.push(c);
    }
}

/// `::1`, `fe80::1%25eth0`: the host part of an IPv6 URL, not a range.
fn is_ipv6_literal(raw: &str) -> bool {
    let addr = raw.split_once("%25").map_or(raw, |(a, _)| a);
    raw.contains(':') && addr.parse::<Ipv6Addr>().is_ok()
}

/// Parses `A-B` or `A-B:STEP`.
fn range(raw: &str) -> Result<Part, &'static str> {
    let (span, step) = match raw.split_once(':') {
        Some((span, step)) => {
            let step: u64 = step.parse().map_err(|_| "the step is not a number")?;
            (span, step)
        }
        None => (raw, 1),
    };
    if step == 0 {
        return Err("the step must be at least 1");
    }
    let (a, b) = span
        .split_once('-')
        .ok_or("expected START-END, like 1-10 or a-z")?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    if digits(a) && digits(b) {
        let start: u64 = a.parse().map_err(|_| "the start is too large")?;
        let end: u64 = b.parse().map_err(|_| "the end is too large")?;
        if start > end {
            return Err("the start is after the end");
        }
        let width = if a.len() > 1 && a.starts_with('0') {
            a.len()
        } else {
            0
        };
        // 0-18446744073709551615 has one value more than a u64 counts.
        let count = ((end - start) / step)
            .checked_add(1)
            .ok_or("the range has more than 2^64 values")?;
        return Ok(Part::Numbers {
            start,
            step,
            count,
            width,
        });
    }
    let letter = |s: &str| match s.as_bytes() {
        [c] if c.is_ascii_alphabetic() => Some(*c),
        _ => None,
    };
    let (Some(a), Some(b)) = (letter(a), letter(b)) else {
        return Err("both ends must be numbers, or single letters of one case");
    };
    if a.is_ascii_lowercase() != b.is_ascii_lowercase() {
        return Err("both letters must be of one case");
    }
    if a > b {
        return Err("the start is after the end");
    }
    let step = u8::try_from(step).map_err(|_| "the step is larger than the range")?;
    Ok(Part::Letters {
        start: a,
        step,
        count: u64::from((b - a) / step) + 1,
    })
}

impl fmt::Display for Glob {
    /// The pattern's first URL and how many there are, for messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.get(0) {
            Some(first) if self.len > 1 => write!(f, "{first} (+{} more)", self.len - 1),
            Some(first) => f.write_str(&first),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(p: &str) -> Vec<String> {
        Glob::parse(p).unwrap().into_iter().collect()
    }

    #[test]
    fn each_url_knows_the_values_of_its_ranges() {
        let g = Glob::parse("http://[::1]/{br,cn}/[1-2].gif").unwrap();
        let got = g.get_with_ranges(3).unwrap();
        assert_eq!(got.0, "http://[::1]/cn/2.gif");
        assert_eq!(got.1, ["cn", "2"]);
        assert_eq!(Glob::literal("h/a").get_with_ranges(0).unwrap().1.len(), 0);
    }

    #[test]
    fn expansions() {
        let cases: &[(&str, &[&str])] = &[
            ("http://h/a", &["http://h/a"]),
            ("h/[1-3]", &["h/1", "h/2", "h/3"]),
            ("h/[08-11]", &["h/08", "h/09", "h/10", "h/11"]),
            ("h/[001-003]", &["h/001", "h/002", "h/003"]),
            ("h/[0-10:5]", &["h/0", "h/5", "h/10"]),
            ("h/[1-4:2]", &["h/1", "h/3"]),
            ("h/[a-c]", &["h/a", "h/b", "h/c"]),
            ("h/[A-E:2]", &["h/A", "h/C", "h/E"]),
            ("h/[7-7]", &["h/7"]),
            ("h/{a,b,c}.gif", &["h/a.gif", "h/b.gif", "h/c.gif"]),
            ("h/x{,s}", &["h/x", "h/xs"]),
            ("{a,b}/[1-2]", &["a/1", "a/2", "b/1", "b/2"]),
            ("h/\\[1-2\\]", &["h/[1-2]"]),
            ("h/{a\\,b,c}", &["h/a,b", "h/c"]),
            ("h/a\\b", &["h/a\\b"]),
            (
                "http://[::1]:80/[1-2]",
                &["http://[::1]:80/1", "http://[::1]:80/2"],
            ),
            ("http://[fe80::1%25eth0]/", &["http://[fe80::1%25eth0]/"]),
        ];
        for (pattern, want) in cases {
            assert_eq!(expand(pattern), *want, "{pattern}");
            assert_eq!(Glob::parse(pattern).unwrap().len(), want.len() as u64);
        }
    }

    #[test]
    fn malformed_patterns() {
        let cases: &[(&str, GlobError)] = &[
            (
                "h/[1-",
                GlobError::Unclosed {
                    column: 3,
                    open: '[',
                },
            ),
            (
                "h/{a,b",
                GlobError::Unclosed {
                    column: 3,
                    open: '{',
                },
            ),
            (
                "h/a]",
                GlobError::Unmatched {
                    column: 4,
                    close: ']',
                },
            ),
            (
                "h/a}",
                GlobError::Unmatched {
                    column: 4,
                    close: '}',
                },
            ),
            ("h/{a,[1-2]}", GlobError::Nested { column: 6 }),
            ("h/{}", GlobError::EmptySet { column: 3 }),
        ];
        for (pattern, want) in cases {
            assert_eq!(Glob::parse(pattern).as_ref(), Err(want), "{pattern}");
        }
        let bad_ranges = [
            "h/[5-1]",
            "h/[z-a]",
            "h/[]",
            "h/[1-2:0]",
            "h/[1-x]",
            "h/[a-Z]",
            "h/[ab-c]",
            "h/[1]",
            "h/[1-2:x]",
            "h/[1-99999999999999999999]",
            "h/[a-z:300]",
            "h/[0-18446744073709551615]",
        ];
        for pattern in bad_ranges {
            let got = Glob::parse(pattern);
            assert!(
                matches!(got, Err(GlobError::BadRange { column: 3, .. })),
                "{pattern}: {got:?}"
            );
        }
    }

    #[test]
    fn huge_products_stay_lazy_and_overflow_is_an_error() {
        let g = Glob::parse("h/[0-999999]/[0-999999]/[0-999999]").unwrap();
        assert_eq!(g.len(), 1_000_000_000_000_000_000);
        assert_eq!(g.get(g.len() - 1).unwrap(), "h/999999/999999/999999");
        let mut it = g.into_iter();
        assert_eq!(it.next().unwrap(), "h/0/0/0");
        assert_eq!(it.next().unwrap(), "h/0/0/1");
        let four = "h/[0-999999]/[0-999999]/[0-999999]/[0-999999]";
        assert_eq!(Glob::parse(four), Err(GlobError::TooMany));
    }

    #[test]
    fn literal_ignores_glob_syntax() {
        let g = Glob::literal("h/[1-");
        assert_eq!(g.into_iter().collect::<Vec<_>>(), ["h/[1-"]);
    }
}
