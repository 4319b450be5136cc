//! A link check's sections of the HTML report (`skitter check
//! --report-html FILE`): the broken links grouped by page, each with its
//! line, element and attribute, the link as written and why; then the
//! permanent redirects and the flaky links. Every string from the network
//! is escaped, and nothing here is a script: the report keeps its policy.
//! The lists are capped ([`MAX_ROWS`]); the JSON output has everything.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::output::report_html::esc;

use super::result::{CheckReport, LinkState, Occurrence};

/// Rows one table of the section shows at most: the report's size does not
/// grow with the site.
pub const MAX_ROWS: usize = 2_000;

/// Where a link is written, as the report shows it.
fn written(at: &Occurrence) -> String {
    match (at.element.as_str(), at.attribute.as_str()) {
        ("", construct) => format!("{construct} in a stylesheet"),
        ("header", attribute) => format!("{attribute} header"),
        ("sitemap", _) => "sitemap entry".into(),
        (element, attribute) => format!("<{element} {attribute}>"),
    }
}

/// Writes the check's sections into `out`.
pub(crate) fn sections(report: &CheckReport, out: &mut String) {
    let s = &report.summary;
    let _ = write!(
        out,
        r#"<section id="links"><h2>Link check: {} broken</h2><p class="note">{} links on {} pages: {} broken, {} permanently redirected, {} flaky, {} skipped, {} not http(s), {} cached.</p>"#,
        s.broken, s.links, s.pages, s.broken, s.redirects, s.flaky, s.skipped, s.not_http, s.cached
    );
    let mut pages: BTreeMap<&str, Vec<(&Occurrence, String, &str)>> = BTreeMap::new();
    for link in report.broken() {
        let LinkState::Broken(problem) = &link.state else {
            continue;
        };
        for at in &link.occurrences {
            pages.entry(at.page.as_str()).or_default().push((
                at,
                problem.to_string(),
                link.url.as_str(),
            ));
        }
    }
    if pages.is_empty() {
        out.push_str(r#"<p class="empty">No broken links.</p>"#);
    }
    let (mut rows, total): (usize, usize) = (0, pages.values().map(Vec::len).sum());
    for (page, mut list) in pages {
        if rows >= MAX_ROWS {
            break;
        }
        list.sort_by_key(|(at, _, url)| (at.line, *url));
        let _ = write!(
            out,
            r#"<h3 class="url">{}</h3><table class="sortable"><thead><tr><th>Line</th><th>Where</th><th>Link</th><th>Resolved</th><th>Why</th></tr></thead><tbody>"#,
            esc(page)
        );
        for (at, why, url) in list.into_iter().take(MAX_ROWS - rows) {
            rows += 1;
            let _ = write!(
                out,
                r#"<tr><td class="n">{}</td><td>{}</td><td class="url">{}</td><td class="url">{}</td><td class="msg">{}</td></tr>"#,
                at.line,
                esc(&written(at)),
                esc(&at.raw),
                esc(url),
                esc(why.as_str()),
            );
        }
        out.push_str("</tbody></table>");
    }
    more(out, total, rows, "broken places");
    let moved: Vec<_> = report.moved().collect();
    if !moved.is_empty() {
        out.push_str(r#"<h2 style="margin-top:16px">Permanent redirects</h2><table class="sortable"><thead><tr><th>Link</th><th>Moved to</th><th>First place</th></tr></thead><tbody>"#);
        for link in moved.iter().take(MAX_ROWS) {
            let to = link.moved_to.as_ref().map_or("", |u| u.as_str());
            let place = link
                .occurrences
                .first()
                .map_or(String::new(), |o| format!("{} line {}", o.page, o.line));
            let _ = write!(
                out,
                r#"<tr><td class="url">{}</td><td class="url">{}</td><td class="url">{}</td></tr>"#,
                esc(link.url.as_str()),
                esc(to),
                esc(&place),
            );
        }
        out.push_str("</tbody></table>");
        more(out, moved.len(), moved.len().min(MAX_ROWS), "redirects");
    }
    let flaky: Vec<_> = report.flaky().collect();
    if !flaky.is_empty() {
        out.push_str(r#"<h2 style="margin-top:16px">Flaky (answered after failing first)</h2><table class="sortable"><thead><tr><th>Link</th><th>Attempts</th></tr></thead><tbody>"#);
        for link in flaky.iter().take(MAX_ROWS) {
            let _ = write!(
                out,
                r#"<tr><td class="url">{}</td><td class="n">{}</td></tr>"#,
                esc(link.url.as_str()),
                link.flaky.unwrap_or(0),
            );
        }
        out.push_str("</tbody></table>");
        more(out, flaky.len(), flaky.len().min(MAX_ROWS), "flaky links");
    }
    out.push_str("</section>");
}

fn more(out: &mut String, total: usize, shown: usize, what: &str) {
    if total > shown {
        let _ = write!(
            out,
            r#"<p class="note">Showing {shown} of {total} {what}; the JSON output (--format json) lists them all.</p>"#
        );
    }
}
