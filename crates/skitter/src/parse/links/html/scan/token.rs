//! Between and inside tags in data: where the next tag starts, past
//! comments, doctypes, CDATA sections and `<` that open nothing; and where a
//! tag ends, past its attributes. The states are `lol_html`'s
//! (`state_machine/syntax/{tag,comment,doctype}`).

use memchr::{memchr, memmem};

use super::{Attr, Close, TagAt, ends_name, is_space};

/// The next tag at or after `i` in data, past comments, doctypes, CDATA
/// sections (read as such only when `cdata`, inside foreign content) and `<`
/// that open nothing; `None` when the text ends first.
pub(super) fn next_tag(s: &[u8], mut i: usize, cdata: bool) -> Option<TagAt> {
    loop {
        let lt = i + memchr(b'<', s.get(i..)?)?;
        i = match *s.get(lt + 1)? {
            c if c.is_ascii_alphabetic() => return tag_name(s, lt, lt + 1, false),
            b'/' => match *s.get(lt + 2)? {
                c if c.is_ascii_alphabetic() => return tag_name(s, lt, lt + 2, true),
                b'>' => lt + 3,
                // A bogus comment: `</ x>`, `</3>`.
                _ => past_gt(s, lt + 2)?,
            },
            b'!' => markup_declaration(s, lt + 2, cdata)?,
            b'?' => past_gt(s, lt + 2)?,
            _ => lt + 1,
        };
    }
}

/// A tag whose name starts at `from`.
fn tag_name(s: &[u8], lt: usize, from: usize, end: bool) -> Option<TagAt> {
    let to = from + s[from..].iter().position(|&c| ends_name(c))?;
    Some(TagAt {
        lt,
        name: (from, to),
        end,
    })
}

/// The byte after the first `>` at or after `from`.
fn past_gt(s: &[u8], from: usize) -> Option<usize> {
    Some(from + memchr(b'>', s.get(from..)?)? + 1)
}

/// Past what follows `<!` at `p`: a comment, a doctype, a CDATA section or a
/// bogus comment.
fn markup_declaration(s: &[u8], p: usize, cdata: bool) -> Option<usize> {
    let rest = s.get(p..)?;
    if rest.starts_with(b"--") {
        comment_end(s, p + 2)
    } else if rest
        .get(..7)
        .is_some_and(|w| w.eq_ignore_ascii_case(b"DOCTYPE"))
    {
        // Every doctype state ends at `>`, quoted identifiers too.
        past_gt(s, p + 7)
    } else if rest.starts_with(b"[CDATA[") {
        if cdata {
            Some(p + 7 + memmem::find(&s[p + 7..], b"]]>")? + 3)
        } else {
            past_gt(s, p + 7)
        }
    } else {
        past_gt(s, p)
    }
}

/// Past a comment whose text starts at `b`: `<!-->` and `<!--->` end at
/// once, others at the first `-->` or `--!>`.
fn comment_end(s: &[u8], b: usize) -> Option<usize> {
    let body = s.get(b..)?;
    if body.starts_with(b">") {
        return Some(b + 1);
    }
    if body.starts_with(b"->") {
        return Some(b + 2);
    }
    let mut k = 0;
    loop {
        k += memmem::find(body.get(k..)?, b"--")?;
        match body.get(k + 2..) {
            Some([b'>', ..]) => return Some(b + k + 3),
            Some([b'!', b'>', ..]) => return Some(b + k + 4),
            _ => k += 1,
        }
    }
}

/// Reads attributes from `i` (the byte that ended the tag's name) to the
/// tag's `>`, keeping their ranges in `attrs` when `keep`; `None` when the
/// text ends first (the tokenizer then drops the tag). The states are
/// `lol_html`'s (`state_machine/syntax/tag`).
pub(super) fn attributes(
    s: &[u8],
    mut i: usize,
    attrs: &mut Vec<Attr>,
    keep: bool,
) -> Option<Close> {
    #[derive(Clone, Copy)]
    enum St {
        BeforeName,
        Name(usize),
        AfterName((usize, usize)),
        BeforeValue((usize, usize)),
        SelfClosing,
    }
    attrs.clear();
    let mut push = |name: (usize, usize), value: (usize, usize)| {
        if keep {
            attrs.push(Attr { name, value });
        }
    };
    let close = |next, self_closing, eq_gt| {
        Some(Close {
            next,
            self_closing,
            eq_gt,
        })
    };
    let mut st = St::BeforeName;
    loop {
        let c = *s.get(i)?;
        st = match (st, c) {
            (St::BeforeName, c) if is_space(c) => St::BeforeName,
            (St::BeforeName, b'/') => St::SelfClosing,
            (St::BeforeName, b'>') => return close(i + 1, false, false),
            (St::BeforeName, _) => St::Name(i),
            (St::Name(a), c) if is_space(c) => St::AfterName((a, i)),
            (St::Name(a), b'=') => St::BeforeValue((a, i)),
            (St::Name(a), b'/') => {
                push((a, i), (i, i));
                St::SelfClosing
            }
            (St::Name(a), b'>') => {
                push((a, i), (i, i));
                return close(i + 1, false, false);
            }
            (St::Name(a), _) => St::Name(a),
            (St::AfterName(_), c) if is_space(c) => st,
            (St::AfterName(n), b'/') => {
                push(n, (i, i));
                St::SelfClosing
            }
            (St::AfterName(n), b'=') => St::BeforeValue(n),
            (St::AfterName(n), b'>') => {
                push(n, (i, i));
                return close(i + 1, false, false);
            }
            (St::AfterName(n), _) => {
                push(n, (i, i));
                St::Name(i)
            }
            (St::BeforeValue(_), c) if is_space(c) => st,
            (St::BeforeValue(n), b'"' | b'\'') => {
                let to = i + 1 + memchr(c, &s[i + 1..])?;
                push(n, (i + 1, to));
                i = to;
                St::BeforeName
            }
            (St::BeforeValue(n), b'>') => {
                push(n, (i, i));
                return close(i + 1, false, true);
            }
            (St::BeforeValue(n), _) => {
                let len = s[i..].iter().position(|&c| is_space(c) || c == b'>')?;
                let to = i + len;
                push(n, (i, to));
                if s[to] == b'>' {
                    return close(to + 1, false, false);
                }
                i = to;
                St::BeforeName
            }
            (St::SelfClosing, b'>') => return close(i + 1, true, false),
            // Reconsumed as the start of an attribute name.
            (St::SelfClosing, _) => {
                st = St::BeforeName;
                continue;
            }
        };
        i += 1;
    }
}
