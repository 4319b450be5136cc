//! `/flags/`: the flags API of the downloader that makes two requests per
//! item — a country's `metadata.json` first, then its image, saved under the
//! name the metadata gives.
//!
//! - `/flags/{cc}/metadata.json`: `{"country": NAME, "code": cc}` for the
//!   countries of [`FLAGS`], and for `n1`, `n2`, … (any canonical number:
//!   `Country N`), so a benchmark can ask for as many items as it likes;
//! - `/flags/{cc}/{cc}.gif`: a small GIF whose bytes name the code.
//!
//! The failure cases, one each: [`NO_METADATA`] has no metadata (404),
//! [`NO_IMAGE`] has metadata but no image (404), [`BROKEN_JSON`] answers
//! its metadata with broken JSON, [`NO_COUNTRY`] with JSON lacking
//! `country`. None is linked from the generated site.

use hyper::{Response, StatusCode};

use crate::body::SiteBody;
use crate::number::canonical_u32;
use crate::reply::reply;

/// The named countries: code and name.
pub const FLAGS: [(&str, &str); 6] = [
    ("br", "Brazil"),
    ("cn", "China"),
    ("de", "Germany"),
    ("fr", "France"),
    ("in", "India"),
    ("jp", "Japan"),
];

/// A code whose metadata is missing (404); its image is there.
pub const NO_METADATA: &str = "xa";
/// A code whose metadata is there but whose image is missing (404).
pub const NO_IMAGE: &str = "xb";
/// A code whose metadata is not valid JSON.
pub const BROKEN_JSON: &str = "xc";
/// A code whose metadata lacks the `country` field.
pub const NO_COUNTRY: &str = "xd";

const JSON: &str = "application/json";

/// The country named by `code`, if the API knows it (numbered codes `nN`
/// included); the failure codes have none.
pub fn country(code: &str) -> Option<String> {
    if let Some((_, name)) = FLAGS.iter().find(|(c, _)| *c == code) {
        return Some((*name).to_string());
    }
    let n = canonical_u32(code.strip_prefix('n')?)?;
    Some(format!("Country {n}"))
}

/// The image served for `code`: a GIF header, then the code.
pub fn image(code: &str) -> Vec<u8> {
    let mut gif = b"GIF89a".to_vec();
    gif.extend_from_slice(code.as_bytes());
    gif
}

/// Answers a `/flags/` path, or `None` if `path` is not one.
pub(crate) fn route(path: &str) -> Option<Response<SiteBody>> {
    let (code, file) = path.strip_prefix("/flags/")?.split_once('/')?;
    let known = country(code).is_some() || [NO_IMAGE, NO_METADATA].contains(&code);
    if file == "metadata.json" {
        let body = match code {
            BROKEN_JSON => r#"{"country": "Atlantis", "code": "#.to_string(),
            NO_COUNTRY => format!(r#"{{"code": "{code}", "capital": "Nowhere"}}"#),
            NO_IMAGE => format!(r#"{{"country": "Lost Flag", "code": "{code}"}}"#),
            NO_METADATA => return None,
            _ => {
                let name = country(code)?;
                format!(r#"{{"country": "{name}", "code": "{code}"}}"#)
            }
        };
        return Some(reply(StatusCode::OK, Some(JSON), body));
    }
    let gif = file.strip_suffix(".gif")? == code && known && code != NO_IMAGE;
    gif.then(|| reply(StatusCode::OK, Some("image/gif"), image(code)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(path: &str) -> Option<u16> {
        route(path).map(|r| r.status().as_u16())
    }

    #[test]
    fn each_code_answers_as_documented() {
        assert_eq!(status("/flags/br/metadata.json"), Some(200));
        assert_eq!(status("/flags/br/br.gif"), Some(200));
        assert_eq!(status("/flags/n17/n17.gif"), Some(200));
        assert_eq!(country("n17").as_deref(), Some("Country 17"));
        assert_eq!(status("/flags/n07/metadata.json"), None);
        assert_eq!(status("/flags/br/cn.gif"), None);
        assert_eq!(status("/flags/xa/metadata.json"), None);
        assert_eq!(status("/flags/xa/xa.gif"), Some(200));
        assert_eq!(status("/flags/xb/metadata.json"), Some(200));
        assert_eq!(status("/flags/xb/xb.gif"), None);
        assert_eq!(status("/flags/xc/metadata.json"), Some(200));
        assert_eq!(status("/flags/xd/metadata.json"), Some(200));
        assert_eq!(status("/flags/zz/metadata.json"), None);
    }
}
