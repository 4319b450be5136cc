//! Turning HTTP-client errors into skitter's [`ErrorKind`]s with readable messages.
//!
//! reqwest's error says little at the top level ("error sending request"); the
//! useful part (DNS, refused, certificate, reset) is down its `source()` chain, so
//! the chain is walked once here and joined into the message.

use std::error::Error as StdError;

use crate::outcome::{ErrorKind, FetchFailure};

/// Classifies a reqwest error and keeps its whole cause chain as the message.
pub fn classify(err: &reqwest::Error) -> FetchFailure {
    let message = chain(err);
    let lower = message.to_ascii_lowercase();
    let kind = if err.is_timeout() || lower.contains("timed out") {
        ErrorKind::Timeout
    } else if lower.contains("dns error") || lower.contains("failed to lookup") {
        ErrorKind::Dns
    } else if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake")
    {
        ErrorKind::Tls
    } else if err.is_connect() {
        ErrorKind::Connect
    } else if err.is_body() || err.is_decode() {
        ErrorKind::Body
    } else if lower.contains("parse") || lower.contains("invalid") || lower.contains("protocol") {
        ErrorKind::Protocol
    } else if lower.contains("connection")
        || lower.contains("broken pipe")
        || lower.contains("reset")
    {
        ErrorKind::Body
    } else {
        ErrorKind::Other
    };
    FetchFailure { kind, message }
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
