//! Every typed read and write on the crawl database, and the transaction they
//! share.
//!
//! Writes go into one open transaction that the owner commits in groups
//! ([`Records::commit`]); a crash loses at most the uncommitted tail, and since
//! writes are applied in call order, a committed completion always has the
//! offers made before it committed too.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};
use url::Url;

use super::{StoreError, fp_bytes, fp_from};
use crate::frontier::Request;

/// The crawl-wide counters, written with every commit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Progress {
    pub(crate) seen: u64,
    pub(crate) queued: u64,
    pub(crate) leased: u64,
    pub(crate) done: u64,
    pub(crate) outcomes: u64,
    pub(crate) errors: u64,
    /// The next queue sequence number; sequence numbers keep each host FIFO.
    pub(crate) next_seq: i64,
    /// Fingerprints have been moved to the on-disk seen table at least once.
    pub(crate) spilled: bool,
}

/// One host's persistent counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct HostRow {
    pub(crate) id: i64,
    pub(crate) key: String,
    /// Queue rows: waiting or leased.
    pub(crate) pending: u64,
    pub(crate) done: u64,
    pub(crate) errors: u64,
    pub(crate) delay_floor: Duration,
}

/// A queued request with its place in the queue.
#[derive(Debug)]
pub(crate) struct QueuedRow {
    pub(crate) seq: i64,
    pub(crate) fp: u128,
    pub(crate) request: Request,
}

/// The writer's connection and its open transaction.
pub(crate) struct Records {
    conn: Connection,
    in_txn: bool,
    ops: usize,
}

pub(crate) fn unix_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn parse_url(text: &str) -> Result<Url, StoreError> {
    Url::parse(text).map_err(|e| StoreError::Corrupt(format!("queued URL {text:?}: {e}")))
}

impl Records {
    pub(crate) fn new(conn: Connection) -> Self {
        Records {
            conn,
            in_txn: false,
            ops: 0,
        }
    }

    /// Writes since the last commit.
    pub(crate) fn pending_ops(&self) -> usize {
        self.ops
    }

    fn write(&mut self) -> Result<&Connection, StoreError> {
        if !self.in_txn {
            self.conn
                .execute_batch("BEGIN")
                .map_err(StoreError::sql("starting a transaction"))?;
            self.in_txn = true;
        }
        self.ops += 1;
        Ok(&self.conn)
    }

    /// Commits everything written so far, with the counters as they stand now.
    pub(crate) fn commit<'a>(
        &mut self,
        progress: &Progress,
        dirty_hosts: impl Iterator<Item = &'a HostRow>,
    ) -> Result<(), StoreError> {
        let conn = self.write()?;
        let e = StoreError::sql("committing");
        let mut host = conn
            .prepare_cached(
                "UPDATE host SET pending = ?2, done = ?3, errors = ?4, delay_floor_ms = ?5
                 WHERE id = ?1",
            )
            .map_err(StoreError::sql("committing"))?;
        for h in dirty_hosts {
            let floor = h.delay_floor.as_millis() as i64;
            host.execute(params![h.id, h.pending, h.done, h.errors, floor])
                .map_err(StoreError::sql("committing"))?;
        }
        drop(host);
        conn.execute(
            "UPDATE progress SET seen = ?1, queued = ?2, leased = ?3, done = ?4, outcomes = ?5,
             errors = ?6, next_seq = ?7, spilled = ?8, updated_ms = ?9 WHERE id = 0",
            params![
                progress.seen,
                progress.queued,
                progress.leased,
                progress.done,
                progress.outcomes,
                progress.errors,
                progress.next_seq,
                progress.spilled,
                unix_ms(SystemTime::now())
            ],
        )
        .map_err(StoreError::sql("committing"))?;
        conn.execute_batch("COMMIT").map_err(e)?;
        self.in_txn = false;
        self.ops = 0;
        Ok(())
    }

    /// Abandons the open transaction after a failure.
    pub(crate) fn rollback(&mut self) {
        if self.in_txn {
            // The transaction may already be gone (SQLite rolls back on some errors).
            let _ = self.conn.execute_batch("ROLLBACK");
            self.in_txn = false;
            self.ops = 0;
        }
    }

    pub(crate) fn load_progress(&self) -> Result<Progress, StoreError> {
        self.conn
            .query_row(
                "SELECT seen, queued, leased, done, outcomes, errors, next_seq, spilled
                 FROM progress WHERE id = 0",
                [],
                |r| {
                    Ok(Progress {
                        seen: r.get(0)?,
                        queued: r.get(1)?,
                        leased: r.get(2)?,
                        done: r.get(3)?,
                        outcomes: r.get(4)?,
                        errors: r.get(5)?,
                        next_seq: r.get(6)?,
                        spilled: r.get(7)?,
                    })
                },
            )
            .map_err(StoreError::sql("reading progress"))
    }

    pub(crate) fn load_hosts(&self) -> Result<Vec<HostRow>, StoreError> {
        load_hosts(&self.conn)
    }

    pub(crate) fn insert_host(&mut self, key: &str) -> Result<i64, StoreError> {
        let conn = self.write()?;
        conn.prepare_cached(
            "INSERT INTO host (key, pending, done, errors, delay_floor_ms) VALUES (?1, 0, 0, 0, 0)",
        )
        .and_then(|mut s| s.execute([key]))
        .map_err(StoreError::sql("adding a host"))?;
        Ok(conn.last_insert_rowid())
    }

    /// Appends a request to its host's queue.
    pub(crate) fn push(
        &mut self,
        host: i64,
        seq: i64,
        fp: u128,
        r: &Request,
    ) -> Result<(), StoreError> {
        let conn = self.write()?;
        let parent = r.parent.as_ref().map(Url::as_str);
        conn.prepare_cached(
            "INSERT INTO queue (host, seq, fp, url, depth, redirects_left, parent)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .and_then(|mut s| {
            let fp = fp_bytes(fp);
            s.execute(params![
                host,
                seq,
                &fp[..],
                r.url.as_str(),
                r.depth,
                r.redirects_left,
                parent
            ])
        })
        .map_err(StoreError::sql("queueing a URL"))?;
        Ok(())
    }

    /// Up to `limit` of a host's queued requests after `after`, oldest first.
    /// Uncommitted pushes are included: they share this connection's transaction.
    pub(crate) fn next_batch(
        &self,
        host: i64,
        after: i64,
        limit: usize,
    ) -> Result<Vec<QueuedRow>, StoreError> {
        let e = StoreError::sql("reading the queue");
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq, fp, url, depth, redirects_left, parent FROM queue
                 WHERE host = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
            )
            .map_err(StoreError::sql("reading the queue"))?;
        let rows = stmt
            .query_map(params![host, after, limit as i64], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, Vec<u8>>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, u32>(3)?,
                    r.get::<_, u32>(4)?,
                    r.get::<_, Option<String>>(5)?,
                ))
            })
            .map_err(e)?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, fp, url, depth, redirects_left, parent) =
                row.map_err(StoreError::sql("reading the queue"))?;
            let parent = parent.as_deref().map(parse_url).transpose()?;
            let request = Request {
                url: parse_url(&url)?,
                depth,
                redirects_left,
                parent,
            };
            out.push(QueuedRow {
                seq,
                fp: fp_from(&fp)?,
                request,
            });
        }
        Ok(out)
    }

    /// Takes a completed request off the queue, keeping its fingerprint.
    pub(crate) fn remove(&mut self, host: i64, seq: i64, fp: u128) -> Result<(), StoreError> {
        let conn = self.write()?;
        let e = StoreError::sql("completing a URL");
        conn.prepare_cached("DELETE FROM queue WHERE host = ?1 AND seq = ?2")
            .and_then(|mut s| s.execute(params![host, seq]))
            .map_err(e)?;
        conn.prepare_cached("INSERT INTO done (fp) VALUES (?1)")
            .and_then(|mut s| s.execute([&fp_bytes(fp)[..]]))
            .map_err(StoreError::sql("completing a URL"))?;
        Ok(())
    }

    /// Whether `fp` is in the on-disk (spilled) part of the seen set.
    pub(crate) fn seen_on_disk(&self, fp: u128) -> Result<bool, StoreError> {
        self.conn
            .prepare_cached("SELECT 1 FROM seen WHERE fp = ?1")
            .and_then(|mut s| s.exists([&fp_bytes(fp)[..]]))
            .map_err(StoreError::sql("checking the seen set"))
    }

    /// Moves fingerprints (ascending, so the B-tree fills in order) to the on-disk
    /// seen set. `done` rows only exist to rebuild the in-memory set, so they go.
    pub(crate) fn spill(&mut self, sorted: &[u128]) -> Result<(), StoreError> {
        let conn = self.write()?;
        let mut stmt = conn
            .prepare_cached("INSERT OR IGNORE INTO seen (fp) VALUES (?1)")
            .map_err(StoreError::sql("spilling the seen set"))?;
        for fp in sorted {
            stmt.execute([&fp_bytes(*fp)[..]])
                .map_err(StoreError::sql("spilling the seen set"))?;
        }
        drop(stmt);
        conn.execute("DELETE FROM done", [])
            .map_err(StoreError::sql("spilling the seen set"))?;
        self.ops += sorted.len();
        Ok(())
    }

    /// Calls `f` with every fingerprint not in the on-disk seen set's care:
    /// those of queued and of completed-since-the-last-spill URLs.
    pub(crate) fn for_each_live_fp(&self, mut f: impl FnMut(u128)) -> Result<(), StoreError> {
        for sql in ["SELECT fp FROM queue", "SELECT fp FROM done"] {
            let mut stmt = self
                .conn
                .prepare(sql)
                .map_err(StoreError::sql("loading the seen set"))?;
            let mut rows = stmt
                .query([])
                .map_err(StoreError::sql("loading the seen set"))?;
            while let Some(row) = rows
                .next()
                .map_err(StoreError::sql("loading the seen set"))?
            {
                let bytes: Vec<u8> = row
                    .get(0)
                    .map_err(StoreError::sql("loading the seen set"))?;
                f(fp_from(&bytes)?);
            }
        }
        Ok(())
    }

    /// Stores a record; answers whether a previous one existed and was an error.
    pub(crate) fn put_outcome(
        &mut self,
        fp: u128,
        failed: bool,
        json: &str,
    ) -> Result<Option<bool>, StoreError> {
        let conn = self.write()?;
        let key = fp_bytes(fp);
        let previous: Option<bool> = conn
            .prepare_cached("SELECT failed FROM outcome WHERE fp = ?1")
            .and_then(|mut s| s.query_row([&key[..]], |r| r.get(0)).optional())
            .map_err(StoreError::sql("storing an outcome"))?;
        conn.prepare_cached(
            "INSERT INTO outcome (fp, failed, record) VALUES (?1, ?2, ?3)
             ON CONFLICT (fp) DO UPDATE SET failed = excluded.failed, record = excluded.record",
        )
        .and_then(|mut s| s.execute(params![&key[..], failed, json]))
        .map_err(StoreError::sql("storing an outcome"))?;
        Ok(previous)
    }

    pub(crate) fn put_robots(
        &mut self,
        origin: &str,
        body: &[u8],
        at: SystemTime,
    ) -> Result<(), StoreError> {
        let conn = self.write()?;
        conn.prepare_cached(
            "INSERT INTO robots (origin, body, fetched_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT (origin) DO UPDATE SET body = excluded.body, fetched_ms = excluded.fetched_ms",
        )
        .and_then(|mut s| s.execute(params![origin, body, unix_ms(at)]))
        .map_err(StoreError::sql("storing robots.txt"))?;
        Ok(())
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
            .map_err(StoreError::sql("reading robots.txt"))
    }

    pub(crate) fn put_kv(&mut self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let conn = self.write()?;
        conn.prepare_cached(
            "INSERT INTO kv (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .and_then(|mut s| s.execute(params![key, value]))
        .map_err(StoreError::sql("storing a value"))?;
        Ok(())
    }

    pub(crate) fn get_kv(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.conn
            .prepare_cached("SELECT value FROM kv WHERE key = ?1")
            .and_then(|mut s| s.query_row([key], |r| r.get(0)).optional())
            .map_err(StoreError::sql("reading a value"))
    }
}

/// Every host's counters, from any connection.
pub(crate) fn load_hosts(conn: &Connection) -> Result<Vec<HostRow>, StoreError> {
    let e = StoreError::sql("reading hosts");
    let mut stmt = conn
        .prepare("SELECT id, key, pending, done, errors, delay_floor_ms FROM host ORDER BY id")
        .map_err(StoreError::sql("reading hosts"))?;
    let rows = stmt
        .query_map([], |r| {
            Ok(HostRow {
                id: r.get(0)?,
                key: r.get(1)?,
                pending: r.get(2)?,
                done: r.get(3)?,
                errors: r.get(4)?,
                delay_floor: Duration::from_millis(r.get::<_, i64>(5)?.max(0) as u64),
            })
        })
        .map_err(e)?;
    rows.collect::<Result<_, _>>()
        .map_err(StoreError::sql("reading hosts"))
}
