//! Table-driven tests for [`super::extract_html`].

use super::*;

const PAGE: &str = "http://example.com/dir/page.html";

/// (kind, element, attr, resolved URL or "ERR") for each link of `html`.
fn summary(html: &str, mode: ExtractMode) -> Vec<(LinkKind, &'static str, &'static str, String)> {
    let page = Url::parse(PAGE).unwrap();
    extract_html(html.as_bytes(), None, &page, mode)
        .links
        .into_iter()
        .map(|l| {
            (
                l.kind,
                l.element,
                l.attr,
                l.url.map_or_else(|_| "ERR".to_owned(), String::from),
            )
        })
        .collect()
}

fn urls(html: &str, mode: ExtractMode) -> Vec<String> {
    summary(html, mode)
        .into_iter()
        .map(|(_, _, _, u)| u)
        .collect()
}

#[test]
fn pages_mode_reads_anchors_areas_and_refresh_only() {
    use LinkKind::*;
    let html = r#"<meta http-equiv="Refresh" content="0; url=/moved">
        <link rel=stylesheet href=s.css><img src=i.png><script src=j.js></script>
        <a href="a.html">a</a><map><area href="/area"></map>
        <div style="background:url(bg.png)"></div>"#;
    let want = [
        (
            Navigation,
            "meta",
            "content",
            "http://example.com/moved".to_owned(),
        ),
        (
            Anchor,
            "a",
            "href",
            "http://example.com/dir/a.html".to_owned(),
        ),
        (Anchor, "area", "href", "http://example.com/area".to_owned()),
    ];
    assert_eq!(summary(html, ExtractMode::Pages), want);
}

#[test]
fn resources_mode_reads_every_subresource() {
    let html = r#"<html><head>
        <link rel=stylesheet href=s.css><link rel="shortcut icon" href=/f.ico>
        <link rel=preconnect href=https://cdn.example><link rel=DNS-Prefetch href=//dns.example>
        <link rel=alternate href=feed.xml><script src=j.js></script>
        <style>@import "imp.css"; body{background:url('bg.png')}</style></head><body>
        <img src=i.png srcset="i1.png 1x, i2.png 2x"><picture><source srcset=p.webp></picture>
        <iframe src=if.html></iframe><frame src=fr.html><video src=v.mp4 poster=v.jpg>
        <source src=v.webm><track src=t.vtt></video><audio src=a.mp3></audio>
        <embed src=e.swf><object data=o.pdf></object><p style="x:url(inline.png)">t</p>
        <custom-el style="x:url(custom.png)"></custom-el></body></html>"#;
    let got: Vec<_> = summary(html, ExtractMode::Resources)
        .into_iter()
        .map(|(k, e, a, u)| (k, e, a, u.replace("http://example.com/dir/", "")))
        .collect();
    let r = LinkKind::Resource;
    let want = [
        (r, "link", "href", "s.css"),
        (r, "link", "href", "http://example.com/f.ico"),
        (LinkKind::Anchor, "link", "href", "feed.xml"),
        (r, "script", "src", "j.js"),
        (r, "style", "@import", "imp.css"),
        (r, "style", "url()", "bg.png"),
        (r, "img", "src", "i.png"),
        (r, "img", "srcset", "i1.png"),
        (r, "img", "srcset", "i2.png"),
        (r, "source", "srcset", "p.webp"),
        (r, "iframe", "src", "if.html"),
        (r, "frame", "src", "fr.html"),
        (r, "video", "src", "v.mp4"),
        (r, "video", "poster", "v.jpg"),
        (r, "source", "src", "v.webm"),
        (r, "track", "src", "t.vtt"),
        (r, "audio", "src", "a.mp3"),
        (r, "embed", "src", "e.swf"),
        (r, "object", "data", "o.pdf"),
        (r, "p", "style", "inline.png"),
        (r, "*", "style", "custom.png"),
    ];
    let want: Vec<_> = want
        .iter()
        .map(|&(k, e, a, u)| (k, e, a, u.to_owned()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn base_href_applies_to_links_before_and_after_it() {
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "<a href=x></a><base href=/b/><a href=y></a>",
            &["http://example.com/b/x", "http://example.com/b/y"],
            "http://example.com/b/",
        ),
        (
            "<base href=http://other.example/><base href=/ignored/><a href=x>",
            &["http://other.example/x"],
            "http://other.example/",
        ),
        (
            "<base target=_blank><base href=/second/><a href=x>",
            &["http://example.com/second/x"],
            "http://example.com/second/",
        ),
        (
            "<base href='http://[bad/'><a href=x>",
            &["http://example.com/dir/x"],
            PAGE,
        ),
        (
            "<base href='data:text/html,x'><a href=x>",
            &["http://example.com/dir/x"],
            PAGE,
        ),
        ("<a href=x>", &["http://example.com/dir/x"], PAGE),
    ];
    let page = Url::parse(PAGE).unwrap();
    for (html, want, want_base) in cases {
        let doc = extract_html(html.as_bytes(), None, &page, ExtractMode::Pages);
        assert_eq!(doc.base.as_str(), *want_base, "html {html:?}");
        let got: Vec<_> = doc
            .links
            .iter()
            .map(|l| l.url.as_ref().unwrap().as_str())
            .collect();
        assert_eq!(got, *want, "html {html:?}");
    }
}

#[test]
fn attribute_values_are_entity_decoded_and_trimmed() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "<a href='?a=1&amp;b=2'>",
            "?a=1&b=2",
            "http://example.com/dir/page.html?a=1&b=2",
        ),
        (
            "<a href='?a=1&copy=2'>",
            "?a=1&copy=2",
            "http://example.com/dir/page.html?a=1&copy=2",
        ),
        ("<a href='&#x2F;abs'>", "/abs", "http://example.com/abs"),
        (
            "<a href='\n  spaced.html\t'>",
            "spaced.html",
            "http://example.com/dir/spaced.html",
        ),
        (
            "<a href='page 4.html'>",
            "page 4.html",
            "http://example.com/dir/page%204.html",
        ),
        (
            "<A HREF=UPPER.html>",
            "UPPER.html",
            "http://example.com/dir/UPPER.html",
        ),
        ("<a href=x href=y>", "x", "http://example.com/dir/x"), // first duplicate wins
    ];
    let page = Url::parse(PAGE).unwrap();
    for (html, want_raw, want_url) in cases {
        let doc = extract_html(html.as_bytes(), None, &page, ExtractMode::Pages);
        assert_eq!(doc.links.len(), 1, "html {html:?}");
        assert_eq!(doc.links[0].raw, *want_raw, "html {html:?}");
        assert_eq!(
            doc.links[0].url.as_ref().unwrap().as_str(),
            *want_url,
            "html {html:?}"
        );
    }
}

#[test]
fn what_is_and_is_not_a_link() {
    let cases: &[(&str, &[&str])] = &[
        ("<a href=''>e</a><a href='  '>w</a><a>none</a>", &[]),
        ("<!-- <a href=/commented> -->", &[]),
        ("<script>document.write('<a href=/scripted>')</script>", &[]),
        ("<textarea><a href=/in-textarea></textarea>", &[]),
        (
            "<template><a href=/tpl></a></template>",
            &["http://example.com/tpl"],
        ),
        (
            "<noscript><a href=/ns></a></noscript>",
            &["http://example.com/ns"],
        ),
        ("<pre><a href=/pre></a></pre>", &["http://example.com/pre"]),
        ("<a rel=nofollow href=/nf>", &["http://example.com/nf"]),
        (
            "<a href='mailto:a@b.example'><a href='javascript:void(0)'><a href='tel:+1'>",
            &["mailto:a@b.example", "javascript:void(0)", "tel:+1"],
        ),
        (
            "<a href='http://[bad/'><a href=ok>",
            &["ERR", "http://example.com/dir/ok"],
        ),
        (
            "<meta http-equiv=refresh content=30><meta name=refresh content='0;url=/no'>",
            &[],
        ),
        ("<a href=/unclosed", &[]),
        (
            "<svg><a href=/svg-a></a></svg>",
            &["http://example.com/svg-a"],
        ),
    ];
    for (html, want) in cases {
        assert_eq!(urls(html, ExtractMode::Resources), *want, "html {html:?}");
    }
}

#[test]
fn charset_from_header_meta_and_bom_is_used() {
    let page = Url::parse(PAGE).unwrap();
    // "é" in windows-1252 is 0xE9; in the URL it becomes %C3%A9 (UTF-8).
    let body: &[u8] = b"<meta charset=windows-1252><a href=\"caf\xE9\">";
    let doc = extract_html(body, None, &page, ExtractMode::Pages);
    assert_eq!(
        (doc.charset, doc.had_decode_errors),
        ("windows-1252", false)
    );
    assert_eq!(
        doc.links[0].url.as_ref().unwrap().as_str(),
        "http://example.com/dir/caf%C3%A9"
    );

    let doc = extract_html(b"<a href=\"caf\xE9\">", None, &page, ExtractMode::Pages);
    assert_eq!((doc.charset, doc.had_decode_errors), ("UTF-8", true));
    assert_eq!(doc.links[0].raw, "caf\u{FFFD}");

    let utf16: Vec<u8> = "\u{FEFF}<a href=x>"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    let doc = extract_html(&utf16, Some("utf-8"), &page, ExtractMode::Pages);
    assert_eq!(doc.charset, "UTF-16LE");
    assert_eq!(doc.links[0].raw, "x");
}

#[test]
fn hostile_input_does_not_panic() {
    let page = Url::parse(PAGE).unwrap();
    let inputs: [&[u8]; 6] = [
        b"",
        b"\xFF\xFE\xFF",
        b"<a href=\"",
        b"<<<<>>>><a href=>><style>url(",
        b"<meta http-equiv=refresh content=\"0; url=\xC3\">",
        b"<svg><style>@import 'x.css'</style></svg><math><a href=m>",
    ];
    for input in inputs {
        let doc = extract_html(input, None, &page, ExtractMode::Resources);
        assert!(doc.links.len() <= 2);
    }
}

#[test]
fn large_page_yields_every_link_in_order() {
    let mut html = String::from("<html><body>");
    for i in 0..1_000 {
        html.push_str(&format!(
            "<p>text {i} <a href=\"/p/{i}?x=1&amp;y={i}\">l</a><img src=\"/img/{i}.png\"></p>\n"
        ));
    }
    let page = Url::parse(PAGE).unwrap();
    let pages = extract_html(html.as_bytes(), None, &page, ExtractMode::Pages);
    assert_eq!(pages.links.len(), 1_000);
    for (i, link) in pages.links.iter().enumerate() {
        assert_eq!(
            link.url.as_ref().unwrap().as_str(),
            format!("http://example.com/p/{i}?x=1&y={i}")
        );
    }
    let resources = extract_html(html.as_bytes(), None, &page, ExtractMode::Resources);
    assert_eq!(resources.links.len(), 2_000);
    assert_eq!(resources.links[1_999].raw, "/img/999.png");
}

#[test]
fn nested_noscript_is_read_a_few_levels_deep_without_recursing_further() {
    // Two levels are read; a 2 MB page of nested <noscript> once overflowed the stack.
    let html = "<noscript><a href=/one></a><noscript><a href=/two></a></noscript></noscript>";
    assert_eq!(
        urls(html, ExtractMode::Pages),
        ["http://example.com/one", "http://example.com/two"]
    );
    let deep = format!("{}<a href=/deep>", "<noscript>".repeat(200_000));
    assert_eq!(urls(&deep, ExtractMode::Pages), Vec::<String>::new());
    let shallow = format!("<noscript><a href=/kept>{}", "<noscript>".repeat(200_000));
    assert_eq!(
        urls(&shallow, ExtractMode::Pages),
        ["http://example.com/kept"]
    );
}

#[test]
fn navigational_link_elements_are_followed_in_every_mode() {
    let html = "<link rel=next href=/p/2><link rel='prev' href=/p/0><link rel=index href=/i>\
                <link rel=stylesheet href=/s.css><link rel=preconnect href=//cdn.example>\
                <link rel='alternate stylesheet' href=/alt.css><link href=/norel>";
    let page = Url::parse(PAGE).unwrap();
    for mode in [ExtractMode::Pages, ExtractMode::Resources] {
        let doc = extract_html(html.as_bytes(), None, &page, mode);
        let anchors: Vec<&str> = doc
            .links
            .iter()
            .filter(|l| l.kind == LinkKind::Anchor)
            .map(|l| l.raw.as_str())
            .collect();
        assert_eq!(anchors, ["/p/2", "/p/0", "/i"], "{mode:?}");
        let resources: Vec<&str> = doc
            .links
            .iter()
            .filter(|l| l.kind == LinkKind::Resource)
            .map(|l| l.raw.as_str())
            .collect();
        let want: &[&str] = match mode {
            ExtractMode::Pages => &[],
            // A `<link>` without a relation stays a resource, as before.
            ExtractMode::Resources => &["/s.css", "/alt.css", "/norel"],
        };
        assert_eq!(resources, want, "{mode:?}");
    }
}

#[test]
fn links_past_the_cap_are_counted_not_kept() {
    let page = Url::parse(PAGE).unwrap();
    // Five anchors and an image whose srcset holds three more URLs.
    let html = "<a href=/1>1</a><a href=/2>2</a><a href=/3>3</a><a href=/4>4</a>\
                <img srcset='/i1 1x, /i2 2x, /i3 3x'><a href=/5>5</a>";
    let run = |max| {
        let text = decode_html(html.as_bytes(), None).0;
        let pass = LinkPass::new(&text, ExtractMode::Resources, max);
        run_rewriter(&text, &pass.state, ExtractMode::Resources);
        pass.finish(&page, "UTF-8", false)
    };
    let all = run(usize::MAX);
    assert_eq!((all.links.len(), all.cut), (8, 0));
    let capped = run(5);
    assert_eq!((capped.links.len(), capped.cut), (5, 3));
    assert_eq!(capped.links[..], all.links[..5], "the first ones are kept");
    let default = extract_html(html.as_bytes(), None, &page, ExtractMode::Resources);
    assert_eq!(default.cut, 0);
}

#[test]
fn repeated_values_resolve_as_each_would_alone() {
    let html = r#"<base href="/base/"><a href=x>1</a><a href="http://[bad/">2</a>
        <a href=x>3</a><a href="http://[bad/">4</a><a href=" x ">5</a><a href=../y>6</a>"#;
    let page = Url::parse(PAGE).unwrap();
    let doc = extract_html(html.as_bytes(), None, &page, ExtractMode::Pages);
    assert_eq!(doc.links.len(), 6);
    for link in &doc.links {
        let alone = doc.base.join(&link.raw).map_err(|e| e.to_string());
        assert_eq!(link.url, alone, "{}", link.raw);
    }
    assert_eq!(doc.links[0].url, doc.links[2].url);
    assert!(doc.links[3].url.is_err());
}
