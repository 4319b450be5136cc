//! Writing `llms.txt` (llmstxt.org's format) from the pages' entries.
//!
//! - `# Title`: the home page's title — the page of the main host (the one
//!   with the most pages) at the least depth, then the shortest path.
//! - `> summary`: the home page's description, else "N pages of HOST.".
//! - Prose, when there is more to say: the hosts, when more than one; the
//!   pages left out of the list past its cap (they are in llms-full.txt).
//! - `## Section` lists: per host, the pages at the top level of the site
//!   (`/`, `/about`) first, under `## Pages` (under the host's name when
//!   there are several); then one section per first path segment, in name
//!   order (`## docs` for `/docs/…`; `## host/docs` with several hosts).
//!   Within a section pages are in URL order.
//! - `## Optional` last: pages whose URL has a query (`?page=2`, `?sort=…`):
//!   listings and variants, which the format's "Optional" section is for (a
//!   reader short of context may skip it).
//!
//! Each page is `- [title](url): description`, the description left out when
//! the page has none.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::entry::Entry;

/// The llms.txt for `entries` (each URL listed once), noting `left_out`
/// pages not listed but in the file named `full`.
pub(super) fn render(entries: &mut Vec<Entry>, left_out: u64, full: &str) -> String {
    entries.sort_by(|a, b| a.url.as_str().cmp(b.url.as_str()));
    entries.dedup_by(|a, b| a.url == b.url);
    let mut hosts: BTreeMap<String, Vec<&Entry>> = BTreeMap::new();
    for e in entries.iter() {
        hosts.entry(host(e)).or_default().push(e);
    }
    let mut hosts: Vec<(String, Vec<&Entry>)> = hosts.into_iter().collect();
    // The main host first (most pages), then by name.
    hosts.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    let mut out = String::new();
    let Some((main, pages)) = hosts.first() else {
        out.push_str("# Pages\n\n> No HTML page was crawled.\n");
        return out;
    };
    let home = pages
        .iter()
        .min_by_key(|e| (e.depth, e.url.path().len(), e.url.as_str()))
        .expect("a host has pages");
    let _ = writeln!(out, "# {}\n", escape(&home.title));
    let summary = home
        .description
        .clone()
        .unwrap_or_else(|| format!("{} pages of {main}.", pages.len()));
    let _ = writeln!(out, "> {}\n", summary);
    if hosts.len() > 1 {
        let names: Vec<&str> = hosts.iter().map(|(h, _)| h.as_str()).collect();
        let _ = writeln!(
            out,
            "Pages of {} hosts: {}.\n",
            hosts.len(),
            names.join(", ")
        );
    }
    if left_out > 0 {
        let _ = writeln!(
            out,
            "{left_out} more pages are in {full} but not listed here.\n"
        );
    }
    let several = hosts.len() > 1;
    let mut optional = Vec::new();
    for (host, pages) in &hosts {
        let mut sections: BTreeMap<&str, Vec<&Entry>> = BTreeMap::new();
        for e in pages {
            if e.url.query().is_some() {
                optional.push(*e);
            } else {
                sections.entry(section(e)).or_default().push(e);
            }
        }
        for (name, pages) in &sections {
            let title = match (*name, several) {
                ("", false) => "Pages".to_string(),
                ("", true) => host.clone(),
                (name, false) => name.to_string(),
                (name, true) => format!("{host}/{name}"),
            };
            list(&mut out, &title, pages);
        }
    }
    if !optional.is_empty() {
        optional.sort_by(|a, b| a.url.as_str().cmp(b.url.as_str()));
        list(&mut out, "Optional", &optional);
    }
    out
}

fn list(out: &mut String, title: &str, pages: &[&Entry]) {
    let _ = writeln!(out, "## {}\n", one_line(title));
    for e in pages {
        let _ = write!(out, "- [{}]({})", escape(&e.title), link(e.url.as_str()));
        if let Some(d) = &e.description {
            let _ = write!(out, ": {}", one_line(d));
        }
        out.push('\n');
    }
    out.push('\n');
}

/// A host and its port when it has one (`example.org`, `127.0.0.1:8080`).
fn host(e: &Entry) -> String {
    let host = e.url.host_str().unwrap_or_default();
    match e.url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    }
}

/// The section of a page: its first path segment when it sits in one
/// (`/docs/a` → `docs`), else the top level (`""`).
fn section(e: &Entry) -> &str {
    let path = e.url.path().trim_start_matches('/');
    match path.split_once('/') {
        Some((first, _)) if !first.is_empty() => first,
        _ => "",
    }
}

/// Link text with the characters that would end it escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in one_line(text).chars() {
        if matches!(c, '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A link target that cannot end the Markdown link early.
fn link(url: &str) -> String {
    url.replace('(', "%28")
        .replace(')', "%29")
        .replace(' ', "%20")
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
