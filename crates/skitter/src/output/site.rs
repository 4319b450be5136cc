//! The site's boilerplate applied to pages on their way to the sinks: the one
//! place every content output (the Markdown tree, JSONL's `markdown` and
//! `text` fields…) gets its pages filtered, so they all drop the same blocks
//! and the report counts them once.
//!
//! It runs in the single task that feeds the sinks, in the order pages
//! finish (the crawl's `drive_sinks`, `skitter fetch`'s collector), so its
//! per-host state needs no lock. Each HTML page's [`Document`] is first
//! counted into the host's [`SiteBoilerplate`], then filtered with what is
//! known at that moment: a stream gets each page as the crawl knew it then.
//!
//! The first pages of a host are recorded before anything is known of it.
//! For sinks that can rewrite what they wrote ([`Sink::wants_revisions`]),
//! the first [`REVISE_PAGES`] pages of each host are held (their record and
//! unfiltered content, at most [`MAX_HELD_BYTES`] of Markdown in all; pages
//! past either bound are not held) and handed again at the end through
//! [`Sink::revise`], filtered with all the crawl learnt of their host.

use std::collections::HashMap;
use std::sync::Arc;

use super::report::Counters;
use super::{Page, Sink, SinkError};
use crate::content::Document;
use crate::content::site::{MIN_PAGES, SiteBoilerplate};
use crate::host::HostKey;

/// Pages of each host handed again at the end.
pub const REVISE_PAGES: u32 = 2 * MIN_PAGES;
/// Markdown bytes of held pages, over all hosts, at most.
pub const MAX_HELD_BYTES: usize = 64 << 20;

/// The site rule and the pages held for revision.
pub(crate) struct SiteContent {
    rule: SiteBoilerplate,
    revise: bool,
    held: Vec<Held>,
    held_bytes: usize,
    held_per_host: HashMap<String, u32>,
}

/// A page recorded early, and what was dropped from it then.
struct Held {
    host: String,
    page: Page,
    dropped_blocks: u64,
    dropped_bytes: u64,
}

impl SiteContent {
    /// For these sinks: pages are held only if one of them revises.
    pub(crate) fn new(sinks: &[Box<dyn Sink>]) -> SiteContent {
        SiteContent {
            rule: SiteBoilerplate::new(),
            revise: sinks.iter().any(|s| s.wants_revisions()),
            held: Vec::new(),
            held_bytes: 0,
            held_per_host: HashMap::new(),
        }
    }

    /// Counts `page`'s content into its host and drops the host's known
    /// boilerplate from it; what it did, as report counters.
    pub(crate) fn apply(&mut self, page: &mut Page) -> Counters {
        let mut counts = Counters::default();
        let Some(doc) = page.content.clone() else {
            return counts;
        };
        counts.content_pages = 1;
        let host = HostKey::of(&page.record.url).as_str().to_string();
        let filtered = self.rule.observe_and_filter(&host, &doc);
        counts.content_boilerplate_blocks = filtered.blocks;
        counts.content_boilerplate_bytes = filtered.bytes;
        self.hold(&host, page, &doc, (filtered.blocks, filtered.bytes));
        if let Some(kept) = filtered.document {
            page.content = Some(Arc::new(kept));
        }
        counts
    }

    fn hold(&mut self, host: &str, page: &Page, doc: &Arc<Document>, dropped: (u64, u64)) {
        if !self.revise {
            return;
        }
        let size: usize = doc.blocks.iter().map(|b| b.markdown.len()).sum();
        let held = self.held_per_host.entry(host.to_string()).or_default();
        if *held >= REVISE_PAGES || self.held_bytes + size > MAX_HELD_BYTES {
            return;
        }
        *held += 1;
        self.held_bytes += size;
        self.held.push(Held {
            host: host.to_string(),
            page: Page {
                record: page.record.clone(),
                exchange: None,
                rendered: None,
                items: None,
                content: Some(doc.clone()),
                links: None,
                text: None,
            },
            dropped_blocks: dropped.0,
            dropped_bytes: dropped.1,
        });
    }

    /// Hands the held pages that lose more now than when they were recorded
    /// to the sinks that revise; the blocks and bytes dropped besides, as
    /// report counters.
    pub(crate) async fn revise(
        &mut self,
        sinks: &mut [Box<dyn Sink>],
    ) -> Result<Counters, SinkError> {
        let mut counts = Counters::default();
        for held in std::mem::take(&mut self.held) {
            let Some(doc) = &held.page.content else {
                continue;
            };
            let filtered = self.rule.filter(&held.host, doc);
            // Knowledge only grows: more blocks go now, or the same.
            let Some(kept) = filtered
                .document
                .filter(|_| filtered.blocks > held.dropped_blocks)
            else {
                continue;
            };
            counts.content_boilerplate_blocks += filtered.blocks - held.dropped_blocks;
            counts.content_boilerplate_bytes += filtered.bytes.saturating_sub(held.dropped_bytes);
            let mut page = held.page;
            page.content = Some(Arc::new(kept));
            for sink in sinks.iter_mut().filter(|s| s.wants_revisions()) {
                sink.revise(&page).await?;
            }
        }
        self.held_bytes = 0;
        Ok(counts)
    }
}

#[cfg(test)]
mod tests {
    use async_trait::async_trait;

    use super::*;
    use crate::base::outcome::PageRecord;
    use crate::content::{Block, BlockKind};
    use crate::output::SinkSummary;

    type Seen = Arc<std::sync::Mutex<Vec<(String, Vec<String>)>>>;

    /// Keeps the path and block texts of each revision.
    struct Revisions(bool, Seen);

    #[async_trait]
    impl Sink for Revisions {
        fn wants_revisions(&self) -> bool {
            self.0
        }
        async fn record(&mut self, _: &Page) -> Result<(), SinkError> {
            Ok(())
        }
        async fn revise(&mut self, page: &Page) -> Result<(), SinkError> {
            let doc = page.content.as_ref().unwrap();
            let texts = doc.blocks.iter().map(|b| b.text.clone()).collect();
            self.1
                .lock()
                .unwrap()
                .push((page.record.url.path().to_string(), texts));
            Ok(())
        }
        async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
            Ok(SinkSummary::default())
        }
    }

    fn page(host: &str, i: u32) -> Page {
        let block = |text: &str| Block {
            kind: BlockKind::Paragraph,
            markdown: text.to_string(),
            text: text.to_string(),
            links: Vec::new(),
        };
        let url = url::Url::parse(&format!("http://{host}/p/{i}")).unwrap();
        Page {
            record: PageRecord::new(url, 0, None),
            exchange: None,
            rendered: None,
            items: None,
            content: Some(Arc::new(Document {
                blocks: vec![block(&format!("own {i}")), block("the footer")],
                ..Document::default()
            })),
            links: None,
            text: None,
        }
    }

    #[tokio::test]
    async fn the_first_pages_are_revised_and_counted_once() {
        let seen = Seen::default();
        let mut sinks: Vec<Box<dyn Sink>> = vec![Box::new(Revisions(true, seen.clone()))];
        let mut site = SiteContent::new(&sinks);
        let mut dropped = 0;
        for i in 0..20 {
            let mut p = page("h", i);
            let counts = site.apply(&mut p);
            assert_eq!(counts.content_pages, 1);
            dropped += counts.content_boilerplate_blocks;
            let kept = p.content.unwrap().blocks.len();
            // From the fifth page on, the footer is known and goes.
            assert_eq!(kept, if i + 1 < MIN_PAGES { 2 } else { 1 }, "page {i}");
        }
        assert_eq!(dropped, u64::from(20 - (MIN_PAGES - 1)));
        let counts = site.revise(&mut sinks).await.unwrap();
        // Only the held pages that lose more now: the first four.
        assert_eq!(counts.content_boilerplate_blocks, u64::from(MIN_PAGES - 1));
        assert_eq!(
            counts.content_boilerplate_bytes,
            4 * "the footer".len() as u64
        );
        let want: Vec<(String, Vec<String>)> = (0..MIN_PAGES - 1)
            .map(|i| (format!("/p/{i}"), vec![format!("own {i}")]))
            .collect();
        assert_eq!(*seen.lock().unwrap(), want);
    }

    #[tokio::test]
    async fn nothing_is_held_without_a_sink_that_revises() {
        let mut sinks: Vec<Box<dyn Sink>> = vec![Box::new(Revisions(false, Seen::default()))];
        let mut site = SiteContent::new(&sinks);
        for i in 0..20 {
            site.apply(&mut page("h", i));
        }
        assert!(site.held.is_empty());
        assert_eq!(site.revise(&mut sinks).await.unwrap(), Counters::default());
    }

    #[tokio::test]
    async fn at_most_revise_pages_per_host_are_held() {
        let sinks: Vec<Box<dyn Sink>> = vec![Box::new(Revisions(true, Seen::default()))];
        let mut site = SiteContent::new(&sinks);
        for i in 0..50 {
            site.apply(&mut page("a", i));
            site.apply(&mut page("b", i));
        }
        assert_eq!(site.held.len(), 2 * REVISE_PAGES as usize);
    }
}
