//! WARC records as bytes: the named fields, the block, the digests, the gzip member.
//!
//! Everything here is pure and in memory, so the writer can build a whole record
//! (or a request/response pair) before touching the file and then write it with one
//! call: a crash leaves whole records or nothing, never half of one.

use std::io::{self, Write};

use chrono::{DateTime, Utc};
use data_encoding::BASE32;
use sha1::{Digest, Sha1};
use url::Url;

use super::gzip::Deflater;
use crate::fetch::RevisitProfile;
use crate::output::Exchange;

/// The version line of every record skitter writes.
const VERSION_LINE: &[u8] = b"WARC/1.1\r\n";

/// The specification the `warcinfo` record says the file conforms to.
pub(crate) const CONFORMS_TO: &str =
    "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/";

/// The header that replaces `Transfer-Encoding` in archived response heads: the
/// recorded body is already de-chunked, so a reader that saw `chunked` would try to
/// de-chunk it again. The original value stays visible under this name.
const RENAMED_TRANSFER_ENCODING: &[u8] = b"X-Skitter-Original-Transfer-Encoding";

/// A fresh `<urn:uuid:…>` record id: a version 4 UUID from the thread's
/// cryptographically seeded generator (`Uuid::new_v4` asks the kernel for every
/// one, two system calls per page).
pub(crate) fn new_record_id() -> String {
    let id = uuid::Builder::from_random_bytes(rand::random()).into_uuid();
    format!("<urn:uuid:{id}>")
}

/// `WARC-Date` form: UTC, microsecond precision (WARC 1.1 allows fractions).
pub(crate) fn warc_date(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// One record: named fields in order, and a block given as parts (so a large body
/// is not copied just to be concatenated with its head).
pub(crate) struct Record<'a> {
    fields: Vec<(&'static str, String)>,
    block: Vec<&'a [u8]>,
}

impl<'a> Record<'a> {
    /// A record of `kind` with the given block; the other fields follow with
    /// [`Record::field`], and [`Record::to_bytes`] adds the digest and length.
    pub(crate) fn new(kind: &str, block: Vec<&'a [u8]>) -> Self {
        Record {
            fields: vec![("WARC-Type", kind.to_string())],
            block,
        }
    }

    /// Appends a named field. Values come from URLs and user options; CR, LF and
    /// other controls are replaced so a value cannot start a new field.
    pub(crate) fn field(mut self, name: &'static str, value: impl Into<String>) -> Self {
        let mut value: String = value.into();
        if value.chars().any(char::is_control) {
            value = value
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
        }
        self.fields.push((name, value));
        self
    }

    /// The record's bytes, one gzip member of its own when `gzip` is set. Adds
    /// `WARC-Block-Digest` and `Content-Length` from the block.
    pub(crate) fn to_bytes(&self, gzip: bool) -> io::Result<Vec<u8>> {
        self.encode(gzip.then(Deflater::new).as_mut())
    }

    /// [`Record::to_bytes`] with a reusable compressor (`None`: uncompressed).
    pub(crate) fn encode(&self, deflater: Option<&mut Deflater>) -> io::Result<Vec<u8>> {
        let mut hasher = Sha1::new();
        let mut length = 0usize;
        for part in &self.block {
            hasher.update(part);
            length += part.len();
        }
        let block_digest = BASE32.encode(&hasher.finalize());
        let mut head = Vec::with_capacity(512);
        head.extend_from_slice(VERSION_LINE);
        for (name, value) in &self.fields {
            write!(head, "{name}: {value}\r\n")?;
        }
        write!(head, "WARC-Block-Digest: sha1:{block_digest}\r\n")?;
        write!(head, "Content-Length: {length}\r\n\r\n")?;
        let mut parts = Vec::with_capacity(self.block.len() + 2);
        parts.push(&head[..]);
        parts.extend_from_slice(&self.block);
        parts.push(b"\r\n\r\n");
        match deflater {
            // Compressed straight from the parts: the record is never copied whole.
            Some(d) => d.member(&parts),
            None => Ok(parts.concat()),
        }
    }
}

/// The `warcinfo` record that starts every file.
pub(crate) fn warcinfo(
    id: &str,
    filename: &str,
    software: &str,
    options: &[(String, String)],
    gzip: bool,
) -> io::Result<Vec<u8>> {
    let mut fields = String::new();
    let mut line = |k: &str, v: &str| {
        let clean = |s: &str| s.replace(|c: char| c.is_control(), " ");
        fields.push_str(&format!("{}: {}\r\n", clean(k).replace(':', "_"), clean(v)));
    };
    line("software", software);
    line("format", "WARC File Format 1.1");
    line("conformsTo", CONFORMS_TO);
    for (k, v) in options {
        line(k, v);
    }
    Record::new("warcinfo", vec![fields.as_bytes()])
        .field("WARC-Record-ID", id)
        .field("WARC-Date", warc_date(Utc::now()))
        .field("WARC-Filename", filename)
        .field("Content-Type", "application/warc-fields")
        .to_bytes(gzip)
}

/// A request and its response, serialised, with what the CDX line needs.
pub(crate) struct Pair {
    /// The request record's bytes.
    pub request: Vec<u8>,
    /// The response record's bytes.
    pub response: Vec<u8>,
    /// Base32 SHA-1 of the response payload (the raw body).
    pub payload_digest: String,
    /// The response head as archived (see [`archived_head`]).
    pub head: Vec<u8>,
}

/// Builds the `request` and `response` records of one exchange, each pointing at the
/// other with `WARC-Concurrent-To`; a `revisit` record instead of the response
/// when the exchange revisits an earlier capture (see [`revisit_record`]).
pub(crate) fn exchange_pair(
    url: &Url,
    ex: &Exchange,
    warcinfo_id: &str,
    mut deflater: Option<&mut Deflater>,
) -> io::Result<Pair> {
    let request_id = new_record_id();
    let response_id = new_record_id();
    let date = warc_date(ex.started);
    let head = archived_head(&ex.response_head);
    let common = |r| with_common_fields(r, url, &date, ex, warcinfo_id);
    let (response, payload_digest) = match &ex.revisit {
        Some(revisit) => {
            let (record, digest) = revisit_record(&head, ex, revisit);
            (common(record.field("WARC-Record-ID", &response_id)), digest)
        }
        None => {
            let payload_digest = BASE32.encode(&ex.body_sha1());
            let response = Record::new("response", vec![&head, &ex.body])
                .field("WARC-Record-ID", &response_id);
            let response = common(response)
                .field("WARC-Payload-Digest", format!("sha1:{payload_digest}"))
                .field("Content-Type", "application/http;msgtype=response");
            // WARC 1.1 section 5.13: the payload stops at the fetch size cap.
            let response = if ex.truncated {
                response.field("WARC-Truncated", "length")
            } else {
                response
            };
            (response, payload_digest)
        }
    };
    let response = response.field("WARC-Concurrent-To", &request_id);
    let request =
        common(Record::new("request", vec![&ex.request_head]).field("WARC-Record-ID", &request_id))
            .field("WARC-Concurrent-To", &response_id)
            .field("Content-Type", "application/http;msgtype=request");
    Ok(Pair {
        request: request.encode(deflater.as_deref_mut())?,
        response: response.encode(deflater)?,
        payload_digest,
        head,
    })
}

/// A `resource` record holding `data` itself as its block (WARC 1.1 section
/// 6.5), of media type `mime`, for `uri`: a picture of a rendered page
/// (`urn:thumbnail:…`). Returns its bytes and the base32 SHA-1 of `data`,
/// which it carries as its payload digest (the payload is the whole block).
pub(crate) fn resource(
    uri: &Url,
    date: DateTime<Utc>,
    mime: &str,
    data: &[u8],
    warcinfo_id: &str,
    deflater: Option<&mut Deflater>,
) -> io::Result<(Vec<u8>, String)> {
    let digest = BASE32.encode(&crate::fetch::exchange::sha1_of(data));
    let bytes = Record::new("resource", vec![data])
        .field("WARC-Record-ID", new_record_id())
        .field("WARC-Target-URI", uri.as_str())
        .field("WARC-Date", warc_date(date))
        .field("WARC-Warcinfo-ID", warcinfo_id)
        .field("WARC-Payload-Digest", format!("sha1:{digest}"))
        .field("Content-Type", mime)
        .encode(deflater)?;
    Ok((bytes, digest))
}

/// A `revisit` record (WARC 1.1 section 6.7) for `ex`, whose payload an earlier
/// capture holds: its block is the response head alone (a `304`'s own head, or
/// the head of a `200` whose body is the original's), and it names the profile,
/// the original's URI and date, and the original's payload digest, which
/// replay tools (pywb) look the original up by. Returns the record without its
/// id and shared fields, and the base32 digest it carries (`-`, and no digest
/// field, for a `304` whose original's digest is not known).
fn revisit_record<'a>(
    head: &'a [u8],
    ex: &Exchange,
    revisit: &crate::fetch::Revisit,
) -> (Record<'a>, String) {
    let sha1 = match (revisit.payload_sha1, revisit.profile) {
        (Some(sha1), _) => Some(sha1),
        // The body came again and is the original's: its digest is theirs.
        (None, RevisitProfile::IdenticalPayloadDigest) => Some(ex.body_sha1()),
        (None, RevisitProfile::ServerNotModified) => None,
    };
    let record = Record::new("revisit", vec![head])
        .field("WARC-Profile", revisit.profile.uri())
        .field("WARC-Refers-To-Target-URI", revisit.refers_to_uri.as_str())
        .field("WARC-Refers-To-Date", warc_date(revisit.refers_to_date));
    match sha1 {
        Some(sha1) => {
            let digest = BASE32.encode(&sha1);
            let record = record
                .field("WARC-Payload-Digest", format!("sha1:{digest}"))
                .field("Content-Type", "application/http;msgtype=response");
            (record, digest)
        }
        None => (
            record.field("Content-Type", "application/http;msgtype=response"),
            "-".to_string(),
        ),
    }
}

/// The fields a request and its response share.
fn with_common_fields<'a>(
    r: Record<'a>,
    url: &Url,
    date: &str,
    ex: &Exchange,
    warcinfo_id: &str,
) -> Record<'a> {
    let r = r
        .field("WARC-Target-URI", url.as_str())
        .field("WARC-Date", date);
    let r = match ex.remote_addr {
        Some(addr) => r.field("WARC-IP-Address", addr.ip().to_string()),
        None => r,
    };
    r.field("WARC-Protocol", protocol_id(ex.http_version))
        .field("WARC-Warcinfo-ID", warcinfo_id)
}

/// The ALPN-style protocol id the `WARC-Protocol` field uses (`h2`, `http/1.1`).
fn protocol_id(http_version: &str) -> &'static str {
    match http_version {
        "HTTP/2" => "h2",
        "HTTP/3" => "h3",
        "HTTP/1.0" => "http/1.0",
        "HTTP/0.9" => "http/0.9",
        _ => "http/1.1",
    }
}

/// The response head as archived: unchanged, except that a `Transfer-Encoding`
/// header is renamed (see [`RENAMED_TRANSFER_ENCODING`]).
fn archived_head(head: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(head.len() + 32);
    for line in head.split_inclusive(|&b| b == b'\n') {
        let name_end = line.iter().position(|&b| b == b':');
        match name_end {
            Some(i) if line[..i].eq_ignore_ascii_case(b"transfer-encoding") => {
                out.extend_from_slice(RENAMED_TRANSFER_ENCODING);
                out.extend_from_slice(&line[i..]);
            }
            _ => out.extend_from_slice(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_match_the_known_base32_form() {
        // SHA-1 of the empty string, as wget and warcio write it.
        let empty = BASE32.encode(&crate::fetch::exchange::sha1_of(b""));
        assert_eq!(empty, "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    }

    #[test]
    fn renames_transfer_encoding_only() {
        let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nx-te: 1\r\n\r\n";
        let got = archived_head(head);
        assert_eq!(
            got,
            b"HTTP/1.1 200 OK\r\nX-Skitter-Original-Transfer-Encoding: chunked\r\nx-te: 1\r\n\r\n"
        );
    }

    #[test]
    fn field_values_cannot_inject_fields() {
        let bytes = Record::new("resource", vec![b"x"])
            .field("WARC-Target-URI", "http://a/\r\nWARC-Type: evil")
            .to_bytes(false)
            .unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let type_lines = text.lines().filter(|l| l.starts_with("WARC-Type")).count();
        assert_eq!(type_lines, 1, "{text}");
        assert!(text.contains("Content-Length: 1\r\n\r\nx\r\n\r\n"));
    }

    #[test]
    fn record_ids_are_distinct_version_4_uuids() {
        let a = new_record_id();
        let b = new_record_id();
        assert_ne!(a, b);
        let id = a
            .strip_prefix("<urn:uuid:")
            .and_then(|s| s.strip_suffix('>'))
            .unwrap();
        let parsed = uuid::Uuid::parse_str(id).unwrap();
        assert_eq!(parsed.get_version_num(), 4, "{a}");
        assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122, "{a}");
    }

    #[test]
    fn dates_have_microseconds_and_z() {
        let t = DateTime::parse_from_rfc3339("2026-11-29T15:10:20.5Z").unwrap();
        assert_eq!(warc_date(t.to_utc()), "2026-11-29T15:10:20.500000Z");
    }

    #[test]
    fn protocol_ids() {
        assert_eq!(protocol_id("HTTP/2"), "h2");
        assert_eq!(protocol_id("HTTP/1.1"), "http/1.1");
    }
}
