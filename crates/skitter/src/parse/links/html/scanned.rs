//! The pages mode's handlers for the scanner (`scan/`): what the selectors
//! `a[href]`, `area[href]`, `base[href]`, `meta[http-equiv][content]`,
//! `link[href][rel]` and the `<noscript>` text handler of the `lol_html`
//! pass do, on the scanner's tags, into the same [`State`].

use std::borrow::Cow;
use std::cell::RefCell;

use super::super::LinkKind;
use super::super::rel::Rel;
use super::scan;
use super::{StartTag, State, link_rel, on_base, on_meta};

impl StartTag for scan::Tag<'_> {
    fn attr(&self, name: &str) -> Option<Cow<'_, str>> {
        scan::Tag::attr(self, name).map(Cow::Borrowed)
    }

    fn start(&self) -> usize {
        scan::Tag::start(self)
    }
}

/// The pages mode's handlers, for [`scan`]: what the selectors `a[href]`,
/// `area[href]`, `base[href]`, `meta[http-equiv][content]`,
/// `link[href][rel]` and the `<noscript>` text handler do for `lol_html`.
pub(super) struct ScanSink<'s> {
    pub(super) state: &'s RefCell<State>,
}

impl scan::Sink for ScanSink<'_> {
    fn element(&mut self, element: scan::Element, tag: &scan::Tag<'_>) {
        let mut state = self.state.borrow_mut();
        match element {
            scan::Element::A => state.push_attr(tag, LinkKind::Anchor, "a", "href"),
            scan::Element::Area => state.push_attr(tag, LinkKind::Anchor, "area", "href"),
            scan::Element::Base => on_base(tag, &mut state),
            scan::Element::Meta => {
                if tag.attr("http-equiv").is_some() && tag.attr("content").is_some() {
                    on_meta(tag, &mut state);
                }
            }
            scan::Element::Link => {
                let linked = tag.attr("href").is_some() && tag.attr("rel").is_some();
                if linked && link_rel(tag) == Rel::Hyperlink {
                    state.push_attr(tag, LinkKind::Anchor, "link", "href");
                }
            }
        }
    }

    /// As the `lol_html` pass's `<noscript>` handler: the text read as
    /// markup in a pass of its own, within the same depth cap and byte
    /// budget ([`State::enter_noscript`]).
    fn noscript(&mut self, start: usize, text: &str) -> Result<bool, scan::Bail> {
        let outer = {
            let mut s = self.state.borrow_mut();
            let start = s.origin + start;
            let Some(outer) = s.enter_noscript(start, text.len()) else {
                return Ok(false);
            };
            outer
        };
        let read = scan::scan(text, self);
        self.state.borrow_mut().leave_noscript(outer);
        read
    }
}
