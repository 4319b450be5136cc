//! HTML to Markdown blocks: one iterative walk over the kept nodes of the
//! chosen subtrees, feeding the [`Writer`].
//!
//! The walk keeps its own stack of open elements (a heap `Vec`), so a page
//! nested 100,000 levels deep costs memory, not the thread's stack. Quotes
//! and list items nested deeper than [`MAX_NEST`] are flattened: their text
//! is kept, without further indentation.

use url::Url;

use super::code;
use super::links::{destination, image_src, resolve};
use super::table::{self, Cell, Shapes};
use super::tree::{Tag, Tree};
use super::writer::{Mode, Writer};
use super::{Block, BlockKind};

/// The deepest nesting of quotes and list items written as such.
pub(crate) const MAX_NEST: usize = 64;

/// What to undo when an element closes.
enum Leave {
    Nothing,
    /// A block element: end the block (at the top) or break the line.
    Block(u8),
    Mark(usize),
    Prefix(u8),
    List,
    Heading(Mode),
    Table(Mode),
    Row,
    Cell((usize, usize, usize), usize),
    Caption((usize, usize, usize)),
    Term(Option<usize>),
}

struct Frame {
    i: usize,
    next: usize,
    leave: Leave,
}

/// A list being written: ordered from which number, or not.
struct List {
    ordered: bool,
    next: u64,
}

/// The state of one conversion.
struct Converter<'t, 'a> {
    tree: &'t Tree<'a>,
    keep: &'t [bool],
    base: &'t Url,
    shapes: Shapes,
    w: Writer,
    lists: Vec<List>,
    tables: Vec<table::Table>,
    /// Whether each prefix is a list item's (paragraphs inside items are
    /// separated by a line break, inside quotes by a blank line).
    item: Vec<bool>,
}

/// The blocks of the subtrees `roots` of `tree`, leaving out nodes not
/// `keep`; and whether a cap cut them short.
pub(crate) fn convert(
    tree: &Tree<'_>,
    keep: &[bool],
    roots: &[usize],
    base: &Url,
) -> (Vec<Block>, bool) {
    let mut c = Converter {
        tree,
        keep,
        base,
        shapes: table::shapes(tree, keep),
        w: Writer::new(),
        lists: Vec::new(),
        tables: Vec::new(),
        item: Vec::new(),
    };
    let mut stack: Vec<Frame> = Vec::new();
    for &root in roots {
        if !keep[root] {
            continue;
        }
        let (leave, descend) = c.enter(root);
        stack.push(Frame {
            i: root,
            next: if descend { root + 1 } else { tree.end(root) },
            leave,
        });
        while let Some(top) = stack.last_mut() {
            if c.w.full() {
                break;
            }
            let end = tree.end(top.i);
            if top.next < end {
                let child = top.next;
                top.next = tree.end(child);
                if !keep[child] {
                    continue;
                }
                if let Some(text) = tree.text(child) {
                    c.w.text(text);
                    continue;
                }
                let (leave, descend) = c.enter(child);
                stack.push(Frame {
                    i: child,
                    next: if descend { child + 1 } else { tree.end(child) },
                    leave,
                });
            } else if let Some(frame) = stack.pop() {
                c.leave(frame.leave);
            }
        }
        stack.clear();
        if c.w.full() {
            break;
        }
        c.w.flush(None);
    }
    c.w.flush(None);
    (c.w.blocks, c.w.truncated)
}

impl Converter<'_, '_> {
    /// Starts element `i`: what to do when it closes, and whether to walk
    /// its children.
    fn enter(&mut self, i: usize) -> (Leave, bool) {
        let tag = self.tree.tag(i);
        match tag {
            Tag::Text => {
                if let Some(t) = self.tree.text(i) {
                    self.w.text(t);
                }
                (Leave::Nothing, false)
            }
            Tag::H(level) => {
                if self.w.mode != Mode::Flow {
                    return (Leave::Nothing, true);
                }
                self.block_start(Some(BlockKind::Heading(level)), 2);
                let mode = self.w.mode;
                self.w.mode = Mode::Line;
                self.w.set_lead(format!("{} ", "#".repeat(level as usize)));
                (Leave::Heading(mode), true)
            }
            Tag::P | Tag::Div | Tag::Section | Tag::Article | Tag::Main | Tag::Body | Tag::Html => {
                let gap = self.gap();
                self.block_start(Some(BlockKind::Paragraph), gap);
                (Leave::Block(gap), true)
            }
            Tag::Ul | Tag::Ol | Tag::Dl => {
                let kind = if tag == Tag::Dl {
                    BlockKind::Other
                } else {
                    BlockKind::List
                };
                self.block_start(Some(kind), 1);
                let start = self
                    .tree
                    .attr(i, "start")
                    .and_then(|s| s.trim().parse::<u64>().ok())
                    .unwrap_or(1)
                    .min(999_999_999);
                self.lists.push(List {
                    ordered: tag == Tag::Ol,
                    next: start,
                });
                (Leave::List, true)
            }
            Tag::Li => {
                if self.w.mode != Mode::Flow || self.w.nesting() >= MAX_NEST {
                    self.w.brk(1);
                    return (Leave::Block(1), true);
                }
                let marker = match self.lists.last_mut() {
                    Some(list) if list.ordered => {
                        let n = list.next;
                        list.next += 1;
                        format!("{n}. ")
                    }
                    _ => "- ".to_string(),
                };
                self.w.brk(1);
                let indent = " ".repeat(marker.len());
                self.w.push_prefix(marker, indent);
                self.item.push(true);
                (Leave::Prefix(1), true)
            }
            Tag::Dd => {
                if self.w.mode != Mode::Flow || self.w.nesting() >= MAX_NEST {
                    self.w.brk(1);
                    return (Leave::Block(1), true);
                }
                self.w.brk(1);
                self.w.push_prefix(": ".to_string(), "  ".to_string());
                self.item.push(true);
                (Leave::Prefix(1), true)
            }
            Tag::Dt => {
                self.w.brk(1);
                (Leave::Term(self.w.open_mark("**", "**")), true)
            }
            Tag::Blockquote => {
                if self.w.mode != Mode::Flow || self.w.nesting() >= MAX_NEST {
                    self.w.brk(2);
                    return (Leave::Block(2), true);
                }
                self.block_start(Some(BlockKind::Quote), 2);
                self.w.push_prefix("> ".to_string(), "> ".to_string());
                self.item.push(false);
                (Leave::Prefix(2), true)
            }
            Tag::Pre => {
                self.code_block(i);
                (Leave::Nothing, false)
            }
            Tag::Code | Tag::Kbd | Tag::Samp | Tag::Tt => {
                let text = code::inline_text(self.tree, self.keep, i);
                let span = code::span(&text, self.w.mode == Mode::Cell);
                self.w.inline(&span, &text);
                (Leave::Nothing, false)
            }
            Tag::A => {
                let url = self
                    .tree
                    .attr(i, "href")
                    .and_then(|h| resolve(self.base, h));
                match url.and_then(|u| self.w.open_link(u)) {
                    Some(h) => (Leave::Mark(h), true),
                    None => (Leave::Nothing, true),
                }
            }
            Tag::Em | Tag::I => self.mark("*", "*"),
            Tag::Strong | Tag::B => self.mark("**", "**"),
            Tag::Del | Tag::S => self.mark("~~", "~~"),
            Tag::Img => {
                self.image(i);
                (Leave::Nothing, false)
            }
            Tag::Br => {
                self.w.hard_break();
                (Leave::Nothing, false)
            }
            Tag::Hr => {
                if self.top() {
                    self.w.flush(Some(BlockKind::Rule));
                    self.w.inline("---", "");
                    self.w.flush(None);
                } else if self.w.mode == Mode::Flow {
                    self.w.brk(2);
                    self.w.inline("* * *", "");
                    self.w.brk(2);
                } else {
                    self.w.space();
                }
                (Leave::Nothing, false)
            }
            Tag::Table => {
                if self.w.mode == Mode::Flow && self.shapes.is_data(i) {
                    self.block_start(Some(BlockKind::Table), 2);
                    let mode = self.w.mode;
                    self.w.mode = Mode::Cell;
                    self.tables.push(table::Table::default());
                    (Leave::Table(mode), true)
                } else {
                    let gap = self.gap();
                    self.block_start(Some(BlockKind::Paragraph), gap);
                    (Leave::Block(gap), true)
                }
            }
            Tag::Tr if self.in_data_table(i) => {
                if let Some(t) = self.tables.last_mut() {
                    t.start_row();
                }
                (Leave::Row, true)
            }
            Tag::Td | Tag::Th if self.in_data_table(i) => {
                let span = self
                    .tree
                    .attr(i, "colspan")
                    .and_then(|s| s.trim().parse::<usize>().ok())
                    .unwrap_or(1)
                    .clamp(1, table::MAX_COLUMNS);
                (Leave::Cell(self.w.marks_at(), span), true)
            }
            Tag::Caption if !self.tables.is_empty() => (Leave::Caption(self.w.marks_at()), true),
            _ if tag.is_block() => {
                let gap = self.gap();
                self.block_start(None, gap);
                (Leave::Block(gap), true)
            }
            _ => (Leave::Nothing, true),
        }
    }

    /// Ends element `i`.
    fn leave(&mut self, leave: Leave) {
        match leave {
            Leave::Nothing => {}
            Leave::Block(gap) => self.block_end(gap),
            Leave::Mark(h) => self.w.close_mark(h),
            Leave::Term(h) => {
                if let Some(h) = h {
                    self.w.close_mark(h);
                }
                self.w.brk(1);
            }
            Leave::Prefix(gap) => {
                self.w.pop_prefix();
                self.item.pop();
                self.block_end(gap);
            }
            Leave::List => {
                self.lists.pop();
                self.block_end(1);
            }
            Leave::Heading(mode) => {
                self.w.clear_lead();
                self.w.mode = mode;
                self.block_end(2);
            }
            Leave::Table(mode) => {
                if let Some(t) = self.tables.pop() {
                    self.w.mode = mode;
                    t.write(&mut self.w);
                }
                self.w.mode = mode;
                self.block_end(2);
            }
            Leave::Row => {}
            Leave::Cell(at, span) => {
                let (md, text, links) = self.w.take_since(at.0, at.1, at.2);
                if let Some(t) = self.tables.last_mut() {
                    t.push_cell(Cell {
                        md,
                        text,
                        links,
                        span,
                    });
                }
            }
            Leave::Caption(at) => {
                let (md, text, links) = self.w.take_since(at.0, at.1, at.2);
                if let Some(t) = self.tables.last_mut() {
                    t.caption = Some(Cell {
                        md,
                        text,
                        links,
                        span: 1,
                    });
                }
            }
        }
    }

    fn mark(&mut self, open: &'static str, close: &'static str) -> (Leave, bool) {
        match self.w.open_mark(open, close) {
            Some(h) => (Leave::Mark(h), true),
            None => (Leave::Nothing, true),
        }
    }

    /// The break around a paragraph here: a blank line, or a line break
    /// inside a list item.
    fn gap(&self) -> u8 {
        if self.item.last().copied().unwrap_or(false) {
            1
        } else {
            2
        }
    }

    /// Whether the walk is at the top: outside any list, quote or table, so
    /// a block element starts a block of its own.
    fn top(&self) -> bool {
        self.w.at_top() && self.lists.is_empty() && self.tables.is_empty()
    }

    /// A block element opens: a new block at the top, else a break.
    fn block_start(&mut self, kind: Option<BlockKind>, gap: u8) {
        if self.top() {
            self.w.flush(kind);
        } else {
            self.w.brk(gap);
        }
    }

    /// A block element closes.
    fn block_end(&mut self, gap: u8) {
        if self.top() {
            self.w.flush(None);
        } else {
            self.w.brk(gap);
        }
    }

    /// Whether row or cell `i` belongs to the data table being written (not
    /// to a layout table inside one of its cells, which cannot happen, nor
    /// outside any).
    fn in_data_table(&self, _i: usize) -> bool {
        !self.tables.is_empty()
    }

    fn image(&mut self, i: usize) {
        let Some(url) = image_src(self.tree, i, self.base) else {
            return;
        };
        let alt = self.tree.attr(i, "alt").unwrap_or("");
        let mut md = String::from("![");
        for word in alt.split_whitespace() {
            if md.len() > 2 {
                md.push(' ');
            }
            for c in word.chars() {
                if matches!(c, '[' | ']' | '\\' | '|') {
                    md.push('\\');
                }
                md.push(c);
            }
        }
        md.push_str("](");
        let start = md.len();
        md.push_str(&destination(&url));
        let end = md.len();
        md.push(')');
        self.w.raw_with_link(&md, start..end, url);
    }

    fn code_block(&mut self, i: usize) {
        let body = code::block_text(self.tree, self.keep, i);
        if self.w.mode != Mode::Flow {
            let flat: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
            let span = code::span(&flat, self.w.mode == Mode::Cell);
            self.w.inline(&span, &flat);
            return;
        }
        if body.trim().is_empty() {
            return;
        }
        let lang = code::language(self.tree, i).unwrap_or_default();
        let fence = code::fence(&body);
        self.block_start(Some(BlockKind::Code), 2);
        self.w.inline(&format!("{fence}{lang}"), "");
        self.w.lines(&body);
        self.w.brk(1);
        self.w.inline(&fence, "");
        self.w.plain(&body);
        self.block_end(2);
    }
}
