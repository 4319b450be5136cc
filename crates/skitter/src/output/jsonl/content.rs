//! The page content fields of a JSONL `page` line (`--content
//! markdown,text,…`): what of the page's [`Document`] each HTML page's line
//! carries, for a pipeline that reads one stream.
//!
//! Each field asked for is present on the line of every HTML page that has
//! content, `null` when the page has no such thing (no description…), and
//! absent from other lines. `markdown` and `text` are the page's main
//! content (with the site's boilerplate dropped, as known when the page was
//! written; see [`crate::content::site`]); links in the Markdown are absolute.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use serde::ser::SerializeMap;

use crate::content::Document;

/// One content field of a JSONL `page` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ContentField {
    /// The main content as Markdown (`markdown`).
    Markdown,
    /// The main content as plain text (`text`).
    Text,
    /// The page's title (`title`).
    Title,
    /// Its description (`description`).
    Description,
    /// Its language (`lang`).
    Lang,
    /// Its author (`author`).
    Author,
    /// When it was published, as the page says (`published`).
    Published,
    /// Its canonical URL (`canonical`).
    Canonical,
}

impl ContentField {
    /// Every field, in the order lines carry them.
    pub const ALL: [ContentField; 8] = [
        ContentField::Markdown,
        ContentField::Text,
        ContentField::Title,
        ContentField::Description,
        ContentField::Lang,
        ContentField::Author,
        ContentField::Published,
        ContentField::Canonical,
    ];

    /// Its name on the line.
    pub fn as_str(self) -> &'static str {
        match self {
            ContentField::Markdown => "markdown",
            ContentField::Text => "text",
            ContentField::Title => "title",
            ContentField::Description => "description",
            ContentField::Lang => "lang",
            ContentField::Author => "author",
            ContentField::Published => "published",
            ContentField::Canonical => "canonical",
        }
    }
}

impl fmt::Display for ContentField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not a content field.
#[derive(Debug, thiserror::Error)]
#[error(
    "unknown content field {0:?} (one of markdown, text, title, description, lang, author, published, canonical)"
)]
pub struct UnknownField(pub String);

impl FromStr for ContentField {
    type Err = UnknownField;

    fn from_str(s: &str) -> Result<ContentField, UnknownField> {
        ContentField::ALL
            .into_iter()
            .find(|f| f.as_str() == s.trim())
            .ok_or_else(|| UnknownField(s.to_string()))
    }
}

/// The fields asked for of one page, serialised as map entries (flattened
/// into the page line).
pub(super) struct Fields<'a> {
    pub doc: &'a Document,
    pub asked: &'a [ContentField],
}

impl Serialize for Fields<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.asked.len()))?;
        let d = self.doc;
        for field in ContentField::ALL.iter().filter(|f| self.asked.contains(f)) {
            let key = field.as_str();
            match field {
                ContentField::Markdown => map.serialize_entry(key, &d.markdown())?,
                ContentField::Text => map.serialize_entry(key, &d.text())?,
                ContentField::Title => map.serialize_entry(key, &d.title)?,
                ContentField::Description => map.serialize_entry(key, &d.description)?,
                ContentField::Lang => map.serialize_entry(key, &d.lang)?,
                ContentField::Author => map.serialize_entry(key, &d.author)?,
                ContentField::Published => map.serialize_entry(key, &d.published)?,
                ContentField::Canonical => {
                    map.serialize_entry(key, &d.canonical.as_ref().map(|u| u.as_str()))?
                }
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_refused() {
        for f in ContentField::ALL {
            assert_eq!(f.as_str().parse::<ContentField>().unwrap(), f);
        }
        assert!("html".parse::<ContentField>().is_err());
    }

    #[test]
    fn only_asked_fields_are_written_with_nulls_for_missing_ones() {
        let doc = Document {
            title: Some("T".into()),
            ..Document::default()
        };
        let asked = [ContentField::Description, ContentField::Title];
        let json = serde_json::to_string(&Fields {
            doc: &doc,
            asked: &asked,
        })
        .unwrap();
        assert_eq!(json, r#"{"title":"T","description":null}"#);
    }
}
