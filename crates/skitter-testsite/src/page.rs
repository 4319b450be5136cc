//! The generated site: `/` and the pages `/p/{i}`, rendered on the fly.
//!
//! Pages form a tree of the configured fanout rooted at `/p/0`, so every page
//! is reachable from `/`; back-links to already-linked pages and, on some
//! pages, one URL in many spellings make deduplication matter. Rendering is a
//! few formatted writes into one pre-sized buffer: no cache, no lock.

use std::fmt::Write;

use crate::config::SiteConfig;
use crate::tree::{children, fanout};

/// Text that pads pages to `page_size`; ASCII, so any cut is valid UTF-8.
const FILLER: &str = "The quick brown fox jumps over the lazy dog while skitter \
    counts every request it makes. Pack my box with five dozen liquor jugs. \
    Sphinx of black quartz, judge my vow. How vexingly quick daft zebras jump. ";

/// Pages whose index is a multiple of this link one page in many spellings.
pub(crate) const SPELLINGS_EVERY: usize = 50;

/// Closes the padding paragraph and the document.
const TAIL: &str = "</p>\n</body>\n</html>\n";

/// The site links from `/` to the traps, when they are on.
pub(crate) const TRAP_ENTRIES: [&str; 3] = ["/cal/2024/1", "/loop/a/", "/session?sid=0"];

/// The page that `/p/{i}` links in many spellings (all the same URL).
pub(crate) fn spelled_target(config: &SiteConfig, i: usize) -> Option<usize> {
    (i.is_multiple_of(SPELLINGS_EVERY) && config.pages > 0).then(|| (i + 7) % config.pages)
}

/// Hrefs that all resolve, against `{origin}/p/{i}`, to `{origin}/p/{t}`.
/// (`/P/{t}` is deliberately absent: it is a different URL.)
pub(crate) fn spellings(origin: &str, t: usize) -> Vec<String> {
    // %3X is the digit X; decoding unreserved characters is safe (RFC 3986 6.2.2.2).
    let encoded: String = t.to_string().chars().map(|d| format!("%3{d}")).collect();
    vec![
        format!("/p/{t}"),
        format!("/p/./{t}"),
        format!("/x/../p/{t}"),
        format!("{t}"),
        format!("./{t}"),
        format!("../p/{t}"),
        format!("{origin}/p/{t}#frag"),
        format!(
            "HTTP://127.0.0.1:{}/p/{t}",
            origin.rsplit(':').next().unwrap_or("")
        ),
        format!("{origin}/p/{encoded}"),
        format!("//{}/p/{t}", origin.trim_start_matches("http://")),
        format!("{origin}/p/{t}"),
    ]
}

fn start(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title}</title>\n</head>\n<body>\n<h1>{title}</h1>\n"
    );
}

fn link(out: &mut String, href: &str, text: impl std::fmt::Display) {
    let _ = writeln!(out, "<a href=\"{href}\">{text}</a>");
}

/// Pads `out` with filler up to `size` bytes, tail included, then closes it.
fn finish(out: &mut String, size: usize) {
    out.push_str("<p>");
    let target = size.saturating_sub(TAIL.len());
    while out.len() < target {
        let n = (target - out.len()).min(FILLER.len());
        out.push_str(&FILLER[..n]);
    }
    out.push_str(TAIL);
}

/// The HTML of `/`.
pub(crate) fn root(config: &SiteConfig) -> String {
    let mut out = String::with_capacity(1024);
    start(&mut out, "skitter test site");
    if config.pages > 0 {
        link(&mut out, "/p/0", "First page");
    }
    for extra in &config.extra_root_links {
        link(&mut out, extra, "Elsewhere");
    }
    if config.specials {
        link(&mut out, "/specials", "Special cases");
    }
    if config.traps {
        for trap in TRAP_ENTRIES {
            link(&mut out, trap, "Trap");
        }
    }
    finish(&mut out, 0);
    out
}

/// A URL the generated site links, as a crawler resolves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SiteLink {
    /// `/p/{i}`.
    Page(usize),
    /// `/P/{t}`: a distinct URL (paths are case-sensitive) that answers 404.
    Upper(usize),
}

/// The URLs a crawler finds on `/p/{i}` that it cannot have found before
/// (back-links to `/`, `/p/0` and the page's parent are left out), in the
/// order the page links them, each once: for working out the best time any
/// crawler can take over the site (`skitter bench`'s ideal). Plain pages
/// only: script-built pages (`script_share`) link theirs from a script.
///
/// The pages served (`/p/{i}`) link the same; a test checks it.
pub fn page_links(config: &SiteConfig, i: usize) -> Vec<SiteLink> {
    if i >= config.pages {
        return Vec::new();
    }
    let mut links: Vec<SiteLink> = children(config, i).map(SiteLink::Page).collect();
    if let Some(t) = spelled_target(config, i) {
        if !children(config, i).contains(&t) {
            links.push(SiteLink::Page(t));
        }
        links.push(SiteLink::Upper(t));
    }
    links
}

/// The HTML of `/p/{i}`, or `None` past the last page.
pub(crate) fn page(config: &SiteConfig, origin: &str, i: usize) -> Option<String> {
    if i >= config.pages {
        return None;
    }
    if crate::script::is_scripted(config, i) {
        return Some(crate::script::scripted_page(config, i));
    }
    let mut out = String::with_capacity(config.page_size.max(512) + 512);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n"
    );
    let _ = write!(
        out,
        "<title>Page {i}</title>\n</head>\n<body>\n<h1>Page {i}</h1>\n"
    );
    if config.script_share > 0.0 {
        out.push_str(crate::script::TRACKER);
    }
    for c in children(config, i) {
        let _ = writeln!(out, "<a href=\"/p/{c}\">Page {c}</a>");
    }
    // Back-links: all already linked by the time this page is found.
    link(&mut out, "/", "Home");
    if i > 0 {
        let _ = writeln!(
            out,
            "<a href=\"/p/{}\">Parent</a>",
            (i - 1) / fanout(config)
        );
        link(&mut out, "/p/0", "First page");
    }
    if let Some(t) = spelled_target(config, i) {
        for href in spellings(origin, t) {
            link(&mut out, &href, "Same page");
        }
        let _ = writeln!(out, "<a href=\"/P/{t}\">Not the same page</a>");
    }
    finish(&mut out, config.page_size);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hrefs(html: &str) -> Vec<&str> {
        html.split("href=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .collect()
    }

    fn config(pages: usize, fanout: usize) -> SiteConfig {
        SiteConfig {
            pages,
            fanout,
            ..SiteConfig::default()
        }
    }

    #[test]
    fn pages_are_padded_to_size_and_link_their_children() {
        let cfg = SiteConfig {
            pages: 30,
            fanout: 3,
            page_size: 2000,
            ..SiteConfig::default()
        };
        let html = page(&cfg, "http://127.0.0.1:9", 2).unwrap();
        assert_eq!(html.len(), 2000);
        assert_eq!(hrefs(&html), ["/p/7", "/p/8", "/p/9", "/", "/p/0", "/p/0"]);
        assert!(page(&cfg, "http://127.0.0.1:9", 30).is_none());
    }

    #[test]
    fn page_links_are_the_links_a_page_serves_less_its_back_links() {
        let origin = "http://127.0.0.1:9";
        let base = url::Url::parse(origin).unwrap();
        for (pages, fanout) in [(30, 3), (500, 10), (120, 1)] {
            let cfg = config(pages, fanout);
            for i in 0..pages {
                let page_url = base.join(&format!("/p/{i}")).unwrap();
                let parent = if i == 0 { 0 } else { (i - 1) / fanout };
                let back = ["/".to_string(), "/p/0".into(), format!("/p/{parent}")];
                let mut served = Vec::new();
                for href in hrefs(&page(&cfg, origin, i).unwrap()) {
                    let mut u = page_url.join(href).unwrap();
                    u.set_fragment(None);
                    let path = percent_decode(u.path());
                    if !back.contains(&path) && !served.contains(&path) {
                        served.push(path);
                    }
                }
                let listed: Vec<String> = page_links(&cfg, i)
                    .into_iter()
                    .map(|l| match l {
                        SiteLink::Page(n) => format!("/p/{n}"),
                        SiteLink::Upper(n) => format!("/P/{n}"),
                    })
                    .collect();
                // A back-link may also be a child or the spelled page: then
                // the listed one is already known, which is what matters.
                let listed: Vec<String> =
                    listed.into_iter().filter(|p| !back.contains(p)).collect();
                assert_eq!(served, listed, "page {i} of {pages}, fanout {fanout}");
            }
        }
    }

    fn percent_decode(path: &str) -> String {
        let bytes = path.as_bytes();
        let mut out = Vec::new();
        let mut k = 0;
        while k < bytes.len() {
            if bytes[k] == b'%' && k + 2 < bytes.len() {
                let hex = std::str::from_utf8(&bytes[k + 1..k + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                k += 3;
            } else {
                out.push(bytes[k]);
                k += 1;
            }
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn small_page_size_is_a_minimum_not_a_cut() {
        let cfg = SiteConfig {
            page_size: 10,
            ..SiteConfig::default()
        };
        let html = page(&cfg, "http://127.0.0.1:9", 1).unwrap();
        assert!(html.ends_with(TAIL) && html.len() > 10);
    }

    #[test]
    fn spelled_pages_link_one_target_many_ways() {
        let cfg = config(100, 10);
        let html = page(&cfg, "http://127.0.0.1:9", 50).unwrap();
        let links = hrefs(&html);
        for want in [
            "/p/57",
            "57",
            "../p/57",
            "http://127.0.0.1:9/p/%35%37",
            "//127.0.0.1:9/p/57",
        ] {
            assert!(links.contains(&want), "{want} missing from {links:?}");
        }
        assert!(links.contains(&"HTTP://127.0.0.1:9/p/57"));
        assert!(links.contains(&"/P/57"));
        assert_eq!(spelled_target(&cfg, 51), None);
    }

    #[test]
    fn root_links_depend_on_config() {
        let mut cfg = config(3, 2);
        assert_eq!(hrefs(&root(&cfg)), ["/p/0"]);
        cfg.specials = true;
        cfg.traps = true;
        cfg.extra_root_links = vec!["http://127.0.0.1:1/".into()];
        let html = root(&cfg);
        let want = ["/p/0", "http://127.0.0.1:1/", "/specials"];
        assert_eq!(hrefs(&html)[..3], want);
        assert_eq!(hrefs(&html)[3..], TRAP_ENTRIES);
    }
}
