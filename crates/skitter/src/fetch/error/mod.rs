//! Turning HTTP-client errors into skitter's [`ErrorKind`]s with readable messages.
//!
//! reqwest's error says little at the top level ("error sending request"); what
//! happened (refused, reset, certificate, malformed response) is down its
//! `source()` chain. The kind is read from the typed causes there — `io::Error`
//! kinds, `hyper::Error` and `h2::Error` predicates, `rustls::Error` — never from
//! message text, so a reworded message upstream cannot change what is retried
//! ([`crate::fetch::retry::is_transient`] decides that from the kind).

use std::error::Error as StdError;
use std::io;

use super::Blocked;
use crate::base::outcome::{ErrorKind, FetchFailure};

/// Causes deeper than this are not inspected (real chains are under ten long).
const MAX_CHAIN: usize = 32;

/// Classifies a reqwest error and keeps its whole cause chain as the message.
pub(crate) fn classify(err: &reqwest::Error) -> FetchFailure {
    let flags = Flags {
        timeout: err.is_timeout(),
        dns: err.is_dns(),
        connect: err.is_connect(),
        body: err.is_body() || err.is_decode(),
    };
    FetchFailure {
        kind: kind_of(err, flags),
        message: chain(err),
    }
}

/// Classifies an error of the direct path (`fetch::direct`): hyper-util's
/// client error, or an I/O error of its own timeouts, read from the same
/// causes as reqwest's, so both paths give one failure the same kind. A
/// failure while reading the body (`in_body`) that no cause explains is a
/// broken body, as reqwest's body errors are.
pub(crate) fn classify_direct(err: &(dyn StdError + 'static), in_body: bool) -> FetchFailure {
    let flags = Flags {
        timeout: false,
        dns: causes(err)
            .take(MAX_CHAIN)
            .any(|e| e.is::<super::direct::ResolveFailed>()),
        connect: err
            .downcast_ref::<hyper_util::client::legacy::Error>()
            .is_some_and(hyper_util::client::legacy::Error::is_connect),
        body: in_body,
    };
    FetchFailure {
        kind: kind_of(err, flags),
        message: chain(err),
    }
}

/// What the client's own error says beside its causes.
struct Flags {
    timeout: bool,
    dns: bool,
    connect: bool,
    body: bool,
}

/// The kind of a client error: its own flags first, then the first cause in
/// the chain that tells.
fn kind_of(err: &(dyn StdError + 'static), flags: Flags) -> ErrorKind {
    // The resolver's refusal comes wrapped as a DNS error; it is not one.
    if causes(err).take(MAX_CHAIN).any(|e| e.is::<Blocked>()) {
        return ErrorKind::Blocked;
    }
    // Our resolver's answer says which DNS failure it was.
    if let Some(lookup) = causes(err)
        .take(MAX_CHAIN)
        .find_map(|e| e.downcast_ref::<crate::fetch::dns::LookupError>())
    {
        return match lookup.failure {
            crate::fetch::dns::Failure::NxDomain | crate::fetch::dns::Failure::NoData => {
                ErrorKind::NoSuchHost
            }
            _ => ErrorKind::Dns,
        };
    }
    // reqwest's flags walk the chain themselves, and cover its private cause
    // types.
    if flags.timeout {
        return ErrorKind::Timeout;
    }
    if flags.dns {
        return ErrorKind::Dns;
    }
    match chain_kind(err) {
        // A connection that breaks before the response started is a failed
        // connection, not a broken body.
        Some(ErrorKind::Body) if flags.connect => ErrorKind::Connect,
        Some(kind) => kind,
        None if flags.connect => ErrorKind::Connect,
        None if flags.body => ErrorKind::Body,
        None => ErrorKind::Other,
    }
}

/// The kind told by the first cause in `err`'s chain that tells one.
fn chain_kind(err: &(dyn StdError + 'static)) -> Option<ErrorKind> {
    causes(err).take(MAX_CHAIN).find_map(cause_kind)
}

/// `err` and its causes, outermost first. Two links `source()` misses are
/// followed: `io::Error::source()` skips the error it wraps (where rustls puts
/// its own), and `h2::Error` has no `source()` at all, only `get_io()`.
fn causes<'a>(
    err: &'a (dyn StdError + 'static),
) -> impl Iterator<Item = &'a (dyn StdError + 'static)> {
    std::iter::successors(Some(err), |&e| {
        if let Some(inner) = e.downcast_ref::<io::Error>().and_then(io::Error::get_ref) {
            return Some(inner as &(dyn StdError + 'static));
        }
        if let Some(io) = e.downcast_ref::<h2::Error>().and_then(h2::Error::get_io) {
            return Some(io as &(dyn StdError + 'static));
        }
        e.source()
    })
}

/// What one cause says on its own, if it is a type that says anything.
fn cause_kind(e: &(dyn StdError + 'static)) -> Option<ErrorKind> {
    if e.is::<rustls::Error>() {
        return Some(ErrorKind::Tls);
    }
    if e.is::<hickory_resolver::net::NetError>() {
        return Some(ErrorKind::Dns);
    }
    if let Some(io) = e.downcast_ref::<io::Error>() {
        return io_kind(io.kind());
    }
    if let Some(h) = e.downcast_ref::<hyper::Error>() {
        return hyper_kind(h);
    }
    if let Some(h2) = e.downcast_ref::<h2::Error>() {
        return h2_kind(h2);
    }
    None
}

fn io_kind(kind: io::ErrorKind) -> Option<ErrorKind> {
    use io::ErrorKind as Io;
    match kind {
        Io::TimedOut => Some(ErrorKind::Timeout),
        Io::ConnectionRefused
        | Io::HostUnreachable
        | Io::NetworkUnreachable
        | Io::NetworkDown
        | Io::AddrNotAvailable => Some(ErrorKind::Connect),
        Io::ConnectionReset
        | Io::ConnectionAborted
        | Io::BrokenPipe
        | Io::UnexpectedEof
        | Io::NotConnected => Some(ErrorKind::Body),
        // InvalidData and Other say nothing; what they wrap may (rustls does).
        _ => None,
    }
}

fn hyper_kind(h: &hyper::Error) -> Option<ErrorKind> {
    if h.is_timeout() {
        Some(ErrorKind::Timeout)
    } else if h.is_parse() || h.is_parse_status() {
        Some(ErrorKind::Protocol)
    } else if h.is_incomplete_message()
        || h.is_closed()
        || h.is_canceled()
        || h.is_body_write_aborted()
    {
        Some(ErrorKind::Body)
    } else {
        // An I/O or HTTP/2 error: its cause, next in the chain, tells.
        None
    }
}

fn h2_kind(h2: &h2::Error) -> Option<ErrorKind> {
    use h2::Reason;
    if h2.is_io() {
        return None;
    }
    match h2.reason()? {
        Reason::PROTOCOL_ERROR
        | Reason::COMPRESSION_ERROR
        | Reason::FRAME_SIZE_ERROR
        | Reason::FLOW_CONTROL_ERROR
        | Reason::HTTP_1_1_REQUIRED => Some(ErrorKind::Protocol),
        // REFUSED_STREAM, CANCEL, a GOAWAY…: the stream ended early.
        _ => Some(ErrorKind::Body),
    }
}

/// `outer: inner: innermost`, skipping repeats (hyper often nests one message twice).
fn chain(err: &dyn StdError) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next: Option<&dyn StdError> = Some(err);
    while let Some(e) = next {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests;
