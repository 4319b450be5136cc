//! The forms of a link check's result: text grouped by page (for people),
//! JSON (the library's report, serialised), Markdown (a CI comment) and
//! JUnit XML (CI test reports: one test suite per page, one failing test
//! case per broken link on it).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use skitter::check::{CheckReport, LinkResult, LinkState, Occurrence};

/// `--format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CheckFormat {
    /// Broken links grouped by page, then redirects and flaky links.
    #[default]
    Text,
    /// The whole report as JSON.
    Json,
    /// A Markdown summary with tables.
    Markdown,
    /// JUnit XML.
    Junit,
}

/// One broken link at one place.
struct Broken<'a> {
    link: &'a LinkResult,
    at: &'a Occurrence,
    why: String,
}

/// The broken links by page, each page's by line.
fn by_page(report: &CheckReport) -> BTreeMap<&str, Vec<Broken<'_>>> {
    let mut pages: BTreeMap<&str, Vec<Broken<'_>>> = BTreeMap::new();
    for link in report.broken() {
        let LinkState::Broken(problem) = &link.state else {
            continue;
        };
        for at in &link.occurrences {
            pages.entry(at.page.as_str()).or_default().push(Broken {
                link,
                at,
                why: problem.to_string(),
            });
        }
    }
    for list in pages.values_mut() {
        list.sort_by_key(|b| (b.at.line, b.link.url.as_str()));
    }
    pages
}

/// The result in `format`.
pub fn render(report: &CheckReport, format: CheckFormat) -> String {
    match format {
        CheckFormat::Text => text(report),
        CheckFormat::Json => {
            let mut s = serde_json::to_string_pretty(report).unwrap_or_default();
            s.push('\n');
            s
        }
        CheckFormat::Markdown => markdown(report),
        CheckFormat::Junit => junit(report),
    }
}

fn summary_line(report: &CheckReport) -> String {
    let s = &report.summary;
    format!(
        "{} links on {} pages: {} broken, {} permanently redirected, {} flaky, {} skipped, {} cached ({:.1}s)",
        s.links, s.pages, s.broken, s.redirects, s.flaky, s.skipped, s.cached, s.elapsed_secs
    )
}

fn first_place(link: &LinkResult) -> String {
    link.occurrences
        .first()
        .map(|o| format!("{} line {}", o.page, o.line))
        .unwrap_or_default()
}

/// A link as it is written where it appears: `<a href="x">` in HTML,
/// `url(x)` or `@import "x"` in a stylesheet, `Link: <x>` in a response's
/// headers, `<loc>x</loc>` in a sitemap.
fn written(at: &Occurrence) -> String {
    match (at.element.as_str(), at.attribute.as_str()) {
        ("", "@import") => format!("@import \"{}\"", at.raw),
        ("", _) => format!("url({})", at.raw),
        ("header", "refresh") => format!("Refresh: {}", at.raw),
        ("header", _) => format!("Link: <{}>", at.raw),
        ("sitemap", _) => format!("<loc>{}</loc>", at.raw),
        (element, attribute) => format!("<{element} {attribute}=\"{}\">", at.raw),
    }
}

/// `line N`, or `no line` for a place without one (headers, sitemaps).
fn line(at: &Occurrence) -> String {
    match at.line {
        0 => "no line".into(),
        n => format!("line {n}"),
    }
}

fn text(report: &CheckReport) -> String {
    let mut out = String::new();
    for (page, list) in by_page(report) {
        let _ = writeln!(out, "{page}");
        for b in list {
            let _ = writeln!(
                out,
                "  {}: {} {}: {}",
                line(b.at),
                written(b.at),
                b.link.url,
                b.why
            );
        }
    }
    let moved: Vec<_> = report.moved().collect();
    if !moved.is_empty() {
        let _ = writeln!(out, "Permanent redirects (links worth updating):");
        for link in moved {
            let to = link.moved_to.as_ref().map_or("", |u| u.as_str());
            let _ = writeln!(out, "  {} -> {to} ({})", link.url, first_place(link));
        }
    }
    let flaky: Vec<_> = report.flaky().collect();
    if !flaky.is_empty() {
        let _ = writeln!(out, "Flaky (answered after failing first):");
        for link in flaky {
            let tries = link.flaky.unwrap_or(0);
            let _ = writeln!(
                out,
                "  {} ({tries} attempts; {})",
                link.url,
                first_place(link)
            );
        }
    }
    if let Some(stopped) = &report.stopped {
        let _ = writeln!(out, "The crawl stopped early: {stopped}");
    }
    let _ = writeln!(out, "{}", summary_line(report));
    out
}

/// `|` and line breaks would end a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn markdown(report: &CheckReport) -> String {
    let mut out = String::new();
    let s = &report.summary;
    let _ = writeln!(out, "## Link check: {} broken\n", s.broken);
    let pages = by_page(report);
    if !pages.is_empty() {
        let _ = writeln!(
            out,
            "| Page | Line | Link | Problem |\n| --- | ---: | --- | --- |"
        );
        for (page, list) in pages {
            for b in list {
                let _ = writeln!(
                    out,
                    "| {} | {} | `{}` | {} |",
                    cell(page),
                    b.at.line,
                    cell(b.link.url.as_str()),
                    cell(&b.why)
                );
            }
        }
        out.push('\n');
    }
    let moved: Vec<_> = report.moved().collect();
    if !moved.is_empty() {
        let _ = writeln!(
            out,
            "### Permanent redirects\n\n| Link | Moved to | Where |\n| --- | --- | --- |"
        );
        for link in moved {
            let to = link.moved_to.as_ref().map_or("", |u| u.as_str());
            let _ = writeln!(
                out,
                "| `{}` | `{}` | {} |",
                cell(link.url.as_str()),
                cell(to),
                cell(&first_place(link))
            );
        }
        out.push('\n');
    }
    let flaky: Vec<_> = report.flaky().collect();
    if !flaky.is_empty() {
        let _ = writeln!(out, "### Flaky\n");
        for link in flaky {
            let _ = writeln!(
                out,
                "- `{}` ({} attempts)",
                link.url,
                link.flaky.unwrap_or(0)
            );
        }
        out.push('\n');
    }
    let _ = writeln!(out, "{}", summary_line(report));
    out
}

/// Text for an XML attribute or element.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Not allowed in XML 1.0 at all.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

fn junit(report: &CheckReport) -> String {
    let pages = by_page(report);
    let failures: usize = pages.values().map(Vec::len).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"skitter check\" tests=\"{}\" failures=\"{failures}\" time=\"{:.3}\">",
        failures.max(1),
        report.summary.elapsed_secs
    );
    if pages.is_empty() {
        let _ = writeln!(
            out,
            "  <testsuite name=\"links\" tests=\"1\" failures=\"0\">\n    \
             <testcase name=\"{}\" classname=\"links\"/>\n  </testsuite>",
            xml(&summary_line(report))
        );
    }
    for (page, list) in pages {
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">",
            xml(page),
            list.len(),
            list.len()
        );
        for b in list {
            let _ = writeln!(
                out,
                "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" line=\"{}\">\n      \
                 <failure message=\"{}\" type=\"broken-link\">{}: {}</failure>\n    \
                 </testcase>",
                xml(b.link.url.as_str()),
                xml(page),
                xml(page),
                b.at.line,
                xml(&b.why),
                line(b.at),
                xml(&written(b.at)),
            );
        }
        let _ = writeln!(out, "  </testsuite>");
    }
    out.push_str("</testsuites>\n");
    out
}
