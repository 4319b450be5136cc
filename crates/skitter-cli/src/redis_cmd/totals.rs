//! The crawl-wide picture of a shared crawl: its state and the totals all
//! workers added in Redis, printed by `skitter status` and after each
//! worker's own report.

use std::io::Write;

use anyhow::Context;
use serde_json::json;
use skitter::Report;
use skitter::cluster::{RedisStatsSink, take_proxy_stats};
use skitter::fetch::ProxyStats;
use skitter::fetch::head::redact_proxy;
use skitter::fetch::proxy_pool::write_table;
use skitter::frontier::{Frontier, FrontierCounts, FrontierError, RedisFrontier};
use skitter::output::report::Counters;

use crate::output::ReportFormat;

/// Writes the worker's report, then the crawl-wide totals (or why they are
/// missing), in `format`.
pub(super) fn print_reports(
    out: &mut dyn Write,
    report: &Report,
    wide: &Result<CrawlWide, FrontierError>,
    format: ReportFormat,
) -> std::io::Result<()> {
    match format {
        ReportFormat::Text => {
            report.write_text(out)?;
            match wide {
                Ok(wide) => wide.write_text(out)?,
                Err(e) => writeln!(out, "*** Crawl-wide totals unavailable: {e} ***")?,
            }
        }
        ReportFormat::Json => {
            let mut extra = serde_json::Map::new();
            let wide = match wide {
                Ok(wide) => wide.to_json(),
                Err(e) => json!({ "error": e.to_string() }),
            };
            extra.insert("crawl_wide".into(), wide);
            report.write_json_with(out, &extra)?;
            writeln!(out)?;
        }
        ReportFormat::None => {}
    }
    out.flush()
}

/// A closed pipe (`| head`) is not an error.
pub(super) fn finish_output(result: std::io::Result<()>) -> anyhow::Result<()> {
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write the report"),
    }
}

/// The whole crawl's state and totals, as all workers left them in Redis.
pub(super) struct CrawlWide {
    name: String,
    counts: FrontierCounts,
    claimed: u64,
    /// Records all workers finished.
    done: u64,
    counters: Counters,
    /// Every worker's per-proxy counts, added up.
    proxies: Vec<ProxyStats>,
    max_pages: Option<u64>,
    /// The recrawl pass the totals are of (1 before any `--recrawl`).
    pass: u32,
    /// URLs quarantined (their leases lost too often), the first
    /// [`QUARANTINE_SHOWN`] in URL order with the times each was lost, and
    /// how many there are in all.
    quarantined: (Vec<(String, u32)>, u64),
}

/// Quarantined URLs `status` lists by name; the rest are counted.
const QUARANTINE_SHOWN: usize = 20;

/// The quarantined URLs to show, credentials (`user:pw@`) redacted as the
/// roots' are.
async fn quarantined(frontier: &RedisFrontier) -> Result<(Vec<(String, u32)>, u64), FrontierError> {
    let (shown, total) = frontier.quarantined(QUARANTINE_SHOWN).await?;
    let shown = shown
        .into_iter()
        .map(|(url, lost)| (redact_proxy(&url), lost))
        .collect();
    Ok((shown, total))
}

impl CrawlWide {
    pub(super) async fn read(
        frontier: &RedisFrontier,
        name: &str,
        max_pages: Option<u64>,
    ) -> Result<CrawlWide, FrontierError> {
        let mut totals = frontier.stats().await?;
        let proxies = take_proxy_stats(&mut totals);
        let done = totals.remove(RedisStatsSink::DONE).unwrap_or(0);
        let (counters, unknown) = Counters::from_entries(totals);
        for (name, _) in unknown {
            tracing::warn!("ignoring the crawl-wide total {name:?}: not a report counter");
        }
        Ok(CrawlWide {
            name: name.to_string(),
            counts: frontier.counts().await?,
            claimed: frontier.claimed().await?,
            done,
            counters,
            proxies,
            max_pages,
            pass: frontier.pass().map_or(1, |p| p.number),
            quarantined: quarantined(frontier).await?,
        })
    }

    fn state(&self) -> &'static str {
        let c = &self.counts;
        if c.seen == 0 {
            "starting"
        } else if c.leased > 0 {
            "running"
        } else if c.queued == 0 {
            "finished"
        } else if self.max_pages.is_some_and(|max| self.claimed >= max) {
            "stopped: limit max-pages"
        } else {
            "running"
        }
    }

    pub(super) fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "*** Crawl-wide totals: crawl {}, all workers ***",
            self.name
        )?;
        write!(out, "{}", self.counters)?;
        write_table(&self.proxies, out)?;
        writeln!(out, "State: {}", self.state())?;
        writeln!(out, "Pass: {}", self.pass)?;
        writeln!(out, "Seen: {}", self.counts.seen)?;
        writeln!(out, "Claimed: {}", self.claimed)?;
        writeln!(
            out,
            "Todo: {} ({} queued, {} leased)",
            self.counts.queued + self.counts.leased,
            self.counts.queued,
            self.counts.leased
        )?;
        writeln!(out, "Done: {}", self.done)?;
        let (shown, total) = &self.quarantined;
        if *total > 0 {
            writeln!(
                out,
                "Quarantined: {total} (their workers died holding them; not fetched again)"
            )?;
            for (url, lost) in shown {
                writeln!(out, "  {url} (lease lost {lost} times)")?;
            }
            let more = total.saturating_sub(shown.len() as u64);
            if more > 0 {
                writeln!(out, "  … and {more} more")?;
            }
        }
        Ok(())
    }

    pub(super) fn to_json(&self) -> serde_json::Value {
        json!({
            "crawl": self.name,
            "state": self.state(),
            "pass": self.pass,
            "seen": self.counts.seen,
            "claimed": self.claimed,
            "queued": self.counts.queued,
            "leased": self.counts.leased,
            "done": self.done,
            "counters": self.counters,
            "proxies": self.proxies,
            "quarantined": {
                "total": self.quarantined.1,
                "urls": self.quarantined.0.iter()
                    .map(|(url, lost)| json!({ "url": url, "lost": lost }))
                    .collect::<Vec<_>>(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wide(queued: u64, leased: u64, seen: u64, claimed: u64, max: Option<u64>) -> CrawlWide {
        CrawlWide {
            name: "t".into(),
            counts: FrontierCounts {
                queued,
                leased,
                seen,
                ..FrontierCounts::default()
            },
            claimed,
            done: 4,
            counters: Counters::from_entries([("html", 3), ("html_bytes", 120)]).0,
            proxies: Vec::new(),
            max_pages: max,
            pass: 1,
            quarantined: (vec![("http://a.test/kills".into(), 3)], 2),
        }
    }

    #[test]
    fn states() {
        let cases = [
            (wide(0, 0, 0, 0, None), "starting"),
            (wide(5, 1, 9, 3, None), "running"),
            (wide(5, 0, 9, 3, None), "running"),
            (wide(0, 0, 9, 9, None), "finished"),
            (wide(5, 0, 9, 4, Some(4)), "stopped: limit max-pages"),
            (wide(5, 2, 9, 4, Some(4)), "running"),
            (wide(0, 0, 9, 9, Some(9)), "finished"),
        ];
        for (w, want) in cases {
            assert_eq!(w.state(), want, "{:?} claimed {}", w.counts, w.claimed);
        }
    }

    #[test]
    fn text_and_json_agree() {
        let w = wide(1, 2, 9, 6, None);
        let mut text = Vec::new();
        w.write_text(&mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("         3 html\n"), "{text}");
        assert!(
            text.contains("Todo: 3 (1 queued, 2 leased)\nDone: 4\n"),
            "{text}"
        );
        assert!(!text.contains(" done\n"), "{text}");
        assert!(
            text.contains("Quarantined: 2 (")
                && text.contains("\n  http://a.test/kills (lease lost 3 times)\n  … and 1 more\n"),
            "{text}"
        );
        let json = w.to_json();
        assert_eq!(
            (json["done"].as_u64(), json["queued"].as_u64()),
            (Some(4), Some(1))
        );
        assert_eq!(json["counters"], json!({ "html": 3, "html_bytes": 120 }));
        assert_eq!(
            json["quarantined"],
            json!({ "total": 2, "urls": [{ "url": "http://a.test/kills", "lost": 3 }] })
        );
    }
}
