//! The CSS selectors the streaming path evaluates itself: a deliberately
//! small subset whose meaning is easy to state and equal to `scraper`'s.
//!
//! Accepted: type and universal selectors, `#id`, `.class`, attribute
//! selectors (`[a]`, `[a=v]`, `~=`, `|=`, `^=`, `$=`, `*=`) with a non-empty
//! value free of whitespace, the descendant and child combinators, and
//! comma-separated lists. Everything else (pseudo-classes, sibling
//! combinators, namespaces, escapes, `i`/`s` flags, attributes whose values
//! HTML compares without case) is refused, and the rule set then reads the
//! DOM. Matching needs only the element and its ancestors, which a single
//! pass over the page has at each start tag.
//!
//! A field's [`Target`] (the root, or a list in this subset) is worked out
//! when its rules are read and kept with the field for the streaming pass.

/// What a streamable CSS field selects.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    /// The root (`html`) element: a field without a selector.
    Root,
    /// Elements matching the selector.
    Sel(List),
}

impl Target {
    /// The target for a field's selector text, if the pass can evaluate it.
    pub(crate) fn of(css: &str) -> Option<Target> {
        if css.trim().is_empty() {
            Some(Target::Root)
        } else {
            List::parse(css).map(Target::Sel)
        }
    }
}

/// A selector list the streaming path can evaluate.
#[derive(Clone, Debug)]
pub(crate) struct List(Vec<Complex>);

/// Compound selectors from left to right; `child[i]` says whether part `i + 1`
/// must be a child (`>`) of part `i` rather than any descendant.
#[derive(Clone, Debug)]
struct Complex {
    parts: Vec<Compound>,
    child: Vec<bool>,
}

#[derive(Clone, Debug, Default)]
struct Compound {
    tag: Option<String>,
    ids: Vec<String>,
    classes: Vec<String>,
    attrs: Vec<AttrSel>,
}

#[derive(Clone, Debug)]
struct AttrSel {
    name: String,
    op: Op,
    value: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Exists,
    Equal,
    Includes,
    Dash,
    Prefix,
    Suffix,
    Substring,
}

/// An element as the matcher sees it: its lower-case name and its
/// attributes (names lower case, values decoded, the first of duplicates).
pub(crate) trait Elem {
    fn name(&self) -> &str;
    fn attr(&self, name: &str) -> Option<&str>;
}

impl List {
    /// Parses `css` if it is in the accepted subset.
    pub(crate) fn parse(css: &str) -> Option<List> {
        let mut list = Vec::new();
        for part in css.split(',') {
            list.push(complex(part)?);
        }
        Some(List(list))
    }

    /// Adds the attribute names the selectors read to `names`.
    pub(crate) fn attr_names<'a>(&'a self, names: &mut Vec<&'a str>) {
        for c in &self.0 {
            for part in &c.parts {
                names.extend(part.attrs.iter().map(|a| a.name.as_str()));
            }
        }
    }

    /// Whether the last element of `path` (its ancestors before it, the root
    /// first) matches.
    pub(crate) fn matches<E: Elem>(&self, path: &[E]) -> bool {
        self.0.iter().any(|c| c.matches(path))
    }
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// One complex selector: compounds separated by whitespace or `>`.
fn complex(s: &str) -> Option<Complex> {
    let bytes = s.as_bytes();
    let mut parts = Vec::new();
    let mut child = Vec::new();
    let mut pos = 0;
    let mut pending_child = false;
    loop {
        while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
            pos += 1;
        }
        if pos == bytes.len() {
            break;
        }
        if bytes[pos] == b'>' {
            if parts.is_empty() || pending_child {
                return None;
            }
            pending_child = true;
            pos += 1;
            continue;
        }
        let (compound, next) = compound(s, pos)?;
        if !parts.is_empty() {
            child.push(pending_child);
        }
        pending_child = false;
        parts.push(compound);
        pos = next;
    }
    if parts.is_empty() || pending_child {
        return None;
    }
    Some(Complex { parts, child })
}

/// A compound selector starting at `pos`, and where it ends.
fn compound(s: &str, mut pos: usize) -> Option<(Compound, usize)> {
    let bytes = s.as_bytes();
    let mut c = Compound::default();
    let name = |pos: usize| -> (String, usize) {
        let end = pos
            + bytes[pos..]
                .iter()
                .take_while(|b| is_name_byte(**b))
                .count();
        (s[pos..end].to_string(), end)
    };
    if bytes[pos] == b'*' {
        pos += 1;
    } else if bytes[pos].is_ascii_alphabetic() {
        let (n, end) = name(pos);
        c.tag = Some(n.to_ascii_lowercase());
        pos = end;
    }
    let start = pos;
    while pos < bytes.len() {
        match bytes[pos] {
            b'#' | b'.' => {
                let (n, end) = name(pos + 1);
                if n.is_empty() || n.as_bytes()[0].is_ascii_digit() || n.starts_with("--") {
                    return None;
                }
                if bytes[pos] == b'#' {
                    c.ids.push(n);
                } else {
                    c.classes.push(n);
                }
                pos = end;
            }
            b'[' => {
                let close = pos + s[pos..].find(']')?;
                c.attrs.push(attr_sel(&s[pos + 1..close])?);
                pos = close + 1;
            }
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0C' | b'>' => break,
            _ => return None,
        }
    }
    if pos == start && c.tag.is_none() && bytes.get(start.wrapping_sub(1)) != Some(&b'*') {
        return None;
    }
    Some((c, pos))
}

/// The inside of `[...]`.
fn attr_sel(inner: &str) -> Option<AttrSel> {
    let inner = inner.trim_matches(|c: char| c.is_ascii_whitespace());
    let name_len = inner.bytes().take_while(|b| is_name_byte(*b)).count();
    let name = inner[..name_len].to_ascii_lowercase();
    if name.is_empty() || !name.as_bytes()[0].is_ascii_alphabetic() {
        return None;
    }
    let rest = inner[name_len..].trim_start_matches(|c: char| c.is_ascii_whitespace());
    if rest.is_empty() {
        return Some(AttrSel {
            name,
            op: Op::Exists,
            value: String::new(),
        });
    }
    let (op, rest) = [
        ("~=", Op::Includes),
        ("|=", Op::Dash),
        ("^=", Op::Prefix),
        ("$=", Op::Suffix),
        ("*=", Op::Substring),
        ("=", Op::Equal),
    ]
    .into_iter()
    .find_map(|(t, op)| rest.strip_prefix(t).map(|r| (op, r)))?;
    let rest = rest.trim_matches(|c: char| c.is_ascii_whitespace());
    let value = match rest.as_bytes().first()? {
        q @ (b'"' | b'\'') => {
            let q = *q as char;
            let v = rest.strip_prefix(q)?.strip_suffix(q)?;
            if v.contains(q) {
                return None;
            }
            v
        }
        b if b.is_ascii_alphabetic() || *b == b'_' => {
            if !rest.bytes().all(is_name_byte) {
                return None;
            }
            rest
        }
        _ => return None,
    };
    let refused = value.is_empty()
        || value.contains(['\\', '\n', '\r', '\x0C', ' ', '\t'])
        || !value.is_ascii()
        || case_insensitive_in_html(&name);
    if refused {
        return None;
    }
    Some(AttrSel {
        name,
        op,
        value: value.to_string(),
    })
}

/// Attributes whose values selectors compare ignoring ASCII case in HTML
/// (the `selectors` crate's list, from the HTML standard): refused rather
/// than reimplemented.
fn case_insensitive_in_html(name: &str) -> bool {
    matches!(
        name,
        "accept"
            | "accept-charset"
            | "align"
            | "alink"
            | "axis"
            | "bgcolor"
            | "charset"
            | "checked"
            | "clear"
            | "codetype"
            | "color"
            | "compact"
            | "declare"
            | "defer"
            | "dir"
            | "direction"
            | "disabled"
            | "enctype"
            | "face"
            | "frame"
            | "hreflang"
            | "http-equiv"
            | "lang"
            | "language"
            | "link"
            | "media"
            | "method"
            | "multiple"
            | "nohref"
            | "noresize"
            | "noshade"
            | "nowrap"
            | "readonly"
            | "rel"
            | "rev"
            | "rules"
            | "scope"
            | "scrolling"
            | "selected"
            | "shape"
            | "target"
            | "text"
            | "type"
            | "valign"
            | "valuetype"
            | "vlink"
    )
}

impl Complex {
    /// Right to left over the path: `reach[i]` says the parts from the current
    /// one rightwards match with the current part on `path[i]`. Linear in the
    /// path's length per part, without backtracking.
    fn matches<E: Elem>(&self, path: &[E]) -> bool {
        let Some((last, ancestors)) = path.split_last() else {
            return false;
        };
        if !self.parts.last().is_some_and(|p| p.matches(last)) {
            return false;
        }
        // The highest index (nearest the subject) where the parts so far
        // can sit; for a descendant step any lower index will do, for a child
        // step only the one just below a matching position.
        let mut reach: Vec<bool> = vec![false; path.len()];
        reach[path.len() - 1] = true;
        for k in (0..self.parts.len() - 1).rev() {
            let part = &self.parts[k];
            let child = self.child[k];
            let mut next = vec![false; path.len()];
            let mut any_above = false;
            for i in (0..ancestors.len()).rev() {
                any_above |= reach[i + 1];
                let allowed = if child { reach[i + 1] } else { any_above };
                next[i] = allowed && part.matches(&ancestors[i]);
            }
            if !next.iter().any(|b| *b) {
                return false;
            }
            reach = next;
        }
        true
    }
}

impl Compound {
    fn matches<E: Elem>(&self, el: &E) -> bool {
        if self.tag.as_deref().is_some_and(|t| t != el.name()) {
            return false;
        }
        if !self.ids.iter().all(|id| el.attr("id") == Some(id.as_str())) {
            return false;
        }
        if !self.classes.is_empty() {
            let Some(classes) = el.attr("class") else {
                return false;
            };
            // scraper splits `class` on ASCII whitespace.
            if !self
                .classes
                .iter()
                .all(|c| classes.split_ascii_whitespace().any(|x| x == c))
            {
                return false;
            }
        }
        self.attrs.iter().all(|a| a.matches(el.attr(&a.name)))
    }
}

impl AttrSel {
    fn matches(&self, value: Option<&str>) -> bool {
        let Some(e) = value else {
            return false;
        };
        let s = self.value.as_str();
        match self.op {
            Op::Exists => true,
            Op::Equal => e == s,
            Op::Prefix => e.starts_with(s),
            Op::Suffix => e.ends_with(s),
            Op::Substring => e.contains(s),
            Op::Includes => e
                .split([' ', '\t', '\n', '\r', '\x0C'])
                .any(|part| part == s),
            Op::Dash => {
                e == s || (e.len() > s.len() && e.starts_with(s) && e.as_bytes()[s.len()] == b'-')
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct E(&'static str, Vec<(&'static str, &'static str)>);
    impl Elem for E {
        fn name(&self) -> &str {
            self.0
        }
        fn attr(&self, name: &str) -> Option<&str> {
            self.1.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
        }
    }

    #[test]
    fn parses_the_subset_and_refuses_the_rest() {
        for ok in [
            "h1",
            "*",
            "a[href]",
            "div.x > p#y",
            "ul li a[href^=http]",
            "p, h2",
            "[data-x='ab']",
            ".a.b",
        ] {
            assert!(List::parse(ok).is_some(), "{ok}");
        }
        for refused in [
            "p:first-child",
            "a + b",
            "a ~ b",
            "svg|a",
            "[type=text]",
            "[x=\"\"]",
            "[x=\"a b\"]",
            "[x=v i]",
            "a\\:b",
            "",
            "> p",
            "p >",
            "p,",
            "::before",
            ".1x",
        ] {
            assert!(List::parse(refused).is_none(), "{refused}");
        }
    }

    #[test]
    fn matches_along_the_ancestors() {
        let path = [
            E("html", vec![]),
            E("body", vec![("class", "main  wide")]),
            E("div", vec![("id", "d")]),
            E("p", vec![("data-l", "en-GB"), ("data-k", "a b")]),
        ];
        let yes = [
            "p",
            "body p",
            "body > div > p",
            "html p",
            ".main p",
            ".wide.main > #d p",
            "p[data-k~=b]",
            "p[data-l|=en]",
            "p[data-k^=a]",
            "p[data-k$=b]",
            "p[data-k*=b]",
            "span, p",
        ];
        for sel in yes {
            assert!(List::parse(sel).unwrap().matches(&path), "{sel}");
        }
        for sel in [
            "body > p",
            "div > div p",
            "p.x",
            "#x p",
            "p[data-l|=e]",
            "h1",
        ] {
            assert!(!List::parse(sel).unwrap().matches(&path), "{sel}");
        }
    }
}
