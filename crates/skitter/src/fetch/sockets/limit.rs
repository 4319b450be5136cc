//! How many connections the open-file limit leaves room for, and the
//! connection cap a crawl with a given number of requests in flight gets.
//!
//! Every connection is an open file, so a crawl asked for more requests in
//! flight than the process may open files would quietly run with fewer: at
//! 30,000 tasks and a limit of 20,000 a bench crawl ran at 1.87× its ideal
//! time with 10,000 requests in flight, and said nothing. Here that is an
//! error, found before anything runs, which gives the limit, the hard limit
//! and what to change. The caller raises the soft limit first (the CLI raises
//! it to the hard limit at start, as servers do); raising the hard limit
//! takes privileges a crawler should not have (`ulimit -Hn` as root,
//! `LimitNOFILE=` in a systemd unit, `nofile` in `/etc/security/limits.conf`).
//!
//! Requests in flight need a connection each only over HTTP/1.1: HTTP/2 runs
//! many on one. A user who knows their sites speak HTTP/2 sets the
//! connection cap themselves, and then more requests than connections is
//! their choice, not an error.

/// Files kept out of the connections' room for everything else a crawl
/// opens: its output files, the crawl store, name lookups (64 at once by
/// default), Chromium's pipes, the watch server's clients, Redis. At a limit
/// under twice this, half the limit is kept instead.
pub const FILES_RESERVED: u64 = 512;

/// The default connection cap before it grows to the requests in flight:
/// half the open-file limit, at most this.
const DEFAULT_CEILING: u64 = 16_384;

/// The open-file limit of a process (`RLIMIT_NOFILE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenFileLimit {
    /// The limit in force.
    pub soft: u64,
    /// How far the process may raise it without privileges.
    pub hard: u64,
}

impl OpenFileLimit {
    /// This process's limit; 1,024 (the usual default) when it cannot be read.
    pub fn current() -> OpenFileLimit {
        match rlimit::Resource::NOFILE.get() {
            Ok((soft, hard)) => OpenFileLimit { soft, hard },
            Err(_) => OpenFileLimit {
                soft: 1024,
                hard: 1024,
            },
        }
    }

    /// Connections this limit leaves room for: the limit less
    /// [`FILES_RESERVED`] (less half of it, when that is more), at least 16.
    pub fn connection_room(self) -> usize {
        let reserved = FILES_RESERVED.min(self.soft / 2);
        usize::try_from(self.soft - reserved)
            .unwrap_or(usize::MAX)
            .max(16)
    }

    /// The connection cap used when none is given, for a crawl of at most
    /// `in_flight` requests at once: half the limit (at most 16,384, at least
    /// 16), or `in_flight` when that is more, within [`Self::connection_room`].
    /// Half, because idle connections kept for reuse count too, and because
    /// a bench's test site (another process) is usually under the same limit.
    pub fn default_cap(self, in_flight: usize) -> usize {
        let half = usize::try_from((self.soft / 2).min(DEFAULT_CEILING)).unwrap_or(usize::MAX);
        half.max(in_flight).clamp(16, self.connection_room())
    }

    /// The connection cap for a crawl of at most `in_flight` requests at
    /// once that asked for `explicit` connections (`None`: the default).
    /// Fails when the connections asked for do not fit in the limit, or when
    /// none were asked for and `in_flight` requests would need more than fit
    /// (see the module docs).
    pub fn connection_cap(
        self,
        explicit: Option<usize>,
        in_flight: usize,
    ) -> Result<usize, OpenFilesError> {
        let room = self.connection_room();
        match explicit {
            Some(wanted) if wanted > room => Err(OpenFilesError {
                wanted,
                what: Wanted::Connections,
                room,
                limit: self,
            }),
            Some(wanted) => Ok(wanted),
            None if in_flight > room => Err(OpenFilesError {
                wanted: in_flight,
                what: Wanted::InFlight,
                room,
                limit: self,
            }),
            None => Ok(self.default_cap(in_flight)),
        }
    }
}

/// What asked for more connections than the open-file limit allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    /// The connection cap itself (`max_connections`).
    Connections,
    /// The requests in flight (`max_tasks`, a bulk fetch's concurrency), with
    /// no connection cap given.
    InFlight,
}

/// More connections were asked for than the open-file limit leaves room for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct OpenFilesError {
    /// How many were asked for.
    pub wanted: usize,
    /// By which setting.
    pub what: Wanted,
    /// How many fit.
    pub room: usize,
    /// The limit they are measured against.
    pub limit: OpenFileLimit,
}

impl OpenFilesError {
    fn describe(&self) -> String {
        let OpenFileLimit { soft, hard } = self.limit;
        let (wanted, room) = (self.wanted, self.room);
        let kept = soft.saturating_sub(room as u64);
        let kept = format!("({kept} files are kept for outputs, stores and name lookups)");
        let (ask, lower) = match self.what {
            Wanted::Connections => (
                format!(
                    "max_connections (--max-connections) {wanted} cannot be held open: the open-file limit of {soft} leaves room for {room} connections {kept}"
                ),
                format!("lower max_connections to {room} or less"),
            ),
            Wanted::InFlight => (
                format!(
                    "{wanted} requests in flight need up to {wanted} connections (one each over HTTP/1.1), but the open-file limit of {soft} leaves room for {room} {kept}"
                ),
                format!(
                    "lower max_tasks (--max-tasks, a fetch's --concurrency) to {room} or less, or set max_connections (at most {room}) to run more requests than connections, as HTTP/2 sites allow"
                ),
            ),
        };
        let raise = if soft < hard {
            format!("Raise the limit (ulimit -n {hard}: the hard limit allows it)")
        } else {
            "Only a privileged user can raise it, as it is the hard limit (ulimit -Hn as root, LimitNOFILE= in a systemd unit, nofile in /etc/security/limits.conf)".to_string()
        };
        format!("{ask}. {raise}. Or {lower}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(soft: u64, hard: u64) -> OpenFileLimit {
        OpenFileLimit { soft, hard }
    }

    #[test]
    fn the_room_is_the_limit_less_the_reserve() {
        assert_eq!(limit(20_000, 20_000).connection_room(), 19_488);
        assert_eq!(limit(1_048_576, 1_048_576).connection_room(), 1_048_064);
        // Small limits keep half.
        assert_eq!(limit(1_000, 1_000).connection_room(), 500);
        assert_eq!(limit(20, 20).connection_room(), 16);
    }

    #[test]
    fn the_default_is_half_the_limit_grown_to_the_requests_in_flight() {
        let l = limit(20_000, 20_000);
        assert_eq!(l.default_cap(100), 10_000);
        assert_eq!(l.default_cap(15_000), 15_000);
        assert_eq!(l.default_cap(19_488), 19_488);
        assert_eq!(limit(1_048_576, 1_048_576).default_cap(100), 16_384);
        assert_eq!(limit(1_048_576, 1_048_576).default_cap(100_000), 100_000);
        assert_eq!(limit(64, 64).default_cap(1), 32);
    }

    #[test]
    fn asking_for_more_than_fits_is_an_error_that_says_what_to_do() {
        let l = limit(20_000, 20_000);
        let e = l.connection_cap(None, 100_000).unwrap_err();
        assert_eq!(
            (e.wanted, e.what, e.room),
            (100_000, Wanted::InFlight, 19_488)
        );
        let text = e.to_string();
        assert!(text.contains("100000 requests in flight"), "{text}");
        assert!(text.contains("hard limit"), "{text}");
        assert!(text.contains("to 19488 or less"), "{text}");
        assert!(text.contains("512 files are kept"), "{text}");
        let e = l.connection_cap(Some(20_000), 100).unwrap_err();
        assert_eq!(e.what, Wanted::Connections);
        assert!(e.to_string().contains("--max-connections) 20000"), "{e}");
        // A soft limit under the hard one: say which to raise.
        let e = limit(1024, 524_288)
            .connection_cap(None, 5_000)
            .unwrap_err();
        assert!(e.to_string().contains("ulimit -n 524288"), "{e}");
    }

    #[test]
    fn connections_given_may_be_fewer_than_the_requests_in_flight() {
        let l = limit(20_000, 20_000);
        assert_eq!(l.connection_cap(Some(1_000), 100_000), Ok(1_000));
        assert_eq!(l.connection_cap(None, 19_488), Ok(19_488));
        assert_eq!(l.connection_cap(None, 100), Ok(10_000));
    }
}
