//! The three rings ready hosts wait in (warm, cold, busy; see `rota` for why),
//! and the two numbers that decide a host's ring: how long it stays warm
//! ([`LINGER`]) and how many requests one session may start
//! ([`SESSION_BUDGET`]). The rota serves the rings; a host's slots say which
//! one it belongs in.

use std::time::Duration;

/// How long after its last start a host still counts as warm: well inside the
/// time the connection pool keeps an idle connection (5 s), so a warm host's
/// connection is most likely still open.
pub const LINGER: Duration = Duration::from_secs(2);

/// The requests a host may start in one session (from being taken out of the
/// cold ring) before it waits its turn there again: enough that a new
/// connection's cost is spread thin, few enough that other hosts are not kept
/// waiting for long.
pub const SESSION_BUDGET: u32 = 100;

/// The ready rings, in the order they are served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Ring {
    Warm = 0,
    Cold = 1,
    Busy = 2,
}

/// Every ring, in the order they are served.
pub(crate) const RINGS: [Ring; 3] = [Ring::Warm, Ring::Cold, Ring::Busy];
