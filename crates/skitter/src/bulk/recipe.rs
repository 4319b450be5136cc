//! A recipe of dependent requests, read from [`RecipeSettings`] once by
//! `build`: the steps of each item (its URL, then one URL template per
//! `then`), the values read from each step's response (`let`), and the rule
//! that names a chain's next page (`next`). Everything that cannot work is
//! refused here, with the reason: a template naming a value no earlier step
//! reads, a value read where nothing can use it, pages of one chain that
//! would share a file.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use url::Url;

use super::name::Naming;
use super::placeholder::{self, Piece, Values};
use crate::crawl::build_error::RecipeError;
use crate::parse::items::{PageInput, Pick};
use crate::settings::{DEFAULT_MAX_PAGES, RecipeSettings};

/// Characters a value keeps as they are in a URL: RFC 3986's unreserved.
const VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A value a recipe needed could not be read (or a step's URL could not be
/// made from it): the item fails with this, and the others go on.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{what} ({spec}) of {url}: {why}")]
pub struct ValueError {
    /// What was being read: `value country`, `the next page`, `the URL of
    /// step 2`.
    pub what: String,
    /// The rule or template as given.
    pub spec: String,
    /// The response it was read from (for a step's URL, the step before).
    pub url: Url,
    /// What was wrong: missing, not JSON, an object…
    pub why: String,
}

/// A compiled recipe.
#[derive(Debug)]
pub(crate) struct Recipe {
    /// Step 0 fetches the item's URL; each later one its template's.
    pub steps: Vec<Step>,
    /// How the last step's next page is found, when it paginates.
    pub next: Option<Next>,
    /// Pages one chain may have.
    pub max_pages: u32,
}

/// One request of an item and the values read from its response.
#[derive(Debug)]
pub(crate) struct Step {
    /// `None` for the first step (the item's URL).
    pub url: Option<UrlTemplate>,
    pub picks: Vec<Pick>,
}

/// The URL of a later step: text with placeholders, resolved against the
/// URL of the step before (so `{1}.gif` is a sibling of it).
#[derive(Debug)]
pub(crate) struct UrlTemplate {
    /// As given, for messages.
    pub text: String,
    pieces: Vec<Piece>,
}

/// Where a chain's next page is.
#[derive(Clone, Debug)]
pub(crate) enum Next {
    /// A value that is the next page's URL (resolved against the page).
    Url(Pick),
    /// A cursor put into query parameter `param` of the page's URL.
    Cursor { param: String, pick: Pick },
}

impl Recipe {
    /// The recipe the settings describe; `None` when they ask for nothing.
    pub fn compile(s: &RecipeSettings) -> Result<Option<Recipe>, RecipeError> {
        if s.is_empty() {
            return Ok(None);
        }
        let shape = |why: String| RecipeError::Shape(why);
        let mut steps: Vec<Step> = std::iter::once(None)
            .chain(s.then.iter().map(Some))
            .map(|_| Step {
                url: None,
                picks: Vec::new(),
            })
            .collect();
        let last = steps.len();
        for text in &s.lets {
            let (step, spec) = split_step(text);
            let pick = Pick::parse(spec).map_err(|source| RecipeError::Pick {
                spec: text.clone(),
                source,
            })?;
            if !(1..=last).contains(&step) {
                return Err(shape(format!(
                    "{text:?} reads step {step}, but there are steps 1 to {last}"
                )));
            }
            if step == last {
                return Err(shape(format!(
                    "{text:?} reads the last step ({last}), where no later request or file name can use it"
                )));
            }
            if steps
                .iter()
                .flat_map(|s| &s.picks)
                .any(|p| p.name() == pick.name())
            {
                return Err(shape(format!("the value {} is read twice", pick.name())));
            }
            steps[step - 1].picks.push(pick);
        }
        for (k, template) in s.then.iter().enumerate() {
            // Step k + 2 may use what steps 1 to k + 1 read.
            let known = |name: &str| {
                steps[..=k]
                    .iter()
                    .flat_map(|s| &s.picks)
                    .any(|p| p.name() == name)
            };
            let pieces =
                placeholder::parse(template, false, &known).map_err(|why| RecipeError::Step {
                    template: template.clone(),
                    why,
                })?;
            steps[k + 1].url = Some(UrlTemplate {
                text: template.clone(),
                pieces,
            });
        }
        let next = s.next.as_deref().map(Next::parse).transpose()?;
        Ok(Some(Recipe {
            steps,
            next,
            max_pages: s.max_pages.unwrap_or(DEFAULT_MAX_PAGES),
        }))
    }

    /// Every value name, for parsing the file-name template.
    pub fn names(&self) -> Vec<&str> {
        self.steps
            .iter()
            .flat_map(|s| &s.picks)
            .map(Pick::name)
            .collect()
    }

    /// Checks that the file names can be made: the values they use are read
    /// before the last step (whose body is saved), and pages of a chain get
    /// names of their own.
    pub fn check_naming(&self, naming: &Naming) -> Result<(), RecipeError> {
        let Naming::Template(t) = naming else {
            return Ok(());
        };
        if self.next.is_some() && !t.has_page() {
            return Err(RecipeError::Shape(
                "with a next page, the name template needs {page} so pages do not overwrite each other"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// `2:size=header:content-length` → (2, `size=…`); without a step, 1.
fn split_step(text: &str) -> (usize, &str) {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    match (text[..digits].parse(), text[digits..].strip_prefix(':')) {
        (Ok(step), Some(rest)) if digits > 0 => (step, rest),
        _ => (1, text),
    }
}

impl UrlTemplate {
    /// The step's URL for an item whose values are `values`, against the
    /// URL of the step before; the reason when it is not a URL.
    pub fn render(&self, values: &Values, base: &Url) -> Result<Url, String> {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                other => {
                    let value = values.get(other).unwrap_or_default();
                    out.extend(utf8_percent_encode(&value, VALUE));
                }
            }
        }
        base.join(&out)
            .map_err(|e| format!("{out:?} is not a URL: {e}"))
    }
}

impl Next {
    /// Reads `--next`: a cursor `PARAM=SPEC`, or a value that is a URL.
    fn parse(text: &str) -> Result<Next, RecipeError> {
        let bad = |source| RecipeError::Pick {
            spec: text.to_string(),
            source,
        };
        let prefix = text.split_once(':').map(|(p, _)| p);
        let is_url_rule = text.starts_with('{')
            || matches!(
                prefix,
                Some("css" | "html" | "regex" | "json" | "header" | "link")
            );
        if !is_url_rule && let Some((param, spec)) = text.split_once('=') {
            let param = param.trim();
            let plain = |b: u8| b.is_ascii_alphanumeric() || b"-._~[]".contains(&b);
            if !param.is_empty() && param.bytes().all(plain) {
                let pick = Pick::named("cursor", spec.trim()).map_err(bad)?;
                return Ok(Next::Cursor {
                    param: param.to_string(),
                    pick,
                });
            }
        }
        Pick::named("next", text).map(Next::Url).map_err(bad)
    }

    /// The pick this rule reads.
    pub fn pick(&self) -> &Pick {
        match self {
            Next::Url(pick) | Next::Cursor { pick, .. } => pick,
        }
    }

    /// The next page after `page` (`url`), `Ok(None)` at the end of the chain.
    pub fn read(
        &self,
        page: &PageInput<'_>,
        headers: &reqwest::header::HeaderMap,
    ) -> Result<Option<Url>, String> {
        let Some(value) = self.pick().read(page, headers)? else {
            return Ok(None);
        };
        match self {
            Next::Url(_) => page
                .url
                .join(&value)
                .map(Some)
                .map_err(|e| format!("{value:?} is not a URL: {e}")),
            Next::Cursor { param, .. } => {
                let mut next = page.url.clone();
                let kept: Vec<(String, String)> = page
                    .url
                    .query_pairs()
                    .filter(|(k, _)| k != param.as_str())
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect();
                next.query_pairs_mut()
                    .clear()
                    .extend_pairs(kept)
                    .append_pair(param, &value);
                Ok(Some(next))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use reqwest::header::HeaderMap;

    use super::*;

    fn recipe(
        lets: &[&str],
        then: &[&str],
        next: Option<&str>,
    ) -> Result<Option<Recipe>, RecipeError> {
        Recipe::compile(&RecipeSettings {
            lets: lets.iter().map(|s| s.to_string()).collect(),
            then: then.iter().map(|s| s.to_string()).collect(),
            next: next.map(str::to_string),
            max_pages: None,
        })
    }

    #[test]
    fn a_later_step_uses_earlier_values_percent_encoded() {
        let r = recipe(
            &["country=json:/country"],
            &["{1}/{country}.gif?x={country}"],
            None,
        )
        .unwrap()
        .unwrap();
        let values = Values {
            captures: vec!["br".into()],
            vars: vec![("country".into(), "Côte d'Ivoire/&".into())],
            page: 1,
        };
        let base = Url::parse("http://h/flags/br/metadata.json").unwrap();
        let url = r.steps[1]
            .url
            .as_ref()
            .unwrap()
            .render(&values, &base)
            .unwrap();
        assert_eq!(
            url.as_str(),
            "http://h/flags/br/br/C%C3%B4te%20d%27Ivoire%2F%26.gif?x=C%C3%B4te%20d%27Ivoire%2F%26"
        );
    }

    #[test]
    fn recipes_that_cannot_work_are_refused() {
        type Case<'a> = (&'a [&'a str], &'a [&'a str], Option<&'a str>, &'a str);
        let cases: [Case; 6] = [
            (&["a=json:/a"], &["{b}"], None, "unknown placeholder {b}"),
            (&["2:a=json:/a"], &["x"], None, "last step"),
            (&["3:a=json:/a"], &["x"], None, "steps 1 to 2"),
            (&["a=json:/a", "a=json:/b"], &["x"], None, "twice"),
            (&["a=nope:x"], &["x"], None, "bad value"),
            (&[], &[], Some("after=bogus:x"), "bad value"),
        ];
        for (lets, then, next, words) in cases {
            let e = recipe(lets, then, next).unwrap_err();
            let text = format!(
                "{e}: {}",
                std::error::Error::source(&e)
                    .map(|s| s.to_string())
                    .unwrap_or_default()
            );
            assert!(text.contains(words), "{lets:?} {then:?}: {text}");
        }
        assert!(recipe(&[], &[], None).unwrap().is_none());
    }

    #[test]
    fn the_next_page_is_a_url_or_a_cursor_in_the_query() {
        let url = Url::parse("http://h/api/1?after=old&q=x").unwrap();
        let body = br#"{"next":"/api/2","cursor":"c 2"}"#;
        let page = PageInput {
            url: &url,
            body,
            charset: None,
            fetched_at: Utc::now(),
        };
        let read = |spec: &str| {
            let r = recipe(&[], &[], Some(spec)).unwrap().unwrap();
            r.next
                .unwrap()
                .read(&page, &HeaderMap::new())
                .unwrap()
                .map(String::from)
        };
        assert_eq!(read("json:/next").as_deref(), Some("http://h/api/2"));
        assert_eq!(
            read("after=json:/cursor").as_deref(),
            Some("http://h/api/1?q=x&after=c+2")
        );
        assert_eq!(read("json:/none"), None);
        assert_eq!(read("link:next"), None);
    }
}
