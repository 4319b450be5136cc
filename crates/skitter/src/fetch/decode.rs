//! Content decoding (gzip, deflate, br, zstd) of bodies that were kept as received.
//!
//! skitter asks for compressed bodies itself and decodes them here, rather than
//! letting the HTTP client do it, so that archives keep the exact bytes that came
//! over the wire while the link extractor sees the decoded page. Decoding stops at
//! the body-size cap, so a small compressed "bomb" cannot expand without bound.

use std::borrow::Cow;
use std::io::Read;

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
    let codings: Vec<String> = content_encoding
        .unwrap_or("")
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity")
        .collect();
    let mut data = Cow::Borrowed(raw);
    for coding in codings.iter().rev() {
        data = Cow::Owned(decode_one(coding, &data, max)?);
    }
    Ok(data)
}

/// Like [`decode`], but a body that decodes to more than `max` bytes yields its
/// first `max` bytes instead of an error (for formats whose size rule is on the
/// decoded text, like robots.txt). Only an unknown coding or data that is corrupt
/// before `max` bytes come out is an error.
pub fn decode_prefix<'a>(
    content_encoding: Option<&str>,
    raw: &'a [u8],
    max: u64,
) -> Result<Cow<'a, [u8]>, DecodeError> {
    let cap = usize::try_from(max).unwrap_or(usize::MAX);
    match decode(content_encoding, raw, max) {
        Ok(Cow::Borrowed(b)) => Ok(Cow::Borrowed(&b[..b.len().min(cap)])),
        Ok(owned) => Ok(owned),
        Err(DecodeError::TooLarge(_)) => {
            // Decode again, keeping what fits: the cap bounds the work too.
            let mut data = Cow::Borrowed(raw);
            let codings = codings(content_encoding);
            for coding in codings.iter().rev() {
                let mut out = Vec::new();
                let reader = decoder(coding, &data)?;
                let _ = reader.take(max).read_to_end(&mut out);
                data = Cow::Owned(out);
            }
            Ok(data)
        }
        Err(e) => Err(e),
    }
}

fn codings(content_encoding: Option<&str>) -> Vec<String> {
    content_encoding
        .unwrap_or("")
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity")
        .collect()
}

/// A streaming decoder for one coding (gzip, zlib deflate, br, zstd).
fn decoder<'a>(coding: &str, data: &'a [u8]) -> Result<Box<dyn Read + 'a>, DecodeError> {
    Ok(match coding {
        "gzip" | "x-gzip" => Box::new(flate2::read::MultiGzDecoder::new(data)),
        "deflate" => Box::new(flate2::read::ZlibDecoder::new(data)),
        "br" => Box::new(brotli_decompressor::Decompressor::new(data, 4096)),
        "zstd" => Box::new(zstd::stream::read::Decoder::new(data).map_err(|source| {
            DecodeError::Corrupt {
                coding: coding.to_string(),
                source,
            }
        })?),
        other => return Err(DecodeError::Unsupported(other.to_string())),
    })
}

fn decode_one(coding: &str, data: &[u8], max: u64) -> Result<Vec<u8>, DecodeError> {
    let corrupt = |source| DecodeError::Corrupt {
        coding: coding.to_string(),
        source,
    };
    match coding {
        "gzip" | "x-gzip" => {
            read_capped(flate2::read::MultiGzDecoder::new(data), max).map_err(corrupt)?
        }
        "deflate" => {
            // Servers disagree on whether "deflate" means zlib-wrapped or raw
            // deflate (RFC 9110 says zlib); accept both, as browsers do.
            match read_capped(flate2::read::ZlibDecoder::new(data), max) {
                Ok(result) => result,
                Err(_) => {
                    read_capped(flate2::read::DeflateDecoder::new(data), max).map_err(corrupt)?
                }
            }
        }
        "br" => {
            read_capped(brotli_decompressor::Decompressor::new(data, 4096), max).map_err(corrupt)?
        }
        "zstd" => {
            let decoder = zstd::stream::read::Decoder::new(data).map_err(corrupt)?;
            read_capped(decoder, max).map_err(corrupt)?
        }
        other => Err(DecodeError::Unsupported(other.to_string())),
    }
}

/// Reads everything, or fails once more than `max` bytes come out.
fn read_capped<R: Read>(reader: R, max: u64) -> std::io::Result<Result<Vec<u8>, DecodeError>> {
    let mut out = Vec::new();
    reader.take(max.saturating_add(1)).read_to_end(&mut out)?;
    if out.len() as u64 > max {
        return Ok(Err(DecodeError::TooLarge(max)));
    }
    Ok(Ok(out))
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
    fn prefix_keeps_the_first_bytes_of_a_large_decoded_body() {
        let text = b"Disallow: /private\n".repeat(60_000); // about 1.1 MB
        let body = gzip(&text);
        assert!(matches!(
            decode(Some("gzip"), &body, 1000),
            Err(DecodeError::TooLarge(_))
        ));
        let prefix = decode_prefix(Some("gzip"), &body, 1000).unwrap();
        assert_eq!(&prefix[..], &text[..1000]);
        let plain = decode_prefix(None, &text, 1000).unwrap();
        assert_eq!(&plain[..], &text[..1000]);
        assert!(decode_prefix(Some("gzip"), b"not gzip", 1000).is_err());
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
