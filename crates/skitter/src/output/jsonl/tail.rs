//! Reading the end of a JSON Lines file being resumed, backwards and in
//! bounded steps: where its last whole line ends, where its last whole page
//! (a `page` line and the `item` lines it announces) ends, and which URLs its
//! last lines hold.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

/// How far back one read goes.
const STEP: u64 = 1 << 16;

/// The part of a line the resume logic reads.
#[derive(serde::Deserialize)]
struct Line {
    #[serde(default)]
    r#type: String,
    #[serde(default)]
    url: String,
    /// On a `page` line: how many `item` lines follow it.
    #[serde(default)]
    items: Option<u64>,
}

/// Calls `f(offset, line)` for each non-empty line ending before `end` (which
/// is 0 or just after a newline), last first, until it returns false or the
/// file's start is reached. Answers the bytes it read and copied, which is at
/// most twice those of the lines it went through (plus one step): a line
/// longer than a step is kept as the steps that hold it and joined once when
/// its start is found, never copied again with each step back.
fn lines_backward(
    file: &mut File,
    end: u64,
    mut f: impl FnMut(u64, &[u8]) -> bool,
) -> io::Result<u64> {
    // The later parts of a line that starts in an earlier step, latest first.
    let mut parts: Vec<Vec<u8>> = Vec::new();
    let mut handled = 0u64;
    let mut give = |offset: u64, head: &[u8], parts: &mut Vec<Vec<u8>>, handled: &mut u64| {
        if parts.is_empty() {
            head.is_empty() || f(offset, head)
        } else {
            let mut line = head.to_vec();
            for part in parts.iter().rev() {
                line.extend_from_slice(part);
            }
            *handled += line.len() as u64;
            parts.clear();
            line.is_empty() || f(offset, &line)
        }
    };
    // The newline that ends the last line is not part of it.
    let mut pos = end.saturating_sub(1);
    while pos > 0 {
        let start = pos.saturating_sub(STEP);
        let mut chunk = vec![0u8; (pos - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut chunk)?;
        handled += chunk.len() as u64;
        let mut line_end = chunk.len();
        while let Some(i) = chunk[..line_end].iter().rposition(|&b| b == b'\n') {
            if !give(
                start + i as u64 + 1,
                &chunk[i + 1..line_end],
                &mut parts,
                &mut handled,
            ) {
                return Ok(handled);
            }
            line_end = i;
        }
        chunk.truncate(line_end);
        parts.push(chunk);
        pos = start;
    }
    if end > 0 {
        give(0, &[], &mut parts, &mut handled);
    }
    Ok(handled)
}

/// The length of the file up to and including its last newline.
pub(super) fn whole_lines_len(file: &mut File) -> io::Result<u64> {
    let len = file.metadata()?.len();
    let mut end = len;
    let mut buf = [0u8; 4096];
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let chunk = &mut buf[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(chunk)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// `end` (the whole lines' length), or less: when a kill cut a page's `item`
/// lines short, the file up to that page's line, so the page is written again
/// whole instead of keeping half of its items.
pub(super) fn whole_pages_len(file: &mut File, end: u64) -> io::Result<u64> {
    let mut trailing_items = 0u64;
    let mut cut = end;
    lines_backward(file, end, |offset, line| {
        let Ok(line) = serde_json::from_slice::<Line>(line) else {
            return false;
        };
        if line.r#type == "item" {
            trailing_items += 1;
            return true;
        }
        if line.items.is_some_and(|n| n > trailing_items) {
            cut = offset;
        }
        false
    })?;
    Ok(cut)
}

/// The `url` of each of the last `max_pages` page or skip lines before `end`
/// (item lines do not count, so a page with many items does not narrow the
/// window).
pub(super) fn tail_urls(
    file: &mut File,
    (floor, end): (u64, u64),
    max_pages: usize,
) -> io::Result<HashSet<String>> {
    let mut urls = HashSet::new();
    let mut pages = 0;
    lines_backward(file, end, |at, line| {
        // Lines before `floor` belong to an earlier recrawl pass.
        if at < floor {
            return false;
        }
        if let Ok(line) = serde_json::from_slice::<Line>(line)
            && line.r#type != "item"
        {
            pages += 1;
            if pages > max_pages {
                return false;
            }
            urls.insert(line.url);
        }
        true
    })?;
    Ok(urls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(lines: &[Vec<u8>]) -> (tempfile::NamedTempFile, u64) {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        for line in lines {
            file.write_all(line).unwrap();
            file.write_all(b"\n").unwrap();
        }
        let len = file.as_file().metadata().unwrap().len();
        (file, len)
    }

    #[test]
    fn lines_come_back_last_first_with_their_offsets() {
        let step = STEP as usize;
        let lines: Vec<Vec<u8>> = [3 * step + 7, 5, 0, step - 1, step, 2, step + 1, 1]
            .iter()
            .enumerate()
            .map(|(i, &n)| vec![b'a' + i as u8; n])
            .collect();
        let (mut file, len) = file_of(&lines);
        let mut got = Vec::new();
        lines_backward(file.as_file_mut(), len, |at, line| {
            got.push((at, line.to_vec()));
            true
        })
        .unwrap();
        let mut want = Vec::new();
        let mut at = 0u64;
        for line in &lines {
            if !line.is_empty() {
                want.push((at, line.clone()));
            }
            at += line.len() as u64 + 1;
        }
        want.reverse();
        assert_eq!(got.len(), want.len());
        assert!(got == want, "lines or offsets differ");
    }

    /// A line many steps long is read and joined once, not copied again with
    /// every step back: the work stays proportional to the bytes gone through.
    #[test]
    fn a_long_line_is_not_copied_per_step() {
        let long = vec![b'x'; 64 * STEP as usize];
        let (mut file, len) = file_of(&[b"first".to_vec(), long, b"last".to_vec()]);
        let mut seen = 0;
        let handled = lines_backward(file.as_file_mut(), len, |_, line| {
            seen += 1;
            line != b"first"
        })
        .unwrap();
        assert_eq!(seen, 3);
        assert!(
            handled <= 2 * len + STEP,
            "{handled} bytes handled for a {len}-byte file"
        );
    }
}
