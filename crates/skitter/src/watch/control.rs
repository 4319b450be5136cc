//! The control API's commands and the token that guards them.
//!
//! Reading (metrics, status, the dashboard) needs nothing; every command
//! (`POST /control/…`) needs `Authorization: Bearer TOKEN`. A missing token is
//! refused with 401, a wrong one with 403. The token is compared in constant
//! time, so the time of a refusal tells nothing of how much of it was right.
//! A browser page of another origin cannot send the header without a CORS
//! preflight, which the server never grants.

use std::fmt;
use std::time::Duration;

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
    /// New settings; each one not given stays as it is.
    Set(Settings),
}

/// The settings `POST /control/set` changes, each optional (at least one
/// given): `?max_tasks=N&per_host=N&delay_ms=N`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// The cap on concurrent fetches (at least 1).
    pub max_tasks: Option<usize>,
    /// The cap on concurrent fetches to one host (at least 1).
    pub per_host: Option<usize>,
    /// The least gap between request starts to one host, in whole
    /// milliseconds on the wire.
    pub delay: Option<Duration>,
}

impl Settings {
    /// Reads a query string; names other than these three are refused, so a
    /// misspelt one is not silently ignored.
    fn parse(query: &str) -> Result<Settings, String> {
        let mut set = Settings::default();
        for kv in query.split('&').filter(|kv| !kv.is_empty()) {
            let (name, value) = kv.split_once('=').unwrap_or((kv, ""));
            let number = || {
                value
                    .parse::<u64>()
                    .map_err(|_| format!("{name} must be a whole number, not {value:?}"))
            };
            let count = || match number()? {
                0 => Err(format!(
                    "{name} must be at least 1 (pause the crawl to hold it)"
                )),
                n => usize::try_from(n).map_err(|_| format!("{name} is too large")),
            };
            match name {
                "max_tasks" => set.max_tasks = Some(count()?),
                "per_host" => set.per_host = Some(count()?),
                "delay_ms" => set.delay = Some(Duration::from_millis(number()?)),
                _ => {
                    return Err(format!(
                        "set takes max_tasks, per_host and delay_ms, not {name:?}"
                    ));
                }
            }
        }
        if set == Settings::default() {
            return Err("set needs at least one of max_tasks=N, per_host=N, delay_ms=N".into());
        }
        Ok(set)
    }

    fn query(&self) -> String {
        let mut parts = Vec::new();
        if let Some(n) = self.max_tasks {
            parts.push(format!("max_tasks={n}"));
        }
        if let Some(n) = self.per_host {
            parts.push(format!("per_host={n}"));
        }
        if let Some(d) = self.delay {
            parts.push(format!("delay_ms={}", d.as_millis()));
        }
        parts.join("&")
    }
}

impl Command {
    /// The command of `POST path?query`, or why there is none.
    pub fn parse(path: &str, query: Option<&str>) -> Result<Command, String> {
        match path {
            "/control/pause" => Ok(Command::Pause),
            "/control/resume" => Ok(Command::Resume),
            "/control/stop" => Ok(Command::Stop),
            "/control/set" => Settings::parse(query.unwrap_or("")).map(Command::Set),
            _ => Err(format!("no command at {path}")),
        }
    }

    /// The path (and query) that sends this command.
    pub fn path(&self) -> String {
        match self {
            Command::Pause => "/control/pause".into(),
            Command::Resume => "/control/resume".into(),
            Command::Stop => "/control/stop".into(),
            Command::Set(set) => format!("/control/set?{}", set.query()),
        }
    }

    /// Carries the command out, or says why it cannot (a frontier whose
    /// per-host rules are fixed); a refused `set` changes nothing.
    pub fn run(&self, steer: &Steer, stop: &CancellationToken) -> Result<(), String> {
        match self {
            Command::Pause => steer.pause(),
            Command::Resume => steer.resume(),
            Command::Stop => stop.cancel(),
            Command::Set(set) => {
                if set.per_host.is_some() || set.delay.is_some() {
                    steer
                        .set_politeness(set.per_host, set.delay)
                        .map_err(|e| e.to_string())?;
                }
                if let Some(n) = set.max_tasks {
                    steer.set_max_tasks(n).map_err(|e| e.to_string())?;
                }
            }
        }
        tracing::info!(command = ?self, "control command");
        Ok(())
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
            Command::Set(Settings {
                max_tasks: Some(7),
                ..Settings::default()
            }),
            Command::Set(Settings {
                max_tasks: None,
                per_host: Some(2),
                delay: Some(Duration::from_millis(250)),
            }),
        ] {
            let p = c.path();
            let (path, query) = p
                .split_once('?')
                .map_or((p.as_str(), None), |(a, b)| (a, Some(b)));
            assert_eq!(Command::parse(path, query), Ok(c));
        }
        for bad in [
            "max_tasks=0",
            "per_host=0",
            "delay_ms=-1",
            "delay=1s",
            "per_host=x",
        ] {
            assert!(Command::parse("/control/set", Some(bad)).is_err(), "{bad}");
        }
        assert!(Command::parse("/control/set", None).is_err());
        assert!(Command::parse("/control/other", None).is_err());
    }
}
