//! Gzip members (RFC 1952), one per WARC record, so a reader can seek to any record.
//!
//! Compressing many small records one member at a time is dominated by getting
//! the compressor ready for each new stream, not by compressing. So:
//! - one raw-deflate compressor is reused for every member;
//! - it is zlib-rs at level 1 with `mem_level` 4: the same output as the default
//!   level 8 for records of a few kilobytes, but its symbol buffer (cleared for
//!   every stream) is 3 KiB instead of 48 KiB, which saves about a microsecond
//!   per record;
//! - records under [`STORE_BELOW`] bytes are not compressed at all but framed as
//!   one stored deflate block (see there);
//! - the record arrives as parts (head, body, trailer) and is compressed and
//!   checksummed from them, never copied whole first.

use std::io;

use flate2::Crc;
use zlib_rs::{DeflateConfig, DeflateFlush, Method, Status, Strategy};

/// Records shorter than this go into their gzip member as one stored
/// (uncompressed) deflate block. Level-1 deflate saves under 20% on a request
/// record (about 660 bytes become 540), while readying the compressor for a new
/// stream clears its 128 KiB hash table: for small records that costs more than
/// the rest of the record. Every gzip reader inflates stored blocks.
pub(crate) const STORE_BELOW: usize = 1024;

/// ID1 ID2, CM = deflate, no flags, no mtime, XFL = 0, OS = unknown.
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// `mem_level` of the compressor; see the module docs.
const MEM_LEVEL: i32 = 4;

/// Compressor output goes here first (the compressor writes into initialised
/// memory, and zeroing a fresh buffer per record would cost what we save).
const SCRATCH: usize = 16 * 1024;

/// Writes whole gzip members with one reused raw-deflate compressor.
pub(crate) struct Deflater {
    deflate: zlib_rs::Deflate,
    scratch: Box<[u8]>,
}

impl Deflater {
    pub(crate) fn new() -> Self {
        let config = DeflateConfig {
            level: 1,
            method: Method::Deflated,
            // Negative: a raw deflate stream; the gzip framing is written here.
            window_bits: -15,
            mem_level: MEM_LEVEL,
            strategy: Strategy::Default,
        };
        Deflater {
            deflate: zlib_rs::Deflate::new_with_config(config),
            scratch: vec![0; SCRATCH].into_boxed_slice(),
        }
    }

    /// The concatenation of `parts` as one complete gzip member.
    pub(crate) fn member(&mut self, parts: &[&[u8]]) -> io::Result<Vec<u8>> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let stored = len < STORE_BELOW;
        // Room for the whole member: header, block, trailer (20 bytes with the
        // stored block's own 5), and for deflate a typical page's compressed size.
        let mut out = Vec::with_capacity(if stored { len + 20 } else { len / 3 + 64 });
        out.extend_from_slice(&HEADER);
        if stored {
            stored_block(parts, len, &mut out);
        } else {
            self.deflate(parts, &mut out)?;
        }
        let mut crc = Crc::new();
        parts.iter().for_each(|p| crc.update(p));
        out.extend_from_slice(&crc.sum().to_le_bytes());
        // ISIZE is the length modulo 2^32 (RFC 1952).
        out.extend_from_slice(&(len as u32).to_le_bytes());
        Ok(out)
    }

    /// `parts` (not all empty: see [`STORE_BELOW`]) as one complete raw deflate
    /// stream, appended to `out`.
    fn deflate(&mut self, parts: &[&[u8]], out: &mut Vec<u8>) -> io::Result<()> {
        self.deflate.reset();
        let last = parts.len() - 1;
        for (i, part) in parts.iter().enumerate() {
            let flush = if i == last {
                DeflateFlush::Finish
            } else {
                DeflateFlush::NoFlush
            };
            self.feed(part, flush, out)?;
        }
        Ok(())
    }

    /// Compresses `input`, appending what comes out to `out`; with `Finish`, until
    /// the stream has ended.
    fn feed(&mut self, mut input: &[u8], flush: DeflateFlush, out: &mut Vec<u8>) -> io::Result<()> {
        loop {
            let (read, written) = (self.deflate.total_in(), self.deflate.total_out());
            let status = self
                .deflate
                .compress(input, &mut self.scratch, flush)
                .map_err(|e| io::Error::other(format!("deflate: {e:?}")))?;
            let produced = (self.deflate.total_out() - written) as usize;
            out.extend_from_slice(&self.scratch[..produced]);
            input = &input[(self.deflate.total_in() - read) as usize..];
            let done = match flush {
                DeflateFlush::Finish => status == Status::StreamEnd,
                _ => input.is_empty(),
            };
            if done {
                return Ok(());
            }
        }
    }
}

/// `parts` (`len` bytes in all, under 64 KiB) as a deflate stream of one final
/// stored block (RFC 1951, 3.2.4): a header byte, then LEN and its complement.
fn stored_block(parts: &[&[u8]], len: usize, out: &mut Vec<u8>) {
    let len = u16::try_from(len).expect("stored blocks hold under 64 KiB");
    out.push(0b001); // BFINAL = 1, BTYPE = 00 (stored); the rest of the byte is padding.
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    parts.iter().for_each(|p| out.extend_from_slice(p));
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn inflate(member: &[u8]) -> io::Result<Vec<u8>> {
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(member).read_to_end(&mut back)?;
        Ok(back)
    }

    #[test]
    fn members_inflate_to_their_parts_stored_when_small() {
        let mut deflater = Deflater::new();
        for len in [
            0,
            1,
            STORE_BELOW - 1,
            STORE_BELOW,
            5_000,
            SCRATCH * 3,
            70_000,
        ] {
            let plain: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let (a, b) = plain.split_at(len / 3);
            let (b, c) = b.split_at(b.len() / 2);
            let member = deflater.member(&[a, b, c]).unwrap();
            assert_eq!(member[10] == 0b001, len < STORE_BELOW, "stored? len {len}");
            assert_eq!(inflate(&member).unwrap(), plain, "len {len}");
            let torn = &member[..member.len() - 1];
            assert!(inflate(torn).is_err(), "len {len}");
        }
    }

    #[test]
    fn the_reused_compressor_starts_every_member_afresh() {
        let mut deflater = Deflater::new();
        let page = b"<p>the same words again and again</p>\n".repeat(100);
        let first = deflater.member(&[&page]).unwrap();
        let second = deflater.member(&[&page]).unwrap();
        // Identical bytes: the second member refers to nothing from the first.
        assert_eq!(first, second);
        assert!(first.len() < page.len() / 4, "compressed: {}", first.len());
        let both = [first, second].concat();
        let mut back = Vec::new();
        flate2::read::MultiGzDecoder::new(&both[..])
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, [&page[..], &page[..]].concat());
    }

    #[test]
    fn no_parts_is_an_empty_member() {
        let member = Deflater::new().member(&[]).unwrap();
        assert!(inflate(&member).unwrap().is_empty());
    }
}
