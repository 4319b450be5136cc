//! The shape of the generated site: the pages `/p/{i}` form a tree of the
//! configured fanout rooted at `/p/0`, so every page is reachable from `/`.
//! Plain pages and script-built ones link their children by it alike.

use std::ops::Range;

use crate::config::SiteConfig;

/// A fanout of 0 would leave every page but `/p/0` unreachable.
pub(crate) fn fanout(config: &SiteConfig) -> usize {
    config.fanout.max(1)
}

/// Indexes of page `i`'s children in the tree.
pub(crate) fn children(config: &SiteConfig, i: usize) -> Range<usize> {
    let f = fanout(config);
    let first = i.saturating_mul(f).saturating_add(1).min(config.pages);
    first..first.saturating_add(f).min(config.pages)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pages: usize, fanout: usize) -> SiteConfig {
        SiteConfig {
            pages,
            fanout,
            ..SiteConfig::default()
        }
    }

    #[test]
    fn children_form_a_tree() {
        let cases = [
            (100, 10, 0, 1..11),
            (100, 10, 9, 91..100),
            (100, 10, 10, 100..100),
            (5, 0, 2, 3..4),
            (3, 10, 0, 1..3),
            (0, 10, 0, 0..0),
        ];
        for (pages, fanout, i, want) in cases {
            assert_eq!(
                children(&config(pages, fanout), i),
                want,
                "pages={pages} fanout={fanout} i={i}"
            );
        }
    }

    #[test]
    fn every_page_has_exactly_one_tree_parent() {
        for (pages, fanout) in [(100, 10), (37, 3), (10, 1), (1, 5)] {
            let cfg = config(pages, fanout);
            let mut parents = vec![0; pages];
            for i in 0..pages {
                for c in children(&cfg, i) {
                    parents[c] += 1;
                }
            }
            assert_eq!(parents[0], 0);
            assert!(
                parents[1..].iter().all(|&n| n == 1),
                "pages={pages} fanout={fanout}"
            );
        }
    }
}
