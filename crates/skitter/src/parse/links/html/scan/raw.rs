//! Where raw text ends: the RCDATA and RAWTEXT of `title`, `style`,
//! `noscript`… at their element's end tag, and script data at `</script>`
//! unless an HTML comment in the script has "escaped" it, with the escape
//! states `lol_html` implements (`state_machine/syntax/text`).

use memchr::{memchr, memchr2};

use super::{TagAt, ends_name};

/// What follows `</` in raw text.
enum EndTag<R = usize> {
    /// The element's end tag.
    Found(TagAt),
    /// Not it: go on reading text from here (and, in script data, in this
    /// state).
    Resume(R),
    /// The text ended.
    Eof,
}

/// Reads `</name` at `lt`: the end tag when `name` is `want` (ASCII
/// case-insensitive) and a space, `/` or `>` follows it.
fn end_tag(s: &[u8], lt: usize, want: &[u8]) -> EndTag {
    let from = lt + 2;
    match s.get(from) {
        None => return EndTag::Eof,
        Some(c) if c.is_ascii_alphabetic() => {}
        Some(_) => return EndTag::Resume(from),
    }
    let to = from
        + s[from..]
            .iter()
            .position(|c| !c.is_ascii_alphabetic())
            .unwrap_or(s.len() - from);
    match s.get(to) {
        None => EndTag::Eof,
        Some(&c) if ends_name(c) && s[from..to].eq_ignore_ascii_case(want) => {
            EndTag::Found(TagAt {
                lt,
                name: (from, to),
                end: true,
            })
        }
        Some(_) => EndTag::Resume(to),
    }
}

/// The end tag of the RCDATA or RAWTEXT element `name` whose text starts
/// at `i`; `None` when the text ends first.
pub(super) fn raw_text_end(s: &[u8], mut i: usize, name: &[u8]) -> Option<TagAt> {
    loop {
        let lt = i + memchr(b'<', s.get(i..)?)?;
        i = match *s.get(lt + 1)? {
            b'/' => match end_tag(s, lt, name) {
                EndTag::Found(tag) => return Some(tag),
                EndTag::Resume(at) => at,
                EndTag::Eof => return None,
            },
            _ => lt + 1,
        };
    }
}

/// The states of script data.
#[derive(Clone, Copy)]
enum St {
    Data,
    /// Inside `<!--`.
    Escaped,
    /// Just after `--` in escaped text.
    EscapedDashDash,
    /// Inside `<!-- <script>`: `</script>` here does not end the script.
    Double,
    DoubleDashDash,
}

/// The `</script>` ending script data that starts at `i`; `None` when the
/// text ends first.
pub(super) fn script_end(s: &[u8], mut i: usize) -> Option<TagAt> {
    let mut st = St::Data;
    loop {
        (st, i) = match st {
            St::Data => {
                let lt = i + memchr(b'<', s.get(i..)?)?;
                match *s.get(lt + 1)? {
                    b'/' => match end_tag(s, lt, b"script") {
                        EndTag::Found(tag) => return Some(tag),
                        EndTag::Resume(at) => (St::Data, at),
                        EndTag::Eof => return None,
                    },
                    b'!' if s[lt + 2..].starts_with(b"--") => (St::EscapedDashDash, lt + 4),
                    b'!' => (St::Data, lt + 2),
                    _ => (St::Data, lt + 1),
                }
            }
            St::Escaped => {
                let at = i + memchr2(b'-', b'<', s.get(i..)?)?;
                if s[at] == b'<' {
                    match escaped_lt(s, at)? {
                        EndTag::Found(tag) => return Some(tag),
                        EndTag::Resume(to) => to,
                        EndTag::Eof => return None,
                    }
                } else if s[at + 1..].starts_with(b"-") {
                    (St::EscapedDashDash, at + 2)
                } else {
                    (St::Escaped, at + 1)
                }
            }
            St::EscapedDashDash => match *s.get(i)? {
                b'-' => (St::EscapedDashDash, i + 1),
                b'<' => match escaped_lt(s, i)? {
                    EndTag::Found(tag) => return Some(tag),
                    EndTag::Resume(to) => to,
                    EndTag::Eof => return None,
                },
                // Reconsumed in script data: the escape is over.
                b'>' => (St::Data, i),
                _ => (St::Escaped, i + 1),
            },
            St::Double => {
                let at = i + memchr2(b'-', b'<', s.get(i..)?)?;
                if s[at] == b'<' {
                    double_lt(s, at)?
                } else if s[at + 1..].starts_with(b"-") {
                    (St::DoubleDashDash, at + 2)
                } else {
                    (St::Double, at + 1)
                }
            }
            St::DoubleDashDash => match *s.get(i)? {
                b'-' => (St::DoubleDashDash, i + 1),
                b'<' => double_lt(s, i)?,
                b'>' => (St::Data, i),
                _ => (St::Double, i + 1),
            },
        };
    }
}

/// After a `<` (at `lt`) in escaped script data: `<script` followed by a
/// space, `/` or `>` starts double escaping, `</script` may end the script,
/// anything else is text. `Resume` carries the state to go on in; `None`
/// when the text ends.
fn escaped_lt(s: &[u8], lt: usize) -> Option<EndTag<(St, usize)>> {
    let next = *s.get(lt + 1)?;
    if s.get(lt + 1..lt + 7)
        .is_some_and(|w| w.eq_ignore_ascii_case(b"script"))
    {
        let after = *s.get(lt + 7)?;
        return Some(if ends_name(after) {
            EndTag::Resume((St::Double, lt + 8))
        } else {
            EndTag::Resume((St::Escaped, lt + 7))
        });
    }
    if next != b'/' {
        return Some(EndTag::Resume((St::Escaped, lt + 1)));
    }
    Some(match end_tag(s, lt, b"script") {
        EndTag::Found(tag) => EndTag::Found(tag),
        EndTag::Resume(at) => EndTag::Resume((St::Escaped, at)),
        EndTag::Eof => EndTag::Eof,
    })
}

/// After a `<` (at `lt`) in double-escaped script data: `</script`
/// followed by a space, `/` or `>` goes back to escaped text. `None` when
/// the text ends.
fn double_lt(s: &[u8], lt: usize) -> Option<(St, usize)> {
    if *s.get(lt + 1)? != b'/' {
        return Some((St::Double, lt + 1));
    }
    let p = lt + 2;
    if !s.get(p..p + 6)?.eq_ignore_ascii_case(b"script") {
        return Some((St::Double, p));
    }
    let after = *s.get(p + 6)?;
    Some(if ends_name(after) {
        (St::Escaped, p + 7)
    } else {
        (St::Double, p + 6)
    })
}
