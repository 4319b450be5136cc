//! [`Rules`]: the extraction rules a user writes once, validated, ready to run.
//!
//! A rules file holds named rule sets; each has a URL pattern, an optional
//! `item` selector for repeated records, and its fields. The text forms are
//! read by `items::parse` into the validated shape of each set
//! (`items::rule_set`); this module holds the sets together, the table
//! schemas derived from them, and the source text, so a shared (Redis) crawl
//! can hand every worker the rules themselves rather than a path.

use url::Url;

use super::rule_set::{Field, FieldType, INLINE_SET, RuleSet, Source};
use super::{Column, ColumnType, RulesError, TableSchema};

/// Validated extraction rules: one or more rule sets.
///
/// ```
/// let rules = skitter::parse::items::Rules::from_toml(r#"
///     [proxies]
///     url = "/items/list/"
///     item = "table.proxies tbody tr"
///     [proxies.fields]
///     address = "css:td.address"
///     port = { css = "td.port", type = "integer" }
/// "#)?;
/// assert_eq!(rules.schemas()[0].name, "proxies");
/// # Ok::<(), skitter::parse::items::RulesError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Rules {
    pub(crate) sets: Vec<RuleSet>,
    source: RulesSource,
}

/// The text the rules were read from: a TOML document and inline field specs.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RulesSource {
    /// The TOML document (a rules file's content), if any.
    #[serde(default)]
    pub toml: Option<String>,
    /// Inline fields, `NAME=SPEC` each (see [`Rules::from_fields`]).
    #[serde(default)]
    pub fields: Vec<String>,
}

impl Rules {
    /// Reads rules from a TOML document; see the README's "Structured
    /// extraction" for the format. Every selector, regex and pointer is checked
    /// now, and an error names the rule set and field.
    pub fn from_toml(text: &str) -> Result<Rules, RulesError> {
        Rules::from_source(RulesSource {
            toml: Some(text.to_string()),
            fields: Vec::new(),
        })
    }

    /// Reads rules from a file (see [`Rules::from_toml`]).
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Rules, RulesError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| RulesError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Rules::from_toml(&text)
    }

    /// Rules from inline fields, `NAME=SPEC` each (`title=css:h1`, or
    /// `price={ css = ".price", type = "number" }`): one rule set named
    /// [`INLINE_SET`] that matches every URL and makes one record per page.
    pub fn from_fields<S: AsRef<str>>(specs: &[S]) -> Result<Rules, RulesError> {
        Rules::from_source(RulesSource {
            toml: None,
            fields: specs.iter().map(|s| s.as_ref().to_string()).collect(),
        })
    }

    /// Rules from a TOML document and inline fields together (the inline set is
    /// added after the document's sets; its name must not be taken).
    pub fn from_source(source: RulesSource) -> Result<Rules, RulesError> {
        let mut sets = match &source.toml {
            Some(text) => super::parse::sets_from_toml(text)?,
            None => Vec::new(),
        };
        if !source.fields.is_empty() {
            if sets.iter().any(|s| s.name == INLINE_SET) {
                return Err(RulesError::set(
                    INLINE_SET,
                    "the name is taken by the rules file; inline --field rules use it",
                ));
            }
            sets.push(super::parse::inline_set(&source.fields)?);
        }
        if sets.is_empty() {
            return Err(RulesError::Empty("no rule set".into()));
        }
        Ok(Rules { sets, source })
    }

    /// The text the rules were read from (what a shared crawl stores).
    pub fn source(&self) -> &RulesSource {
        &self.source
    }

    /// One table per rule set: its name and typed columns, in field order.
    /// `all` fields and untyped JSON pointer fields are [`ColumnType::Json`].
    pub fn schemas(&self) -> Vec<TableSchema> {
        self.sets
            .iter()
            .map(|set| TableSchema {
                name: set.name.clone(),
                columns: set
                    .fields
                    .iter()
                    .map(|f| Column {
                        name: f.name.clone(),
                        ty: f.column_type(),
                    })
                    .collect(),
            })
            .collect()
    }

    /// Whether some rule set applies to this URL (only those pages are read).
    pub fn matches(&self, url: &Url) -> bool {
        self.sets.iter().any(|s| s.matches(url.as_str()))
    }

    /// Whether a rule set that reads JSON matches this URL: then its body is
    /// kept whatever its type (otherwise only HTML bodies are read).
    pub fn wants_any_body(&self, url: &Url) -> bool {
        self.sets
            .iter()
            .any(|s| s.reads_json() && s.matches(url.as_str()))
    }
}

impl Field {
    fn column_type(&self) -> ColumnType {
        if self.all || (matches!(self.source, Source::Json(_)) && !self.typed) {
            return ColumnType::Json;
        }
        match self.ty {
            FieldType::String => ColumnType::Text,
            FieldType::Integer => ColumnType::Integer,
            FieldType::Number => ColumnType::Number,
            FieldType::Url => ColumnType::Url,
        }
    }
}
