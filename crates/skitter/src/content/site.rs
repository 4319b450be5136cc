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
        self.observe_hashes(host, &hashes(doc));
    }

    /// [`observe`](Self::observe) then [`filter`](Self::filter), hashing
    /// each block once for both (the hashing is most of their cost).
    pub fn observe_and_filter(&mut self, host: &str, doc: &Document) -> Filtered {
        let hashes = hashes(doc);
        self.observe_hashes(host, &hashes);
        self.filter_hashes(host, doc, &hashes)
    }

    fn observe_hashes(&mut self, host: &str, hashes: &[Option<u64>]) {
        if !self.hosts.contains_key(host) && self.hosts.len() >= MAX_HOSTS {
            return;
        }
        let blocks = self.hosts.entry(host.to_string()).or_default();
        blocks.pages = blocks.pages.saturating_add(1);
        let on_page: HashSet<u64> = hashes.iter().flatten().copied().collect();
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
        self.filter_hashes(host, doc, &hashes(doc))
    }

    fn filter_hashes(&self, host: &str, doc: &Document, hashes: &[Option<u64>]) -> Filtered {
        let Some(blocks) = self.hosts.get(host).filter(|b| !b.boilerplate.is_empty()) else {
            return Filtered::default();
        };
        let title = doc.title.as_deref().map(normalise);
        let known = |h: Option<u64>| h.is_some_and(|h| blocks.boilerplate.contains(&h));
        let mut drop: Vec<bool> = doc
            .blocks
            .iter()
            .zip(hashes)
            .map(|(b, &h)| match b.kind {
                BlockKind::Code | BlockKind::Rule | BlockKind::Heading(_) => false,
                _ => known(h),
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
            let repeated = known(hashes[i]);
            let section_dropped = drop.get(i + 1).copied().unwrap_or(true);
            drop[i] = repeated && !own_title && section_dropped;
        }
        if !drop.contains(&true) {
            return Filtered::default();
        }
        let mut out = Filtered::default();
        // The page without its blocks: cloning it whole copied every block's
        // text only to drop it.
        let mut kept = Document {
            title: doc.title.clone(),
            description: doc.description.clone(),
            lang: doc.lang.clone(),
            author: doc.author.clone(),
            published: doc.published.clone(),
            canonical: doc.canonical.clone(),
            blocks: Vec::with_capacity(doc.blocks.len()),
            truncated: doc.truncated,
        };
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
    // The normalised text (see `normalise`) streamed into the hash through
    // a small buffer, with no copy of it made: this runs on the crawl's one
    // sink task for every block of every page, and one hasher update per
    // word cost more than the rest of the rule.
    let bytes = text.as_bytes();
    if text.is_ascii() && is_tidy(bytes) {
        // Already normalised but for its case (a block's text is collapsed
        // by the writer): lowercased in bulk and hashed in one call.
        let mut lower = bytes.to_vec();
        lower.make_ascii_lowercase();
        return (!lower.is_empty()).then(|| xxhash_rust::xxh3::xxh3_64(&lower));
    }
    let mut hasher = Chunked::new();
    if text.is_ascii() {
        let (mut space, mut any) = (false, false);
        for &b in text.as_bytes() {
            // `split_whitespace`'s ASCII whitespace (vertical tab included).
            if matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ') {
                space = any;
                continue;
            }
            if space {
                hasher.push(b' ');
                space = false;
            }
            hasher.push(b.to_ascii_lowercase());
            any = true;
        }
    } else {
        let mut buf = [0u8; 4];
        for word in text.split_whitespace() {
            if hasher.any {
                hasher.push(b' ');
            }
            for c in word.chars().flat_map(char::to_lowercase) {
                for &b in c.encode_utf8(&mut buf).as_bytes() {
                    hasher.push(b);
                }
            }
        }
    }
    // xxh3 has no random keys: the same text hashes the same in every run,
    // which keeps the rule deterministic.
    hasher.digest()
}

/// Whether ASCII text has its whitespace normalised already: single
/// spaces between words, none at either end, no other whitespace.
fn is_tidy(bytes: &[u8]) -> bool {
    bytes.first() != Some(&b' ')
        && bytes.last() != Some(&b' ')
        && super::writer::single_spaced(bytes)
}

/// Each block's hash, in order.
fn hashes(doc: &Document) -> Vec<Option<u64>> {
    doc.blocks.iter().map(block_hash).collect()
}

/// An xxh3 hasher fed a byte at a time through a buffer: the digest is the
/// same however the bytes are split between updates.
struct Chunked {
    hasher: xxhash_rust::xxh3::Xxh3,
    buf: [u8; 256],
    len: usize,
    any: bool,
}

impl Chunked {
    fn new() -> Chunked {
        Chunked {
            hasher: xxhash_rust::xxh3::Xxh3::new(),
            buf: [0; 256],
            len: 0,
            any: false,
        }
    }

    fn push(&mut self, b: u8) {
        if self.len == self.buf.len() {
            self.hasher.update(&self.buf);
            self.len = 0;
        }
        self.buf[self.len] = b;
        self.len += 1;
        self.any = true;
    }

    /// The hash of what was pushed, or `None` when nothing was.
    fn digest(mut self) -> Option<u64> {
        self.hasher.update(&self.buf[..self.len]);
        self.any.then(|| self.hasher.digest())
    }
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 256,
            rng_seed: proptest::test_runner::RngSeed::Fixed(33),
            ..Default::default()
        })]
        /// The streamed hash is the hash of the normalised text, on ASCII
        /// (every whitespace byte) and non-ASCII text alike, past the buffer.
        #[test]
        fn the_hash_is_that_of_the_normalised_text(
            text in "([ \t\n\x0b\x0c\rAbZz,.é\u{a0}\u{2003}İ]{0,8}[a-zA-Z ]{0,300}){0,3}|[a-zA-Z]{1,5}( [a-zA-Z,]{1,5}){0,80}"
        ) {
            let b = block(BlockKind::Paragraph, &text);
            let want = normalise(&text);
            let want = (!want.is_empty()).then(|| xxhash_rust::xxh3::xxh3_64(want.as_bytes()));
            proptest::prop_assert_eq!(block_hash(&b), want);
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
