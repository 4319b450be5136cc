//! The compressed index of a WACZ: `indexes/index.cdx.gz` and `indexes/index.idx`.
//!
//! The sorted CDXJ lines go into `index.cdx.gz` in blocks of [`LINES`], each
//! block its own gzip member; `index.idx` has one line per block, the block's
//! first key and timestamp with its offset and length, after a `!meta` line
//! naming the data file. This is the "compressed CDXJ" (ZipNum) layout that
//! pywb, ReplayWeb.page and the `wacz` tools read and write (`cdxj-indexer`'s
//! `CompressedWriter`, which `wacz create` uses): a reader binary-searches the
//! small `.idx` and inflates one block, so opening a large archive does not
//! load its whole index. The `wacz` validator also expects `index.cdx.gz`.

use std::io::{self, Write};

use flate2::Compression;
use flate2::write::GzEncoder;

/// Index lines per gzip block, as `cdxj-indexer` writes them.
pub(crate) const LINES: usize = 300;

/// The first line of `index.idx`.
pub(crate) const META: &str =
    "!meta 0 {\"format\": \"cdxj-gzip-1.0\", \"filename\": \"index.cdx.gz\"}\n";

/// Writes the sorted `lines` as gzip blocks to `data`, and returns the text of
/// `index.idx` that finds them. One block of lines is held at a time.
pub(crate) fn write_blocks(
    lines: impl IntoIterator<Item = io::Result<String>>,
    data: &mut impl Write,
) -> io::Result<String> {
    let mut idx = String::from(META);
    let mut offset = 0u64;
    let mut block: Vec<String> = Vec::with_capacity(LINES);
    let mut flush = |block: &mut Vec<String>, idx: &mut String| -> io::Result<()> {
        if let Some(first) = block.first() {
            let mut gz = GzEncoder::new(Vec::new(), Compression::default());
            for line in block.iter() {
                gz.write_all(line.as_bytes())?;
                gz.write_all(b"\n")?;
            }
            let member = gz.finish()?;
            data.write_all(&member)?;
            let key = first
                .split_once('{')
                .map_or(first.as_str(), |(k, _)| k)
                .trim();
            idx.push_str(&format!(
                "{key} {{\"offset\": {offset}, \"length\": {}}}\n",
                member.len()
            ));
            offset += member.len() as u64;
            block.clear();
        }
        Ok(())
    };
    for line in lines {
        block.push(line?);
        if block.len() == LINES {
            flush(&mut block, &mut idx)?;
        }
    }
    flush(&mut block, &mut idx)?;
    Ok(idx)
}

/// One line of `index.idx` after the `!meta` line: the key (SURT and
/// timestamp) of a block's first line, and where the block is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct IdxLine {
    /// `urlkey timestamp` of the block's first line.
    pub key: String,
    /// The block's offset in `index.cdx.gz`.
    pub offset: u64,
    /// Its compressed length.
    pub length: u64,
}

/// Parses a line of `index.idx` (not the `!meta` one).
pub(crate) fn parse_idx_line(line: &str) -> Option<IdxLine> {
    #[derive(serde::Deserialize)]
    struct Place {
        offset: u64,
        length: u64,
    }
    let (key, json) = line.split_once('{')?;
    let place: Place = serde_json::from_str(&format!("{{{json}")).ok()?;
    Some(IdxLine {
        key: key.trim().to_string(),
        offset: place.offset,
        length: place.length,
    })
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn blocks_are_members_found_by_the_idx() {
        let lines: Vec<String> = (0..LINES * 2 + 5)
            .map(|i| format!("com,example)/{i:04} 20260101000000 {{\"url\": \"u{i}\"}}"))
            .collect();
        let mut data = Vec::new();
        let idx = write_blocks(lines.iter().cloned().map(Ok), &mut data).unwrap();
        let idx_lines: Vec<&str> = idx.lines().collect();
        assert_eq!(idx_lines[0], META.trim_end());
        assert_eq!(idx_lines.len(), 4, "{idx}");
        let mut back = Vec::new();
        for (i, line) in idx_lines[1..].iter().enumerate() {
            let place = parse_idx_line(line).unwrap();
            assert_eq!(
                place.key,
                format!("com,example)/{:04} 20260101000000", i * LINES)
            );
            let member = &data[place.offset as usize..(place.offset + place.length) as usize];
            let mut text = String::new();
            flate2::read::GzDecoder::new(member)
                .read_to_string(&mut text)
                .unwrap();
            back.extend(text.lines().map(String::from));
        }
        assert_eq!(back, lines);
    }

    #[test]
    fn no_lines_is_just_the_meta_line() {
        let mut data = Vec::new();
        let idx = write_blocks(std::iter::empty(), &mut data).unwrap();
        assert_eq!(idx, META);
        assert!(data.is_empty());
    }
}
