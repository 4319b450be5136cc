//! Site-level boilerplate: blocks of text that repeat on most pages of a host.
//!
//! A single-page extractor cannot tell a site's menu, footer or "related
//! articles" box from its content when their markup looks like content. A
//! crawl can: it sees many pages of each host. [`SiteBoilerplate`] counts, per
//! host, on how many pages each block's normalised text (lowercased,
//! whitespace collapsed) appears, and calls a block boilerplate once
//! - the host has given at least [`MIN_PAGES`] pages, and
//! - the block was on at least half of them, and on at least [`MIN_REPEATS`].
//!
//! Once boilerplate, a block stays so for its host (knowledge only grows, so a
//! page filtered later never keeps a block an earlier page lost). What is
//! never dropped: code blocks (a sample repeated on every page of a manual is
//! still content), thematic breaks (nothing to gain), a heading whose text is
//! the page's own title, and a heading whose section (the block after it) is
//! kept — so a "Parameters" heading repeated on every API page stays, while a
//! "Related articles" heading above a dropped box goes with it.
//!
//! Bounded and deterministic: at most [`MAX_HOSTS`] hosts are followed (later
//! hosts are never filtered), and at most [`MAX_BLOCKS_PER_HOST`] distinct
//! blocks counted per host; when a host's table is full, the blocks seen on
//! one page only are forgotten (they are the page's own content, not a
//! template), and when it is still full new blocks go uncounted. The same
//! pages in the same order always give the same result.

use std::collections::{HashMap, HashSet};

use super::{BlockKind, Document};

/// Pages a host must have given before any of its blocks is boilerplate.
pub const MIN_PAGES: u32 = 5;
/// Pages a block must have been on, at least, to be boilerplate.
pub const MIN_REPEATS: u32 = 3;
/// Hosts followed at most.
pub const MAX_HOSTS: usize = 1024;
/// Distinct blocks counted per host at most.
pub const MAX_BLOCKS_PER_HOST: usize = 2048;

/// What the crawl has learnt of each host's repeated blocks.
#[derive(Debug, Default)]
pub struct SiteBoilerplate {
    hosts: HashMap<String, HostBlocks>,
}

#[derive(Debug, Default)]
struct HostBlocks {
    pages: u32,
    /// Pages each block (by hash) appeared on.
    seen: HashMap<u64, u32>,
    /// Blocks found to be boilerplate; never shrinks.
    boilerplate: HashSet<u64>,
}

/// A page's content once the host's boilerplate is dropped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filtered {
    /// The content without its boilerplate; `None` when nothing was dropped.
    pub document: Option<Document>,
    /// Blocks dropped.
    pub blocks: u64,
    /// Bytes of Markdown dropped.
    pub bytes: u64,
}

impl SiteBoilerplate {
    /// An empty record.
    pub fn new() -> SiteBoilerplate {
        SiteBoilerplate::default()
    }

    /// Counts the blocks of one page of `host` (each distinct block once).
    pub fn observe(&mut self, host: &str, doc: &Document) {
        if !self.hosts.contains_key(host) && self.hosts.len() >= MAX_HOSTS {
            return;
        }
        let blocks = self.hosts.entry(host.to_string()).or_default();
        blocks.pages = blocks.pages.saturating_add(1);
        let mut on_page = HashSet::new();
        for block in &doc.blocks {
            if let Some(h) = block_hash(block) {
                on_page.insert(h);
            }
        }
        let mut counted = Vec::with_capacity(on_page.len());
        for h in on_page {
            if !blocks.seen.contains_key(&h) && blocks.seen.len() >= MAX_BLOCKS_PER_HOST {
                blocks.seen.retain(|_, n| *n > 1);
                if blocks.seen.len() >= MAX_BLOCKS_PER_HOST {
                    continue;
                }
            }
            *blocks.seen.entry(h).or_default() += 1;
            counted.push(h);
        }
        if blocks.pages == MIN_PAGES {
            // The first time the rule applies: every block counted so far.
            counted = blocks.seen.keys().copied().collect();
        }
        for h in counted {
            if blocks.is_boilerplate_now(h) {
                blocks.boilerplate.insert(h);
            }
        }
    }

    /// `doc` (a page of `host`) without the blocks known to be boilerplate.
    pub fn filter(&self, host: &str, doc: &Document) -> Filtered {
        let Some(blocks) = self.hosts.get(host).filter(|b| !b.boilerplate.is_empty()) else {
            return Filtered::default();
        };
        let title = doc.title.as_deref().map(normalise);
        let mut drop: Vec<bool> = doc
            .blocks
            .iter()
            .map(|b| match b.kind {
                BlockKind::Code | BlockKind::Rule | BlockKind::Heading(_) => false,
                _ => block_hash(b).is_some_and(|h| blocks.boilerplate.contains(&h)),
            })
            .collect();
        // Headings, from the last: one goes when it is boilerplate and what it
        // heads (the next block) goes too, or nothing follows it.
        for i in (0..doc.blocks.len()).rev() {
            let b = &doc.blocks[i];
            if !matches!(b.kind, BlockKind::Heading(_)) {
                continue;
            }
            let own_title = title.as_deref() == Some(normalise(&b.text).as_str());
            let repeated = block_hash(b).is_some_and(|h| blocks.boilerplate.contains(&h));
            let section_dropped = drop.get(i + 1).copied().unwrap_or(true);
            drop[i] = repeated && !own_title && section_dropped;
        }
        if !drop.contains(&true) {
            return Filtered::default();
        }
        let mut out = Filtered::default();
        let mut kept = doc.clone();
        kept.blocks.clear();
        for (block, dropped) in doc.blocks.iter().zip(drop) {
            if dropped {
                out.blocks += 1;
                out.bytes += block.markdown.len() as u64;
            } else {
                kept.blocks.push(block.clone());
            }
        }
        out.document = Some(kept);
        out
    }

    /// How many hosts are followed.
    pub fn hosts(&self) -> usize {
        self.hosts.len()
    }
}

impl HostBlocks {
    fn is_boilerplate_now(&self, h: u64) -> bool {
        let n = self.seen.get(&h).copied().unwrap_or(0);
        self.pages >= MIN_PAGES && n >= MIN_REPEATS && n.saturating_mul(2) >= self.pages
    }
}

/// A block's identity: the hash of its normalised text (its Markdown when it
/// has no text, as an image without alt text); `None` for a block with
/// neither.
fn block_hash(block: &super::Block) -> Option<u64> {
    let text = if block.text.trim().is_empty() {
        &block.markdown
    } else {
        &block.text
    };
    // The normalised text (see `normalise`) streamed into the hash, with no
    // copy of it made: this runs on the crawl's one sink task for every
    // block of every page.
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = [0u8; 4];
    let mut any = false;
    for word in text.split_whitespace() {
        if any {
            hasher.update(b" ");
        }
        any = true;
        if word.is_ascii() {
            for chunk in word.as_bytes().chunks(64) {
                let mut lower = [0u8; 64];
                lower[..chunk.len()].copy_from_slice(chunk);
                lower[..chunk.len()].make_ascii_lowercase();
                hasher.update(&lower[..chunk.len()]);
            }
        } else {
            for c in word.chars().flat_map(char::to_lowercase) {
                hasher.update(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    // xxh3 has no random keys: the same text hashes the same in every run,
    // which keeps the rule deterministic.
    any.then(|| hasher.digest())
}

/// Lowercased, whitespace collapsed to single spaces, trimmed.
fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::Block;
    use super::*;

    fn block(kind: BlockKind, text: &str) -> Block {
        Block {
            kind,
            markdown: text.to_string(),
            text: text.to_string(),
            links: Vec::new(),
        }
    }

    fn page(title: &str, own: &str) -> Document {
        Document {
            title: Some(title.into()),
            blocks: vec![
                block(BlockKind::List, "Home  About Blog"),
                block(BlockKind::Heading(1), title),
                block(BlockKind::Paragraph, own),
                block(BlockKind::Code, "pip install skitter"),
                block(BlockKind::Heading(2), "Parameters"),
                block(BlockKind::Paragraph, &format!("{own}, the parameters")),
                block(BlockKind::Heading(2), "Related articles"),
                block(BlockKind::List, "One  Two Three"),
                block(BlockKind::Paragraph, "© Example 2026"),
            ],
            ..Document::default()
        }
    }

    fn kept(f: &Filtered, doc: &Document) -> Vec<String> {
        f.document
            .as_ref()
            .unwrap_or(doc)
            .blocks
            .iter()
            .map(|b| b.text.clone())
            .collect()
    }

    #[test]
    fn nothing_is_dropped_before_the_host_has_enough_pages() {
        let mut site = SiteBoilerplate::new();
        for i in 0..MIN_PAGES - 1 {
            let doc = page(&format!("Post {i}"), &format!("Words of post {i}"));
            site.observe("h", &doc);
            assert_eq!(site.filter("h", &doc), Filtered::default(), "page {i}");
        }
    }

    #[test]
    fn the_template_goes_the_content_stays() {
        let mut site = SiteBoilerplate::new();
        for i in 0..MIN_PAGES {
            site.observe("h", &page(&format!("Post {i}"), &format!("Words {i}")));
        }
        // A page titled like the repeated heading keeps it.
        let doc = page("Related articles", "Mine");
        let f = site.filter("h", &doc);
        assert_eq!(
            kept(&f, &doc),
            [
                "Related articles",
                "Mine",
                "pip install skitter",
                "Parameters",
                "Mine, the parameters",
                "Related articles",
            ]
        );
        // The menu, the related box's list and the footer (the second
        // "Related articles" heading is kept: it is the page's own title).
        assert_eq!(f.blocks, 3);
        let doc = page("Post 9", "Nine");
        let f = site.filter("h", &doc);
        assert_eq!(
            kept(&f, &doc),
            [
                "Post 9",
                "Nine",
                "pip install skitter",
                "Parameters",
                "Nine, the parameters"
            ]
        );
        assert_eq!(f.blocks, 4);
        let dropped: usize = [
            "Home  About Blog",
            "Related articles",
            "One  Two Three",
            "© Example 2026",
        ]
        .iter()
        .map(|s| s.len())
        .sum();
        assert_eq!(f.bytes, dropped as u64);
        // Another host knows nothing of it.
        assert_eq!(site.filter("other", &doc), Filtered::default());
    }

    #[test]
    fn markup_and_spacing_do_not_hide_a_repeat() {
        let mut site = SiteBoilerplate::new();
        for i in 0..MIN_PAGES {
            let mut doc = page(&format!("P{i}"), &format!("W{i}"));
            doc.blocks[0] = block(
                if i % 2 == 0 {
                    BlockKind::List
                } else {
                    BlockKind::Other
                },
                "HOME about\n blog",
            );
            site.observe("h", &doc);
        }
        let doc = page("P", "W");
        assert!(!kept(&site.filter("h", &doc), &doc).contains(&"Home  About Blog".to_string()));
    }

    #[test]
    fn a_block_on_fewer_than_half_the_pages_stays() {
        let mut site = SiteBoilerplate::new();
        for i in 0..10 {
            let mut doc = page(&format!("P{i}"), &format!("W{i}"));
            if i >= 5 && i % 2 == 1 {
                doc.blocks
                    .push(block(BlockKind::Paragraph, "Sale this week"));
            }
            site.observe("h", &doc);
        }
        let mut doc = page("P", "W");
        doc.blocks
            .push(block(BlockKind::Paragraph, "Sale this week"));
        assert!(kept(&site.filter("h", &doc), &doc).contains(&"Sale this week".to_string()));
    }

    #[test]
    fn the_tables_stay_bounded() {
        let mut site = SiteBoilerplate::new();
        for i in 0..MAX_HOSTS + 10 {
            site.observe(&format!("h{i}"), &page("t", "w"));
        }
        assert_eq!(site.hosts(), MAX_HOSTS);
        let many = Document {
            blocks: (0..MAX_BLOCKS_PER_HOST * 2)
                .map(|i| block(BlockKind::Paragraph, &format!("block {i}")))
                .collect(),
            ..Document::default()
        };
        site.observe("h0", &many);
        site.observe("h0", &many);
        assert!(site.hosts["h0"].seen.len() <= MAX_BLOCKS_PER_HOST);
    }
}
