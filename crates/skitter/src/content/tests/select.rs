//! Choosing the main content: furniture rules that misfire are undone, and
//! link boxes inside the content are cleaned out.

use url::Url;

use crate::content::extract;

/// The Markdown of the main content of `html`, found at `url`.
fn markdown(html: &str, url: &str) -> String {
    extract(html, &Url::parse(url).unwrap()).markdown()
}

const PROSE: &str = "A paragraph of the article, long enough to count, with commas, clauses, \
    and the words a reader came for, written out in full sentences.";

#[test]
fn furniture_rules_that_would_empty_the_page_are_not_applied() {
    // A page builder that names every wrapper "sidebar-section": each
    // wrapper holds under 85% of the text, together all of it.
    let html = format!(
        "<body><div class='sidebar-section'><p>{PROSE}</p><p>{PROSE}</p></div>\
         <div class='sidebar-section'><p>{PROSE}</p></div></body>"
    );
    let doc = extract(&html, &Url::parse("https://example.org/").unwrap());
    assert!(
        doc.text().contains("A paragraph of the article"),
        "{:?}",
        doc.text()
    );
}

#[test]
fn link_boxes_and_read_more_lines_inside_the_content_are_dropped() {
    let html = format!(
        "<body><article><p>{PROSE}</p><p>{PROSE}</p>\
         <p>Read more: <a href='/other'>Another story entirely</a></p>\
         <div class='share-tools'>Share on Facebook, Twitter</div>\
         <div><a href='/a'>One link</a> <a href='/b'>Another link</a></div>\
         <p>{PROSE}</p></article></body>"
    );
    let doc = extract(&html, &Url::parse("https://example.org/").unwrap());
    let text = doc.text();
    assert_eq!(
        text.matches("A paragraph of the article").count(),
        3,
        "{text:?}"
    );
    assert!(!text.contains("Read more"), "{text:?}");
    assert!(!text.contains("Facebook"), "{text:?}");
    assert!(!text.contains("One link"), "{text:?}");
}

#[test]
fn nested_lists_and_sentences_with_links_stay() {
    // A list of points inside a point, and a sentence pointing at three
    // places: content, not boxes of links ("Read more" lines still go).
    let html = format!(
        "<body><article><h1>Topic</h1><p>{PROSE}</p>\
         <p>Read on in <a href='/a/2'>article 2</a>, or see <a href='/x'>the outside \
         world</a> and <a href='/g.pdf'>the PDF guide</a>.</p>\
         <ul><li>First point<ul><li>Inner point A</li><li>Inner point B</li></ul></li>\
         <li>Second point</li></ul>\
         <p>Read more: <a href='/other'>Another story entirely</a></p>\
         <p>{PROSE}</p></article></body>"
    );
    let doc = extract(&html, &Url::parse("https://example.org/").unwrap());
    let text = doc.text();
    assert!(text.contains("Inner point A"), "{text}");
    assert!(text.contains("Read on in article 2"), "{text}");
    assert!(!text.contains("Another story entirely"), "{text}");
}

#[test]
fn an_index_page_keeps_its_list_of_pages() {
    let items: String = (1..=7)
        .map(|n| format!("<li><a href='/docs/a/{n}'>Article {n}</a></li>"))
        .collect();
    let html = format!(
        "<body><nav><a href='/'>Home</a></nav><main><article><h1>Documentation</h1>\
         <p>Every article of the docs, in order of reading.</p><ul>{items}</ul>\
         </article></main></body>"
    );
    let doc = extract(&html, &Url::parse("https://example.org/docs/").unwrap());
    let md = doc.markdown();
    assert!(
        md.contains("- [Article 3](https://example.org/docs/a/3)"),
        "{md}"
    );
    assert!(md.contains("# Documentation"), "{md}");
}

#[test]
fn an_articles_lead_before_its_body_is_kept_and_its_byline_is_not() {
    // A blog template: headline, standfirst and byline in the article's
    // header, the body in its own box that scoring picks.
    let html = format!(
        "<body><nav><a href='/'>Home</a></nav><article class='post'>\
         <header><h1>Headline</h1>\
         <div class='entry-excerpt'><p>The standfirst says in a sentence or two what \
         the article is about. It sits above the body.</p></div>\
         <p>By <a href='/author/x'>A. Writer</a></p><p>03.04.2020</p></header>\
         <div class='entry-content'><p>{PROSE}</p><p>{PROSE}</p><p>{PROSE}</p></div>\
         </article></body>"
    );
    let doc = extract(&html, &Url::parse("https://example.org/post").unwrap());
    let text = doc.text();
    let lead = text.find("The standfirst says").expect(&text);
    let body = text.find("A paragraph of the article").expect(&text);
    assert!(lead < body, "the lead comes first: {text:?}");
    assert!(!text.contains("A. Writer"), "{text:?}");
    assert!(!text.contains("03.04.2020"), "{text:?}");
}

#[test]
fn no_lead_is_taken_from_outside_the_article() {
    // Prose before the content but in another box of the page (a site's
    // tagline): not the article's lead.
    let html = format!(
        "<body><div class='site-intro'><p>A tagline of the whole site, long enough to \
         pass for prose. It is on every page.</p></div>\
         <div class='wrap'><div class='entry-content'><p>{PROSE}</p><p>{PROSE}</p></div></div>\
         </body>"
    );
    let doc = extract(&html, &Url::parse("https://example.org/post").unwrap());
    let text = doc.text();
    assert!(text.contains("A paragraph of the article"), "{text:?}");
    assert!(!text.contains("tagline"), "{text:?}");
}

#[test]
fn author_boxes_bylines_and_teasers_are_furniture() {
    // Each box is prose with many commas, so only its name gives it away:
    // the scoring and the cleaning alone would keep it.
    let boxed = |class: &str, what: &str| {
        format!(
            "<div class='{class}'><p>{what}, a box of prose, with commas, clauses, one, two, \
             three, four, five, six, seven, eight, and more, as long as a paragraph.</p></div>"
        )
    };
    let html = format!(
        "<body><article><p>{PROSE}</p><p>{PROSE}</p>{}{}{}{}</article></body>",
        boxed("author-box", "About the author"),
        boxed("byline", "Who wrote this"),
        boxed("teaser", "Another story"),
        boxed("teaser-text", "The teaser's own text"),
    );
    let doc = extract(&html, &Url::parse("https://example.org/post").unwrap());
    let text = doc.text();
    assert_eq!(
        text.matches("A paragraph of the article").count(),
        2,
        "{text:?}"
    );
    assert!(!text.contains("About the author"), "{text:?}");
    assert!(!text.contains("Who wrote this"), "{text:?}");
    assert!(!text.contains("Another story"), "{text:?}");
    // "text" says content, which outweighs "teaser".
    assert!(text.contains("The teaser's own text"), "{text:?}");
}

#[test]
fn a_reference_page_keeps_every_section_and_its_terminal_sessions() {
    // DocBook's reference page: sections of one kind, the options' long
    // list of definitions outscoring the rest, a long example in one
    // definition, and examples in `pre.screen` (not a screen reader's box).
    let options: String = (1..=12)
        .map(|n| {
            format!(
                "<dt>--option-{n}</dt><dd><p>Sets option {n}, as named.</p>{}</dd>",
                if n == 3 {
                    format!(
                        "<pre class='programlisting'>SELECT {n};</pre>{}",
                        format!("<p>{PROSE}</p>").repeat(6)
                    )
                } else {
                    String::new()
                }
            )
        })
        .collect();
    let html = format!(
        "<body><div class='navheader'><a href='/prev'>Prev</a></div><div class='refentry'>\
         <div class='refsect1'><h2>Description</h2><p>What the command does, in a sentence.</p></div>\
         <div class='refsect1'><h2>Options</h2><div class='variablelist'><dl>{options}</dl></div></div>\
         <div class='refsect1'><h2>Examples</h2><p>To dump a database:</p>\
         <pre class='screen'>$ pg_dump mydb &gt; db.sql</pre></div>\
         </div></body>"
    );
    let doc = extract(
        &html,
        &Url::parse("https://example.org/app-pgdump.html").unwrap(),
    );
    let md = doc.markdown();
    assert!(md.contains("What the command does"), "{md}");
    assert!(md.contains("option-12"), "{md}");
    assert!(md.contains("SELECT 3;"), "{md}");
    assert!(md.contains("\n$ pg_dump mydb > db.sql\n"), "{md}");
}

#[test]
fn a_heading_box_whose_class_reads_page_does_not_win_over_the_text() {
    // DocBook's section (PostgreSQL's libpq-cancel.html): the heading in a
    // `div.titlepage` ("page" weighs as content, as in Readability), a
    // sentence of introduction, then the functions as a list of
    // definitions, each a short paragraph and a synopsis. Scored with class
    // weights the heading's box won and the list was lost.
    let entries: String = ["PQgetCancel", "PQfreeCancel", "PQcancel"]
        .iter()
        .map(|f| {
            format!(
                "<dt><span class='term'><code class='function'>{f}</code></span></dt>\
                 <dd><p>Does what {f} does, with <a href='#x'><code>{f}</code></a>.</p>\
                 <pre class='synopsis'>int {f}(PGcancel *cancel);</pre>\
                 <p>Returns a value, and the caller frees what it was given.</p></dd>"
            )
        })
        .collect();
    let html = format!(
        "<body><div class='navheader'><a href='/prev'>Prev</a> <a href='/next'>Next</a></div>\
         <div class='sect1'><div class='titlepage'><div><div><h2 class='title'>34.7. Canceling \
         Queries in Progress</h2></div></div></div>\
         <p>A client application can request cancellation of a command, using the functions \
         described in this section.</p>\
         <div class='variablelist'><dl class='variablelist'>{entries}</dl></div></div>\
         <div class='navfooter'><a href='/prev'>Prev</a></div></body>"
    );
    let doc = extract(
        &html,
        &Url::parse("https://example.org/libpq-cancel.html").unwrap(),
    );
    let md = doc.markdown();
    assert!(md.contains("Canceling Queries in Progress"), "{md}");
    assert!(md.contains("can request cancellation"), "{md}");
    for f in ["PQgetCancel", "PQfreeCancel", "PQcancel"] {
        assert!(
            md.contains(&format!("int {f}(PGcancel *cancel);")),
            "{f}: {md}"
        );
    }
    assert!(!md.contains("Next"), "{md}");
}

#[test]
fn a_short_page_beside_a_long_table_of_contents_is_not_the_contents() {
    // mdBook's part page (the Rust book's appendix-00.html): a heading and
    // a sentence, beside the book's table of contents, which holds far more
    // text. Scored again for being short, the pick must not be the menu.
    let chapters: String = (1..=40)
        .map(|n| format!("<li class='chapter-item'><a href='ch{n}.html'><strong>{n}.</strong> Chapter number {n} of the book</a></li>"))
        .collect();
    let html = format!(
        "<body><nav id='sidebar' class='sidebar'><div class='sidebar-scrollbox'>\
         <ol class='chapter'>{chapters}</ol></div></nav>\
         <div id='page-wrapper' class='page-wrapper'><div class='page'>\
         <div id='menu-bar' class='menu-bar'><h1 class='menu-title'>The Book</h1></div>\
         <div id='content' class='content'><main><h1><a class='header' href='#appendix'>Appendix</a></h1>\
         <p>The following sections contain reference material you may find useful.</p>\
         </main></div></div></div></body>"
    );
    let doc = extract(
        &html,
        &Url::parse("https://example.org/appendix-00.html").unwrap(),
    );
    let md = doc.markdown();
    assert!(md.contains("reference material"), "{md}");
    assert!(!md.contains("Chapter number"), "{md}");
}

#[test]
fn code_beside_the_best_box_is_kept_with_it() {
    // PostgreSQL's xplang-install.html: a procedure whose steps each hold a
    // synopsis, beside an example of long paragraphs that scores best. The
    // steps' paragraphs score inside list items, too deep to lift their box.
    let steps: String = ["handler", "inline", "validator"]
        .iter()
        .map(|f| {
            format!(
                "<li class='step'><p>Declare the {f} function.</p>\
                 <pre class='synopsis'>CREATE FUNCTION {f}_function_name()</pre></li>"
            )
        })
        .collect();
    let html = format!(
        "<body><div class='navheader'><a href='/prev'>Prev</a></div><div class='sect1'>\
         <div class='titlepage'><h2>Installing Procedural Languages</h2></div>\
         <div class='procedure'><ol class='procedure'>{steps}</ol></div>\
         <div class='example'><p>{PROSE}</p><pre class='programlisting'>CREATE TRUSTED LANGUAGE plperl;</pre>\
         <p>{PROSE}</p><p>{PROSE}</p></div></div></body>"
    );
    let doc = extract(
        &html,
        &Url::parse("https://example.org/xplang-install.html").unwrap(),
    );
    let md = doc.markdown();
    assert!(md.contains("CREATE TRUSTED LANGUAGE plperl;"), "{md}");
    for f in ["handler", "inline", "validator"] {
        assert!(
            md.contains(&format!("CREATE FUNCTION {f}_function_name()")),
            "{f}: {md}"
        );
    }
    assert!(!md.contains("Prev"), "{md}");
}

#[test]
fn nothing_inside_a_code_block_is_furniture() {
    // Sphinx's highlighted source pages (`_modules/…`): each function is a
    // `div.viewcode-block` inside the `pre`, its id the function's name.
    let html = format!(
        "<body><div class='sidebar'><a href='/'>Home</a></div><div role='main'><h1>Source code</h1>\
         <p>{PROSE}</p><div class='highlight'><pre><span class='kn'>import</span> os\n\
         <div class='viewcode-block' id='WebSupport.add_comment'><a class='viewcode-back' \
         href='api.html'>[docs]</a>    <span class='k'>def</span> add_comment(self, text):\n\
         \x20       return self.storage.add_comment(text)\n</div>\
         <div class='viewcode-block' id='WebSupport.get_data'>    def get_data(self):\n\
         \x20       return None\n</div></pre></div></div></body>"
    );
    let doc = extract(
        &html,
        &Url::parse("https://example.org/_modules/core.html").unwrap(),
    );
    let md = doc.markdown();
    assert!(md.contains("def add_comment(self, text):"), "{md}");
    assert!(md.contains("return self.storage.add_comment(text)"), "{md}");
    assert!(md.contains("def get_data(self):"), "{md}");
}

#[test]
fn an_articles_own_aside_with_code_is_kept() {
    // Python's asyncio page: reST's sidebar directive, an `aside` in the
    // content holding the module's first example. An aside of related
    // links in the content, and one with code outside it, still go.
    let html = format!(
        "<body><aside class='site-tools'><pre>curl https://example.org/install.sh</pre></aside>\
         <div class='body' role='main'><section id='module-asyncio'><h1>asyncio</h1>\
         <aside class='sidebar'><p class='sidebar-title'>Hello World!</p>\
         <div class='highlight'><pre>async def main():\n    print('Hello ...')</pre></div></aside>\
         <p>{PROSE}</p><p>{PROSE}</p>\
         <aside class='related'><p>Read also: the threading module, and more.</p></aside>\
         <p>{PROSE}</p></section></div></body>"
    );
    let doc = extract(
        &html,
        &Url::parse("https://example.org/asyncio.html").unwrap(),
    );
    let md = doc.markdown();
    assert!(md.contains("async def main():"), "{md}");
    assert!(!md.contains("Read also"), "{md}");
    assert!(!md.contains("install.sh"), "{md}");
}

#[test]
fn a_link_alone_in_a_table_cell_is_the_cells_data() {
    // An API index: each row a linked name and what it does. Outside a
    // table, a paragraph that is all link is a "Read more" line and goes.
    let html = format!(
        "<body><div role='main'><p>{PROSE}</p><table>\
         <tr><td><p><a href='/loop#run'><code>loop.run()</code></a></p></td><td><p>Runs it.</p></td></tr>\
         <tr><td><p><a href='/loop#stop'><code>loop.stop()</code></a></p></td><td><p>Stops it.</p></td></tr>\
         </table><p><a href='/other'>Another story entirely</a></p></div></body>"
    );
    let doc = extract(&html, &Url::parse("https://example.org/api").unwrap());
    let md = doc.markdown();
    assert!(
        md.contains("| [`loop.run()`](https://example.org/loop#run) | Runs it. |"),
        "{md}"
    );
    assert!(md.contains("[`loop.stop()`]"), "{md}");
    assert!(!md.contains("Another story"), "{md}");
}

#[test]
fn a_table_that_outscores_its_page_keeps_the_sections_around_it() {
    // PostgreSQL's hstore page: its operators' table, prose in every cell,
    // outscores the sections of examples around it.
    // One operator's description is long: its cell scores best.
    let rows: String = (1..=15)
        .map(|n| {
            let prose = match n {
                7 => format!("<p>{PROSE}</p>").repeat(8),
                _ => "<p>Does what it says.</p>".to_string(),
            };
            format!("<tr><td><p>op{n}</p></td><td>{prose}</td></tr>")
        })
        .collect();
    let html = format!(
        "<body><div class='sect1'>\
         <div class='sect2'><h3>Input</h3><p>Written as key, value pairs, like this one.</p>\
         <pre class='programlisting'>SELECT 'a=&gt;1'::hstore;</pre></div>\
         <div class='sect2'><h3>Operators</h3><div class='table'><p class='title'>Table F.1</p>\
         <div class='table-contents'><table class='table'><tbody>{rows}</tbody></table></div></div></div>\
         <div class='sect2'><h3>Examples</h3><p>Add a key, or update an existing one.</p>\
         <pre class='programlisting'>UPDATE tab SET h = h || hstore('c', '3');</pre></div>\
         </div></body>"
    );
    let doc = extract(
        &html,
        &Url::parse("https://example.org/hstore.html").unwrap(),
    );
    let md = doc.markdown();
    assert!(md.contains("SELECT 'a=>1'::hstore;"), "{md}");
    assert!(md.contains("| op15 |"), "{md}");
    assert!(
        md.contains("UPDATE tab SET h = h || hstore('c', '3');"),
        "{md}"
    );
}

#[test]
fn lists_of_links_in_a_table_cell_are_the_cells_data() {
    // A general index: each cell a term and its entries, all links.
    let entry = |t: &str| {
        format!(
            "<td><ul><li>{t}<ul><li><a href='/a#{t}'>in module {t}</a></li>\
             <li><a href='/b#{t}'>in a command interpreter</a></li></ul></li></ul></td>"
        )
    };
    let html = format!(
        "<body><div role='main'><h1>Index</h1><p>{PROSE}</p><table class='indextable'>\
         <tr>{}{}</tr><tr>{}{}</tr></table></div></body>",
        entry("alpha"),
        entry("beta"),
        entry("gamma"),
        entry("delta")
    );
    let doc = extract(
        &html,
        &Url::parse("https://example.org/genindex.html").unwrap(),
    );
    let md = doc.markdown();
    assert!(
        md.contains("[in module gamma](https://example.org/a#gamma)"),
        "{md}"
    );
    assert!(
        md.contains("[in a command interpreter](https://example.org/b#delta)"),
        "{md}"
    );
}

#[test]
fn a_section_whose_id_is_its_headings_slug_is_read_by_its_heading() {
    // docutils names each section after its heading: a section headed
    // "Comments" is about comments, not a comment box; a blog's comment
    // section headed "2 Comments" is still one.
    let html = format!(
        "<body><div role='main'><section id='basics'><h1>Basics</h1><p>{PROSE}</p>\
         <section id='footnotes'><h2>Footnotes<a class='headerlink' href='#footnotes'>¶</a></h2>\
         <p>Footnotes are written with brackets, like this, in the text.</p>\
         <pre>Lorem ipsum [#f1]_ dolor</pre></section>\
         <section id='comments'><h2>Comments</h2><p>A comment starts with two dots.</p>\
         <pre>.. This is a comment.</pre></section>\
         <section id='html-metadata'><span id='html-meta'></span><h2>HTML Metadata</h2>\
         <p>The meta directive adds a tag.</p><pre>.. meta::</pre></section>\
         <section id='metaclasses'><h4><span class='section-number'>3.3.3.1. </span>Metaclasses</h4>\
         <p>Classes are built by type.</p><pre>class MyClass(metaclass=Meta):</pre></section>\
         <div class='sect2' id='SQL-SYNTAX-COMMENTS'><div class='titlepage'><h3>4.1.5. Comments in SQL</h3></div>\
         <p>A comment is a run of characters beginning with two dashes.</p>\
         <pre class='programlisting'>-- This is a standard SQL comment</pre></div></section>\
         <section id='comments'><h2>2 Comments</h2><p>Great post, thanks, I liked it a lot, really.</p></section>\
         </div></body>"
    );
    let doc = extract(
        &html,
        &Url::parse("https://example.org/basics.html").unwrap(),
    );
    let md = doc.markdown();
    assert!(md.contains("Lorem ipsum [#f1]_ dolor"), "{md}");
    assert!(md.contains(".. This is a comment."), "{md}");
    // An empty anchor before the heading (docutils' old id) is not the
    // heading's place.
    assert!(md.contains(".. meta::"), "{md}");
    // Sphinx's section numbers are not in docutils' id.
    assert!(md.contains("class MyClass(metaclass=Meta):"), "{md}");
    // DocBook's anchor names, in capitals, name the subject too.
    assert!(md.contains("-- This is a standard SQL comment"), "{md}");
    assert!(!md.contains("Great post"), "{md}");
}

#[test]
fn a_lone_table_or_example_with_its_title_keeps_the_section_around_it() {
    // PostgreSQL's enum functions page: one table (prose in every cell)
    // under its `p.title`, between the section's intro, its code and a note.
    let rows: String = (1..=6)
        .map(|n| format!("<tr><td><p>enum_fn{n}(anyenum)</p><p>{PROSE}</p></td></tr>"))
        .collect();
    let html = format!(
        "<body><div class='navheader'><a href='/prev'>Prev</a> <a href='/next'>Next</a></div>\
         <div class='sect1' id='FUNCTIONS-ENUM'><div class='titlepage'><h2 class='title'>9.10. Enum Support Functions</h2></div>\
         <p>For enum types, there are several functions that allow cleaner programming without \
         hard-coding particular values of an enum type. The examples assume an enum type created as:</p>\
         <pre class='programlisting'>CREATE TYPE rainbow AS ENUM ('red', 'orange');</pre>\
         <div class='table' id='FUNCTIONS-ENUM-TABLE'><p class='title'><strong>Table 9.35. Enum Support Functions</strong></p>\
         <div class='table-contents'><table class='table'><tbody>{rows}</tbody></table></div></div>\
         <p>Notice that except for the two-argument form of enum_range, these ignore the value passed.</p>\
         </div><div class='navfooter'><a href='/up'>Up</a></div></body>"
    );
    let md = markdown(&html, "https://example.org/functions-enum.html");
    assert!(md.contains("enum_fn6(anyenum)"), "{md}");
    assert!(md.contains("several functions that allow"), "{md}");
    assert!(
        md.contains("CREATE TYPE rainbow AS ENUM ('red', 'orange');"),
        "{md}"
    );
    assert!(md.contains("Notice that except"), "{md}");
    assert!(!md.contains("Prev"), "{md}");

    // PL/Perl's install page: an example (its title, then its contents)
    // beside a procedure of steps, each with its command.
    let steps: String = (1..=4)
        .map(|n| {
            format!(
                "<li class='step'><p>Step {n}: run the command below as the database owner.</p>\
                 <pre class='synopsis'>createlang step{n}</pre></li>"
            )
        })
        .collect();
    let html = format!(
        "<body><div class='sect1'><div class='titlepage'><h2 class='title'>Installing a language</h2></div>\
         <p>{PROSE}</p><div class='procedure'><ol class='procedure'>{steps}</ol></div>\
         <div class='example'><p class='title'><strong>Example 42.1. Manual installation</strong></p>\
         <div class='example-contents'><p>{PROSE} {PROSE}</p><p>{PROSE}</p>\
         <pre class='programlisting'>CREATE EXTENSION plperl;</pre></div></div></div></body>"
    );
    let md = markdown(&html, "https://example.org/xplang-install.html");
    assert!(md.contains("CREATE EXTENSION plperl;"), "{md}");
    for n in 1..=4 {
        assert!(md.contains(&format!("createlang step{n}")), "{md}");
    }
}

#[test]
fn a_lead_in_left_with_nothing_to_lead_into_is_dropped() {
    // A blog post's "related" box: its links go as furniture, and the
    // heading or line that introduced them must go with them.
    let related = "<p><a href='/a'>Another story entirely, about something else</a></p>";
    for lead in [
        "<h2>Das könnte dich auch interessieren</h2>",
        "<p>Das Thema könnte dich auch interessieren:</p>",
        "<p><strong>Read also:</strong></p>",
    ] {
        let html = format!(
            "<body><article><h1>The story</h1><p>{PROSE}</p><p>{PROSE}</p>{lead}{related}</article></body>"
        );
        let md = markdown(&html, "https://example.org/story");
        assert!(md.contains("written out in full sentences."), "{md}");
        assert!(!md.contains("nteressieren"), "{md}");
        assert!(!md.contains("Read also"), "{md}");
    }
    // A line ending in a colon that leads into code, a table or an image
    // stays, and so does the last section's heading above its text.
    for (tail, kept) in [
        (
            "<p>Run it as follows:</p><pre>make run</pre>",
            "Run it as follows:",
        ),
        (
            "<p>The figures:</p><table><tr><td>1</td><td>2</td></tr></table>",
            "The figures:",
        ),
        (
            "<p>As seen here:</p><img src='/a.png' alt='a chart'>",
            "As seen here:",
        ),
        (
            "<h2>Last words</h2><p>Short, and said.</p>",
            "## Last words",
        ),
        // Nothing followed it: a heading that is the content (rustdoc's
        // last `impl`), or a sentence set as one (a pull quote).
        ("<h3>impl Drop for Guard</h3>", "impl Drop for Guard"),
        ("<h4>It was, they said, a nightmare.</h4>", "a nightmare."),
    ] {
        let html = format!(
            "<body><article><h1>The story</h1><p>{PROSE}</p><p>{PROSE}</p>{tail}</article></body>"
        );
        let md = markdown(&html, "https://example.org/story");
        assert!(md.contains(kept), "{md}");
    }
}

#[test]
fn a_bold_label_and_its_list_of_links_late_in_the_article_are_a_related_box() {
    let list = "<ul><li><a href='/a'>Fourteen tips for more followers</a></li>\
                <li><a href='/b'>The nine most shared posts of the year</a></li>\
                <li><a href='/c'>How to put your feed back in order</a></li></ul>";
    let page = |lead: &str| {
        format!(
            "<body><article><h1>The story</h1><p>{PROSE}</p><p>{PROSE}</p><p>{PROSE}</p>\
             {lead}{list}<p>{PROSE} The end, with its last words.</p></article></body>"
        )
    };
    let md = |lead: &str| markdown(&page(lead), "https://example.org/story");
    let related = md("<p><strong>Also interesting:</strong></p>");
    assert!(!related.contains("Also interesting"), "{related}");
    assert!(!related.contains("Fourteen tips"), "{related}");
    assert!(related.contains("its last words."), "{related}");
    // A sentence of the text that leads into a list of links is the
    // text's own ("The modules are:"), and so is a section under a heading
    // of its own (Wikipedia's "See also").
    for lead in [
        "<p>The modules described in this chapter are:</p>",
        "<h2>See also</h2>",
    ] {
        let kept = md(lead);
        assert!(kept.contains("Fourteen tips"), "{kept}");
    }
    // Early in the article, a list of links is what the text is about.
    let early = format!(
        "<body><article><h1>The story</h1><p><strong>Start here:</strong></p>{list}\
         <p>{PROSE}</p><p>{PROSE}</p></article></body>"
    );
    let md = markdown(&early, "https://example.org/story");
    assert!(md.contains("Fourteen tips"), "{md}");
}

#[test]
fn a_list_items_short_linked_paragraph_is_the_items_text() {
    // Sphinx writes each item and each definition as a paragraph; "Set
    // `isolated` to 1." and "See `tp_hash`." are mostly link, and were
    // dropped as "Read more" lines, emptying the list.
    let html = format!(
        "<body><div class='body' role='main'><section id='s'><h1>Configuration</h1>\
         <p>{PROSE}</p><p>If a file is present:</p><ul class='simple'>\
         <li><p>Set <a href='#c.isolated'><code>isolated</code></a> to <code>1</code>.</p></li>\
         <li><p>Set <a href='#c.site'><code>site_import</code></a> to <code>0</code>.</p></li></ul>\
         <dl class='c type'><dt id='c.hashfunc'>typedef Py_hash_t (*hashfunc)(PyObject*)</dt>\
         <dd><em>Part of the <a href='stable.html'>Stable ABI</a>.</em>\
         <p>See <a href='#c.tp_hash'><code>tp_hash</code></a>.</p></dd></dl>\
         <p>{PROSE}</p></section></div></body>"
    );
    let md = markdown(&html, "https://docs.example.org/c-api/init_config.html");
    assert!(md.contains("Set [`isolated`]"), "{md}");
    assert!(md.contains("Set [`site_import`]"), "{md}");
    assert!(md.contains("See [`tp_hash`]"), "{md}");
    // A product list's last paragraph, a lone button, is still furniture.
    let card = |n: u32| {
        format!(
            "<li><h3>Printer {n}</h3><p>{PROSE}</p>\
             <p class='row'><a class='button' href='/p/{n}'>Zum Produkt</a></p></li>"
        )
    };
    let html = format!(
        "<body><main><h1>Printers</h1><p>{PROSE}</p><ul>{}{}{}</ul></main></body>",
        card(1),
        card(2),
        card(3)
    );
    let md = markdown(&html, "https://shop.example.org/printers");
    assert!(md.contains("Printer 2"), "{md}");
    assert!(!md.contains("Zum Produkt"), "{md}");
}

#[test]
fn a_dotted_id_names_an_api_item_not_a_box() {
    // Sphinx's `imaplib.IMAP4.login` and rustdoc's `method.skip`: "login"
    // and "skip" are words of furniture in a style hook's name.
    let html = format!(
        "<body><div role='main'><h1>imaplib</h1><p>{PROSE}</p>\
         <dl class='py method'><dt id='imaplib.IMAP4.login'>IMAP4.login(user, password)</dt>\
         <dd><p>Identify the client using a plaintext password, which will be quoted.</p></dd></dl>\
         <section id='method.skip'><h4>fn skip(self, n: usize) -> Skip</h4>\
         <p>Creates an iterator that skips the first n elements, then yields the rest.</p></section>\
         <p>{PROSE}</p></div></body>"
    );
    let md = markdown(&html, "https://docs.example.org/imaplib.html");
    assert!(md.contains("IMAP4.login(user, password)"), "{md}");
    assert!(md.contains("plaintext password"), "{md}");
    assert!(md.contains("fn skip(self"), "{md}");
    assert!(md.contains("skips the first n elements"), "{md}");
}

#[test]
fn a_chapters_table_of_contents_is_its_content() {
    // Sphinx's chapter page: a section per group, each its heading and a
    // `div.toctree-wrapper` listing the group's pages, with nested entries.
    let toctree = |pages: &[&str]| -> String {
        let items: String = pages
            .iter()
            .map(|p| {
                format!(
                    "<li class='toctree-l1'><a href='{p}.html'>{p} Objects</a><ul>\
                     <li class='toctree-l2'><a href='{p}.html#api'>The {p} API</a></li></ul></li>"
                )
            })
            .collect();
        format!("<div class='toctree-wrapper compound'><ul>{items}</ul></div>")
    };
    let html = format!(
        "<body><div class='sphinxsidebar'><a href='/'>Home</a></div>\
         <div class='body' role='main'><section id='concrete-objects-layer'>\
         <h1>Concrete Objects Layer</h1><p>{PROSE}</p>\
         <section id='fundamental-objects'><h2>Fundamental Objects</h2>\
         <p>This section describes Python type objects and the singleton object None.</p>{}</section>\
         <section id='numeric-objects'><h2>Numeric Objects</h2>{}</section>\
         <section id='sequence-objects'><h2>Sequence Objects</h2>{}</section></section></div></body>",
        toctree(&["Type", "None"]),
        toctree(&["Integer", "Boolean", "Float"]),
        toctree(&["Bytes", "Tuple", "List"]),
    );
    let md = markdown(&html, "https://docs.example.org/c-api/concrete.html");
    for p in ["Type", "Integer", "Float", "Bytes", "List"] {
        assert!(md.contains(&format!("[{p} Objects]")), "{p}: {md}");
        assert!(md.contains(&format!("[The {p} API]")), "{p}: {md}");
    }
    assert!(md.contains("## Numeric Objects"), "{md}");

    // DocBook's chapter page: its title, its `div.toc` of the chapter's
    // pages, then the introduction; the bars of Prev/Next go. A section
    // page's `div.toc`, every link a place in the page, is navigation.
    let page = |toc_href: &str| {
        format!(
            "<body><div class='navheader'><table><tr><td><a href='prev.html'>Prev</a></td>\
             <td><a href='up.html'>Up</a></td><td><a href='next.html'>Next</a></td></tr></table></div>\
             <div class='chapter' id='ARCHIVE-MODULES'><div class='titlepage'><div><div>\
             <h2 class='title'>Chapter 51. Archive Modules</h2></div></div></div>\
             <div class='toc'><p><strong>Table of Contents</strong></p><dl class='toc'>\
             <dt><span class='sect1'><a href='{toc_href}'>51.1. Initialization Functions</a></span></dt>\
             <dt><span class='sect1'><a href='{toc_href}x'>51.2. Archive Module Callbacks</a></span></dt>\
             </dl></div><p>{PROSE}</p><p>{PROSE}</p></div>\
             <div class='navfooter'><a href='next.html'>Next</a></div></body>"
        )
    };
    let md = markdown(
        &page("archive-module-init.html"),
        "https://docs.example.org/archive-modules.html",
    );
    assert!(md.contains("51\\.1. Initialization Functions"), "{md}");
    assert!(md.contains("51\\.2. Archive Module Callbacks"), "{md}");
    assert!(md.contains("the words a reader came for"), "{md}");
    assert!(!md.contains("Prev"), "{md}");
    let md = markdown(
        &page("archive-modules.html#INIT"),
        "https://docs.example.org/archive-modules.html",
    );
    assert!(!md.contains("Initialization Functions"), "{md}");
    assert!(md.contains("the words a reader came for"), "{md}");
}

#[test]
fn a_share_bar_or_related_stories_in_a_div_stay_boxes() {
    // A `div` around a list of links is only a table of contents when
    // named so: a news page's share bar and its related stories are not.
    let html = format!(
        "<body><article><h1>The story</h1><p>{PROSE}</p><p>{PROSE}</p><p>{PROSE}</p>\
         <div class='shariff'><ul><li><a href='https://t.example/s'>twittern</a></li>\
         <li><a href='https://f.example/s'>teilen</a></li></ul></div>\
         <div class='content-related-stories'><h3>Related stories</h3><ul>\
         <li><a href='/a'>Hoarding sends mask prices soaring in the city</a></li>\
         <li><a href='/b'>Wanted man arrested after buying face masks</a></li></ul></div>\
         <div id='toc_container' class='toc_white'><p class='toc_title'>Contents</p><ul>\
         <li><a href='#one'>Where it began</a></li><li><a href='#two'>Where it went</a></li></ul></div>\
         <p>{PROSE} The end.</p></article></body>"
    );
    let md = markdown(&html, "https://news.example.org/story");
    assert!(md.contains("The end."), "{md}");
    for furniture in ["twittern", "Hoarding", "Where it began"] {
        assert!(!md.contains(furniture), "{furniture}: {md}");
    }
}

#[test]
fn a_paragraph_ending_in_a_colon_keeps_the_list_it_leads_into() {
    // DocBook's section: the best box is the introduction, and the list it
    // leads into, of short items that score nothing, stood beside it.
    let html = "<body><div class='sect1' id='DDL-OTHERS'><div class='titlepage'><div><div>\
         <h2 class='title'>5.13. Other Database Objects</h2></div></div></div>\
         <p>Tables are the central objects in a relational database structure, because they \
         hold your data. But they are not the only objects that exist in a database, and we \
         give you a list here so that you are aware of what is possible:</p>\
         <div class='itemizedlist'><ul class='itemizedlist'><li><p>Views</p></li>\
         <li><p>Functions, procedures, and operators</p></li><li><p>Triggers</p></li></ul></div>\
         </div></body>";
    let md = markdown(html, "https://docs.example.org/ddl-others.html");
    assert!(md.contains("what is possible:"), "{md}");
    for item in ["- Views", "- Functions, procedures", "- Triggers"] {
        assert!(md.contains(item), "{item}: {md}");
    }
}

#[test]
fn a_marked_main_left_whole_is_the_content_however_short() {
    // mdBook's chapter of a heading alone (the Unstable Book's "Compiler
    // flags"), beside the book's table of contents: the furniture rules
    // leave under 5% of the page, which reads as a misfire, but they left
    // the page's `main` whole. The menu is not the content.
    let chapters: String = (1..=60)
        .map(|n| {
            format!("<li class='chapter-item'><a href='f{n}.html'>feature_number_{n}</a></li>")
        })
        .collect();
    let html = format!(
        "<body><nav id='sidebar' class='sidebar'><div class='sidebar-scrollbox'>\
         <ol class='chapter'>{chapters}</ol></div></nav>\
         <div id='page-wrapper' class='page-wrapper'><div class='page'>\
         <div id='content' class='content'><main><h1 id='compiler-flags'>\
         <a class='header' href='#compiler-flags'>Compiler flags</a></h1></main>\
         <nav class='nav-wrapper'><a rel='next' href='f1.html'>Next</a></nav></div></div></div></body>"
    );
    let md = markdown(&html, "https://example.org/compiler-flags.html");
    assert!(md.contains("Compiler flags"), "{md}");
    assert!(!md.contains("feature_number"), "{md}");
    // A page builder that names every wrapper "sidebar", its `main`
    // holding them: the rules took from inside `main`, and do not apply.
    let html = format!(
        "<body><main><div class='sidebar-section'><p>{PROSE}</p></div>\
         <div class='sidebar-section'><p>{PROSE}</p></div></main></body>"
    );
    let md = markdown(&html, "https://example.org/built");
    assert!(md.contains("the words a reader came for"), "{md}");
}

#[test]
fn a_signature_full_of_type_links_is_code_not_a_link_box() {
    // rustdoc's function page: the declaration in `div.item-decl` > `pre`,
    // each type a link (over half the text), beside the description.
    let ty = "<a class='struct' href='../arm/struct.uint32x4_t.html'>uint32x4_t</a>";
    let html = format!(
        "<body><nav class='sidebar'><a href='index.html'>core::arch</a></nav><main>\
         <section id='main-content' class='content'><div class='main-heading'><h1 class='fqn'>\
         Function <a href='index.html'>aarch64</a>::<a class='fn' href='#'>vminq_u32</a></h1></div>\
         <div class='docblock item-decl'><pre class='rust fn'><code>pub unsafe fn vminq_u32(a: {ty}, \
         b: {ty}) -&gt; {ty}</code></pre></div>\
         <details class='rustdoc-toggle top-doc' open><summary class='hideme'><span>Expand description</span>\
         </summary><div class='docblock'><p>Minimum (vector), lane by lane, of the two vectors given.</p>\
         </div></details></section></main></body>"
    );
    let md = markdown(
        &html,
        "https://example.org/core/arch/aarch64/fn.vminq_u32.html",
    );
    assert!(
        md.contains("pub unsafe fn vminq_u32(a: uint32x4_t, b: uint32x4_t) -> uint32x4_t"),
        "{md}"
    );
    assert!(md.contains("Minimum (vector)"), "{md}");
}

#[test]
fn documentations_own_boxes_keep_their_links() {
    // rustdoc's description of an item (`div.docblock`) of one linked
    // sentence and a list of references, and Sphinx's "See also"
    // admonition of related functions: the author's text, all links.
    let html = format!(
        "<body><main><section id='main-content' class='content'><h1>Function cpuid</h1>\
         <p>{PROSE}</p><p>{PROSE}</p>\
         <details class='rustdoc-toggle top-doc' open><summary>Expand description</summary>\
         <div class='docblock'><p>See <a href='fn.cpuid.html'><code>cpuid</code></a>.</p>\
         <ul><li><a href='https://example.org/sdm.pdf'>Intel 64 Software Developer's Manual</a></li>\
         <li><a href='https://example.org/apm.pdf'>AMD64 Architecture Programmer's Manual</a></li></ul>\
         </div></details>\
         <div class='admonition seealso'><p class='admonition-title'>See also</p><dl class='simple'>\
         <dt><a href='socket.html'>Class socket.socket</a></dt><dd><p>Documentation of the socket class</p></dd>\
         </dl></div></section></main></body>"
    );
    let md = markdown(
        &html,
        "https://docs.example.org/core/arch/fn.cpuid_count.html",
    );
    assert!(md.contains("See [`cpuid`]"), "{md}");
    assert!(md.contains("Intel 64 Software Developer's Manual"), "{md}");
    assert!(md.contains("AMD64 Architecture"), "{md}");
    assert!(md.contains("Class socket.socket"), "{md}");
}

#[test]
fn a_code_example_is_not_the_whole_of_a_marked_article() {
    // rustdoc's page of one intrinsic: the declaration, a short sentence,
    // then an example of many lines (and commas) that holds most of the
    // page's text and scores best of all.
    let rows: String = (0..12)
        .map(|r| {
            format!(
                "    {}, {}, {}, {}, {}, {}, {}, {},\n",
                r,
                r + 1,
                r + 2,
                r + 3,
                r + 4,
                r + 5,
                r + 6,
                r + 7
            )
        })
        .collect();
    let html = format!(
        "<body><nav class='sidebar'><a href='index.html'>core::arch::x86</a></nav><main>\
         <section id='main-content' class='content'><div class='main-heading'><h1 class='fqn'>\
         Function <a href='index.html'>x86</a>::<a class='fn' href='#'>_mm256_unpackhi_epi8</a></h1></div>\
         <div class='docblock item-decl'><pre class='rust fn'><code>pub unsafe fn \
         _mm256_unpackhi_epi8(a: <a href='struct.__m256i.html'>__m256i</a>, b: \
         <a href='struct.__m256i.html'>__m256i</a>) -&gt; <a href='struct.__m256i.html'>__m256i</a>\
         </code></pre></div>\
         <details class='rustdoc-toggle top-doc' open><summary class='hideme'><span>Expand description</span>\
         </summary><div class='docblock'><p>Unpacks and interleaves 8-bit integers of two lanes.</p>\
         <div class='example-wrap'><pre class='rust rust-example-rendered'><code>let a = _mm256_setr_epi8(\n{rows});\n\
         let c = _mm256_unpackhi_epi8(a, b);\n</code></pre></div>\
         <p><a href='https://example.org/intel'>Intel's documentation</a></p>\
         </div></details></section></main></body>"
    );
    let md = markdown(
        &html,
        "https://example.org/core/arch/x86/fn._mm256_unpackhi_epi8.html",
    );
    assert!(
        md.contains("pub unsafe fn _mm256_unpackhi_epi8(a: __m256i, b: __m256i) -> __m256i"),
        "{md}"
    );
    assert!(md.contains("Unpacks and interleaves"), "{md}");
    assert!(md.contains("let c = _mm256_unpackhi_epi8(a, b);"), "{md}");
}

#[test]
fn a_footnote_the_text_cites_is_content() {
    // mdBook's footnote: `div.footnote-definition`, which Readability's
    // word list ("foot") reads as a footer.
    let html = format!(
        "<body><main><h1>Instrumentation-based Code Coverage</h1><p>{PROSE}</p>\
         <p>{PROSE} The examples exclude doc tests.<sup class='footnote-reference'>\
         <a href='#79417'>1</a></sup></p><p>{PROSE}</p>\
         <div class='footnote-definition' id='79417'><sup class='footnote-definition-label'>1</sup>\
         <p>There is ongoing work to resolve a known issue (#79417) that doc test coverage \
         generates incorrect line numbers.</p></div>\
         <p>{PROSE}</p><div class='site-footer'>Built with mdBook</div></main></body>"
    );
    let md = markdown(&html, "https://example.org/rustc/instrument-coverage.html");
    assert!(md.contains("There is ongoing work"), "{md}");
    assert!(
        !md.contains("Built with mdBook"),
        "the footer still goes: {md}"
    );
}

#[test]
fn a_table_of_data_whose_cells_are_links_stays() {
    // rustdoc's "Underlying System calls" of `std::time::Instant`: each
    // call a link to its manual, in a `div` of its own, so the box is
    // mostly links; its named columns say it is data.
    let call = |name: &str| {
        format!("<a href='https://example.org/man/{name}'>{name} (Monotonic Clock)</a>")
    };
    let html = format!(
        "<body><main><h1>Struct Instant</h1><p>{PROSE}</p><p>{PROSE}</p>\
         <h2>Underlying System calls</h2>\
         <p>The following system calls are currently being used by now():</p>\
         <div><table><thead><tr><th>Platform</th><th>System call</th></tr></thead><tbody>\
         <tr><td>UNIX</td><td>{}</td></tr><tr><td>Darwin</td><td>{}</td></tr>\
         <tr><td>VXWorks</td><td>{}</td></tr><tr><td>WASI</td><td>{}</td></tr></tbody></table></div>\
         <p>{PROSE}</p><div><a href='/a'>One link</a> <a href='/b'>Another link</a></div></main></body>",
        call("clock_gettime"),
        call("mach_absolute_time"),
        call("clock_gettime"),
        call("__wasi_clock_time_get")
    );
    let md = markdown(&html, "https://example.org/std/time/struct.Instant.html");
    assert!(md.contains("| Platform | System call |"), "{md}");
    assert!(md.contains("| Darwin |"), "{md}");
    assert!(!md.contains("One link"), "a box of links still goes: {md}");
}
