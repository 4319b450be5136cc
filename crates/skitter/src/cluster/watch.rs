//! The whole of a Redis crawl for any worker's dashboard: the crawl-wide
//! totals all workers add to (see [`RedisStatsSink`](super::RedisStatsSink))
//! and one line per worker, which each worker with `--metrics` publishes
//! every [`PUBLISH_INTERVAL`] in the crawl's `workers` hash.
//!
//! A line carries the time it was written (Unix ms); a reader drops lines
//! older than [`STALE_AFTER`] (a worker that ended or died), so the hash
//! holds about as many lines as there are workers running. Reading costs
//! the watcher a few Redis round trips per status request, the crawl none.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::stats::RedisStatsSink;
use crate::crawl::live::LiveSnapshot;
use crate::frontier::{Frontier, FrontierError, RedisFrontier};

/// How often a worker publishes its line.
pub const PUBLISH_INTERVAL: Duration = Duration::from_secs(2);
/// A line not renewed this long is a worker gone.
pub const STALE_AFTER: Duration = Duration::from_secs(30);

/// One worker's view of the whole crawl, and its own line in it.
#[derive(Clone, Debug)]
pub struct ClusterWatch {
    frontier: Arc<RedisFrontier>,
    id: String,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl ClusterWatch {
    /// The view through `frontier`, this worker's line under `id`.
    pub fn new(frontier: Arc<RedisFrontier>, id: impl Into<String>) -> ClusterWatch {
        ClusterWatch {
            frontier,
            id: id.into(),
        }
    }

    /// A worker id for this process: the machine's name and the process id.
    pub fn process_id() -> String {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "worker".into());
        format!("{host}:{}", std::process::id())
    }

    /// This worker's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Publishes this worker's line from its snapshot.
    pub async fn publish(&self, s: &LiveSnapshot) -> Result<(), FrontierError> {
        let p = &s.progress;
        let line = json!({
            "at_ms": now_ms(),
            "done": p.done,
            "in_flight": p.in_flight,
            "errors": p.errors,
            "bytes": p.bytes,
            "rate": p.rate(),
            "paused": s.steer.paused,
            "ended": s.ended,
        });
        self.frontier.put_worker(&self.id, &line.to_string()).await
    }

    /// The whole crawl now: `{"crawl": totals, "workers": [lines]}`, the
    /// workers by id, stale lines dropped (and forgotten in Redis).
    pub async fn read(&self) -> Result<Value, FrontierError> {
        let mut totals = self.frontier.stats().await?;
        let done = totals.remove(RedisStatsSink::DONE).unwrap_or(0);
        let counts = self.frontier.counts().await?;
        let now = now_ms();
        let stale = u64::try_from(STALE_AFTER.as_millis()).unwrap_or(u64::MAX);
        let mut workers = Vec::new();
        for (id, line) in self.frontier.workers().await? {
            let mut line: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            let at = line["at_ms"].as_u64().unwrap_or(0);
            if now.saturating_sub(at) > stale {
                self.frontier.drop_worker(&id).await?;
                continue;
            }
            line["worker"] = Value::from(id.as_str());
            line["age_seconds"] = Value::from(now.saturating_sub(at) as f64 / 1000.0);
            line["this"] = Value::from(id == self.id);
            workers.push(line);
        }
        Ok(json!({
            "crawl": {
                "done": done,
                "queued": counts.queued,
                "leased": counts.leased,
                "seen": counts.seen,
                "claimed": self.frontier.claimed().await?,
                "counters": totals,
            },
            "workers": workers,
        }))
    }
}
