//! Text totals per node, summed bottom-up in one reverse pass (children come
//! after their parent in the flat tree): each subtree's text length, link
//! text length, commas and paragraphs, without walking any subtree twice.

use super::tree::{Tag, Tree};

/// Totals over each node's kept subtree.
pub(crate) struct Stats {
    /// Non-whitespace bytes of text.
    pub text: Vec<u32>,
    /// Of which inside links.
    pub link: Vec<u32>,
    /// Commas in the text (a sign of prose).
    pub commas: Vec<u32>,
    /// Paragraph-like elements (`p`, `pre`, `blockquote`).
    pub paras: Vec<u32>,
    /// Images and code blocks: content that has little text.
    pub media: Vec<u32>,
}

impl Stats {
    /// The totals of `tree`, counting only nodes that `keep`.
    pub(crate) fn new(tree: &Tree<'_>, keep: &[bool]) -> Stats {
        let n = tree.len();
        let mut s = Stats {
            text: vec![0; n],
            link: vec![0; n],
            commas: vec![0; n],
            paras: vec![0; n],
            media: vec![0; n],
        };
        for i in (0..n).rev() {
            if !keep[i] {
                continue;
            }
            match tree.tag(i) {
                Tag::Text => {
                    // One pass over the bytes for both counts: this runs on
                    // every text byte of the page, once per pass that asks.
                    let (mut text, mut commas) = (0u32, 0u32);
                    for &b in tree.text(i).unwrap_or("").as_bytes() {
                        text = text.wrapping_add(u32::from(!b.is_ascii_whitespace()));
                        commas = commas.wrapping_add(u32::from(b == b','));
                    }
                    s.text[i] = text;
                    s.commas[i] = commas;
                }
                Tag::A => s.link[i] = s.text[i],
                Tag::P | Tag::Blockquote => s.paras[i] += 1,
                Tag::Pre => {
                    s.paras[i] += 1;
                    s.media[i] += 1;
                }
                Tag::Img | Tag::Picture | Tag::Table | Tag::Math => s.media[i] += 1,
                _ => {}
            }
            if let Some(p) = tree.parent(i) {
                s.text[p] = s.text[p].saturating_add(s.text[i]);
                s.link[p] = s.link[p].saturating_add(s.link[i]);
                s.commas[p] = s.commas[p].saturating_add(s.commas[i]);
                s.paras[p] = s.paras[p].saturating_add(s.paras[i]);
                s.media[p] = s.media[p].saturating_add(s.media[i]);
            }
        }
        s
    }

    /// The share of node `i`'s text inside links.
    pub(crate) fn link_density(&self, i: usize) -> f64 {
        if self.text[i] == 0 {
            return 0.0;
        }
        self.link[i] as f64 / self.text[i] as f64
    }
}
