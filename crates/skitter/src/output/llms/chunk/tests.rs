use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use super::*;
use crate::content::Block;

fn block(kind: BlockKind, markdown: &str) -> Block {
    let text = match kind {
        BlockKind::Heading(_) => markdown.trim_start_matches('#').trim().to_string(),
        _ => markdown.to_string(),
    };
    Block {
        kind,
        markdown: markdown.to_string(),
        text,
        links: Vec::new(),
    }
}

fn doc(blocks: Vec<Block>) -> Document {
    Document {
        blocks,
        ..Document::default()
    }
}

#[test]
fn cuts_at_headings_and_carries_the_path() {
    let d = doc(vec![
        block(BlockKind::Heading(1), "# Guide"),
        block(BlockKind::Paragraph, "hello world"),
        block(BlockKind::Heading(2), "## Install"),
        block(BlockKind::Paragraph, "Run it."),
        block(BlockKind::Heading(3), "### Linux"),
        block(BlockKind::Paragraph, "Use apt."),
        block(BlockKind::Heading(2), "## Use"),
        block(BlockKind::Paragraph, "Crawl."),
    ]);
    let chunks = chunk_document(&d, 100);
    let got: Vec<(Vec<&str>, &str)> = chunks
        .iter()
        .map(|c| {
            let path = c.headings.iter().map(String::as_str).collect();
            (path, c.markdown.as_str())
        })
        .collect();
    assert_eq!(
        got,
        [
            (vec!["Guide"], "# Guide\n\nhello world"),
            (vec!["Guide", "Install"], "## Install\n\nRun it."),
            (vec!["Guide", "Install", "Linux"], "### Linux\n\nUse apt."),
            (vec!["Guide", "Use"], "## Use\n\nCrawl."),
        ]
    );
    // "# Guide" is 2 tokens, "\n\n" 1 and "hello world" 2 (tiktoken's counts).
    assert_eq!(chunks[0].tokens, 5);
}

#[test]
fn a_long_section_is_cut_between_blocks_and_repeats_its_heading() {
    let sentence = "The crawler fetched every page of the site and kept its text. ";
    let paragraph = sentence.repeat(3);
    let mut blocks = vec![block(BlockKind::Heading(2), "## Results")];
    blocks.extend((0..6).map(|_| block(BlockKind::Paragraph, paragraph.trim())));
    let chunks = chunk_document(&doc(blocks), 100);
    assert!(chunks.len() > 1, "{chunks:#?}");
    for c in &chunks {
        assert!(c.tokens <= 100);
        assert!(c.markdown.starts_with("## Results\n\n"), "{}", c.markdown);
        assert_eq!(c.headings, ["Results"]);
    }
    let paragraphs: usize = chunks
        .iter()
        .map(|c| c.markdown.matches(paragraph.trim()).count())
        .sum();
    assert_eq!(paragraphs, 6, "every paragraph whole, once");
}

#[test]
fn a_long_code_block_is_fenced_again_in_every_piece() {
    let body: String = (0..200)
        .map(|i| format!("    let x{i} = compute({i});\n"))
        .collect();
    let code = format!("```rust\n{body}```");
    let chunks = chunk_document(&doc(vec![block(BlockKind::Code, &code)]), 64);
    assert!(chunks.len() > 5);
    for c in &chunks {
        assert!(c.tokens <= 64);
        assert!(c.markdown.starts_with("```rust\n    let"), "{}", c.markdown);
        assert!(c.markdown.ends_with("\n```"), "{}", c.markdown);
    }
}

#[test]
fn headings_alone_join_the_next_section_and_blank_blocks_vanish() {
    let d = doc(vec![
        block(BlockKind::Heading(1), "# A"),
        block(BlockKind::Paragraph, "   \n"),
        block(BlockKind::Heading(2), "## B"),
        block(BlockKind::Paragraph, "text"),
    ]);
    let chunks = chunk_document(&d, 50);
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].markdown, "# A\n\n## B\n\ntext");
    assert!(chunk_document(&doc(Vec::new()), 50).is_empty());
}

/// Random documents: headings, paragraphs of words (some long, some not
/// ASCII), lists, code, tables, long unbroken strings.
fn documents() -> impl Strategy<Value = Document> {
    let word = prop_oneof![
        "[a-z]{1,10}",
        "[A-Z][a-z]{0,8}[.,!?]?",
        "[0-9]{1,6}",
        "[éàüß東京日本語]{1,4}",
        "[a-zA-Z0-9+/=]{30,400}",
    ];
    let text = prop::collection::vec(word, 1..60).prop_map(|w| w.join(" "));
    let lines = prop::collection::vec(text.clone(), 1..6).prop_map(|l| l.join("\n"));
    let heading = (1u8..=4, "[A-Za-z ]{1,40}").prop_map(|(level, t)| {
        let t = if t.trim().is_empty() {
            "H".to_string()
        } else {
            t
        };
        block(
            BlockKind::Heading(level),
            &format!("{} {t}", "#".repeat(level.into())),
        )
    });
    let b = prop_oneof![
        heading,
        text.prop_map(|t| block(BlockKind::Paragraph, &t)),
        lines.clone().prop_map(|t| block(BlockKind::List, &t)),
        lines
            .clone()
            .prop_map(|t| block(BlockKind::Code, &format!("```\n{t}\n```"))),
        lines.prop_map(|t| block(BlockKind::Table, &format!("| Name |\n| --- |\n{t}"))),
    ];
    prop::collection::vec(b, 0..12).prop_map(doc)
}

#[test]
fn no_chunk_is_over_the_size_nor_empty_and_no_word_is_lost() {
    let config = Config {
        cases: 40,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    runner
        .run(&(documents(), 16usize..300), |(d, max)| {
            let chunks = chunk_document(&d, max);
            let mut all = String::new();
            for c in &chunks {
                prop_assert!(c.tokens <= max, "{} > {max}: {:?}", c.tokens, c.markdown);
                prop_assert_eq!(c.tokens, token::count(&c.markdown));
                prop_assert!(!c.markdown.trim().is_empty());
                all.push_str(&c.markdown);
                all.push('\n');
            }
            // Every word survives (a word cut between characters survives
            // as its pieces, which appear in order).
            let kept: String = all.split_whitespace().collect();
            for b in &d.blocks {
                for word in b.markdown.split_whitespace() {
                    prop_assert!(kept.contains(word) || word.len() > 20, "lost {word:?}");
                }
            }
            Ok(())
        })
        .unwrap();
}
