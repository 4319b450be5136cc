//! The minimum transfer rate of a response body: a tarpit that sends a byte
//! every few seconds is never silent long enough for the read timeout, so the
//! bytes a body brings are also counted per window and a window that falls
//! short fails the attempt as a timeout.

use crate::base::outcome::{ErrorKind, FetchFailure};

/// The minimum-rate rule of a body ([`FetchConfig::min_transfer_rate`](super::FetchConfig::min_transfer_rate)):
/// bytes are counted per window of `read_timeout`, and a window that closes
/// with fewer than the rate asks for fails the attempt. Windows are judged when
/// a chunk arrives: a body that sends nothing at all is `read_timeout`'s case.
pub(super) struct Pace {
    /// Bytes a window must bring; 0 when the rule is off.
    floor: u64,
    window: std::time::Duration,
    started: tokio::time::Instant,
    bytes: u64,
    rate: u64,
}

impl Pace {
    pub(super) fn new(rate: u64, window: std::time::Duration) -> Pace {
        let floor = if window.is_zero() {
            0
        } else {
            // Whole seconds round up, so a window under a second still asks
            // for something; a huge product saturates (and then always cuts,
            // as such a rate asks).
            rate.saturating_mul(window.as_millis().div_ceil(1000).min(u64::MAX as u128) as u64)
        };
        Pace {
            floor,
            window,
            started: tokio::time::Instant::now(),
            bytes: 0,
            rate,
        }
    }

    /// Counts a chunk; fails the attempt when it closed a window that fell short.
    pub(super) fn arrived(&mut self, len: usize) -> Result<(), FetchFailure> {
        if self.floor == 0 {
            return Ok(());
        }
        self.bytes = self.bytes.saturating_add(len as u64);
        let now = tokio::time::Instant::now();
        if now.duration_since(self.started) < self.window {
            return Ok(());
        }
        if self.bytes < self.floor {
            return Err(FetchFailure {
                kind: ErrorKind::Timeout,
                message: format!(
                    "body too slow: {} bytes in {:.1}s, under the minimum of {} bytes/s (min_transfer_rate)",
                    self.bytes,
                    now.duration_since(self.started).as_secs_f64(),
                    self.rate,
                ),
            });
        }
        self.started = now;
        self.bytes = 0;
        Ok(())
    }
}
