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

/// The page's tree is not one this module follows exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Declined;

/// What the tree builder's caller learns as it goes.
pub(crate) trait Sink {
    /// An element was pushed: it is the last of `stack`.
    fn opened(&mut self, stack: &[Open]);
    /// The element at this depth (index in the stack) was popped.
    fn closed(&mut self, depth: usize);
}

/// One open element.
#[derive(Debug)]
pub(crate) struct Open {
    pub name: String,
    /// Names lower case, values decoded, the first of duplicate names.
    pub attrs: Vec<(String, String)>,
}

impl super::select::Elem for Open {
    fn name(&self) -> &str {
        &self.name
    }
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
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
pub(crate) struct Tree {
    phase: Phase,
    stack: Vec<Open>,
    form_open: bool,
    /// A `\n` at the start of the next text is dropped (after `<pre>`).
    skip_lf: bool,
}

const VOID: [&str; 16] = [
    "area", "br", "embed", "img", "keygen", "wbr", "input", "param", "source", "track", "hr",
    "base", "basefont", "bgsound", "link", "meta",
];
const HEAD_VOID: [&str; 5] = ["base", "basefont", "bgsound", "link", "meta"];
const HEAD_RAW: [&str; 3] = ["title", "script", "style"];
const FORMATTING: [&str; 14] = [
    "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u",
];
/// Start tags that close an open `p` first.
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
const HEADINGS: [&str; 6] = ["h1", "h2", "h3", "h4", "h5", "h6"];
/// End tags that close what is open inside them, in the default scope.
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
const IMPLIED_END: [&str; 10] = [
    "dd", "dt", "li", "option", "optgroup", "p", "rb", "rp", "rt", "rtc",
];
/// Start tags this module does not follow.
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

fn is(name: &str, set: &[&str]) -> bool {
    set.contains(&name)
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

impl Tree {
    pub(crate) fn new() -> Tree {
        Tree {
            phase: Phase::BeforeHtml,
            stack: Vec::new(),
            form_open: false,
            skip_lf: false,
        }
    }

    /// A start tag; `attrs` as for [`Open::attrs`].
    pub(crate) fn start(
        &mut self,
        name: String,
        attrs: Vec<(String, String)>,
        sink: &mut impl Sink,
    ) -> Result<(), Declined> {
        self.skip_lf = false;
        let el = Open { name, attrs };
        let name = el.name.as_str();
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
                    if is(name, &HEAD_VOID) {
                        return self.void(el, sink);
                    }
                    if is(name, &HEAD_RAW) {
                        return self.push(el, sink);
                    }
                    if matches!(name, "html" | "head" | "noscript" | "noframes" | "template") {
                        return Err(Declined);
                    }
                    self.pop(sink); // the head
                    self.phase = Phase::AfterHead;
                }
                Phase::AfterHead => {
                    if is(name, &HEAD_VOID)
                        || is(name, &HEAD_RAW)
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

    fn start_in_body(&mut self, el: Open, sink: &mut impl Sink) -> Result<(), Declined> {
        let name = el.name.as_str();
        if is(name, &DECLINED) || name == "image" {
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
        let closes_p = is(name, &CLOSES_P)
            || is(name, &HEADINGS)
            || matches!(name, "pre" | "listing" | "form" | "hr" | "li" | "dd" | "dt");
        if closes_p && let Some(at) = self.in_scope(Scope::Button, |n| n == "p") {
            self.implied_end_except("p", sink);
            self.pop_to(at, sink)?;
        }
        if is(name, &HEADINGS) && self.current().is_some_and(|n| is(n, &HEADINGS)) {
            return Err(Declined);
        }
        if is(name, &VOID) {
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
            let n = self.stack[i].name.as_str();
            if is(n, targets) {
                let n = n.to_string();
                self.implied_end_except(&n, sink);
                return self.pop_to(i, sink);
            }
            if is(n, &SPECIAL) && !matches!(n, "address" | "div" | "p") {
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
            Phase::InHead if self.current() == Some(name) && is(name, &HEAD_RAW) => {
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
        if is(name, &FORMATTING) {
            return if self.current() == Some(name) {
                self.pop(sink);
                Ok(())
            } else {
                Err(Declined)
            };
        }
        let at = if name == "p" {
            self.in_scope(Scope::Button, |n| n == "p")
        } else if name == "li" {
            self.in_scope(Scope::ListItem, |n| n == "li")
        } else if matches!(name, "dd" | "dt") || is(name, &BLOCK_END) {
            self.in_scope(Scope::Default, |n| n == name)
        } else if is(name, &HEADINGS) {
            self.in_scope(Scope::Default, |n| is(n, &HEADINGS))
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
                let n = self.stack[i].name.as_str();
                if n == name {
                    found = Some(i);
                    break;
                }
                if is(n, &SPECIAL) {
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
    pub(crate) fn text<'t>(
        &mut self,
        text: &'t str,
        sink: &mut impl Sink,
    ) -> Result<&'t str, Declined> {
        let text = if std::mem::take(&mut self.skip_lf) {
            text.strip_prefix('\n').unwrap_or(text)
        } else {
            text
        };
        let blank = text
            .chars()
            .all(|c| matches!(c, ' ' | '\t' | '\n' | '\x0C' | '\r'));
        let raw_current = self.current().is_some_and(|n| is(n, &HEAD_RAW));
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
        self.stack.last().map(|e| e.name.as_str())
    }

    fn find(&self, name: &str) -> Option<usize> {
        self.stack.iter().rposition(|e| e.name == name)
    }

    /// The nearest open element that `is_target`, unless a scope boundary
    /// comes first.
    fn in_scope(&self, scope: Scope, is_target: impl Fn(&str) -> bool) -> Option<usize> {
        for i in (0..self.stack.len()).rev() {
            let n = self.stack[i].name.as_str();
            if is_target(n) {
                return Some(i);
            }
            if scope.bounds(n) {
                return None;
            }
        }
        None
    }

    /// Pops the elements HTML closes implicitly, except `except`.
    fn implied_end_except(&mut self, except: &str, sink: &mut impl Sink) {
        while let Some(n) = self.current() {
            if n == except || !is(n, &IMPLIED_END) {
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
        if self.stack[at + 1..]
            .iter()
            .any(|e| is(&e.name, &FORMATTING))
        {
            return Err(Declined);
        }
        while self.stack.len() > at {
            self.pop(sink);
        }
        Ok(())
    }

    fn push(&mut self, el: Open, sink: &mut impl Sink) -> Result<(), Declined> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(Declined);
        }
        self.skip_lf = false;
        self.stack.push(el);
        sink.opened(&self.stack);
        Ok(())
    }

    fn void(&mut self, el: Open, sink: &mut impl Sink) -> Result<(), Declined> {
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

fn implied(name: &str) -> Open {
    Open {
        name: name.to_string(),
        attrs: Vec::new(),
    }
}
