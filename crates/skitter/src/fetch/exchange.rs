//! The bytes of one HTTP exchange as the fetcher saw them: what the archiving
//! and saving outputs (WARC, mirror) are made of.

use std::net::SocketAddr;

use bytes::Bytes;

/// The bytes of one HTTP exchange, for sinks that archive (WARC) or save (mirror).
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The request head as sent: request line and headers, CRLF-terminated.
    pub request_head: Bytes,
    /// The response head: status line and headers, CRLF-terminated. Rebuilt from
    /// the parsed response, since the HTTP client does not expose the raw bytes.
    pub response_head: Bytes,
    /// The body as received on the wire: after transfer decoding (chunking), before
    /// content decoding (gzip, br…). Empty when nothing needed it.
    pub body: Bytes,
    /// The body after content decoding, for HTML pages that had a content coding,
    /// when a sink asked for it ([`Sink::wants_decoded_bodies`](crate::output::Sink::wants_decoded_bodies)). `None` when the
    /// body had no coding: then [`Exchange::body`] is the decoded body too.
    pub decoded_body: Option<Bytes>,
    /// The body was cut at the fetch size cap: [`Exchange::body`] is its first
    /// part (WARC records say `WARC-Truncated: length`).
    pub truncated: bool,
    /// SHA-1 of [`Exchange::body`], when the fetcher already computed it: the WARC
    /// payload digest and the JSONL `digest` are the same hash, so the page's bytes
    /// are hashed once for both. [`Exchange::body_sha1`] computes it when `None`.
    pub body_sha1: Option<[u8; 20]>,
    /// The peer's address, when known.
    pub remote_addr: Option<SocketAddr>,
    /// `HTTP/1.1` or `HTTP/2`.
    pub http_version: &'static str,
    /// When the request was sent (UTC).
    pub started: chrono::DateTime<chrono::Utc>,
    /// Set when this exchange revisits an earlier capture of the same payload
    /// (a recrawl's `304`, or an unchanged body fetched again): archiving
    /// sinks write a revisit record pointing at the original instead of the
    /// payload again. The fetcher leaves it `None`; the pipeline that knows
    /// the earlier capture sets it.
    pub revisit: Option<Revisit>,
}

/// An earlier capture an [`Exchange`] revisits (WARC 1.1 §6.7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revisit {
    /// Why the payload is not stored again.
    pub profile: RevisitProfile,
    /// The original capture's target URI (`WARC-Refers-To-Target-URI`).
    pub refers_to_uri: url::Url,
    /// When the original was captured (`WARC-Refers-To-Date`).
    pub refers_to_date: chrono::DateTime<chrono::Utc>,
    /// SHA-1 of the original payload (the `WARC-Payload-Digest` of the
    /// revisit record), when known.
    pub payload_sha1: Option<[u8; 20]>,
}

/// The WARC revisit profiles skitter writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RevisitProfile {
    /// `http://netpreserve.org/warc/1.1/revisits/server-not-modified`: the
    /// server answered a conditional request with `304`.
    ServerNotModified,
    /// `http://netpreserve.org/warc/1.1/revisits/identical-payload-digest`:
    /// the body came again, the same as the original's.
    IdenticalPayloadDigest,
}

impl RevisitProfile {
    /// The profile's URI, as `WARC-Profile` takes it.
    pub fn uri(self) -> &'static str {
        match self {
            RevisitProfile::ServerNotModified => {
                "http://netpreserve.org/warc/1.1/revisits/server-not-modified"
            }
            RevisitProfile::IdenticalPayloadDigest => {
                "http://netpreserve.org/warc/1.1/revisits/identical-payload-digest"
            }
        }
    }
}

impl Exchange {
    /// SHA-1 of the body as received (the WARC payload digest).
    pub fn body_sha1(&self) -> [u8; 20] {
        self.body_sha1.unwrap_or_else(|| sha1_of(&self.body))
    }
}

/// SHA-1 of `data`.
pub(crate) fn sha1_of(data: &[u8]) -> [u8; 20] {
    use sha1::Digest;
    sha1::Sha1::digest(data).into()
}
