//! `GET /`: the live dashboard, the HTML report's look (its stylesheet, cards
//! and tables) filled once a second from `/api/status` by one same-origin
//! script, and replaced by the end report when the crawl is over.
//!
//! The page loads nothing from elsewhere: its Content-Security-Policy allows
//! only its own origin's script and status requests, as the report allows
//! only its own inline script.

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};

use crate::output::report_html;

/// Where the dashboard's script is served.
pub const SCRIPT_PATH: &str = "/dashboard.js";

const BODY: &str = include_str!("dashboard.html");
const SCRIPT: &str = include_str!("dashboard.js");

/// The live page's HTML.
pub fn live_page() -> String {
    let mut out = String::with_capacity(8 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    out.push_str(r#"<meta name="viewport" content="width=device-width, initial-scale=1">"#);
    out.push_str("<title>skitter crawl, live</title><style>");
    out.push_str(report_html::STYLE);
    out.push_str("</style></head>");
    out.push_str(BODY);
    out.push_str(r#"<script src=""#);
    out.push_str(SCRIPT_PATH);
    out.push_str("\"></script></body></html>\n");
    out
}

/// The live page with the dashboard's policy: its own origin's script and
/// requests only.
pub(super) fn live() -> Response<Full<Bytes>> {
    html(
        live_page(),
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'self'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'".to_string(),
    )
}

/// The end report with the report's own policy: its one inline script, by
/// hash, as its meta tag says (a header policy of `'self'` would block that
/// script: both policies apply).
pub(super) fn report(report: String) -> Response<Full<Bytes>> {
    let hash = report_html::script_hash();
    html(
        report,
        format!(
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{hash}'; form-action 'none'; frame-ancestors 'none'"
        ),
    )
}

fn html(html: String, csp: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(html)));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Base64 and ASCII only: always a valid header value.
    if let Ok(v) = HeaderValue::from_str(&csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// The dashboard's script.
pub(super) fn script() -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(SCRIPT.as_bytes())));
    *r.status_mut() = StatusCode::OK;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/javascript; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    r
}
