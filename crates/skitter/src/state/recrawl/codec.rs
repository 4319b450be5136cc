//! The compact encoding of a [`Visit`], as the state directory and Redis
//! store it: a version byte, a flags byte, the kind, varints for the numbers,
//! the raw digest and the validators. An HTTP-date `Last-Modified` that
//! formats back to the same text is kept as a varint of seconds (4–5 bytes
//! instead of 29). Decoding never panics on damaged bytes.

use chrono::{DateTime, Utc};

use super::Visit;
use crate::base::outcome::OutcomeKind;
use crate::base::request::Validators;
use crate::base::varint::{get_bytes, get_varint, put_str, put_varint};

const VERSION: u8 = 1;
const HAS_SHA1: u8 = 1;
const HAS_ETAG: u8 = 2;
const LM_SECS: u8 = 4;
const LM_TEXT: u8 = 8;

const KINDS: [OutcomeKind; 6] = [
    OutcomeKind::Html,
    OutcomeKind::Other,
    OutcomeKind::Redirect,
    OutcomeKind::HttpError,
    OutcomeKind::Failed,
    OutcomeKind::Skipped,
];

/// `Last-Modified` as seconds, when the text is exactly the IMF-fixdate form.
fn date_secs(text: &str) -> Option<u64> {
    let t = DateTime::parse_from_rfc2822(text).ok()?.with_timezone(&Utc);
    let secs = u64::try_from(t.timestamp()).ok()?;
    (imf_fixdate(secs)? == text).then_some(secs)
}

fn imf_fixdate(secs: u64) -> Option<String> {
    let t = DateTime::<Utc>::from_timestamp(i64::try_from(secs).ok()?, 0)?;
    Some(t.format("%a, %d %b %Y %H:%M:%S GMT").to_string())
}

/// Encodes a visit.
pub(crate) fn encode(v: &Visit) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    let lm = v.validators.last_modified.as_deref();
    let lm_secs = lm.and_then(date_secs);
    let mut flags = 0;
    if v.sha1.is_some() {
        flags |= HAS_SHA1;
    }
    if v.validators.etag.is_some() {
        flags |= HAS_ETAG;
    }
    match (lm, lm_secs) {
        (_, Some(_)) => flags |= LM_SECS,
        (Some(_), None) => flags |= LM_TEXT,
        _ => {}
    }
    out.push(VERSION);
    out.push(flags);
    out.push(KINDS.iter().position(|k| *k == v.kind).unwrap_or(0) as u8);
    put_varint(&mut out, u64::from(v.status));
    put_varint(&mut out, v.fetched_s);
    put_varint(&mut out, u64::try_from(v.captured_us).unwrap_or(0));
    put_varint(&mut out, u64::from(v.interval_s));
    if let Some(sha1) = &v.sha1 {
        out.extend_from_slice(sha1);
    }
    if let Some(etag) = &v.validators.etag {
        put_str(&mut out, etag);
    }
    match (lm, lm_secs) {
        (_, Some(secs)) => put_varint(&mut out, secs),
        (Some(text), None) => put_str(&mut out, text),
        _ => {}
    }
    out
}

/// Decodes a visit; `None` when the bytes are damaged or of another version.
pub(crate) fn decode(mut bytes: &[u8]) -> Option<Visit> {
    let b = &mut bytes;
    let (&version, rest) = b.split_first()?;
    *b = rest;
    if version != VERSION {
        return None;
    }
    let (&flags, rest) = b.split_first()?;
    let (&kind, rest) = rest.split_first()?;
    *b = rest;
    let kind = *KINDS.get(usize::from(kind))?;
    let status = u16::try_from(get_varint(b)?).ok()?;
    let fetched_s = get_varint(b)?;
    let captured_us = i64::try_from(get_varint(b)?).ok()?;
    let interval_s = u32::try_from(get_varint(b)?).ok()?;
    let sha1 = if flags & HAS_SHA1 != 0 {
        Some(<[u8; 20]>::try_from(get_bytes(b, 20)?).ok()?)
    } else {
        None
    };
    let text = |b: &mut &[u8]| -> Option<String> {
        let len = get_varint(b)?;
        String::from_utf8(get_bytes(b, len)?.to_vec()).ok()
    };
    let etag = if flags & HAS_ETAG != 0 {
        Some(text(b)?)
    } else {
        None
    };
    let last_modified = if flags & LM_SECS != 0 {
        Some(imf_fixdate(get_varint(b)?)?)
    } else if flags & LM_TEXT != 0 {
        Some(text(b)?)
    } else {
        None
    };
    Some(Visit {
        status,
        kind,
        fetched_s,
        captured_us,
        sha1,
        validators: Validators {
            etag,
            last_modified,
        },
        interval_s,
    })
}
