//! Choosing the main content: the subtrees of the page that hold its
//! article, by markup where the page says so, else by scoring.
//!
//! A `<main>`, `<article>`, `[role=main]` or `[itemprop=articleBody]` that
//! holds most of the page's text is taken (the innermost such). Otherwise
//! the page is scored the way Readability does: each paragraph-like element
//! with some text gives points (one, plus its commas, plus one per hundred
//! bytes up to three) to its parent, half to its grandparent and a sixth to
//! the level above; containers start from a weight for their tag and for the
//! words of their class and id; a container's score is scaled by the share
//! of its text outside links. The best container is kept with those of its
//! siblings that score close to it or are prose paragraphs.

use super::stats::Stats;
use super::tree::{Tag, Tree};

/// The share of the page's text a marked-up main element must hold.
const MAIN_SHARE: f64 = 0.5;

/// The roots of the main content of `tree`, in document order, under `top`
/// (the body).
pub(crate) fn main_roots(tree: &Tree<'_>, keep: &[bool], stats: &Stats, top: usize) -> Vec<usize> {
    let total = stats.text[top] as f64;
    if total == 0.0 {
        return vec![top];
    }
    let marked = (top..tree.end(top))
        .filter(|&i| keep[i] && is_marked_main(tree, i))
        .filter(|&i| stats.text[i] as f64 >= MAIN_SHARE * total)
        .min_by_key(|&i| stats.text[i]);
    if let Some(main) = marked {
        return vec![main];
    }
    scored(tree, keep, stats, top).unwrap_or_else(|| vec![top])
}

fn is_marked_main(tree: &Tree<'_>, i: usize) -> bool {
    matches!(tree.tag(i), Tag::Main | Tag::Article)
        || tree
            .attr(i, "role")
            .is_some_and(|r| r.trim().eq_ignore_ascii_case("main"))
        || tree
            .attr(i, "itemprop")
            .is_some_and(|p| p.split_whitespace().any(|w| w == "articleBody"))
}

fn scored(tree: &Tree<'_>, keep: &[bool], stats: &Stats, top: usize) -> Option<Vec<usize>> {
    let n = tree.len();
    let mut score = vec![f64::NAN; n];
    for (i, _) in keep
        .iter()
        .enumerate()
        .take(tree.end(top))
        .skip(top)
        .filter(|(_, k)| **k)
    {
        if !is_paragraph(tree, i) || stats.text[i] < 25 {
            continue;
        }
        let points = 1.0 + stats.commas[i] as f64 + (stats.text[i] as f64 / 100.0).floor().min(3.0);
        let mut at = tree.parent(i);
        for level in 0..3 {
            let Some(a) = at else { break };
            if a < top || tree.tag(a) == Tag::Document {
                break;
            }
            if score[a].is_nan() {
                score[a] = base_score(tree, a);
            }
            score[a] += points / [1.0, 2.0, 6.0][level];
            at = tree.parent(a);
        }
    }
    let mut best: Option<(usize, f64)> = None;
    for (i, s) in score.iter_mut().enumerate() {
        if s.is_nan() {
            continue;
        }
        *s *= 1.0 - stats.link_density(i);
        if best.is_none_or(|(_, b)| *s > b) {
            best = Some((i, *s));
        }
    }
    let (mut main, main_score) = best?;
    // An only child says nothing its parent does not: climb.
    while let Some(p) = tree.parent(main) {
        if p < top
            || tree
                .children(p)
                .filter(|&c| keep[c] && tree.tag(c) != Tag::Text)
                .count()
                != 1
        {
            break;
        }
        main = p;
    }
    let Some(parent) = tree.parent(main).filter(|&p| p >= top) else {
        return Some(vec![main]);
    };
    let threshold = (main_score * 0.2).max(10.0);
    let main_class = tree.attr(main, "class").unwrap_or("");
    let roots = tree
        .children(parent)
        .filter(|&c| keep[c] && tree.tag(c) != Tag::Text)
        .filter(|&c| {
            if c == main {
                return true;
            }
            let bonus = if !main_class.is_empty() && tree.attr(c, "class") == Some(main_class) {
                main_score * 0.2
            } else {
                0.0
            };
            let s = if score[c].is_nan() { 0.0 } else { score[c] };
            if s + bonus >= threshold {
                return true;
            }
            if tree.tag(c) == Tag::P {
                let density = stats.link_density(c);
                let len = stats.text[c];
                return (len > 80 && density < 0.25)
                    || (len > 0 && density == 0.0 && stats.commas[c] > 0);
            }
            false
        })
        .collect();
    Some(roots)
}

/// Whether element `i` is a paragraph for scoring: a `p`, `pre`, `td`,
/// `section` or subheading, or a `div` holding no block element.
fn is_paragraph(tree: &Tree<'_>, i: usize) -> bool {
    match tree.tag(i) {
        Tag::P | Tag::Pre | Tag::Td | Tag::Section | Tag::H(2..=6) => true,
        Tag::Div => !tree.children(i).any(|c| tree.tag(c).is_block()),
        _ => false,
    }
}

/// A container's score before its paragraphs' points: by tag and by the
/// words of its class and id.
fn base_score(tree: &Tree<'_>, i: usize) -> f64 {
    let tag = match tree.tag(i) {
        Tag::Div | Tag::Article | Tag::Main => 5.0,
        Tag::Pre | Tag::Td | Tag::Blockquote => 3.0,
        Tag::Address | Tag::Ol | Tag::Ul | Tag::Dl | Tag::Dd | Tag::Dt | Tag::Li | Tag::Form => {
            -3.0
        }
        Tag::H(_) | Tag::Th => -5.0,
        _ => 0.0,
    };
    tag + class_weight(tree, i)
}

const POSITIVE: &[&str] = &[
    "article", "body", "content", "entry", "hentry", "h-entry", "main", "page", "post", "text",
    "blog", "story",
];
const NEGATIVE: &[&str] = &[
    "hidden",
    "banner",
    "combx",
    "comment",
    "com-",
    "contact",
    "foot",
    "masthead",
    "media",
    "meta",
    "outbrain",
    "promo",
    "related",
    "scroll",
    "share",
    "shoutbox",
    "sidebar",
    "skyscraper",
    "sponsor",
    "shopping",
    "tags",
    "tool",
    "widget",
];

/// +25 for each of class and id that reads like content, −25 for each that
/// reads like furniture.
pub(crate) fn class_weight(tree: &Tree<'_>, i: usize) -> f64 {
    let mut weight = 0.0;
    for name in ["class", "id"] {
        let Some(value) = tree.attr(i, name) else {
            continue;
        };
        let lower = value
            .get(..value.len().min(256))
            .unwrap_or("")
            .to_ascii_lowercase();
        if NEGATIVE.iter().any(|w| lower.contains(w)) {
            weight -= 25.0;
        }
        if POSITIVE.iter().any(|w| lower.contains(w)) {
            weight += 25.0;
        }
    }
    weight
}
