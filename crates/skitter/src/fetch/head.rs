//! The request and response heads written to archives, rebuilt from what was
//! sent and received (the client does not expose the bytes on the wire), with
//! the user's header values redacted unless the user keeps them: any `-H`
//! header may carry a secret (`X-Api-Key`, `PRIVATE-TOKEN`), and only the
//! user knows which do not.

use std::io::Write as _;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use url::Url;

use super::{FetchConfig, decode};

/// What a redacted header value is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Headers whose values are credentials: kept in archives by
/// [`FetchConfig::keep_credentials`].
pub const CREDENTIAL_HEADERS: [&str; 3] = ["authorization", "proxy-authorization", "cookie"];

/// Whether `name` is one of [`CREDENTIAL_HEADERS`].
pub fn is_credential(name: &str) -> bool {
    CREDENTIAL_HEADERS
        .iter()
        .any(|c| c.eq_ignore_ascii_case(name.trim()))
}

/// The request head as an HTTP/1.1 message, in the order skitter sends its
/// headers; the user's extra headers only if they were sent with this request,
/// then the `conditional` headers (`If-None-Match`, `If-Modified-Since`) it
/// carried.
pub(super) fn request_head(
    url: &Url,
    config: &FetchConfig,
    with_user_headers: bool,
    conditional: &[(HeaderName, HeaderValue)],
) -> Bytes {
    let mut path = url.path().to_string();
    if let Some(q) = url.query() {
        path.push('?');
        path.push_str(q);
    }
    let host = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or("")),
        None => url.host_str().unwrap_or("").to_string(),
    };
    let mut head = format!(
        "GET {path} HTTP/1.1\r\nhost: {host}\r\nuser-agent: {}\r\naccept-encoding: {}\r\naccept: text/html,application/xhtml+xml,*/*;q=0.8\r\n",
        config.user_agent,
        decode::ACCEPT_ENCODING
    );
    if with_user_headers {
        for (name, value) in &config.headers {
            let value = if archived_in_clear(config, name) {
                value.trim()
            } else {
                REDACTED
            };
            head.push_str(&format!("{}: {value}\r\n", name.trim()));
        }
    }
    for (name, value) in conditional {
        head.push_str(&format!(
            "{name}: {}\r\n",
            String::from_utf8_lossy(value.as_bytes())
        ));
    }
    head.push_str("\r\n");
    Bytes::from(head)
}

/// Whether the archived request head shows the value of the user's header
/// `name`: one named by [`FetchConfig::archive_headers`], or a credential
/// header under [`FetchConfig::keep_credentials`].
fn archived_in_clear(config: &FetchConfig, name: &str) -> bool {
    let name = name.trim();
    config
        .archive_headers
        .iter()
        .any(|kept| kept.trim().eq_ignore_ascii_case(name))
        || (config.keep_credentials && is_credential(name))
}

/// The response head as an HTTP/1.x message.
pub(super) fn response_head(status: u16, version: &str, headers: &HeaderMap) -> Bytes {
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    // WARC readers parse the head as HTTP/1.x, so HTTP/2 responses are written with
    // an HTTP/1.1 status line (WARC-Protocol records the real version).
    let line_version = if version == "HTTP/1.0" {
        "HTTP/1.0"
    } else {
        "HTTP/1.1"
    };
    let mut head = Vec::with_capacity(256);
    // Writing to a Vec cannot fail.
    let _ = write!(head, "{line_version} {status} {reason}\r\n");
    for (name, value) in headers {
        head.extend_from_slice(name.as_str().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    Bytes::from(head)
}

/// A URL (a proxy's, a root's) without its user name and password, for
/// printing; one whose only `@` is in its path or query is unchanged.
pub fn redact_proxy(proxy: &str) -> String {
    if !proxy.contains('@') {
        return proxy.to_string();
    }
    match Url::parse(proxy) {
        // An '@' in the path or query is not a credential.
        Ok(url) if url.has_host() && url.username().is_empty() && url.password().is_none() => {
            proxy.to_string()
        }
        Ok(mut url) if url.has_host() => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.to_string()
                .replacen("://", &format!("://{REDACTED}@"), 1)
        }
        // Not a URL with a host: whatever precedes the last '@' may be credentials.
        _ => match proxy.rsplit_once('@') {
            Some((_, rest)) => format!("{REDACTED}@{rest}"),
            None => proxy.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{self, HeaderValue};

    #[test]
    fn heads_are_crlf_terminated() {
        let url = Url::parse("http://h:8080/a?b=1").unwrap();
        let req = request_head(&url, &FetchConfig::default(), true, &[]);
        assert!(req.starts_with(b"GET /a?b=1 HTTP/1.1\r\nhost: h:8080\r\n"));
        assert!(req.ends_with(b"\r\n\r\n"));
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_LENGTH, HeaderValue::from_static("3"));
        let resp = response_head(404, "HTTP/2", &h);
        assert_eq!(
            &resp[..],
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 3\r\n\r\n"
        );
    }

    #[test]
    fn conditional_headers_are_archived_as_sent() {
        let url = Url::parse("http://h/").unwrap();
        let sent = [
            (header::IF_NONE_MATCH, HeaderValue::from_static("\"v1\"")),
            (
                header::IF_MODIFIED_SINCE,
                HeaderValue::from_static("Tue, 01 Dec 2026 10:00:00 GMT"),
            ),
        ];
        let head = request_head(&url, &FetchConfig::default(), true, &sent);
        let text = String::from_utf8(head.to_vec()).unwrap();
        assert!(
            text.ends_with(
                "if-none-match: \"v1\"\r\nif-modified-since: Tue, 01 Dec 2026 10:00:00 GMT\r\n\r\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn user_header_values_are_redacted_unless_kept() {
        let url = Url::parse("http://h/").unwrap();
        let headers = vec![
            ("Authorization".into(), "Bearer S".into()),
            ("cookie".into(), "sid=S".into()),
            ("X-Api-Key".into(), "K".into()),
            ("PRIVATE-TOKEN".into(), "T".into()),
            ("X-Trace".into(), "42".into()),
        ];
        // (keep_credentials, archive_headers) → the lines the head must hold.
        let cases: &[(bool, &[&str], &[&str])] = &[
            (
                false,
                &[],
                &[
                    "Authorization: [redacted]",
                    "cookie: [redacted]",
                    "X-Api-Key: [redacted]",
                    "PRIVATE-TOKEN: [redacted]",
                    "X-Trace: [redacted]",
                ],
            ),
            (
                true,
                &[],
                &[
                    "Authorization: Bearer S",
                    "cookie: sid=S",
                    "X-Api-Key: [redacted]",
                    "PRIVATE-TOKEN: [redacted]",
                    "X-Trace: [redacted]",
                ],
            ),
            (
                false,
                &["x-trace", " Authorization "],
                &[
                    "Authorization: Bearer S",
                    "cookie: [redacted]",
                    "X-Api-Key: [redacted]",
                    "X-Trace: 42",
                ],
            ),
        ];
        for (keep, archived, lines) in cases {
            let config = FetchConfig {
                headers: headers.clone(),
                keep_credentials: *keep,
                archive_headers: archived.iter().map(|s| s.to_string()).collect(),
                ..FetchConfig::default()
            };
            let head = String::from_utf8(request_head(&url, &config, true, &[]).to_vec()).unwrap();
            for line in *lines {
                assert!(head.contains(&format!("{line}\r\n")), "{line}: {head}");
            }
            // Headers skitter sends itself are never redacted.
            assert!(head.contains("user-agent: skitter/"), "{head}");
        }
        let config = FetchConfig {
            headers,
            ..FetchConfig::default()
        };
        let bare = String::from_utf8(request_head(&url, &config, false, &[]).to_vec()).unwrap();
        assert!(
            !bare.contains("X-Trace") && !bare.contains("Authorization"),
            "{bare}"
        );
    }

    #[test]
    fn proxy_credentials_are_redacted() {
        let cases = [
            (
                "http://user:pass@proxy:3128",
                "http://[redacted]@proxy:3128/",
            ),
            ("socks5://u@p:1080", "socks5://[redacted]@p:1080"),
            ("http://proxy:3128", "http://proxy:3128"),
            ("user:pass@proxy:3128", "[redacted]@proxy:3128"),
        ];
        for (given, printed) in cases {
            assert_eq!(redact_proxy(given), printed, "{given}");
        }
    }
}
