//! Internal links: pointing a page's links at the tree's own files.
//!
//! When a page is written, each of its http(s) links whose target page is
//! already in the tree points at that file, relatively (fragment kept). A
//! link whose target is not there yet is written absolute, and if the target
//! may be a page (not an image, a stylesheet, an archive… by its extension)
//! it is noted in the link log, a file in the tree (`.skitter-markdown-links`,
//! one line per link: the page's file, the link as written, the file its
//! target would be, its fragment). At the end ([`fix_up`]) the log is read
//! line by line, and every noted link whose target file now exists is
//! rewritten to it; the log is then removed. So memory stays bounded whatever
//! the crawl's size (the log is on disk, read as a stream), a crawl killed
//! before its end leaves only working (absolute) links, and a resumed crawl
//! (`--state`) appends to the log its earlier run left, fixing both runs'
//! links at its end. Links to redirects stay absolute: the tree has no file
//! for a redirect.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use url::Url;

use super::path::{Paths, absolute, markdown_path, relative};
use crate::output::mirror::place;

/// The log's file name in the tree.
pub const LOG_NAME: &str = ".skitter-markdown-links";

/// Extensions of link targets that are never pages.
const NOT_PAGES: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "webp", "avif", "svg", "ico", "bmp", "tif", "tiff", "css", "js",
    "mjs", "json", "xml", "rss", "atom", "pdf", "zip", "gz", "tgz", "bz2", "xz", "7z", "rar",
    "tar", "mp3", "mp4", "webm", "ogg", "wav", "mov", "avi", "woff", "woff2", "ttf", "otf", "wasm",
    "exe", "dmg", "iso", "deb", "rpm", "csv", "txt", "doc", "docx", "xls", "xlsx", "ppt", "pptx",
];

/// The links of the tree still to point at files.
pub struct LinkLog {
    file: BufWriter<File>,
}

impl LinkLog {
    /// Opens the log of the tree at `dir`, continuing one left by an
    /// earlier run (a symbolic link at its name is refused, never followed).
    pub fn open(dir: &Path) -> io::Result<LinkLog> {
        let mut file = crate::output::open_output(&dir.join(LOG_NAME), true)?;
        io::Seek::seek(&mut file, io::SeekFrom::End(0))?;
        Ok(LinkLog {
            file: BufWriter::new(file),
        })
    }

    /// Notes the links of one page.
    pub fn add(&mut self, pending: &[Pending]) -> io::Result<()> {
        for p in pending {
            writeln!(
                self.file,
                "{}\t{}\t{}\t{}",
                p.from, p.written, p.target, p.fragment
            )?;
        }
        Ok(())
    }

    /// Hands what was noted to the file.
    pub fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// A link written absolute whose target page may come later.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    /// The page's file, under the tree (`/`-separated).
    pub from: String,
    /// The link as written in it.
    pub written: String,
    /// The file its target would be, under the tree.
    pub target: String,
    /// Its fragment, with its `#`, or empty.
    pub fragment: String,
}

/// The files the writer placed in the tree, so a link's target is looked up
/// in memory rather than with a `stat` (ten links a page cost more than the
/// page's own file). At most [`MAX_WRITTEN`] are remembered.
#[derive(Debug, Default)]
pub(super) struct Written {
    files: HashSet<PathBuf>,
    /// Every file of the tree is in `files`: the tree had nothing in it when
    /// the sink opened, and no more than [`MAX_WRITTEN`] were written. Then a
    /// file not in `files` is not there; else the file system is asked.
    complete: bool,
}

/// Files one [`Written`] remembers at most (about 100 bytes each).
pub(super) const MAX_WRITTEN: usize = 1 << 20;

impl Written {
    /// For a tree that had nothing in it (`fresh`), or one with files from
    /// before.
    pub(super) fn new(fresh: bool) -> Written {
        Written {
            files: HashSet::new(),
            complete: fresh,
        }
    }

    /// Whether `path` is a file of the tree.
    pub(super) fn is_file(&self, path: &Path) -> bool {
        self.files.contains(path) || (!self.complete && path.is_file())
    }

    /// Notes a file placed (and the files moved aside into directories).
    pub(super) fn placed(&mut self, placed: &place::Placed) {
        for (from, to) in &placed.moved {
            self.files.remove(from);
            self.add(to);
        }
        self.add(&placed.path);
    }

    fn add(&mut self, path: &Path) {
        if self.files.len() >= MAX_WRITTEN && !self.files.contains(path) {
            self.complete = false;
            return;
        }
        self.files.insert(path.to_path_buf());
    }
}

/// The links of one page being written to `file` in the tree at `dir`.
pub struct PageLinks<'a> {
    dir: &'a Path,
    file: &'a Path,
    written: &'a Written,
    /// Links noted, each once.
    pub pending: Vec<Pending>,
    noted: HashSet<String>,
    /// `file` under `dir`, once a link is noted.
    from: Option<String>,
    /// The files of URLs met on earlier pages, when kept.
    paths: Option<&'a mut Paths>,
}

impl<'a> PageLinks<'a> {
    /// For the page written to `file` under `dir`.
    pub fn new(dir: &'a Path, file: &'a Path, written: &'a Written) -> PageLinks<'a> {
        PageLinks {
            dir,
            file,
            written,
            pending: Vec::new(),
            noted: HashSet::new(),
            from: None,
            paths: None,
        }
    }

    /// Names link targets through `paths`, kept from page to page.
    pub(super) fn with_paths(mut self, paths: &'a mut Paths) -> PageLinks<'a> {
        self.paths = Some(paths);
        self
    }

    /// What to write for a link to `url`: a relative path when its page is
    /// in the tree, else the absolute URL (noted when it may be a page).
    /// `None` (leave the extractor's text) for links that are not http(s).
    pub fn target(&mut self, url: &Url) -> Option<String> {
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        let fragment = url.fragment().map_or(String::new(), |f| format!("#{f}"));
        let target = match self.paths.as_deref_mut() {
            Some(paths) => paths.get(self.dir, url),
            None => markdown_path(self.dir, url),
        };
        if self.written.is_file(&target) {
            return Some(format!("{}{fragment}", relative(self.file, &target)));
        }
        let written = absolute(url);
        if may_be_page(url) && self.noted.insert(written.clone()) {
            let from = self.from.get_or_insert_with(|| under(self.dir, self.file));
            self.pending.push(Pending {
                from: from.clone(),
                written: written.clone(),
                target: under(self.dir, &target),
                fragment,
            });
        }
        Some(written)
    }
}

/// Whether a link may lead to a page: its last segment has no extension of
/// a file type that is never one.
fn may_be_page(url: &Url) -> bool {
    let last = url.path().rsplit('/').next().unwrap_or("");
    match last.rsplit_once('.') {
        Some((_, ext)) => !NOT_PAGES.contains(&ext.to_ascii_lowercase().as_str()),
        None => true,
    }
}

/// `path` under `dir`, `/`-separated.
fn under(dir: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(dir).unwrap_or(path);
    let names: Vec<String> = rel
        .iter()
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    names.join("/")
}

/// Points every noted link whose target now exists at its file, then
/// removes the log; the number of links rewritten.
pub(super) fn fix_up(dir: &Path, files: &Written) -> io::Result<u64> {
    let log = dir.join(LOG_NAME);
    let file = match File::open(&log) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut fixed = 0;
    let mut group: Vec<Pending> = Vec::new();
    for line in BufReader::new(file).lines() {
        let line = line?;
        let mut parts = line.splitn(4, '\t');
        let (Some(from), Some(written), Some(target), Some(fragment)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue; // a line a kill cut short
        };
        if group.first().is_some_and(|g| g.from != from) {
            fixed += fix_file(dir, files, &std::mem::take(&mut group))?;
        }
        group.push(Pending {
            from: from.into(),
            written: written.into(),
            target: target.into(),
            fragment: fragment.into(),
        });
    }
    fixed += fix_file(dir, files, &group)?;
    std::fs::remove_file(&log)?;
    Ok(fixed)
}

/// Rewrites the links of one file whose targets exist.
fn fix_file(dir: &Path, files: &Written, links: &[Pending]) -> io::Result<u64> {
    let Some(first) = links.first() else {
        return Ok(0);
    };
    let path: PathBuf = dir.join(&first.from);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(0); // gone, or not ours
    };
    // Many links of a page share a target (rustdoc's `#method.x` links to one
    // page): its file is looked up once.
    let mut exists: HashMap<&str, bool> = HashMap::new();
    let mut to: HashMap<&str, String> = HashMap::new();
    for link in links {
        let there = *exists
            .entry(&link.target)
            .or_insert_with(|| files.is_file(&dir.join(&link.target)));
        if there {
            let target = dir.join(&link.target);
            to.insert(
                &link.written,
                format!("{}{}", relative(&path, &target), link.fragment),
            );
        }
    }
    if to.is_empty() {
        return Ok(0);
    }
    let (text, fixed) = replace_links(&text, &to);
    if fixed > 0 {
        place::write_whole(&path, text.as_bytes())?;
    }
    Ok(fixed)
}

/// `text` with every link destination (after `(` or `<`, up to the next `)`,
/// `>` or space) that `to` has a replacement for replaced, and how many were.
/// One pass over the text, whatever the number of links: a page of
/// thousands of links made one pass per link quadratic.
fn replace_links(text: &str, to: &HashMap<&str, String>) -> (String, u64) {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut copied, mut n) = (0, 0);
    // The first delimiter at or after the current destination's start; it
    // only moves forward, so the scan is linear.
    let mut end = 0;
    for open in memchr::memchr2_iter(b'(', b'<', bytes) {
        let start = open + 1;
        if start < copied {
            continue;
        }
        if end < start {
            end = match memchr::memchr3(b')', b'>', b' ', &bytes[start..]) {
                Some(at) => start + at,
                // No delimiter left: no destination can end.
                None => break,
            };
        }
        // Both ends sit next to ASCII bytes, so on character boundaries.
        if let Some(new) = to.get(&text[start..end]) {
            out.push_str(&text[copied..start]);
            out.push_str(new);
            copied = end;
            n += 1;
        }
    }
    out.push_str(&text[copied..]);
    (out, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_link_destinations_are_replaced() {
        let text = "[http://h/a](http://h/a) and ![x](http://h/a \"t\") <http://h/a> (http://h/ab) http://h/a";
        let to = HashMap::from([("http://h/a", "a.md".to_string())]);
        let (out, n) = replace_links(text, &to);
        assert_eq!(
            out,
            "[http://h/a](a.md) and ![x](a.md \"t\") <a.md> (http://h/ab) http://h/a"
        );
        assert_eq!(n, 3);
    }

    #[test]
    fn many_links_and_open_brackets_are_one_pass() {
        // Thousands of links to one page's anchors, and a run of brackets
        // with no destination end: each is replaced once, the rest kept.
        let written: Vec<String> = (0..5000).map(|i| format!("http://h/a#m{i}")).collect();
        let to: HashMap<&str, String> = written
            .iter()
            .enumerate()
            .map(|(i, w)| (w.as_str(), format!("a.md#m{i}")))
            .collect();
        let mut text: String = written.iter().map(|w| format!("[m]({w}) ")).collect();
        text.push_str(&"(<".repeat(10_000));
        let (out, n) = replace_links(&text, &to);
        assert_eq!(n, 5000);
        assert!(out.starts_with("[m](a.md#m0) [m](a.md#m1) "));
        assert!(!out.contains("http://h/a"));
        assert!(out.ends_with(&"(<".repeat(10_000)));
    }

    #[test]
    fn page_looking_targets_only() {
        for (url, page) in [
            ("http://h/a", true),
            ("http://h/a.html", true),
            ("http://h/a.php?x=1", true),
            ("http://h/", true),
            ("http://h/i.PNG", false),
            ("http://h/doc.pdf", false),
        ] {
            assert_eq!(may_be_page(&Url::parse(url).unwrap()), page, "{url}");
        }
    }

    #[test]
    fn noted_links_are_fixed_once_their_targets_exist() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("h/d")).unwrap();
        let from = d.join("h/d/p.md");
        // Files written by hand: the file system answers.
        let files = Written::new(false);
        let mut links = PageLinks::new(d, &from, &files);
        let later = Url::parse("http://h/later#s").unwrap();
        let never = Url::parse("http://h/never").unwrap();
        let written = [links.target(&later).unwrap(), links.target(&never).unwrap()];
        assert_eq!(written, ["http://h/later#s", "http://h/never"]);
        assert_eq!(links.target(&Url::parse("mailto:a@h").unwrap()), None);
        std::fs::write(&from, "[L](http://h/later#s) [N](http://h/never)\n").unwrap();
        let mut log = LinkLog::open(d).unwrap();
        log.add(&links.pending).unwrap();
        log.flush().unwrap();
        drop(log);
        std::fs::write(d.join("h/later.md"), "later").unwrap();
        assert_eq!(fix_up(d, &files).unwrap(), 1);
        assert_eq!(
            std::fs::read_to_string(&from).unwrap(),
            "[L](../later.md#s) [N](http://h/never)\n"
        );
        assert!(!d.join(LOG_NAME).exists());
        // Now the target exists: a new page points at it at once.
        let mut links = PageLinks::new(d, &from, &files);
        assert_eq!(links.target(&later).unwrap(), "../later.md#s");
        assert!(links.pending.is_empty());
    }

    #[test]
    fn a_fresh_tree_answers_from_memory() {
        let d = Path::new("/nonexistent-tree");
        let from = d.join("h/p.md");
        let mut written = Written::new(true);
        written.placed(&place::Placed {
            path: d.join("h/a.md"),
            moved: vec![],
        });
        let mut links = PageLinks::new(d, &from, &written);
        let a = Url::parse("http://h/a#x").unwrap();
        let b = Url::parse("http://h/b").unwrap();
        assert_eq!(links.target(&a).unwrap(), "a.md#x");
        assert_eq!(links.target(&b).unwrap(), "http://h/b");
        assert_eq!(links.pending.len(), 1);
        // A file moved aside into a directory of its name is found there.
        written.placed(&place::Placed {
            path: d.join("h/a/x.md"),
            moved: vec![(d.join("h/a.md"), d.join("h/a/index.md"))],
        });
        assert!(!written.is_file(&d.join("h/a.md")));
        assert!(written.is_file(&d.join("h/a/index.md")));
        assert!(written.is_file(&d.join("h/a/x.md")));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_at_the_logs_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "keep").unwrap();
        let tree = dir.path().join("tree");
        std::fs::create_dir(&tree).unwrap();
        std::os::unix::fs::symlink(&elsewhere, tree.join(LOG_NAME)).unwrap();
        assert!(LinkLog::open(&tree).is_err());
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "keep");
    }
}
