//! The crawl's records and the network's answers joined into one
//! [`LinkResult`] per distinct link: a target's redirects followed through
//! the crawl's records, its status judged by the accepted set, each of its
//! fragments looked up in the final page's anchors.

use std::collections::{BTreeMap, HashMap, HashSet};

use url::Url;

use crate::base::outcome::{ErrorKind, OutcomeKind};
use crate::settings::CheckSettings;

use super::collect::{Collected, NewTarget, Target};
use super::remote::{Answer, End};
use super::result::{CheckReport, CheckSummary, LinkResult, LinkState, Occurrence, Problem};
use super::route::{Route, Router};

/// What is known of one target.
enum Known<'a> {
    /// It was fetched (by the crawl or the checker).
    Fetched {
        end: End,
        moved_to: Option<Url>,
        retried: Option<u32>,
        /// The final page's anchors, when it is an HTML page read for them.
        anchors: Option<&'a HashSet<String>>,
        cached: bool,
    },
    /// Not checked, for this reason.
    Skipped(String),
    /// Nothing: the crawl never got to it (and no check was made after).
    Unknown,
}

/// What the crawl's records say of `url`, its redirects followed.
fn from_crawl<'a>(c: &'a Collected, url: &Url, max_redirect: u32) -> Known<'a> {
    let mut here = url.clone();
    let mut seen = HashSet::from([here.clone()]);
    let mut moved_to = None;
    for hop in 0..=max_redirect {
        let Some(rec) = c.crawled.get(&here) else {
            return Known::Unknown;
        };
        let retried = (rec.attempts > 1).then_some(rec.attempts);
        let end = match (rec.kind, &rec.next_url, &rec.error) {
            (OutcomeKind::Skipped, _, _) => {
                let reason = rec.skip.map_or("skipped", |s| s.as_str());
                return Known::Skipped(reason.to_owned());
            }
            (OutcomeKind::Redirect, Some(next), _) => {
                if hop == 0 && matches!(rec.status, Some(301 | 308)) {
                    moved_to = Some(next.clone());
                }
                if !seen.insert(next.clone()) {
                    End::Loop
                } else {
                    here = next.clone();
                    continue;
                }
            }
            (_, _, Some(err)) if err.kind == ErrorKind::TooManyRedirects => End::TooMany,
            (_, _, Some(err)) if rec.status.is_none() => End::Failed(err.clone()),
            _ => End::Status(rec.status.unwrap_or(0)),
        };
        let anchors = c
            .anchors
            .get(&here)
            .filter(|_| !c.anchors_cut.contains(&here));
        return Known::Fetched {
            end,
            moved_to,
            retried,
            anchors,
            cached: false,
        };
    }
    Known::Fetched {
        end: End::TooMany,
        moved_to,
        retried: None,
        anchors: None,
        cached: false,
    }
}

fn from_answer(answer: &Answer) -> Known<'_> {
    Known::Fetched {
        end: answer.end.clone(),
        moved_to: answer.moved_to.clone(),
        retried: answer.retried,
        anchors: answer.anchors.as_ref(),
        cached: answer.cached,
    }
}

/// What is known of the target `url`.
fn known<'a>(
    c: &'a Collected,
    answers: &'a HashMap<Url, Answer>,
    router: &Router,
    url: &Url,
    max_redirect: u32,
) -> Known<'a> {
    match router.route(url) {
        Route::Skip(reason) => Known::Skipped(reason.to_owned()),
        Route::Internal(url) => match from_crawl(c, &url, max_redirect) {
            Known::Unknown => answers.get(&url).map_or(Known::Unknown, from_answer),
            known => known,
        },
        Route::Remote(url) => answers.get(&url).map_or(Known::Unknown, from_answer),
    }
}

/// The results of the target `url` when what is known of it decides them:
/// none while it is unknown, and none for a fragment whose page's anchors
/// are not in yet (a later answer may bring them).
pub(crate) fn decided(
    c: &Collected,
    answers: &HashMap<Url, Answer>,
    router: &Router,
    url: &Url,
    max_redirect: u32,
) -> Vec<LinkResult> {
    let Some(target) = c.targets.get(url) else {
        return Vec::new();
    };
    let known = known(c, answers, router, url, max_redirect);
    let anchors_in = match &known {
        Known::Unknown => return Vec::new(),
        Known::Fetched { anchors, .. } => anchors.is_some(),
        Known::Skipped(_) => true,
    };
    let internal = matches!(router.route(url), Route::Internal(_));
    let mut results = results_of(url, target, &known, router, internal);
    results.retain(|r| {
        let fragment = r.url.fragment().filter(|f| !f.is_empty() && *f != "top");
        anchors_in || !router.fragments || fragment.is_none() || r.is_broken()
    });
    results
}

/// Targets on the crawled site the crawl did not answer for, to be checked
/// over the network now.
pub(crate) fn unanswered(
    c: &Collected,
    answers: &HashMap<Url, Answer>,
    router: &Router,
    max_redirect: u32,
) -> Vec<NewTarget> {
    c.targets
        .iter()
        .filter(|(url, _)| matches!(router.route(url), Route::Internal(_)))
        .filter(|(url, _)| matches!(known(c, answers, router, url, max_redirect), Known::Unknown))
        .map(|(url, t)| NewTarget {
            url: url.clone(),
            anchors: t.fragments,
        })
        .collect()
}

/// The report: one result per distinct link, sorted by URL.
pub(crate) fn report(
    c: &Collected,
    answers: &HashMap<Url, Answer>,
    router: &Router,
    settings: &CheckSettings,
) -> CheckReport {
    let max_redirect = settings.crawl.request.max_redirect;
    let mut links = Vec::new();
    for (url, target) in &c.targets {
        let known = known(c, answers, router, url, max_redirect);
        let internal = matches!(router.route(url), Route::Internal(_));
        links.extend(results_of(url, target, &known, router, internal));
    }
    links.sort_by(|a, b| a.url.as_str().cmp(b.url.as_str()));
    let count = |f: &dyn Fn(&LinkResult) -> bool| links.iter().filter(|l| f(l)).count() as u64;
    let summary = CheckSummary {
        pages: c.anchors.len() as u64,
        links: links.len() as u64,
        broken: count(&|l| l.is_broken()),
        redirects: count(&|l| l.moved_to.is_some()),
        flaky: count(&|l| l.flaky.is_some()),
        skipped: count(&|l| matches!(l.state, LinkState::Skipped(_))),
        not_http: c.unchecked,
        cached: count(&|l| l.cached),
        elapsed_secs: 0.0,
    };
    CheckReport {
        summary,
        links,
        stopped: None,
    }
}

/// The results of one target: one per fragment it is linked with (and one
/// for the links without).
fn results_of(
    url: &Url,
    target: &Target,
    known: &Known<'_>,
    router: &Router,
    internal: bool,
) -> Vec<LinkResult> {
    let mut groups: BTreeMap<Option<&str>, Vec<Occurrence>> = BTreeMap::new();
    for place in &target.places {
        let fragment = place.fragment.as_deref().filter(|f| !f.is_empty());
        groups.entry(fragment).or_default().push(place.clone());
    }
    let mut cut = target.cut;
    groups
        .into_iter()
        .map(|(fragment, occurrences)| {
            let mut url = url.clone();
            url.set_fragment(fragment);
            let mut result = LinkResult {
                url,
                internal,
                state: LinkState::Skipped("stopped".into()),
                status: None,
                moved_to: None,
                flaky: None,
                cached: false,
                occurrences,
                occurrences_cut: std::mem::take(&mut cut),
            };
            judge(&mut result, fragment, known, router);
            result
        })
        .collect()
}

/// Fills in how `result` came out.
fn judge(result: &mut LinkResult, fragment: Option<&str>, known: &Known<'_>, router: &Router) {
    let (end, moved_to, retried, anchors, cached) = match known {
        Known::Skipped(reason) => {
            result.state = LinkState::Skipped(reason.clone());
            return;
        }
        Known::Unknown => return,
        Known::Fetched {
            end,
            moved_to,
            retried,
            anchors,
            cached,
        } => (end, moved_to, retried, anchors, cached),
    };
    result.moved_to = moved_to.clone();
    result.cached = *cached;
    result.state = match end {
        End::Status(status) => {
            result.status = Some(*status);
            if router.accept.contains(*status) {
                LinkState::Ok
            } else {
                LinkState::Broken(Problem::Status { status: *status })
            }
        }
        End::Failed(failure) => LinkState::Broken(Problem::Failed {
            error: failure.kind,
            message: failure.message.clone(),
        }),
        End::Loop => LinkState::Broken(Problem::RedirectLoop),
        End::TooMany => LinkState::Broken(Problem::TooManyRedirects),
    };
    if result.state != LinkState::Ok {
        return;
    }
    result.flaky = *retried;
    if let (Some(fragment), Some(anchors), true) = (fragment, anchors, router.fragments)
        && fragment != "top"
        && !anchors.contains(fragment)
    {
        result.state = LinkState::Broken(Problem::MissingFragment {
            fragment: fragment.to_owned(),
        });
    }
}
