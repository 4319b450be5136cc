//! `--convert-links`: after the crawl, point the links in saved HTML and CSS at the
//! saved files, so the mirror browses offline.
//!
//! A link (resolved against the page URL or its `<base href>`, fragment set aside)
//! to a URL that was saved, directly or through redirects, becomes a relative path
//! to that file, with the fragment kept. Any other http(s) link becomes absolute, so
//! it still works from the local copy (as `wget -k` does). `<base href>` is removed,
//! since it would send the relative paths back to the web. Rewritten: `href` of
//! `a`, `area`, `link`; `src` of `img`, `script`, `iframe`, `frame`, `embed`,
//! `source`, `audio`, `video`, `track`, `input`; `video poster`; `srcset`; `url()`
//! and `@import` in `<style>`, `style=""` and CSS files.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;

use lol_html::html_content::{ContentType, Element, TextChunk};
use lol_html::{AsciiCompatibleEncoding, HtmlRewriter, Settings, element, text};
use percent_encoding::{AsciiSet, CONTROLS};
use regex::bytes::{Captures, Regex};
use url::Url;

use super::Saved;
use super::path::relative_link;

/// Characters escaped in the path of a rewritten link (besides controls): those
/// that would end or change the meaning of a relative URL.
const PATH_SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'\\')
    .add(b'^')
    .add(b'|')
    .add(b':')
    .add(b'&')
    .add(b'\'');

/// Redirect hops followed to find the saved target of a link.
const MAX_REDIRECT_HOPS: usize = 10;

/// What was saved and where redirects went: enough to rewrite any link.
pub(super) struct Links<'a> {
    /// Saved URLs (without fragment) and their files.
    pub saved: &'a HashMap<String, Saved>,
    /// Redirect sources (without fragment) and their targets.
    pub redirects: &'a HashMap<String, Url>,
}

impl Links<'_> {
    /// The new value for a link (already entity-decoded) found in `from` (a saved
    /// file), or `None` to leave it alone (empty, fragment-only, or not http(s)).
    pub(super) fn rewrite(&self, from: &Path, base: &Url, value: &str) -> Option<String> {
        let value = value.trim();
        if value.is_empty() || value.starts_with('#') {
            return None;
        }
        let mut abs = base.join(value).ok()?;
        if !matches!(abs.scheme(), "http" | "https") {
            return None;
        }
        let fragment = abs.fragment().map(str::to_owned);
        abs.set_fragment(None);
        let Some(saved) = self.find(&abs) else {
            return Some(with_fragment(abs.to_string(), fragment.as_deref()));
        };
        Some(with_fragment(
            relative(from, &saved.path),
            fragment.as_deref(),
        ))
    }

    fn find(&self, url: &Url) -> Option<&Saved> {
        let mut key = url.as_str().to_owned();
        for _ in 0..=MAX_REDIRECT_HOPS {
            if let Some(saved) = self.saved.get(&key) {
                return Some(saved);
            }
            let mut next = self.redirects.get(&key)?.clone();
            next.set_fragment(None);
            key = next.into();
        }
        None
    }
}

fn with_fragment(mut s: String, fragment: Option<&str>) -> String {
    if let Some(f) = fragment {
        s.push('#');
        s.push_str(f);
    }
    s
}

/// The relative URL from the file `from` to the file `to` (both in the mirror).
fn relative(from: &Path, to: &Path) -> String {
    relative_link(from, to, PATH_SEGMENT)
}

/// Decodes the character references that matter in URLs (`&amp;`, `&lt;`, `&gt;`,
/// `&quot;`, `&apos;`, numeric); attribute values reach handlers undecoded.
fn decode_entities(s: &str) -> String {
    static ENTITY: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"&(?:(amp|lt|gt|quot|apos)|#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6}));")
            .expect("valid regex")
    });
    ENTITY
        .replace_all(s, |c: &regex::Captures<'_>| {
            let ch = match (c.get(1), c.get(2), c.get(3)) {
                (Some(name), _, _) => match name.as_str() {
                    "amp" => Some('&'),
                    "lt" => Some('<'),
                    "gt" => Some('>'),
                    "quot" => Some('"'),
                    _ => Some('\''),
                },
                (_, Some(dec), _) => dec.as_str().parse().ok().and_then(char::from_u32),
                (_, _, Some(hex)) => u32::from_str_radix(hex.as_str(), 16)
                    .ok()
                    .and_then(char::from_u32),
                _ => None,
            };
            ch.map_or_else(|| c[0].to_string(), String::from)
        })
        .into_owned()
}

/// Rewrites `url()` and `@import` targets in CSS with `f`.
pub(super) fn rewrite_css(css: &[u8], f: &dyn Fn(&str) -> Option<String>) -> Vec<u8> {
    static CSS_URL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r#"(?i)url\(\s*(?:"([^"]*)"|'([^']*)'|([^)"'\s]+))\s*\)|@import\s+(?:"([^"]*)"|'([^']*)')"#,
        )
        .expect("valid regex")
    });
    CSS_URL
        .replace_all(css, |c: &Captures<'_>| {
            let (i, target) = (1..=5)
                .find_map(|i| c.get(i).map(|m| (i, m.as_bytes())))
                .unwrap_or((0, b""));
            let new = std::str::from_utf8(target).ok().and_then(f);
            match new {
                Some(new) if i <= 3 => format!("url(\"{}\")", new.replace('"', "%22")).into_bytes(),
                Some(new) => format!("@import \"{}\"", new.replace('"', "%22")).into_bytes(),
                None => c[0].to_vec(),
            }
        })
        .into_owned()
}

/// Rewrites the links of an HTML document saved at `from`, fetched from `url`.
pub(super) fn rewrite_html(
    html: &[u8],
    url: &Url,
    charset: Option<&str>,
    from: &Path,
    links: &Links<'_>,
) -> Result<Vec<u8>, lol_html::errors::RewritingError> {
    let encoding = charset
        .and_then(|c| encoding_rs::Encoding::for_label(c.as_bytes()))
        .and_then(AsciiCompatibleEncoding::new)
        .unwrap_or_else(AsciiCompatibleEncoding::utf_8);
    let base = RefCell::new(url.clone());
    let style = RefCell::new(String::new());
    let rewrite = |value: &str| links.rewrite(from, &base.borrow(), value);
    let link = |v: &str| rewrite(v);
    let srcset = |v: &str| Some(rewrite_srcset(v, &rewrite));
    let css = |v: &str| Some(rewrite_css_str(v, &rewrite));
    let mut out = Vec::with_capacity(html.len());
    let settings = Settings::new()
        .with_encoding(encoding)
        .append_element_content_handler(element!("base[href]", |el| {
            let joined = el
                .get_attribute("href")
                .and_then(|h| base.borrow().join(&decode_entities(h.trim())).ok());
            if let Some(u) = joined {
                *base.borrow_mut() = u;
            }
            el.remove_attribute("href");
            Ok(())
        }))
        .append_element_content_handler(element!("a[href], area[href], link[href]", |el| {
            edit_attribute(el, "href", &link)
        }))
        .append_element_content_handler(element!(
            "img[src], script[src], iframe[src], frame[src], embed[src], source[src], \
             audio[src], video[src], track[src], input[src]",
            |el| edit_attribute(el, "src", &link)
        ))
        .append_element_content_handler(element!("video[poster]", |el| {
            edit_attribute(el, "poster", &link)
        }))
        .append_element_content_handler(element!("img[srcset], source[srcset]", |el| {
            edit_attribute(el, "srcset", &srcset)
        }))
        .append_element_content_handler(element!("[style]", |el| {
            edit_attribute(el, "style", &css)
        }))
        .append_element_content_handler(text!("style", |chunk: &mut TextChunk<'_>| {
            // Style text arrives in pieces; the rule may span them, so it is
            // collected and written back whole at the last piece.
            style.borrow_mut().push_str(chunk.as_str());
            if chunk.last_in_text_node() {
                let text = std::mem::take(&mut *style.borrow_mut());
                chunk.replace(&rewrite_css_str(&text, &rewrite), ContentType::Html);
            } else {
                chunk.remove();
            }
            Ok(())
        }));
    let mut rewriter = HtmlRewriter::new(settings, |c: &[u8]| out.extend_from_slice(c));
    rewriter.write(html)?;
    rewriter.end()?;
    Ok(out)
}

/// Replaces attribute `name` with `f` of its (entity-decoded) value, when `f`
/// gives one. `&` is escaped on the way back, since lol_html does not.
fn edit_attribute(
    el: &mut Element<'_, '_>,
    name: &str,
    f: &dyn Fn(&str) -> Option<String>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    if let Some(new) = el.get_attribute(name).and_then(|v| f(&decode_entities(&v))) {
        el.set_attribute(name, &new.replace('&', "&amp;"))?;
    }
    Ok(())
}

/// Rewrites each candidate URL of a `srcset` value, keeping the descriptors.
fn rewrite_srcset(value: &str, rewrite: &dyn Fn(&str) -> Option<String>) -> String {
    value
        .split(',')
        .map(|candidate| {
            let candidate = candidate.trim();
            let (u, descriptor) = candidate
                .split_once(char::is_whitespace)
                .unwrap_or((candidate, ""));
            let u = rewrite(u).unwrap_or_else(|| u.to_string());
            format!("{u} {}", descriptor.trim()).trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// [`rewrite_css`] for CSS held as text.
fn rewrite_css_str(css: &str, rewrite: &dyn Fn(&str) -> Option<String>) -> String {
    String::from_utf8_lossy(&rewrite_css(css.as_bytes(), rewrite)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        let cases = [
            ("m/h/index.html", "m/h/a.html", "a.html"),
            ("m/h/d/p.html", "m/h/a.html", "../a.html"),
            ("m/h/p.html", "m/h/d/e/x.css", "d/e/x.css"),
            (
                "m/h/p.html",
                "m/o_81/q%3Fa=1.html",
                "../o_81/q%253Fa=1.html",
            ),
            ("m/h/p.html", "m/h/a b#c.html", "a%20b%23c.html"),
        ];
        for (from, to, want) in cases {
            assert_eq!(
                relative(Path::new(from), Path::new(to)),
                want,
                "{from} -> {to}"
            );
        }
    }

    #[test]
    fn srcset_candidates() {
        let f = |u: &str| (u == "a.png").then(|| "A".to_string());
        assert_eq!(
            rewrite_srcset(" a.png 1x,b.png\t2x , a.png", &f),
            "A 1x, b.png 2x, A"
        );
    }

    #[test]
    fn entities() {
        assert_eq!(
            decode_entities("a?x=1&amp;y=2&#38;z&#x26;&bogus;"),
            "a?x=1&y=2&z&&bogus;"
        );
    }

    #[test]
    fn css_urls() {
        let f = |u: &str| Some(format!("<{u}>"));
        let got = rewrite_css(
            b"a{background:url( 'x.png' )} b{src:URL(y.woff)} @import \"z.css\"; c{url(\"q\")}",
            &f,
        );
        assert_eq!(
            String::from_utf8(got).unwrap(),
            "a{background:url(\"<x.png>\")} b{src:url(\"<y.woff>\")} @import \"<z.css>\"; c{url(\"<q>\")}"
        );
    }
}
