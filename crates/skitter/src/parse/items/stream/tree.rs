//! The element tree a page's tokens build, followed one token at a time for
//! the pages where that is easy to do exactly, and a refusal for the others.
//!
//! html5ever's tree builder (the DOM path) implements the whole of the HTML
//! standard's tree construction; this follows only the part of it that clean
//! markup exercises, and declines ([`Declined`]) the moment a token would take
//! it anywhere else, so that every tree it does follow is html5ever's:
//!
//! - the `html`, `head` and `body` elements, written or implied, with only
//!   `title`, `script`, `style`, `meta`, `link`, `base`, `basefont` and
//!   `bgsound` in the head (and nothing but whitespace between head and body);
//! - in the body, elements pushed on their start tag and popped by their end
//!   tag, void elements never pushed, and the implied end tags clean markup
//!   leans on: an open `p` closed by a block-level start tag (`<p>a<p>b`),
//!   `li`/`dd`/`dt` closed by the next one, an end tag such as `</ul>` or
//!   `</p>` closing the `li`/`p`/… elements still open inside it, `</body>`
//!   and `</html>` (which close nothing);
//! - a leading newline dropped after `<pre>` and `<listing>`.
//!
//! Declined, among others: any implied close or stray end tag that would
//! leave a formatting element (`b`, `i`, `a`, …) to be reopened later (the
//! adoption agency and the reconstruction of formatting elements), nested
//! `a`, `nobr`, `button` or `form`; tables and their parts (implied `tbody`,
//! foster parenting); `select`, `option`, ruby, `textarea`, `xmp`, `iframe`,
//! `noembed`, `noscript`, `noframes`, `plaintext`, `template`, `applet`,
//! `marquee`, `object`, `frameset`, SVG and MathML; a second `html`, `head`
//! or `body` tag; an end tag with nothing to close; nesting deeper than
//! [`MAX_DEPTH`].
//!
//! Each token costs at most [`MAX_DEPTH`] steps, so following a page is
//! linear in its length.

/// Open elements followed at most; deeper pages read the DOM.
pub(crate) const MAX_DEPTH: usize = 256;

use std::borrow::Cow;

/// The page's tree is not one this module follows exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Declined;

/// What the tree builder's caller learns as it goes.
pub(crate) trait Sink {
    /// An element was pushed: it is the last of `stack`.
    fn opened(&mut self, stack: &[Open<'_>]);
    /// The element at this depth (index in the stack) was popped.
    fn closed(&mut self, depth: usize);
}

/// An attribute of an open element: its name lower case, its value decoded;
/// both borrowed from the page where they are written so.
pub(crate) type Attr<'t> = (Cow<'t, str>, Cow<'t, str>);

/// One open element.
#[derive(Debug)]
pub(crate) struct Open<'t> {
    pub name: Cow<'t, str>,
    /// The lists of this module the name is in ([`kind`]), looked up once.
    kind: u16,
    /// Names lower case, values decoded, the first of duplicate names.
    pub attrs: Vec<Attr<'t>>,
}

impl Open<'_> {
    fn is(&self, list: u16) -> bool {
        self.kind & list != 0
    }
}

impl crate::parse::items::select::Elem for Open<'_> {
    fn name(&self) -> &str {
        &self.name
    }
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_ref())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    BeforeHtml,
    BeforeHead,
    InHead,
    AfterHead,
    InBody,
}

/// The tree so far.
#[derive(Debug)]
pub(crate) struct Tree<'t> {
    phase: Phase,
    stack: Vec<Open<'t>>,
    form_open: bool,
    /// A `\n` at the start of the next text is dropped (after `<pre>`).
    skip_lf: bool,
}

// The element lists of the HTML standard's tree construction this module
// uses. The code asks `kind` (one `match`, tested against these lists).
#[cfg(test)]
const VOID: [&str; 16] = [
    "area", "br", "embed", "img", "keygen", "wbr", "input", "param", "source", "track", "hr",
    "base", "basefont", "bgsound", "link", "meta",
];
#[cfg(test)]
const HEAD_VOID: [&str; 5] = ["base", "basefont", "bgsound", "link", "meta"];
#[cfg(test)]
const HEAD_RAW: [&str; 3] = ["title", "script", "style"];
#[cfg(test)]
const FORMATTING: [&str; 14] = [
    "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u",
];
/// Start tags that close an open `p` first.
#[cfg(test)]
const CLOSES_P: [&str; 25] = [
    "address",
    "article",
    "aside",
    "blockquote",
    "center",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "header",
    "hgroup",
    "main",
    "menu",
    "nav",
    "ol",
    "p",
    "search",
    "section",
    "summary",
    "ul",
];
#[cfg(test)]
const HEADINGS: [&str; 6] = ["h1", "h2", "h3", "h4", "h5", "h6"];
/// End tags that close what is open inside them, in the default scope.
#[cfg(test)]
const BLOCK_END: [&str; 27] = [
    "address",
    "article",
    "aside",
    "blockquote",
    "button",
    "center",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "header",
    "hgroup",
    "listing",
    "main",
    "menu",
    "nav",
    "ol",
    "pre",
    "search",
    "section",
    "summary",
    "ul",
];
/// What "generate implied end tags" pops.
#[cfg(test)]
const IMPLIED_END: [&str; 10] = [
    "dd", "dt", "li", "option", "optgroup", "p", "rb", "rp", "rt", "rtc",
];
/// Start tags this module does not follow.
#[cfg(test)]
const DECLINED: [&str; 36] = [
    "html",
    "head",
    "body",
    "frameset",
    "frame",
    "table",
    "caption",
    "col",
    "colgroup",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "select",
    "option",
    "optgroup",
    "selectedcontent",
    "rb",
    "rp",
    "rt",
    "rtc",
    "textarea",
    "xmp",
    "iframe",
    "noembed",
    "noscript",
    "noframes",
    "plaintext",
    "template",
    "applet",
    "marquee",
    "object",
    "math",
    "svg",
];
/// html5ever's "special" elements (an end tag's search stops at them).
#[cfg(test)]
const SPECIAL: [&str; 83] = [
    "address",
    "applet",
    "area",
    "article",
    "aside",
    "base",
    "basefont",
    "bgsound",
    "blockquote",
    "body",
    "br",
    "button",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "details",
    "dir",
    "div",
    "dl",
    "dt",
    "embed",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hgroup",
    "hr",
    "html",
    "iframe",
    "img",
    "input",
    "isindex",
    "li",
    "link",
    "listing",
    "main",
    "marquee",
    "menu",
    "meta",
    "nav",
    "noembed",
    "noframes",
    "noscript",
    "object",
    "ol",
    "p",
    "param",
    "plaintext",
    "pre",
    "script",
    "section",
    "select",
    "source",
    "style",
    "summary",
    "table",
    "tbody",
    "td",
    "template",
    "textarea",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "track",
    "ul",
    "wbr",
    "xmp",
    "image",
];

// One bit per list above, so that a name is looked up once (a binary search)
// rather than compared with every entry of every list it is tested against.
const VOID_F: u16 = 1;
const HEAD_VOID_F: u16 = 1 << 1;
const HEAD_RAW_F: u16 = 1 << 2;
const FORMATTING_F: u16 = 1 << 3;
const CLOSES_P_F: u16 = 1 << 4;
const HEADINGS_F: u16 = 1 << 5;
const BLOCK_END_F: u16 = 1 << 6;
const IMPLIED_END_F: u16 = 1 << 7;
const DECLINED_F: u16 = 1 << 8;
const SPECIAL_F: u16 = 1 << 9;

/// The lists `name` is in, as bits: one `match`, which the compiler turns
/// into a few comparisons, rather than a scan of each list (a test checks it
/// against the lists).
fn kind(name: &str) -> u16 {
    match name {
        "applet" | "body" | "caption" | "col" | "colgroup" | "frame" | "frameset" | "head"
        | "html" | "iframe" | "marquee" | "noembed" | "noframes" | "noscript" | "object"
        | "plaintext" | "select" | "table" | "tbody" | "td" | "template" | "textarea" | "tfoot"
        | "th" | "thead" | "tr" | "xmp" => DECLINED_F | SPECIAL_F,
        "address" | "article" | "aside" | "blockquote" | "center" | "details" | "dir" | "div"
        | "dl" | "fieldset" | "figcaption" | "figure" | "footer" | "header" | "hgroup" | "main"
        | "menu" | "nav" | "ol" | "section" | "summary" | "ul" => {
            CLOSES_P_F | BLOCK_END_F | SPECIAL_F
        }
        "a" | "b" | "big" | "code" | "em" | "font" | "i" | "nobr" | "s" | "small" | "strike"
        | "strong" | "tt" | "u" => FORMATTING_F,
        "area" | "br" | "embed" | "hr" | "img" | "input" | "param" | "source" | "track" | "wbr" => {
            VOID_F | SPECIAL_F
        }
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => HEADINGS_F | SPECIAL_F,
        "optgroup" | "option" | "rb" | "rp" | "rt" | "rtc" => IMPLIED_END_F | DECLINED_F,
        "base" | "basefont" | "bgsound" | "link" | "meta" => VOID_F | HEAD_VOID_F | SPECIAL_F,
        "button" | "listing" | "pre" => BLOCK_END_F | SPECIAL_F,
        "math" | "selectedcontent" | "svg" => DECLINED_F,
        "script" | "style" | "title" => HEAD_RAW_F | SPECIAL_F,
        "dd" | "dt" | "li" => IMPLIED_END_F | SPECIAL_F,
        "form" | "image" | "isindex" => SPECIAL_F,
        "dialog" | "search" => CLOSES_P_F | BLOCK_END_F,
        "p" => CLOSES_P_F | IMPLIED_END_F | SPECIAL_F,
        "keygen" => VOID_F,
        _ => 0,
    }
}

/// Elements whose content the tokenizer reads as text up to their own end
/// tag, among those the tree follows (the `HEAD_RAW` list).
pub(crate) fn raw_text_element(name: &str) -> Option<&'static str> {
    match name {
        "title" => Some("title"),
        "script" => Some("script"),
        "style" => Some("style"),
        _ => None,
    }
}

fn is(name: &str, list: u16) -> bool {
    kind(name) & list != 0
}

/// Which elements bound a scope search (the ones this module can hold).
#[derive(Clone, Copy)]
enum Scope {
    Default,
    Button,
    ListItem,
}

impl Scope {
    fn bounds(self, name: &str) -> bool {
        name == "html"
            || match self {
                Scope::Default => false,
                Scope::Button => name == "button",
                Scope::ListItem => name == "ol" || name == "ul",
            }
    }
}

impl<'t> Tree<'t> {
    pub(crate) fn new() -> Tree<'t> {
        Tree {
            phase: Phase::BeforeHtml,
            // Deep enough for most pages without growing (a grow is a copy).
            stack: Vec::with_capacity(16),
            form_open: false,
            skip_lf: false,
        }
    }

    /// A start tag; `attrs` as for [`Open::attrs`].
    pub(crate) fn start(
        &mut self,
        name: Cow<'t, str>,
        attrs: Vec<Attr<'t>>,
        sink: &mut impl Sink,
    ) -> Result<(), Declined> {
        self.skip_lf = false;
        let kind = kind(&name);
        let el = Open { name, kind, attrs };
        let name: &str = &el.name;
        loop {
            match self.phase {
                Phase::BeforeHtml => {
                    self.phase = Phase::BeforeHead;
                    if name == "html" {
                        return self.push(el, sink);
                    }
                    self.push(implied("html"), sink)?;
                }
                Phase::BeforeHead => {
                    self.phase = Phase::InHead;
                    if name == "head" {
                        return self.push(el, sink);
                    }
                    self.push(implied("head"), sink)?;
                }
                Phase::InHead => {
                    if el.is(HEAD_VOID_F) {
                        return self.void(el, sink);
                    }
                    if el.is(HEAD_RAW_F) {
                        return self.push(el, sink);
                    }
                    if matches!(name, "html" | "head" | "noscript" | "noframes" | "template") {
                        return Err(Declined);
                    }
                    self.pop(sink); // the head
                    self.phase = Phase::AfterHead;
                }
                Phase::AfterHead => {
                    if el.is(HEAD_VOID_F | HEAD_RAW_F)
                        || matches!(name, "html" | "head" | "frameset")
                    {
                        return Err(Declined);
                    }
                    self.phase = Phase::InBody;
                    if name == "body" {
                        return self.push(el, sink);
                    }
                    self.push(implied("body"), sink)?;
                }
                Phase::InBody => return self.start_in_body(el, sink),
            }
        }
    }

    fn start_in_body(&mut self, el: Open<'t>, sink: &mut impl Sink) -> Result<(), Declined> {
        let name: &str = &el.name;
        if el.is(DECLINED_F) || name == "image" {
            return Err(Declined);
        }
        if matches!(name, "a" | "nobr" | "button") && self.find(name).is_some() {
            return Err(Declined);
        }
        if name == "form" && self.form_open {
            return Err(Declined);
        }
        if matches!(name, "li" | "dd" | "dt") {
            self.close_list_item(name, sink)?;
        }
        let closes_p = el.is(CLOSES_P_F | HEADINGS_F)
            || matches!(name, "pre" | "listing" | "form" | "hr" | "li" | "dd" | "dt");
        if closes_p && let Some(at) = self.in_scope(Scope::Button, |e| e.name == "p") {
            self.implied_end_except("p", sink);
            self.pop_to(at, sink)?;
        }
        if el.is(HEADINGS_F) && self.stack.last().is_some_and(|e| e.is(HEADINGS_F)) {
            return Err(Declined);
        }
        if el.is(VOID_F) {
            return self.void(el, sink);
        }
        self.form_open |= name == "form";
        self.skip_lf = matches!(name, "pre" | "listing");
        let skip_lf = self.skip_lf;
        self.push(el, sink)?;
        self.skip_lf = skip_lf;
        Ok(())
    }

    /// `<li>` closes an open `li` (`<dd>`/`<dt>` either of those) unless a
    /// special element other than `address`, `div` and `p` comes first.
    fn close_list_item(&mut self, name: &str, sink: &mut impl Sink) -> Result<(), Declined> {
        let targets: &[&str] = if name == "li" { &["li"] } else { &["dd", "dt"] };
        for i in (0..self.stack.len()).rev() {
            let e = &self.stack[i];
            let n: &str = &e.name;
            if targets.contains(&n) {
                // A 'static copy of the name, so the stack may change.
                let n = match n {
                    "li" => "li",
                    "dd" => "dd",
                    _ => "dt",
                };
                self.implied_end_except(n, sink);
                return self.pop_to(i, sink);
            }
            if e.is(SPECIAL_F) && !matches!(n, "address" | "div" | "p") {
                break;
            }
        }
        Ok(())
    }

    /// An end tag.
    pub(crate) fn end(&mut self, name: &str, sink: &mut impl Sink) -> Result<(), Declined> {
        self.skip_lf = false;
        match self.phase {
            Phase::InHead if name == "head" => {
                self.pop(sink);
                self.phase = Phase::AfterHead;
                return Ok(());
            }
            Phase::InHead if self.current() == Some(name) && is(name, HEAD_RAW_F) => {
                self.pop(sink);
                return Ok(());
            }
            Phase::InBody => {}
            _ => return Err(Declined),
        }
        if matches!(name, "body" | "html") {
            // They only change the insertion mode; what follows still goes
            // into the open elements.
            return Ok(());
        }
        let kind = kind(name);
        if kind & FORMATTING_F != 0 {
            return if self.current() == Some(name) {
                self.pop(sink);
                Ok(())
            } else {
                Err(Declined)
            };
        }
        let at = if name == "p" {
            self.in_scope(Scope::Button, |e| e.name == "p")
        } else if name == "li" {
            self.in_scope(Scope::ListItem, |e| e.name == "li")
        } else if matches!(name, "dd" | "dt") || kind & BLOCK_END_F != 0 {
            self.in_scope(Scope::Default, |e| e.name == name)
        } else if kind & HEADINGS_F != 0 {
            self.in_scope(Scope::Default, |e| e.is(HEADINGS_F))
        } else if name == "form" {
            if !self.form_open {
                return Err(Declined);
            }
            self.implied_end_except("", sink);
            if self.current() != Some("form") {
                return Err(Declined);
            }
            self.form_open = false;
            self.pop(sink);
            return Ok(());
        } else {
            // Any other end tag: the nearest element of that name, unless a
            // special element comes first.
            let mut found = None;
            for i in (0..self.stack.len()).rev() {
                let e = &self.stack[i];
                if e.name == name {
                    found = Some(i);
                    break;
                }
                if e.is(SPECIAL_F) {
                    break;
                }
            }
            found
        };
        let at = at.ok_or(Declined)?;
        let except = if matches!(name, "p" | "li" | "dd" | "dt") {
            name
        } else {
            ""
        };
        self.implied_end_except(except, sink);
        self.pop_to(at, sink)
    }

    /// A text node (entities decoded, CR LF as LF): where it goes is the
    /// current element; returns the part of it the tree keeps.
    pub(crate) fn text<'x>(
        &mut self,
        text: &'x str,
        sink: &mut impl Sink,
    ) -> Result<&'x str, Declined> {
        let text = if std::mem::take(&mut self.skip_lf) {
            text.strip_prefix('\n').unwrap_or(text)
        } else {
            text
        };
        let blank = text
            .chars()
            .all(|c| matches!(c, ' ' | '\t' | '\n' | '\x0C' | '\r'));
        let raw_current = self.stack.last().is_some_and(|e| e.is(HEAD_RAW_F));
        if !blank && !raw_current {
            self.enter_body(sink)?;
        }
        // Leading and head whitespace the DOM drops or places elsewhere
        // changes no collapsed text; into the current element it goes.
        Ok(text)
    }

    /// Opens what html5ever implies before body content (or at the end of
    /// the page): `html`, `head` and `body`, as far as not yet open.
    fn enter_body(&mut self, sink: &mut impl Sink) -> Result<(), Declined> {
        loop {
            match self.phase {
                Phase::BeforeHtml => {
                    self.phase = Phase::BeforeHead;
                    self.push(implied("html"), sink)?;
                }
                Phase::BeforeHead => {
                    self.phase = Phase::InHead;
                    self.push(implied("head"), sink)?;
                }
                Phase::InHead => {
                    // An unclosed `title`, `script` or `style` ends with the page.
                    while self.current().is_some_and(|n| n != "head") {
                        self.pop(sink);
                    }
                    self.pop(sink);
                    self.phase = Phase::AfterHead;
                }
                Phase::AfterHead => {
                    self.phase = Phase::InBody;
                    self.push(implied("body"), sink)?;
                }
                Phase::InBody => return Ok(()),
            }
        }
    }

    /// A comment or doctype: no element changes.
    pub(crate) fn other(&mut self) {
        self.skip_lf = false;
    }

    /// The end of the page: everything open closes.
    pub(crate) fn finish(&mut self, sink: &mut impl Sink) -> Result<(), Declined> {
        self.enter_body(sink)?;
        while !self.stack.is_empty() {
            self.pop(sink);
        }
        Ok(())
    }

    /// The name of the current (innermost open) element.
    pub(crate) fn current(&self) -> Option<&str> {
        self.stack.last().map(|e| e.name.as_ref())
    }

    fn find(&self, name: &str) -> Option<usize> {
        self.stack.iter().rposition(|e| e.name == name)
    }

    /// The nearest open element that `is_target`, unless a scope boundary
    /// comes first.
    fn in_scope(&self, scope: Scope, is_target: impl Fn(&Open<'t>) -> bool) -> Option<usize> {
        for i in (0..self.stack.len()).rev() {
            let e = &self.stack[i];
            if is_target(e) {
                return Some(i);
            }
            if scope.bounds(&e.name) {
                return None;
            }
        }
        None
    }

    /// Pops the elements HTML closes implicitly, except `except`.
    fn implied_end_except(&mut self, except: &str, sink: &mut impl Sink) {
        while let Some(e) = self.stack.last() {
            if e.name == except || !e.is(IMPLIED_END_F) {
                break;
            }
            self.pop(sink);
        }
    }

    /// Pops down to and including the element at `at`; declines if that
    /// closes a formatting element other than by its own end tag (html5ever
    /// would reopen it later).
    fn pop_to(&mut self, at: usize, sink: &mut impl Sink) -> Result<(), Declined> {
        if at >= self.stack.len() {
            return Ok(());
        }
        if self.stack[at + 1..].iter().any(|e| e.is(FORMATTING_F)) {
            return Err(Declined);
        }
        while self.stack.len() > at {
            self.pop(sink);
        }
        Ok(())
    }

    fn push(&mut self, el: Open<'t>, sink: &mut impl Sink) -> Result<(), Declined> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(Declined);
        }
        self.skip_lf = false;
        self.stack.push(el);
        sink.opened(&self.stack);
        Ok(())
    }

    fn void(&mut self, el: Open<'t>, sink: &mut impl Sink) -> Result<(), Declined> {
        self.push(el, sink)?;
        self.pop(sink);
        Ok(())
    }

    fn pop(&mut self, sink: &mut impl Sink) {
        if self.stack.pop().is_some() {
            sink.closed(self.stack.len());
        }
    }
}

fn implied(name: &'static str) -> Open<'static> {
    Open {
        name: Cow::Borrowed(name),
        kind: kind(name),
        attrs: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_says_which_lists_a_name_is_in() {
        let lists: [(&[&str], u16); 10] = [
            (&VOID, VOID_F),
            (&HEAD_VOID, HEAD_VOID_F),
            (&HEAD_RAW, HEAD_RAW_F),
            (&FORMATTING, FORMATTING_F),
            (&CLOSES_P, CLOSES_P_F),
            (&HEADINGS, HEADINGS_F),
            (&BLOCK_END, BLOCK_END_F),
            (&IMPLIED_END, IMPLIED_END_F),
            (&DECLINED, DECLINED_F),
            (&SPECIAL, SPECIAL_F),
        ];
        let mut names: Vec<&str> = lists.iter().flat_map(|(l, _)| l.iter().copied()).collect();
        names.extend(["span", "p-x", "DIV", "", "h7", "custom-el"]);
        for name in names {
            for (list, bit) in lists {
                assert_eq!(
                    raw_text_element(name).is_some(),
                    HEAD_RAW.contains(&name),
                    "{name:?}"
                );
                assert_eq!(
                    kind(name) & bit != 0,
                    list.contains(&name),
                    "{name:?} and list bit {bit}"
                );
            }
        }
    }
}
