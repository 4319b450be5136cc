//! The text forms of extraction rules (a TOML document, `--field NAME=SPEC`),
//! turned into validated [`RuleSet`]s.
//!
//! A field is a string shorthand or a table:
//! `"css:h1"` (text), `"css:a@href"` (an attribute), `"html:div.body"` (inner
//! HTML), `"regex:Price: ([0-9.]+)"` (on the page text), `"json:/data/0/id"`
//! (a JSON pointer); or `{ css = ".price", regex = "([0-9.]+)", type =
//! "number", all = false, required = true }`. Unknown keys are errors, so a
//! typo cannot silently extract nothing.

use regex::Regex;
use scraper::Selector;
use toml::{Table, Value};

use super::RulesError;
use super::rule_set::{Field, FieldType, INLINE_SET, ItemRule, RuleSet, Source, Take};
use super::select::Target;

/// Longest table or field name (PostgreSQL's identifier limit).
pub const MAX_NAME_LEN: usize = 63;

const SET_KEYS: [&str; 3] = ["url", "item", "fields"];
const FIELD_KEYS: [&str; 7] = ["css", "html", "regex", "json", "type", "all", "required"];

/// Every rule set of a TOML document, in document order.
pub(crate) fn sets_from_toml(text: &str) -> Result<Vec<RuleSet>, RulesError> {
    let doc: Table = text.parse().map_err(RulesError::Toml)?;
    let mut sets = Vec::new();
    for (name, value) in doc {
        check_name(&name).map_err(|p| RulesError::set(&name, p))?;
        let Value::Table(table) = value else {
            return Err(RulesError::set(
                &name,
                "must be a table ([name] with url, item and [name.fields])",
            ));
        };
        sets.push(rule_set(name, table)?);
    }
    if sets.is_empty() {
        return Err(RulesError::Empty("the rules file has no rule set".into()));
    }
    Ok(sets)
}

/// The rule set formed by inline `NAME=SPEC` fields.
pub(crate) fn inline_set(specs: &[String]) -> Result<RuleSet, RulesError> {
    let set = INLINE_SET;
    let mut fields: Vec<Field> = Vec::new();
    for spec in specs {
        let inline = |problem: &str| RulesError::Inline {
            spec: spec.clone(),
            problem: problem.to_string(),
        };
        let (name, rule) = spec
            .split_once('=')
            .ok_or_else(|| inline("expected NAME=SPEC, as in title=css:h1"))?;
        let name = name.trim();
        let rule = rule.trim();
        let value = if rule.starts_with('{') {
            let wrapped: Table = format!("v = {rule}")
                .parse()
                .map_err(|_| inline("the { … } form is not a valid TOML inline table"))?;
            wrapped
                .get("v")
                .cloned()
                .unwrap_or(Value::Table(Table::new()))
        } else {
            Value::String(rule.to_string())
        };
        if fields.iter().any(|f| f.name == name) {
            return Err(RulesError::field(set, name, "given twice"));
        }
        fields.push(field(set, name, &value)?);
    }
    Ok(RuleSet {
        name: set.to_string(),
        url: None,
        item: None,
        fields,
    })
}

fn rule_set(name: String, table: Table) -> Result<RuleSet, RulesError> {
    if let Some(key) = table.keys().find(|k| !SET_KEYS.contains(&k.as_str())) {
        return Err(RulesError::set(
            &name,
            format!("unknown key `{key}` (expected url, item, fields)"),
        ));
    }
    let url = match table.get("url") {
        None => None,
        Some(Value::String(re)) => Some(Regex::new(re).map_err(|e| {
            RulesError::set(&name, "`url` is not a valid regular expression").because(e)
        })?),
        Some(_) => return Err(RulesError::set(&name, "`url` must be a string (a regex)")),
    };
    let item = match table.get("item") {
        None => None,
        Some(Value::String(s)) => Some(item_rule(&name, s)?),
        Some(_) => return Err(RulesError::set(&name, "`item` must be a string")),
    };
    let Some(Value::Table(raw_fields)) = table.get("fields") else {
        return Err(RulesError::set(&name, "needs a [NAME.fields] table"));
    };
    if raw_fields.is_empty() {
        return Err(RulesError::set(&name, "has no fields"));
    }
    let mut fields = Vec::new();
    for (fname, value) in raw_fields {
        let f = field(&name, fname, value)?;
        let json = matches!(f.source, Source::Json(_));
        match (&item, json) {
            (Some(ItemRule::Css(_)), true) => {
                return Err(RulesError::field(
                    &name,
                    fname,
                    "a JSON pointer cannot read an HTML item (use json: for `item` too)",
                ));
            }
            (Some(ItemRule::Json(_)), false) => {
                return Err(RulesError::field(
                    &name,
                    fname,
                    "the items are JSON values: fields must be JSON pointers",
                ));
            }
            _ => {}
        }
        fields.push(f);
    }
    Ok(RuleSet {
        name,
        url,
        item,
        fields,
    })
}

fn item_rule(set: &str, spec: &str) -> Result<ItemRule, RulesError> {
    if let Some(pointer) = spec.strip_prefix("json:") {
        check_pointer(pointer).map_err(|p| RulesError::set(set, format!("`item`: {p}")))?;
        return Ok(ItemRule::Json(pointer.to_string()));
    }
    let css = spec.strip_prefix("css:").unwrap_or(spec);
    selector(css)
        .map(ItemRule::Css)
        .map_err(|p| RulesError::set(set, format!("`item`: {p}")))
}

/// One field, from its shorthand string or its table.
fn field(set: &str, name: &str, value: &Value) -> Result<Field, RulesError> {
    let err = |problem: String| RulesError::field(set, name, problem);
    check_name(name).map_err(|p| err(p.to_string()))?;
    let table = match value {
        Value::String(s) => shorthand(s).map_err(err)?,
        Value::Table(t) => t.clone(),
        _ => return Err(err("must be a string such as \"css:h1\" or a table".into())),
    };
    if let Some(key) = table.keys().find(|k| !FIELD_KEYS.contains(&k.as_str())) {
        return Err(err(format!(
            "unknown key `{key}` (expected {})",
            FIELD_KEYS.join(", ")
        )));
    }
    let text = |key: &str| -> Result<Option<&str>, RulesError> {
        match table.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(err(format!("`{key}` must be a string"))),
        }
    };
    let flag = |key: &str| -> Result<bool, RulesError> {
        match table.get(key) {
            None => Ok(false),
            Some(Value::Boolean(b)) => Ok(*b),
            Some(_) => Err(err(format!("`{key}` must be true or false"))),
        }
    };
    let sources = ["css", "html", "json"]
        .iter()
        .filter(|k| table.contains_key(**k))
        .count();
    if sources > 1 {
        return Err(err("give one of css, html and json".into()));
    }
    let regex = match text("regex")? {
        None => None,
        Some(re) => Some(Regex::new(re).map_err(|e| {
            RulesError::field(set, name, "`regex` is not a valid regular expression").because(e)
        })?),
    };
    let mut stream = None;
    let source = if let Some(css) = text("css")? {
        let (sel, take) = split_attr(css);
        stream = Target::of(sel);
        Source::Css(optional_selector(sel).map_err(err)?, take)
    } else if let Some(css) = text("html")? {
        Source::Css(optional_selector(css).map_err(err)?, Take::Html)
    } else if let Some(pointer) = text("json")? {
        check_pointer(pointer).map_err(|p| err(p.to_string()))?;
        Source::Json(pointer.to_string())
    } else if regex.is_some() {
        Source::Text
    } else {
        return Err(err("needs one of css, html, json or regex".into()));
    };
    let ty = match text("type")? {
        None | Some("string") => FieldType::String,
        Some("integer") => FieldType::Integer,
        Some("number") => FieldType::Number,
        Some("url") => FieldType::Url,
        Some(other) => {
            return Err(err(format!(
                "unknown type `{other}` (expected string, integer, number or url)"
            )));
        }
    };
    Ok(Field {
        name: name.to_string(),
        source,
        regex,
        ty,
        typed: table.contains_key("type"),
        all: flag("all")?,
        required: flag("required")?,
        stream,
    })
}

/// `css:SEL`, `html:SEL`, `regex:RE`, `json:/POINTER` as a field table.
fn shorthand(s: &str) -> Result<Table, String> {
    let (kind, rest) = s.split_once(':').ok_or_else(|| {
        format!("{s:?} needs a prefix: css:, html:, regex: or json: (as in css:h1)")
    })?;
    if !["css", "html", "regex", "json"].contains(&kind) {
        return Err(format!(
            "unknown prefix `{kind}:` (expected css:, html:, regex: or json:)"
        ));
    }
    let mut t = Table::new();
    t.insert(kind.to_string(), Value::String(rest.to_string()));
    Ok(t)
}

/// `a@href` → (`a`, attribute `href`); a trailing `@name` only counts when it
/// is an attribute name, so `a[title="x@y"]` stays a selector.
fn split_attr(css: &str) -> (&str, Take) {
    if let Some((sel, attr)) = css.rsplit_once('@') {
        let is_name = !attr.is_empty()
            && attr
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':' | b'.'));
        if is_name {
            return (sel, Take::Attr(attr.to_ascii_lowercase()));
        }
    }
    (css, Take::Text)
}

/// An empty selector is the item element itself (or the whole document).
fn optional_selector(css: &str) -> Result<Option<Selector>, String> {
    if css.trim().is_empty() {
        Ok(None)
    } else {
        selector(css).map(Some)
    }
}

fn selector(css: &str) -> Result<Selector, String> {
    Selector::parse(css).map_err(|e| format!("bad CSS selector {css:?}: {e}"))
}

/// RFC 6901: empty, or `/`-separated tokens where `~` is only `~0` or `~1`.
fn check_pointer(p: &str) -> Result<(), String> {
    if !p.is_empty() && !p.starts_with('/') {
        return Err(format!(
            "bad JSON pointer {p:?}: must be empty or start with /"
        ));
    }
    let bytes = p.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'~' && !matches!(bytes.get(i + 1), Some(b'0' | b'1')) {
            return Err(format!("bad JSON pointer {p:?}: `~` must be ~0 or ~1"));
        }
    }
    Ok(())
}

/// A name usable as an SQL table or column name without quoting tricks.
fn check_name(name: &str) -> Result<(), &'static str> {
    let mut bytes = name.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    if !first_ok || !bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(
            "names must match [A-Za-z_][A-Za-z0-9_]* (they become SQL table and column names)",
        );
    }
    if name.len() > MAX_NAME_LEN {
        return Err("names are at most 63 characters (they become SQL names)");
    }
    Ok(())
}
