//! Where a page goes in the Markdown tree, and how one file names another.
//!
//! A page's file is the mirror's ([`mirror_path`], the same safe names) with
//! `.md` for the HTML extension: `/` → `host/index.md`, `/a/b.html` →
//! `host/a/b.md`, `/a` → `host/a.md`, `/p?x=1` → `host/p%3Fx=1.md`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use percent_encoding::{AsciiSet, CONTROLS};
use url::{Position, Url};

use crate::output::mirror::relative_link;
use crate::output::mirror_path;

/// Characters escaped in a relative link's path: those that would end or
/// change a Markdown link destination or a relative URL.
const SEGMENT: &AsciiSet = &CONTROLS
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
    .add(b'\'')
    .add(b'(')
    .add(b')')
    .add(b'[')
    .add(b']');

/// The file of the page at `url` (fragment ignored) under `dir`.
pub fn markdown_path(dir: &Path, url: &Url) -> PathBuf {
    // Most links have no fragment: no copy of the URL for them (this runs
    // for every link of every page written).
    let unfragmented;
    let url = if url.fragment().is_some() {
        let mut copy = url.clone();
        copy.set_fragment(None);
        unfragmented = copy;
        &unfragmented
    } else {
        url
    };
    let mut path = mirror_path(dir, url, Some("text/html"));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lower = name.to_ascii_lowercase();
    let stem = [".html", ".htm"]
        .iter()
        .find(|ext| lower.ends_with(*ext) && lower.len() > ext.len())
        .map_or(name.as_str(), |ext| &name[..name.len() - ext.len()]);
    let md = format!("{stem}.md");
    path.set_file_name(md);
    path
}

/// URLs whose file [`Paths`] remembers at most: about 200 bytes each.
pub(super) const MAX_PATHS: usize = 4096;

/// The files of URLs met lately, so the same page linked from page after
/// page (a site's navigation, a pager's neighbours) is named once rather
/// than at every link: naming a file ([`markdown_path`]) costs a few
/// thousand instructions, and a page has tens of links. Forgets everything
/// when full ([`MAX_PATHS`]), so its memory stays bounded on any crawl.
#[derive(Debug, Default)]
pub(super) struct Paths {
    known: HashMap<String, PathBuf>,
}

impl Paths {
    /// [`markdown_path`] of `url` under `dir` (always the same `dir`).
    pub(super) fn get(&mut self, dir: &Path, url: &Url) -> PathBuf {
        let key = &url[..Position::AfterQuery];
        if let Some(path) = self.known.get(key) {
            return path.clone();
        }
        let path = markdown_path(dir, url);
        if self.known.len() >= MAX_PATHS {
            self.known.clear();
        }
        self.known.insert(key.to_string(), path.clone());
        path
    }
}

/// The link from the file `from` to the file `to` (both under one tree):
/// a relative path, each name percent-encoded where a link needs it.
pub fn relative(from: &Path, to: &Path) -> String {
    relative_link(from, to, SEGMENT)
}

/// An absolute URL as written in the tree: parentheses encoded, so a
/// Markdown link destination never ends early.
pub fn absolute(url: &Url) -> String {
    url.as_str().replace('(', "%28").replace(')', "%29")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_get_the_mirror_names_with_md() {
        let dir = Path::new("out");
        let cases = [
            ("http://h.test/", "out/h.test/index.md"),
            ("http://h.test/a/b.html", "out/h.test/a/b.md"),
            ("http://h.test/a/b.HTM#x", "out/h.test/a/b.md"),
            ("http://h.test/a", "out/h.test/a.md"),
            ("http://h.test/a/", "out/h.test/a/index.md"),
            ("http://h.test:8080/p?x=1", "out/h.test_8080/p%3Fx=1.md"),
            ("http://h.test/doc.php", "out/h.test/doc.php.md"),
            ("http://h.test/.html", "out/h.test/.html.md"),
        ];
        for (url, want) in cases {
            let url = Url::parse(url).unwrap();
            assert_eq!(markdown_path(dir, &url), PathBuf::from(want), "{url}");
        }
    }

    #[test]
    fn remembered_paths_are_the_named_ones_and_bounded() {
        let dir = Path::new("out");
        let mut paths = Paths::default();
        for round in 0..2 {
            for i in 0..MAX_PATHS + 10 {
                // The fragment is not part of the file; the query is.
                let url = Url::parse(&format!("http://h.test/p/{i}?q={round}#f{i}")).unwrap();
                assert_eq!(paths.get(dir, &url), markdown_path(dir, &url), "{url}");
                assert!(paths.known.len() <= MAX_PATHS);
            }
        }
        let a = Url::parse("http://h.test/a#x").unwrap();
        let b = Url::parse("http://h.test/a#y").unwrap();
        assert_eq!(paths.get(dir, &a), paths.get(dir, &b));
    }

    #[test]
    fn relative_links_are_encoded_for_markdown() {
        let cases = [
            ("m/h/index.md", "m/h/a.md", "a.md"),
            ("m/h/d/p.md", "m/h/a.md", "../a.md"),
            ("m/h/p.md", "m/o_81/q%3Fa=1.md", "../o_81/q%253Fa=1.md"),
            ("m/h/p.md", "m/h/a (b) c.md", "a%20%28b%29%20c.md"),
        ];
        for (from, to, want) in cases {
            assert_eq!(relative(Path::new(from), Path::new(to)), want, "{from}");
        }
        let url = Url::parse("http://h.test/wiki/A_(b)#c").unwrap();
        assert_eq!(absolute(&url), "http://h.test/wiki/A_%28b%29#c");
    }
}
