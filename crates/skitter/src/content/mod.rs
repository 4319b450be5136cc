//! Pages as clean Markdown and text: the `content` layer.
//!
//! It owns turning one HTML page (already decoded to text) and its URL into a
//! [`Document`]: the page's metadata (title, description, language, author,
//! published date, canonical URL) and its content as a list of [`Block`]s —
//! headings, paragraphs, lists, tables, code, quotes, images — each carrying
//! its Markdown, its plain text and where its links sit in the Markdown. By
//! default only the page's main content is kept (navigation, headers, footers,
//! banners and the like dropped: [`ContentScope::Main`]); `include`/`exclude`
//! CSS selectors narrow it further.
//!
//! It is pure CPU work on one page, knowing nothing of crawls: the crawler
//! runs it on its CPU pool and the outputs (the Markdown tree, JSONL fields,
//! llms.txt, chunks) take the [`Document`]. What needs more than one page —
//! dropping blocks that repeat across a host — is the outputs' concern.
//!
//! ```
//! use skitter::content::extract;
//! use url::Url;
//!
//! let url = Url::parse("https://example.org/post").unwrap();
//! let doc = extract(
//!     "<html><head><title>Post</title></head><body>\
//!      <nav><a href='/'>Home</a></nav>\
//!      <article><h1>Post</h1><p>Some words worth keeping, in a paragraph.</p></article>\
//!      </body></html>",
//!     &url,
//! );
//! assert_eq!(doc.title.as_deref(), Some("Post"));
//! assert!(doc.markdown().contains("Some words worth keeping"));
//! ```

mod code;
mod convert;
mod links;
mod meta;
mod prune;
mod select;
pub mod site;
mod stats;
mod table;
mod tree;
mod writer;

#[cfg(test)]
mod tests;

use std::ops::Range;

use scraper::{Html, Selector};
use serde::{Deserialize, Serialize};
use url::Url;

use self::stats::{Stats, TextCounts};
use self::tree::{Tag, Tree};
use crate::parse::items::nesting;

/// How much of a page to keep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContentScope {
    /// The main content only: navigation, headers, footers, banners, share
    /// bars and ads dropped.
    #[default]
    Main,
    /// Everything visible in the page's body.
    Full,
}

/// What to keep of each page.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContentOptions {
    /// Main content or the whole body.
    pub scope: ContentScope,
    /// CSS selectors: when any is given, only the elements they match (and
    /// what is inside them) are kept.
    pub include: Vec<String>,
    /// CSS selectors of elements to drop, whatever the scope.
    pub exclude: Vec<String>,
}

/// The options could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    /// A CSS selector of `include` or `exclude` does not parse.
    #[error("content selector {selector:?} does not parse: {reason}")]
    Selector {
        /// The selector as given.
        selector: String,
        /// What the selector parser said.
        reason: String,
    },
}

/// Turns pages into [`Document`]s under one set of checked options; cheap to
/// clone and shared between threads.
#[derive(Clone, Debug)]
pub struct Extractor {
    options: ContentOptions,
    include: Vec<Selector>,
    exclude: Vec<Selector>,
}

impl Extractor {
    /// Checks `options` (its selectors parse) once, for many pages.
    pub fn new(options: &ContentOptions) -> Result<Extractor, ContentError> {
        let parse = |list: &[String]| -> Result<Vec<Selector>, ContentError> {
            list.iter()
                .map(|selector| {
                    Selector::parse(selector).map_err(|e| ContentError::Selector {
                        selector: selector.clone(),
                        reason: e.to_string(),
                    })
                })
                .collect()
        };
        Ok(Extractor {
            include: parse(&options.include)?,
            exclude: parse(&options.exclude)?,
            options: options.clone(),
        })
    }

    /// The options it was built with.
    pub fn options(&self) -> &ContentOptions {
        &self.options
    }

    /// The page `html`, found at `url` (links are made absolute against it,
    /// or against its `<base href>`), as a [`Document`].
    pub fn extract(&self, html: &str, url: &Url) -> Document {
        // html5ever's tree builder searches its stack of open elements on many
        // tags, so N nested elements cost N²: read the page only up to the
        // first tag nesting deeper than the items engine's (and Chromium's)
        // cut, and say the content was cut short.
        let cut = nesting::too_deep_at(html);
        let html = cut.map_or(html, |at| &html[..at]);
        let page = Html::parse_document(html);
        let tree = Tree::new(&page);
        let base = links::base_url(&tree, url);
        let mut keep = prune::invisible(&tree, &self.exclude);
        let body = tree.find(Tag::Body).unwrap_or(0);
        let counts = TextCounts::new(&tree);
        if self.options.scope == ContentScope::Main {
            let stats = Stats::new(&tree, &counts, &keep);
            let mut pruned = keep.clone();
            prune::furniture(&tree, &mut pruned, &stats, body);
            // Furniture rules that leave next to nothing misfired (a page
            // builder naming every wrapper alike): the scoring alone decides.
            // Unless the page marks its main content and the rules left it
            // whole: then the page is short (mdBook's chapter of a heading
            // alone, beside the book's table of contents), not misread.
            let after = Stats::new(&tree, &counts, &pruned);
            let left = after.text[body] as f64;
            if left >= prune::LEAST * stats.text[body] as f64
                || prune::main_left_whole(&tree, &stats, &after)
            {
                keep = pruned;
            }
        }
        let roots = if !self.include.is_empty() {
            included(&tree, &keep, &self.include)
        } else if self.options.scope == ContentScope::Main {
            let stats = Stats::new(&tree, &counts, &keep);
            let roots = select::main_roots(&tree, &keep, &stats, body);
            select::clean(&tree, &mut keep, &stats, &roots);
            roots
        } else {
            vec![body]
        };
        let (blocks, truncated) = convert::convert(&tree, &keep, &roots, &base);
        let meta = meta::read(&tree, &base, &keep, &roots);
        Document {
            title: meta.title,
            description: meta.description,
            lang: meta.lang,
            author: meta.author,
            published: meta.published,
            canonical: meta.canonical,
            blocks,
            truncated: truncated || cut.is_some(),
        }
    }
}

/// The outermost kept elements that an `include` selector matches.
fn included(tree: &Tree<'_>, keep: &[bool], include: &[Selector]) -> Vec<usize> {
    let mut roots = Vec::new();
    let mut i = 0;
    while i < tree.len() {
        let matched = keep[i]
            && tree
                .element(i)
                .is_some_and(|e| include.iter().any(|s| s.matches(&e)));
        if matched {
            roots.push(i);
            i = tree.end(i);
        } else {
            i += 1;
        }
    }
    roots
}

/// [`Extractor::extract`] with the default options (main content, no
/// selectors).
pub fn extract(html: &str, url: &Url) -> Document {
    Extractor {
        options: ContentOptions::default(),
        include: Vec::new(),
        exclude: Vec::new(),
    }
    .extract(html, url)
}

/// One page's metadata and content.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Document {
    /// The page's title (`<title>`, else `og:title`, else its first heading).
    pub title: Option<String>,
    /// Its description (`<meta name=description>` or `og:description`).
    pub description: Option<String>,
    /// Its language (`<html lang>` or `content-language`), as written.
    pub lang: Option<String>,
    /// Its author, where the page names one.
    pub author: Option<String>,
    /// When it was published, where the page says (as written there).
    pub published: Option<String>,
    /// Its canonical URL (`<link rel=canonical>`), absolute.
    pub canonical: Option<Url>,
    /// The content kept, in page order.
    pub blocks: Vec<Block>,
    /// Whether a limit on the work (nesting depth, blocks, bytes) cut the
    /// content short.
    pub truncated: bool,
}

/// One block of content: a heading, a paragraph, a list, a table…
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Block {
    /// What kind of block it is.
    pub kind: BlockKind,
    /// Its Markdown (GitHub-flavoured), with absolute link targets.
    pub markdown: String,
    /// Its plain text, whitespace collapsed.
    pub text: String,
    /// Where each link target sits in `markdown`, in order.
    pub links: Vec<LinkSpan>,
}

/// The kinds of [`Block`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockKind {
    /// A heading of level 1–6.
    Heading(u8),
    /// A paragraph of text.
    Paragraph,
    /// A list, ordered or not, with its nesting.
    List,
    /// A table (a GFM table).
    Table,
    /// A code block.
    Code,
    /// A block quote.
    Quote,
    /// An image standing alone.
    Image,
    /// A thematic break.
    Rule,
    /// Any other block of text.
    Other,
}

/// A link target inside a [`Block`]'s Markdown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkSpan {
    /// The bytes of the target in the block's `markdown`.
    pub range: Range<usize>,
    /// The target, absolute.
    pub url: Url,
}

impl Document {
    /// The content as one Markdown text: blocks separated by a blank line.
    pub fn markdown(&self) -> String {
        self.markdown_with(|_| None)
    }

    /// The content as Markdown with link targets rewritten: `map` gets each
    /// link's absolute URL and returns the target to write instead, or
    /// `None` to keep the URL (a Markdown tree points its internal links at
    /// its own files this way).
    pub fn markdown_with(&self, mut map: impl FnMut(&Url) -> Option<String>) -> String {
        let mut out = String::new();
        for block in &self.blocks {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            let mut at = 0;
            for link in &block.links {
                if let Some(target) = map(&link.url) {
                    out.push_str(&block.markdown[at..link.range.start]);
                    out.push_str(&target);
                    at = link.range.end;
                }
            }
            out.push_str(&block.markdown[at..]);
        }
        out
    }

    /// The content as plain text: blocks separated by a blank line.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self.blocks.iter().map(|b| b.text.as_str()).collect();
        texts.join("\n\n")
    }
}
