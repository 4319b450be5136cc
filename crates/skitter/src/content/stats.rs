//! Text totals per node, summed bottom-up in one reverse pass (children come
//! after their parent in the flat tree): each subtree's text length, link
//! text length, commas and paragraphs, without walking any subtree twice.
//! The bytes of each text node are counted once per page ([`TextCounts`]),
//! however many passes sum them: counting in each of the extraction's three
//! passes was 7% of a `skitter bench --markdown` crawl's instructions.

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

/// Each text node's non-whitespace bytes and commas; zero for other nodes.
pub(crate) struct TextCounts {
    text: Vec<u32>,
    commas: Vec<u32>,
}

impl TextCounts {
    /// Counts the text nodes of `tree`.
    pub(crate) fn new(tree: &Tree<'_>) -> TextCounts {
        let n = tree.len();
        let mut c = TextCounts {
            text: vec![0; n],
            commas: vec![0; n],
        };
        for i in 0..n {
            if tree.tag(i) == Tag::Text {
                let bytes = tree.text(i).unwrap_or("").as_bytes();
                let (spaces, commas) = count(bytes);
                c.text[i] = u32::try_from(bytes.len() - spaces).unwrap_or(u32::MAX);
                c.commas[i] = u32::try_from(commas).unwrap_or(u32::MAX);
            }
        }
        c
    }
}

/// The ASCII whitespace (as [`u8::is_ascii_whitespace`]: no vertical tab)
/// and the commas of `bytes`.
///
/// Branch-free sums into `u8` lanes, a chunk at a time, which the compiler
/// turns into vector code; `filter(..).count()` did not vectorise and took
/// about 12 instructions a byte.
fn count(bytes: &[u8]) -> (usize, usize) {
    let (mut spaces, mut commas) = (0, 0);
    for chunk in bytes.chunks(255) {
        let (mut s, mut c) = (0u8, 0u8);
        for &b in chunk {
            let blank = (b == b' ') | ((b.wrapping_sub(b'\t') < 5) & (b != 0x0b));
            s = s.wrapping_add(u8::from(blank));
            c = c.wrapping_add(u8::from(b == b','));
        }
        spaces += usize::from(s);
        commas += usize::from(c);
    }
    (spaces, commas)
}

impl Stats {
    /// The totals of `tree`, counting only nodes that `keep`.
    pub(crate) fn new(tree: &Tree<'_>, counts: &TextCounts, keep: &[bool]) -> Stats {
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
                    s.text[i] = counts.text[i];
                    s.commas[i] = counts.commas[i];
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            rng_seed: proptest::test_runner::RngSeed::Fixed(33),
            ..ProptestConfig::default()
        })]
        /// The chunked count is the plain one, across chunk edges.
        #[test]
        fn counts_are_the_plain_counts(bytes in proptest::collection::vec(
            prop_oneof![Just(b' '), Just(b','), Just(b'\t'), Just(0x0b), Just(0x0c), Just(b'\r'),
                        Just(b'\n'), Just(b'a'), Just(0xe9), Just(0x1c)],
            0..700,
        )) {
            let spaces = bytes.iter().filter(|b| b.is_ascii_whitespace()).count();
            let commas = bytes.iter().filter(|&&b| b == b',').count();
            prop_assert_eq!(super::count(&bytes), (spaces, commas));
        }
    }
}
