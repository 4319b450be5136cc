//! What one probe produced, and how resolver answers map onto it.
//!
//! The mapping lives in two pure functions so the rules can be read (and
//! tested) in one place: [`classify_error`] sorts a resolver error into
//! not-found / timeout / SERVFAIL / REFUSED / other, and [`combine`] merges the
//! per-type answers for one name (A and AAAA, say) into one outcome.

use std::fmt;
use std::time::Duration;

use hickory_resolver::net::NetError;

use crate::fetch::dns::Failure;

use super::{NameError, Record};

/// The result of probing one name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeResult {
    /// The name as it was given (trimmed), not the normalised query name.
    pub name: String,
    /// What the probe found.
    pub outcome: ProbeOutcome,
    /// Wall time from the first query to the outcome, retries included.
    pub elapsed: Duration,
}

/// What a probe found for one name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// At least one record of a requested type exists (in the order of the
    /// requested types).
    Resolved(Vec<Record>),
    /// The name does not exist (NXDOMAIN), or has no records of the requested
    /// types.
    NotFound,
    /// No answer could be had; see the kind.
    Failed(FailureKind),
}

/// Why a probe got no answer. Distinct from [`ProbeOutcome::NotFound`]: a
/// failure says nothing about whether the name exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureKind {
    /// No response within the timeout, on every attempt.
    Timeout,
    /// The server answered SERVFAIL on every attempt.
    ServFail,
    /// The server refused the query (REFUSED); not retried.
    Refused,
    /// The name is not a valid domain name; nothing was sent.
    InvalidName(NameError),
    /// Anything else: another response code, a network or protocol error.
    Other(String),
}

impl FailureKind {
    /// Whether another attempt may succeed: lost packets and SERVFAIL are
    /// often transient, while REFUSED is the server's policy and a bad name or
    /// a local error will not change on retry.
    pub fn is_transient(&self) -> bool {
        matches!(self, FailureKind::Timeout | FailureKind::ServFail)
    }

    /// A stable lower-case code for machine-readable output.
    pub fn code(&self) -> &'static str {
        match self {
            FailureKind::Timeout => "timeout",
            FailureKind::ServFail => "servfail",
            FailureKind::Refused => "refused",
            FailureKind::InvalidName(_) => "invalid_name",
            FailureKind::Other(_) => "error",
        }
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailureKind::Timeout => f.write_str("timeout"),
            FailureKind::ServFail => f.write_str("SERVFAIL"),
            FailureKind::Refused => f.write_str("REFUSED"),
            FailureKind::InvalidName(e) => write!(f, "malformed name: {e}"),
            FailureKind::Other(msg) => f.write_str(msg),
        }
    }
}

/// The answer to one query (one name, one record type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TypeOutcome {
    /// Records of the asked type.
    Records(Vec<Record>),
    /// NXDOMAIN: the name itself does not exist.
    NxDomain,
    /// The name exists but holds no record of the asked type.
    NoData,
    /// No usable answer.
    Failed(FailureKind),
}

/// Sorts a resolver error. hickory reports NXDOMAIN and NODATA as errors, so
/// both land here as well as real failures.
pub(crate) fn classify_error(err: &NetError) -> TypeOutcome {
    match crate::fetch::dns::classify(err) {
        Failure::NxDomain => TypeOutcome::NxDomain,
        Failure::NoData => TypeOutcome::NoData,
        Failure::Timeout => TypeOutcome::Failed(FailureKind::Timeout),
        Failure::ServFail => TypeOutcome::Failed(FailureKind::ServFail),
        Failure::Refused => TypeOutcome::Failed(FailureKind::Refused),
        Failure::Other(why) => TypeOutcome::Failed(FailureKind::Other(why)),
    }
}

/// Merges the per-type answers for one name, given in the requested order.
///
/// Any records win (a partial answer is still an answer). Otherwise NXDOMAIN
/// on any type settles it, because it is a statement about the whole name.
/// Otherwise the first failure is reported, since a failed type might have held
/// records; only when every type answered "no data" is the name not found.
pub(crate) fn combine(per_type: Vec<TypeOutcome>) -> ProbeOutcome {
    let mut records = Vec::new();
    let mut nxdomain = false;
    let mut failure = None;
    for outcome in per_type {
        match outcome {
            TypeOutcome::Records(found) => records.extend(found),
            TypeOutcome::NxDomain => nxdomain = true,
            TypeOutcome::NoData => {}
            TypeOutcome::Failed(kind) => {
                failure.get_or_insert(kind);
            }
        }
    }
    if !records.is_empty() {
        ProbeOutcome::Resolved(records)
    } else if nxdomain {
        ProbeOutcome::NotFound
    } else if let Some(kind) = failure {
        ProbeOutcome::Failed(kind)
    } else {
        ProbeOutcome::NotFound
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use hickory_resolver::net::{DnsError, NoRecords};
    use hickory_resolver::proto::op::{Query, ResponseCode};

    use super::*;
    use crate::probe::RecordData;

    fn no_records(code: ResponseCode) -> NetError {
        NetError::Dns(DnsError::NoRecordsFound(NoRecords::new(Query::new(), code)))
    }

    #[test]
    fn classifies_errors() {
        let cases = [
            (NetError::Timeout, TypeOutcome::Failed(FailureKind::Timeout)),
            (no_records(ResponseCode::NXDomain), TypeOutcome::NxDomain),
            (no_records(ResponseCode::NoError), TypeOutcome::NoData),
            (
                no_records(ResponseCode::ServFail),
                TypeOutcome::Failed(FailureKind::ServFail),
            ),
            (
                NetError::Dns(DnsError::ResponseCode(ResponseCode::ServFail)),
                TypeOutcome::Failed(FailureKind::ServFail),
            ),
            (
                NetError::Dns(DnsError::ResponseCode(ResponseCode::Refused)),
                TypeOutcome::Failed(FailureKind::Refused),
            ),
            (
                NetError::Dns(DnsError::ResponseCode(ResponseCode::NotImp)),
                TypeOutcome::Failed(FailureKind::Other("server answered Not Implemented".into())),
            ),
            (
                NetError::NoConnections,
                TypeOutcome::Failed(FailureKind::Other("no connections available".into())),
            ),
        ];
        for (err, want) in cases {
            assert_eq!(classify_error(&err), want, "error {err:?}");
        }
    }

    #[test]
    fn only_timeouts_and_servfail_are_transient() {
        let cases = [
            (FailureKind::Timeout, true),
            (FailureKind::ServFail, true),
            (FailureKind::Refused, false),
            (FailureKind::InvalidName(NameError::Empty), false),
            (FailureKind::Other("io".into()), false),
        ];
        for (kind, want) in cases {
            assert_eq!(kind.is_transient(), want, "kind {kind:?}");
        }
    }

    #[test]
    fn combines_per_type_outcomes() {
        let rec = |n| Record {
            ttl: 60,
            data: RecordData::A(Ipv4Addr::new(192, 0, 2, n)),
        };
        let found = |n| TypeOutcome::Records(vec![rec(n)]);
        let fail = |k: FailureKind| TypeOutcome::Failed(k);
        use TypeOutcome::{NoData, NxDomain};
        let cases = [
            (
                vec![found(1), found(2)],
                ProbeOutcome::Resolved(vec![rec(1), rec(2)]),
            ),
            (
                vec![found(1), NxDomain],
                ProbeOutcome::Resolved(vec![rec(1)]),
            ),
            (
                vec![fail(FailureKind::Timeout), found(2)],
                ProbeOutcome::Resolved(vec![rec(2)]),
            ),
            (vec![NxDomain, NxDomain], ProbeOutcome::NotFound),
            (vec![NoData, NoData], ProbeOutcome::NotFound),
            (
                vec![NxDomain, fail(FailureKind::Timeout)],
                ProbeOutcome::NotFound,
            ),
            (
                vec![NoData, fail(FailureKind::Refused)],
                ProbeOutcome::Failed(FailureKind::Refused),
            ),
            (
                vec![fail(FailureKind::ServFail), fail(FailureKind::Timeout)],
                ProbeOutcome::Failed(FailureKind::ServFail),
            ),
            (vec![], ProbeOutcome::NotFound),
        ];
        for (input, want) in cases {
            assert_eq!(combine(input.clone()), want, "input {input:?}");
        }
    }
}
