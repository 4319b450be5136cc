//! Tables: which are data (written as GFM tables) and which are layout
//! (one column, or tables inside tables: their cells written as blocks),
//! and the writing of a data table from its collected cells.

use std::collections::HashMap;

use super::LinkSpan;
use super::tree::{Tag, Tree};
use super::writer::Writer;

/// The most columns a table is written with; wider rows are cut.
pub(crate) const MAX_COLUMNS: usize = 64;

/// Which tables of a page are data tables.
pub(crate) struct Shapes {
    data: HashMap<usize, bool>,
}

impl Shapes {
    /// Whether table `i` is written as a GFM table.
    pub(crate) fn is_data(&self, i: usize) -> bool {
        self.data.get(&i).copied().unwrap_or(false)
    }
}

/// Classifies every table of the page in one pass: a table is data when it
/// holds no table, has two columns or more, and does not say it is for
/// presentation.
pub(crate) fn shapes(tree: &Tree<'_>, keep: &[bool]) -> Shapes {
    #[derive(Default)]
    struct Seen {
        nested: bool,
        columns: usize,
    }
    let mut seen: HashMap<usize, Seen> = HashMap::new();
    let mut open: Vec<usize> = Vec::new();
    for (j, &kept) in keep.iter().enumerate() {
        while open.last().is_some_and(|&t| tree.end(t) <= j) {
            open.pop();
        }
        if !kept {
            continue;
        }
        match tree.tag(j) {
            Tag::Table => {
                if let Some(&outer) = open.last() {
                    seen.entry(outer).or_default().nested = true;
                }
                seen.entry(j).or_default();
                open.push(j);
            }
            Tag::Tr => {
                if let Some(&t) = open.last() {
                    let columns: usize = tree
                        .children(j)
                        .filter(|&c| matches!(tree.tag(c), Tag::Td | Tag::Th))
                        .map(|c| {
                            tree.attr(c, "colspan")
                                .and_then(|s| s.trim().parse::<usize>().ok())
                                .unwrap_or(1)
                                .clamp(1, MAX_COLUMNS)
                        })
                        .sum();
                    let s = seen.entry(t).or_default();
                    s.columns = s.columns.max(columns);
                }
            }
            _ => {}
        }
    }
    let data = seen
        .into_iter()
        .map(|(t, s)| {
            let presentation = tree.attr(t, "role").is_some_and(|r| {
                r.eq_ignore_ascii_case("presentation") || r.eq_ignore_ascii_case("none")
            });
            (t, !s.nested && s.columns >= 2 && !presentation)
        })
        .collect();
    Shapes { data }
}

/// One cell's content.
pub(crate) struct Cell {
    pub md: String,
    pub text: String,
    pub links: Vec<LinkSpan>,
    pub span: usize,
}

/// A data table being collected.
#[derive(Default)]
pub(crate) struct Table {
    rows: Vec<Vec<Cell>>,
    pub caption: Option<Cell>,
}

impl Table {
    /// A row starts.
    pub(crate) fn start_row(&mut self) {
        self.rows.push(Vec::new());
    }

    /// A cell ends.
    pub(crate) fn push_cell(&mut self, cell: Cell) {
        if self.rows.is_empty() {
            self.rows.push(Vec::new());
        }
        if let Some(row) = self.rows.last_mut() {
            row.push(cell);
        }
    }

    /// Writes the table: the caption on a line of its own, then the rows,
    /// the first as the header.
    pub(crate) fn write(self, w: &mut Writer) {
        let rows: Vec<Vec<Cell>> = self.rows.into_iter().filter(|r| !r.is_empty()).collect();
        let columns = rows
            .iter()
            .map(|r| r.iter().map(|c| c.span).sum::<usize>())
            .max()
            .unwrap_or(0)
            .min(MAX_COLUMNS);
        if columns == 0
            || rows
                .iter()
                .all(|r| r.iter().all(|c| c.md.trim().is_empty()))
        {
            return;
        }
        if let Some(caption) = self.caption.filter(|c| !c.md.trim().is_empty()) {
            w.brk(1);
            line(w, &caption.md, &caption.text, caption.links);
            w.brk(1);
        }
        for (k, row) in rows.into_iter().enumerate() {
            let mut md = String::from("|");
            let mut text = String::new();
            let mut links = Vec::new();
            let mut used = 0;
            for cell in row {
                if used >= columns {
                    break;
                }
                let content = cell.md.trim();
                let lead = cell.md.len() - cell.md.trim_start().len();
                md.push(' ');
                let at = md.len();
                md.push_str(content);
                links.extend(cell.links.into_iter().filter_map(|l| {
                    let start = l.range.start.checked_sub(lead)?;
                    let end = l.range.end.checked_sub(lead)?;
                    (end <= content.len()).then(|| LinkSpan {
                        range: at + start..at + end,
                        url: l.url,
                    })
                }));
                md.push_str(" |");
                let cell_text = cell.text.trim();
                if !cell_text.is_empty() {
                    if !text.is_empty() {
                        text.push('\t');
                    }
                    text.push_str(cell_text);
                }
                used += 1;
                for _ in 1..cell.span {
                    if used >= columns {
                        break;
                    }
                    md.push_str("  |");
                    used += 1;
                }
            }
            for _ in used..columns {
                md.push_str("  |");
            }
            w.brk(1);
            line(w, &md, &text, links);
            if k == 0 {
                let mut sep = String::from("|");
                for _ in 0..columns {
                    sep.push_str(" --- |");
                }
                w.brk(1);
                w.line_with_links(&sep, "", Vec::new());
            }
        }
        w.brk(1);
    }
}

fn line(w: &mut Writer, md: &str, text: &str, links: Vec<LinkSpan>) {
    w.line_with_links(md, text, links);
}
