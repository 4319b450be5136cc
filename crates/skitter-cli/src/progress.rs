//! The live progress line on stderr: URLs done, queued and in flight, the current
//! rate, bytes, errors and elapsed time, redrawn about ten times a second.
//!
//! It reads the crawl's lock-free counters from its own thread (no per-page work,
//! and it draws whether or not a tokio runtime is around), and it is only drawn on
//! a terminal: `enabled` is the caller's `--no-progress`/`-q`, and a stderr that is
//! not a terminal turns it off too.
//!
//! Log lines and the bar share stderr. Rather than silence logging while the bar is
//! up, the logger writes through [`StderrLogs`]: while a line is running, each log
//! event is written inside [`ProgressBar::suspend`], which wipes the bar, prints the
//! event, and redraws the bar below it, so neither corrupts the other.

use std::collections::VecDeque;
use std::io::{self, IsTerminal, Write};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{
    FormattedDuration, HumanBytes, HumanCount, ProgressBar, ProgressDrawTarget, ProgressStyle,
};
use skitter::crawl::progress::{Progress, ProgressSnapshot};

/// How often the line is refreshed.
const TICK: Duration = Duration::from_millis(100);
/// The current rate is measured over this much recent time.
const RATE_WINDOW: Duration = Duration::from_secs(2);

/// The stderr writer for the logger; routes log lines around a running progress line.
///
/// Give a clone to `tracing_subscriber::fmt().with_writer(..)` and the same value to
/// [`ProgressLine::start`].
#[derive(Clone, Debug, Default)]
pub struct StderrLogs {
    bar: Arc<Mutex<Option<ProgressBar>>>,
}

/// One log event's bytes, written to stderr in one piece when dropped.
#[derive(Debug)]
pub struct LogEvent {
    buf: Vec<u8>,
    bar: Option<ProgressBar>,
}

impl StderrLogs {
    fn set(&self, bar: Option<ProgressBar>) -> Option<ProgressBar> {
        std::mem::replace(
            &mut *self.bar.lock().unwrap_or_else(PoisonError::into_inner),
            bar,
        )
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for StderrLogs {
    type Writer = LogEvent;

    fn make_writer(&'a self) -> LogEvent {
        let bar = self
            .bar
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        LogEvent {
            buf: Vec::new(),
            bar,
        }
    }
}

impl Write for LogEvent {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for LogEvent {
    fn drop(&mut self) {
        // A log line that cannot be written has nowhere else to go.
        let emit = || {
            let _ = io::stderr().lock().write_all(&self.buf);
        };
        match &self.bar {
            Some(bar) => bar.suspend(emit),
            None => emit(),
        }
    }
}

/// A running progress line; [`ProgressLine::finish`] (or dropping it) clears it.
#[derive(Debug)]
pub struct ProgressLine {
    running: Option<Running>,
}

#[derive(Debug)]
struct Running {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<()>,
    bar: ProgressBar,
    logs: StderrLogs,
}

impl ProgressLine {
    /// Shows a crawl's progress until finished; does nothing unless `enabled` and
    /// stderr is a terminal.
    pub fn start(progress: Progress, enabled: bool, logs: &StderrLogs) -> ProgressLine {
        ProgressLine::start_with(move || progress.snapshot(), enabled, logs)
    }

    /// Like [`ProgressLine::start`], reading the counters from `source` (for jobs
    /// that count their progress some other way).
    pub fn start_with<F>(source: F, enabled: bool, logs: &StderrLogs) -> ProgressLine
    where
        F: FnMut() -> ProgressSnapshot + Send + 'static,
    {
        if !enabled || !io::stderr().is_terminal() {
            return ProgressLine { running: None };
        }
        ProgressLine::launch(source, ProgressDrawTarget::stderr_with_hz(10), logs)
    }

    fn launch<F>(mut source: F, target: ProgressDrawTarget, logs: &StderrLogs) -> ProgressLine
    where
        F: FnMut() -> ProgressSnapshot + Send + 'static,
    {
        let bar = ProgressBar::with_draw_target(None, target);
        if let Ok(style) = ProgressStyle::with_template("{spinner:.cyan} {wide_msg}") {
            bar.set_style(style);
        }
        logs.set(Some(bar.clone()));
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = {
            let bar = bar.clone();
            std::thread::spawn(move || {
                let mut rate = RateWindow::default();
                loop {
                    let snapshot = source();
                    bar.set_message(line(&snapshot, rate.push(&snapshot)));
                    bar.tick();
                    // A message or a hang-up both mean stop.
                    if stopped.recv_timeout(TICK) != Err(RecvTimeoutError::Timeout) {
                        break;
                    }
                }
            })
        };
        ProgressLine {
            running: Some(Running {
                stop,
                thread,
                bar,
                logs: logs.clone(),
            }),
        }
    }

    /// Stops and clears the line, so the report that follows starts on a clean line.
    pub fn finish(self) {
        drop(self);
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        if let Some(r) = self.running.take() {
            let _ = r.stop.send(());
            let _ = r.thread.join();
            r.logs.set(None);
            r.bar.finish_and_clear();
        }
    }
}

/// Recent (elapsed, done) samples, for a rate that follows the crawl's current pace
/// rather than its average since the start.
#[derive(Debug, Default)]
struct RateWindow {
    samples: VecDeque<(Duration, u64)>,
}

impl RateWindow {
    /// Adds a sample and returns URLs per second over the window.
    fn push(&mut self, s: &ProgressSnapshot) -> f64 {
        self.samples.push_back((s.elapsed, s.done));
        while let Some(&(t, _)) = self.samples.front() {
            if s.elapsed.saturating_sub(t) > RATE_WINDOW {
                self.samples.pop_front();
            } else {
                break;
            }
        }
        let (t0, d0) = self.samples.front().copied().unwrap_or_default();
        let span = s.elapsed.saturating_sub(t0);
        if span < RATE_WINDOW / 4 {
            // Too little history for a steady figure: use the average so far.
            return s.rate();
        }
        s.done.saturating_sub(d0) as f64 / span.as_secs_f64()
    }
}

/// The line's text.
fn line(s: &ProgressSnapshot, rate: f64) -> String {
    let rate = if rate < 10.0 {
        format!("{rate:.1}")
    } else {
        HumanCount(rate.round() as u64).to_string()
    };
    format!(
        "{} done · {} queued · {} in flight · {rate}/s · {} · {} errors · {}",
        HumanCount(s.done),
        HumanCount(s.queued),
        HumanCount(s.in_flight),
        HumanBytes(s.bytes),
        HumanCount(s.errors),
        FormattedDuration(s.elapsed),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(secs_tenths: u64, done: u64) -> ProgressSnapshot {
        ProgressSnapshot {
            done,
            elapsed: Duration::from_millis(secs_tenths * 100),
            ..ProgressSnapshot::default()
        }
    }

    #[test]
    fn line_text() {
        let s = ProgressSnapshot {
            done: 12_345,
            queued: 3_456,
            in_flight: 100,
            in_flight_peak: 120,
            bytes: 47_815_065,
            errors: 12,
            elapsed: Duration::from_secs(83),
        };
        let cases = [(1234.4, "1,234/s"), (12.6, "13/s"), (0.25, "0.2/s")];
        for (rate, shown) in cases {
            assert_eq!(
                line(&s, rate),
                format!(
                    "12,345 done · 3,456 queued · 100 in flight · {shown} · 45.60 MiB · 12 errors · 00:01:23"
                )
            );
        }
    }

    #[test]
    fn rate_follows_the_recent_window() {
        let mut w = RateWindow::default();
        // 100/s for 5 s, then 10/s.
        let mut got = 0.0;
        for tenth in 0..=50 {
            got = w.push(&snap(tenth, tenth * 10));
        }
        assert!((got - 100.0).abs() < 1e-6, "{got}");
        for tenth in 51..=100 {
            got = w.push(&snap(tenth, 500 + (tenth - 50)));
        }
        assert!((got - 10.0).abs() < 1e-6, "{got}");
        assert!(w.samples.len() <= 21);
    }

    #[test]
    fn early_rate_is_the_average() {
        let mut w = RateWindow::default();
        assert_eq!(w.push(&snap(2, 4)), 20.0);
    }

    #[test]
    fn disabled_line_draws_nothing() {
        let logs = StderrLogs::default();
        let line = ProgressLine::start(Progress::default(), false, &logs);
        assert!(line.running.is_none());
        assert!(logs.set(None).is_none());
    }

    #[test]
    fn running_line_polls_and_detaches_from_logs_when_finished() {
        let logs = StderrLogs::default();
        let (polled, was_polled) = mpsc::channel();
        let line = ProgressLine::launch(
            move || {
                let _ = polled.send(());
                ProgressSnapshot::default()
            },
            ProgressDrawTarget::hidden(),
            &logs,
        );
        assert!(line.running.is_some());
        was_polled.recv().unwrap();
        assert!(logs.bar.lock().unwrap().is_some(), "logs go around the bar");
        line.finish();
        assert!(logs.bar.lock().unwrap().is_none());
    }
}
