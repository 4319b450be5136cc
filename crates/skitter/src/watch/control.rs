//! The control API's commands and the token that guards them.
//!
//! Reading (metrics, status, the dashboard) needs nothing; every command
//! (`POST /control/…`) needs `Authorization: Bearer TOKEN`. A missing token is
//! refused with 401, a wrong one with 403. The token is compared in constant
//! time, so the time of a refusal tells nothing of how much of it was right.
//! A browser page of another origin cannot send the header without a CORS
//! preflight, which the server never grants.

use std::fmt;

use tokio_util::sync::CancellationToken;

use crate::crawl::steer::Steer;

/// The shortest token accepted from a user (a generated one is 32 hex digits).
pub const MIN_TOKEN_LEN: usize = 16;

/// The secret a command must carry.
#[derive(Clone)]
pub struct Token(String);

/// A token given by the user is not usable.
#[derive(Debug, thiserror::Error)]
#[error(
    "the control token must be at least {MIN_TOKEN_LEN} visible ASCII characters, without spaces"
)]
pub struct BadToken;

impl Token {
    /// A new random token: 128 bits as 32 hex digits.
    pub fn generate() -> Token {
        let bytes: [u8; 16] = rand::random();
        Token(data_encoding::HEXLOWER.encode(&bytes))
    }

    /// A token chosen by the user.
    pub fn new(token: &str) -> Result<Token, BadToken> {
        let visible = token.bytes().all(|b| b.is_ascii_graphic());
        if token.len() < MIN_TOKEN_LEN || !visible {
            return Err(BadToken);
        }
        Ok(Token(token.to_string()))
    }

    /// The token, to print or to send.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `given` is this token, in time that depends only on their lengths.
    pub fn matches(&self, given: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), given.as_bytes());
        let mut diff = u8::from(a.len() != b.len());
        for (i, x) in a.iter().enumerate() {
            // Compared against every byte of ours whatever `given`'s length.
            let y = b.get(i).copied().unwrap_or(!x);
            diff |= x ^ y;
        }
        std::hint::black_box(diff) == 0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(…)")
    }
}

/// Whether a request may run a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Auth {
    /// The right token.
    Allowed,
    /// No `Authorization: Bearer` header (401).
    Missing,
    /// A token that is not the one (403).
    Wrong,
}

/// Judges an `Authorization` header's value against `token`.
pub fn check(token: &Token, header: Option<&str>) -> Auth {
    match header.and_then(|h| h.strip_prefix("Bearer ")) {
        None => Auth::Missing,
        Some(given) if token.matches(given.trim()) => Auth::Allowed,
        Some(_) => Auth::Wrong,
    }
}

/// A command of the control API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Claim nothing more until resumed.
    Pause,
    /// Go on after a pause.
    Resume,
    /// Stop as Ctrl-C does: in-flight fetches finish within the grace
    /// period, outputs complete, state is saved.
    Stop,
    /// A new cap on concurrent fetches.
    SetMaxTasks(usize),
}

impl Command {
    /// The command of `POST path?query`, or why there is none.
    pub fn parse(path: &str, query: Option<&str>) -> Result<Command, String> {
        match path {
            "/control/pause" => Ok(Command::Pause),
            "/control/resume" => Ok(Command::Resume),
            "/control/stop" => Ok(Command::Stop),
            "/control/set" => {
                let query = query.unwrap_or("");
                let value = query
                    .split('&')
                    .find_map(|kv| kv.strip_prefix("max_tasks="))
                    .ok_or(
                        "set needs max_tasks=N (per-host and delay are not settable live yet)",
                    )?;
                value
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .map(Command::SetMaxTasks)
                    .ok_or_else(|| {
                        format!("max_tasks must be a whole number above 0, not {value:?}")
                    })
            }
            _ => Err(format!("no command at {path}")),
        }
    }

    /// The path (and query) that sends this command.
    pub fn path(&self) -> String {
        match self {
            Command::Pause => "/control/pause".into(),
            Command::Resume => "/control/resume".into(),
            Command::Stop => "/control/stop".into(),
            Command::SetMaxTasks(n) => format!("/control/set?max_tasks={n}"),
        }
    }

    /// Carries the command out.
    pub fn run(&self, steer: &Steer, stop: &CancellationToken) {
        match self {
            Command::Pause => steer.pause(),
            Command::Resume => steer.resume(),
            Command::Stop => stop.cancel(),
            // Zero is refused by `parse`.
            Command::SetMaxTasks(n) => {
                let _ = steer.set_max_tasks(*n);
            }
        }
        tracing::info!(command = ?self, "control command");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_compared_whole() {
        let t = Token::new("0123456789abcdef").unwrap();
        assert!(t.matches("0123456789abcdef"));
        for wrong in [
            "",
            "0123456789abcde",
            "0123456789abcdeF",
            "0123456789abcdef0",
        ] {
            assert!(!t.matches(wrong), "{wrong:?}");
        }
        assert_eq!(check(&t, None), Auth::Missing);
        assert_eq!(check(&t, Some("Basic x")), Auth::Missing);
        assert_eq!(check(&t, Some("Bearer nope")), Auth::Wrong);
        assert_eq!(check(&t, Some("Bearer 0123456789abcdef")), Auth::Allowed);
        assert!(Token::new("short").is_err());
        assert!(Token::new("has a space in it ok").is_err());
        assert_eq!(Token::generate().as_str().len(), 32);
    }

    #[test]
    fn commands_round_trip_through_their_paths() {
        for c in [
            Command::Pause,
            Command::Resume,
            Command::Stop,
            Command::SetMaxTasks(7),
        ] {
            let p = c.path();
            let (path, query) = p
                .split_once('?')
                .map_or((p.as_str(), None), |(a, b)| (a, Some(b)));
            assert_eq!(Command::parse(path, query), Ok(c));
        }
        assert!(Command::parse("/control/set", Some("max_tasks=0")).is_err());
        assert!(Command::parse("/control/set", None).is_err());
        assert!(Command::parse("/control/other", None).is_err());
    }
}
