//! Link and image targets: made absolute against the page's base, kept only
//! for schemes a reader can follow, and written so Markdown reads them back.

use url::Url;

use super::tree::{Tag, Tree};

/// The page's base URL: its first `<base href>` resolved against `url`, else
/// `url` itself.
pub(crate) fn base_url(tree: &Tree<'_>, url: &Url) -> Url {
    (0..tree.len())
        .filter(|&i| tree.tag(i) == Tag::Base)
        .find_map(|i| tree.attr(i, "href"))
        .and_then(|href| url.join(href.trim()).ok())
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .unwrap_or_else(|| url.clone())
}

/// `href` made absolute against `base`, or `None` when it does not parse or
/// names a scheme that runs or embeds something (`javascript:`, `data:`…).
pub(crate) fn resolve(base: &Url, href: &str) -> Option<Url> {
    let href = href.trim();
    if href.is_empty() {
        return None;
    }
    let url = base.join(href).ok()?;
    matches!(
        url.scheme(),
        "http" | "https" | "mailto" | "ftp" | "ftps" | "tel"
    )
    .then_some(url)
}

/// The source of image `i`: `src`, unless it is missing or a lazy-loading
/// placeholder and a `data-src`-like attribute or `srcset` names the real one.
pub(crate) fn image_src(tree: &Tree<'_>, i: usize, base: &Url) -> Option<Url> {
    let src = tree.attr(i, "src").map(str::trim).unwrap_or("");
    if !src.is_empty()
        && !is_placeholder(src)
        && let Some(url) = resolve(base, src)
    {
        return Some(url);
    }
    for name in [
        "data-src",
        "data-lazy-src",
        "data-original",
        "data-url",
        "data-hi-res-src",
    ] {
        if let Some(url) = tree.attr(i, name).and_then(|v| resolve(base, v)) {
            return Some(url);
        }
    }
    for name in ["srcset", "data-srcset"] {
        let first = tree
            .attr(i, name)
            .and_then(|v| v.split(',').next())
            .and_then(|c| c.split_whitespace().next());
        if let Some(url) = first.and_then(|v| resolve(base, v)) {
            return Some(url);
        }
    }
    None
}

/// Whether `src` looks like a stand-in while the real image loads lazily.
fn is_placeholder(src: &str) -> bool {
    let lower = src
        .get(..src.len().min(200))
        .unwrap_or(src)
        .to_ascii_lowercase();
    lower.starts_with("data:")
        || lower.contains("placeholder")
        || lower.contains("blank.gif")
        || lower.contains("spacer.gif")
        || lower.contains("pixel.gif")
        || lower.contains("lazy")
}

/// `url` as a Markdown link destination: the characters that would end or
/// confuse it (spaces, parentheses, angle brackets) percent-encoded.
pub(crate) fn destination(url: &Url) -> String {
    let s = url.as_str();
    if !s.contains([' ', '(', ')', '<', '>']) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            ' ' => out.push_str("%20"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            c => out.push(c),
        }
    }
    out
}
