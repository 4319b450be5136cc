//! Wall-clock times as the crawl database stores them: milliseconds since the
//! Unix epoch, in an `INTEGER` column.

use std::time::{SystemTime, UNIX_EPOCH};

/// `t` in milliseconds since the Unix epoch (0 for a time before it).
pub(crate) fn unix_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
