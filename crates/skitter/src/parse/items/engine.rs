//! Applying [`Rules`] to one page: which rule sets match its URL, the body
//! parsed once as what they need (text, an HTML DOM, a JSON value), records
//! made from each rule set, failures collected.
//!
//! One rule set that fails, or panics, is a failure recorded on the page; the
//! other rule sets still run. The work and output are capped per page (see
//! [`limits`](super::limits)).

use std::borrow::Cow;
use std::cell::{Cell, OnceCell, RefCell};

use chrono::{DateTime, Utc};
use scraper::{ElementRef, Html};
use serde_json::Value;
use url::Url;

use super::limits::{Budget, MAX_FAILURES, MAX_MATCHES, MAX_RECORDS};
use super::rule_set::{Field, ItemRule, RuleSet, Source, Take};
use super::stream::{self, StreamPass};
use super::value::{self, Raw};
use super::{ExtractFailure, Item, Items, Rules, html, nesting};

/// One fetched page, as extraction reads it.
#[derive(Clone, Copy, Debug)]
pub struct PageInput<'a> {
    /// The page's URL (rule sets match it; `url` fields resolve against it).
    pub url: &'a Url,
    /// The body after content decoding (gzip and the like), as bytes.
    pub body: &'a [u8],
    /// The `charset` of the `Content-Type` header, if any (HTML is decoded by
    /// BOM, this, `<meta>`, then UTF-8).
    pub charset: Option<&'a str>,
    /// When the page's exchange started.
    pub fetched_at: DateTime<Utc>,
}

impl Rules {
    /// Applies the rule sets that match the page's URL; `None` when none does.
    /// Never fails and never panics: what goes wrong is in [`Items::errors`].
    pub fn extract(&self, page: &PageInput<'_>) -> Option<Items> {
        self.extract_with(page, None, Css::Stream)
            .map(|(items, _)| items)
    }

    /// The streaming pass for the rule sets matching `url`, to run inside the
    /// caller's `lol_html` pass over `text` (the decoded page): `None` when
    /// they need the DOM anyway or read no CSS field, an error when the page
    /// is declined before the pass starts.
    pub(crate) fn stream_pass<'t, 'r>(
        &'r self,
        url: &Url,
        text: &'t str,
    ) -> Option<Result<StreamPass<'t, 'r>, stream::Declined>> {
        let sets = self.matching(url.as_str());
        wants_stream(&sets).then(|| StreamPass::new(text, sets))
    }

    /// [`Rules::extract`] with the page's decoded text if the caller has it,
    /// and the way CSS fields are read; also whether they were streamed.
    pub(crate) fn extract_with(
        &self,
        page: &PageInput<'_>,
        text: Option<&str>,
        css: Css,
    ) -> Option<(Items, bool)> {
        let sets = self.matching(page.url.as_str());
        if sets.is_empty() {
            return None;
        }
        let doc = Doc::new(page, text);
        match css {
            Css::Dom | Css::Given(Err(_)) => {}
            Css::Stream => doc.stream(&sets),
            Css::Given(Ok(values)) => *doc.streamed.borrow_mut() = values,
        }
        let streamed = !doc.streamed.borrow().is_empty();
        let mut run = Run {
            items: Items {
                fetched_at: page.fetched_at,
                rule_sets: sets.iter().map(|s| s.name.clone()).collect(),
                ..Items::default()
            },
            budget: Budget::new(),
            dropped_failures: 0,
        };
        for (pos, set) in sets.into_iter().enumerate() {
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run.rule_set(set, pos, &doc);
            }));
            if let Err(panic) = caught {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "panic".into());
                run.fail(set, None, format!("internal error: {message}"));
            }
        }
        if let Some(at) = doc.cut.get() {
            run.items.errors.push(ExtractFailure {
                rule_set: String::new(),
                field: None,
                message: format!(
                    "limit: elements nested deeper than {}; the page was read up to byte {at}",
                    nesting::MAX_DEPTH
                ),
            });
        }
        Some((run.finish(), streamed))
    }
}

impl Rules {
    fn matching(&self, url: &str) -> Vec<&RuleSet> {
        self.sets.iter().filter(|s| s.matches(url)).collect()
    }
}

/// Whether the CSS fields of these rule sets can be streamed: all of them
/// allow it, and there is some CSS field to read.
fn wants_stream(sets: &[&RuleSet]) -> bool {
    sets.iter().all(|s| s.streams())
        && sets
            .iter()
            .any(|s| s.fields.iter().any(|f| matches!(f.source, Source::Css(..))))
}

/// How a page's CSS fields are read.
pub(crate) enum Css {
    /// From the DOM.
    Dom,
    /// By a streaming pass of their own when the rule sets allow it, else
    /// from the DOM.
    Stream,
    /// As a streaming pass the caller ran gave them (from the DOM if it
    /// declined).
    Given(Result<stream::Values, stream::Declined>),
}

/// The body, parsed on first use as each rule set needs it.
struct Doc<'a> {
    page: &'a PageInput<'a>,
    text: OnceCell<Cow<'a, str>>,
    html: OnceCell<Html>,
    json: OnceCell<Result<Value, String>>,
    /// Where the DOM was cut for nesting too deep.
    cut: Cell<Option<usize>>,
    /// The CSS fields' raw values from the streaming path, by rule set and
    /// field, when it ran (then the DOM is never built).
    streamed: RefCell<Vec<Vec<Option<Vec<String>>>>>,
}

impl<'a> Doc<'a> {
    fn new(page: &'a PageInput<'a>, text: Option<&'a str>) -> Doc<'a> {
        Doc {
            page,
            text: text
                .map(Cow::Borrowed)
                .map(OnceCell::from)
                .unwrap_or_default(),
            html: OnceCell::new(),
            json: OnceCell::new(),
            cut: Cell::new(None),
            streamed: RefCell::new(Vec::new()),
        }
    }

    /// Reads the CSS fields of `sets` in one streaming pass when every rule
    /// set allows it and the page is one the pass follows exactly (see
    /// [`stream`]); otherwise leaves them to the DOM. A panic in the pass
    /// leaves them to the DOM too, where it is caught per rule set as before.
    fn stream(&self, sets: &[&RuleSet]) {
        if !wants_stream(sets) {
            return;
        }
        let text = self.text();
        let got =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| stream::run(text, sets)));
        if let Ok(Ok(values)) = got {
            *self.streamed.borrow_mut() = values;
        }
    }

    /// The streamed raw values of one field, once.
    fn take_streamed(&self, set: usize, field: usize) -> Option<Vec<String>> {
        self.streamed
            .borrow_mut()
            .get_mut(set)?
            .get_mut(field)?
            .take()
    }

    fn text(&self) -> &str {
        self.text
            .get_or_init(|| crate::parse::links::decode_html(self.page.body, self.page.charset).0)
    }

    /// The DOM, of the part of the page before any nesting deeper than
    /// [`nesting::MAX_DEPTH`] (see there why).
    fn html(&self) -> &Html {
        self.html.get_or_init(|| {
            let text = self.text();
            let text = match nesting::too_deep_at(text) {
                Some(at) => {
                    self.cut.set(Some(at));
                    &text[..at]
                }
                None => text,
            };
            Html::parse_document(text)
        })
    }

    /// The body as JSON; serde_json's recursion limit (128 levels) stays on,
    /// so a deeper body is this page's failure, not a stack overflow.
    fn json(&self) -> Result<&Value, String> {
        self.json
            .get_or_init(|| {
                let body = self.page.body;
                let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
                serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// Where a record's fields are read from.
#[derive(Clone, Copy)]
enum Scope<'d> {
    Page,
    Element(ElementRef<'d>),
    Json(&'d Value),
}

/// One page's extraction in progress.
struct Run {
    items: Items,
    budget: Budget,
    dropped_failures: usize,
}

impl Run {
    fn fail(&mut self, set: &RuleSet, field: Option<&str>, message: String) {
        if self.items.errors.len() >= MAX_FAILURES {
            self.dropped_failures += 1;
            return;
        }
        self.items.errors.push(ExtractFailure {
            rule_set: set.name.clone(),
            field: field.map(str::to_string),
            message,
        });
    }

    fn finish(mut self) -> Items {
        if self.dropped_failures > 0 {
            self.items.errors.push(ExtractFailure {
                rule_set: String::new(),
                field: None,
                message: format!(
                    "limit: {} more failures on this page not listed",
                    self.dropped_failures
                ),
            });
        }
        if let Some(cap) = self.budget.exhausted {
            self.items.errors.push(ExtractFailure {
                rule_set: String::new(),
                field: None,
                message: cap.to_string(),
            });
        }
        self.items
    }

    fn rule_set<'d>(&mut self, set: &RuleSet, pos: usize, doc: &'d Doc<'d>) {
        if set.reads_json()
            && let Err(e) = doc.json()
        {
            // Nothing a JSON rule set reads is there: no record, one failure.
            return self.fail(set, None, e);
        }
        let scopes: Vec<Scope<'d>> = match &set.item {
            None => vec![Scope::Page],
            Some(ItemRule::Css(sel)) => {
                let root = doc.html().root_element();
                html::select(root, true, sel, MAX_RECORDS + 1, &mut self.budget)
                    .into_iter()
                    .map(Scope::Element)
                    .collect()
            }
            Some(ItemRule::Json(pointer)) => match doc.json() {
                Err(e) => return self.fail(set, None, e),
                Ok(v) => match v.pointer(pointer) {
                    None => Vec::new(),
                    Some(Value::Array(a)) => {
                        a.iter().take(MAX_RECORDS + 1).map(Scope::Json).collect()
                    }
                    Some(Value::Object(o)) => {
                        o.values().take(MAX_RECORDS + 1).map(Scope::Json).collect()
                    }
                    Some(_) => {
                        return self.fail(
                            set,
                            None,
                            format!("`item` {pointer:?} is not an array or object"),
                        );
                    }
                },
            },
        };
        if scopes.len() > MAX_RECORDS {
            self.fail(
                set,
                None,
                format!("limit: more than {MAX_RECORDS} records; the rest are not read"),
            );
        }
        let mut index = 0;
        for (n, scope) in scopes.into_iter().take(MAX_RECORDS).enumerate() {
            if self.budget.is_exhausted() {
                break;
            }
            if let Some(fields) = self.record(set, pos, doc, scope, n) {
                self.items.records.push(Item {
                    rule_set: set.name.clone(),
                    index,
                    fields,
                });
                index += 1;
            }
        }
    }

    /// One record's fields from one scope; `None` (the record dropped) when a
    /// required field is missing.
    fn record<'d>(
        &mut self,
        set: &RuleSet,
        pos: usize,
        doc: &'d Doc<'d>,
        scope: Scope<'d>,
        n: usize,
    ) -> Option<Vec<(String, Value)>> {
        let mut fields = Vec::with_capacity(set.fields.len());
        let mut complete = true;
        for (f, field) in set.fields.iter().enumerate() {
            let streamed = match scope {
                Scope::Page => doc.take_streamed(pos, f),
                _ => None,
            };
            let raws = match streamed {
                Some(values) => Ok(values.into_iter().map(Raw::Text).collect()),
                None => self.raw(field, doc, scope),
            };
            let raws = match raws {
                Ok(raws) => raws,
                Err(e) => {
                    self.fail(set, Some(&field.name), e);
                    fields.push((field.name.clone(), Value::Null));
                    complete &= !field.required;
                    continue;
                }
            };
            let got = value::convert(field, raws, doc.page.url, &mut self.budget);
            if let Some(problem) = got.problem {
                self.fail(set, Some(&field.name), format!("record {n}: {problem}"));
            }
            let missing = got.value.is_null() || got.value.as_array().is_some_and(|a| a.is_empty());
            if field.required && missing {
                self.fail(
                    set,
                    Some(&field.name),
                    format!("record {n}: required field missing"),
                );
                complete = false;
            }
            fields.push((field.name.clone(), got.value));
        }
        complete.then_some(fields)
    }

    /// What a field's source matched in this scope (the first only, unless `all`).
    fn raw<'d>(
        &mut self,
        field: &Field,
        doc: &'d Doc<'d>,
        scope: Scope<'d>,
    ) -> Result<Vec<Raw>, String> {
        let max = if field.all { MAX_MATCHES } else { 1 };
        match &field.source {
            Source::Json(pointer) => {
                let base = match scope {
                    Scope::Json(v) => v,
                    _ => doc.json()?,
                };
                Ok(match (base.pointer(pointer), field.all) {
                    (None, _) => Vec::new(),
                    (Some(Value::Array(a)), true) => {
                        a.iter().take(max).cloned().map(Raw::Json).collect()
                    }
                    (Some(v), _) => vec![Raw::Json(v.clone())],
                })
            }
            Source::Text => match scope {
                Scope::Element(el) => Ok(vec![Raw::Text(html::text(el, &mut self.budget))]),
                _ if field.all => {
                    let re = field.regex.as_ref().ok_or("a text field needs a regex")?;
                    Ok(re
                        .captures_iter(doc.text())
                        .take(max)
                        .filter_map(|c| c.get(1).or_else(|| c.get(0)))
                        .map(|m| Raw::Captured(m.as_str().to_string()))
                        .collect())
                }
                _ => {
                    let re = field.regex.as_ref().ok_or("a text field needs a regex")?;
                    Ok(re
                        .captures(doc.text())
                        .and_then(|c| c.get(1).or_else(|| c.get(0)))
                        .map(|m| Raw::Captured(m.as_str().to_string()))
                        .into_iter()
                        .collect())
                }
            },
            Source::Css(sel, take) => {
                let (root, include_self) = match scope {
                    Scope::Element(el) => (el, false),
                    _ => (doc.html().root_element(), true),
                };
                let els = match sel {
                    Some(sel) => html::select(root, include_self, sel, max, &mut self.budget),
                    None => vec![root],
                };
                Ok(els
                    .into_iter()
                    .filter_map(|el| match take {
                        Take::Text => Some(html::text(el, &mut self.budget)),
                        Take::Attr(name) => html::attr(el, name),
                        Take::Html => Some(html::inner_html(el, &mut self.budget)),
                    })
                    .map(Raw::Text)
                    .collect())
            }
        }
    }
}
