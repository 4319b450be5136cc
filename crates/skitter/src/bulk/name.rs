//! The file each fetched body is saved to under the output directory.
//!
//! By default the mirror's layout ([`mirror_path`]: `DIR/host/path`), computed
//! from the URL alone (no media type), so the name is known before the request and
//! `--skip-existing` can check it without fetching. With a [`NameTemplate`]
//! (`{host}`, `{path}`, `{basename}`, `{query}`, `{n}`, and for recipes the
//! pattern's ranges `{1}`…, `{page}` and values read from responses, see
//! [`NameTemplate::parse_with`]), the rendered text is split
//! on `/` and every component made safe by the mirror's rules: percent-decoded
//! once, then controls (NUL included), `\ : * ? " < > |` and `%` written as
//! `%XX`; names made only of dots encoded (so never `.` or `..`); Windows device
//! names and trailing dots/spaces encoded; each component capped at
//! [`MAX_COMPONENT`] bytes with a hash suffix. Empty components are dropped, and a
//! result that is not plainly under the directory falls back to
//! `DIR/_unsafe/<sha1 of the URL>`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use url::Url;

use super::placeholder::{self, Piece, Values};
use crate::base::fsname::{cap, encode_name, hex_sha1, is_plainly_under, windows_safe};
use crate::output::mirror_path;

/// Longest file or directory name written by a template, in bytes (as the mirror).
pub use crate::base::fsname::MAX_COMPONENT;

pub use crate::crawl::build_error::TemplateError;

/// A file-name template such as `{host}/{n}-{basename}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameTemplate {
    pieces: Vec<Piece>,
}

impl NameTemplate {
    /// Parses a template. Placeholders: `{host}` (host, `_port` when not the
    /// default), `{path}` (the path without its leading `/`, `index` for `/` and
    /// after a trailing `/`), `{basename}` (the last path segment, or `index`),
    /// `{query}` (the query, empty when none), `{n}` or `{num}` (the item's 1-based
    /// input position). `{{` and `}}` are literal braces.
    pub fn parse(template: &str) -> Result<NameTemplate, TemplateError> {
        NameTemplate::parse_with(template, &[])
    }

    /// [`NameTemplate::parse`] that also accepts `{page}`, `{1}`, `{2}`… (the
    /// input pattern's ranges) and the value names of a recipe.
    pub fn parse_with(template: &str, names: &[&str]) -> Result<NameTemplate, TemplateError> {
        let known = |n: &str| names.contains(&n);
        let pieces = placeholder::parse(template, true, &known).map_err(|why| TemplateError {
            template: template.to_string(),
            why,
        })?;
        Ok(NameTemplate { pieces })
    }

    /// Whether the template names `{page}` (so pages of a chain get files of
    /// their own).
    pub fn has_page(&self) -> bool {
        self.pieces.contains(&Piece::Page)
    }

    /// The value names the template uses.
    pub fn vars(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Var(name) => Some(name.as_str()),
            _ => None,
        })
    }

    /// The template filled in for one URL, before sanitising.
    fn render(&self, url: &Url, n: u64, values: &Values) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Host => {
                    out.push_str(url.host_str().unwrap_or("_"));
                    if let Some(port) = url.port() {
                        let _ = write!(out, "_{port}");
                    }
                }
                Piece::Path => {
                    let path = url.path().trim_start_matches('/');
                    out.push_str(path);
                    if path.is_empty() || path.ends_with('/') {
                        out.push_str("index");
                    }
                }
                Piece::Basename => {
                    let last = url.path().rsplit('/').next().unwrap_or("");
                    out.push_str(if last.is_empty() { "index" } else { last });
                }
                Piece::Query => out.push_str(url.query().unwrap_or("")),
                Piece::N => {
                    let _ = write!(out, "{n}");
                }
                // Slashes in a value are not directories: each component is
                // made safe on its own below, so they are encoded first.
                other => {
                    let value = values.get(other).unwrap_or_default();
                    out.push_str(&value.replace('%', "%25").replace(['/', '\\'], "%2F"));
                }
            }
        }
        out
    }
}

/// How saved files are named.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Naming {
    /// The mirror's `host/path` layout.
    #[default]
    Mirror,
    /// A template.
    Template(NameTemplate),
}

/// The file the body of item `n` at `url` is saved to, always under `dir`,
/// and never the fetch index or one of SQLite's files beside it (see
/// `clear_of_index`).
pub fn target_path(dir: &Path, naming: &Naming, url: &Url, n: u64) -> PathBuf {
    target_path_with(dir, naming, url, n, &Values::default())
}

/// [`target_path`] for a template that names captures, values or `{page}`.
pub fn target_path_with(
    dir: &Path,
    naming: &Naming,
    url: &Url,
    n: u64,
    values: &Values,
) -> PathBuf {
    clear_of_index(dir, templated_path(dir, naming, url, n, values))
}

/// Names in the output directory that belong to the fetch index: the
/// database and the files SQLite keeps beside it.
const INDEX_NAMES: [&str; 4] = ["", "-journal", "-wal", "-shm"];

/// `path`, unless it is the fetch index of `dir` or one of its SQLite files,
/// which a saved body must never overwrite: then the same name with its
/// leading dot written `%2E`, as a name made safe writes it (a literal `%`
/// being `%25`, this cannot be another URL's name).
fn clear_of_index(dir: &Path, path: PathBuf) -> PathBuf {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return path;
    };
    // Compared without case: on a case-insensitive file system
    // `.SKITTER-FETCH-INDEX` is the index too.
    let reserved = INDEX_NAMES
        .iter()
        .any(|suffix| name.eq_ignore_ascii_case(&format!("{}{suffix}", super::INDEX_FILE)));
    if reserved && path.parent() == Some(dir) {
        dir.join(format!("%2E{}", &name[1..]))
    } else {
        path
    }
}

fn templated_path(dir: &Path, naming: &Naming, url: &Url, n: u64, values: &Values) -> PathBuf {
    let template = match naming {
        Naming::Mirror => return mirror_path(dir, url, None),
        Naming::Template(t) => t,
    };
    let mut out = dir.to_path_buf();
    for component in template.render(url, n, values).split(['/', '\\']) {
        if !component.is_empty() {
            out.push(safe_component(component));
        }
    }
    if is_plainly_under(dir, &out) {
        out
    } else {
        dir.join("_unsafe").join(hex_sha1(url.as_str()))
    }
}

/// One path component made safe on every OS (see [`crate::base::fsname`]); a capped
/// name keeps a short extension.
fn safe_component(raw: &str) -> String {
    let name = windows_safe(encode_name(raw, false));
    let ext = match name.rfind('.') {
        Some(i) if name.len() - i <= 9 => name[i..].to_string(),
        _ => String::new(),
    };
    cap(name, &ext)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(template: &str, url: &str, n: u64) -> String {
        let naming = Naming::Template(NameTemplate::parse(template).unwrap());
        let url = Url::parse(url).unwrap();
        let path = target_path(Path::new("/out"), &naming, &url, n);
        path.strip_prefix("/out")
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn placeholders() {
        let cases = [
            ("{host}/{path}", "http://h/a/b.gif", "h/a/b.gif"),
            ("{host}/{path}", "http://h:8080/", "h_8080/index"),
            ("{host}/{path}", "http://h/dir/", "h/dir/index"),
            ("{basename}", "http://h/a/b.gif?x=1", "b.gif"),
            ("{basename}", "http://h/a/", "index"),
            ("{n}-{basename}", "http://h/a.json", "7-a.json"),
            ("p{num}", "http://h/a.json", "p7"),
            (
                "items-{query}.json",
                "http://h/api?page=2",
                "items-page=2.json",
            ),
            ("{{x}}-{n}", "http://h/", "{x}-7"),
        ];
        for (template, url, want) in cases {
            assert_eq!(name(template, url, 7), want, "{template} {url}");
        }
    }

    #[test]
    fn hostile_urls_stay_inside_the_directory() {
        let cases = [
            // The URL parser already resolves dot segments, escaped or not.
            (
                "{path}",
                "http://h/a/%2E%2E/%2e%2e/etc/passwd",
                "etc/passwd",
            ),
            ("{path}", "http://h/%252E%252E/x", "%252E%252E/x"),
            ("{query}", "http://h/?../../etc", "%2E%2E/%2E%2E/etc"),
            ("{query}", "http://h/?%2e%2e/x", "%2E%2E/x"),
            ("{query}", "http://h/?a%2Fb", "a%2Fb"),
            ("{path}", "http://h/a%2Fb", "a%2Fb"),
            ("{path}", "http://h/a%5Cb", "a%5Cb"),
            ("{path}", "http://h/a%00b%0A", "a%00b%0A"),
            ("{path}", "http://h/CON/nul.txt", "%43ON/%6Eul.txt"),
            ("{path}", "http://h/x.%20", "x%2E%20"),
            ("{basename}", "http://h/a%3Ab%2A%3F", "a%3Ab%2A%3F"),
            ("{basename}", "http://h/%FF%FE", "%FF%FE"),
            ("../{basename}", "http://h/a", "%2E%2E/a"),
            ("/abs/{basename}", "http://h/a", "abs/a"),
            (
                "{query}",
                "http://h/a?",
                "_unsafe/cb4c0bc3e4d3fae07fdf5ef4e4b38b0d5fa7c1b1",
            ),
        ];
        for (template, url, want) in cases {
            let got = name(template, url, 1);
            if want.starts_with("_unsafe/") {
                assert!(got.starts_with("_unsafe/"), "{template} {url}: {got}");
            } else {
                assert_eq!(got, want, "{template} {url}");
            }
        }
    }

    #[test]
    fn no_file_takes_the_index_name() {
        let cases = [
            (
                ".skitter-fetch-index",
                "http://h/",
                "%2Eskitter-fetch-index",
            ),
            (
                "{basename}",
                "http://h/.skitter-fetch-index",
                "%2Eskitter-fetch-index",
            ),
            (
                "{query}",
                "http://h/?.skitter-fetch-index-journal",
                "%2Eskitter-fetch-index-journal",
            ),
            (
                ".SKITTER-fetch-index-wal",
                "http://h/",
                "%2ESKITTER-fetch-index-wal",
            ),
            // Below the directory top it is just a name.
            (
                "{host}/{basename}",
                "http://h/.skitter-fetch-index",
                "h/.skitter-fetch-index",
            ),
            (
                ".skitter-fetch-index.json",
                "http://h/",
                ".skitter-fetch-index.json",
            ),
        ];
        for (template, url, want) in cases {
            assert_eq!(name(template, url, 1), want, "{template} {url}");
        }
    }

    #[test]
    fn long_components_are_capped_and_distinct() {
        let long = "a".repeat(500);
        let a = name("{basename}", &format!("http://h/{long}.json"), 1);
        let b = name("{basename}", &format!("http://h/b{long}.json"), 1);
        assert!(a.len() <= MAX_COMPONENT && a.ends_with(".json"), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn bad_templates() {
        for t in ["{nope}", "{host", "a}b", "{}"] {
            assert!(NameTemplate::parse(t).is_err(), "{t}");
        }
    }

    #[test]
    fn mirror_naming_ignores_the_media_type() {
        let url = Url::parse("http://h/api/items?page=1").unwrap();
        let got = target_path(Path::new("/out"), &Naming::Mirror, &url, 1);
        assert_eq!(got, Path::new("/out/h/api/items%3Fpage=1"));
    }
}
