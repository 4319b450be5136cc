//! The pages mode's links without `lol_html`: a scanner that finds the start
//! tags of `a`, `area`, `base`, `meta` and `link` and the text of `<noscript>`,
//! by the same tokenizer rules `lol_html` follows.
//!
//! Why: on real documentation `lol_html` was a third of a crawl's CPU (about
//! 100 µs a 21 KB page). It tokenizes every tag fully, runs its selector
//! program on each, and allocates a `String` for every attribute a handler
//! reads; link discovery needs far less. This scanner jumps between `<` with
//! `memchr`, reads a tag's name, walks its attributes only to find where it
//! ends (keeping them only for the five link elements), and skips comments,
//! doctypes, raw text and script data the way the tokenizer does, so text
//! that is not markup never yields a link.
//!
//! It reproduces `lol_html`, not a browser, where the two differ, so that
//! the links do not depend on which path read a page: the tree-builder
//! feedback is `lol_html`'s simulator (`svg` and `math` enter foreign
//! content even when self-closing, the breakout tags leave it, CDATA only
//! inside it). Differential tests (`tests.rs`) hold the two to the same
//! links on generated markup and on the real pages of the content corpora.
//!
//! It departs from `lol_html` in one case, where `lol_html` contradicts
//! itself: after a raw-text element's start tag that ends in `=>`
//! (`<script async=>`), `lol_html`'s tag scanner reads data while its lexer,
//! which takes over at the next link element, reads script data that no
//! `</script>` ends — and `<script x=><svg></svg>` makes it panic ("Tag
//! should be a start tag at this point"). The scan reads raw text there, as
//! the HTML standard and browsers do, and reports that it departed.
//!
//! The one thing it does not model is a `<noscript>` that `lol_html` parses
//! as markup (inside `svg` or `math`), whose text nodes it hands over one
//! at a time: there [`scan`] gives up with [`Bail`] and the caller runs
//! `lol_html` on the page instead.
//!
//! Work is linear in the page: every byte is looked at a bounded number of
//! times, nothing recurses (a `<noscript>`'s text is handed to the sink, which
//! bounds its own passes), and the only growing buffers are the attribute
//! ranges of one tag and the namespace stack (one byte per `<svg>`/`<math>`).

mod raw;
mod token;

use self::token::{attributes, next_tag};

/// `lol_html`'s whitespace (the HTML tokenizer's, NUL aside).
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t' | b'\x0C')
}

/// Where a tag name ends.
fn ends_name(c: u8) -> bool {
    is_space(c) || c == b'/' || c == b'>'
}

/// The scan met markup it does not model; read the page with `lol_html`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Bail;

/// The link elements the scanner hands to its sink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Element {
    A,
    Area,
    Base,
    Meta,
    Link,
}

/// Where the scan's findings go.
pub(crate) trait Sink {
    /// A start tag of a link element.
    fn element(&mut self, element: Element, tag: &Tag<'_>);
    /// The text of a `<noscript>` (which the tokenizer reads as raw text),
    /// starting at byte `start` of the scanned text; true when reading it
    /// departed from `lol_html` (see [`scan`]).
    fn noscript(&mut self, start: usize, text: &str) -> Result<bool, Bail>;
}

/// An attribute as byte ranges of the text: its name, and its value as
/// written (empty when it has none).
#[derive(Clone, Copy, Debug)]
struct Attr {
    name: (usize, usize),
    value: (usize, usize),
}

/// A start tag, as a [`Sink`] sees it.
pub(crate) struct Tag<'t> {
    text: &'t str,
    start: usize,
    attrs: &'t [Attr],
}

impl<'t> Tag<'t> {
    /// Where the tag's `<` is.
    pub(crate) fn start(&self) -> usize {
        self.start
    }

    /// The value, as written, of the first attribute called `name` (ASCII
    /// case-insensitive), as `lol_html`'s `get_attribute` gives it.
    pub(crate) fn attr(&self, name: &str) -> Option<&'t str> {
        let text = self.text;
        self.attrs
            .iter()
            .find(|a| text.as_bytes()[a.name.0..a.name.1].eq_ignore_ascii_case(name.as_bytes()))
            .map(|a| text.get(a.value.0..a.value.1).unwrap_or_default())
    }
}

/// What the tokenizer reads after a start tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Text {
    Data,
    /// RCDATA and RAWTEXT end the same way: at the element's end tag.
    Raw(Kind),
    Script,
    Plain,
}

/// A tree-builder namespace, as `lol_html`'s simulator keeps them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ns {
    Html,
    Svg,
    MathMl,
}

/// The tag names the scan acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Link(Element),
    Noscript,
    Script,
    Plaintext,
    /// An element whose text is RCDATA or RAWTEXT (`title`, `style`, …).
    RawText(&'static [u8]),
    Svg,
    Math,
    Font,
    /// `mi`, `mo`, `mn`, `ms`, `mtext`: MathML's text integration points.
    MathText,
    /// `desc`, `foreignObject`: SVG's HTML integration points (with `title`).
    SvgPoint,
    Title,
    AnnotationXml,
    /// `p` and `br`, whose end tags also leave foreign content.
    PBr,
    /// A tag that leaves foreign content (`div`, `b`, `img`, …).
    Exit,
    Other,
}

/// The kind of a tag name.
fn classify(name: &[u8]) -> Kind {
    const LONGEST: usize = 14;
    if name.len() > LONGEST {
        return Kind::Other;
    }
    let mut low = [0u8; LONGEST];
    for (to, from) in low.iter_mut().zip(name) {
        *to = from.to_ascii_lowercase();
    }
    match &low[..name.len()] {
        b"a" => Kind::Link(Element::A),
        b"area" => Kind::Link(Element::Area),
        b"base" => Kind::Link(Element::Base),
        // `meta` also leaves foreign content; see `exits_foreign`.
        b"meta" => Kind::Link(Element::Meta),
        b"link" => Kind::Link(Element::Link),
        b"noscript" => Kind::Noscript,
        b"script" => Kind::Script,
        b"plaintext" => Kind::Plaintext,
        b"title" => Kind::Title,
        b"textarea" => Kind::RawText(b"textarea"),
        b"style" => Kind::RawText(b"style"),
        b"iframe" => Kind::RawText(b"iframe"),
        b"xmp" => Kind::RawText(b"xmp"),
        b"noembed" => Kind::RawText(b"noembed"),
        b"noframes" => Kind::RawText(b"noframes"),
        b"svg" => Kind::Svg,
        b"math" => Kind::Math,
        b"font" => Kind::Font,
        b"mi" | b"mo" | b"mn" | b"ms" | b"mtext" => Kind::MathText,
        b"desc" | b"foreignobject" => Kind::SvgPoint,
        b"annotation-xml" => Kind::AnnotationXml,
        b"p" | b"br" => Kind::PBr,
        b"b" | b"big" | b"blockquote" | b"body" | b"center" | b"code" | b"dd" | b"div" | b"dl"
        | b"dt" | b"em" | b"embed" | b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6" | b"head"
        | b"hr" | b"i" | b"img" | b"li" | b"listing" | b"menu" | b"nobr" | b"ol" | b"pre"
        | b"ruby" | b"s" | b"small" | b"span" | b"strong" | b"strike" | b"sub" | b"sup"
        | b"table" | b"tt" | b"u" | b"ul" | b"var" => Kind::Exit,
        _ => Kind::Other,
    }
}

impl Kind {
    /// A start tag that ends foreign content (`lol_html`'s list, the HTML
    /// standard's "breakout" tags).
    fn exits_foreign(self) -> bool {
        matches!(self, Kind::Exit | Kind::PBr | Kind::Link(Element::Meta))
    }

    /// The element's name, for finding the end of its raw text.
    fn raw_name(self) -> &'static [u8] {
        match self {
            Kind::RawText(name) => name,
            Kind::Title => b"title",
            Kind::Noscript => b"noscript",
            _ => b"",
        }
    }
}

/// A tag's place in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TagAt {
    /// Its `<`.
    lt: usize,
    /// Its name.
    name: (usize, usize),
    end: bool,
}

/// How a tag's attributes ended.
struct Close {
    /// The first byte after its `>`.
    next: usize,
    self_closing: bool,
    /// It ended in `=>`.
    eq_gt: bool,
}

/// Tree-builder feedback that needs the tag's attributes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Later {
    None,
    /// An integration point: HTML inside unless self-closing.
    EnterUnlessSelfClosing,
    /// `<font>` with `color`, `face` or `size` leaves foreign content.
    Font,
    /// `<annotation-xml encoding="text/html">` holds HTML.
    Annotation,
}

/// Scans `text` for the pages mode's links, handing them to `sink`: true
/// when it departed from `lol_html` (see the module's header).
pub(crate) fn scan(text: &str, sink: &mut impl Sink) -> Result<bool, Bail> {
    let mut scanner = Scanner {
        text,
        ns: vec![Ns::Html],
        attrs: Vec::new(),
        departed: false,
    };
    scanner.run(sink)?;
    Ok(scanner.departed)
}

struct Scanner<'t> {
    text: &'t str,
    /// The namespace stack; never empty.
    ns: Vec<Ns>,
    attrs: Vec<Attr>,
    departed: bool,
}

impl Scanner<'_> {
    fn run(&mut self, sink: &mut impl Sink) -> Result<(), Bail> {
        let s = self.text.as_bytes();
        let (mut i, mut text) = (0, Text::Data);
        loop {
            let tag = match text {
                Text::Plain => return Ok(()),
                Text::Data => next_tag(s, i, self.current() != Ns::Html),
                Text::Script => raw::script_end(s, i),
                Text::Raw(kind) => {
                    let tag = raw::raw_text_end(s, i, kind.raw_name());
                    if kind == Kind::Noscript {
                        let end = tag.map_or(s.len(), |t| t.lt);
                        let inner = self.text.get(i..end).unwrap_or_default();
                        self.departed |= sink.noscript(i, inner)?;
                    }
                    tag
                }
            };
            let Some(tag) = tag else { return Ok(()) };
            let Some((next, after)) = self.tag(tag, sink)? else {
                return Ok(());
            };
            (i, text) = (next, after);
        }
    }

    fn current(&self) -> Ns {
        *self.ns.last().unwrap_or(&Ns::Html)
    }

    fn enter(&mut self, ns: Ns) {
        self.ns.push(ns);
    }

    /// Leaves the current namespace; the document's own is never left.
    fn leave(&mut self) {
        if self.ns.len() > 1 {
            self.ns.pop();
        }
    }

    /// Reads one tag from its name on: the tree-builder feedback, its
    /// attributes, the sink's call. The first byte after it and what
    /// follows it, or `None` when the text ends inside it.
    fn tag(&mut self, tag: TagAt, sink: &mut impl Sink) -> Result<Option<(usize, Text)>, Bail> {
        let s = self.text.as_bytes();
        let kind = classify(&s[tag.name.0..tag.name.1]);
        if tag.end {
            self.end_feedback(kind);
            return Ok(
                attributes(s, tag.name.1, &mut self.attrs, false).map(|c| (c.next, Text::Data))
            );
        }
        let ns = self.current();
        let (after, later) = self.start_feedback(kind);
        let keep = matches!(kind, Kind::Link(_)) || later != Later::None;
        let Some(close) = attributes(s, tag.name.1, &mut self.attrs, keep) else {
            return Ok(None);
        };
        self.later(later, close.self_closing);
        self.departed |= after != Text::Data && close.eq_gt;
        if kind == Kind::Noscript && ns != Ns::Html {
            return Err(Bail);
        }
        if let Kind::Link(element) = kind {
            let found = Tag {
                text: self.text,
                start: tag.lt,
                attrs: &self.attrs,
            };
            sink.element(element, &found);
        }
        Ok(Some((close.next, after)))
    }

    /// `lol_html`'s feedback for a start tag, taken at its name: the text
    /// that follows it, and what is left to decide from its attributes.
    fn start_feedback(&mut self, kind: Kind) -> (Text, Later) {
        let ns = self.current();
        match kind {
            Kind::Svg => self.enter(Ns::Svg),
            Kind::Math => self.enter(Ns::MathMl),
            _ if ns == Ns::Html => {
                let text = match kind {
                    Kind::Script => Text::Script,
                    Kind::Plaintext => Text::Plain,
                    Kind::Title | Kind::Noscript | Kind::RawText(_) => Text::Raw(kind),
                    _ => Text::Data,
                };
                return (text, Later::None);
            }
            _ if kind.exits_foreign() => self.leave(),
            Kind::SvgPoint | Kind::Title if ns == Ns::Svg => {
                return (Text::Data, Later::EnterUnlessSelfClosing);
            }
            Kind::MathText if ns == Ns::MathMl => {
                return (Text::Data, Later::EnterUnlessSelfClosing);
            }
            Kind::Font => return (Text::Data, Later::Font),
            Kind::AnnotationXml if ns == Ns::MathMl => return (Text::Data, Later::Annotation),
            _ => {}
        }
        (Text::Data, Later::None)
    }

    /// The feedback that needed the start tag's attributes.
    fn later(&mut self, later: Later, self_closing: bool) {
        let s = self.text.as_bytes();
        match later {
            Later::None => {}
            Later::EnterUnlessSelfClosing if !self_closing => self.enter(Ns::Html),
            Later::EnterUnlessSelfClosing => {}
            Later::Font => {
                let leaves = self.attrs.iter().any(|a| {
                    let name = &s[a.name.0..a.name.1];
                    [&b"color"[..], b"size", b"face"]
                        .iter()
                        .any(|n| name.eq_ignore_ascii_case(n))
                });
                if leaves {
                    self.leave();
                }
            }
            Later::Annotation => {
                // `lol_html` looks at every `encoding` attribute, not only the first.
                let html = !self_closing
                    && self.attrs.iter().any(|a| {
                        let value = &s[a.value.0..a.value.1];
                        s[a.name.0..a.name.1].eq_ignore_ascii_case(b"encoding")
                            && (value.eq_ignore_ascii_case(b"text/html")
                                || value.eq_ignore_ascii_case(b"application/xhtml+xml"))
                    });
                if html {
                    self.enter(Ns::Html);
                }
            }
        }
    }

    /// `lol_html`'s feedback for an end tag.
    fn end_feedback(&mut self, kind: Kind) {
        let ns = self.current();
        if ns == Ns::Html {
            let Some(&prev) = self.ns.len().checked_sub(2).and_then(|i| self.ns.get(i)) else {
                return;
            };
            let exits = match prev {
                Ns::MathMl => matches!(kind, Kind::MathText | Kind::AnnotationXml),
                Ns::Svg => matches!(kind, Kind::SvgPoint | Kind::Title),
                Ns::Html => false,
            };
            if exits {
                self.leave();
            }
        } else if (ns == Ns::Svg && kind == Kind::Svg)
            || (ns == Ns::MathMl && kind == Kind::Math)
            || kind == Kind::PBr
        {
            self.leave();
        }
    }
}

#[cfg(test)]
mod tests;
