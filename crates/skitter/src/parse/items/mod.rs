//! Structured records ("items") extracted from pages: the types shared by the
//! extractor that makes them and the outputs that store them (the JSONL sink's
//! `item` lines, the database sink).
//!
//! A *rule set* is a named group of field rules for pages whose URL matches a
//! pattern; each rule set is one table in the database ([`TableSchema`]), and
//! each record it yields on a page is one [`Item`], identified by the page's URL,
//! the rule set and its position on the page ([`Item::index`]). That identity is
//! what makes storing idempotent: a page fetched again (after a kill, on resume)
//! replaces its items instead of adding to them.

mod engine;
mod error;
mod html;
pub mod limits;
pub mod nesting;
mod parse;
mod pick;
mod rule_set;
mod rules;
mod select;
pub(crate) mod stream;
mod value;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::base::outcome::PageRecord;

pub(crate) use engine::Css;
pub use engine::PageInput;
pub use error::RulesError;
pub use parse::MAX_NAME_LEN;
pub use pick::Pick;
pub use rule_set::INLINE_SET;
pub use rules::{Rules, RulesSource};

/// What extraction found on one page: its items, and the rules that failed on
/// it. A failed rule is the page's recorded extraction error, never the crawl's.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Items {
    /// When the page was fetched (the items' `fetched_at`).
    pub fetched_at: DateTime<Utc>,
    /// The records, in rule-set order and, within a rule set, in page order.
    pub records: Vec<Item>,
    /// The rule sets that matched the page's URL, so a store can replace their
    /// rows for this page even when the page now yields none.
    pub rule_sets: Vec<String>,
    /// Rules that failed on this page (a required field missing, a value that
    /// would not convert, a body that would not parse).
    pub errors: Vec<ExtractFailure>,
}

impl Items {
    /// Notes on the page's record what extraction found there (the report's
    /// `items` and `extract_errors` counters come from the record).
    pub fn count_on(&self, record: &mut PageRecord) {
        record.items = self.records.len() as u64;
        record.extract_failed = !self.errors.is_empty();
    }
}

/// One record: the fields one rule set pulled out of a page (or out of one
/// repeated element of it, such as one table row).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Item {
    /// The rule set that made it (its table in the database).
    pub rule_set: String,
    /// Position among the items this rule set made on this page, from 0.
    pub index: u32,
    /// Field values in the rule set's field order. A field that found nothing is
    /// `null`; values are typed as the rule asked (string, integer, number, an
    /// absolute URL as a string, or an array for fields that collect all matches).
    pub fields: Vec<(String, serde_json::Value)>,
}

/// A rule that failed on a page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExtractFailure {
    /// The rule set.
    pub rule_set: String,
    /// The field, when one field failed (absent when the whole rule set did).
    pub field: Option<String>,
    /// What went wrong, for a person.
    pub message: String,
}

/// The shape of one rule set's table, derived from its rules.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TableSchema {
    /// The rule set's name, which is the table's name.
    pub name: String,
    /// Its fields, in order.
    pub columns: Vec<Column>,
}

/// One field of a rule set, as a database column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Column {
    /// The field's name.
    pub name: String,
    /// The type its values have.
    pub ty: ColumnType,
}

/// The type of a field's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ColumnType {
    /// A string (text, an attribute, inner HTML, a regex capture).
    Text,
    /// A 64-bit signed integer.
    Integer,
    /// A 64-bit float.
    Number,
    /// An absolute URL (resolved against the page), stored as text.
    Url,
    /// Anything structured: the array of a field that collects every match, or
    /// a JSON value picked by a JSON pointer.
    Json,
}
