//! The tries of URLs between attempts, so they survive a crash and a resume:
//! the `attempt` table holds a row per URL claimed or waiting for a retry
//! (its tries, how often its lease was lost, whether a run holds it now),
//! deleted when the URL is completed. A row still marked held when a state is
//! opened belongs to a run that died holding the URL: opening counts that as a
//! lost lease and a failed try (see `Lease::lost`).
//!
//! The table is created when missing on every open, so a state of an older
//! build gains it without a format change, and an older build, which does not
//! know it, simply resumes without the tries, as it always did.

use std::collections::HashMap;

use rusqlite::{Connection, params};

use super::{StoreError, fp_bytes, fp_from};

/// Creates the table if the state has none yet.
pub(crate) const TABLE: &str = "CREATE TABLE IF NOT EXISTS attempt (
    fp BLOB PRIMARY KEY, tries INTEGER NOT NULL, lost INTEGER NOT NULL,
    held INTEGER NOT NULL) WITHOUT ROWID;";

/// A URL's tries so far and its lost leases, and whether a run holds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Attempts {
    /// Packed as `Lease::tries` packs them.
    pub(crate) tries: u32,
    /// Leases lost (the run holding it died).
    pub(crate) lost: u32,
}

/// Records a URL's attempts: `held` while a run has it claimed.
pub(crate) fn put(
    conn: &Connection,
    fp: u128,
    attempts: Attempts,
    held: bool,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO attempt (fp, tries, lost, held) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (fp) DO UPDATE SET tries = excluded.tries, lost = excluded.lost,
             held = excluded.held",
    )
    .and_then(|mut s| {
        s.execute(params![
            &fp_bytes(fp)[..],
            attempts.tries,
            attempts.lost,
            held
        ])
    })
    .map_err(StoreError::sql("recording a URL's tries"))?;
    Ok(())
}

/// Forgets a completed URL's attempts.
pub(crate) fn clear(conn: &Connection, fp: u128) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM attempt WHERE fp = ?1")
        .and_then(|mut s| s.execute([&fp_bytes(fp)[..]]))
        .map_err(StoreError::sql("completing a URL"))?;
    Ok(())
}

/// On opening: charges each URL a run died holding one lost lease and one
/// failed try (written back, so a second crash before it is claimed again
/// does not charge it twice), and returns every URL's attempts.
pub(crate) fn restore(conn: &Connection) -> Result<HashMap<u128, Attempts>, StoreError> {
    const WHAT: &str = "restoring URLs' tries";
    conn.execute(
        "UPDATE attempt SET tries = tries + 1, lost = lost + 1, held = 0 WHERE held <> 0",
        [],
    )
    .map_err(StoreError::sql(WHAT))?;
    let mut stmt = conn
        .prepare("SELECT fp, tries, lost FROM attempt")
        .map_err(StoreError::sql(WHAT))?;
    let mut rows = stmt.query([]).map_err(StoreError::sql(WHAT))?;
    let mut out = HashMap::new();
    while let Some(row) = rows.next().map_err(StoreError::sql(WHAT))? {
        let bytes: Vec<u8> = row.get(0).map_err(StoreError::sql(WHAT))?;
        let attempts = Attempts {
            tries: row.get(1).map_err(StoreError::sql(WHAT))?,
            lost: row.get(2).map_err(StoreError::sql(WHAT))?,
        };
        out.insert(fp_from(&bytes)?, attempts);
    }
    Ok(out)
}
