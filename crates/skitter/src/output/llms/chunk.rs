//! One page's Markdown as retrieval chunks of at most N tokens.
//!
//! The page is cut at its headings first: a chunk never holds the end of one
//! section and the start of the next (headings with no text of their own
//! under them stay with the section that follows, `# Guide` then `## Start`).
//! A section over N is cut between blocks; a block over N at line ends,
//! then sentences, then words (see [`super::split`]); a fenced code block's
//! pieces are each fenced again, a table's each headed by its header row
//! (see [`super::frame`]). Every chunk carries its heading path, and
//! starts with its heading line where it has one: a section's later chunks
//! repeat it, when it takes at most a quarter of N. The token count of each
//! chunk is counted on its final text, so none is over N; none is empty.

use serde::Serialize;

use super::{frame, split, token};
use crate::content::{BlockKind, Document};

/// The smallest chunk size accepted: room for a heading and some text.
pub const MIN_CHUNK_TOKENS: usize = 16;

/// What joins two blocks in a chunk (as in [`Document::markdown`]).
const SEPARATOR: &str = "\n\n";
/// The tokens [`SEPARATOR`] adds, in the estimate (the final count checks it).
const SEPARATOR_TOKENS: usize = 1;

/// One chunk of a page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Chunk {
    /// The headings it sits under, outermost first (`["Guide", "Install"]`).
    pub headings: Vec<String>,
    /// Its `cl100k_base` token count, at most the size asked for.
    pub tokens: usize,
    /// Its Markdown.
    pub markdown: String,
}

/// `doc`'s content as chunks of at most `max_tokens` tokens (at least
/// [`MIN_CHUNK_TOKENS`]: a smaller size is taken as that), in page order.
///
/// ```
/// use skitter::content::{Block, BlockKind, Document};
/// use skitter::output::chunk_document;
///
/// let block = |kind, md: &str| Block {
///     kind,
///     markdown: md.into(),
///     text: md.trim_start_matches('#').trim().into(),
///     links: Vec::new(),
/// };
/// let doc = Document {
///     blocks: vec![
///         block(BlockKind::Heading(1), "# Guide"),
///         block(BlockKind::Heading(2), "## Install"),
///         block(BlockKind::Paragraph, "Run the installer."),
///     ],
///     ..Document::default()
/// };
/// let chunks = chunk_document(&doc, 256);
/// assert_eq!(chunks.len(), 1);
/// assert_eq!(chunks[0].headings, ["Guide", "Install"]);
/// assert_eq!(chunks[0].markdown, "# Guide\n\n## Install\n\nRun the installer.");
/// ```
pub fn chunk_document(doc: &Document, max_tokens: usize) -> Vec<Chunk> {
    let mut packer = Packer::new(max_tokens.max(MIN_CHUNK_TOKENS));
    for block in &doc.blocks {
        let markdown = split::tidy(&block.markdown);
        if markdown.trim_start().is_empty() {
            continue;
        }
        match block.kind {
            BlockKind::Heading(level) => packer.heading(level, &block.text, markdown),
            kind => packer.body(kind, markdown),
        }
    }
    packer.emit();
    packer.out
}

/// Gathers blocks into the chunk being built.
struct Packer {
    max: usize,
    out: Vec<Chunk>,
    /// The chunk being built: its blocks (or pieces of one).
    parts: Vec<String>,
    /// Their summed counts, separators included.
    estimate: usize,
    /// Whether a part is text rather than a heading.
    has_body: bool,
    /// The open headings: level and text.
    path: Vec<(u8, String)>,
    /// The current section's heading line and its count, when small enough
    /// to start each of its chunks.
    heading: Option<(String, usize)>,
}

impl Packer {
    fn new(max: usize) -> Packer {
        Packer {
            max,
            out: Vec::new(),
            parts: Vec::new(),
            estimate: 0,
            has_body: false,
            path: Vec::new(),
            heading: None,
        }
    }

    fn heading(&mut self, level: u8, text: &str, markdown: &str) {
        if self.has_body {
            self.emit();
        }
        self.path.retain(|(open, _)| *open < level);
        self.path.push((level, text.trim().to_string()));
        let tokens = token::count(markdown);
        self.heading = (tokens <= self.max / 4).then(|| (markdown.to_string(), tokens));
        if tokens > self.max {
            self.emit();
            for piece in split::split(markdown, self.max) {
                self.parts.push(piece);
                self.emit();
            }
            return;
        }
        if !self.parts.is_empty() && self.estimate + SEPARATOR_TOKENS + tokens > self.max {
            self.emit();
        }
        self.push(markdown.to_string(), tokens);
    }

    fn body(&mut self, kind: BlockKind, markdown: &str) {
        let prefix = self
            .heading
            .as_ref()
            .map_or(0, |(_, t)| t + SEPARATOR_TOKENS);
        let budget = self.max - prefix;
        let tokens = token::count(markdown);
        if tokens <= budget {
            return self.add_body(markdown.to_string(), tokens);
        }
        for piece in frame::split_block(kind, markdown, budget) {
            let tokens = token::count(&piece);
            self.add_body(piece, tokens);
        }
    }

    fn add_body(&mut self, markdown: String, tokens: usize) {
        if !self.parts.is_empty() && self.estimate + SEPARATOR_TOKENS + tokens > self.max {
            self.emit();
        }
        if self.parts.is_empty() {
            // A section's later chunk: its heading line first.
            if let Some((line, tokens)) = self.heading.clone() {
                self.push(line, tokens);
            }
        }
        self.push(markdown, tokens);
        self.has_body = true;
    }

    fn push(&mut self, markdown: String, tokens: usize) {
        if !self.parts.is_empty() {
            self.estimate += SEPARATOR_TOKENS;
        }
        self.estimate += tokens;
        self.parts.push(markdown);
    }

    /// Ends the chunk being built. The estimate sums the parts' counts; the
    /// joined text is counted again, and in the rare case that a merge across
    /// a join makes it longer, the parts are packed again by exact counts.
    fn emit(&mut self) {
        let parts = std::mem::take(&mut self.parts);
        self.estimate = 0;
        self.has_body = false;
        if parts.is_empty() {
            return;
        }
        let joined = parts.join(SEPARATOR);
        let tokens = token::count(&joined);
        if tokens <= self.max {
            return self.keep(joined, tokens);
        }
        let mut current = String::new();
        for part in parts {
            let joined = if current.is_empty() {
                part.clone()
            } else {
                format!("{current}{SEPARATOR}{part}")
            };
            let tokens = token::count(&joined);
            if tokens <= self.max {
                current = joined;
                continue;
            }
            self.keep_counted(std::mem::take(&mut current));
            if token::count(&part) <= self.max {
                current = part;
            } else {
                for piece in split::split(&part, self.max) {
                    self.keep_counted(piece);
                }
            }
        }
        self.keep_counted(current);
    }

    fn keep_counted(&mut self, markdown: String) {
        if !markdown.is_empty() {
            let tokens = token::count(&markdown);
            self.keep(markdown, tokens);
        }
    }

    fn keep(&mut self, markdown: String, tokens: usize) {
        let headings = self.path.iter().map(|(_, text)| text.clone()).collect();
        self.out.push(Chunk {
            headings,
            tokens,
            markdown,
        });
    }
}

#[cfg(test)]
mod tests;
