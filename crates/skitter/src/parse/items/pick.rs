//! One value read from one response, for requests that depend on it (a
//! file named by a field of another response, the next page of a chain):
//! `NAME=SPEC` in the language of extraction fields (`json:/POINTER`,
//! `css:SEL`, `css:SEL@attr`, `regex:RE`, `html:SEL`, or a `{ … }` table
//! with `type`), evaluated by the same engine, plus two sources only a
//! response has: `header:NAME` (a response header) and `link:REL` (the
//! target of the `Link` header entry with that relation).
//!
//! A pick yields one text: a string as it is, a number or boolean written
//! out; nothing (absent, `null`, empty) is `Ok(None)`, and a body that does
//! not parse or a value that is not a single scalar (an object, a list) is
//! an error naming what was found.

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::{PageInput, Rules, RulesError};
use crate::parse::links::link_with_rel;

/// A named value to read from a response (see the module docs).
#[derive(Clone, Debug)]
pub struct Pick {
    name: String,
    spec: String,
    source: PickSource,
}

#[derive(Clone, Debug)]
enum PickSource {
    Header(String),
    Link(String),
    Body(Box<Rules>),
}

impl Pick {
    /// Parses `NAME=SPEC`; the name follows the rules of field names.
    pub fn parse(text: &str) -> Result<Pick, RulesError> {
        let (name, spec) = text.split_once('=').ok_or_else(|| RulesError::Inline {
            spec: text.to_string(),
            problem: "expected NAME=SPEC, as in country=json:/country".into(),
        })?;
        Pick::named(name.trim(), spec.trim())
    }

    /// A pick of `spec` called `name`.
    pub fn named(name: &str, spec: &str) -> Result<Pick, RulesError> {
        let inline = |problem: &str| RulesError::Inline {
            spec: format!("{name}={spec}"),
            problem: problem.to_string(),
        };
        let source = if let Some(header) = spec.strip_prefix("header:") {
            if header.is_empty()
                || reqwest::header::HeaderName::from_bytes(header.as_bytes()).is_err()
            {
                return Err(inline("header: needs a header name, as in header:x-next"));
            }
            PickSource::Header(header.to_ascii_lowercase())
        } else if let Some(rel) = spec.strip_prefix("link:") {
            if rel.is_empty() || rel.contains(char::is_whitespace) {
                return Err(inline("link: needs one relation, as in link:next"));
            }
            PickSource::Link(rel.to_string())
        } else {
            // The field rules check the name and the spec, with their messages.
            PickSource::Body(Box::new(Rules::from_fields(&[format!("{name}={spec}")])?))
        };
        Ok(Pick {
            name: name.to_string(),
            spec: spec.to_string(),
            source,
        })
    }

    /// The value's name (its `{name}` in templates).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The spec as written (`json:/country`), for messages.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// Whether reading it needs the body (else only the headers).
    pub fn needs_body(&self) -> bool {
        matches!(self.source, PickSource::Body(_))
    }

    /// The value in this response: `Ok(None)` when there is none, an error
    /// (for a person) when the body does not parse or the value is not one
    /// scalar. CPU work for a body: call it off the async workers.
    pub fn read(
        &self,
        page: &PageInput<'_>,
        headers: &HeaderMap,
    ) -> Result<Option<String>, String> {
        let rules = match &self.source {
            PickSource::Header(name) => return Ok(header(headers, name)),
            PickSource::Link(rel) => {
                let mut values = headers.get_all("link").iter();
                return Ok(values.find_map(|v| link_with_rel(v.to_str().ok()?, rel)));
            }
            PickSource::Body(rules) => rules,
        };
        let Some(items) = rules.extract(page) else {
            return Ok(None);
        };
        if let Some(failure) = items.errors.first() {
            return Err(failure.message.clone());
        }
        let value = items
            .records
            .into_iter()
            .next()
            .and_then(|r| r.fields.into_iter().next())
            .map(|(_, v)| v);
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v @ (Value::Number(_) | Value::Bool(_))) => Ok(Some(v.to_string())),
            Some(Value::Array(_)) => Err("found a list, not a single value".into()),
            Some(Value::Object(_)) => Err("found an object, not a single value".into()),
        }
    }
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    let v = headers.get(name)?.to_str().ok()?.trim();
    (!v.is_empty()).then(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use url::Url;

    use super::*;

    fn read(spec: &str, body: &str, headers: &[(&str, &str)]) -> Result<Option<String>, String> {
        let url = Url::parse("http://h/a").unwrap();
        let page = PageInput {
            url: &url,
            body: body.as_bytes(),
            charset: None,
            fetched_at: Utc::now(),
        };
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.append(
                reqwest::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        Pick::parse(&format!("v={spec}")).unwrap().read(&page, &map)
    }

    #[test]
    fn values_come_from_the_body_the_headers_or_a_link() {
        let json = r#"{"country":"Brazil","n":3,"o":{},"l":[1],"z":null,"e":""}"#;
        let some = |s: &str| Ok(Some(s.to_string()));
        assert_eq!(read("json:/country", json, &[]), some("Brazil"));
        assert_eq!(read("json:/n", json, &[]), some("3"));
        assert_eq!(read("json:/missing", json, &[]), Ok(None));
        assert_eq!(read("json:/z", json, &[]), Ok(None));
        assert_eq!(read("json:/e", json, &[]), Ok(None));
        assert!(read("json:/o", json, &[]).unwrap_err().contains("object"));
        assert!(read("json:/l", json, &[]).unwrap_err().contains("list"));
        assert!(
            read("json:/a", "{broken", &[])
                .unwrap_err()
                .contains("not JSON")
        );
        let html = r#"<a rel="next" href="/p2">n</a>"#;
        assert_eq!(read("css:a[rel=next]@href", html, &[]), some("/p2"));
        assert_eq!(read("css:a[rel=prev]@href", html, &[]), Ok(None));
        assert_eq!(read("regex:href=\"([^\"]+)\"", html, &[]), some("/p2"));
        assert_eq!(read("header:X-Next", "", &[("x-next", "/p3")]), some("/p3"));
        let link = [
            ("link", r#"</p1>; rel="first""#),
            ("link", r#"</p4>; rel=next"#),
        ];
        assert_eq!(read("link:next", "", &link), some("/p4"));
        assert_eq!(read("link:prev", "", &link), Ok(None));
    }

    #[test]
    fn bad_picks_are_refused_with_the_reason() {
        for bad in [
            "nothing",
            "v=",
            "v=nope:x",
            "v=header:",
            "v=link:",
            "1v=json:/a",
        ] {
            assert!(Pick::parse(bad).is_err(), "{bad}");
        }
    }
}
