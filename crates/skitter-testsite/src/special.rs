//! The special cases under `/specials`: redirects, error statuses, assets,
//! broken encodings, bodies that hang, stall or get cut, malformed links.
//!
//! Each exists so a crawler test can point at one misbehaviour and assert
//! the crawler's outcome for it; [`SPECIALS`] is the list `/specials` links.

use bytes::Bytes;
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, LOCATION, RETRY_AFTER};
use hyper::{Response, StatusCode};
use tokio_util::sync::CancellationToken;

use crate::body::SiteBody;
use crate::number::canonical_u32;
use crate::reply::{HTML, reply, with_header};

/// The paths `/specials` links to (the logo as an image, the style sheet as
/// a `<link>`, the rest as anchors).
pub const SPECIALS: &[&str] = &[
    "/r/301",
    "/r/302",
    "/r/303",
    "/r/307",
    "/r/308",
    "/r/chain/3",
    "/r/chain/30",
    "/r/loop/a",
    "/r/nolocation",
    "/r/badlocation",
    "/r/offsite",
    "/missing",
    "/gone",
    "/error",
    "/flaky",
    "/ratelimited",
    "/asset/logo.png",
    "/asset/big.bin",
    "/asset/style.css",
    "/badutf8",
    "/latin1",
    "/nocontenttype",
    "/hang",
    "/slowbody",
    "/truncated",
    "/links/malformed",
    "/offsite",
];

/// Size of `/asset/big.bin`.
pub const BIG_BIN_LEN: u64 = 5 * 1024 * 1024;

/// The repeated chunk of `/asset/big.bin`: static, so the download allocates nothing.
static BIG_CHUNK: [u8; 64 * 1024] = [b'z'; 64 * 1024];

/// A 1x1 transparent PNG.
const LOGO_PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

const STYLE_CSS: &str =
    "@import \"/asset/extra.css\";\nbody { background: url(/asset/logo.png); }\n";
const EXTRA_CSS: &str = "h1 { color: #333; }\n";

const BAD_UTF8: &[u8] = b"<!DOCTYPE html>\n<html><head><title>Bad UTF-8</title></head><body>\n\
    <p>Broken \xff\xfe bytes \xc3\x28 and \xed\xa0\x80 here</p>\n\
    <a href=\"/p/3\">Page 3</a>\n</body></html>\n";

const LATIN1: &[u8] = b"<!DOCTYPE html>\n<html><head><title>Latin-1</title></head><body>\n\
    <a href=\"/p/5\">Caf\xe9</a>\n</body></html>\n";

const NO_CONTENT_TYPE: &str = "<!DOCTYPE html>\n<html><head><title>No type</title></head><body>\n\
    <a href=\"/p/6\">Page 6</a>\n</body></html>\n";

const MALFORMED_LINKS: &str = "<!DOCTYPE html>\n<html><head><title>Malformed links</title></head><body>\n\
    <a href=\"http://[bad/\">bad host</a>\n<a href=\"mailto:x@y\">mail</a>\n\
    <a href=\"javascript:void(0)\">script</a>\n<a href=\"tel:+15555550100\">phone</a>\n\
    <a href=\"data:text/html,hello\">data</a>\n<a href=\"/p/4\">Page 4</a>\n</body></html>\n";

const OFFSITE: &str = "<!DOCTYPE html>\n<html><head><title>Offsite links</title></head><body>\n\
    <a href=\"http://offsite.invalid/x\">offsite</a>\n<a href=\"https://other.invalid/\">other</a>\n\
    </body></html>\n";

/// Answers a special path, or `None` if `path` is not one. `count` is how
/// many requests `path` has had, this one included.
pub(crate) fn route(
    path: &str,
    count: u64,
    shutdown: &CancellationToken,
) -> Option<Response<SiteBody>> {
    if let Some(rest) = path.strip_prefix("/r/") {
        return redirect(rest);
    }
    let ok_html = |body: &'static [u8]| reply(StatusCode::OK, Some(HTML), body);
    let resp = match path {
        "/specials" => reply(StatusCode::OK, Some(HTML), index()),
        "/missing" => reply(StatusCode::NOT_FOUND, Some(HTML), "<h1>Missing</h1>"),
        "/gone" => reply(StatusCode::GONE, Some(HTML), "<h1>Gone</h1>"),
        "/error" => reply(
            StatusCode::INTERNAL_SERVER_ERROR,
            Some(HTML),
            "<h1>Error</h1>",
        ),
        "/flaky" if count == 1 => reply(
            StatusCode::SERVICE_UNAVAILABLE,
            Some(HTML),
            "<h1>Try again</h1>",
        ),
        "/flaky" => {
            ok_html(b"<!DOCTYPE html>\n<html><body><h1>Flaky, now fine</h1></body></html>\n")
        }
        "/ratelimited" if count == 1 => with_header(
            reply(
                StatusCode::TOO_MANY_REQUESTS,
                Some(HTML),
                "<h1>Slow down</h1>",
            ),
            RETRY_AFTER,
            "1",
        ),
        "/ratelimited" => {
            ok_html(b"<!DOCTYPE html>\n<html><body><h1>Rate limit over</h1></body></html>\n")
        }
        "/asset/logo.png" => reply(
            StatusCode::OK,
            Some("image/png"),
            Bytes::from_static(LOGO_PNG),
        ),
        "/asset/big.bin" => {
            let mut resp = Response::new(SiteBody::repeat(
                Bytes::from_static(&BIG_CHUNK),
                BIG_BIN_LEN,
            ));
            let octets = HeaderValue::from_static("application/octet-stream");
            resp.headers_mut().insert(CONTENT_TYPE, octets);
            resp
        }
        "/asset/style.css" => reply(StatusCode::OK, Some("text/css"), STYLE_CSS),
        "/asset/extra.css" => reply(StatusCode::OK, Some("text/css"), EXTRA_CSS),
        "/badutf8" => ok_html(BAD_UTF8),
        "/latin1" => reply(
            StatusCode::OK,
            Some("text/html; charset=iso-8859-1"),
            LATIN1,
        ),
        "/nocontenttype" => reply(StatusCode::OK, None, NO_CONTENT_TYPE),
        "/slowbody" => {
            let head = Bytes::from_static(b"<!DOCTYPE html>\n<html><body><p>Slow");
            let mut resp = Response::new(SiteBody::stall(head, shutdown.clone().cancelled_owned()));
            resp.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static(HTML));
            resp
        }
        "/truncated" => {
            let mut resp = Response::new(SiteBody::truncate(Bytes::from_static(b"<!DOCTYPE ")));
            resp.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static(HTML));
            resp.headers_mut()
                .insert(CONTENT_LENGTH, HeaderValue::from_static("1000"));
            resp
        }
        "/links/malformed" => reply(StatusCode::OK, Some(HTML), MALFORMED_LINKS),
        "/offsite" => reply(StatusCode::OK, Some(HTML), OFFSITE),
        _ => return crate::hostile::route(path, shutdown),
    };
    Some(resp)
}

/// The redirects under `/r/`.
fn redirect(rest: &str) -> Option<Response<SiteBody>> {
    let to = |code: u16, location: &str| {
        let status = StatusCode::from_u16(code).unwrap_or(StatusCode::FOUND);
        with_header(
            reply(status, Some(HTML), "<h1>Moved</h1>"),
            LOCATION,
            location,
        )
    };
    Some(match rest {
        "301" | "302" | "303" | "307" | "308" => to(rest.parse().unwrap_or(302), "/p/1"),
        "loop/a" => to(302, "/r/loop/b"),
        "loop/b" => to(302, "/r/loop/a"),
        "nolocation" => reply(StatusCode::FOUND, Some(HTML), "<h1>Moved, but where?</h1>"),
        "badlocation" => to(302, "http://[bad/"),
        "offsite" => to(302, "http://offsite.invalid/"),
        _ => {
            let n = rest.strip_prefix("chain/").and_then(canonical_u32)?;
            match n.checked_sub(1) {
                Some(next) => to(302, &format!("/r/chain/{next}")),
                None => to(302, "/p/2"),
            }
        }
    })
}

fn index() -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>Special cases</title>\n",
    );
    out.push_str("<link rel=\"stylesheet\" href=\"/asset/style.css\">\n</head>\n<body>\n");
    for path in SPECIALS {
        match *path {
            "/asset/logo.png" => out.push_str("<img src=\"/asset/logo.png\" alt=\"logo\">\n"),
            "/asset/style.css" => {}
            _ => out.push_str(&format!("<a href=\"{path}\">{path}</a>\n")),
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}
