//! `GET /api/status`: a [`LiveSnapshot`] as JSON, the shape the dashboard's
//! script and `skitter ctl status` read. The hosts in it are the few that
//! slowed the crawl down most and the few busiest, so its size does not grow
//! with the crawl.

use serde_json::{Value, json};

use crate::crawl::live::LiveSnapshot;

/// Hosts listed under `throttled_hosts`, most slowed-down first.
pub const TOP_HOSTS: usize = 10;

/// The status document; `report` says whether the end report is on `/`.
pub fn to_json(s: &LiveSnapshot, report: bool) -> Value {
    let p = &s.progress;
    let mut throttled: Vec<(&String, u64)> = s
        .throttled
        .iter()
        .map(|(host, by)| (host, by.values().sum()))
        .collect();
    throttled.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let throttled: Vec<Value> = throttled
        .into_iter()
        .take(TOP_HOSTS)
        .map(|(host, n)| json!({ "host": host, "slowdowns": n, "reasons": s.throttled[host] }))
        .collect();
    let h = &s.histograms;
    json!({
        "done": p.done,
        "queued": s.frontier.map_or(p.queued, |f| f.queued),
        "in_flight": p.in_flight,
        "seen": s.frontier.map(|f| f.seen),
        "bytes": p.bytes,
        "errors": p.errors,
        "elapsed_seconds": p.elapsed.as_secs_f64(),
        "rate": p.rate(),
        "paused": s.steer.paused,
        "max_tasks": s.steer.max_tasks,
        "per_host": s.politeness.map(|p| p.max_in_flight),
        "delay_seconds": s.politeness.map(|p| p.delay.as_secs_f64()),
        "ended": s.ended,
        "report": report,
        "counters": s.counters,
        "hosts_active": s.frontier.and_then(|f| f.hosts),
        "hosts_throttled": s.throttled.len(),
        "hosts_benched": s.hosts_benched,
        "frontier_disk_bytes": s.frontier.and_then(|f| f.disk_bytes),
        "busiest_hosts": s.busiest,
        "throttled_hosts": throttled,
        "recent_errors": s.recent_errors,
        "response_seconds": { "count": h.response_seconds.count(), "sum": h.response_seconds.sum(), "buckets": h.response_seconds.cumulative() },
        "page_bytes": { "count": h.page_bytes.count(), "sum": h.page_bytes.sum(), "buckets": h.page_bytes.cumulative() },
        "render_tabs": s.render_tabs,
        "proxies": s.proxies.len(),
        "resident_bytes": resident_bytes(),
    })
}

/// The process's resident memory in bytes, from `/proc/self/status`
/// (Linux); `None` elsewhere.
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
