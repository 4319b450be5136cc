//! Steering a running crawl from outside: pause, resume, and a new global
//! cap on concurrent fetches (`max_tasks`).
//!
//! A [`Steer`] is a cheap-to-clone handle ([`Crawler::steer`]) whose state the
//! scheduler reads before each claim: while paused it claims nothing, so once
//! the fetches already started have ended no request goes out; a resume
//! claims from where it stood, and since nothing was taken from the frontier
//! meanwhile nothing is lost or fetched twice. A stop is not here: it is the
//! same cancellation as Ctrl-C, the token given to [`Crawler::run`].
//!
//! [`Crawler::steer`]: crate::Crawler::steer
//! [`Crawler::run`]: crate::Crawler::run

use tokio::sync::watch;

/// What the crawl is told to do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SteerState {
    /// No new URL is claimed while set.
    pub paused: bool,
    /// The global cap on concurrent fetches.
    pub max_tasks: usize,
}

/// A handle that pauses, resumes and re-caps one crawl.
#[derive(Clone, Debug)]
pub struct Steer {
    state: watch::Sender<SteerState>,
}

/// A new `max_tasks` of 0 was asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("max_tasks must be at least 1 (pause the crawl to hold it)")]
pub struct ZeroTasks;

impl Steer {
    /// Running, with `max_tasks` as its cap.
    pub(crate) fn new(max_tasks: usize) -> Steer {
        Steer {
            state: watch::Sender::new(SteerState {
                paused: false,
                max_tasks,
            }),
        }
    }

    /// The state now.
    pub fn state(&self) -> SteerState {
        *self.state.borrow()
    }

    /// Holds the crawl: no URL is claimed until [`Steer::resume`]. Fetches
    /// already started run to their end (see `Live::snapshot`'s `in_flight`).
    pub fn pause(&self) {
        self.state.send_modify(|s| s.paused = true);
    }

    /// Lets a paused crawl go on.
    pub fn resume(&self) {
        self.state.send_modify(|s| s.paused = false);
    }

    /// Sets the global cap on concurrent fetches. A lower cap takes effect as
    /// fetches over it end; none is cut short.
    pub fn set_max_tasks(&self, max_tasks: usize) -> Result<(), ZeroTasks> {
        if max_tasks == 0 {
            return Err(ZeroTasks);
        }
        self.state.send_modify(|s| s.max_tasks = max_tasks);
        Ok(())
    }

    /// A receiver that sees every change (the scheduler's).
    pub(crate) fn watch(&self) -> watch::Receiver<SteerState> {
        self.state.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_resume_and_cap() {
        let s = Steer::new(8);
        let mut rx = s.watch();
        s.pause();
        assert!(rx.has_changed().unwrap());
        assert!(rx.borrow_and_update().paused);
        s.resume();
        assert_eq!(s.set_max_tasks(0), Err(ZeroTasks));
        s.set_max_tasks(3).unwrap();
        assert_eq!(
            *rx.borrow_and_update(),
            SteerState {
                paused: false,
                max_tasks: 3
            }
        );
    }
}
