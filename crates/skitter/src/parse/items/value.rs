//! A field's raw matches turned into its typed value: the regex applied, the
//! type converted, `all` gathered into an array, each value within its cap.

use regex::Regex;
use serde_json::Value;
use url::Url;

use super::limits::{Budget, MAX_VALUE_BYTES, cut_value};
use super::rule_set::{Field, FieldType};

/// One thing a field's source matched, before the regex and the type.
#[derive(Debug)]
pub(crate) enum Raw {
    Text(String),
    /// Already the regex's capture (a regex over the page text).
    Captured(String),
    Json(Value),
}

/// What a field came to on one record: its value (`null` when nothing
/// matched), and what went wrong on the way (a cap, a failed conversion).
pub(crate) struct Converted {
    pub value: Value,
    pub problem: Option<String>,
}

/// The field's value from its raw matches (all of them for `all`, else the
/// first).
pub(crate) fn convert(field: &Field, raws: Vec<Raw>, base: &Url, budget: &mut Budget) -> Converted {
    let mut problem = None;
    let mut values = Vec::new();
    for raw in raws {
        if let Raw::Json(Value::Null) = raw {
            // JSON's "nothing here" is the field's too, not a value to convert.
            continue;
        }
        let raw = match (&field.regex, raw) {
            (None, raw) => raw,
            (Some(_), Raw::Captured(s)) => Raw::Text(s),
            (Some(re), Raw::Text(s)) => match capture(re, &s) {
                Some(c) => Raw::Text(c),
                None => continue,
            },
            (Some(re), Raw::Json(v)) => match capture(re, &json_text(&v)) {
                Some(c) => Raw::Text(c),
                None => continue,
            },
        };
        match typed(field, raw, base) {
            Ok(v) => {
                let (v, cut) = within_cap(v);
                if cut {
                    problem.get_or_insert_with(|| {
                        format!("limit: value cut at {MAX_VALUE_BYTES} bytes")
                    });
                }
                if !budget.take_bytes(size_of_value(&v)) {
                    break;
                }
                values.push(v);
            }
            Err(e) => {
                problem.get_or_insert(e);
            }
        }
        if !field.all {
            break;
        }
    }
    let value = if field.all {
        Value::Array(values)
    } else {
        values.pop().unwrap_or(Value::Null)
    };
    Converted { value, problem }
}

/// The first capture group's text, or the whole match without groups.
fn capture(re: &Regex, s: &str) -> Option<String> {
    let caps = re.captures(s)?;
    caps.get(1)
        .or_else(|| caps.get(0))
        .map(|m| m.as_str().to_string())
}

/// A JSON value as text for a regex or a string field: strings without
/// quotes, anything else as JSON.
fn json_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn typed(field: &Field, raw: Raw, base: &Url) -> Result<Value, String> {
    let text = match raw {
        Raw::Json(v) if !field.typed => return Ok(v),
        Raw::Json(Value::Number(n)) if field.ty == FieldType::Integer && n.is_i64() => {
            return Ok(Value::Number(n));
        }
        Raw::Json(Value::Number(n)) if field.ty == FieldType::Number => {
            return Ok(Value::Number(n));
        }
        Raw::Json(v) => json_text(&v),
        Raw::Text(s) | Raw::Captured(s) => s,
    };
    let bad = |what: &str| format!("cannot read {} as {what}", preview(&text));
    match field.ty {
        FieldType::String => Ok(Value::String(text)),
        FieldType::Integer => text
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| bad("an integer")),
        FieldType::Number => text
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| bad("a number")),
        FieldType::Url => base
            .join(text.trim())
            .map(|u| Value::String(u.into()))
            .map_err(|_| bad("a URL")),
    }
}

/// A short, safe rendering of a value for a failure message.
fn preview(s: &str) -> String {
    let short: String = s.chars().take(40).collect();
    if short.len() < s.len() {
        format!("{short:?}…")
    } else {
        format!("{short:?}")
    }
}

/// Strings cut to the value cap; a JSON value larger than it is refused
/// (replaced by `null`), since a cut would not be JSON.
fn within_cap(v: Value) -> (Value, bool) {
    match v {
        Value::String(s) => {
            let (s, cut) = cut_value(s);
            (Value::String(s), cut)
        }
        Value::Array(_) | Value::Object(_) if size_of_value(&v) > MAX_VALUE_BYTES => {
            (Value::Null, true)
        }
        v => (v, false),
    }
}

/// About how many bytes a value takes in an output, bounded in its work by the
/// value's own size.
pub(crate) fn size_of_value(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len() + 2,
        Value::Array(_) | Value::Object(_) => {
            // serde_json's writer recurses, but only as deep as its parser
            // accepted (128 levels): values only come from there.
            serde_json::to_vec(v).map_or(0, |b| b.len())
        }
        _ => 8,
    }
}
