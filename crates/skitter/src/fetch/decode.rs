//! Content decoding (gzip, deflate, br, zstd) of bodies that were kept as received.
//!
//! skitter asks for compressed bodies itself and decodes them here, rather than
//! letting the HTTP client do it, so that archives keep the exact bytes that came
//! over the wire while the link extractor sees the decoded page. Decoding stops at
//! the body-size cap, so a small compressed "bomb" cannot expand without bound.

use std::borrow::Cow;
use std::io::Read;

/// The most codings a response may stack (`Content-Encoding: gzip, br`), as
/// curl allows since CVE-2022-32206: each one is decoded up to the body cap, so
/// the cap on the chain bounds a response's decoding work at this many times
/// the cap, where `gzip, gzip, …` could otherwise multiply it without end.
pub const MAX_CODINGS: usize = 5;

/// The `Accept-Encoding` value that matches what [`decode`] understands.
pub const ACCEPT_ENCODING: &str = "gzip, deflate, br, zstd";

/// Why a body could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The coding is not one skitter knows.
    #[error("unsupported content coding {0:?}")]
    Unsupported(String),
    /// The compressed data is corrupt.
    #[error("corrupt {coding} body: {source}")]
    Corrupt {
        /// The coding that failed.
        coding: String,
        /// The decoder's error.
        source: std::io::Error,
    },
    /// The decoded body is larger than the cap.
    #[error("decoded body exceeds {0} bytes")]
    TooLarge(u64),
    /// More codings are stacked than [`MAX_CODINGS`].
    #[error("{0} content codings stacked; at most {MAX_CODINGS} are decoded")]
    TooManyCodings(usize),
}

/// Decodes `raw` per a `Content-Encoding` header value (codings applied in order,
/// so they are undone in reverse), producing at most `max` bytes. A body with no
/// coding (or only `identity`) is returned as it is, borrowed: most pages are not
/// compressed, and copying each one would cost more than parsing it.
pub fn decode<'a>(
    content_encoding: Option<&str>,
    raw: &'a [u8],
    max: u64,
) -> Result<Cow<'a, [u8]>, DecodeError> {
    let mut data = Cow::Borrowed(raw);
    for coding in codings(content_encoding)?.iter().rev() {
        let out = decode_one(coding, &data, max, false)?;
        if out.len() as u64 > max {
            return Err(DecodeError::TooLarge(max));
        }
        data = Cow::Owned(out);
    }
    Ok(data)
}

/// A body decoded by [`decode_prefix`].
#[derive(Debug)]
pub struct Decoded<'a> {
    /// The decoded bytes, at most the cap.
    pub body: Cow<'a, [u8]>,
    /// Decoding stopped at the cap, or at the end of a cut-off input.
    pub truncated: bool,
}

/// Like [`decode`], but a result over `max` bytes is cut at `max` instead of
/// failing, and when `cut` says `raw` is itself the first part of a longer
/// body, a coding that ends early yields what it decoded so far. For link
/// extraction, which wants whatever the first part of a page holds.
pub fn decode_prefix<'a>(
    content_encoding: Option<&str>,
    raw: &'a [u8],
    max: u64,
    cut: bool,
) -> Result<Decoded<'a>, DecodeError> {
    let mut data = Cow::Borrowed(raw);
    let mut truncated = false;
    for coding in codings(content_encoding)?.iter().rev() {
        let mut out = decode_one(coding, &data, max, cut || truncated)?;
        if out.len() as u64 > max {
            out.truncate(max as usize);
            truncated = true;
        }
        data = Cow::Owned(out);
    }
    Ok(Decoded {
        body: data,
        truncated,
    })
}

fn codings(content_encoding: Option<&str>) -> Result<Vec<String>, DecodeError> {
    let codings: Vec<String> = content_encoding
        .unwrap_or("")
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity")
        // One past the cap is enough to refuse: a header of a million
        // codings is not split into a million strings.
        .take(MAX_CODINGS + 1)
        .collect();
    if codings.len() > MAX_CODINGS {
        let n = content_encoding
            .unwrap_or("")
            .split(',')
            .filter(|c| !c.trim().is_empty() && !c.trim().eq_ignore_ascii_case("identity"))
            .count();
        return Err(DecodeError::TooManyCodings(n));
    }
    Ok(codings)
}

/// Decodes one coding, producing at most `max + 1` bytes (one more than the
/// cap, so the caller can tell a body of exactly `max` from a longer one).
/// With `lenient`, an input that ends early yields what was decoded.
fn decode_one(coding: &str, data: &[u8], max: u64, lenient: bool) -> Result<Vec<u8>, DecodeError> {
    let corrupt = |source| DecodeError::Corrupt {
        coding: coding.to_string(),
        source,
    };
    match coding {
        "gzip" | "x-gzip" => {
            read_capped(flate2::read::MultiGzDecoder::new(data), max, lenient).map_err(corrupt)
        }
        "deflate" => {
            // Servers disagree on whether "deflate" means zlib-wrapped or raw
            // deflate (RFC 9110 says zlib); accept both, as browsers do.
            let zlib = |lenient| read_capped(flate2::read::ZlibDecoder::new(data), max, lenient);
            let raw = |lenient| read_capped(flate2::read::DeflateDecoder::new(data), max, lenient);
            match zlib(false).or_else(|_| raw(false)) {
                Ok(out) => Ok(out),
                // A cut-off stream: the wrapping that decodes more is the right one.
                Err(_) if lenient => {
                    let (a, b) = (
                        zlib(true).unwrap_or_default(),
                        raw(true).unwrap_or_default(),
                    );
                    Ok(if a.len() >= b.len() { a } else { b })
                }
                Err(e) => Err(corrupt(e)),
            }
        }
        "br" => read_capped(
            brotli_decompressor::Decompressor::new(data, 4096),
            max,
            lenient,
        )
        .map_err(corrupt),
        "zstd" => {
            let decoder = zstd::stream::read::Decoder::new(data).map_err(corrupt)?;
            read_capped(decoder, max, lenient).map_err(corrupt)
        }
        other => Err(DecodeError::Unsupported(other.to_string())),
    }
}

/// Reads at most `max + 1` bytes; with `lenient`, a read error ends the data
/// instead of failing (the bytes read before it are kept).
fn read_capped<R: Read>(reader: R, max: u64, lenient: bool) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    match reader.take(max.saturating_add(1)).read_to_end(&mut out) {
        Ok(_) => Ok(out),
        Err(_) if lenient => Ok(out),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn decodes_each_coding() {
        let text = b"<a href=/x>hello</a>".repeat(10);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&text).unwrap();
        let zlib = z.finish().unwrap();
        let mut d = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        d.write_all(&text).unwrap();
        let raw_deflate = d.finish().unwrap();
        let zstd = zstd::encode_all(&text[..], 1).unwrap();
        let cases: Vec<(Option<&str>, Vec<u8>)> = vec![
            (None, text.clone()),
            (Some("identity"), text.clone()),
            (Some("gzip"), gzip(&text)),
            (Some("X-Gzip"), gzip(&text)),
            (Some("deflate"), zlib),
            (Some("deflate"), raw_deflate),
            (Some("zstd"), zstd),
            (Some("gzip, gzip"), gzip(&gzip(&text))),
        ];
        for (coding, body) in cases {
            let decoded = decode(coding, &body, 1 << 20).unwrap();
            assert_eq!(decoded, text, "{coding:?}");
            let borrowed = matches!(decoded, Cow::Borrowed(_));
            assert_eq!(
                borrowed,
                body == text,
                "{coding:?}: copied only when decoded"
            );
        }
    }

    #[test]
    fn brotli_round_trip() {
        let text = b"hello hello hello".to_vec();
        let mut br = Vec::new();
        {
            let mut w = brotli::CompressorWriter::new(&mut br, 4096, 5, 22);
            w.write_all(&text).unwrap();
        }
        assert_eq!(decode(Some("br"), &br, 100).unwrap().as_ref(), &text[..]);
    }

    #[test]
    fn bomb_stops_at_cap() {
        let zeros = vec![0u8; 1 << 20];
        let bomb = gzip(&zeros);
        assert!(bomb.len() < 10_000);
        assert!(matches!(
            decode(Some("gzip"), &bomb, 1000),
            Err(DecodeError::TooLarge(1000))
        ));
    }

    #[test]
    fn stacked_codings_stop_at_the_cap() {
        let text = b"<a href=/x>x</a>".to_vec();
        let mut body = text.clone();
        for _ in 0..MAX_CODINGS {
            body = gzip(&body);
        }
        let five = ["gzip"; MAX_CODINGS].join(", ");
        assert_eq!(decode(Some(&five), &body, 1 << 20).unwrap().as_ref(), text);
        let six = format!("{five}, gzip");
        let stacked = gzip(&body);
        assert!(matches!(
            decode(Some(&six), &stacked, 1 << 20),
            Err(DecodeError::TooManyCodings(6))
        ));
        assert!(matches!(
            decode_prefix(Some(&six), &stacked, 1 << 20, false),
            Err(DecodeError::TooManyCodings(6))
        ));
        // identity does not count; a huge header is refused without work.
        let padded = format!("identity, {five}, identity");
        assert!(decode(Some(&padded), &body, 1 << 20).is_ok());
        let huge = vec!["gzip"; 100_000].join(",");
        assert!(matches!(
            decode(Some(&huge), b"x", 10),
            Err(DecodeError::TooManyCodings(100_000))
        ));
    }

    #[test]
    fn corrupt_and_unknown_are_errors() {
        assert!(matches!(
            decode(Some("gzip"), b"not gzip", 100),
            Err(DecodeError::Corrupt { .. })
        ));
        assert!(matches!(
            decode(Some("compress"), b"x", 100),
            Err(DecodeError::Unsupported(_))
        ));
    }
}
