//! A parsed page as a flat array in document order, the one shape every
//! later pass walks.
//!
//! Each node knows its parent and where its subtree ends (`end`: the nodes of
//! a subtree are `i + 1 .. end`), so children are visited by jumping from one
//! subtree end to the next and totals are summed bottom-up in one reverse
//! pass: no pass recurses, whatever the page's depth. Comments, doctypes and
//! processing instructions are left out.

use ego_tree::NodeRef;
use ego_tree::iter::Edge;
use scraper::{ElementRef, Html, Node};

/// No parent: the document itself.
pub(crate) const NONE: u32 = u32::MAX;

/// The elements the passes tell apart; everything else is `Other`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub(crate) enum Tag {
    Document,
    Text,
    Html,
    Head,
    Body,
    Title,
    Meta,
    Link,
    Base,
    Script,
    Style,
    Noscript,
    Template,
    Svg,
    Math,
    Iframe,
    Object,
    Embed,
    Canvas,
    Video,
    Audio,
    Form,
    Input,
    Button,
    Select,
    Textarea,
    Label,
    Nav,
    Header,
    Footer,
    Aside,
    Main,
    Article,
    Section,
    Div,
    P,
    H(u8),
    Ul,
    Ol,
    Li,
    Dl,
    Dt,
    Dd,
    Table,
    Caption,
    Thead,
    Tbody,
    Tfoot,
    Tr,
    Td,
    Th,
    Pre,
    Code,
    Kbd,
    Samp,
    Tt,
    Blockquote,
    A,
    Img,
    Picture,
    Figure,
    Figcaption,
    Br,
    Hr,
    Em,
    I,
    Strong,
    B,
    Del,
    S,
    Sup,
    Sub,
    Time,
    Address,
    Details,
    Summary,
    Center,
    Font,
    Span,
    Other,
}

impl Tag {
    fn of(name: &str) -> Tag {
        match name {
            "html" => Tag::Html,
            "head" => Tag::Head,
            "body" => Tag::Body,
            "title" => Tag::Title,
            "meta" => Tag::Meta,
            "link" => Tag::Link,
            "base" => Tag::Base,
            "script" => Tag::Script,
            "style" => Tag::Style,
            "noscript" => Tag::Noscript,
            "template" => Tag::Template,
            "svg" => Tag::Svg,
            "math" => Tag::Math,
            "iframe" | "frame" | "frameset" => Tag::Iframe,
            "object" | "applet" => Tag::Object,
            "embed" => Tag::Embed,
            "canvas" => Tag::Canvas,
            "video" => Tag::Video,
            "audio" => Tag::Audio,
            "form" => Tag::Form,
            "input" => Tag::Input,
            "button" => Tag::Button,
            "select" | "option" | "optgroup" | "datalist" => Tag::Select,
            "textarea" => Tag::Textarea,
            "label" => Tag::Label,
            "nav" | "menu" => Tag::Nav,
            "header" => Tag::Header,
            "footer" => Tag::Footer,
            "aside" => Tag::Aside,
            "main" => Tag::Main,
            "article" => Tag::Article,
            "section" => Tag::Section,
            "div" | "hgroup" => Tag::Div,
            "p" => Tag::P,
            "h1" => Tag::H(1),
            "h2" => Tag::H(2),
            "h3" => Tag::H(3),
            "h4" => Tag::H(4),
            "h5" => Tag::H(5),
            "h6" => Tag::H(6),
            "ul" => Tag::Ul,
            "ol" => Tag::Ol,
            "li" => Tag::Li,
            "dl" => Tag::Dl,
            "dt" => Tag::Dt,
            "dd" => Tag::Dd,
            "table" => Tag::Table,
            "caption" => Tag::Caption,
            "thead" => Tag::Thead,
            "tbody" => Tag::Tbody,
            "tfoot" => Tag::Tfoot,
            "tr" => Tag::Tr,
            "td" => Tag::Td,
            "th" => Tag::Th,
            "pre" | "listing" | "xmp" | "plaintext" => Tag::Pre,
            "code" => Tag::Code,
            "kbd" => Tag::Kbd,
            "samp" | "var" => Tag::Samp,
            "tt" => Tag::Tt,
            "blockquote" => Tag::Blockquote,
            "a" => Tag::A,
            "img" => Tag::Img,
            "picture" => Tag::Picture,
            "figure" => Tag::Figure,
            "figcaption" => Tag::Figcaption,
            "br" => Tag::Br,
            "hr" => Tag::Hr,
            "em" | "cite" | "dfn" => Tag::Em,
            "i" => Tag::I,
            "strong" => Tag::Strong,
            "b" => Tag::B,
            "del" | "strike" => Tag::Del,
            "s" => Tag::S,
            "sup" => Tag::Sup,
            "sub" => Tag::Sub,
            "time" => Tag::Time,
            "address" => Tag::Address,
            "details" => Tag::Details,
            "summary" => Tag::Summary,
            "center" => Tag::Center,
            "font" => Tag::Font,
            "span" => Tag::Span,
            _ => Tag::Other,
        }
    }

    /// Whether the element starts a new block of text (a line break at
    /// least) rather than flowing inside one.
    pub(crate) fn is_block(self) -> bool {
        matches!(
            self,
            Tag::Html
                | Tag::Body
                | Tag::Nav
                | Tag::Header
                | Tag::Footer
                | Tag::Aside
                | Tag::Main
                | Tag::Article
                | Tag::Section
                | Tag::Div
                | Tag::P
                | Tag::H(_)
                | Tag::Ul
                | Tag::Ol
                | Tag::Li
                | Tag::Dl
                | Tag::Dt
                | Tag::Dd
                | Tag::Table
                | Tag::Caption
                | Tag::Thead
                | Tag::Tbody
                | Tag::Tfoot
                | Tag::Tr
                | Tag::Td
                | Tag::Th
                | Tag::Pre
                | Tag::Blockquote
                | Tag::Figure
                | Tag::Figcaption
                | Tag::Hr
                | Tag::Address
                | Tag::Details
                | Tag::Summary
                | Tag::Center
                | Tag::Form
        )
    }
}

/// One node of the flat tree.
pub(crate) struct Item<'a> {
    /// The DOM node.
    pub node: NodeRef<'a, Node>,
    /// What it is.
    pub tag: Tag,
    /// Its parent's index, or [`NONE`].
    pub parent: u32,
    /// One past the index of its last descendant.
    pub end: u32,
}

/// A page as a flat array in document order.
pub(crate) struct Tree<'a> {
    /// The nodes, the document first.
    pub items: Vec<Item<'a>>,
}

impl<'a> Tree<'a> {
    /// Flattens `html` in one iterative walk.
    pub(crate) fn new(html: &'a Html) -> Tree<'a> {
        let mut items: Vec<Item<'a>> = Vec::with_capacity(html.tree.values().len());
        let mut open: Vec<u32> = Vec::new();
        for edge in html.tree.root().traverse() {
            match edge {
                Edge::Open(node) => {
                    let Some(tag) = kept(&node) else { continue };
                    let index = items.len() as u32;
                    items.push(Item {
                        node,
                        tag,
                        parent: open.last().copied().unwrap_or(NONE),
                        end: index + 1,
                    });
                    open.push(index);
                }
                Edge::Close(node) => {
                    if kept(&node).is_none() {
                        continue;
                    }
                    if let Some(index) = open.pop() {
                        items[index as usize].end = items.len() as u32;
                    }
                }
            }
        }
        Tree { items }
    }

    /// The number of nodes.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// The tag of node `i`.
    pub(crate) fn tag(&self, i: usize) -> Tag {
        self.items[i].tag
    }

    /// One past node `i`'s last descendant.
    pub(crate) fn end(&self, i: usize) -> usize {
        self.items[i].end as usize
    }

    /// Node `i`'s parent, if any.
    pub(crate) fn parent(&self, i: usize) -> Option<usize> {
        let p = self.items[i].parent;
        (p != NONE).then_some(p as usize)
    }

    /// The children of node `i`, in order.
    pub(crate) fn children(&self, i: usize) -> Children<'_, 'a> {
        Children {
            tree: self,
            next: i + 1,
            end: self.end(i),
        }
    }

    /// Node `i` as an element, if it is one.
    pub(crate) fn element(&self, i: usize) -> Option<ElementRef<'a>> {
        ElementRef::wrap(self.items[i].node)
    }

    /// Attribute `name` of node `i`, if it is an element that has it.
    pub(crate) fn attr(&self, i: usize, name: &str) -> Option<&'a str> {
        match self.items[i].node.value() {
            // Not `Element::attr`: it interns `name` as an atom (a perfect
            // hash of it) and binary-searches by comparing atoms as strings,
            // on every call, and the extraction asks each element for its
            // class, id, role… several times; an element has a few
            // attributes, and comparing their names is far cheaper.
            Node::Element(e) => e
                .attrs
                .iter()
                .find(|(qualified, _)| qualified.ns.is_empty() && &*qualified.local == name)
                .map(|(_, value)| &**value),
            _ => None,
        }
    }

    /// Node `i`'s text, if it is a text node.
    pub(crate) fn text(&self, i: usize) -> Option<&'a str> {
        match self.items[i].node.value() {
            Node::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// The first node with tag `tag`, if any.
    pub(crate) fn find(&self, tag: Tag) -> Option<usize> {
        (0..self.len()).find(|&i| self.tag(i) == tag)
    }
}

/// The children of one node.
pub(crate) struct Children<'t, 'a> {
    tree: &'t Tree<'a>,
    next: usize,
    end: usize,
}

impl Iterator for Children<'_, '_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.next >= self.end {
            return None;
        }
        let i = self.next;
        self.next = self.tree.end(i);
        Some(i)
    }
}

/// The tag a node is kept under, or `None` for what the passes ignore.
fn kept(node: &NodeRef<'_, Node>) -> Option<Tag> {
    match node.value() {
        Node::Document | Node::Fragment => Some(Tag::Document),
        Node::Text(_) => Some(Tag::Text),
        Node::Element(e) => Some(Tag::of(e.name())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_found_by_name_in_no_namespace_only() {
        let page = Html::parse_document(
            r#"<svg><a xlink:href="/svg" class="s"></a></svg>
            <a HREF="/html" class="c" data-x="1" id="i">x</a><p title="">y</p>"#,
        );
        let tree = Tree::new(&page);
        let anchors: Vec<usize> = (0..tree.len()).filter(|&i| tree.tag(i) == Tag::A).collect();
        assert_eq!(anchors.len(), 2, "{anchors:?}");
        let (svg, html) = (anchors[0], anchors[1]);
        // SVG's `xlink:href` is `href` in the XLink namespace: not the
        // attribute an HTML reader means by `href`.
        assert_eq!(tree.attr(svg, "href"), None);
        assert_eq!(tree.attr(svg, "class"), Some("s"));
        assert_eq!(tree.attr(html, "href"), Some("/html"));
        assert_eq!(tree.attr(html, "id"), Some("i"));
        assert_eq!(tree.attr(html, "data-x"), Some("1"));
        assert_eq!(tree.attr(html, "title"), None);
        let p = tree.find(Tag::P).expect("a paragraph");
        assert_eq!(tree.attr(p, "title"), Some(""));
        // A node that is not an element has no attributes.
        assert_eq!(tree.attr(0, "href"), None);
    }
}
