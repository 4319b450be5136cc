//! Concurrent DNS probing: which of many names resolve, and to what.
//!
//! The data flow: names (any [`Stream`](futures_util::Stream) of strings) →
//! [`parse_name`] → [`Prober`] (at most `concurrency` names in flight, one
//! query per record type, transient failures retried) → [`ProbeResult`]s in
//! completion order. A name that does not exist ([`ProbeOutcome::NotFound`])
//! is kept apart from one that could not be answered
//! ([`ProbeOutcome::Failed`] with a [`FailureKind`]: timeout, SERVFAIL,
//! REFUSED, ...), because only the first says something about the name.
//!
//! Tests and benchmarks never need a real resolver: the test crate
//! (`skitter-testsite`) has a scripted DNS server on loopback, `dns::Responder`.

mod name;
mod outcome;
mod prober;
mod record;

pub use name::{NameError, parse_name};
pub use outcome::{FailureKind, ProbeOutcome, ProbeResult};
pub use prober::{
    DEFAULT_CONCURRENCY, DEFAULT_RETRIES, DEFAULT_TIMEOUT, ProbeError, Prober, ProberBuilder,
};
pub use record::{Record, RecordData, RecordType, UnknownRecordType};
