//! Every typed read and write on the crawl database.
//!
//! Writes arrive as whole [`Batch`]es and each is applied in one transaction
//! ([`Records::apply`]), ops in call order, then the counters as they stood when
//! the batch was taken: a crash loses at most the batches not yet committed, and
//! a committed completion always has the offers made before it committed too.
//!
//! The outcome counters (records, errors, per-host errors) are kept here rather
//! than by the frontier, because only the database knows whether a record
//! replaces an earlier one for the same URL; it finds out while applying, off the
//! frontier's lock.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};

use super::batch::{Batch, Op, Snapshot};
use super::chunk::Chunk;
use super::counters::{HostRow, Progress};
use super::epoch::unix_ms;
use super::{OutcomeCounts, StoreError, fp_bytes, fp_from};

/// The writer's connection and the outcome counters as of its last commit.
pub(crate) struct Records {
    conn: Connection,
    counts: OutcomeCounts,
    /// Whether `outcome` has its fingerprint index. A random-key index costs a
    /// page write per record in every small commit, and it is only needed to find
    /// a record to replace, which only records stored outside a lease can cause;
    /// so it is created the first time one is stored.
    fp_index: bool,
    /// The pass the counters of committed records go to.
    pass: u32,
    /// Per-pass counters not yet written.
    pass_delta: super::pass::PassDelta,
}

const FP_INDEX: &str = "outcome_fp";

fn sql(context: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    StoreError::sql(context)
}

impl Records {
    pub(crate) fn new(conn: Connection) -> Result<Self, StoreError> {
        let counts = conn
            .query_row(
                "SELECT outcomes, errors FROM progress WHERE id = 0",
                [],
                |r| {
                    Ok(OutcomeCounts {
                        records: r.get(0)?,
                        errors: r.get(1)?,
                    })
                },
            )
            .map_err(sql("reading progress"))?;
        let fp_index = conn
            .prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?1")
            .and_then(|mut s| s.exists([FP_INDEX]))
            .map_err(sql("reading the schema"))?;
        let (pass, _) = super::pass::current(&conn)?;
        Ok(Records {
            conn,
            counts,
            fp_index,
            pass,
            pass_delta: Default::default(),
        })
    }

    /// Counters over the stored records, as of the last commit.
    pub(crate) fn outcome_counts(&self) -> OutcomeCounts {
        self.counts
    }

    /// Applies a batch and commits it with its snapshot, all or nothing.
    pub(crate) fn apply(&mut self, batch: Batch, snap: &Snapshot) -> Result<(), StoreError> {
        let before = (self.counts, self.fp_index);
        self.pass_delta = Default::default();
        let result = self.try_apply(batch, snap);
        if result.is_err() {
            (self.counts, self.fp_index) = before;
            // The transaction may already be gone (SQLite rolls back on some errors).
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        result
    }

    fn try_apply(&mut self, batch: Batch, snap: &Snapshot) -> Result<(), StoreError> {
        self.conn
            .execute_batch("BEGIN")
            .map_err(sql("starting a transaction"))?;
        let mut host_errors: HashMap<i64, i64> = HashMap::new();
        for op in batch.ops {
            self.apply_op(op, &mut host_errors)?;
        }
        let conn = &self.conn;
        let mut host = conn
            .prepare_cached(
                "UPDATE host SET pending = ?2, done = ?3, delay_floor_ms = ?4,
                 errors = errors + ?5, fetched = ?6 WHERE id = ?1",
            )
            .map_err(sql("committing"))?;
        for h in &snap.hosts {
            let floor = h.delay_floor.as_millis() as i64;
            let errors = host_errors.remove(&h.id).unwrap_or(0);
            host.execute(params![h.id, h.pending, h.done, floor, errors, h.fetched])
                .map_err(sql("committing"))?;
        }
        let mut errors_only = conn
            .prepare_cached("UPDATE host SET errors = errors + ?2 WHERE id = ?1")
            .map_err(sql("committing"))?;
        for (id, delta) in host_errors {
            errors_only
                .execute(params![id, delta])
                .map_err(sql("committing"))?;
        }
        self.pass_delta.write(conn, self.pass)?;
        let p = &snap.progress;
        conn.prepare_cached(
            "UPDATE progress SET seen = ?1, queued = ?2, leased = ?3, done = ?4, outcomes = ?5,
             errors = ?6, next_seq = ?7, spilled = ?8, updated_ms = ?9, fetched = ?10
             WHERE id = 0",
        )
        .and_then(|mut s| {
            s.execute(params![
                p.seen,
                p.queued,
                p.leased,
                p.done,
                self.counts.records,
                self.counts.errors,
                p.next_seq,
                p.spilled,
                unix_ms(SystemTime::now()),
                p.fetched
            ])
        })
        .map_err(sql("committing"))?;
        conn.execute_batch("COMMIT").map_err(sql("committing"))
    }

    fn apply_op(&mut self, op: Op, host_errors: &mut HashMap<i64, i64>) -> Result<(), StoreError> {
        let conn = &self.conn;
        match op {
            Op::Host { id, key } => conn
                .prepare_cached(
                    "INSERT INTO host (id, key, pending, done, errors, delay_floor_ms)
                     VALUES (?1, ?2, 0, 0, 0, 0)",
                )
                .and_then(|mut s| s.execute(params![id, key]))
                .map_err(sql("adding a host"))?,
            Op::Chunk(c) => put_chunk(conn, &c)?,
            Op::Done(fp) => {
                super::attempts::clear(conn, fp)?;
                conn.prepare_cached("INSERT INTO done (fp) VALUES (?1)")
                    .and_then(|mut s| s.execute([&fp_bytes(fp)[..]]))
                    .map_err(sql("completing a URL"))?
            }
            Op::Attempts { fp, attempts, held } => {
                super::attempts::put(conn, fp, attempts, held)?;
                0
            }
            Op::DropChunk(id) => conn
                .prepare_cached("DELETE FROM queue WHERE id = ?1")
                .and_then(|mut s| s.execute([id]))
                .map_err(sql("completing a URL"))?,
            Op::Outcome {
                fp,
                host,
                failed,
                json,
                leased,
                change,
            } => {
                let delta = self.put_outcome(fp, failed, &json, leased)?;
                self.pass_delta.add(change);
                if let Some(id) = host {
                    *host_errors.entry(id).or_default() += delta;
                }
                1
            }
            Op::Visit {
                fp,
                url,
                depth,
                visit,
            } => conn
                .prepare_cached(
                    "INSERT INTO visit (fp, url, depth, visit) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (fp) DO UPDATE SET visit = excluded.visit",
                )
                .and_then(|mut s| s.execute(params![&fp_bytes(fp)[..], url, depth, visit]))
                .map_err(sql("remembering a visit"))?,
            Op::Robots {
                origin,
                body,
                fetched_at,
            } => conn
                .prepare_cached(
                    "INSERT INTO robots (origin, body, fetched_ms) VALUES (?1, ?2, ?3)
                     ON CONFLICT (origin) DO UPDATE
                     SET body = excluded.body, fetched_ms = excluded.fetched_ms",
                )
                .and_then(|mut s| s.execute(params![origin, body, unix_ms(fetched_at)]))
                .map_err(sql("storing robots.txt"))?,
            Op::Kv { key, value } => conn
                .prepare_cached(
                    "INSERT INTO kv (key, value) VALUES (?1, ?2)
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                )
                .and_then(|mut s| s.execute(params![key, value]))
                .map_err(sql("storing a value"))?,
        };
        Ok(())
    }

    /// Stores a record, replacing an earlier one for the same URL, and counts it;
    /// answers the change in the error count.
    fn put_outcome(
        &mut self,
        fp: u128,
        failed: bool,
        json: &str,
        leased: bool,
    ) -> Result<i64, StoreError> {
        let key = fp_bytes(fp);
        if !leased && !self.fp_index {
            self.conn
                .execute_batch(&format!("CREATE INDEX {FP_INDEX} ON outcome (fp)"))
                .map_err(sql("indexing outcomes"))?;
            self.fp_index = true;
        }
        let previous: Option<bool> = if self.fp_index {
            self.conn
                .prepare_cached("SELECT failed FROM outcome WHERE fp = ?1")
                .and_then(|mut s| s.query_row([&key[..]], |r| r.get(0)).optional())
                .map_err(sql("storing an outcome"))?
        } else {
            None
        };
        let sql_text = match previous {
            Some(_) => "UPDATE outcome SET failed = ?2, record = ?3 WHERE fp = ?1",
            None => "INSERT INTO outcome (fp, failed, record) VALUES (?1, ?2, ?3)",
        };
        self.conn
            .prepare_cached(sql_text)
            .and_then(|mut s| s.execute(params![&key[..], failed, json]))
            .map_err(sql("storing an outcome"))?;
        if previous.is_none() {
            self.counts.records += 1;
        }
        let delta = i64::from(failed) - i64::from(previous == Some(true));
        self.counts.errors = self.counts.errors.saturating_add_signed(delta);
        Ok(delta)
    }

    pub(crate) fn load_progress(&self) -> Result<Progress, StoreError> {
        self.conn
            .query_row(
                "SELECT seen, queued, leased, done, next_seq, spilled, fetched
                 FROM progress WHERE id = 0",
                [],
                |r| {
                    Ok(Progress {
                        seen: r.get(0)?,
                        queued: r.get(1)?,
                        leased: r.get(2)?,
                        done: r.get(3)?,
                        next_seq: r.get(4)?,
                        spilled: r.get(5)?,
                        fetched: r.get(6)?,
                    })
                },
            )
            .map_err(sql("reading progress"))
    }

    pub(crate) fn load_hosts(&self) -> Result<Vec<HostRow>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, key, pending, done, errors, delay_floor_ms, fetched FROM host ORDER BY id")
            .map_err(sql("reading hosts"))?;
        let rows = stmt.query_map([], host_row).map_err(sql("reading hosts"))?;
        rows.collect::<Result<_, _>>().map_err(sql("reading hosts"))
    }

    /// What the crawl has fetched in its current pass, in all and per host
    /// (only hosts with fetches), as last committed.
    pub(crate) fn fetched(&self) -> Result<(u64, Vec<(String, u64)>), StoreError> {
        let total = self
            .conn
            .query_row("SELECT fetched FROM progress WHERE id = 0", [], |r| {
                r.get(0)
            })
            .map_err(sql("reading progress"))?;
        let mut stmt = self
            .conn
            .prepare("SELECT key, fetched FROM host WHERE fetched > 0")
            .map_err(sql("reading hosts"))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(sql("reading hosts"))?;
        let hosts = rows
            .collect::<Result<_, _>>()
            .map_err(sql("reading hosts"))?;
        Ok((total, hosts))
    }

    /// One host's counters as last committed, if it has a row.
    pub(crate) fn host_row(&self, key: &str) -> Result<Option<HostRow>, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT id, key, pending, done, errors, delay_floor_ms, fetched FROM host WHERE key = ?1",
            )
            .and_then(|mut s| s.query_row([key], host_row).optional())
            .map_err(sql("reading a host"))
    }

    /// A host's first chunk after chunk `after`, if any.
    pub(crate) fn next_chunk(&self, host: i64, after: i64) -> Result<Option<Chunk>, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT id, fps, reqs FROM queue WHERE host = ?1 AND id > ?2 ORDER BY id LIMIT 1",
            )
            .and_then(|mut s| {
                s.query_row(params![host, after], |r| {
                    Ok(Chunk {
                        id: r.get(0)?,
                        host,
                        fps: r.get(1)?,
                        reqs: r.get(2)?,
                    })
                })
                .optional()
            })
            .map_err(sql("reading the queue"))
    }

    /// Calls `f` with every chunk's id, host and fingerprints.
    pub(crate) fn for_each_chunk(
        &self,
        mut f: impl FnMut(i64, i64, Vec<u128>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, host, fps FROM queue")
            .map_err(sql("loading the queue"))?;
        let mut rows = stmt.query([]).map_err(sql("loading the queue"))?;
        while let Some(row) = rows.next().map_err(sql("loading the queue"))? {
            let (id, host): (i64, i64) = (
                row.get(0).map_err(sql("loading the queue"))?,
                row.get(1).map_err(sql("loading the queue"))?,
            );
            let fps: Vec<u8> = row.get(2).map_err(sql("loading the queue"))?;
            f(id, host, super::chunk::fingerprints(&fps)?)?;
        }
        Ok(())
    }

    /// Every completed URL's fingerprint since the last spill, ascending.
    /// Every URL's tries between attempts, a run that died holding one
    /// charged for it (see `attempts`).
    pub(crate) fn restore_attempts(
        &self,
    ) -> Result<HashMap<u128, super::attempts::Attempts>, StoreError> {
        super::attempts::restore(&self.conn)
    }

    pub(crate) fn done_fps(&self) -> Result<Vec<u128>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT fp FROM done")
            .map_err(sql("loading the seen set"))?;
        let mut rows = stmt.query([]).map_err(sql("loading the seen set"))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(sql("loading the seen set"))? {
            let bytes: Vec<u8> = row.get(0).map_err(sql("loading the seen set"))?;
            out.push(fp_from(&bytes)?);
        }
        out.sort_unstable();
        Ok(out)
    }

    /// Replaces chunks with the given (smaller) versions, deleting empty ones, in
    /// one transaction.
    pub(crate) fn rewrite_chunks(&mut self, chunks: &[Chunk]) -> Result<(), StoreError> {
        if chunks.is_empty() {
            return Ok(());
        }
        let tx = self
            .conn
            .transaction()
            .map_err(sql("rewriting the queue"))?;
        for c in chunks {
            tx.execute("DELETE FROM queue WHERE id = ?1", [c.id])
                .map_err(sql("rewriting the queue"))?;
            if c.len() > 0 {
                put_chunk(&tx, c)?;
            }
        }
        tx.commit().map_err(sql("rewriting the queue"))
    }

    /// A whole stored chunk.
    pub(crate) fn chunk(&self, id: i64) -> Result<Option<Chunk>, StoreError> {
        self.conn
            .prepare_cached("SELECT host, fps, reqs FROM queue WHERE id = ?1")
            .and_then(|mut s| {
                s.query_row([id], |r| {
                    Ok(Chunk {
                        id,
                        host: r.get(0)?,
                        fps: r.get(1)?,
                        reqs: r.get(2)?,
                    })
                })
                .optional()
            })
            .map_err(sql("reading the queue"))
    }

    /// Whether `fp` is in the on-disk (spilled) part of the seen set.
    pub(crate) fn seen_on_disk(&self, fp: u128) -> Result<bool, StoreError> {
        self.conn
            .prepare_cached("SELECT 1 FROM seen WHERE fp = ?1")
            .and_then(|mut s| s.exists([&fp_bytes(fp)[..]]))
            .map_err(sql("checking the seen set"))
    }

    /// Moves fingerprints (ascending, so the B-tree fills in order) to the on-disk
    /// seen set, in one transaction with `rewrites`: the partly completed chunks
    /// cut down to their unfinished requests, since the `done` rows that told
    /// which were finished go (they only exist to rebuild the in-memory set).
    pub(crate) fn spill(&mut self, sorted: &[u128], rewrites: &[Chunk]) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction()
            .map_err(sql("spilling the seen set"))?;
        {
            let mut stmt = tx
                .prepare_cached("INSERT OR IGNORE INTO seen (fp) VALUES (?1)")
                .map_err(sql("spilling the seen set"))?;
            for fp in sorted {
                stmt.execute([&fp_bytes(*fp)[..]])
                    .map_err(sql("spilling the seen set"))?;
            }
            for c in rewrites {
                tx.execute("DELETE FROM queue WHERE id = ?1", [c.id])
                    .map_err(sql("spilling the seen set"))?;
                if c.len() > 0 {
                    put_chunk(&tx, c)?;
                }
            }
        }
        tx.execute("DELETE FROM done", [])
            .map_err(sql("spilling the seen set"))?;
        tx.execute("UPDATE progress SET spilled = 1 WHERE id = 0", [])
            .map_err(sql("spilling the seen set"))?;
        tx.commit().map_err(sql("spilling the seen set"))
    }

    pub(crate) fn get_robots(
        &self,
        origin: &str,
    ) -> Result<Option<(Vec<u8>, SystemTime)>, StoreError> {
        self.conn
            .prepare_cached("SELECT body, fetched_ms FROM robots WHERE origin = ?1")
            .and_then(|mut s| {
                s.query_row([origin], |r| {
                    let ms: i64 = r.get(1)?;
                    let at = UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64);
                    Ok((r.get::<_, Vec<u8>>(0)?, at))
                })
                .optional()
            })
            .map_err(sql("reading robots.txt"))
    }

    /// A URL's stored visit, encoded.
    pub(crate) fn get_visit(&self, fp: u128) -> Result<Option<Vec<u8>>, StoreError> {
        visit_of(&self.conn, fp)
    }

    /// The pass records are counted in.
    pub(crate) fn pass(&self) -> u32 {
        self.pass
    }

    /// Up to `limit` due URLs of a starting pass after position `after`.
    pub(crate) fn due_page(
        &self,
        after: i64,
        limit: usize,
    ) -> Result<Vec<(i64, String, u32)>, StoreError> {
        super::pass::due_page(&self.conn, after, limit)
    }

    /// Drops a starting pass's due list once it is queued.
    pub(crate) fn drop_due(&self) -> Result<(), StoreError> {
        super::pass::drop_due(&self.conn)
    }

    /// Marks a pass whose queue is committed as running.
    pub(crate) fn mark_running(&self, number: u32) -> Result<(), StoreError> {
        super::pass::mark_running(&self.conn, number)
    }

    pub(crate) fn get_kv(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.conn
            .prepare_cached("SELECT value FROM kv WHERE key = ?1")
            .and_then(|mut s| s.query_row([key], |r| r.get(0)).optional())
            .map_err(sql("reading a value"))
    }
}

fn put_chunk(conn: &Connection, c: &Chunk) -> Result<usize, StoreError> {
    conn.prepare_cached("INSERT INTO queue (id, host, fps, reqs) VALUES (?1, ?2, ?3, ?4)")
        .and_then(|mut s| s.execute(params![c.id, c.host, c.fps, c.reqs]))
        .map_err(sql("queueing URLs"))
}

/// Every host's counters, from any connection, without `fetched` (left 0):
/// a status reader may read a state of a format before it was kept.
pub(crate) fn load_hosts(conn: &Connection) -> Result<Vec<HostRow>, StoreError> {
    let mut stmt = conn
        .prepare("SELECT id, key, pending, done, errors, delay_floor_ms FROM host ORDER BY id")
        .map_err(sql("reading hosts"))?;
    let rows = stmt.query_map([], host_row).map_err(sql("reading hosts"))?;
    rows.collect::<Result<_, _>>().map_err(sql("reading hosts"))
}

/// A URL's stored visit, encoded, read through `conn` (the writer's, or a
/// reader's that sees the last commit).
pub(crate) fn visit_of(conn: &Connection, fp: u128) -> Result<Option<Vec<u8>>, StoreError> {
    conn.prepare_cached("SELECT visit FROM visit WHERE fp = ?1")
        .and_then(|mut s| s.query_row([&fp_bytes(fp)[..]], |r| r.get(0)).optional())
        .map_err(sql("reading a visit"))
}

/// A row of `SELECT id, key, pending, done, errors, delay_floor_ms[, fetched] FROM host`.
fn host_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<HostRow> {
    Ok(HostRow {
        id: r.get(0)?,
        key: r.get(1)?,
        pending: r.get(2)?,
        done: r.get(3)?,
        errors: r.get(4)?,
        delay_floor: Duration::from_millis(r.get::<_, i64>(5)?.max(0) as u64),
        // Absent when the caller did not select it (see `load_hosts`).
        fetched: r.get(6).unwrap_or(0),
    })
}
