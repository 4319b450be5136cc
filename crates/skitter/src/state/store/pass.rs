//! Recrawl passes in the state directory: starting a new pass over the known
//! URLs, resuming one that was cut short, and the per-pass counters.
//!
//! A pass starts in two commits. The first (`begin`) wipes the finished
//! pass's queue, seen set and outcomes — the visits stay — marks the URLs not
//! due as seen, and records the new pass as `seeding`; the frontier then
//! queues the due URLs and, once that is committed, marks the pass `running`.
//! A crash in between leaves a `seeding` pass, which the next run seeds again
//! from the same visits, so no known URL is lost.
//!
//! The due URLs are never held in memory together: `begin` streams the
//! visits once, writing each due URL's sort key to a temporary table (SQLite
//! sorts it on disk), and the frontier then reads them back in order, a page
//! at a time, into its queue, which spills to disk under its memory budget.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::StoreError;
use crate::base::outcome::Change;
use crate::state::recrawl::{RecrawlOrder, decode, queue_key};

/// One pass over the crawl's URLs, as `skitter status` shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassStatus {
    /// 1 for the first crawl, then one more per `--recrawl`.
    pub number: u32,
    /// When it started (ms since the Unix epoch).
    pub started_ms: i64,
    /// When it last committed.
    pub updated_ms: i64,
    /// URLs with a record this pass.
    pub urls: u64,
    /// Of those, new to the crawl (passes after the first).
    pub new: u64,
    /// Fetched with a different payload or status.
    pub changed: u64,
    /// A `304`, or the same payload digest.
    pub unchanged: u64,
    /// `404`/`410` now, a success before.
    pub gone: u64,
    /// Failed this pass.
    pub failed: u64,
    /// Known URLs the adaptive order skipped as not due.
    pub not_due: u64,
}

/// What opening a state with `--recrawl` did.
#[derive(Debug)]
pub(crate) struct PassStart {
    /// The pass now running.
    pub(crate) number: u32,
    /// Whether its due URLs wait in `temp.due_q` to be queued (a new pass's,
    /// or a `seeding` pass's again), read back with [`due_page`].
    pub(crate) seeding: bool,
    /// URLs skipped as not due.
    pub(crate) not_due: u64,
}

/// A commit's additions to its pass's counters: records, then one per
/// [`Change`], in the order of its variants.
#[derive(Debug, Default)]
pub(crate) struct PassDelta([i64; 6]);

impl PassDelta {
    /// Counts one committed record.
    pub(crate) fn add(&mut self, change: Option<Change>) {
        self.0[0] += 1;
        if let Some(change) = change {
            let i = match change {
                Change::New => 1,
                Change::Changed => 2,
                Change::Unchanged => 3,
                Change::Gone => 4,
                Change::Failed => 5,
            };
            self.0[i] += 1;
        }
    }

    /// Adds the counts to pass `number`'s row, inside the commit's transaction.
    pub(crate) fn write(&self, conn: &Connection, number: u32) -> Result<(), StoreError> {
        if self.0 == [0; 6] {
            return Ok(());
        }
        let d = self.0;
        conn.prepare_cached(
            "UPDATE pass SET urls = urls + ?2, new = new + ?3, changed = changed + ?4,
             unchanged = unchanged + ?5, gone = gone + ?6, failed = failed + ?7,
             updated_ms = ?8 WHERE n = ?1",
        )
        .and_then(|mut s| {
            s.execute(params![
                number,
                d[0],
                d[1],
                d[2],
                d[3],
                d[4],
                d[5],
                super::epoch::unix_ms(std::time::SystemTime::now())
            ])
        })
        .map_err(sql("committing"))?;
        Ok(())
    }
}

fn sql(context: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    StoreError::sql(context)
}

/// The latest pass's number and state.
pub(crate) fn current(conn: &Connection) -> Result<(u32, String), StoreError> {
    conn.query_row(
        "SELECT n, state FROM pass ORDER BY n DESC LIMIT 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()
    .map_err(sql("reading the pass"))
    .map(|p| p.unwrap_or((1, "running".into())))
}

/// Starts a new pass if the last one finished (or seeds again one whose
/// seeding was cut short); resumes an unfinished one as it is.
pub(crate) fn begin(
    conn: &Connection,
    order: RecrawlOrder,
    now_ms: i64,
) -> Result<PassStart, StoreError> {
    let (number, state) = current(conn)?;
    let (pending, outcomes): (u64, u64) = conn
        .query_row(
            "SELECT queued + leased, outcomes FROM progress WHERE id = 0",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(sql("reading progress"))?;
    let next = match state.as_str() {
        "seeding" => number,
        _ if pending > 0 => {
            return Ok(PassStart {
                number,
                seeding: false,
                not_due: 0,
            });
        }
        _ => number + 1,
    };
    let any_visit = conn
        .prepare("SELECT 1 FROM visit LIMIT 1")
        .and_then(|mut s| s.exists([]))
        .map_err(sql("reading visits"))?;
    if !any_visit {
        if outcomes > 0 {
            return Err(StoreError::Corrupt(
                "this crawl was made before skitter remembered what it fetched \
                 (state format 2): it cannot be recrawled; start a new state directory"
                    .into(),
            ));
        }
        // Nothing fetched yet: there is nothing to revisit.
        return Ok(PassStart {
            number,
            seeding: false,
            not_due: 0,
        });
    }
    let tx = conn
        .unchecked_transaction()
        .map_err(sql("starting a pass"))?;
    tx.execute_batch(
        "DELETE FROM queue; DELETE FROM done; DELETE FROM seen; DELETE FROM outcome;
         UPDATE host SET pending = 0, done = 0, errors = 0, fetched = 0;
         DROP TABLE IF EXISTS temp.due; DROP TABLE IF EXISTS temp.due_q;
         CREATE TEMP TABLE due (at INTEGER NOT NULL, fp BLOB NOT NULL);",
    )
    .map_err(sql("starting a pass"))?;
    let not_due = sort_due(&tx, order, (now_ms.max(0) / 1000) as u64)?;
    tx.execute(
        "UPDATE progress SET seen = ?1, queued = 0, leased = 0, done = 0, outcomes = 0,
         errors = 0, spilled = 0, fetched = 0 WHERE id = 0",
        [not_due as i64],
    )
    .map_err(sql("starting a pass"))?;
    tx.execute(
        "INSERT INTO pass (n, state, started_ms, updated_ms, not_due)
         VALUES (?1, 'seeding', ?2, ?2, ?3)
         ON CONFLICT (n) DO UPDATE SET state = 'seeding', not_due = excluded.not_due",
        params![next, now_ms, not_due as i64],
    )
    .map_err(sql("starting a pass"))?;
    // The due URLs in queue order, numbered so they can be read back a page
    // at a time (the sort runs in SQLite's temporary storage, not in a Vec).
    tx.execute_batch(
        "CREATE TEMP TABLE due_q (seq INTEGER PRIMARY KEY, url TEXT NOT NULL,
                                  depth INTEGER NOT NULL);
         INSERT INTO due_q (url, depth)
             SELECT v.url, v.depth FROM due d JOIN visit v ON v.fp = d.fp ORDER BY d.at;
         DROP TABLE due;",
    )
    .map_err(sql("starting a pass"))?;
    tx.commit().map_err(sql("starting a pass"))?;
    Ok(PassStart {
        number: next,
        seeding: true,
        not_due,
    })
}

/// Reads every visit once: a due URL's sort key goes to `temp.due`, a URL
/// not due is marked seen. Answers how many were not due; a damaged visit is
/// skipped (its URL is then only fetched again if a page links to it).
fn sort_due(conn: &Connection, order: RecrawlOrder, now: u64) -> Result<u64, StoreError> {
    let mut visits = conn
        .prepare("SELECT fp, visit FROM visit")
        .map_err(sql("reading visits"))?;
    let mut due = conn
        .prepare("INSERT INTO due (at, fp) VALUES (?1, ?2)")
        .map_err(sql("starting a pass"))?;
    let mut seen = conn
        .prepare("INSERT INTO done (fp) VALUES (?1)")
        .map_err(sql("starting a pass"))?;
    let mut rows = visits.query([]).map_err(sql("reading visits"))?;
    let mut not_due = 0;
    while let Some(row) = rows.next().map_err(sql("reading visits"))? {
        let fp: Vec<u8> = row.get(0).map_err(sql("reading visits"))?;
        let blob: Vec<u8> = row.get(1).map_err(sql("reading visits"))?;
        let Some(visit) = decode(&blob) else {
            tracing::warn!("skipping a damaged visit record");
            continue;
        };
        let Some(at) = queue_key(&visit, order, now) else {
            seen.execute([&fp]).map_err(sql("starting a pass"))?;
            not_due += 1;
            continue;
        };
        let at = i64::try_from(at).unwrap_or(i64::MAX);
        due.execute(params![at, fp])
            .map_err(sql("starting a pass"))?;
    }
    Ok(not_due)
}

/// Up to `limit` due URLs of a starting pass after position `after`, in
/// queue order: (position, URL, depth).
pub(crate) fn due_page(
    conn: &Connection,
    after: i64,
    limit: usize,
) -> Result<Vec<(i64, String, u32)>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT seq, url, depth FROM temp.due_q WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        )
        .map_err(sql("reading the due URLs"))?;
    let rows = stmt
        .query_map(params![after, limit as i64], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .map_err(sql("reading the due URLs"))?;
    rows.collect::<Result<_, _>>()
        .map_err(sql("reading the due URLs"))
}

/// Drops the due list once it is queued.
pub(crate) fn drop_due(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch("DROP TABLE IF EXISTS temp.due_q")
        .map_err(sql("starting a pass"))
}

/// Marks a pass whose queue is committed as running.
pub(crate) fn mark_running(conn: &Connection, number: u32) -> Result<(), StoreError> {
    conn.execute("UPDATE pass SET state = 'running' WHERE n = ?1", [number])
        .map_err(sql("starting a pass"))?;
    Ok(())
}

/// Every pass, first to last; none for a state not yet upgraded.
pub(crate) fn load_passes(conn: &Connection) -> Result<Vec<PassStatus>, StoreError> {
    let has_table = conn
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'pass'")
        .and_then(|mut s| s.exists([]))
        .map_err(sql("reading passes"))?;
    if !has_table {
        return Ok(Vec::new());
    }
    let mut stmt = conn
        .prepare(
            "SELECT n, started_ms, updated_ms, urls, new, changed, unchanged, gone, failed,
             not_due FROM pass ORDER BY n",
        )
        .map_err(sql("reading passes"))?;
    let rows = stmt
        .query_map([], |r| {
            Ok(PassStatus {
                number: r.get(0)?,
                started_ms: r.get(1)?,
                updated_ms: r.get(2)?,
                urls: r.get(3)?,
                new: r.get(4)?,
                changed: r.get(5)?,
                unchanged: r.get(6)?,
                gone: r.get(7)?,
                failed: r.get(8)?,
                not_due: r.get(9)?,
            })
        })
        .map_err(sql("reading passes"))?;
    rows.collect::<Result<_, _>>()
        .map_err(sql("reading passes"))
}
