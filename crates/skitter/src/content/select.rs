//! Choosing the main content: the subtrees of the page that hold its
//! article, by markup where the page says so, else by scoring.
//!
//! A `<main>`, `<article>`, `[role=main]` or `[itemprop=articleBody]` that
//! holds most of the page's text is taken (the innermost such); scoring
//! inside it narrows it only to candidates that keep most of its text. Otherwise
//! the page is scored the way Readability does: each paragraph-like element
//! with some text gives points (one, plus its commas, plus one per hundred
//! bytes up to three) to its parent, half to its grandparent and a sixth to
//! the level above; containers start from a weight for their tag and for the
//! words of their class and id; a container's score is scaled by the share
//! of its text outside links. The best container is kept with those of its
//! siblings that score close to it or are prose paragraphs, with the list a
//! picked paragraph ending in a colon leads into ([`with_led_lists`]), the
//! tables of contents beside the pick ([`with_toc`]), and the article's
//! lead, the standfirst above its body ([`with_lead`]). A best
//! list item or table part stands for its list or table, and a section
//! with sections of its kind beside it (a reference page's) for all of
//! them. Then the boxes inside it that read as furniture are cleaned out
//! ([`clean`]).

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

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
    let top = marked.unwrap_or(top);
    let text_of =
        |roots: &[usize]| -> u64 { roots.iter().map(|&r| u64::from(stats.text[r])).sum() };
    let mut roots = scored(tree, keep, stats, top, true).unwrap_or_else(|| vec![top]);
    // Too little text for an article while the page has more: a content
    // word misled the scoring (DocBook's `div.titlepage`, holding the
    // heading alone, reads "page"). Score again without content words and
    // keep what holds more, as Readability retries without its class
    // weights; furniture words still weigh, or a long menu would win.
    let short = text_of(&roots) < SHORT_PICK && u64::from(stats.text[top]) > 2 * text_of(&roots);
    // Scored again only then: the scoring is most of the selection's work.
    if let Some(plain) = short
        .then(|| scored(tree, keep, stats, top, false))
        .flatten()
    {
        // Not a menu: on a short page the furniture rules may not have run
        // (they would have left next to nothing), and a book's table of
        // contents holds more text than the page.
        let links: u64 = plain.iter().map(|&r| u64::from(stats.link[r])).sum();
        let text = text_of(&plain);
        if text > text_of(&roots) && (links as f64) < MENU_LINKS * text as f64 {
            roots = plain;
        }
    }
    // Inside the page's own marked-up article, scoring only narrows it when
    // what it picks holds most of the article: a short page (an index, a
    // page of a few paragraphs around a list) would otherwise lose its
    // heading and list to its longest paragraph's box.
    let picked = text_of(&roots);
    if marked.is_some() && (picked as f64) < MARKED_KEPT * f64::from(stats.text[top]) {
        return vec![top];
    }
    // Nor does it narrow the article to its code example, which can hold
    // most of a short page's text (rustdoc's page of one function: the
    // declaration, a sentence, then an example of twenty lines): the
    // example is the article's, not the article.
    if marked.is_some() && picked < u64::from(stats.text[top]) {
        let code = code_texts(tree, stats);
        let in_code: u64 = roots.iter().map(|&r| u64::from(code[r])).sum();
        if in_code > 0 && in_code as f64 >= CODE_BOX_SHARE * picked as f64 {
            return vec![top];
        }
    }
    let roots = with_led_lists(tree, keep, stats, roots);
    with_lead(tree, keep, stats, with_toc(tree, keep, stats, roots))
}

/// `roots` with the list each paragraph among them leads into: a root
/// paragraph ending in a colon ("…we give you a list here so that you are
/// aware of what is possible:") and the list right after it, whose short
/// items score nothing and which the paragraph would dangle without.
fn with_led_lists(tree: &Tree<'_>, keep: &[bool], stats: &Stats, roots: Vec<usize>) -> Vec<usize> {
    let mut led = Vec::new();
    for &r in &roots {
        if tree.tag(r) != Tag::P || !ends_with_colon(tree, keep, r) {
            continue;
        }
        let Some(n) = next_sibling(tree, keep, stats, r) else {
            continue;
        };
        let list =
            matches!(tree.tag(n), Tag::Ul | Tag::Ol | Tag::Dl) || is_list_shaped(tree, stats, n);
        // Roots are in document order: a lookup is a binary search, so a
        // page of thousands of such paragraphs costs no square.
        if list && roots.binary_search(&n).is_err() {
            led.push(n);
        }
    }
    if led.is_empty() {
        return roots;
    }
    let mut roots = roots;
    roots.extend(led);
    roots.sort_unstable();
    roots.dedup();
    roots
}

/// Whether the last kept text of `p` ends in a colon. One backward look
/// through `p`'s subtree, which no other root shares.
fn ends_with_colon(tree: &Tree<'_>, keep: &[bool], p: usize) -> bool {
    (p..tree.end(p))
        .rev()
        .filter(|&j| keep[j])
        .find_map(|j| tree.text(j).map(str::trim_end).filter(|t| !t.is_empty()))
        .is_some_and(ends_in_colon)
}

/// `roots` with the tables of contents among their siblings
/// ([`is_list_wrapper`]): a chapter's list of its pages beside its
/// introduction (DocBook's `div.toc` in a `div.chapter`) scores nothing,
/// all links, but is the chapter's own. Added after the picks are weighed,
/// where it would read as a menu.
fn with_toc(tree: &Tree<'_>, keep: &[bool], stats: &Stats, mut roots: Vec<usize>) -> Vec<usize> {
    let Some(parent) = roots.first().and_then(|&r| tree.parent(r)) else {
        return roots;
    };
    if roots.iter().any(|&r| tree.parent(r) != Some(parent)) {
        return roots;
    }
    let tocs: Vec<usize> = tree
        .children(parent)
        .filter(|&c| keep[c] && is_list_wrapper(tree, stats, c) && roots.binary_search(&c).is_err())
        .collect();
    if !tocs.is_empty() {
        roots.extend(tocs);
        roots.sort_unstable();
    }
    roots
}

/// Text (non-whitespace bytes) below which a pick is scored again without
/// class weights: Readability's `charThreshold` (500 characters).
const SHORT_PICK: u64 = 500;

/// The share of link text above which a pick scored again is a menu.
const MENU_LINKS: f64 = 0.5;

/// How far above the first root the article holding it is looked for.
const LEAD_LEVELS: usize = 4;

/// The prose a lead must have (non-whitespace bytes): a standfirst is a
/// sentence or two; a byline or a date is not.
const LEAD_TEXT: u32 = 60;

/// `roots` with the article's lead in front: the standfirst (dek, teaser,
/// "Vorspann") that news and blog templates put between the headline and
/// the body, in the article's header. Scoring picks the body, whose
/// paragraphs score, and the lead sits outside it; Readability and
/// trafilatura keep it as content. Only prose counts: a paragraph (or a
/// `div` of inline text, or a subheading) of [`LEAD_TEXT`] bytes or more,
/// nearly free of links, holding a sentence's end, inside the same article
/// (`article`, `main`, or a container whose class or id says article,
/// post, entry or story) and before its body. Bylines, dates and "share"
/// rows are short or are links, and furniture was dropped before.
fn with_lead(tree: &Tree<'_>, keep: &[bool], stats: &Stats, roots: Vec<usize>) -> Vec<usize> {
    let Some(&first) = roots.first() else {
        return roots;
    };
    let mut scope = None;
    let mut at = tree.parent(first);
    for _ in 0..LEAD_LEVELS {
        let Some(a) = at.filter(|&a| tree.tag(a) != Tag::Body) else {
            break;
        };
        if is_marked_main(tree, a) || names_article(tree, a) {
            scope = Some(a);
            break;
        }
        at = tree.parent(a);
    }
    let Some(scope) = scope else {
        return roots;
    };
    let mut leads = Vec::new();
    let mut i = scope + 1;
    while i < first {
        if !keep[i] {
            i = tree.end(i);
            continue;
        }
        // An ancestor of the first root holds the body: look inside it.
        if tree.end(i) > first {
            i += 1;
            continue;
        }
        if is_lead(tree, stats, i) {
            leads.push(i);
            i = tree.end(i);
        } else {
            i += 1;
        }
    }
    if leads.is_empty() {
        return roots;
    }
    leads.extend(roots);
    leads
}

/// Whether `i`'s class or id names an article's container.
fn names_article(tree: &Tree<'_>, i: usize) -> bool {
    named(tree, i, &["article", "artikel", "post", "entry", "story"])
}

/// Whether a word of `i`'s class or id is one of `names` (ASCII case
/// ignored).
fn named(tree: &Tree<'_>, i: usize, names: &[&str]) -> bool {
    ["class", "id"].iter().any(|attr| {
        tree.attr(i, attr).is_some_and(|v| {
            super::prune::words(v)
                .into_iter()
                .any(|w| names.iter().any(|n| w.eq_ignore_ascii_case(n)))
        })
    })
}

/// Whether `i` reads as an article's lead (see [`with_lead`]).
fn is_lead(tree: &Tree<'_>, stats: &Stats, i: usize) -> bool {
    let prose_block = match tree.tag(i) {
        Tag::P | Tag::H(2) => true,
        Tag::Div => !tree.children(i).any(|c| tree.tag(c).is_block()),
        _ => false,
    };
    if !prose_block || stats.text[i] < LEAD_TEXT || stats.link_density(i) > 0.2 {
        return false;
    }
    if class_weight(tree, i) < 0.0 {
        return false;
    }
    // A sentence's end, in its text nodes (a `p` or an inline `div` holds
    // no block, so the scan stays inside this one block).
    (i + 1..tree.end(i)).any(|j| {
        tree.text(j)
            .is_some_and(|t| t.contains(['.', '?', '!', '…', '。']))
    })
}

/// The share of a marked-up main element's text that scoring inside it must
/// keep, or the whole element is taken.
const MARKED_KEPT: f64 = 0.6;

fn is_marked_main(tree: &Tree<'_>, i: usize) -> bool {
    matches!(tree.tag(i), Tag::Main | Tag::Article)
        || tree
            .attr(i, "role")
            .is_some_and(|r| r.trim().eq_ignore_ascii_case("main"))
        || tree
            .attr(i, "itemprop")
            .is_some_and(|p| p.split_whitespace().any(|w| w == "articleBody"))
}

/// The best-scoring container and its siblings; `content_words`: whether
/// class and id words that read as content weigh in (see [`class_weight`];
/// furniture words always do).
fn scored(
    tree: &Tree<'_>,
    keep: &[bool],
    stats: &Stats,
    top: usize,
    content_words: bool,
) -> Option<Vec<usize>> {
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
        for level in 0..5 {
            let Some(a) = at else { break };
            if a < top || tree.tag(a) == Tag::Document {
                break;
            }
            if score[a].is_nan() {
                score[a] = base_score(tree, a, content_words);
            }
            let divider = match level {
                0 => 1.0,
                1 => 2.0,
                l => l as f64 * 3.0,
            };
            score[a] += points / divider;
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
    let (mut main, mut main_score) = best?;
    let known = |i: usize| (!score[i].is_nan()).then_some(score[i]);
    // Several of the best candidates close in score under one ancestor: the
    // content is split across them, take the ancestor.
    let mut ranked: Vec<(usize, f64)> = score
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.is_nan())
        .map(|(i, s)| (i, *s))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    let close: Vec<usize> = ranked
        .iter()
        .skip(1)
        .take(4)
        .filter(|(_, s)| *s >= main_score * 0.75)
        .map(|(i, _)| *i)
        .collect();
    if close.len() >= 3 {
        let mut at = tree.parent(main);
        while let Some(a) = at.filter(|&a| a >= top) {
            let holds = close.iter().filter(|&&c| c > a && c < tree.end(a)).count();
            if holds >= 3 {
                main = a;
                break;
            }
            at = tree.parent(a);
        }
    }
    // A parent scoring higher than the best holds it and more of the same.
    let mut last = known(main).unwrap_or(main_score);
    let floor = last / 3.0;
    let mut at = tree.parent(main);
    while let Some(a) = at.filter(|&a| a >= top && tree.tag(a) != Tag::Body) {
        if let Some(s) = known(a) {
            if s < floor {
                break;
            }
            if s > last {
                main = a;
                break;
            }
            last = s;
        }
        at = tree.parent(a);
    }
    main_score = known(main).unwrap_or(main_score);
    // An item of a list (a reference's `dd` holding one option's long
    // example) is one of many, a part of a table is the table's: the list
    // or table is the unit.
    while matches!(
        tree.tag(main),
        Tag::Li | Tag::Dd | Tag::Dt | Tag::Tr | Tag::Td | Tag::Th | Tag::Thead | Tag::Tbody
    ) {
        match tree.parent(main) {
            Some(p) if p > top => main = p,
            _ => break,
        }
    }
    // An only child says nothing its parent does not, nor does a box
    // beside nothing but its own title (DocBook's `div.table` and
    // `div.example`: a `p.title`, then the contents): climb, so the box's
    // siblings (the section's prose and code around a lone table or
    // example) are weighed as the content's.
    while let Some(p) = tree.parent(main) {
        if p <= top
            || !tree
                .children(p)
                .filter(|&c| c != main && keep[c] && tree.tag(c) != Tag::Text)
                .all(|c| is_title(tree, stats, c))
        {
            break;
        }
        main = p;
    }
    // The best box is a part of a section among sections of one kind (a
    // reference page's `div.refsect1`s: synopsis, description, options,
    // examples), where the long part (the options' list) outscores the
    // rest: the content is every section, so start from the section.
    let mut sections = false;
    let mut at = tree.parent(main);
    for _ in 0..SECTION_LEVELS {
        let Some(a) = at.filter(|&a| a > top) else {
            break;
        };
        if has_twin(tree, keep, a) {
            main = a;
            sections = true;
        }
        at = tree.parent(a);
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
            // Every section of the kind chosen, however short (an
            // "Examples" of one line and a terminal session).
            if c == main || sections && twins(tree, c, main) {
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
            is_code_box(tree, keep, stats, c)
        })
        .collect();
    Some(roots)
}

/// Whether `c`, a sibling of the best box, is a box of worked code: it
/// holds a code block and is mostly not links, or is nearly all that code
/// block however many links the code has. Documentation puts a
/// procedure's steps or a function's synopsis beside the example that
/// scores best (PostgreSQL's `div.procedure` of `CREATE FUNCTION` steps
/// next to its `div.example`); their paragraphs score in list items, too
/// deep to lift the box, but the code is what the reader came for. rustdoc
/// writes an item's declaration as a `pre` in a `div.item-decl`, each type
/// in it a link: the signature is the page's first content.
fn is_code_box(tree: &Tree<'_>, keep: &[bool], stats: &Stats, c: usize) -> bool {
    let Some(pre) = (c..tree.end(c)).find(|&i| keep[i] && tree.tag(i) == Tag::Pre) else {
        return false;
    };
    stats.link_density(c) < 0.25 || is_its_code(stats.text[pre], stats.text[c])
}

/// The share of a box's text its code block holds for the box to be that
/// code, links or not.
const CODE_BOX_SHARE: f64 = 0.9;

/// Whether a box of `text` bytes is its code block, holding `code` of them.
fn is_its_code(code: u32, text: u32) -> bool {
    code > 0 && f64::from(code) >= CODE_BOX_SHARE * f64::from(text)
}

/// The kept text of each node's subtree that is inside code blocks, in one
/// backward pass (a node's descendants come after it).
fn code_texts(tree: &Tree<'_>, stats: &Stats) -> Vec<u32> {
    let mut code = vec![0u32; tree.len()];
    for i in (0..tree.len()).rev() {
        if tree.tag(i) == Tag::Pre {
            code[i] = stats.text[i];
        }
        if code[i] > 0
            && let Some(p) = tree.parent(i)
        {
            code[p] = code[p].saturating_add(code[i]);
        }
    }
    code
}

/// The most text (non-whitespace bytes) a box's title holds.
const TITLE_TEXT: u32 = 100;

/// Whether `c` is a title of the box beside it: short, and a heading or a
/// caption, or named a title or caption by its class or id.
fn is_title(tree: &Tree<'_>, stats: &Stats, c: usize) -> bool {
    if stats.text[c] > TITLE_TEXT {
        return false;
    }
    matches!(tree.tag(c), Tag::H(_) | Tag::Caption | Tag::Figcaption)
        || named(tree, c, &["title", "caption"])
}

/// How far above the best box sections with twins are looked for.
const SECTION_LEVELS: usize = 3;

/// Whether a sibling of `i` has its tag and its (non-empty) class: a
/// section with sections of its kind around it.
fn has_twin(tree: &Tree<'_>, keep: &[bool], i: usize) -> bool {
    if !matches!(tree.tag(i), Tag::Div | Tag::Section) {
        return false;
    }
    if tree.attr(i, "class").is_none_or(|c| c.trim().is_empty()) {
        return false;
    }
    let Some(parent) = tree.parent(i) else {
        return false;
    };
    tree.children(parent)
        .any(|c| c != i && keep[c] && twins(tree, c, i))
}

/// Whether `a` and `b` have one tag and one class.
fn twins(tree: &Tree<'_>, a: usize, b: usize) -> bool {
    tree.tag(a) == tree.tag(b) && tree.attr(a, "class") == tree.attr(b, "class")
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

/// Drops, inside the chosen `roots`, the boxes that read as furniture once
/// the content is known (as Readability's conditional cleaning does): blocks
/// with few commas whose class words say furniture, that are mostly links,
/// or that hold a few words and nothing else; and short paragraphs that are
/// mostly a link ("Read more: …").
pub(crate) fn clean(tree: &Tree<'_>, keep: &mut [bool], stats: &Stats, roots: &[usize]) {
    let before: u64 = roots.iter().map(|&r| stats.text[r] as u64).sum();
    let mut cleaned = keep.to_vec();
    let mut dropped = 0u64;
    let mut code: Option<Vec<bool>> = None;
    let mut code_text: Option<Vec<u32>> = None;
    for &root in roots {
        let mut i = root + 1;
        // What holds most of the content is the content, however many links
        // it has (a documentation index: a list of its pages).
        let most = stats.text[root] / 2;
        // The end of the content's own list being walked: the lists nested
        // in its items are its own too (a table of contents' sub-entries).
        let mut own_until = 0;
        while i < tree.end(root) {
            // A list standing directly in the content (an index's list of
            // pages, a page of steps) is part of it, and so is one in a
            // table's cell (a general index: a term's entries), or a
            // wrapper standing for its lists (Sphinx's table of contents);
            // lists of links inside boxes go with their box.
            let own_list = match tree.tag(i) {
                Tag::Ul | Tag::Ol | Tag::Dl => {
                    i < own_until || in_content(tree, i, root) || in_cell(tree, i)
                }
                // Inside the content's own list, a wrapper of lists is its
                // too; elsewhere only a named one, wherever it stands in
                // the content (DocBook's sits in a `div.chapter`).
                Tag::Div if i < own_until => is_list_shaped(tree, stats, i),
                Tag::Div => is_list_wrapper(tree, stats, i),
                _ => false,
            };
            if own_list && i >= own_until {
                own_until = tree.end(i);
            }
            // An aside holding code is the article's own (see
            // `prune::furniture`), whatever its class says ("sidebar").
            let own_aside = tree.tag(i) == Tag::Aside
                && code.get_or_insert_with(|| super::prune::code_holders(tree))[i];
            // A section of the document, named by its own heading as
            // docutils names each (`<section id="numeric-objects">` headed
            // "Numeric Objects"), is a chapter, not a box, even when all it
            // holds is its heading and the list of its pages.
            let own_section = tree.tag(i) == Tag::Section
                && tree
                    .attr(i, "id")
                    .is_some_and(|id| super::prune::names_own_heading(tree, i, id))
                && in_content(tree, i, root);
            if cleaned[i]
                && !own_list
                && !own_aside
                && !own_section
                && stats.text[i] <= most
                && drops_in_content(tree, stats, i)
                && !is_doc_box(tree, i)
                // A box that is nearly all its code block is that code,
                // however many links the code has (rustdoc's declaration
                // of an item, each type in it a link).
                && !is_its_code(code_text.get_or_insert_with(|| code_texts(tree, stats))[i], stats.text[i])
            {
                dropped += stats.text[i] as u64;
                let end = tree.end(i);
                cleaned[i..end].fill(false);
                i = end;
            } else if tree.tag(i) == Tag::Pre {
                i = tree.end(i);
            } else {
                i += 1;
            }
        }
    }
    for &root in roots {
        dropped += drop_related_lists(tree, &mut cleaned, stats, root);
    }
    // The roots are apart in the page (a section's title box, then its
    // body): what ends the content is at the end of the last of them.
    if let Some(&last) = roots.iter().max() {
        dropped += drop_dangling_leads(tree, &mut cleaned, stats, last);
    }
    // Cleaning that would leave next to nothing misread the content.
    if (dropped as f64) < 0.9 * before as f64 {
        keep.copy_from_slice(&cleaned);
    }
}

/// The most text (non-whitespace bytes) a lead-in holds: "Das könnte dich
/// auch interessieren", "Read also:".
const LEAD_IN_TEXT: u32 = 100;

/// Drops, from the end of the content under `root`, the lead-ins
/// ([`is_lead_in`]) left leading into nothing: after which the content
/// holds no text, image, table or code, because cleaning dropped what they
/// introduced (a box of links to other articles). Returns the text
/// dropped.
fn drop_dangling_leads(tree: &Tree<'_>, cleaned: &mut [bool], stats: &Stats, root: usize) -> u64 {
    let mut dropped = 0;
    // Whether cleaning dropped text after `i`: a lead-in is dropped only
    // when it led into such text (a box of links gone as furniture), not
    // when nothing ever followed it (rustdoc's last `impl` heading, itself
    // the content).
    let mut led_into_dropped = false;
    let mut i = tree.end(root);
    // Backwards in document order: a node's descendants come before it.
    while i > root + 1 {
        i -= 1;
        if !cleaned[i] {
            led_into_dropped |= tree.tag(i) == Tag::Text && stats.text[i] > 0;
            continue;
        }
        match tree.tag(i) {
            Tag::Text if stats.text[i] > 0 => {}
            Tag::Img | Tag::Picture | Tag::Table | Tag::Math | Tag::Pre => return dropped,
            _ => continue,
        }
        let Some(block) = std::iter::successors(tree.parent(i), |&a| tree.parent(a))
            .take_while(|&a| a > root)
            .find(|&a| tree.tag(a).is_block())
        else {
            return dropped;
        };
        if !led_into_dropped || !is_lead_in(tree, stats, block, tree.text(i).unwrap_or("")) {
            return dropped;
        }
        dropped += u64::from(stats.text[block]);
        cleaned[block..tree.end(block)].fill(false);
        i = block;
    }
    dropped
}

/// Whether `block`, whose last text is `last`, leads into what follows it:
/// short, and a heading (not a sentence: magazines end an article with
/// pull quotes set as headings) or a line ending in a colon.
fn is_lead_in(tree: &Tree<'_>, stats: &Stats, block: usize, last: &str) -> bool {
    let last = last.trim_end();
    stats.text[block] <= LEAD_IN_TEXT
        && match tree.tag(block) {
            Tag::H(_) => !last.ends_with('.'),
            Tag::P | Tag::Div => ends_in_colon(last),
            _ => false,
        }
}

/// Whether `text` ends in a colon, Latin or full-width.
fn ends_in_colon(text: &str) -> bool {
    text.ends_with(':') || text.ends_with('：')
}

/// The least share of link text that makes a list, after a lead-in, a box
/// of links to elsewhere.
const RELATED_LINKS: f64 = 0.9;

/// Drops, in the second half of the content under `root`, a list of links
/// with the label that leads into it ("Read also:", "Auch interessant:", a
/// paragraph all in bold ending in a colon; each item a link to another
/// article): a sentence of prose leading into a list of links ("The modules
/// are:", "There are two kinds of images:") is the text's own. This goes
/// wherever the box ends up: lists standing in the content are otherwise
/// kept (an index's list of pages), and this one is not most of the
/// content. A section under a heading of its own (Wikipedia's "See also")
/// is the article's, and stays. Returns the text dropped.
fn drop_related_lists(tree: &Tree<'_>, cleaned: &mut [bool], stats: &Stats, root: usize) -> u64 {
    let total = stats.text[root];
    let mut dropped = 0;
    // The content's text before `i`.
    let mut before = 0u32;
    let mut i = root + 1;
    while i < tree.end(root) {
        let tag = tree.tag(i);
        if !cleaned[i] {
            i = tree.end(i);
            continue;
        }
        if tag != Tag::P {
            if tag == Tag::Text {
                before = before.saturating_add(stats.text[i]);
            }
            i += 1;
            continue;
        }
        let list = (before >= total / 2)
            .then(|| next_sibling(tree, cleaned, stats, i))
            .flatten()
            .filter(|&l| is_related_list(tree, stats, l, total));
        // A paragraph's subtree is looked into once, and skipped after.
        let label = || {
            let last = (i..tree.end(i))
                .rev()
                .find(|&t| cleaned[t] && tree.tag(t) == Tag::Text && stats.text[t] > 0)
                .and_then(|t| tree.text(t))
                .unwrap_or("");
            is_lead_in(tree, stats, i, last) && is_bold(tree, cleaned, stats, i)
        };
        before = before.saturating_add(stats.text[i]);
        match list {
            Some(l) if stats.text[i] <= LEAD_IN_TEXT && label() => {
                dropped += u64::from(stats.text[i]) + u64::from(stats.text[l]);
                cleaned[i..tree.end(i)].fill(false);
                cleaned[l..tree.end(l)].fill(false);
                before = before.saturating_add(stats.text[l]);
                i = tree.end(l);
            }
            _ => i = tree.end(i),
        }
    }
    dropped
}

/// Whether all the kept text of `p` is bold (`strong`, `b`): a box's label
/// set as a paragraph, not a sentence of the prose. One pass: a text node
/// is bold when it falls inside the last bold element's subtree.
fn is_bold(tree: &Tree<'_>, cleaned: &[bool], stats: &Stats, p: usize) -> bool {
    let mut bold_end = 0;
    let end = tree.end(p);
    for (j, &kept) in cleaned.iter().enumerate().take(end).skip(p) {
        match tree.tag(j) {
            Tag::Strong | Tag::B => bold_end = bold_end.max(tree.end(j)),
            Tag::Text if kept && stats.text[j] > 0 && j >= bold_end => return false,
            _ => {}
        }
    }
    true
}

/// The next kept sibling of `i` that is an element or holds text. In the
/// flat tree the node after a subtree is its next sibling, when its parent
/// goes on.
fn next_sibling(tree: &Tree<'_>, cleaned: &[bool], stats: &Stats, i: usize) -> Option<usize> {
    let end = tree.end(tree.parent(i)?);
    let mut n = tree.end(i);
    while n < end {
        if cleaned[n] && (tree.tag(n) != Tag::Text || stats.text[n] > 0) {
            return Some(n);
        }
        n = tree.end(n);
    }
    None
}

/// Whether `l` is a list of links to elsewhere: two items or more, nearly
/// all its text in links, and not most of the content (`total`).
fn is_related_list(tree: &Tree<'_>, stats: &Stats, l: usize, total: u32) -> bool {
    matches!(tree.tag(l), Tag::Ul | Tag::Ol)
        && stats.link_density(l) >= RELATED_LINKS
        && stats.text[l] <= total / 2
        && tree.children(l).filter(|&c| tree.tag(c) == Tag::Li).count() >= 2
}

/// Whether `i` stands directly in the content under `root`: only the
/// page's own content wrappers (`main`, `article`, `section`, `details`:
/// rustdoc's description sits in one) and documentation's boxes
/// ([`is_doc_box`]) between them.
fn in_content(tree: &Tree<'_>, i: usize, root: usize) -> bool {
    let mut at = tree.parent(i);
    while let Some(a) = at {
        if a == root {
            return true;
        }
        if !matches!(
            tree.tag(a),
            Tag::Main | Tag::Article | Tag::Section | Tag::Details
        ) && !is_doc_box(tree, a)
        {
            return false;
        }
        at = tree.parent(a);
    }
    false
}

/// Whether `i` is a box in which documentation generators set the
/// author's own text: rustdoc's `div.docblock` (an item's description,
/// its lists of references), the `div.admonition` of Sphinx, MkDocs and
/// Docusaurus (a note, a warning, a "See also" of related functions).
/// Never a box of links to drop, however many links it holds.
fn is_doc_box(tree: &Tree<'_>, i: usize) -> bool {
    tree.tag(i) == Tag::Div && named(tree, i, &["docblock", "admonition"])
}

/// The most child nodes (whitespace between tags included) a wrapper of
/// lists is looked through for: a caption and a list or two, so each look
/// costs a few steps whatever the page.
const LIST_WRAPPER_NODES: usize = 16;

/// Whether `i` is a `div` holding nothing but lists and at most one short
/// caption before them ("Table of Contents", then the list).
fn is_list_shaped(tree: &Tree<'_>, stats: &Stats, i: usize) -> bool {
    if tree.tag(i) != Tag::Div {
        return false;
    }
    let mut lists = 0;
    let mut caption = false;
    for (n, c) in tree.children(i).enumerate() {
        if n >= LIST_WRAPPER_NODES {
            return false;
        }
        match tree.tag(c) {
            Tag::Ul | Tag::Ol | Tag::Dl => lists += 1,
            Tag::Text if stats.text[c] == 0 => {}
            Tag::P | Tag::H(_) if lists == 0 && !caption && stats.text[c] <= LEAD_IN_TEXT => {
                caption = true;
            }
            _ => return false,
        }
    }
    lists > 0
}

/// The most nodes of a table of contents looked through for a link to
/// another page: a chapter's first entry is one, and nested tables of
/// contents cost no more than this each.
const TOC_LOOKAHEAD: usize = 2_000;

/// Whether `i` is a list-shaped `div` ([`is_list_shaped`]) that stands for
/// the document tree it wraps: Sphinx's `div.toctree-wrapper` (a chapter's
/// list of its pages), or a `toc` box (DocBook's `div.toc`) with a link to
/// another page among its first [`TOC_LOOKAHEAD`] nodes. A table of
/// contents whose links all lead to places in pages (`#…`) is the page's
/// own navigation and goes (DocBook's section pages, a news page's
/// `#toc_container`).
///
/// Only so named: a news page's `div` around a list of links is as often
/// its share bar or its "related stories" (measured on trafilatura's set,
/// where taking any such `div` for its list let five of those in).
fn is_list_wrapper(tree: &Tree<'_>, stats: &Stats, i: usize) -> bool {
    if !is_list_shaped(tree, stats, i) {
        return false;
    }
    if named(tree, i, &["toctree"]) {
        return true;
    }
    named(tree, i, &["toc"])
        && (i..tree.end(i)).take(TOC_LOOKAHEAD).any(|a| {
            tree.tag(a) == Tag::A && tree.attr(a, "href").is_some_and(|h| !h.contains('#'))
        })
}

/// Whether `i` is in a table's cell: its parent is one, or the lists it
/// sits in are, up to the cell.
fn in_cell(tree: &Tree<'_>, i: usize) -> bool {
    let mut at = tree.parent(i);
    while let Some(a) = at {
        match tree.tag(a) {
            Tag::Td | Tag::Th => return true,
            Tag::Li | Tag::Ul | Tag::Ol | Tag::Dl | Tag::Dd | Tag::Dt => at = tree.parent(a),
            _ => return false,
        }
    }
    false
}

fn drops_in_content(tree: &Tree<'_>, stats: &Stats, i: usize) -> bool {
    let tag = tree.tag(i);
    let text = stats.text[i];
    let density = stats.link_density(i);
    match tag {
        Tag::Div
        | Tag::Section
        | Tag::Ul
        | Tag::Ol
        | Tag::Dl
        | Tag::Form
        | Tag::Aside
        | Tag::Footer => {
            if stats.commas[i] >= 10 || stats.media[i] > 0 && text < 25 {
                return false;
            }
            let weight = class_weight(tree, i);
            let list = matches!(tag, Tag::Ul | Tag::Ol | Tag::Dl);
            // A short list is content (a nested list of points, steps):
            // only a list that is mostly links reads as a box of them.
            weight < 0.0
                || (!list
                    && density > 0.5
                    && stats.paras[i] < 2
                    && !wraps_data_table(tree, stats, i))
                || (list && density > 0.7)
                || (!list && text < 25 && stats.media[i] == 0 && stats.paras[i] == 0)
        }
        // "Read more: <a>…</a>": a link and a word or two around it. A
        // sentence that links a few things ("read on in …, or see …") has
        // more words of its own and stays; so does a link alone in a
        // table's cell, the cell's data (an API index: the function's name,
        // linked, beside what it does), or the first paragraph of a list's
        // item or a definition, which is the item's text ("Set `isolated`
        // to 1.", "See `tp_hash`."): whether a list is a box of links is
        // weighed on the list (a product list's "Zum Produkt" button, the
        // item's last paragraph, still goes); and a paragraph standing in
        // documentation's own box ("See `cpuid`." in rustdoc's description).
        Tag::P => {
            density > 0.5
                && text < 200
                && stats.commas[i] < 2
                && stats.text[i].saturating_sub(stats.link[i]) < 16
                && !tree.parent(i).is_some_and(|c| match tree.tag(c) {
                    Tag::Td | Tag::Th => true,
                    Tag::Li | Tag::Dd | Tag::Dt => is_first_block(tree, c, i),
                    _ => is_doc_box(tree, c),
                })
        }
        _ => false,
    }
}

/// The most nodes of a table looked through for its header row: a
/// `thead`, a `tr` and a few cells.
const HEADER_LOOKAHEAD: usize = 32;

/// Whether `i` is a `div` holding one table and nothing else (whitespace
/// aside), whose columns are named by two header cells or more: a table of
/// data ("Platform | System call", each call linked to its manual), not a
/// box of links however many of its cells are links. A layout table of
/// links names no columns.
fn wraps_data_table(tree: &Tree<'_>, stats: &Stats, i: usize) -> bool {
    if tree.tag(i) != Tag::Div {
        return false;
    }
    let mut table = None;
    for (n, c) in tree.children(i).enumerate() {
        if n >= LIST_WRAPPER_NODES {
            return false;
        }
        match tree.tag(c) {
            Tag::Table if table.is_none() => table = Some(c),
            Tag::Text if stats.text[c] == 0 => {}
            _ => return false,
        }
    }
    let Some(t) = table else {
        return false;
    };
    let end = tree.end(t).min(t + HEADER_LOOKAHEAD);
    (t..end).filter(|&j| tree.tag(j) == Tag::Th).count() >= 2
}

/// The most children of an item looked through for a block before one
/// of them: enough for an item's inline lead ("Part of the Stable ABI."),
/// a few steps whatever the page.
const FIRST_BLOCK_LOOKAHEAD: usize = 8;

/// Whether child `c` of `parent` is its first block: only text and inline
/// elements before it, among its first [`FIRST_BLOCK_LOOKAHEAD`] children.
fn is_first_block(tree: &Tree<'_>, parent: usize, c: usize) -> bool {
    for s in tree.children(parent).take(FIRST_BLOCK_LOOKAHEAD) {
        if s == c {
            return true;
        }
        if tree.tag(s).is_block() {
            return false;
        }
    }
    false
}

/// A container's score before its paragraphs' points: by tag and by the
/// words of its class and id.
fn base_score(tree: &Tree<'_>, i: usize, content_words: bool) -> f64 {
    let tag = match tree.tag(i) {
        Tag::Div | Tag::Article | Tag::Main => 5.0,
        Tag::Pre | Tag::Td | Tag::Blockquote => 3.0,
        Tag::Address | Tag::Ol | Tag::Ul | Tag::Dl | Tag::Dd | Tag::Dt | Tag::Li | Tag::Form => {
            -3.0
        }
        Tag::H(_) | Tag::Th => -5.0,
        _ => 0.0,
    };
    let (furniture, content) = class_weights(tree, i);
    if content_words {
        tag + furniture + content
    } else {
        tag + furniture
    }
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

/// Bytes of a class or id read for its words.
const CLASS_READ: usize = 256;

/// [`NEGATIVE`]'s words as one automaton: a class is read once for all of
/// them, where a search per word (35 with [`POSITIVE`]) was most of what
/// scoring a documentation page cost beyond its parse.
static NEGATIVE_WORDS: LazyLock<AhoCorasick> = LazyLock::new(|| words(NEGATIVE));

/// [`POSITIVE`]'s words as one automaton.
static POSITIVE_WORDS: LazyLock<AhoCorasick> = LazyLock::new(|| words(POSITIVE));

fn words(list: &[&str]) -> AhoCorasick {
    // A few short plain words: far below any of the builder's size limits.
    AhoCorasick::new(list).expect("a handful of words builds")
}

/// Whether the only furniture word in `lower` is the "foot" of "footnote":
/// a footnote the text cites is the article's (mdBook's and Sphinx's
/// `footnote-definition`, Wikipedia's `footnotes`), where Readability's list
/// reads it as a footer.
fn only_footnotes(lower: &str) -> bool {
    if !lower.contains("footnote") {
        return false;
    }
    let rest = lower.replace("footnote", "");
    !NEGATIVE_WORDS.is_match(&rest)
}

/// +25 for each of class and id that reads like content, −25 for each that
/// reads like furniture.
pub(crate) fn class_weight(tree: &Tree<'_>, i: usize) -> f64 {
    let (furniture, content) = class_weights(tree, i);
    furniture + content
}

/// [`class_weight`] in its two parts: what furniture words take away, what
/// content words add.
fn class_weights(tree: &Tree<'_>, i: usize) -> (f64, f64) {
    let (mut furniture, mut content) = (0.0, 0.0);
    for name in ["class", "id"] {
        let Some(value) = tree.attr(i, name) else {
            continue;
        };
        if name == "id" && super::prune::names_subject(tree, i, value) {
            continue;
        }
        // Lowered on the stack: this runs for most elements of a page.
        let cut = value.get(..value.len().min(CLASS_READ)).unwrap_or("");
        let mut buf = [0u8; CLASS_READ];
        let lowered = &mut buf[..cut.len()];
        lowered.copy_from_slice(cut.as_bytes());
        lowered.make_ascii_lowercase();
        // Lowering ASCII letters keeps UTF-8 valid.
        let lower = std::str::from_utf8(lowered).unwrap_or("");
        if NEGATIVE_WORDS.is_match(lower) && !only_footnotes(lower) {
            furniture -= 25.0;
        }
        if POSITIVE_WORDS.is_match(lower) {
            content += 25.0;
        }
    }
    (furniture, content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 512,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_0060),
            ..ProptestConfig::default()
        })]
        /// One automaton finds a word exactly when one of its words is in
        /// the class, as a search per word does: words run into each other,
        /// overlap (`comment`/`com-`, `content`/`contact`) and are cut.
        #[test]
        fn the_automata_find_what_a_search_per_word_finds(class in proptest::collection::vec(
            prop_oneof![
                proptest::sample::select(NEGATIVE.to_vec()).prop_map(|w| w[..w.len().min(3)].to_string()),
                proptest::sample::select(NEGATIVE.to_vec()).prop_map(str::to_string),
                proptest::sample::select(POSITIVE.to_vec()).prop_map(str::to_string),
                proptest::sample::select(POSITIVE.to_vec()).prop_map(|w| w[1..].to_string()),
                Just("-".to_string()),
                Just(" ".to_string()),
                "[a-z]{1,3}",
            ],
            0..6,
        ).prop_map(|parts| parts.concat())) {
            prop_assert_eq!(
                NEGATIVE_WORDS.is_match(&class),
                NEGATIVE.iter().any(|w| class.contains(w))
            );
            prop_assert_eq!(
                POSITIVE_WORDS.is_match(&class),
                POSITIVE.iter().any(|w| class.contains(w))
            );
        }
    }
}
