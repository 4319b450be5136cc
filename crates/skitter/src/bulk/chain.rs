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
//! read fails its item alone ([`Outcome::Value`]).

use std::collections::HashSet;

use url::Url;

use super::context::{Ctx, Finished};
use super::hop::follow;
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
    let mut request = (start.url.clone(), start.origin);
    let last = recipe.steps.len() - 1;
    for (k, step) in recipe.steps.iter().enumerate() {
        if let Some(template) = &step.url {
            let base = &request.0;
            match template.render(&values, base) {
                Ok(url) => request = (url.clone(), url),
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
    }
    pages(ctx, recipe, request, values, (start.n, report)).await
}

/// The last step, and its next pages while the recipe has a rule for them.
async fn pages(
    ctx: &Ctx,
    recipe: &Recipe,
    (mut url, mut origin): (Url, Url),
    mut values: Values,
    (n, mut report): (u64, ItemReport),
) -> Option<Finished> {
    let mut seen = HashSet::new();
    // Body bytes of every page, not only the last.
    let mut bytes = 0;
    let wanted = Wanted {
        picks: &[],
        next: recipe.next.as_ref(),
    };
    for page in 1u32.. {
        seen.insert(url.clone());
        values.page = page;
        let target = ctx
            .config
            .output
            .as_ref()
            .map(|o| name::target_path_with(&o.dir, &o.naming, &url, n, &values));
        // Without pages to follow, a file already there (named by values
        // the earlier steps read) needs no last request.
        let skip = ctx.config.output.as_ref().is_some_and(|o| o.skip_existing);
        if let (true, None, Some(path)) = (skip, &recipe.next, &target)
            && tokio::fs::try_exists(path).await.unwrap_or(false)
        {
            report.outcome = Outcome::Exists;
            break;
        }
        let request = (url.clone(), origin);
        let ((done, _), read) = follow(ctx, request, (target, None), report, wanted).await?;
        report = done;
        bytes += report.bytes;
        report.bytes = bytes;
        if recipe.next.is_some() && !report.outcome.is_failure() {
            report.pages = page;
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
        url = next.clone();
        origin = next;
    }
    Some((report, None))
}
