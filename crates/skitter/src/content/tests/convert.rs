//! The HTML to Markdown conversion, one construct at a time.

use url::Url;

use crate::content::{ContentOptions, ContentScope, Document, Extractor};

fn full(html: &str) -> Document {
    let options = ContentOptions {
        scope: ContentScope::Full,
        ..ContentOptions::default()
    };
    let url = Url::parse("https://example.org/dir/page.html").unwrap();
    Extractor::new(&options).unwrap().extract(html, &url)
}

fn md(html: &str) -> String {
    full(html).markdown()
}

#[test]
fn headings_paragraphs_and_emphasis() {
    assert_eq!(
        md("<h2>Title  here</h2><p>Some <em>soft</em> and <strong>strong</strong>\n text.</p>"),
        "## Title here\n\nSome *soft* and **strong** text."
    );
}

#[test]
fn links_are_absolute_and_their_ranges_exact() {
    let doc =
        full("<p>See <a href='../x?a=1'>the x</a> and <a href='javascript:go()'>this</a>.</p>");
    assert_eq!(
        doc.markdown(),
        "See [the x](https://example.org/x?a=1) and this."
    );
    let block = &doc.blocks[0];
    assert_eq!(block.links.len(), 1);
    assert_eq!(
        &block.markdown[block.links[0].range.clone()],
        "https://example.org/x?a=1"
    );
    assert_eq!(
        doc.markdown_with(|_| Some("x.md".into())),
        "See [the x](x.md) and this."
    );
}

#[test]
fn nested_lists() {
    assert_eq!(
        md(
            "<ul><li>one<ul><li>inner</li></ul></li><li>two</li></ul><ol start=3><li>c</li><li>d</li></ol>"
        ),
        "- one\n  - inner\n- two\n\n3. c\n4. d"
    );
}

#[test]
fn code_block_with_language_and_long_fence() {
    let doc =
        full("<pre><code class='language-rust'>fn main() {\n    let s = \"```\";\n}</code></pre>");
    assert_eq!(
        doc.markdown(),
        "````rust\nfn main() {\n    let s = \"```\";\n}\n````"
    );
}

#[test]
fn table_as_gfm() {
    assert_eq!(
        md(
            "<table><tr><th>a</th><th>b|c</th></tr><tr><td colspan=2>wide</td></tr><tr><td>1</td><td><a href='/z'>z</a></td></tr></table>"
        ),
        "| a | b\\|c |\n| --- | --- |\n| wide |  |\n| 1 | [z](https://example.org/z) |"
    );
}

#[test]
fn a_table_in_a_quote_is_quoted_row_by_row() {
    // Sphinx indents a table into a `blockquote`: the row carries the
    // quote's prefix, its cells do not.
    assert_eq!(
        md(
            "<blockquote><div><table><tr><th><p>Option</p></th><th><p>Meaning</p></th></tr>\
            <tr><td><p><code>'&lt;'</code></p></td><td><p>Left-aligned.</p></td></tr></table></div></blockquote>"
        ),
        "> | Option | Meaning |\n> | --- | --- |\n> | `'<'` | Left-aligned. |"
    );
}

#[test]
fn quote_image_and_rule() {
    assert_eq!(
        md(
            "<blockquote><p>one</p><p>two</p></blockquote><hr><img src='data:,' data-src='/i.png' alt='An [image]'>"
        ),
        "> one\n>\n> two\n\n---\n\n![An \\[image\\]](https://example.org/i.png)"
    );
}

#[test]
fn special_characters_are_escaped() {
    assert_eq!(
        md("<p>1. not a *list* # x</p>"),
        "1\\. not a \\*list\\* # x"
    );
    assert_eq!(md("<p># not a heading</p>"), "\\# not a heading");
    assert_eq!(
        md("<p>&amp;copy; wow!<a href='/x'>x</a></p>"),
        "\\&copy; wow\\![x](https://example.org/x)"
    );
}

#[test]
fn main_content_drops_furniture() {
    let url = Url::parse("https://example.org/").unwrap();
    let html = "<html lang=en><head><title>Post | Site</title><meta property='og:site_name' content='Site'>\
        <link rel=canonical href='/post'></head><body><nav><a href='/'>Home</a></nav>\
        <div class='cookie-banner'>We use cookies</div>\
        <article><h1>Post</h1><p>Words worth keeping, in a long enough paragraph of text.</p></article>\
        <footer>Copyright</footer></body></html>";
    let doc = crate::content::extract(html, &url);
    assert_eq!(doc.title.as_deref(), Some("Post"));
    assert_eq!(doc.lang.as_deref(), Some("en"));
    assert_eq!(
        doc.canonical.as_ref().map(Url::as_str),
        Some("https://example.org/post")
    );
    assert_eq!(
        doc.markdown(),
        "# Post\n\nWords worth keeping, in a long enough paragraph of text."
    );
}

#[test]
fn heading_permalinks_are_left_out() {
    // Sphinx's and rustdoc's self-links, as Debian's python3-doc and
    // rust-doc pages have them.
    assert_eq!(
        md("<h1>Coroutines<a class='headerlink' href='#coroutines' \
            title='Permalink to this heading'>¶</a></h1>\
            <h2 id='method.new'><a href='#method.new' class='anchor'>§</a>new</h2>\
            <p>A <a href='#x'>#</a> and a <a href='#y'>#tag</a>.</p>"),
        "# Coroutines\n\n## new\n\nA and a [#tag](https://example.org/dir/page.html#y)."
    );
}

#[test]
fn a_block_inside_a_code_block_ends_its_line() {
    // rustdoc: an attribute in a `div` before the declaration, and a
    // struct's fields in a `details` whose `summary` is a toggle's label.
    assert_eq!(
        md(
            "<pre class='rust'><code><div class='code-attribute'>#[repr(C)]</div>pub struct stat {\
            <details><summary><span>Show 2 fields</span></summary>\n    pub st_dev: u64,\n    \
            pub st_ino: u64,\n</details>}</code></pre>"
        ),
        "```rust\n#[repr(C)]\npub struct stat {\nShow 2 fields\n    pub st_dev: u64,\n    pub st_ino: u64,\n}\n```"
    );
    // A highlighter's line per `div`, with or without the newline between.
    assert_eq!(
        md("<pre><div>a = 1</div>\n<div>b = 2</div><div>c = 3</div></pre>"),
        "```\na = 1\nb = 2\nc = 3\n```"
    );
}
