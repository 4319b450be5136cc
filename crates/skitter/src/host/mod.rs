//! The host vocabulary and the per-host politeness rule, used by the frontiers,
//! `fetch`'s engine, the render path and the retry policy alike: which host a
//! URL belongs to ([`HostKey`]), the policy it runs under, its live slots and
//! gaps ([`politeness`]), the rings ready hosts wait in (`ring`) and the order
//! they are served in (`rota`), the slots outside a frontier (`slots`),
//! per-host page quotas (`quota`), host slow-downs seen by the crawl
//! (`slowdown`) and the random jitter added to gaps (`jitter`).

pub(crate) mod jitter;
mod key;
pub mod politeness;
pub(crate) mod quota;
pub(crate) mod ring;
pub(crate) mod rota;
pub(crate) mod slots;
pub(crate) mod slowdown;

pub(crate) use jitter::random_up_to;
pub use key::{DEFAULT_PER_HOST, HostKey, HostPolicy, LivePolicy};
pub use politeness::{HostFeedback, THROTTLED_TRY, Throttle, ThrottleReason};
pub use ring::{LINGER, SESSION_BUDGET};
