//! A small documentation section under `/docs/`, for the content outputs
//! (`--markdown`, `--content`): real content inside a shared template.
//!
//! Every page has the same template around its content: a cookie banner, a
//! header with the site name, a navigation menu, and at the end of the
//! article (where a single-page extractor keeps them) a "Related articles"
//! box, a "Keep reading" box and a licence line, then a footer. The template's blocks are the same text on
//! every page, which a crawl can tell apart from the content.
//!
//! - `/docs/`: the index, linking every page below.
//! - `/docs/a/N` (1 ≤ N ≤ [`ARTICLES`]): an article: `h1` "Article N", a
//!   paragraph with [`marker`]`(N)`, a GFM-able table, a Rust code block
//!   (`class="language-rust"`), a nested list, an image (`/asset/logo.png`),
//!   a link to the next article's `#usage` section, an external link
//!   (`https://example.org/ext`), a PDF link (`/docs/guide.pdf`, not served),
//!   and a section `h2 id="usage"`.
//! - `/docs/malformed`: an article in broken markup (unclosed and misnested
//!   tags, stray end tags), with [`marker`]`(100)`.
//! - `/docs/latin1`: an article sent as `windows-1252` (its `é` one byte),
//!   with [`marker`]`(101)`; its title is "Café".
//!
//! None is linked from the generated site; a crawl starts at `/docs/`.

use std::fmt::Write as _;

use hyper::{Response, StatusCode};

use crate::body::SiteBody;
use crate::number::canonical_u32;
use crate::reply::{HTML, reply};

/// Number of `/docs/a/N` articles.
pub const ARTICLES: u32 = 7;

/// The paths of every page of the section, the index first.
pub fn paths() -> Vec<String> {
    let mut out = vec!["/docs/".to_string()];
    out.extend((1..=ARTICLES).map(|n| format!("/docs/a/{n}")));
    out.push("/docs/malformed".into());
    out.push("/docs/latin1".into());
    out
}

/// A sentence found only in article `n`'s content.
pub fn marker(n: u32) -> String {
    format!("Marker sentence number {n} belongs to this article alone.")
}

/// The template's texts, each on every page: what a crawl should drop.
pub const TEMPLATE_TEXTS: &[&str] = &[
    "We use cookies to make this site work",
    "Example Docs",
    "Getting started",
    "Related articles",
    "Keep reading",
    "Our weekly letter brings new tutorials",
    "Written by the Example docs team",
    "All rights reserved",
];

/// Answers a `/docs/` path, or `None` if it is not one.
pub(crate) fn route(path: &str) -> Option<Response<SiteBody>> {
    let rest = path.strip_prefix("/docs/")?;
    Some(match rest {
        "" => reply(StatusCode::OK, Some(HTML), index()),
        "malformed" => reply(StatusCode::OK, Some(HTML), malformed()),
        "latin1" => reply(
            StatusCode::OK,
            Some("text/html; charset=windows-1252"),
            latin1(),
        ),
        _ => {
            let n =
                canonical_u32(rest.strip_prefix("a/")?).filter(|n| (1..=ARTICLES).contains(n))?;
            reply(StatusCode::OK, Some(HTML), article(n))
        }
    })
}

fn index() -> String {
    let mut body = String::from(
        "<h1>Documentation</h1>\n<p>Every article of the example docs, in order of reading.</p>\n<ul>\n",
    );
    for n in 1..=ARTICLES {
        let _ = writeln!(body, "<li><a href=\"/docs/a/{n}\">Article {n}</a></li>");
    }
    body.push_str("<li><a href=\"/docs/malformed\">Broken markup</a></li>\n");
    body.push_str("<li><a href=\"/docs/latin1\">Latin-1</a></li>\n</ul>\n");
    page("Documentation", &body)
}

fn article(n: u32) -> String {
    let next = n % ARTICLES + 1;
    let body = format!(
        "<h1>Article {n}</h1>\n\
         <p>{marker} It explains topic {n} at some length, so that a reader \
         has a proper paragraph to read and an extractor has text to score.</p>\n\
         <p>Read on in <a href=\"/docs/a/{next}#usage\">article {next}</a>, or see \
         <a href=\"https://example.org/ext\">the outside world</a> and \
         <a href=\"/docs/guide.pdf\">the PDF guide</a>.</p>\n\
         <table><thead><tr><th>Option</th><th>Value</th></tr></thead>\n\
         <tbody><tr><td>depth</td><td>{n}</td></tr><tr><td>mode</td><td>fast</td></tr></tbody></table>\n\
         <pre><code class=\"language-rust\">fn topic() -&gt; u32 {{\n    {n}\n}}\n</code></pre>\n\
         <ul><li>First point of {n}<ul><li>Inner point A</li><li>Inner point B</li></ul></li>\
         <li>Second point of {n}</li></ul>\n\
         <p><img src=\"/asset/logo.png\" alt=\"The logo of article {n}\"></p>\n\
         <h2 id=\"usage\">Usage</h2>\n\
         <p>How to use topic {n}, written out in a full sentence for the reader.</p>\n",
        marker = marker(n),
    );
    page(&format!("Article {n}"), &body)
}

fn malformed() -> String {
    let body = format!(
        "<h1>Broken markup</h1>\n<p>{} It has <b>bold <i>misnested</b> text</i> \
         and a stray end tag</span> in a long enough paragraph to be content.\n\
         <p>An unclosed paragraph with <a href=/docs/a/1>an unquoted link</a>\n\
         <ul><li>one<li>two</ul></div></div>\n",
        marker(100)
    );
    page("Broken markup", &body)
}

fn latin1() -> Vec<u8> {
    let body = format!(
        "<h1>Caf\u{e9}</h1>\n<p>{} The caf\u{e9} serves cr\u{e8}me br\u{fb}l\u{e9}e all \
         day long, a sentence long enough to be the page's content.</p>\n",
        marker(101)
    );
    let html = page("Caf\u{e9}", &body).replace("charset=\"utf-8\"", "charset=\"windows-1252\"");
    // Every character here is in Latin-1, which windows-1252 extends.
    html.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

/// The template around a page's content.
fn page(title: &str, content: &str) -> String {
    let mut related = String::new();
    for n in 1..=3 {
        let _ = write!(
            related,
            "<li><a href=\"/docs/a/{n}\">Popular article {n}</a></li>"
        );
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{title}</title>\
         <meta name=\"description\" content=\"{title}, from the example docs\"></head>\n<body>\n\
         <div id=\"cookie-banner\" class=\"cookie-consent\">We use cookies to make this site work. \
         <button>Accept</button></div>\n\
         <header><a href=\"/docs/\">Example Docs</a></header>\n\
         <nav><ul><li><a href=\"/docs/\">Getting started</a></li><li><a href=\"/docs/a/1\">Guides</a></li>\
         <li><a href=\"/docs/a/2\">Reference</a></li></ul></nav>\n\
         <main><article>\n{content}\
         <div class=\"box\"><h2>Related articles</h2><ul>{related}</ul></div>\n\
         <div><h3>Keep reading</h3><p>Our weekly letter brings new tutorials on crawling \
         and text extraction to your inbox, with worked examples every time.</p></div>\n\
         <p>Written by the Example docs team; share and adapt it under CC BY 4.0 with credit.</p>\n\
         </article></main>\n<footer><p>\u{a9} 2026 Example Docs. All rights reserved.</p></footer>\n</body></html>\n"
    )
}
