//! The Markdown sink: text and markup go in, [`Block`]s come out.
//!
//! It owns the rules that make the output well-formed whatever order the
//! converter feeds it: whitespace collapsed (one space between words, none
//! at line starts), line prefixes of enclosing quotes and list items written
//! on every line, inline markers (emphasis, links) opened lazily so an empty
//! one leaves nothing and closed before every line break (then reopened), so
//! no marker ever spans a blank line; Markdown-special characters in text
//! escaped; and the caps on blocks and bytes.

use url::Url;

use super::links::destination;
use super::{Block, BlockKind, LinkSpan};

/// The most blocks one page yields.
pub(crate) const MAX_BLOCKS: usize = 20_000;
/// The most Markdown bytes one page yields.
pub(crate) const MAX_BYTES: usize = 4 << 20;
/// The most inline markers (emphasis, links) open at once; deeper ones are
/// left out, so closing and reopening them at line breaks stays cheap.
const MAX_MARKS: usize = 8;

/// A line prefix of an enclosing quote or list item.
struct Prefix {
    /// Written on its first line (a list marker, `> `).
    first: String,
    /// Written on the lines after (the marker's indent, `> `).
    rest: String,
    started: bool,
}

/// An inline marker: emphasis or a link.
struct Mark {
    open: &'static str,
    close: &'static str,
    url: Option<Url>,
    written: bool,
}

/// Where the writer is: in flowing text, or inside something that must stay
/// on one line (a table cell, a heading).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    Flow,
    Line,
    Cell,
}

/// Builds the blocks of one page.
pub(crate) struct Writer {
    pub(crate) md: String,
    pub(crate) text: String,
    pub(crate) links: Vec<LinkSpan>,
    prefixes: Vec<Prefix>,
    marks: Vec<Mark>,
    /// Written at the next content after the prefixes (a heading's `## `).
    lead: String,
    pending_nl: u8,
    pending_space: bool,
    line_start: bool,
    pub(crate) mode: Mode,
    kind: Option<BlockKind>,
    pub(crate) blocks: Vec<Block>,
    bytes: usize,
    pub(crate) truncated: bool,
}

impl Writer {
    pub(crate) fn new() -> Writer {
        Writer {
            md: String::new(),
            text: String::new(),
            links: Vec::new(),
            prefixes: Vec::new(),
            marks: Vec::new(),
            lead: String::new(),
            pending_nl: 0,
            pending_space: false,
            line_start: true,
            mode: Mode::Flow,
            kind: None,
            blocks: Vec::new(),
            bytes: 0,
            truncated: false,
        }
    }

    /// Whether a cap has been reached: the converter stops.
    pub(crate) fn full(&self) -> bool {
        self.truncated
    }

    /// How many quote and list prefixes enclose the current line.
    pub(crate) fn nesting(&self) -> usize {
        self.prefixes.len()
    }

    /// Whether the current block is at the top: no quote or list around it.
    pub(crate) fn at_top(&self) -> bool {
        self.prefixes.is_empty() && self.mode == Mode::Flow
    }

    /// Ends the current block, if it has content, and starts one of `kind`.
    pub(crate) fn flush(&mut self, kind: Option<BlockKind>) {
        self.close_marks();
        let md_len = self.md.trim_end().len();
        if md_len > 0 {
            self.md.truncate(md_len);
            let text = self.text.trim().to_string();
            let mut kind = self.kind.unwrap_or(BlockKind::Paragraph);
            if matches!(kind, BlockKind::Paragraph | BlockKind::Other)
                && text.is_empty()
                && self.md.starts_with("![")
            {
                kind = BlockKind::Image;
            }
            self.bytes += self.md.len();
            let links = std::mem::take(&mut self.links)
                .into_iter()
                .filter(|l| l.range.end <= md_len)
                .collect();
            self.blocks.push(Block {
                kind,
                markdown: std::mem::take(&mut self.md),
                text,
                links,
            });
            if self.blocks.len() >= MAX_BLOCKS || self.bytes >= MAX_BYTES {
                self.truncated = true;
            }
        }
        self.md.clear();
        self.text.clear();
        self.links.clear();
        self.pending_nl = 0;
        self.pending_space = false;
        self.line_start = true;
        self.lead.clear();
        for p in &mut self.prefixes {
            p.started = false;
        }
        self.kind = kind;
    }

    /// Asks for `n` line breaks (1: a new line, 2: a blank line) before the
    /// next content; inside a cell or a heading, a space.
    pub(crate) fn brk(&mut self, n: u8) {
        if self.mode != Mode::Flow {
            self.pending_space = true;
            return;
        }
        if self.md.is_empty() && self.lead.is_empty() {
            return;
        }
        self.pending_nl = self.pending_nl.max(n);
    }

    /// Asks for a space before the next content.
    pub(crate) fn space(&mut self) {
        self.pending_space = true;
    }

    /// Writes what is owed (line breaks, prefixes, a space, open markers)
    /// before new content.
    fn before(&mut self) {
        if self.pending_nl > 0 && !self.md.is_empty() {
            self.close_marks();
            self.md.push('\n');
            if self.pending_nl >= 2 {
                for p in self.prefixes.iter().filter(|p| p.started) {
                    self.md.push_str(&p.rest);
                }
                let trimmed = self.md.trim_end_matches(' ').len();
                self.md.truncate(trimmed);
                self.md.push('\n');
            }
            self.text.push('\n');
            self.line_start = true;
        }
        if self.line_start {
            // A cell's content is taken into its row, and the row gets the
            // prefixes when it is written: "> | a | b |", not "| > a | > b |".
            if self.mode != Mode::Cell {
                for p in &mut self.prefixes {
                    if p.started {
                        self.md.push_str(&p.rest);
                    } else {
                        self.md.push_str(&p.first);
                        p.started = true;
                    }
                }
            }
            self.md.push_str(&self.lead);
            self.lead.clear();
        } else if self.pending_space {
            self.md.push(' ');
            self.text.push(' ');
        }
        self.pending_nl = 0;
        self.pending_space = false;
        for m in self.marks.iter_mut().filter(|m| !m.written) {
            // A `!` of the text before a link would make it an image.
            if m.open == "[" && self.md.ends_with('!') {
                self.md.insert(self.md.len() - 1, '\\');
            }
            self.md.push_str(m.open);
            m.written = true;
        }
    }

    /// Closes every written marker (before a line break), to reopen them at
    /// the next content.
    fn close_marks(&mut self) {
        for k in (0..self.marks.len()).rev() {
            if self.marks[k].written {
                self.write_close(k);
                self.marks[k].written = false;
            }
        }
    }

    fn write_close(&mut self, k: usize) {
        let m = &self.marks[k];
        self.md.push_str(m.close);
        if let Some(url) = &m.url {
            let target = destination(url);
            let start = self.md.len();
            self.md.push_str(&target);
            self.links.push(LinkSpan {
                range: start..self.md.len(),
                url: url.clone(),
            });
            self.md.push(')');
        }
    }

    /// Opens an inline marker (`*`, `**`, `~~`); returns its handle, or
    /// `None` when the same marker is already open or too many are.
    pub(crate) fn open_mark(&mut self, open: &'static str, close: &'static str) -> Option<usize> {
        if self.marks.len() >= MAX_MARKS || self.marks.iter().any(|m| m.open == open) {
            return None;
        }
        self.marks.push(Mark {
            open,
            close,
            url: None,
            written: false,
        });
        Some(self.marks.len() - 1)
    }

    /// Opens a link to `url`; returns its handle, or `None` inside another
    /// link (links do not nest) or too many markers.
    pub(crate) fn open_link(&mut self, url: Url) -> Option<usize> {
        if self.marks.len() >= MAX_MARKS || self.in_link() {
            return None;
        }
        self.marks.push(Mark {
            open: "[",
            close: "](",
            url: Some(url),
            written: false,
        });
        Some(self.marks.len() - 1)
    }

    /// Closes the marker `handle` (and any left open inside it).
    pub(crate) fn close_mark(&mut self, handle: usize) {
        while self.marks.len() > handle {
            let k = self.marks.len() - 1;
            if self.marks[k].written {
                self.write_close(k);
            }
            self.marks.pop();
        }
    }

    /// Whether a link is open (links do not nest).
    pub(crate) fn in_link(&self) -> bool {
        self.marks.iter().any(|m| m.url.is_some())
    }

    /// Pushes a quote or list-item prefix.
    pub(crate) fn push_prefix(&mut self, first: String, rest: String) {
        self.prefixes.push(Prefix {
            first,
            rest,
            started: false,
        });
    }

    /// Pops the innermost prefix.
    pub(crate) fn pop_prefix(&mut self) {
        self.prefixes.pop();
    }

    /// Sets what the next content's line starts with (a heading's `## `).
    pub(crate) fn set_lead(&mut self, lead: String) {
        self.lead = lead;
    }

    /// Drops a lead that no content followed (an empty heading).
    pub(crate) fn clear_lead(&mut self) {
        self.lead.clear();
    }

    /// Writes page text: whitespace collapsed, Markdown-special characters
    /// escaped.
    ///
    /// Only the first word can start a line (and need its line-start
    /// escape) or have prefixes, a lead or markers written before it; the
    /// rest are copied in one pass over the bytes ([`Writer::rest`]). Word by
    /// word, through [`Writer::before`] and an escape per word, this was the
    /// largest share of the extraction (about 500 instructions a word).
    pub(crate) fn text(&mut self, s: &str) {
        if s.starts_with(is_space) {
            self.pending_space = true;
        }
        let body = s.trim_matches(is_space);
        if !body.is_empty() {
            let end = body.find(is_space).unwrap_or(body.len());
            self.word(&body[..end]);
            self.rest(&body[end..]);
        }
        if s.ends_with(is_space) {
            self.pending_space = true;
        }
    }

    /// Writes one word after what is owed before it.
    fn word(&mut self, word: &str) {
        let at_line_start = (self.line_start || self.pending_nl > 0 || self.md.is_empty())
            && self.lead.is_empty()
            && self.mode != Mode::Line;
        self.before();
        escape_word(word, at_line_start, self.mode == Mode::Cell, &mut self.md);
        self.text.push_str(word);
        self.line_start = false;
    }

    /// Writes the words of `rest` after a first word: each run of
    /// whitespace one space, specials escaped as [`escape_word`] escapes them
    /// inside a line. `rest` is empty or starts with whitespace and ends
    /// without it.
    ///
    /// The collapsed text is made first (borrowed when `rest` is tidy
    /// already); the Markdown is that text, escaped where it holds a special
    /// character (most text holds none): whitespace around a special reads as
    /// neither letter nor `#`, so escaping the collapsed run escapes what each
    /// word alone would.
    fn rest(&mut self, rest: &str) {
        let collapsed = collapse(rest);
        self.text.push_str(&collapsed);
        let bytes = collapsed.as_bytes();
        let cell = self.mode == Mode::Cell;
        let mut from = 0;
        let mut specials = Specials::new(bytes);
        while let Some(at) = specials.next_from(from) {
            self.md.push_str(&collapsed[from..at]);
            if escapes(&collapsed, at, cell) {
                self.md.push('\\');
            }
            self.md.push(char::from(bytes[at]));
            from = at + 1;
        }
        self.md.push_str(&collapsed[from..]);
    }

    /// Writes markup (a code span, a rule) as one unit of content, with its
    /// plain text.
    pub(crate) fn inline(&mut self, md: &str, text: &str) {
        if md.is_empty() {
            return;
        }
        self.before();
        self.md.push_str(md);
        self.text.push_str(text);
        self.line_start = false;
    }

    /// Writes a line of markup with links in it (a table row), the links'
    /// ranges relative to `md`.
    pub(crate) fn line_with_links(&mut self, md: &str, text: &str, links: Vec<LinkSpan>) {
        self.before();
        let at = self.md.len();
        self.md.push_str(md);
        self.text.push_str(text);
        self.links.extend(links.into_iter().map(|l| LinkSpan {
            range: l.range.start + at..l.range.end + at,
            url: l.url,
        }));
        self.line_start = false;
    }

    /// Writes markup with a link target inside it, at `target` of `s`.
    pub(crate) fn raw_with_link(&mut self, s: &str, target: std::ops::Range<usize>, url: Url) {
        self.before();
        let at = self.md.len();
        self.md.push_str(s);
        self.links.push(LinkSpan {
            range: at + target.start..at + target.end,
            url,
        });
        self.line_start = false;
    }

    /// Writes plain text to the block's text only (code, which Markdown
    /// holds verbatim).
    pub(crate) fn plain(&mut self, s: &str) {
        if !self.text.is_empty() && !self.text.ends_with([' ', '\n']) {
            self.text.push(' ');
        }
        self.text.push_str(s);
    }

    /// Writes lines verbatim (a fenced code block), each behind the
    /// prefixes.
    pub(crate) fn lines(&mut self, s: &str) {
        for line in s.split('\n') {
            self.brk(1);
            self.before();
            self.md.push_str(line);
            self.line_start = false;
            self.pending_nl = 1;
        }
    }

    /// A hard line break (`<br>`).
    pub(crate) fn hard_break(&mut self) {
        match self.mode {
            Mode::Flow if !self.line_start => {
                self.md.push_str("  ");
                self.brk(1);
            }
            Mode::Cell if !self.line_start => self.inline("<br>", " "),
            _ => self.space(),
        }
    }

    /// Takes what was written since `md_at`/`text_at`/`links_at` (a table
    /// cell's content), links re-based to the taken text.
    pub(crate) fn take_since(
        &mut self,
        md_at: usize,
        text_at: usize,
        links_at: usize,
    ) -> (String, String, Vec<LinkSpan>) {
        self.close_marks();
        let md_at = md_at.min(self.md.len());
        let md = self.md.split_off(md_at);
        let text = self.text.split_off(text_at.min(self.text.len()));
        let links = self
            .links
            .split_off(links_at.min(self.links.len()))
            .into_iter()
            .map(|l| LinkSpan {
                range: l.range.start - md_at..l.range.end - md_at,
                url: l.url,
            })
            .collect();
        self.pending_space = false;
        self.line_start = self.md.is_empty() || self.md.ends_with('\n');
        (md, text, links)
    }

    /// Where the block's Markdown, text and links end now.
    pub(crate) fn marks_at(&self) -> (usize, usize, usize) {
        (self.md.len(), self.text.len(), self.links.len())
    }
}

fn is_space(c: char) -> bool {
    c.is_whitespace()
}

/// Writes `word` to `out`, escaping what Markdown would read as markup.
fn escape_word(word: &str, at_line_start: bool, in_cell: bool, out: &mut String) {
    let bytes = word.as_bytes();
    let mut start = 0;
    if at_line_start {
        match bytes[0] {
            b'#' | b'>' | b'+' | b'-' | b'=' | b'~' => {
                out.push('\\');
            }
            b'0'..=b'9' => {
                let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
                if digits < bytes.len() && matches!(bytes[digits], b'.' | b')') && digits <= 9 {
                    out.push_str(&word[..digits]);
                    out.push('\\');
                    start = digits;
                }
            }
            _ => {}
        }
    }
    // Markdown's special characters are all ASCII: the bytes between them
    // are copied whole (a word-sized copy, not a push per character).
    let mut k = start;
    while let Some(off) = bytes[k..].iter().position(|&b| {
        matches!(
            b,
            b'\\' | b'`' | b'*' | b'[' | b']' | b'<' | b'~' | b'|' | b'&' | b'_'
        )
    }) {
        let at = k + off;
        out.push_str(&word[k..at]);
        if escapes(word, at, in_cell) {
            out.push('\\');
        }
        out.push(bytes[at] as char);
        k = at + 1;
    }
    out.push_str(&word[k..]);
}

/// Finds Markdown's special characters (the bytes [`escapes`] decides on)
/// in a text with memchr's vector searches, three needles at a time.
///
/// Each group's next hit is kept until the search passes it, so each group
/// scans the text once however many specials it has (linear, also on text
/// made of nothing but specials). A byte at a time, through a table, this
/// search was the writer's largest cost (about 6 instructions a byte; most
/// text holds no special at all).
struct Specials<'a> {
    bytes: &'a [u8],
    /// Each group's next hit (`usize::MAX`: none left); `None` before the
    /// first search.
    hits: Option<[usize; 4]>,
}

impl<'a> Specials<'a> {
    fn new(bytes: &'a [u8]) -> Specials<'a> {
        Specials { bytes, hits: None }
    }

    /// The first special at or after `from`; `from` never goes back.
    fn next_from(&mut self, from: usize) -> Option<usize> {
        let rest = self.bytes.get(from..)?;
        let search = |group: usize| {
            let found = match group {
                0 => memchr::memchr3(b'\\', b'`', b'*', rest),
                1 => memchr::memchr3(b'[', b']', b'<', rest),
                2 => memchr::memchr3(b'~', b'|', b'&', rest),
                _ => memchr::memchr(b'_', rest),
            };
            found.map_or(usize::MAX, |off| from + off)
        };
        let hits = self.hits.get_or_insert_with(|| [0, 1, 2, 3].map(search));
        for (group, hit) in hits.iter_mut().enumerate() {
            if *hit < from {
                *hit = search(group);
            }
        }
        hits.iter().copied().min().filter(|&hit| hit != usize::MAX)
    }
}

/// Whether ASCII text's only whitespace is single spaces (none doubled, no
/// tab, line break, vertical tab or form feed), checked with memchr's vector
/// searches: a byte loop was half the site rule's hashing.
pub(crate) fn single_spaced(bytes: &[u8]) -> bool {
    memchr::memchr3(b'\t', b'\n', b'\r', bytes).is_none()
        && memchr::memchr2(0x0b, 0x0c, bytes).is_none()
        && memchr::memmem::find(bytes, b"  ").is_none()
}

/// `s` with each run of whitespace one space; borrowed when it is so
/// already (ASCII text whose only whitespace is single spaces, the common
/// case, checked with vector searches).
fn collapse(s: &str) -> std::borrow::Cow<'_, str> {
    if s.is_ascii() && single_spaced(s.as_bytes()) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    let mut from = 0;
    for (i, c) in s.char_indices() {
        if c.is_whitespace() {
            if !space {
                out.push_str(&s[from..i]);
                out.push(' ');
                space = true;
            }
        } else if space {
            from = i;
            space = false;
        }
    }
    if !space {
        out.push_str(&s[from..]);
    }
    std::borrow::Cow::Owned(out)
}

/// Whether the special character at `at` of `s` must be escaped: `|` only in
/// a table cell, `&` only where it would start an entity, `_` only at the
/// edge of a word (inside one, between letters or digits, it is no emphasis).
/// Whitespace around it reads as neither letter nor `#`, so a whole run of
/// text gives what each word alone gives.
fn escapes(s: &str, at: usize, in_cell: bool) -> bool {
    match s.as_bytes()[at] {
        b'|' => in_cell,
        // An entity or character reference would be decoded.
        b'&' => s[at + 1..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '#'),
        b'_' => {
            let before = s[..at].chars().next_back();
            let after = s[at + 1..].chars().next();
            let inside = before.is_some_and(char::is_alphanumeric)
                && after.is_some_and(char::is_alphanumeric);
            !inside
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            rng_seed: proptest::test_runner::RngSeed::Fixed(33),
            ..ProptestConfig::default()
        })]
        /// Writing text in one pass gives the Markdown and text that
        /// writing it word by word gave, in every mode, at line starts and
        /// after breaks, with markers open, on text mixing whitespace of
        /// both kinds, specials and other scripts.
        #[test]
        fn text_in_one_pass_is_text_word_by_word(
            ops in proptest::collection::vec(
                (0u8..6, proptest::collection::vec(
                    prop_oneof![
                        Just("a"), Just("word"), Just(" "), Just("  \t\n"), Just("\u{a0}"),
                        Just("\u{3000}"), Just("\x0b"), Just("\x1c"), Just("_"), Just("*"),
                        Just("&"), Just("&amp;"), Just("#"), Just("1."), Just("|"), Just("é"),
                        Just("x_y"), Just("[b]"), Just("\\"), Just("`"), Just("<"), Just("~"),
                    ],
                    0..12,
                )),
                0..16,
            ),
            mode in 0u8..3,
        ) {
            let mode = [Mode::Flow, Mode::Line, Mode::Cell][usize::from(mode)];
            let mut one = Writer::new();
            let mut each = Writer::new();
            for w in [&mut one, &mut each] {
                w.mode = mode;
            }
            for (op, pieces) in &ops {
                let s: String = pieces.concat();
                for (w, reference) in [(&mut one, false), (&mut each, true)] {
                    match op {
                        0 => w.brk(1),
                        1 => w.brk(2),
                        2 => {
                            w.open_mark("**", "**");
                        }
                        3 => w.set_lead("## ".to_string()),
                        _ => {}
                    }
                    if reference {
                        w.text_word_by_word(&s);
                    } else {
                        w.text(&s);
                    }
                }
            }
            prop_assert_eq!(&one.md, &each.md);
            prop_assert_eq!(&one.text, &each.text);
        }
    }

    impl Writer {
        /// `text` as first written, a word at a time: the reference.
        fn text_word_by_word(&mut self, s: &str) {
            if s.starts_with(is_space) {
                self.pending_space = true;
            }
            let mut words = s.split(is_space).filter(|w| !w.is_empty()).peekable();
            while let Some(word) = words.next() {
                self.word(word);
                if words.peek().is_some() {
                    self.pending_space = true;
                }
            }
            if s.ends_with(is_space) {
                self.pending_space = true;
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            rng_seed: proptest::test_runner::RngSeed::Fixed(34),
            ..ProptestConfig::default()
        })]
        /// The grouped search finds the first special byte a plain search
        /// finds, from the start and then from any later point.
        #[test]
        fn the_chunked_search_finds_the_first_special(
            bytes in proptest::collection::vec(
                prop_oneof![8 => Just(b'a'), 1 => any::<u8>()],
                0..200,
            ),
            from in 0usize..200,
        ) {
            let from = from.min(bytes.len());
            let plain = bytes[from..]
                .iter()
                .position(|b| b"\\`*[]<~|&_".contains(b))
                .map(|off| from + off);
            let mut specials = Specials::new(&bytes);
            // Asked from an earlier start first, as the writer asks.
            let early = specials.next_from(0);
            prop_assert_eq!(early, bytes.iter().position(|b| b"\\`*[]<~|&_".contains(b)));
            prop_assert_eq!(specials.next_from(from), plain);
        }
    }

    #[test]
    fn specials_are_escaped_between_plain_runs() {
        let mut out = String::new();
        escape_word("a*b_c_[x]&amp;|_y", false, true, &mut out);
        assert_eq!(out, "a\\*b_c\\_\\[x\\]\\&amp;\\|\\_y");
        out.clear();
        escape_word("12.3é_x", true, false, &mut out);
        assert_eq!(out, "12\\.3é_x");
    }
}
