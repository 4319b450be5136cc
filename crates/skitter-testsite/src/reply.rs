//! Responses with a whole body, as every generated page and special case is
//! served: [`reply`] with a status and content type, [`with_header`] for one
//! more header, and the [`HTML`] type the pages share.

use bytes::Bytes;
use hyper::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use hyper::{Response, StatusCode};

use crate::body::SiteBody;

/// `text/html; charset=utf-8`, the type of every generated page.
pub(crate) const HTML: &str = "text/html; charset=utf-8";

/// A response with the given status, optional content type and whole body.
pub(crate) fn reply(
    status: StatusCode,
    content_type: Option<&'static str>,
    body: impl Into<Bytes>,
) -> Response<SiteBody> {
    let mut resp = Response::new(SiteBody::full(body));
    *resp.status_mut() = status;
    if let Some(ct) = content_type {
        resp.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static(ct));
    }
    resp
}

/// Adds a header; values that are not valid header bytes are left out.
pub(crate) fn with_header(
    mut resp: Response<SiteBody>,
    name: HeaderName,
    value: &str,
) -> Response<SiteBody> {
    if let Ok(value) = HeaderValue::from_str(value) {
        resp.headers_mut().insert(name, value);
    }
    resp
}
