//! A response whose head has arrived, from either client path (reqwest's or
//! the direct one, see `direct`), read one way by the fetcher: the head's
//! parts, then the body chunk by chunk, each failure classified as the path's.
//!
//! The direct path's response is not turned into reqwest's type: that
//! conversion parses a placeholder URL and boxes the body twice per response.

use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper_util::client::legacy::connect::HttpInfo;
use reqwest::header::HeaderMap;

use super::direct::DirectBody;
use super::{classify, classify_direct};
use crate::base::outcome::FetchFailure;

/// A response head and its body still to read.
pub(super) enum Answer {
    Reqwest(reqwest::Response),
    Direct(hyper::Response<DirectBody>),
}

impl Answer {
    pub(super) fn status(&self) -> u16 {
        match self {
            Answer::Reqwest(r) => r.status().as_u16(),
            Answer::Direct(r) => r.status().as_u16(),
        }
    }

    pub(super) fn headers(&self) -> &HeaderMap {
        match self {
            Answer::Reqwest(r) => r.headers(),
            Answer::Direct(r) => r.headers(),
        }
    }

    pub(super) fn version(&self) -> reqwest::Version {
        match self {
            Answer::Reqwest(r) => r.version(),
            Answer::Direct(r) => r.version(),
        }
    }

    /// The peer's address, which the connector recorded.
    pub(super) fn remote_addr(&self) -> Option<SocketAddr> {
        match self {
            Answer::Reqwest(r) => r.remote_addr(),
            Answer::Direct(r) => r.extensions().get::<HttpInfo>().map(HttpInfo::remote_addr),
        }
    }

    /// The body's length, when the head declared it.
    pub(super) fn content_length(&self) -> Option<u64> {
        match self {
            Answer::Reqwest(r) => r.content_length(),
            Answer::Direct(r) => hyper::body::Body::size_hint(r.body()).exact(),
        }
    }

    /// The next piece of the body; `None` at its end. Trailers are skipped.
    pub(super) async fn chunk(&mut self) -> Result<Option<Bytes>, FetchFailure> {
        match self {
            Answer::Reqwest(r) => r.chunk().await.map_err(|e| classify(&e)),
            Answer::Direct(r) => loop {
                match r.body_mut().frame().await {
                    None => return Ok(None),
                    Some(Err(e)) => return Err(classify_direct(&*e, true)),
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data() {
                            return Ok(Some(data));
                        }
                    }
                }
            },
        }
    }
}
