//! Where a URL is saved in the mirror: a pure mapping, safe for hostile URLs.
//!
//! Naming rules (`DIR` is the mirror directory):
//! - `DIR/host/path`; a non-default port is appended as `host_port`
//!   (`127.0.0.1_8080`), and a literal `_` in a host name is written `%5F`, so
//!   the port part is unambiguous. `http` and `https` share a directory.
//! - Each path segment is percent-decoded, then every byte that is unsafe in a file
//!   name on some OS is written as `%XX` (uppercase hex): controls (including NUL
//!   and U+0080–U+009F), `/ \ : * ? " < > |`, `%` itself, and bytes that are not
//!   UTF-8. So `%2F` and `\` can never separate directories, and the encoding is
//!   one-to-one.
//! - A query is kept in the file name after an encoded `?`: `page?a=1` →
//!   `page%3Fa=1.html`.
//! - A path ending in `/` is saved as `index` plus the type's extension
//!   (`index.html` for HTML and unknown types).
//! - Extensions (see [`extension_for`]): HTML gets `.html` unless the name already
//!   ends in `.html`/`.htm`, CSS gets `.css` unless it ends in `.css`, other known
//!   types get theirs only when the name has no extension; a name with a query
//!   always gets the type's extension.
//! - Empty segments (`a//b`) are dropped; `.`/`..` (raw or `%2e`) can only appear
//!   as `%2E`, never as a directory step.
//! - Windows: reserved device names (`CON`, `PRN`, `AUX`, `NUL`, `COM1`–`COM9`,
//!   `LPT1`–`LPT9`, with any extension) get their first letter encoded (`%43ON`);
//!   trailing dots and spaces are encoded.
//! - Each component is at most [`MAX_COMPONENT`](crate::base::fsname::MAX_COMPONENT)
//!   bytes: a longer one is cut and suffixed with `~` and 16 hex digits of its
//!   SHA-1, keeping the extension. A path whose part under the host exceeds
//!   [`MAX_RELATIVE`] bytes is saved as `host/_long/<sha1 of the URL>.ext`.
//! - Last guard: the result must be `DIR` followed only by plain components, else
//!   the URL is saved as `DIR/_unsafe/<sha1 of the URL>`.

use std::path::{Path, PathBuf};

use url::Url;

use crate::base::fsname::{cap, encode_name, hex_sha1, is_plainly_under, windows_safe};

/// Longest path under the host directory, in bytes.
pub const MAX_RELATIVE: usize = 1024;

/// The file a URL with the given media type is saved to under `dir`.
pub fn mirror_path(dir: &Path, url: &Url, media_type: Option<&str>) -> PathBuf {
    let mut out = dir.to_path_buf();
    out.push(host_component(url));
    let rel = relative_components(url, media_type);
    let rel_len: usize = rel.iter().map(|c| c.len() + 1).sum();
    if rel_len > MAX_RELATIVE {
        out.push("_long");
        out.push(format!(
            "{}{}",
            hex_sha1(url.as_str()),
            extension_for(media_type).unwrap_or("")
        ));
    } else {
        out.extend(rel);
    }
    if is_plainly_under(dir, &out) {
        out
    } else {
        dir.join("_unsafe").join(hex_sha1(url.as_str()))
    }
}

/// The extension for a media type, in the table the mirror uses.
pub fn extension_for(media_type: Option<&str>) -> Option<&'static str> {
    Some(match media_type? {
        "text/html" | "application/xhtml+xml" => ".html",
        "text/css" => ".css",
        "text/javascript" | "application/javascript" | "application/x-javascript" => ".js",
        "application/json" => ".json",
        "text/plain" => ".txt",
        "text/xml" | "application/xml" => ".xml",
        "application/rss+xml" => ".rss",
        "application/atom+xml" => ".atom",
        "application/pdf" => ".pdf",
        "image/png" => ".png",
        "image/jpeg" => ".jpg",
        "image/gif" => ".gif",
        "image/webp" => ".webp",
        "image/avif" => ".avif",
        "image/svg+xml" => ".svg",
        "image/x-icon" | "image/vnd.microsoft.icon" => ".ico",
        "font/woff" => ".woff",
        "font/woff2" => ".woff2",
        "font/ttf" => ".ttf",
        "font/otf" => ".otf",
        "video/mp4" => ".mp4",
        "audio/mpeg" => ".mp3",
        "application/wasm" => ".wasm",
        "application/zip" => ".zip",
        _ => return None,
    })
}

/// `host` or `host_port`, `_` in the host encoded.
fn host_component(url: &Url) -> String {
    let host = encode_name(url.host_str().unwrap_or("_"), true);
    let name = match url.port() {
        Some(port) => format!("{host}_{port}"),
        None => host,
    };
    cap(windows_safe(name), "")
}

/// The directories and file name under the host directory.
fn relative_components(url: &Url, media_type: Option<&str>) -> Vec<String> {
    let segments: Vec<&str> = url.path_segments().map_or_else(Vec::new, Iterator::collect);
    let (last, dirs) = segments.split_last().unwrap_or((&"", &[]));
    let mut out: Vec<String> = dirs
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| cap(windows_safe(encode_name(s, false)), ""))
        .collect();
    out.push(file_name(last, url.query(), media_type));
    out
}

/// The file name for the last segment: name, encoded query, extension.
fn file_name(last: &str, query: Option<&str>, media_type: Option<&str>) -> String {
    let is_index = last.is_empty();
    let mut name = if is_index {
        "index".to_string()
    } else {
        encode_name(last, false)
    };
    if let Some(q) = query {
        name.push_str("%3F");
        name.push_str(&encode_name(q, false));
    }
    let existing = if is_index || query.is_some() {
        None
    } else {
        existing_extension(&name)
    };
    let ext = match (extension_for(media_type), existing.as_deref()) {
        (Some(".html"), Some("html" | "htm")) | (Some(".css"), Some("css")) => "",
        (Some(ext @ (".html" | ".css")), _) => ext,
        (Some(_), Some(_)) => "",
        (Some(ext), None) => ext,
        (None, _) if is_index => ".html",
        (None, _) => "",
    };
    name.push_str(ext);
    cap(windows_safe(name), ext)
}

/// The lowercased extension of a name, when it has a short alphanumeric one.
fn existing_extension(name: &str) -> Option<String> {
    let dot = name.rfind('.').filter(|&i| i > 0)?;
    let ext = &name[dot + 1..];
    let ok = (1..=8).contains(&ext.len()) && ext.bytes().all(|b| b.is_ascii_alphanumeric());
    ok.then(|| ext.to_ascii_lowercase())
}

/// The relative link from the file `from` to the file `to` (both under one
/// tree), each name percent-encoded with `escape`: the mirror's converted
/// links and the Markdown tree's links, which escape a few more characters.
pub(in crate::output) fn relative_link(
    from: &std::path::Path,
    to: &std::path::Path,
    escape: &'static percent_encoding::AsciiSet,
) -> String {
    use std::path::{Component, Path};
    let names = |p: &Path| -> Vec<String> {
        p.components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect()
    };
    let from_dir = names(from.parent().unwrap_or(Path::new("")));
    let to = names(to);
    let common = from_dir.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".into(); from_dir.len() - common];
    parts.extend(
        to[common..]
            .iter()
            .map(|n| percent_encoding::utf8_percent_encode(n, escape).to_string()),
    );
    parts.join("/")
}
