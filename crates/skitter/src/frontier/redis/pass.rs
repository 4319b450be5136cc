//! Recrawl passes of a shared crawl (see `recrawl`): which pass the crawl is
//! in, and starting a new one over every URL the crawl has a visit for.
//!
//! The pass lives in the crawl's `meta` hash: `pass` (absent: 1) and
//! `pass_not_due`. A new pass starts in steps, each safe to run again:
//! `pass_seeding` claims the start for one process (HSETNX, so two workers
//! started with `--recrawl` at once start one pass, not two); `pass` is set
//! to the new number; the finished pass's seen set is deleted, its totals
//! moved to `stats:p<N>`, the claim counter and the per-host quota counts reset, then `pass_wiped`
//! records that; then every stored visit is
//! streamed bucket by bucket from the `v:<b>` hashes into the queues (the
//! seen set dedups, so seeding again after a crash queues nothing twice) and
//! `pass_seeding` is removed. A process that finds `pass_seeding` left by a
//! dead one seeds that pass again.

use std::time::{SystemTime, UNIX_EPOCH};

use url::Url;

use super::RedisFrontier;
use super::layout::Keys;
use super::visit::split;
use crate::frontier::{Frontier, FrontierError, Request, RequestKind};
use crate::state::recrawl::{Known, PassInfo, RecrawlOrder, plan};

/// Visit buckets read per SCAN step: bounds what a pass start holds in
/// memory (at most this many buckets of about 128 visits each).
const SCAN_BATCH: usize = 64;

impl RedisFrontier {
    /// Reads the crawl's pass from Redis (1 for a crawl never recrawled).
    pub(super) async fn load_pass(&self) -> Result<PassInfo, FrontierError> {
        let mut get = ::redis::cmd("HMGET");
        get.arg(self.shared.keys.key("meta"))
            .arg("pass")
            .arg("pass_not_due");
        let (number, not_due): (Option<u32>, Option<u64>) =
            self.shared.link.query("load_pass", &get).await?;
        Ok(PassInfo {
            number: number.unwrap_or(1).max(1),
            not_due: not_due.unwrap_or(0),
        })
    }

    /// `--recrawl` on a shared crawl: when the crawl has finished (nothing
    /// queued, leased or waiting to retry), starts its next pass over every
    /// URL with a stored visit (those `order` finds not due are marked seen
    /// and counted instead); when a pass is still running, or another
    /// process is starting one, joins it. Answers the pass this worker is in.
    pub async fn begin_pass(
        &self,
        order: RecrawlOrder,
        max_redirect: u32,
    ) -> Result<PassInfo, FrontierError> {
        let current = self.load_pass().await?;
        let next = match self.get_meta("pass_seeding").await? {
            // A start cut short: seed it again.
            Some(n) => n.parse::<u32>().map_err(|_| {
                FrontierError::Malformed(format!(
                    "field pass_seeding of {} holds {n:?}",
                    self.shared.keys.key("meta")
                ))
            })?,
            None => {
                let counts = self.counts().await?;
                if counts.queued > 0 || counts.leased > 0 || counts.seen == 0 {
                    return Ok(self.set_pass(current));
                }
                let next = current.number + 1;
                if !self
                    .put_meta_if_absent("pass_seeding", &next.to_string())
                    .await?
                {
                    // Another process won the start and seeds it.
                    return Ok(self.set_pass(self.load_pass().await?));
                }
                next
            }
        };
        // The new pass number goes in before the seen set is wiped: a worker
        // that joins meanwhile and finds nothing seen offers the crawl's
        // roots, and must fetch them as this pass (with validators), not as
        // the finished one.
        self.put_meta("pass", &next.to_string()).await?;
        if self.get_meta("pass_wiped").await? != Some(next.to_string()) {
            self.wipe_pass(next - 1).await?;
            self.put_meta("pass_wiped", &next.to_string()).await?;
        }
        let not_due = self.seed(order, max_redirect).await?;
        self.put_meta("pass_not_due", &not_due.to_string()).await?;
        let mut done = ::redis::cmd("HDEL");
        done.arg(self.shared.keys.key("meta")).arg("pass_seeding");
        self.shared.link.query::<()>("begin_pass", &done).await?;
        Ok(self.set_pass(PassInfo {
            number: next,
            not_due,
        }))
    }

    pub(super) fn set_pass(&self, pass: PassInfo) -> PassInfo {
        *self.shared.pass.lock().unwrap_or_else(|e| e.into_inner()) = pass;
        pass
    }

    /// Forgets what finished pass `finished` saw, keeping its visits: its
    /// seen set goes, its totals move to `stats:p<finished>`.
    async fn wipe_pass(&self, finished: u32) -> Result<(), FrontierError> {
        for (_, keys) in self.shared.shards.all() {
            let seen = matching(keys, "seen:*");
            let mut cursor = 0u64;
            loop {
                let (next, batch) = self.scan_step(keys, cursor, &seen).await?;
                if !batch.is_empty() {
                    let unlink = ::redis::cmd("UNLINK").arg(&batch).to_owned();
                    self.shared.link.query::<u64>("wipe_pass", &unlink).await?;
                }
                if next == 0 {
                    break;
                }
                cursor = next;
            }
            let mut reset = ::redis::cmd("HSET");
            reset
                .arg(keys.key("count"))
                .arg("seen")
                .arg(0)
                .arg("claimed")
                .arg(0);
            self.shared.link.query::<()>("wipe_pass", &reset).await?;
            // A new pass fetches every host's URLs again, within the quota.
            let mut fetched = ::redis::cmd("DEL");
            fetched.arg(keys.key("fetched"));
            self.shared.link.query::<()>("wipe_pass", &fetched).await?;
        }
        let keys = &self.shared.keys;
        let mut exists = ::redis::cmd("EXISTS");
        exists.arg(keys.key("stats"));
        if self.shared.link.query::<u64>("wipe_pass", &exists).await? > 0 {
            let mut rename = ::redis::cmd("RENAME");
            rename
                .arg(keys.key("stats"))
                .arg(keys.key(&format!("stats:p{finished}")));
            self.shared.link.query::<()>("wipe_pass", &rename).await?;
        }
        let mut claims = ::redis::cmd("DEL");
        claims.arg(keys.key("claims"));
        self.shared.link.query("wipe_pass", &claims).await
    }

    /// Streams the stored visits into the queues, a SCAN step at a time;
    /// answers how many were not due.
    async fn seed(&self, order: RecrawlOrder, max_redirect: u32) -> Result<u64, FrontierError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut not_due = 0u64;
        for (_, keys) in self.shared.shards.all() {
            not_due += self.seed_shard(keys, order, max_redirect, now).await?;
        }
        Ok(not_due)
    }

    /// [`seed`](Self::seed) for one shard's visits.
    async fn seed_shard(
        &self,
        keys: &Keys,
        order: RecrawlOrder,
        max_redirect: u32,
        now: u64,
    ) -> Result<u64, FrontierError> {
        let visits = matching(keys, "v:*");
        let (mut cursor, mut not_due) = (0u64, 0u64);
        loop {
            let (next, buckets) = self.scan_step(keys, cursor, &visits).await?;
            let mut pipe = ::redis::pipe();
            for bucket in &buckets {
                pipe.cmd("HVALS").arg(bucket);
            }
            let values: Vec<Vec<Vec<u8>>> = if buckets.is_empty() {
                Vec::new()
            } else {
                self.shared.link.query_pipe("seed_pass", &pipe).await?
            };
            let known = values
                .iter()
                .flatten()
                .filter_map(|v| match split(v) {
                    Some((depth, url, visit)) => Some(Known {
                        url: url.to_owned(),
                        depth,
                        visit,
                    }),
                    None => {
                        tracing::warn!("skipping a damaged visit record");
                        None
                    }
                })
                .collect();
            let (due, later) = plan(known, order, now);
            let requests: Vec<Request> = due
                .into_iter()
                .filter_map(|k| {
                    Some(Request {
                        url: Url::parse(&k.url).ok()?,
                        depth: k.depth,
                        redirects_left: max_redirect,
                        parent: None,
                        kind: RequestKind::Page,
                    })
                })
                .collect();
            self.offer(requests).await?;
            let later: Vec<Url> = later
                .iter()
                .filter_map(|k| Url::parse(&k.url).ok())
                .collect();
            not_due += later.len() as u64;
            self.mark_seen(&later).await?;
            if next == 0 {
                return Ok(not_due);
            }
            cursor = next;
        }
    }

    /// One SCAN step over the server holding `keys`' shard.
    async fn scan_step(
        &self,
        keys: &Keys,
        cursor: u64,
        pattern: &str,
    ) -> Result<(u64, Vec<Vec<u8>>), FrontierError> {
        let mut scan = ::redis::cmd("SCAN");
        scan.arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(SCAN_BATCH);
        self.shared
            .link
            .query_at("scan", &keys.key("count"), &scan)
            .await
    }
}

/// A SCAN pattern for one shard's keys named `name` (a glob).
fn matching(keys: &Keys, name: &str) -> String {
    let all = keys.scan_pattern();
    format!("{}{name}", all.strip_suffix('*').unwrap_or(&all))
}
