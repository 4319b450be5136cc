//! Where the URLs come from: command-line arguments or lines of a file or stdin,
//! each one a URL or a glob pattern, turned into a lazy stream of [`InputItem`]s.
//!
//! Nothing here holds more than one line and one pattern's cursor: a file of a
//! million lines, or a pattern naming a billion URLs, streams in constant memory.
//! Lines are read with a length cap, so a file with no newlines cannot make one
//! unbounded line. A bad line or pattern becomes one item carrying the error and
//! its location, and the stream goes on; a read error ends the stream after one
//! such item.

use std::fmt;
use std::sync::Arc;

use futures_util::stream::{self, Stream, StreamExt};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};
use url::Url;

use super::glob::{Expansion, Glob, GlobError};
use crate::base::urlnorm::{self, UrlError};

/// Longest input line read, in bytes; longer lines are reported and skipped.
pub const MAX_LINE: usize = 64 * 1024;

/// Where an item came from: `urls.txt:12`, `stdin:3`, or `argument 2`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file name, `stdin`, or `argument`.
    pub source: Arc<str>,
    /// The 1-based line (or argument position).
    pub line: u64,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if &*self.source == ARGUMENT {
            write!(f, "argument {}", self.line)
        } else {
            write!(f, "{}:{}", self.source, self.line)
        }
    }
}

const ARGUMENT: &str = "argument";

/// Why an input line or argument gave no URL.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The glob pattern is malformed.
    #[error("bad pattern {text:?}: {source}")]
    Glob {
        /// The pattern as given.
        text: String,
        /// What is wrong with it.
        source: GlobError,
    },
    /// The text (or one expansion of the pattern) is not a usable URL.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// The line is longer than [`MAX_LINE`].
    #[error("line longer than {MAX_LINE} bytes")]
    LineTooLong,
    /// The line is not UTF-8.
    #[error("line is not valid UTF-8")]
    NotUtf8,
    /// Reading the input failed; nothing after this point was read.
    #[error("cannot read the input: {0}")]
    Read(#[source] std::io::Error),
}

/// One entry of the input: a URL to fetch, or the reason there is none.
#[derive(Debug)]
pub struct InputItem {
    /// Where it came from.
    pub location: Location,
    /// The normalised URL (`http://` assumed when no scheme is given).
    pub url: Result<Url, InputError>,
    /// The values the pattern's ranges took for this URL, in order (`{1}`,
    /// `{2}`… in templates); empty for a plain URL.
    pub ranges: Vec<String>,
}

/// The items named by command-line arguments, in order.
pub fn from_args<I>(args: I, glob: bool) -> impl Stream<Item = InputItem> + Send + 'static
where
    I: IntoIterator<Item = String>,
    I::IntoIter: Send + 'static,
{
    let source: Arc<str> = Arc::from(ARGUMENT);
    let entries = args.into_iter().zip(1u64..).map(move |(text, line)| {
        let location = Location {
            source: source.clone(),
            line,
        };
        expand(location, &text, glob)
    });
    stream::iter(entries.flatten())
}

/// How many items [`from_args`] will yield for these arguments (a malformed
/// pattern counts as one), for progress totals.
pub fn count_args(args: &[String], glob: bool) -> u64 {
    args.iter()
        .map(|a| match glob {
            true => Glob::parse(a).map_or(1, |g| g.len()),
            false => 1,
        })
        .fold(0u64, u64::saturating_add)
}

/// The items named by the lines of `reader` (a file or stdin, called `source` in
/// locations). Blank lines and lines starting with `#` are ignored; surrounding
/// whitespace is trimmed.
pub fn from_reader<R>(
    reader: R,
    source: &str,
    glob: bool,
) -> impl Stream<Item = InputItem> + Send + 'static
where
    R: AsyncBufRead + Unpin + Send + 'static,
{
    let state = LineState {
        reader: Some(reader),
        source: Arc::from(source),
        line: 0,
        buf: Vec::new(),
    };
    stream::unfold(state, move |mut state| async move {
        let items = state.next_entry(glob).await?;
        Some((stream::iter(items), state))
    })
    .flatten()
}

struct LineState<R> {
    /// `None` once the input ended or failed.
    reader: Option<R>,
    source: Arc<str>,
    line: u64,
    buf: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> LineState<R> {
    /// The items of the next line that is not blank or a comment.
    async fn next_entry(&mut self, glob: bool) -> Option<Items> {
        loop {
            let reader = self.reader.as_mut()?;
            self.buf.clear();
            let read = read_line_capped(reader, &mut self.buf, MAX_LINE).await;
            self.line += 1;
            let location = Location {
                source: self.source.clone(),
                line: self.line,
            };
            let fail = |error| Some(Items::one(location.clone(), Err(error)));
            match read {
                Ok(Line::End) => {
                    self.reader = None;
                    return None;
                }
                Err(e) => {
                    self.reader = None;
                    return fail(InputError::Read(e));
                }
                Ok(Line::TooLong) => return fail(InputError::LineTooLong),
                Ok(Line::Read) => {}
            }
            let Ok(text) = std::str::from_utf8(&self.buf) else {
                return fail(InputError::NotUtf8);
            };
            let text = text.trim();
            if !text.is_empty() && !text.starts_with('#') {
                return Some(expand(location, text, glob));
            }
        }
    }
}

/// What [`read_line_capped`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// A whole line.
    Read,
    /// A line longer than the cap: its first part is kept, the rest dropped.
    TooLong,
    /// The end of the input.
    End,
}

/// Reads one line (without its `\n` or `\r\n`) into `out`, keeping at most `cap`
/// bytes; the rest of an over-long line is consumed and dropped, so a line
/// without an end can never fill memory. The one line reader of every list
/// skitter reads (fetch inputs, probe names).
pub async fn read_line_capped<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    out: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Line> {
    let mut seen_any = false;
    let mut too_long = false;
    loop {
        let chunk = reader.fill_buf().await?;
        if chunk.is_empty() {
            break;
        }
        seen_any = true;
        let (take, newline) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if out.len() + take > cap {
            too_long = true;
        } else {
            out.extend_from_slice(&chunk[..take]);
        }
        reader.consume(take + usize::from(newline));
        if newline {
            break;
        }
    }
    if !seen_any {
        return Ok(Line::End);
    }
    if out.last() == Some(&b'\r') {
        out.pop();
    }
    Ok(if too_long { Line::TooLong } else { Line::Read })
}

/// The items of one argument or line: its expansion, or one error.
fn expand(location: Location, text: &str, glob: bool) -> Items {
    let parsed = match glob {
        true => Glob::parse(text),
        false => Ok(Glob::literal(text)),
    };
    match parsed {
        Ok(g) => Items::Many {
            location,
            urls: g.into_iter(),
        },
        Err(source) => Items::one(
            location,
            Err(InputError::Glob {
                text: text.to_string(),
                source,
            }),
        ),
    }
}

/// The items of one entry, produced lazily.
enum Items {
    One(Option<InputItem>),
    Many { location: Location, urls: Expansion },
}

impl Items {
    fn one(location: Location, url: Result<Url, InputError>) -> Items {
        Items::One(Some(InputItem {
            location,
            url,
            ranges: Vec::new(),
        }))
    }
}

impl Iterator for Items {
    type Item = InputItem;

    fn next(&mut self) -> Option<InputItem> {
        match self {
            Items::One(item) => item.take(),
            Items::Many { location, urls } => {
                let (text, ranges) = urls.next_with_ranges()?;
                Some(InputItem {
                    location: location.clone(),
                    url: urlnorm::parse_root(&text).map_err(InputError::from),
                    ranges,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn collect(s: impl Stream<Item = InputItem>) -> Vec<(String, Result<String, String>)> {
        s.map(|i| {
            let url = i.url.map(|u| u.to_string()).map_err(|e| e.to_string());
            (i.location.to_string(), url)
        })
        .collect()
        .await
    }

    #[tokio::test]
    async fn lines_comments_blanks_and_errors() {
        let text = "# urls\nhttp://h/a\n\n  h/[1-2]  \r\nh/[1-\nhttp://a b/\n";
        let got = collect(from_reader(text.as_bytes(), "in.txt", true)).await;
        let ok = |s: &str| Ok(s.to_string());
        assert_eq!(got.len(), 5, "{got:?}");
        assert_eq!(got[0], ("in.txt:2".into(), ok("http://h/a")));
        assert_eq!(got[1], ("in.txt:4".into(), ok("http://h/1")));
        assert_eq!(got[2], ("in.txt:4".into(), ok("http://h/2")));
        assert_eq!(got[3].0, "in.txt:5");
        assert!(got[3].1.as_ref().unwrap_err().contains("unclosed '['"));
        assert_eq!(got[4].0, "in.txt:6");
        assert!(got[4].1.is_err(), "{:?}", got[4]);
    }

    #[tokio::test]
    async fn long_and_non_utf8_lines_are_skipped_not_fatal() {
        let mut text = b"h/a\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE + 10));
        text.extend_from_slice(b"\n\xff\xfe\nh/b");
        let got = collect(from_reader(std::io::Cursor::new(text), "f", true)).await;
        let want_errs = ["line longer than 65536 bytes", "line is not valid UTF-8"];
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[1], ("f:2".into(), Err(want_errs[0].into())));
        assert_eq!(got[2], ("f:3".into(), Err(want_errs[1].into())));
        assert_eq!(got[3], ("f:4".into(), Ok("http://h/b".into())));
    }

    #[tokio::test]
    async fn args_with_and_without_glob() {
        let args = vec!["h/{a,b}".to_string(), "ftp://h/".to_string()];
        let got = collect(from_args(args.clone(), true)).await;
        assert_eq!(got.len(), 3);
        assert_eq!(got[1], ("argument 1".into(), Ok("http://h/b".into())));
        assert_eq!(got[2].0, "argument 2");
        assert!(
            got[2]
                .1
                .as_ref()
                .unwrap_err()
                .contains("unsupported scheme")
        );
        assert_eq!(count_args(&args, true), 3);
        let literal = collect(from_args(vec!["h/x[1-2]".to_string()], false)).await;
        assert_eq!(literal[0].1, Ok("http://h/x[1-2]".into()));
        assert_eq!(count_args(&["h/[1-".to_string()], true), 1);
    }
}
