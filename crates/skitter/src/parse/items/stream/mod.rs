//! The streaming path: CSS fields read in one `lol_html` pass over the page,
//! without building a DOM, for rule sets that need nothing more.
//!
//! A rule set streams when it has no `item`, no `html:` field, and every CSS
//! selector is in the subset [`select`](super::select) evaluates (JSON and page-regex fields
//! never read the DOM anyway). Its values must be the DOM path's exactly, so
//! the pass follows the element tree html5ever would build ([`tree`]) and
//! gives up ([`Declined`]) on any page where that is not simple; the caller
//! then builds the DOM as before. The pass also declines when a value grows
//! past [`MAX_VALUE_BYTES`], when more than [`MAX_OPEN_CAPTURES`] matched
//! elements are open at once, when the page holds a NUL, when it nests deeper
//! than the DOM path reads (see `nesting`), and when the DOM path could run
//! out of its node-visit budget: on all of those the DOM path's own handling
//! (cuts, limits, failures) is the reference, so it runs.
//!
//! What the DOM path computes per field, and what the pass records instead:
//! the matching elements in document order (the order their start tags
//! come), at most one or [`MAX_MATCHES`]; for each, an attribute (decoded as
//! the tokenizer does) or its text (entities decoded in data and RCDATA,
//! script and style text as written, whitespace collapsed as `html::text`
//! does across every text node inside it).

mod tree;

use std::borrow::Cow;
use std::cell::RefCell;

use lol_html::html_content::Element;
use lol_html::{HtmlRewriter, Settings, doc_comments, doctype};

use crate::parse::links::LinkPass;
use crate::parse::links::parsed::{on_element, parsed_selector};

use super::limits::{MAX_MATCHES, MAX_NODE_VISITS, MAX_VALUE_BYTES};
use super::nesting;
use super::rule_set::{Field, RuleSet, Source, Take};
use super::select::{self, Target};
pub(crate) use tree::Declined;
use tree::{Attr, Open, Sink, Tree, raw_text_element};

/// Matched elements whose text is being collected at once, at most.
pub(crate) const MAX_OPEN_CAPTURES: usize = 64;

impl RuleSet {
    /// Whether this rule set can be read without a DOM.
    pub(crate) fn streams(&self) -> bool {
        self.item.is_none()
            && self.fields.iter().all(|f| match &f.source {
                Source::Css(_, Take::Html) => false,
                Source::Css(..) => f.stream.is_some(),
                Source::Text | Source::Json(_) => true,
            })
    }
}

/// The raw values of the streamed CSS fields, by rule set and field (`None`
/// for fields that are not CSS).
pub(crate) type Values = Vec<Vec<Option<Vec<String>>>>;

/// The CSS fields of `sets` read in a pass of their own, or why the DOM must
/// be read.
pub(crate) fn run(text: &str, sets: &[&RuleSet]) -> Result<Values, Declined> {
    let pass = StreamPass::new(text, sets.to_vec())?;
    // Not strict, as the link pass that the crawler runs the handlers in.
    let settings = pass.handlers(Settings::new().with_strict(false), None);
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    let written = rewriter
        .write(text.as_bytes())
        .and_then(|()| rewriter.end());
    pass.finish(written.is_ok())
}

/// One page's streaming pass: handlers to add to a `lol_html` pass over the
/// page's decoded text (alone, or the link extraction's), then the values.
pub(crate) struct StreamPass<'t, 'r> {
    pass: RefCell<Pass<'t, 'r>>,
    sets: Vec<&'r RuleSet>,
}

impl<'t, 'r> StreamPass<'t, 'r> {
    /// The pass for the CSS fields of `sets` (which must all
    /// [stream](RuleSet::streams)) over `text`; declined at once for a page
    /// with a NUL or nested deeper than the DOM path reads.
    pub(crate) fn new(text: &'t str, sets: Vec<&'r RuleSet>) -> Result<Self, Declined> {
        if memchr::memchr(0, text.as_bytes()).is_some() || nesting::too_deep_at(text).is_some() {
            return Err(Declined);
        }
        let count = sets.iter().map(|s| s.fields.len()).sum::<usize>();
        let mut fields = Vec::with_capacity(count);
        for (s, set) in sets.iter().enumerate() {
            for (f, field) in set.fields.iter().enumerate() {
                if let (Source::Css(_, take), Some(target)) = (&field.source, &field.stream) {
                    fields.push(Wanted::new(s, f, field, take, target));
                }
            }
        }
        let mut relevant: Vec<&'r str> = Vec::with_capacity(2 + 2 * fields.len());
        relevant.extend(["id", "class"]);
        for w in &fields {
            if let Take::Attr(name) = w.take {
                relevant.push(name);
            }
            if let Target::Sel(list) = w.target {
                list.attr_names(&mut relevant);
            }
        }
        let pass = Pass {
            text,
            tree: Tree::new(),
            capture: Capture {
                fields,
                active: Vec::new(),
                declined: false,
            },
            relevant,
            cursor: 0,
            declined: false,
            nodes: 4,
        };
        Ok(StreamPass {
            pass: RefCell::new(pass),
            sets,
        })
    }

    /// `settings` with the pass's handlers added.
    /// `links`, when given, is the link extraction sharing this pass: it
    /// gets every start tag from this pass's `*` handler (see
    /// [`LinkPass::takes_elements`]) instead of selectors of its own.
    pub(crate) fn handlers<'h>(
        &'h self,
        settings: Settings<'h, 'static>,
        links: Option<&'h LinkPass>,
    ) -> Settings<'h, 'static> {
        parsed_selector!(ANY = "*");
        let pass = &self.pass;
        let text: &'t str = pass.borrow().text;
        settings
            .append_element_content_handler(on_element!(ANY.get(), move |el| {
                let tag = start_tag(text, el);
                if let Some(links) = links {
                    match &tag {
                        Some(tag) => links.element(&tag.name, el),
                        None => links.element(&el.tag_name(), el),
                    }
                }
                guarded(pass, |p| p.on_start(el, tag));
                Ok(())
            }))
            .append_document_content_handler(doc_comments!(move |c| {
                guarded(pass, |p| p.on_other(c.source_location().bytes()));
                Ok(())
            }))
            .append_document_content_handler(doctype!(move |d| {
                guarded(pass, |p| p.on_other(d.source_location().bytes()));
                Ok(())
            }))
    }

    /// The values, after `lol_html` read the whole page (`written`) or not.
    pub(crate) fn finish(self, written: bool) -> Result<Values, Declined> {
        let mut pass = self.pass.into_inner();
        if !written {
            return Err(Declined);
        }
        pass.gap(pass.text.len());
        if pass.declined {
            return Err(Declined);
        }
        pass.tree.finish(&mut pass.capture)?;
        pass.capture.finish(&self.sets, pass.nodes)
    }
}

/// One CSS field the pass fills.
struct Wanted<'r> {
    set: usize,
    field: usize,
    take: &'r Take,
    target: &'r Target,
    max: usize,
    /// One entry per matched element: its attribute or text (`None`: the
    /// element lacks the attribute).
    values: Vec<Option<String>>,
}

impl<'r> Wanted<'r> {
    fn new(set: usize, field: usize, f: &'r Field, take: &'r Take, target: &'r Target) -> Self {
        Wanted {
            set,
            field,
            take,
            target,
            max: if f.all { MAX_MATCHES } else { 1 },
            values: Vec::new(),
        }
    }
}

/// Text being collected for one matched element, collapsed as it comes.
struct Active {
    wanted: usize,
    value: usize,
    depth: usize,
    space: bool,
}

/// The fields' state; the tree tells it what opens and closes.
struct Capture<'r> {
    fields: Vec<Wanted<'r>>,
    active: Vec<Active>,
    declined: bool,
}

impl Sink for Capture<'_> {
    fn opened(&mut self, stack: &[Open<'_>]) {
        let depth = stack.len() - 1;
        let el = &stack[depth];
        for (i, w) in self.fields.iter_mut().enumerate() {
            if w.values.len() >= w.max {
                continue;
            }
            let hit = match w.target {
                Target::Root => depth == 0,
                Target::Sel(list) => list.matches(stack),
            };
            if !hit {
                continue;
            }
            match w.take {
                Take::Attr(name) => w
                    .values
                    .push(select::Elem::attr(el, name).map(str::to_string)),
                _ => {
                    w.values.push(Some(String::new()));
                    self.active.push(Active {
                        wanted: i,
                        value: w.values.len() - 1,
                        depth,
                        space: false,
                    });
                }
            }
        }
        if self.active.len() > MAX_OPEN_CAPTURES {
            self.declined = true;
        }
    }

    fn closed(&mut self, depth: usize) {
        self.active.retain(|a| a.depth < depth);
    }
}

impl Capture<'_> {
    /// One text node, for every element collecting text.
    fn text(&mut self, t: &str) {
        for a in &mut self.active {
            let Some(out) = &mut self.fields[a.wanted].values[a.value] else {
                continue;
            };
            collapse_into(out, &mut a.space, t);
            if out.len() > MAX_VALUE_BYTES {
                self.declined = true;
            }
        }
    }

    /// The values, once the DOM path could not have run out of node visits
    /// on this page (each field's search and each element's text walk at
    /// most every node).
    fn finish(self, sets: &[&RuleSet], nodes: u64) -> Result<Values, Declined> {
        if self.declined {
            return Err(Declined);
        }
        let visits: u64 = self
            .fields
            .iter()
            .map(|w| nodes.saturating_mul(1 + w.values.len().max(1) as u64))
            .fold(0, u64::saturating_add);
        if visits >= MAX_NODE_VISITS {
            return Err(Declined);
        }
        let mut out: Values = sets.iter().map(|s| vec![None; s.fields.len()]).collect();
        for w in self.fields {
            out[w.set][w.field] = Some(w.values.into_iter().flatten().collect());
        }
        Ok(out)
    }
}

/// The pass's state between `lol_html`'s callbacks.
struct Pass<'t, 'r> {
    text: &'t str,
    tree: Tree<'t>,
    capture: Capture<'r>,
    /// Attribute names some selector or field reads; others are not kept.
    relevant: Vec<&'r str>,
    /// Where the last token seen ends: what lies between it and the next one
    /// is end tags, which `lol_html` does not report.
    cursor: usize,
    declined: bool,
    /// Nodes the DOM could hold at most (elements, text nodes, comments).
    nodes: u64,
}

impl<'t> Pass<'t, '_> {
    fn decline(&mut self) {
        self.declined = true;
    }

    fn live(&self) -> bool {
        !self.declined && !self.capture.declined
    }

    fn on_start(&mut self, el: &Element, tag: Option<StartTag<'t>>) {
        let at = el.source_location().bytes();
        self.gap(at.start);
        self.cursor = at.end;
        if !self.live() {
            return;
        }
        self.nodes += 1;
        if self.tree.current().and_then(raw_text_element).is_some() {
            // The tokenizer saw a tag where the tree has text: they disagree.
            return self.decline();
        }
        let text: &'t str = self.text;
        let Some(StartTag { name, rest }) = tag else {
            return self.decline();
        };
        if !is_plain_name(&name) || el.namespace_uri() != "http://www.w3.org/1999/xhtml" {
            return self.decline();
        }
        // Most tags carry no attribute at all: then `lol_html` is not asked
        // to list them.
        let has_attrs = rest
            .bytes()
            .any(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\x0C' | b'\r' | b'/' | b'>'));
        let mut attrs: Vec<Attr<'t>> = Vec::new();
        let listed: &[lol_html::html_content::Attribute<'_>] =
            if has_attrs { el.attributes() } else { &[] };
        for a in listed {
            // Names and values are read in place from the page (`lol_html`
            // reports where they are), so only the relevant ones are copied,
            // and only when a character reference or a CR changes them.
            let (n, raw) = match source_attr(text, a) {
                Some((n, v)) => (Cow::Borrowed(n), Cow::Borrowed(v)),
                None => (Cow::Owned(a.name()), Cow::Owned(a.value())),
            };
            let Some(&known) = self.relevant.iter().find(|r| r.eq_ignore_ascii_case(&n)) else {
                continue;
            };
            if attrs.iter().any(|(k, _)| k == known) {
                continue;
            }
            let key = match n {
                Cow::Borrowed(n) if n == known => Cow::Borrowed(n),
                _ => Cow::Owned(known.to_string()),
            };
            let value = match raw {
                Cow::Borrowed(v) if memchr::memchr2(b'&', b'\r', v.as_bytes()).is_none() => {
                    Cow::Borrowed(v)
                }
                raw => Cow::Owned(
                    crate::parse::links::decode_attribute(&normalize_newlines(&raw)).into_owned(),
                ),
            };
            attrs.push((key, value));
        }
        if self.tree.start(name, attrs, &mut self.capture).is_err() {
            self.decline();
        }
    }

    /// One text node, `raw` as written in the page; `raw_text` when it is
    /// the content of a `script` or `style` element (read as written, no
    /// character references).
    fn on_text(&mut self, raw: &str, raw_text: bool) {
        self.nodes += 1;
        let text = normalize_newlines(raw);
        let text = if raw_text {
            text
        } else {
            htmlize::unescape(text)
        };
        match self.tree.text(&text, &mut self.capture) {
            Ok(kept) => self.capture.text(kept),
            Err(Declined) => self.decline(),
        }
    }

    fn on_other(&mut self, at: std::ops::Range<usize>) {
        self.gap(at.start);
        self.cursor = at.end;
        self.nodes += 1;
        self.tree.other();
    }

    /// Reads what lies between the last token `lol_html` reported and
    /// `until`: text and end tags, which it does not report (asking it to
    /// would cost it a decoded text chunk or an end-tag callback each; the
    /// page's own bytes are already here). The text's kind follows from the
    /// element it is in, as the tokenizer's state does: the content of
    /// `title` is RCDATA, of `script` and `style` raw text up to their own
    /// end tag; the tree declines every other element with such content.
    /// Anything else there (a tag `lol_html` dropped) declines.
    fn gap(&mut self, until: usize) {
        if until <= self.cursor || !self.live() {
            return;
        }
        let Some(mut rest) = self.text.get(self.cursor..until) else {
            return self.decline();
        };
        self.cursor = until;
        while !rest.is_empty() && self.live() {
            let raw = self.tree.current().and_then(raw_text_element);
            let text_len = match raw {
                Some(name) => {
                    if name == "script" && rest.contains("<!--") {
                        // The script data escape states: not followed here.
                        return self.decline();
                    }
                    raw_text_end(rest, name)
                }
                None => match first_markup(rest.as_bytes()) {
                    Some(at) if rest.as_bytes()[at + 1] == b'/' => at,
                    // A tag or comment `lol_html` did not report: one cut
                    // off by the end of the page, which the DOM drops.
                    Some(_) => return self.decline(),
                    None => rest.len(),
                },
            };
            if text_len > 0 {
                let raw_text = raw.is_some_and(|n| n != "title");
                self.on_text(&rest[..text_len], raw_text);
                rest = &rest[text_len..];
                continue;
            }
            let Some(tag) = rest.strip_prefix("</") else {
                return self.decline();
            };
            let Some(close) = tag.find('>') else {
                return self.decline();
            };
            let inside = &tag[..close];
            let name_len = inside
                .bytes()
                .take_while(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\x0C' | b'\r' | b'/'))
                .count();
            let name = &inside[..name_len];
            // Written in lower case, as nearly every end tag is: no copy.
            let name: Cow<'_, str> = if name.bytes().any(|b| b.is_ascii_uppercase()) {
                Cow::Owned(name.to_ascii_lowercase())
            } else {
                Cow::Borrowed(name)
            };
            let tail = &inside[name_len..];
            let plain = name.as_bytes().first().is_some_and(u8::is_ascii_lowercase)
                && name.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_'
                })
                && !tail.contains(['"', '\'', '<', '=']);
            if !plain {
                return self.decline();
            }
            if self.tree.end(&name, &mut self.capture).is_err() {
                return self.decline();
            }
            rest = &tag[close + 1..];
        }
    }
}

/// Where the first start of a tag or comment in `bytes` is (`<` then a
/// letter, `/`, `!` or `?`: in data the tokenizer reads no such thing as
/// text). One `memchr` pass finds both where a gap's text ends (at `</`) and
/// whether markup `lol_html` did not report lies before it; a `memmem`
/// search for `</` built a searcher per gap, and cost more than the gap's text.
fn first_markup(bytes: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'<', bytes).find(|&at| {
        bytes
            .get(at + 1)
            .is_some_and(|b| b.is_ascii_alphabetic() || matches!(b, b'/' | b'!' | b'?'))
    })
}

/// Where the text inside raw-text element `name` ends in `rest`: at its end
/// tag (`</name` in any case, then whitespace, `/` or `>`), else at the end.
fn raw_text_end(rest: &str, name: &str) -> usize {
    let bytes = rest.as_bytes();
    let ends = memchr::memchr_iter(b'<', bytes).filter(|&at| bytes.get(at + 1) == Some(&b'/'));
    for at in ends {
        let after = &bytes[at + 2..];
        if after.len() > name.len()
            && after[..name.len()].eq_ignore_ascii_case(name.as_bytes())
            && matches!(
                after[name.len()],
                b' ' | b'\t' | b'\n' | b'\x0C' | b'\r' | b'/' | b'>'
            )
        {
            return at;
        }
    }
    rest.len()
}

/// Runs a handler's work; a panic in it declines the page (the DOM path
/// then runs, and its panics are the page's failures as they always were)
/// instead of unwinding through `lol_html` into the link extraction.
fn guarded<'t, 'r>(pass: &RefCell<Pass<'t, 'r>>, work: impl FnOnce(&mut Pass<'t, 'r>)) {
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        work(&mut pass.borrow_mut());
    }));
    if caught.is_err() {
        pass.borrow_mut().declined = true;
    }
}

/// Appends `t` to `out` as `html::text` collapses it: every run of
/// whitespace (`char::is_whitespace`) becomes one space, none at the start;
/// `space` carries a run pending across text nodes. Prose, words parted by
/// single spaces, is copied a stretch at a time: a push per character was
/// most of the pass's cost on pages of prose, and a push per word half of it.
fn collapse_into(out: &mut String, space: &mut bool, t: &str) {
    if let Some(words) = plain_prose(t) {
        if words.len() < t.len() && (t.starts_with(' ') || words.is_empty()) {
            *space = !out.is_empty();
        }
        if !words.is_empty() {
            if *space {
                out.push(' ');
            }
            out.push_str(words);
            *space = t.ends_with(' ');
        }
        return;
    }
    let bytes = t.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let run = i;
        while i < bytes.len() {
            match space_len(t, i) {
                0 => break,
                n => i += n,
            }
        }
        if i > run {
            *space = !out.is_empty();
        }
        if i == bytes.len() {
            return;
        }
        let start = i;
        loop {
            i = word_end(t, i);
            // One plain space between two words stays as it is.
            if bytes.get(i) == Some(&b' ') && i + 1 < bytes.len() && space_len(t, i + 1) == 0 {
                i += 1;
            } else {
                break;
            }
        }
        if *space {
            out.push(' ');
            *space = false;
        }
        out.push_str(&t[start..i]);
    }
}

/// `t` without one leading and one trailing space, when that leaves words
/// of printable ASCII parted by single spaces: the whole text then collapses
/// to itself. The checks are whole-slice folds without early exits, which
/// the compiler turns into vector code.
fn plain_prose(t: &str) -> Option<&str> {
    let bytes = t.as_bytes();
    let odd = bytes
        .iter()
        .fold(0u8, |acc, &b| acc | u8::from(b < b' ') | (b >> 7));
    let doubled = bytes
        .iter()
        .zip(bytes.iter().skip(1))
        .fold(0u8, |acc, (&a, &b)| acc | u8::from(a == b' ' && b == b' '));
    if odd | doubled != 0 {
        return None;
    }
    let t = t.strip_prefix(' ').unwrap_or(t);
    Some(t.strip_suffix(' ').unwrap_or(t))
}

/// The length of the whitespace character at `i` (a character boundary of
/// `s`), or 0 when it is not whitespace.
fn space_len(s: &str, i: usize) -> usize {
    match s.as_bytes()[i] {
        b' ' | b'\t'..=b'\r' => 1,
        b if b < 0x80 => 0,
        _ => s[i..]
            .chars()
            .next()
            .filter(|c| c.is_whitespace())
            .map_or(0, char::len_utf8),
    }
}

/// Where the first whitespace character at or after `i` (a character
/// boundary of `s`) starts, or the length of `s`: ASCII bytes are judged as
/// bytes, others as characters.
fn word_end(s: &str, mut i: usize) -> usize {
    let bytes = s.as_bytes();
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            if matches!(b, b' ' | b'\t'..=b'\r') {
                return i;
            }
            i += 1;
        } else {
            // `i` follows an ASCII byte or a whole character.
            let c = s[i..].chars().next().unwrap_or(' ');
            if c.is_whitespace() {
                return i;
            }
            i += c.len_utf8();
        }
    }
    bytes.len()
}

/// An attribute's name and value as written in `text`, when `lol_html` knows
/// where they are (it does for every attribute it read from the page).
fn source_attr<'t>(
    text: &'t str,
    a: &lol_html::html_content::Attribute<'_>,
) -> Option<(&'t str, &'t str)> {
    let name = text.get(a.name_source_location()?.bytes())?;
    let value = match a.value_source_location() {
        Some(at) => text.get(at.bytes())?,
        None => "",
    };
    Some((name, value))
}

/// Whether `name` is a tag name the tree follows: ASCII lower case letters,
/// digits, `-` and `_`, starting with a letter.
/// A start tag as the page writes it.
struct StartTag<'t> {
    /// Lower case: borrowed from the page when written so, as it nearly
    /// always is; `lol_html`'s own copy otherwise.
    name: Cow<'t, str>,
    /// What follows the name up to the tag's end.
    rest: &'t str,
}

/// The start tag of `el` in `text` (a start tag is `<`, the name, then
/// whitespace, `/` or `>`); `None` if `lol_html` places it outside the text.
fn start_tag<'t>(text: &'t str, el: &Element) -> Option<StartTag<'t>> {
    let after = text.get(el.source_location().bytes())?.get(1..)?;
    let len = after
        .bytes()
        .take_while(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\x0C' | b'\r' | b'/' | b'>'))
        .count();
    let (written, rest) = after.split_at(len);
    let name = if is_plain_name(written) {
        Cow::Borrowed(written)
    } else {
        Cow::Owned(el.tag_name())
    };
    Some(StartTag { name, rest })
}

fn is_plain_name(name: &str) -> bool {
    name.as_bytes().first().is_some_and(u8::is_ascii_lowercase)
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// CR LF and lone CR as LF, as the HTML tokenizer reads its input.
fn normalize_newlines(s: &str) -> Cow<'_, str> {
    if memchr::memchr(b'\r', s.as_bytes()).is_some() {
        Cow::Owned(s.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(s)
    }
}

#[cfg(test)]
mod tests;
