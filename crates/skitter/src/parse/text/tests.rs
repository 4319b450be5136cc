use lol_html::{HtmlRewriter, Settings};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};

use super::*;

fn text(html: &str) -> String {
    page_text(html).text
}

#[test]
fn visible_text_leaves_out_what_a_reader_does_not_see() {
    let cases = [
        ("<p>Hello <b>big</b> world</p>", "Hello big world"),
        ("<p>one</p><p>two</p>", "one two"),
        ("a<br>b", "a b"),
        ("  lots \n\t of   space  ", "lots of space"),
        (
            "<p>Fish &amp; chips &lt;3 &eacute;t&#233;</p>",
            "Fish & chips <3 été",
        ),
        ("<script>var secret = 1;</script>shown", "shown"),
        ("<style>p { color: red }</style>shown", "shown"),
        ("<noscript><p>enable JS</p></noscript>shown", "shown"),
        (
            "<template><p>later</p><template>x</template></template>shown",
            "shown",
        ),
        ("<title>T</title><textarea>typed</textarea>shown", "shown"),
        ("<iframe>fallback</iframe>shown", "shown"),
        ("<!-- a comment -->shown", "shown"),
        // No end tag: the rest is script, as a browser reads it.
        ("<p>before</p><script>var a = '<p>not text</p>';", "before"),
        ("<template>hidden to the end<p>still", ""),
        (
            "<head><meta charset=utf-8>Stray</head><body>b</body>",
            "Stray b",
        ),
        ("<svg><text>drawn</text></svg>", "drawn"),
        ("", ""),
    ];
    for (html, want) in cases {
        assert_eq!(text(html), want, "{html:?}");
    }
}

#[test]
fn the_title_is_the_first_titles_text() {
    let cases = [
        ("<title> A &amp; B\n </title><h1>x</h1>", Some("A & B")),
        ("<title>one</title><title>two</title>", Some("one")),
        ("<title>  </title>", None),
        ("<h1>no title</h1>", None),
        ("<title>cut off", Some("cut off")),
    ];
    for (html, want) in cases {
        assert_eq!(page_text(html).title.as_deref(), want, "{html:?}");
    }
}

#[test]
fn a_page_fed_in_pieces_gives_the_text_it_gives_whole() {
    let html = "<title>Caf&eacute;</title><p>Fish &amp; chips, cr&egrave;me br&ucirc;l&eacute;e</p>\
                <script>x</script><p>end&nbsp;here</p>";
    let whole = page_text(html);
    for step in [1, 2, 3, 7] {
        let pass = TextPass::new();
        let settings = pass.handlers(Settings::new().with_strict(false));
        let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
        for piece in html.as_bytes().chunks(step) {
            rewriter.write(piece).unwrap();
        }
        rewriter.end().unwrap();
        assert_eq!(pass.finish(), whole, "in pieces of {step}");
    }
    assert_eq!(
        whole.text,
        "Fish & chips, crème brûlée end\u{a0}here".replace('\u{a0}', " ")
    );
}

#[test]
fn huge_text_and_titles_stop_at_their_caps() {
    let word = "wörd ";
    let html = format!(
        "<title>{}</title><p>{}</p><p>after</p>",
        "t".repeat(TITLE_MAX * 3),
        word.repeat(TEXT_MAX)
    );
    let got = page_text(&html);
    assert!(got.cut);
    assert!(got.text.len() <= TEXT_MAX && got.text.len() > TEXT_MAX - word.len());
    assert!(!got.text.ends_with("after"));
    assert_eq!(got.title.map(|t| t.len()), Some(TITLE_MAX));
    // One text node far past the cap is held only up to it.
    let one = format!("<p>{}</p>", "é".repeat(TEXT_MAX));
    let got = page_text(&one);
    assert!(got.cut && got.text.len() <= TEXT_MAX && got.text.len() >= TEXT_MAX - 1);
}

#[test]
fn deep_nesting_and_bad_bytes_read_without_trouble() {
    let deep = format!(
        "{}deep{}",
        "<div><span>".repeat(100_000),
        "</span></div>".repeat(10)
    );
    assert_eq!(text(&deep), "deep");
    let templates = format!("{}x", "<template>".repeat(100_000));
    assert_eq!(text(&templates), "");
    let (decoded, _, _) = crate::parse::links::decode_html(b"<p>caf\xe9 \xff\xfe ok</p>", None);
    assert!(text(&decoded).ends_with("ok"));
}

/// Pieces of pages, clean and broken, with words that must never be text.
fn page() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "<p>",
        "</p>",
        "<div>",
        "</div>",
        "word",
        " ",
        "\n\t",
        "&amp;",
        "&",
        "&#x",
        "&#1114112;",
        "<script>SECRET</script>",
        "<style>SECRET</style>",
        "<script>",
        "</script>",
        "<style>",
        "</style>",
        "<noscript>",
        "</noscript>",
        "<template>",
        "</template>",
        "<title>",
        "</title>",
        "<textarea>",
        "</textarea>",
        "<!--",
        "-->",
        "<![CDATA[",
        "]]>",
        "<svg>",
        "</svg>",
        "<math>",
        "<",
        ">",
        "\"",
        "'",
        "é",
        "日本",
        "\u{0}",
        "<plaintext>",
        "<a href='x'>",
        "</a>",
        "<br/>",
    ]);
    prop::collection::vec(pieces, 0..60).prop_map(|v| v.concat())
}

#[test]
fn generated_pages_give_bounded_clean_text() {
    let mut runner = TestRunner::new(Config {
        cases: 2000,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x5eed_7e47),
        ..Config::default()
    });
    runner
        .run(&page(), |html| {
            let got = page_text(&html);
            prop_assert!(got.text.len() <= TEXT_MAX);
            prop_assert!(
                got.title
                    .as_ref()
                    .is_none_or(|t| t.len() <= TITLE_MAX && !t.is_empty())
            );
            for t in std::iter::once(&got.text).chain(&got.title) {
                prop_assert!(!t.contains("  ") && t.trim() == t, "{:?} of {:?}", t, html);
            }
            // Script and style text after plain markup is never text.
            let strip = |b: &str| {
                [
                    "<p>",
                    "</p>",
                    "<div>",
                    "</div>",
                    "<br/>",
                    "<a href='x'>",
                    "</a>",
                ]
                .iter()
                .fold(b.to_string(), |b, tag| b.replace(tag, ""))
            };
            let hidden = html
                .match_indices("SECRET")
                .filter(|(at, _)| {
                    let before = strip(&html[..*at]);
                    ["<script>", "<style>"].iter().any(|o| {
                        before.strip_suffix(o).is_some_and(|b| {
                            !b.replace("</script>", "")
                                .replace("</style>", "")
                                .contains('<')
                        })
                    })
                })
                .count();
            let all = html.matches("SECRET").count();
            prop_assert!(
                got.text.matches("SECRET").count() <= all - hidden,
                "{:?}",
                html
            );
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn words_split_as_char_is_whitespace_splits() {
    let pieces = prop::sample::select(vec![
        "a", "word", " ", "  ", "\t", "\n", "\r\n", "\u{b}", "\u{c}", "\u{a0}", "\u{2003}", "é",
        "\u{85}", "\u{1680}", "\u{3000}", "x y", "日本", "\u{0}", "\u{200b}",
    ]);
    let strategy = prop::collection::vec(pieces, 0..16).prop_map(|v| v.concat());
    let mut runner = TestRunner::new(Config {
        cases: 2000,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x5eed_3070),
        ..Config::default()
    });
    runner
        .run(&strategy, |s| {
            let want: Vec<&str> = s
                .split(char::is_whitespace)
                .filter(|w| !w.is_empty())
                .collect();
            prop_assert_eq!(super::words(&s).collect::<Vec<_>>(), want);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}
