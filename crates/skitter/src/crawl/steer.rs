//! Steering a running crawl from outside: pause, resume, a new global cap on
//! concurrent fetches (`max_tasks`), and new per-host rules (`per_host`,
//! `delay`).
//!
//! A [`Steer`] is a cheap-to-clone handle ([`Crawler::steer`]) whose state the
//! scheduler reads before each claim: while paused it claims nothing, so once
//! the fetches already started have ended no request goes out; a resume
//! claims from where it stood, and since nothing was taken from the frontier
//! meanwhile nothing is lost or fetched twice. The per-host rules are the
//! frontier's [`LivePolicy`], which every host reads at each request. A stop
//! is not here: it is the same cancellation as Ctrl-C, the token given to
//! [`Crawler::run`].
//!
//! [`Crawler::steer`]: crate::Crawler::steer
//! [`Crawler::run`]: crate::Crawler::run

use std::time::Duration;

use tokio::sync::watch;

use crate::host::{HostPolicy, LivePolicy};

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
    /// The frontier's per-host rules; `None` for a frontier that keeps them
    /// fixed.
    politeness: Option<LivePolicy>,
}

/// A new `max_tasks` of 0 was asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("max_tasks must be at least 1 (pause the crawl to hold it)")]
pub struct ZeroTasks;

/// New per-host rules could not be set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PolitenessError {
    /// A `per_host` of 0 was asked for.
    #[error("per_host must be at least 1 (pause the crawl to hold it)")]
    ZeroPerHost,
    /// The crawl's frontier keeps its rules fixed (see
    /// [`Frontier::politeness`](crate::frontier::Frontier::politeness)).
    #[error("this crawl's frontier cannot change its per-host rules while it runs")]
    Fixed,
}

impl Steer {
    /// Running, with `max_tasks` as its cap.
    pub(crate) fn new(max_tasks: usize, politeness: Option<LivePolicy>) -> Steer {
        Steer {
            state: watch::Sender::new(SteerState {
                paused: false,
                max_tasks,
            }),
            politeness,
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

    /// The per-host rules now; `None` when the frontier keeps them fixed.
    pub fn politeness(&self) -> Option<HostPolicy> {
        self.politeness.as_ref().map(LivePolicy::get)
    }

    /// Sets the per-host rules: at most `per_host` requests in flight to one
    /// host, starts at least `delay` apart (`None` keeps a value as it is).
    /// Each host follows them from its next request; a gap it is already
    /// waiting out is kept, a higher `per_host` is reached by a clean answer
    /// at a time, and a lower one cuts no fetch short. A robots.txt
    /// `Crawl-delay` larger than `delay` still holds. Returns the rules now.
    pub fn set_politeness(
        &self,
        per_host: Option<usize>,
        delay: Option<Duration>,
    ) -> Result<HostPolicy, PolitenessError> {
        let live = self.politeness.as_ref().ok_or(PolitenessError::Fixed)?;
        if per_host == Some(0) {
            return Err(PolitenessError::ZeroPerHost);
        }
        let mut policy = live.get();
        policy.max_in_flight = per_host.unwrap_or(policy.max_in_flight);
        policy.delay = delay.unwrap_or(policy.delay);
        live.set(policy);
        Ok(policy)
    }

    /// The frontier's live rules, for the gates outside it (the render path).
    pub(crate) fn live_policy(&self) -> Option<&LivePolicy> {
        self.politeness.as_ref()
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
        let s = Steer::new(8, None);
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

    #[test]
    fn per_host_and_delay_change_the_shared_rules() {
        let fixed = Steer::new(8, None);
        assert_eq!(fixed.politeness(), None);
        assert_eq!(
            fixed.set_politeness(Some(2), None),
            Err(PolitenessError::Fixed)
        );
        let live = LivePolicy::new(HostPolicy::default());
        let s = Steer::new(8, Some(live.clone()));
        assert_eq!(
            s.set_politeness(Some(0), None),
            Err(PolitenessError::ZeroPerHost)
        );
        let delay = Duration::from_millis(250);
        let set = s.set_politeness(Some(2), Some(delay)).unwrap();
        assert_eq!((set.max_in_flight, set.delay), (2, delay));
        // Only what is given changes; the hosts' shared value is the one set.
        s.set_politeness(None, Some(Duration::ZERO)).unwrap();
        assert_eq!(live.get().max_in_flight, 2);
        assert_eq!(live.get().delay, Duration::ZERO);
        assert_eq!(s.politeness(), Some(live.get()));
    }
}
