//! A section with known broken links under `/check/`, for `skitter check`.
//!
//! Its pages link the site's own pages (found, missing, gone, moved), an
//! image that is missing, fragments present and absent, and "other sites":
//! names under `check.test` that a test maps to loopback (`--resolve
//! NAME:127.0.0.1`, see [`EXTERNAL_HOSTS`]) on the site's own port, whose
//! `/check/ext/…` paths behave as a host that is slow, rate-limiting, flaky,
//! redirecting forever, answering HEAD wrongly, or moved; and a host that is
//! down (`down.check.test` on port 1, where nothing listens). [`planted`]
//! lists every broken link with its page and line; [`flaky`] and [`moved`]
//! the links that work but are worth reporting. Links outside HTML are
//! planted too: in the stylesheet (`url()` on its line 2), in a `Link`
//! header of `/check/a` (a preload that is missing, line 0: a header has no
//! line), and in `/check/sitemap.xml`, read only when robots.txt names it
//! ([`SITEMAP_ROBOTS_TXT`], [`planted_in_sitemap`]). Nothing else on the
//! section is broken. `/check/ext/…` pages count their requests per path: the first
//! request of `limited` is a `429` with `Retry-After: 1`, of `flaky` a `503`.
//!
//! Not linked from the generated site; a check starts at `/check/`.

use std::time::Duration;

use hyper::header::{LINK, LOCATION, RETRY_AFTER};
use hyper::{Method, Response, StatusCode};
use tokio_util::sync::CancellationToken;

use crate::body::{Aborted, SiteBody};
use crate::reply::{HTML, reply, with_header};

/// The host names of the section's "other sites", each to be mapped to
/// 127.0.0.1 (`--resolve NAME:127.0.0.1`).
pub const EXTERNAL_HOSTS: &[&str] = &[
    "down.check.test",
    "slow.check.test",
    "limited.check.test",
    "flaky.check.test",
    "loop.check.test",
    "nohead.check.test",
    "ext.check.test",
];

/// How long `/check/ext/slow` takes to answer (shutdown ends it sooner): far
/// beyond any timeout a test sets.
pub const SLOW: Duration = Duration::from_secs(60);

/// One planted broken link: on `page` (a path of the site), at `line`, the
/// link `url` (absolute, with the site's port), broken for `reason` (`404`,
/// `410`, `connect`, `timeout`, `loop`, `fragment`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Planted {
    /// The page's path.
    pub page: &'static str,
    /// The 1-based line of the link's element.
    pub line: u32,
    /// The link, absolute and normalised, with its fragment.
    pub url: String,
    /// Why it is broken.
    pub reason: &'static str,
}

/// The index's lines; `{port}` is the site's port.
const INDEX: &[&str] = &[
    "<!doctype html>",
    "<html><head><title>Link check</title>",
    "<link rel=stylesheet href=\"/check/style.css\">",
    "</head><body>",
    "<h1 id=\"top\">Links</h1>",
    "<p><a href=\"/check/a\">a page</a>",
    "<a href=\"/check/a#present\">a present fragment</a>",
    "<a href=\"/check/a#absent\">an absent fragment</a>",
    "<a href=\"/check/missing\">a missing page</a>",
    "<a href=\"/check/gone\">a gone page</a>",
    "<img src=\"/check/img/ok.png\" alt=\"\">",
    "<img src=\"/check/img/missing.png\" alt=\"\">",
    "<a href=\"/check/old\">a moved page</a>",
    "<a href=\"http://down.check.test:1/\">a host that is down</a>",
    "<a href=\"http://slow.check.test:{port}/check/ext/slow\">a slow host</a>",
    "<a href=\"http://limited.check.test:{port}/check/ext/limited\">a rate-limiting host</a>",
    "<a href=\"http://flaky.check.test:{port}/check/ext/flaky\">a flaky host</a>",
    "<a href=\"http://loop.check.test:{port}/check/ext/loop\">a redirect loop</a>",
    "<a href=\"http://nohead.check.test:{port}/check/ext/nohead\">a host refusing HEAD</a>",
    "<a href=\"http://ext.check.test:{port}/check/ext/ok#there\">a present fragment elsewhere</a>",
    "<a href=\"http://ext.check.test:{port}/check/ext/ok#nowhere\">an absent fragment elsewhere</a>",
    "<a href=\"http://ext.check.test:{port}/check/ext/missing\">a missing page elsewhere</a>",
    "<a href=\"http://ext.check.test:{port}/check/ext/moved\">a moved page elsewhere</a>",
    "<a href=\"mailto:someone@example.org\">mail</a>",
    "<a href=\"#top\">top</a></p>",
    "</body></html>",
];

/// `/check/a`: the fragment's target, and a relative link to a missing page.
const PAGE_A: &[&str] = &[
    "<!doctype html>",
    "<html><head><title>A</title></head><body>",
    "<h1>A</h1>",
    "<p id=\"present\">Here. <a href=\"./\">Back</a>",
    "<a href=\"b\">a missing sibling</a></p>",
    "</body></html>",
];

/// The stylesheet every page of the section links.
const STYLE_CSS: &str = "body { background: url(img/ok.png) }\n\
                         .logo { background: url('img/none.png') }\n";

/// A robots.txt (for [`crate::SiteConfig::robots_txt`]) naming the
/// section's sitemap, so that a crawl reads it.
pub const SITEMAP_ROBOTS_TXT: &str =
    "User-agent: *\nAllow: /\nSitemap: {origin}/check/sitemap.xml\n";

/// The broken entries of `/check/sitemap.xml` (with [`SITEMAP_ROBOTS_TXT`]).
pub fn planted_in_sitemap(port: u16) -> Vec<Planted> {
    let origin = format!("http://127.0.0.1:{port}");
    vec![planted_at(
        "/check/sitemap.xml",
        0,
        format!("{origin}/check/unlisted"),
        "404",
    )]
}

/// The broken links of the section, sorted.
pub fn planted(port: u16) -> Vec<Planted> {
    let origin = format!("http://127.0.0.1:{port}");
    let ext = |host: &str, path: &str| format!("http://{host}.check.test:{port}{path}");
    let mut out = vec![
        planted_at("/check/", 8, format!("{origin}/check/a#absent"), "fragment"),
        planted_at("/check/", 9, format!("{origin}/check/missing"), "404"),
        planted_at("/check/", 10, format!("{origin}/check/gone"), "410"),
        planted_at(
            "/check/",
            12,
            format!("{origin}/check/img/missing.png"),
            "404",
        ),
        planted_at("/check/", 14, "http://down.check.test:1/".into(), "connect"),
        planted_at("/check/", 15, ext("slow", "/check/ext/slow"), "timeout"),
        planted_at("/check/", 18, ext("loop", "/check/ext/loop"), "loop"),
        planted_at(
            "/check/",
            21,
            ext("ext", "/check/ext/ok#nowhere"),
            "fragment",
        ),
        planted_at("/check/", 22, ext("ext", "/check/ext/missing"), "404"),
        planted_at("/check/a", 5, format!("{origin}/check/b"), "404"),
        planted_at("/check/a", 0, format!("{origin}/check/preload.css"), "404"),
        planted_at(
            "/check/style.css",
            2,
            format!("{origin}/check/img/none.png"),
            "404",
        ),
    ];
    out.sort();
    out
}

fn planted_at(page: &'static str, line: u32, url: String, reason: &'static str) -> Planted {
    Planted {
        page,
        line,
        url,
        reason,
    }
}

/// The links that work after failing first (a `429`, a `503`).
pub fn flaky(port: u16) -> Vec<String> {
    vec![
        format!("http://flaky.check.test:{port}/check/ext/flaky"),
        format!("http://limited.check.test:{port}/check/ext/limited"),
    ]
}

/// The links with a permanent redirect, and where to.
pub fn moved(port: u16) -> Vec<(String, String)> {
    vec![
        (
            format!("http://127.0.0.1:{port}/check/old"),
            format!("http://127.0.0.1:{port}/check/a"),
        ),
        (
            format!("http://ext.check.test:{port}/check/ext/moved"),
            format!("http://ext.check.test:{port}/check/ext/ok"),
        ),
    ]
}

/// Answers a `/check/` path, or `None` if it is not one. `count` is the
/// request's number on its path (1 for the first).
pub(crate) async fn route(
    method: &Method,
    path: &str,
    count: u64,
    port: u16,
    shutdown: &CancellationToken,
) -> Option<Result<Response<SiteBody>, Aborted>> {
    let rest = path.strip_prefix("/check/")?;
    let page = |lines: &[&str]| {
        let text = lines.join("\n").replace("{port}", &port.to_string());
        reply(StatusCode::OK, Some(HTML), text)
    };
    let status = |code: StatusCode| reply(code, Some(HTML), "<p>no</p>");
    let redirect = |code: StatusCode, to: &str| with_header(status(code), LOCATION, to);
    Some(Ok(match rest {
        "" => page(INDEX),
        "a" => with_header(
            page(PAGE_A),
            LINK,
            "</check/preload.css>; rel=preload; as=style, </check/>; rel=\"up\"",
        ),
        "gone" => status(StatusCode::GONE),
        "old" => redirect(StatusCode::MOVED_PERMANENTLY, "/check/a"),
        "style.css" => reply(StatusCode::OK, Some("text/css"), STYLE_CSS),
        "sitemap.xml" => reply(
            StatusCode::OK,
            Some("application/xml"),
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
                 <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
                 <url><loc>http://127.0.0.1:{port}/check/a</loc></url>\n\
                 <url><loc>http://127.0.0.1:{port}/check/unlisted</loc></url>\n\
                 </urlset>\n"
            ),
        ),
        "img/ok.png" => reply(StatusCode::OK, Some("image/png"), &b"\x89PNG\r\n\x1a\n"[..]),
        "ext/slow" => {
            return Some(tokio::select! {
                () = tokio::time::sleep(SLOW) => Ok(status(StatusCode::OK)),
                () = shutdown.cancelled() => Err(Aborted("shutdown")),
            });
        }
        "ext/limited" if count == 1 => {
            with_header(status(StatusCode::TOO_MANY_REQUESTS), RETRY_AFTER, "1")
        }
        "ext/flaky" if count == 1 => status(StatusCode::SERVICE_UNAVAILABLE),
        "ext/limited" | "ext/flaky" => status(StatusCode::OK),
        "ext/loop" => redirect(StatusCode::FOUND, "/check/ext/loop2"),
        "ext/loop2" => redirect(StatusCode::FOUND, "/check/ext/loop"),
        "ext/nohead" if method == Method::HEAD => status(StatusCode::METHOD_NOT_ALLOWED),
        "ext/nohead" => status(StatusCode::OK),
        "ext/ok" => page(&["<!doctype html>", "<p id=\"there\">There.</p>"]),
        "ext/moved" => redirect(StatusCode::MOVED_PERMANENTLY, "/check/ext/ok"),
        _ => status(StatusCode::NOT_FOUND),
    }))
}

/// The base URL [`write_docs_tree`]'s tree is checked as.
pub const DOCS_BASE: &str = "https://docs.check.test/site/";

/// Writes a small built docs tree into `dir` (HTML, Markdown, an image),
/// with broken relative links, for `skitter check DIR --base`
/// [`DOCS_BASE`]; returns its broken links (pages as paths under the base's
/// host). Every other link in it works, links elsewhere included: it has
/// none.
pub fn write_docs_tree(dir: &std::path::Path) -> std::io::Result<Vec<Planted>> {
    let files: &[(&str, &str)] = &[
        (
            "index.html",
            "<!doctype html>\n<title>Docs</title>\n\
             <a href=\"guide/\">Guide</a>\n\
             <a href=\"guide/install.html#setup\">Setup</a>\n\
             <a href=\"guide/install.html#nope\">No such section</a>\n\
             <a href=\"missing.html\">Missing</a>\n\
             <img src=\"img/logo.png\" alt=\"\">\n\
             <img src=\"img/none.png\" alt=\"\">\n\
             <a href=\"https://docs.check.test/site/guide/\">Absolute</a>\n\
             <a href=\"/site/gone/\">Gone</a>\n\
             <a href=\"README.md#usage\">Readme</a>\n",
        ),
        (
            "guide/index.html",
            "<!doctype html>\n<a href=\"../index.html\">Home</a>\n\
             <a href=\"install\">Install</a>\n<a href=\"../nowhere/\">Nowhere</a>\n",
        ),
        (
            "guide/install.html",
            "<!doctype html>\n<h1>Install</h1>\n<h2 id=\"setup\">Setup</h2>\n",
        ),
        (
            "README.md",
            "# Docs\n\nSee [setup](guide/install.html#setup) and [usage](#usage).\n\
             A [bad link](guide/nothere.md) and [a bad section](#nothing).\n\n\
             ## Usage\n\n```\n[not checked](nope.md)\n```\n",
        ),
        ("img/logo.png", "\u{89}PNG"),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
    }
    let url = |path: &str| format!("{DOCS_BASE}{path}");
    let mut out = vec![
        planted_at(
            "/site/index.html",
            5,
            url("guide/install.html#nope"),
            "fragment",
        ),
        planted_at("/site/index.html", 6, url("missing.html"), "404"),
        planted_at("/site/index.html", 8, url("img/none.png"), "404"),
        planted_at("/site/index.html", 10, url("gone/"), "404"),
        planted_at("/site/guide/index.html", 4, url("nowhere/"), "404"),
        planted_at("/site/README.md", 4, url("guide/nothere.md"), "404"),
        planted_at("/site/README.md", 4, url("README.md#nothing"), "fragment"),
    ];
    out.sort();
    Ok(out)
}
