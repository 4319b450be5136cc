//! One item of a recipe: its steps in order (each request built from what
//! the ones before read), then the last step's pages followed one after the
//! other until none is named, the chain comes back to a page it fetched, or
//! it reaches its page limit.
//!
//! Each request is an ordinary hop of the runner ([`follow`]: the host and
//! global caps, retries, redirects, sinks, extraction, saving), so a chain
//! is polite and archived like any item; its pages are sequential because
//! each needs the one before, and chains run side by side as items do.
//! Values are read on the CPU pool, as extraction is. A value that cannot be
//! read fails its item alone ([`Outcome::Value`]). With a state file
//! ([`journal`](super::journal)), where the item has got to is recorded after
//! each step and page, and a run started again resumes each item there.

use std::collections::HashSet;

use url::Url;

use super::context::{Ctx, Finished};
use super::hop::follow;
use super::journal::{Journal, Mark};
use super::name;
use super::placeholder::Values;
use super::read::Wanted;
use super::recipe::{Recipe, ValueError};
use super::summary::{ChainStop, ItemReport, Outcome};

/// Where an item starts.
pub(super) struct Start {
    /// The item's URL, without credentials.
    pub url: Url,
    /// The URL as given (credentials and all).
    pub origin: Url,
    /// The values the input pattern's ranges took.
    pub ranges: Vec<String>,
    /// The item's input position.
    pub n: u64,
}

/// Runs one item's steps and chain to its report; `None` when a stop came.
pub(super) async fn run(
    ctx: &Ctx,
    recipe: &Recipe,
    start: Start,
    mut report: ItemReport,
) -> Option<Finished> {
    let mut values = Values {
        captures: start.ranges,
        vars: Vec::new(),
        page: 1,
    };
    let key = start.url.clone();
    // Every request of the item is made on behalf of its input: only those
    // to the input's own origin carry the user's headers and credentials, and
    // only its host and port may be private, so a response cannot lead the
    // user's secrets, or the fetcher, elsewhere.
    let origin = start.origin;
    let mut request = (start.url, origin.clone());
    let (mut first, mut page) = (0, 1);
    let journal = ctx.config.journal.as_ref();
    if let Some(mark) = match journal {
        Some(j) => j.lookup(&key).await,
        None => None,
    } {
        if mark.done {
            report.outcome = Outcome::Done;
            return Some((report, None));
        }
        values.vars = mark.values;
        request = (mark.url, origin.clone());
        (first, page) = (mark.step, mark.page);
    }
    let last = recipe.steps.len() - 1;
    for (k, step) in recipe.steps.iter().enumerate().skip(first) {
        // A chain resumed past its first page starts at that page itself.
        if let (Some(template), 1) = (&step.url, page) {
            let base = &request.0;
            match template.render(&values, base) {
                Ok(url) => request = (url, origin.clone()),
                Err(why) => {
                    report.outcome = Outcome::Value(ValueError {
                        what: format!("the URL of step {}", k + 1),
                        spec: template.text.clone(),
                        url: base.clone(),
                        why,
                    });
                    return Some((report, None));
                }
            }
        }
        if k == last {
            break;
        }
        let wanted = Wanted {
            picks: &step.picks,
            next: None,
        };
        let ((done, _), read) = follow(ctx, request.clone(), (None, None), report, wanted).await?;
        report = done;
        match read {
            Some(Ok(found)) => values.vars.extend(found.values),
            Some(Err(e)) => report.outcome = Outcome::Value(e),
            // Not a 2xx: the outcome says why.
            None => {}
        }
        if report.outcome.is_failure() {
            return Some((report, None));
        }
        // Later steps resolve against where this one ended.
        if let Some(end) = report.final_url.take() {
            request.0 = end;
        }
        let mark = Mark {
            step: k + 1,
            url: request.0.clone(),
            page: 1,
            values: values.vars.clone(),
            done: false,
        };
        note(journal, &key, &mark).await;
    }
    let chain = Chain {
        recipe,
        journal,
        key: &key,
        n: start.n,
        first_page: page,
    };
    pages(ctx, chain, request, values, report).await
}

/// Where a chain of pages belongs and where it starts.
struct Chain<'a> {
    recipe: &'a Recipe,
    journal: Option<&'a Journal>,
    /// The item's URL, its key in the state file.
    key: &'a Url,
    /// The item's input position.
    n: u64,
    /// The page number of the first page fetched (above 1 when resumed).
    first_page: u32,
}

/// The last step, and its next pages while the recipe has a rule for them.
async fn pages(
    ctx: &Ctx,
    chain: Chain<'_>,
    (mut url, origin): (Url, Url),
    mut values: Values,
    mut report: ItemReport,
) -> Option<Finished> {
    let recipe = chain.recipe;
    let mut seen = HashSet::new();
    // Body bytes of every page, not only the last.
    let mut bytes = 0;
    let wanted = Wanted {
        picks: &[],
        next: recipe.next.as_ref(),
    };
    for page in chain.first_page.. {
        seen.insert(url.clone());
        values.page = page;
        let target = ctx
            .config
            .output
            .as_ref()
            .map(|o| name::target_path_with(&o.dir, &o.naming, &url, chain.n, &values));
        // Without pages to follow, a file already there (named by values
        // the earlier steps read) needs no last request.
        let skip = ctx.config.output.as_ref().is_some_and(|o| o.skip_existing);
        if let (true, None, Some(path)) = (skip, &recipe.next, &target)
            && tokio::fs::try_exists(path).await.unwrap_or(false)
        {
            report.outcome = Outcome::Exists;
            break;
        }
        let request = (url.clone(), origin.clone());
        let ((done, _), read) = follow(ctx, request, (target, None), report, wanted).await?;
        report = done;
        bytes += report.bytes;
        report.bytes = bytes;
        if recipe.next.is_some() && !report.outcome.is_failure() {
            report.pages = page - chain.first_page + 1;
        }
        let next = match read {
            Some(Ok(found)) => found.next,
            Some(Err(e)) => {
                report.outcome = Outcome::Value(e);
                None
            }
            None => None,
        };
        let Some(next) = next.filter(|_| !report.outcome.is_failure()) else {
            break;
        };
        if seen.contains(&next) {
            report.chain_stop = Some(ChainStop::Loop(next));
            break;
        }
        if page >= recipe.max_pages {
            report.chain_stop = Some(ChainStop::MaxPages(recipe.max_pages));
            break;
        }
        let mark = Mark {
            step: recipe.steps.len() - 1,
            url: next.clone(),
            page: page + 1,
            values: values.vars.clone(),
            done: false,
        };
        note(chain.journal, chain.key, &mark).await;
        url = next;
    }
    if !report.outcome.is_failure() {
        let mark = Mark {
            step: recipe.steps.len() - 1,
            url,
            page: values.page,
            values: values.vars,
            done: true,
        };
        note(chain.journal, chain.key, &mark).await;
    }
    Some((report, None))
}

/// Records `mark` in the state file, if there is one. A write that fails is
/// logged, not fatal: the run goes on, and a later one resumes from an
/// earlier point (a request made again, never one skipped).
async fn note(journal: Option<&Journal>, key: &Url, mark: &Mark) {
    if let Some(j) = journal
        && let Err(e) = j.record(key, mark).await
    {
        tracing::warn!("state file: {e}");
    }
}
