//! Safe file and directory names, shared by the mirror and `skitter fetch`: the
//! rules that keep hostile URLs inside the output directory on every OS.
//!
//! A name is percent-decoded once, then every byte unsafe in a file name somewhere
//! is written `%XX` (controls including NUL, `/ \ : * ? " < > |`, `%` itself, and
//! bytes that are not UTF-8), so the encoding is one-to-one and `%2F` can never
//! separate directories; Windows device names and trailing dots and spaces are
//! encoded (so a name is never `.` or `..`); a name is at most [`MAX_COMPONENT`]
//! bytes, cut and suffixed with a hash when longer; and a finished path must be
//! the directory followed only by plain names.

use std::path::{Component, Path};

use sha1::{Digest, Sha1};

/// Longest file or directory name written, in bytes (most file systems allow 255).
pub const MAX_COMPONENT: usize = 200;

/// Percent-decodes `raw` and re-encodes every byte unsafe in a file name.
pub(crate) fn encode_name(raw: &str, escape_underscore: bool) -> String {
    let bytes: Vec<u8> = percent_encoding::percent_decode_str(raw).collect();
    let mut out = String::with_capacity(bytes.len());
    let push_hex = |out: &mut String, b: &[u8]| {
        for byte in b {
            out.push_str(&format!("%{byte:02X}"));
        }
    };
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            let unsafe_char = matches!(
                c,
                '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' | '%'
            ) || c.is_control()
                || (escape_underscore && c == '_');
            if unsafe_char {
                push_hex(&mut out, c.encode_utf8(&mut [0; 4]).as_bytes());
            } else {
                out.push(c);
            }
        }
        push_hex(&mut out, chunk.invalid());
    }
    out
}

/// Encodes what Windows refuses: trailing dots and spaces, reserved device names.
/// A name of only dots (`.`, `..`) is all trailing dots, so it is encoded too.
pub(crate) fn windows_safe(mut name: String) -> String {
    let kept = name.trim_end_matches(['.', ' ']).len();
    if kept < name.len() {
        let tail: String = name[kept..]
            .chars()
            .map(|c| if c == '.' { "%2E" } else { "%20" })
            .collect();
        name.truncate(kept);
        name.push_str(&tail);
    }
    // Windows ignores spaces at the end of the stem when it looks for device
    // names (`NUL .txt` is NUL), and reserves COM0 and LPT0, the superscript
    // digits (`COM¹`) and the console's CONIN$ and CONOUT$ too.
    let stem = name.split('.').next().unwrap_or("");
    let stem = stem.trim_end_matches(' ').to_ascii_uppercase();
    let numbered = |prefix: &str| {
        stem.strip_prefix(prefix).is_some_and(|n| {
            let mut digits = n.chars();
            matches!(
                (digits.next(), digits.next()),
                (Some('0'..='9' | '¹' | '²' | '³'), None)
            )
        })
    };
    let reserved = matches!(
        stem.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
    ) || numbered("COM")
        || numbered("LPT");
    if reserved {
        let first = name.as_bytes()[0];
        name.replace_range(..1, &format!("%{first:02X}"));
    }
    name
}

/// Cuts a name longer than [`MAX_COMPONENT`] and appends `~` + hash + `keep_suffix`
/// (the suffix is already at the end of `name`).
pub(crate) fn cap(name: String, keep_suffix: &str) -> String {
    if name.len() <= MAX_COMPONENT {
        return name;
    }
    let hash = &hex_sha1(&name)[..16];
    let mut cut = MAX_COMPONENT - 1 - hash.len() - keep_suffix.len();
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}~{hash}{keep_suffix}", &name[..cut])
}

/// Lowercase hex SHA-1 of `s`: the hash in capped names and fallback paths.
pub(crate) fn hex_sha1(s: &str) -> String {
    Sha1::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// True when `path` is `dir` followed only by plain names.
pub(crate) fn is_plainly_under(dir: &Path, path: &Path) -> bool {
    path.strip_prefix(dir).is_ok_and(|rel| {
        rel.components().count() > 0 && rel.components().all(|c| matches!(c, Component::Normal(_)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_names() {
        let cases = [
            ("con", "%63on"),
            ("LPT1.txt", "%4CPT1.txt"),
            ("com10", "com10"),
            ("COM0", "%43OM0"),
            ("lpt0.log", "%6Cpt0.log"),
            ("COM¹", "%43OM¹"),
            ("lpt³.txt", "%6Cpt³.txt"),
            ("conin$", "%63onin$"),
            ("CONOUT$.x", "%43ONOUT$.x"),
            ("NUL .txt", "%4EUL .txt"),
            ("com¹0", "com¹0"),
            ("conin", "conin"),
            ("console", "console"),
            ("a. .", "a%2E%20%2E"),
            ("..", "%2E%2E"),
            ("", ""),
        ];
        for (name, want) in cases {
            assert_eq!(windows_safe(name.to_string()), want, "{name}");
        }
    }

    #[test]
    fn caps_keep_the_suffix_and_char_boundaries() {
        let long = format!("{}.html", "é".repeat(150));
        let got = cap(long.clone(), ".html");
        assert!(got.len() <= MAX_COMPONENT, "{}", got.len());
        assert!(got.ends_with(".html") && got.contains('~'));
        assert_ne!(got, cap(format!("x{long}"), ".html"));
    }
}
