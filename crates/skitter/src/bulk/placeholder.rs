//! The `{…}` placeholders of the bulk fetcher's templates (file names, and
//! the URLs of later steps of a recipe) and what they stand for in one item.
//!
//! `{host}`, `{path}`, `{basename}`, `{query}` come from the URL, `{n}` (or
//! `{num}`) is the item's input position, `{1}`, `{2}`… are the values the
//! input pattern's ranges took (`[1-50]`, `{a,b}`), `{page}` is the page's
//! place in a chain, and `{NAME}` a value a recipe read from an earlier
//! response. `{{` and `}}` are literal braces. Each template says which of
//! them it accepts, so an unknown name is refused when the template is read.

/// One piece of a parsed template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    Text(String),
    Host,
    Path,
    Basename,
    Query,
    N,
    Page,
    /// A pattern range's value, from 1.
    Capture(usize),
    /// A value a recipe read.
    Var(String),
}

/// What an item's placeholders stand for, beyond its URL and position.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Values {
    /// The values the input pattern's ranges took, in order (`{1}`, `{2}`…).
    pub captures: Vec<String>,
    /// Values read from responses by name, in the order they were read.
    pub vars: Vec<(String, String)>,
    /// The page's place in its chain, from 1.
    pub page: u32,
}

impl Values {
    /// The value `piece` stands for, when it is a capture, a value or the page.
    pub(crate) fn get(&self, piece: &Piece) -> Option<String> {
        match piece {
            Piece::Capture(k) => self.captures.get(k.checked_sub(1)?).cloned(),
            Piece::Var(name) => self
                .vars
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone()),
            Piece::Page => Some(self.page.max(1).to_string()),
            _ => None,
        }
    }
}

/// Splits `template` into pieces; `known` says which value names exist.
/// Returns the reason for a person when it cannot be read.
pub(crate) fn parse(
    template: &str,
    url_parts: bool,
    known: &dyn Fn(&str) -> bool,
) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        text.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            text.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        let end = match tail.find('}') {
            Some(end) if tail.starts_with('{') => end,
            _ => {
                let at = template.len() - tail.len();
                return Err(format!("unmatched brace at byte {at}"));
            }
        };
        let piece = piece(&tail[1..end], url_parts, known)?;
        if !text.is_empty() {
            pieces.push(Piece::Text(std::mem::take(&mut text)));
        }
        pieces.push(piece);
        rest = &tail[end + 1..];
    }
    text.push_str(rest);
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

fn piece(name: &str, url_parts: bool, known: &dyn Fn(&str) -> bool) -> Result<Piece, String> {
    let piece = match name {
        "host" if url_parts => Piece::Host,
        "path" if url_parts => Piece::Path,
        "basename" if url_parts => Piece::Basename,
        "query" if url_parts => Piece::Query,
        "n" | "num" if url_parts => Piece::N,
        "page" => Piece::Page,
        _ if !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) => {
            match name.parse::<usize>() {
                Ok(k) if k >= 1 => Piece::Capture(k),
                _ => return Err(format!("{{{name}}}: pattern ranges are numbered from 1")),
            }
        }
        _ if known(name) => Piece::Var(name.to_string()),
        other => {
            let parts = if url_parts {
                "host, path, basename, query, n, num, "
            } else {
                ""
            };
            return Err(format!(
                "unknown placeholder {{{other}}} (use {parts}page, 1, 2… for pattern ranges, or a value's name)"
            ));
        }
    };
    Ok(piece)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_ranges_and_values() {
        let known = |n: &str| n == "country";
        let got = parse("{1}/{country}-{page}.gif", false, &known).unwrap();
        assert_eq!(
            got,
            [
                Piece::Capture(1),
                Piece::Text("/".into()),
                Piece::Var("country".into()),
                Piece::Text("-".into()),
                Piece::Page,
                Piece::Text(".gif".into()),
            ]
        );
        assert!(parse("{host}", false, &known).is_err());
        assert!(parse("{0}", false, &known).is_err());
        assert!(parse("{nope}", true, &known).is_err());
        let values = Values {
            captures: vec!["br".into()],
            vars: vec![("country".into(), "Brazil".into())],
            page: 0,
        };
        assert_eq!(values.get(&Piece::Capture(1)).as_deref(), Some("br"));
        assert_eq!(values.get(&Piece::Capture(2)), None);
        assert_eq!(values.get(&Piece::Page).as_deref(), Some("1"));
    }
}
