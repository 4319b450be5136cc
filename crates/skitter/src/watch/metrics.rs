//! The Prometheus exposition of a [`LiveSnapshot`]: every metric's name, help,
//! type and labels, in one table-like function (`Exposition::encode`).
//!
//! The names are stable and documented in `docs/src/guide/watch.md`; a label
//! takes only a small fixed set of values (a kind, a reason, a status class or
//! code), never a URL or a host, so a crawl of a million hosts is as cheap to
//! scrape as one of ten. The text is made by the `prometheus-client` crate
//! (OpenMetrics text format, which Prometheus reads) from the snapshot taken
//! for this scrape: nothing is registered or counted between scrapes.

use std::fmt;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use crate::base::outcome::OutcomeKind;
use crate::crawl::live::LiveSnapshot;
use crate::output::report::{Counters, Histogram};

/// The content type of [`render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The exposition of `snapshot` (with the process's `resident` memory in
/// bytes, when known), in the OpenMetrics text format.
pub fn render(snapshot: LiveSnapshot, resident: Option<u64>) -> String {
    let mut registry = Registry::with_prefix("skitter");
    registry.register_collector(Box::new(Exposition { snapshot, resident }));
    let mut out = String::with_capacity(16 * 1024);
    // Writing to a String cannot fail, and the encoder fails only on the writer's errors.
    let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
    out
}

#[derive(Debug)]
struct Exposition {
    snapshot: LiveSnapshot,
    resident: Option<u64>,
}

impl Collector for Exposition {
    fn encode(&self, mut e: DescriptorEncoder) -> Result<(), fmt::Error> {
        let s = &self.snapshot;
        let c = &s.counters;
        let p = &s.progress;

        let mut pages = e.encode_descriptor(
            "pages",
            "URLs finished, by outcome kind and status class (class 'none': no response)",
            None,
            MetricType::Counter,
        )?;
        for (kind, class, n) in pages_by_kind_and_class(c) {
            counter(&mut pages, &[("kind", kind), ("class", class)], n)?;
        }
        let mut bytes = e.encode_descriptor(
            "bytes",
            "Body bytes received, by outcome kind",
            None,
            MetricType::Counter,
        )?;
        for (kind, n) in [
            ("html", c.html_bytes),
            ("other", c.other_bytes),
            ("http_error", c.error_bytes),
        ] {
            counter(&mut bytes, &[("kind", kind)], n)?;
        }
        family(
            &mut e,
            "errors",
            "URLs failed with no usable response, by error kind",
            "kind",
            c.fail_by.iter().map(|(k, n)| (k.as_str().to_string(), *n)),
        )?;
        family(
            &mut e,
            "error_responses",
            "Responses with an error status, by status code",
            "status",
            c.status.iter().map(|(k, n)| (k.to_string(), *n)),
        )?;
        family(
            &mut e,
            "skipped",
            "URLs never fetched, by reason (reason 'robots': disallowed by robots.txt)",
            "reason",
            c.skipped_by
                .iter()
                .map(|(k, n)| (k.as_str().to_string(), *n)),
        )?;
        family(
            &mut e,
            "links_skipped",
            "Discovered links not followed, by reason",
            "reason",
            c.links_skipped
                .iter()
                .map(|(k, n)| (k.as_str().to_string(), *n)),
        )?;
        family(
            &mut e,
            "throttles",
            "Host slow-downs, by reason (reason 'robots_unavailable': robots.txt could not be fetched)",
            "reason",
            c.throttles
                .iter()
                .map(|(k, n)| (k.as_str().to_string(), *n)),
        )?;
        family(
            &mut e,
            "traps",
            "Trap rule trips, by rule",
            "rule",
            c.traps.iter().map(|(k, n)| (k.as_str().to_string(), *n)),
        )?;
        counters(
            &mut e,
            [
                ("retries", "Attempts handed back for another try", c.retries),
                ("truncated", "Bodies cut at the size cap", c.truncated),
                ("items", "Records the extraction rules found", c.items),
                (
                    "items_refused",
                    "Items an items database refused",
                    c.items_refused,
                ),
                ("rendered", "Pages rendered in the browser", c.rendered),
                (
                    "render_failed",
                    "Rendered pages whose render failed",
                    c.render_failed,
                ),
                (
                    "render_requests",
                    "Requests the browser made that the crawl fetched",
                    c.render_requests,
                ),
                (
                    "render_restarts",
                    "Times the browser was restarted",
                    c.render_restarts,
                ),
                (
                    "internal_errors",
                    "URLs whose handling hit a bug in skitter",
                    c.internal_errors,
                ),
                (
                    "urls_done",
                    "URLs finished (fetched, failed or skipped)",
                    p.done,
                ),
                (
                    "fetch_errors",
                    "Failed fetches and error statuses",
                    p.errors,
                ),
            ],
        )?;

        histogram(
            &mut e,
            "response_seconds",
            "Response time of fetched URLs, first attempt's start to last one's end, in seconds",
            &s.histograms.response_seconds,
        )?;
        histogram(
            &mut e,
            "page_bytes",
            "Body size of fetched URLs as received, in bytes",
            &s.histograms.page_bytes,
        )?;

        let frontier = s.frontier.unwrap_or_default();
        let (tabs_busy, tabs) = s.render_tabs.unwrap_or((0, 0));
        let proxies = &s.proxies;
        let mut gauges: Vec<(&str, &str, f64)> = vec![
            (
                "queued",
                "URLs queued in the frontier",
                frontier.queued as f64,
            ),
            ("in_flight", "URLs being fetched now", p.in_flight as f64),
            (
                "leased",
                "URLs claimed from the frontier and not yet completed",
                frontier.leased as f64,
            ),
            (
                "seen_urls",
                "Distinct URLs the frontier has seen",
                frontier.seen as f64,
            ),
            (
                "frontier_up",
                "1 when the frontier answered this scrape's count",
                f64::from(u8::from(s.frontier.is_some())),
            ),
            (
                "hosts_throttled",
                "Hosts slowed down at least once so far",
                s.throttled.len() as f64,
            ),
            (
                "hosts_benched",
                "Origins whose URLs wait now for an unavailable robots.txt",
                s.hosts_benched as f64,
            ),
            (
                "max_tasks",
                "The cap on concurrent fetches",
                s.steer.max_tasks as f64,
            ),
            (
                "paused",
                "1 while the crawl is paused",
                f64::from(u8::from(s.steer.paused)),
            ),
            (
                "ended",
                "1 once the crawl has ended",
                f64::from(u8::from(s.ended)),
            ),
            (
                "elapsed_seconds",
                "Time since the crawl started",
                p.elapsed.as_secs_f64(),
            ),
            (
                "render_tabs",
                "Browser tabs the render pool may use (0 without rendering)",
                tabs as f64,
            ),
            (
                "render_tabs_busy",
                "Browser tabs rendering now",
                tabs_busy as f64,
            ),
            ("proxies", "Proxies in the pool", proxies.len() as f64),
            (
                "proxy_successes",
                "Requests through a proxy that got a response, all proxies",
                proxies.iter().map(|x| x.successes as f64).sum(),
            ),
            (
                "proxy_failures",
                "Requests through a proxy that failed, all proxies",
                proxies.iter().map(|x| x.failures as f64).sum(),
            ),
            (
                "proxy_benchings",
                "Times a proxy was benched after failures, all proxies",
                proxies.iter().map(|x| x.benchings as f64).sum(),
            ),
        ];
        if let Some(hosts) = s.frontier.and_then(|f| f.hosts) {
            gauges.push((
                "hosts_active",
                "Hosts the frontier keeps live state for (work queued or in flight, or a gap owed)",
                hosts as f64,
            ));
        }
        if let Some(bytes) = s.frontier.and_then(|f| f.disk_bytes) {
            gauges.push((
                "frontier_disk_bytes",
                "Bytes the frontier's files take on disk (the --state directory)",
                bytes as f64,
            ));
        }
        if let Some(policy) = s.politeness {
            gauges.push((
                "per_host",
                "The cap on concurrent fetches to one host",
                policy.max_in_flight as f64,
            ));
            gauges.push((
                "delay_seconds",
                "The least gap between two request starts to one host",
                policy.delay.as_secs_f64(),
            ));
        }
        if let Some(r) = self.resident {
            gauges.push((
                "process_resident_bytes",
                "Resident memory of the process",
                r as f64,
            ));
        }
        self::gauges(&mut e, gauges)
    }
}

fn counter(m: &mut MetricEncoder, labels: &impl EncodeLabelSet, n: u64) -> fmt::Result {
    m.encode_family(labels)?
        .encode_counter::<NoLabelSet, _, u64>(&n, None)
}

/// A counter with one label, one sample per value of it.
pub(super) fn family<V: AsRef<str>>(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    label: &str,
    samples: impl IntoIterator<Item = (V, u64)>,
) -> fmt::Result {
    let mut m = e.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (value, n) in samples {
        counter(&mut m, &[(label, value.as_ref())], n)?;
    }
    Ok(())
}

/// Counters without labels: `(name, help, value)`.
pub(super) fn counters<'a>(
    e: &mut DescriptorEncoder,
    counters: impl IntoIterator<Item = (&'a str, &'a str, u64)>,
) -> fmt::Result {
    for (name, help, n) in counters {
        let mut m = e.encode_descriptor(name, help, None, MetricType::Counter)?;
        m.encode_counter::<NoLabelSet, _, u64>(&n, None)?;
    }
    Ok(())
}

/// Gauges without labels: `(name, help, value)`.
pub(super) fn gauges<'a>(
    e: &mut DescriptorEncoder,
    gauges: impl IntoIterator<Item = (&'a str, &'a str, f64)>,
) -> fmt::Result {
    for (name, help, v) in gauges {
        let mut m = e.encode_descriptor(name, help, None, MetricType::Gauge)?;
        m.encode_gauge(&v)?;
    }
    Ok(())
}

fn histogram(e: &mut DescriptorEncoder, name: &str, help: &str, h: &Histogram) -> fmt::Result {
    let mut m = e.encode_descriptor(name, help, None, MetricType::Histogram)?;
    // The encoder adds the buckets up itself, and writes f64::MAX as +Inf.
    let mut previous = 0;
    let mut buckets: Vec<(f64, u64)> = h
        .cumulative()
        .into_iter()
        .map(|(bound, total)| {
            let own = total - previous;
            previous = total;
            (bound, own)
        })
        .collect();
    buckets.push((f64::MAX, h.count() - previous));
    m.encode_histogram::<NoLabelSet>(h.sum(), h.count(), &buckets, None)
}

/// `(kind, status class, URLs)`: 2xx for pages and other content, 3xx for
/// redirects, 4xx/5xx (by the status) for error responses, `none` for URLs
/// that failed or were skipped without a response.
fn pages_by_kind_and_class(c: &Counters) -> Vec<(&'static str, &'static str, u64)> {
    let mut by_class = [0u64; 6];
    for (status, n) in &c.status {
        let i = usize::from(*status / 100).min(5);
        by_class[i] += n;
    }
    let mut out = vec![
        (kind_name(OutcomeKind::Html), "2xx", c.html),
        (kind_name(OutcomeKind::Other), "2xx", c.other),
        (kind_name(OutcomeKind::Redirect), "3xx", c.redirect),
        (kind_name(OutcomeKind::HttpError), "4xx", by_class[4]),
        (kind_name(OutcomeKind::HttpError), "5xx", by_class[5]),
        (kind_name(OutcomeKind::Failed), "none", c.fail),
        (kind_name(OutcomeKind::Skipped), "none", c.skipped),
    ];
    // Error statuses outside 4xx/5xx (a site's own 6xx or 2xx error pages).
    let odd = c.error.saturating_sub(by_class[4] + by_class[5]);
    if odd > 0 {
        out.push((kind_name(OutcomeKind::HttpError), "other", odd));
    }
    out
}

fn kind_name(kind: OutcomeKind) -> &'static str {
    match kind {
        OutcomeKind::Html => "html",
        OutcomeKind::Other => "other",
        OutcomeKind::Redirect => "redirect",
        OutcomeKind::HttpError => "http_error",
        OutcomeKind::Failed => "failed",
        OutcomeKind::Skipped => "skipped",
    }
}
