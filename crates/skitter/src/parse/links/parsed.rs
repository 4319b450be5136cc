//! `lol_html` handlers whose CSS selectors are parsed once per process.
//!
//! `lol_html`'s `element!`/`text!` macros parse their selector every time
//! they run, and the link pass builds its handlers for every page: parsing
//! the same dozen selectors again was about 4% of a crawl's CPU. The
//! selectors here are constants, parsed on first use and shared read-only
//! (a `Selector` is immutable), so a page only pays for compiling them into
//! its rewriter's matching program.

use std::sync::LazyLock;

use lol_html::Selector;

/// A constant selector, parsed on first use.
pub(crate) struct Parsed(LazyLock<Selector, fn() -> Selector>);

impl Parsed {
    /// The parsed selector.
    pub(crate) fn get(&'static self) -> &'static Selector {
        &self.0
    }
}

/// Declares `static NAME: Parsed` for a constant selector; a selector
/// `lol_html` rejects panics on first use, which the tests run.
macro_rules! parsed_selector {
    ($(#[$doc:meta])* $name:ident = $css:literal) => {
        $(#[$doc])*
        static $name: $crate::parse::links::parsed::Parsed =
            $crate::parse::links::parsed::Parsed::new(|| {
                $css.parse().expect(concat!("lol_html rejects ", $css))
            });
    };
}
pub(crate) use parsed_selector;

impl Parsed {
    /// Used by [`parsed_selector!`].
    pub(crate) const fn new(parse: fn() -> Selector) -> Parsed {
        Parsed(LazyLock::new(parse))
    }
}

/// `lol_html::element!` with a selector parsed once (a `&'static Selector`).
macro_rules! on_element {
    ($selector:expr, $handler:expr) => {{
        #[inline(always)]
        const fn hint<'h, T>(h: T) -> T
        where
            T: FnMut(&mut lol_html::html_content::Element<'_, '_>) -> lol_html::HandlerResult + 'h,
        {
            h
        }
        (
            std::borrow::Cow::<'static, lol_html::Selector>::Borrowed($selector),
            lol_html::ElementContentHandlers::default().element(hint($handler)),
        )
    }};
}
pub(crate) use on_element;

/// `lol_html::text!` with a selector parsed once (a `&'static Selector`).
macro_rules! on_text {
    ($selector:expr, $handler:expr) => {{
        #[inline(always)]
        const fn hint<'h, T>(h: T) -> T
        where
            T: FnMut(&mut lol_html::html_content::TextChunk<'_>) -> lol_html::HandlerResult + 'h,
        {
            h
        }
        (
            std::borrow::Cow::<'static, lol_html::Selector>::Borrowed($selector),
            lol_html::ElementContentHandlers::default().text(hint($handler)),
        )
    }};
}
pub(crate) use on_text;

#[cfg(test)]
mod tests {
    parsed_selector!(ANCHOR = "a[href]");

    #[test]
    fn a_constant_selector_parses_once_and_is_shared() {
        assert!(std::ptr::eq(ANCHOR.get(), ANCHOR.get()));
    }
}
