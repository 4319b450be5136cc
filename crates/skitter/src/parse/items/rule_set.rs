//! One rule set as validated rules hold it: its URL pattern, its `item`
//! rule and its fields, each field's source, what it takes and its type.
//! `items::parse` builds these from the text forms; the DOM engine, the
//! streaming pass and the value conversion read them.

use regex::Regex;
use scraper::Selector;

use super::select::Target;

/// The name of the rule set that inline fields (`--field`) form.
pub const INLINE_SET: &str = "items";

/// One named rule set.
#[derive(Clone, Debug)]
pub(crate) struct RuleSet {
    pub name: String,
    /// Pages whose URL this matches (unanchored); `None` matches every URL.
    pub url: Option<Regex>,
    pub item: Option<ItemRule>,
    pub fields: Vec<Field>,
}

/// What makes one record out of each match.
#[derive(Clone, Debug)]
pub(crate) enum ItemRule {
    /// Each element matching the selector.
    Css(Selector),
    /// Each element of the JSON array (or value of the object) at the pointer.
    Json(String),
}

/// One field rule.
#[derive(Clone, Debug)]
pub(crate) struct Field {
    pub name: String,
    pub source: Source,
    /// Applied to what the source gave; the first capture group (or the whole
    /// match when there is none) is the value.
    pub regex: Option<Regex>,
    pub ty: FieldType,
    /// The type was given explicitly (matters for JSON pointer fields).
    pub typed: bool,
    pub all: bool,
    pub required: bool,
    /// For a CSS field whose selector the streaming path can evaluate (and
    /// that does not take inner HTML), what it selects.
    pub stream: Option<Target>,
}

/// Where a field's raw value comes from.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    /// Elements matching a selector (relative to the item element, if any);
    /// `None` is the item element itself, or the whole document.
    Css(Option<Selector>, Take),
    /// The page's decoded text (or the item element's text) for the regex.
    Text,
    /// A JSON pointer into the body (or into the item's JSON value).
    Json(String),
}

/// What to take from a selected element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Take {
    /// Its text, whitespace collapsed.
    Text,
    /// The value of an attribute.
    Attr(String),
    /// Its inner HTML.
    Html,
}

/// The type a field's values are converted to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FieldType {
    String,
    Integer,
    Number,
    Url,
}

impl RuleSet {
    pub(crate) fn matches(&self, url: &str) -> bool {
        self.url.as_ref().is_none_or(|re| re.is_match(url))
    }

    pub(crate) fn reads_json(&self) -> bool {
        matches!(self.item, Some(ItemRule::Json(_)))
            || self
                .fields
                .iter()
                .any(|f| matches!(f.source, Source::Json(_)))
    }
}
