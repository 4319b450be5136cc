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

/// Calls `f(offset, line)` for each non-empty line ending before `end`, last
/// first, until it returns false or the file's start is reached.
fn lines_backward(
    file: &mut File,
    end: u64,
    mut f: impl FnMut(u64, &[u8]) -> bool,
) -> io::Result<()> {
    let mut carry: Vec<u8> = Vec::new();
    let mut pos = end;
    while pos > 0 {
        let start = pos.saturating_sub(STEP);
        let mut chunk = vec![0u8; (pos - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut chunk)?;
        chunk.extend_from_slice(&carry);
        // `chunk` ends with a newline (the file's last, or the carried line's).
        // Its first piece may be the end of a line that starts in an earlier
        // chunk: that is carried back, unless the file's start is reached.
        let whole = match (start > 0, chunk.iter().position(|&b| b == b'\n')) {
            (false, _) => 0,
            (true, Some(i)) => i + 1,
            (true, None) => chunk.len(),
        };
        if whole >= chunk.len() {
            carry = chunk;
            pos = start;
            continue;
        }
        let mut line_end = chunk.len() - 1;
        for i in (whole..line_end).rev() {
            if chunk[i] == b'\n' {
                let line = &chunk[i + 1..line_end];
                if !line.is_empty() && !f(start + i as u64 + 1, line) {
                    return Ok(());
                }
                line_end = i;
            }
        }
        let line = &chunk[whole..line_end];
        if !line.is_empty() && !f(start + whole as u64, line) {
            return Ok(());
        }
        chunk.truncate(whole);
        carry = chunk;
        pos = start;
    }
    Ok(())
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
