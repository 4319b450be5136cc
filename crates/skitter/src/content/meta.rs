//! The page's metadata: title, description, language, author, published
//! date and canonical URL, from the sources listed on [`Document`]'s fields
//! (`<meta>` tags, Open Graph, JSON-LD, `<link>`, `<time>`), first found
//! wins in the order given there.
//!
//! Title rule: the `<title>` loses a site-name suffix or prefix (" | Site",
//! " - Site", " — Site", " · Site", " :: Site") only when the page names
//! its site in `og:site_name` and the part cut is that name; otherwise it is
//! kept as written (one page alone cannot tell "Post | Blog" from a title
//! with a bar in it).
//!
//! [`Document`]: super::Document

use serde_json::Value;
use url::Url;

use super::links::resolve;
use super::tree::{Tag, Tree};

/// What the page says about itself.
#[derive(Default)]
pub(crate) struct Meta {
    pub title: Option<String>,
    pub description: Option<String>,
    pub lang: Option<String>,
    pub author: Option<String>,
    pub published: Option<String>,
    pub canonical: Option<Url>,
}

/// The largest JSON-LD script read.
const MAX_JSON_LD: usize = 256 << 10;

/// Reads the metadata of `tree`; `content` are the kept roots, where a
/// `<time datetime>` dates the article.
pub(crate) fn read(tree: &Tree<'_>, base: &Url, keep: &[bool], content: &[usize]) -> Meta {
    let mut named: Vec<(String, &str)> = Vec::new();
    let mut title = None;
    let mut canonical = None;
    let mut rel_author = None;
    let mut h1 = None;
    let mut json_ld: Vec<Value> = Vec::new();
    for i in 0..tree.len() {
        match tree.tag(i) {
            Tag::Meta => {
                let key = tree
                    .attr(i, "property")
                    .or_else(|| tree.attr(i, "name"))
                    .or_else(|| tree.attr(i, "http-equiv"))
                    .or_else(|| tree.attr(i, "itemprop"));
                if let (Some(key), Some(value)) = (key, tree.attr(i, "content"))
                    && !value.trim().is_empty()
                {
                    named.push((key.trim().to_ascii_lowercase(), value.trim()));
                }
            }
            Tag::Title if title.is_none() => {
                title = Some(collapse(&subtree_text(tree, i))).filter(|t| !t.is_empty());
            }
            Tag::Link => {
                let rel = tree.attr(i, "rel").unwrap_or("").to_ascii_lowercase();
                if canonical.is_none() && rel.split_whitespace().any(|r| r == "canonical") {
                    canonical = tree.attr(i, "href").and_then(|h| resolve(base, h));
                }
            }
            Tag::A if rel_author.is_none() => {
                let rel = tree.attr(i, "rel").unwrap_or("");
                if rel
                    .split_whitespace()
                    .any(|r| r.eq_ignore_ascii_case("author"))
                {
                    rel_author = Some(collapse(&subtree_text(tree, i))).filter(|t| !t.is_empty());
                }
            }
            Tag::H(1) if h1.is_none() => {
                h1 = Some(collapse(&subtree_text(tree, i))).filter(|t| !t.is_empty());
            }
            Tag::Script => {
                let ld = tree
                    .attr(i, "type")
                    .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/ld+json"));
                if ld {
                    let text = subtree_text(tree, i);
                    if text.len() <= MAX_JSON_LD
                        && let Ok(v) = serde_json::from_str::<Value>(text.trim())
                    {
                        json_ld.push(v);
                    }
                }
            }
            _ => {}
        }
    }
    let get = |keys: &[&str]| -> Option<String> {
        keys.iter()
            .find_map(|k| named.iter().find(|(n, _)| n == k).map(|(_, v)| collapse(v)))
            .filter(|v| !v.is_empty())
    };
    let site = get(&["og:site_name"]);
    let title = title
        .map(|t| strip_site(&t, site.as_deref()))
        .or_else(|| get(&["og:title", "twitter:title"]))
        .or(h1);
    let lang = tree
        .find(Tag::Html)
        .and_then(|h| tree.attr(h, "lang"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .or_else(|| get(&["content-language"]));
    let ld = JsonLd::new(&json_ld);
    let author = get(&["author", "article:author", "dc.creator", "sailthru.author"])
        .filter(|a| !a.starts_with("http"))
        .or_else(|| ld.author())
        .or(rel_author);
    let published = get(&["article:published_time"])
        .or_else(|| ld.string("datePublished"))
        .or_else(|| time_in(tree, keep, content))
        .or_else(|| {
            get(&[
                "datepublished",
                "date",
                "dc.date",
                "dc.date.issued",
                "pubdate",
                "publish-date",
                "publishdate",
            ])
        });
    Meta {
        title,
        description: get(&["description", "og:description", "twitter:description"]),
        lang,
        author,
        published,
        canonical,
    }
}

/// `title` without a separator and `site` at either end.
fn strip_site(title: &str, site: Option<&str>) -> String {
    let Some(site) = site.map(str::trim).filter(|s| !s.is_empty()) else {
        return title.to_string();
    };
    for sep in [" | ", " - ", " — ", " – ", " · ", " :: ", " : "] {
        let head = title.strip_suffix(site).and_then(|h| h.strip_suffix(sep));
        let tail = title.strip_prefix(site).and_then(|t| t.strip_prefix(sep));
        if let Some(rest) = head.or(tail).map(str::trim).filter(|r| !r.is_empty()) {
            return rest.to_string();
        }
    }
    title.to_string()
}

/// The first `<time datetime>` inside the content.
fn time_in(tree: &Tree<'_>, keep: &[bool], content: &[usize]) -> Option<String> {
    content.iter().find_map(|&root| {
        (root..tree.end(root))
            .filter(|&i| keep[i] && tree.tag(i) == Tag::Time)
            .find_map(|i| tree.attr(i, "datetime"))
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_string)
    })
}

/// The text of `i`'s subtree, concatenated.
fn subtree_text(tree: &Tree<'_>, i: usize) -> String {
    (i + 1..tree.end(i)).filter_map(|j| tree.text(j)).collect()
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The objects of a page's JSON-LD scripts, `@graph`s and arrays opened.
struct JsonLd<'v> {
    objects: Vec<&'v serde_json::Map<String, Value>>,
}

impl<'v> JsonLd<'v> {
    fn new(values: &'v [Value]) -> JsonLd<'v> {
        let mut objects = Vec::new();
        let mut stack: Vec<&Value> = values.iter().collect();
        while let Some(v) = stack.pop() {
            if objects.len() >= 256 {
                break;
            }
            match v {
                Value::Array(items) => stack.extend(items.iter().rev()),
                Value::Object(map) => {
                    objects.push(map);
                    if let Some(graph) = map.get("@graph") {
                        stack.push(graph);
                    }
                }
                _ => {}
            }
        }
        JsonLd { objects }
    }

    fn string(&self, key: &str) -> Option<String> {
        self.objects
            .iter()
            .find_map(|o| o.get(key).and_then(Value::as_str))
            .map(collapse)
            .filter(|s| !s.is_empty())
    }

    fn author(&self) -> Option<String> {
        self.objects.iter().find_map(|o| {
            let author = o.get("author")?;
            let first = match author {
                Value::Array(items) => items.first()?,
                v => v,
            };
            match first {
                Value::String(s) => Some(collapse(s)),
                Value::Object(m) => m.get("name").and_then(Value::as_str).map(collapse),
                _ => None,
            }
            .filter(|s| !s.is_empty())
        })
    }
}
