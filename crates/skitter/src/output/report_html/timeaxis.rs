//! What the report's time chart plots, for a crawl of any length (a fraction of a
//! second to days): the points, each a stretch of time with its counts and an
//! honest rate, and the round times the axis is labelled at.
//!
//! Rates are counts divided by the time a point really covers: the last point
//! ends when the crawl ended, not at the end of its bucket, so a 0.23 s crawl of
//! 1,170 URLs reads 5,000 URLs/s (the card's figure), not 1,170 over a whole
//! second. A last point shorter than half a step is folded into the one before,
//! so a crawl that ends just after a step boundary shows no spike.

use std::time::Duration;

use super::timeline::Timeline;

/// Points drawn at most; longer timelines are summed into this many.
pub const MAX_POINTS: usize = 150;

/// URLs a point holds on average at least, so that a point's rate is not mostly
/// counting noise (a few URLs more or less in a 2 ms bucket would read as a spike).
const MIN_PER_POINT: u64 = 20;

/// Axis intervals at most, so labels never crowd.
const MAX_INTERVALS: u32 = 5;

/// The shortest span a chart covers, so a crawl that took no measurable time
/// still divides by something.
const MIN_SPAN: Duration = Duration::from_millis(1);

/// One stretch of the crawl: `[from, to)` and what finished in it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Start, since the crawl began.
    pub from: Duration,
    /// End; the last point ends when the crawl ended.
    pub to: Duration,
    /// URLs fetched (any response or failure).
    pub fetched: u64,
    /// Of those, failures and error statuses.
    pub errors: u64,
    /// URLs finished without fetching.
    pub skipped: u64,
}

impl Point {
    /// URLs finished: fetched or skipped, as the report's `done` counts them.
    pub fn done(&self) -> u64 {
        self.fetched + self.skipped
    }

    /// `n` per second of this point's span.
    pub fn rate(&self, n: u64) -> f64 {
        n as f64
            / self
                .to
                .saturating_sub(self.from)
                .max(MIN_SPAN)
                .as_secs_f64()
    }
}

/// The span the chart covers: the crawl's wall time, or longer if the timeline saw
/// a record after it (its clock starts a little before the crawl's).
pub fn span(timeline: &Timeline, elapsed: Duration) -> Duration {
    elapsed.max(timeline.last()).max(MIN_SPAN)
}

/// The timeline's buckets summed into at most [`MAX_POINTS`] points covering
/// `[0, end)`, `end` from [`span`], with [`MIN_PER_POINT`] URLs a point on
/// average; returns the step (the points' width) too.
pub fn points(timeline: &Timeline, end: Duration) -> (Duration, Vec<Point>) {
    let buckets = timeline.buckets();
    let width = timeline.bucket_width();
    let slots = (end.as_nanos().div_ceil(width.as_nanos().max(1)) as usize)
        .max(buckets.len())
        .max(1);
    let total = timeline.total();
    let wanted = usize::try_from((total.fetched + total.skipped) / MIN_PER_POINT)
        .unwrap_or(MAX_POINTS)
        .clamp(1, MAX_POINTS);
    let per_point = slots.div_ceil(wanted);
    let step = width.saturating_mul(u32::try_from(per_point).unwrap_or(u32::MAX));
    let mut out: Vec<Point> = Vec::with_capacity(slots.div_ceil(per_point));
    for k in 0..slots.div_ceil(per_point) {
        let from = step.saturating_mul(k as u32);
        let mut p = Point {
            from,
            to: (from + step).min(end),
            fetched: 0,
            errors: 0,
            skipped: 0,
        };
        let first = (k * per_point).min(buckets.len());
        let last = ((k + 1) * per_point).min(buckets.len());
        for b in &buckets[first..last] {
            p.fetched += b.fetched;
            p.errors += b.errors;
            p.skipped += b.skipped;
        }
        out.push(p);
    }
    let short = |p: &Point| p.to.saturating_sub(p.from) < step / 2;
    if out.len() >= 2 && out.last().is_some_and(short) {
        let tail = out.pop();
        if let (Some(tail), Some(prev)) = (tail, out.last_mut()) {
            prev.to = tail.to.max(prev.to);
            prev.fetched += tail.fetched;
            prev.errors += tail.errors;
            prev.skipped += tail.skipped;
        }
    }
    (step, out)
}

/// Round steps for the time axis, in milliseconds: 1-2-5 below a second, then
/// the clock's own divisions.
const STEPS_MS: [u64; 28] = [
    1,
    2,
    5,
    10,
    20,
    50,
    100,
    200,
    500,
    1_000,
    2_000,
    5_000,
    10_000,
    15_000,
    30_000,
    60_000,
    120_000,
    300_000,
    600_000,
    900_000,
    1_800_000,
    3_600_000,
    7_200_000,
    10_800_000,
    21_600_000,
    43_200_000,
    86_400_000,
    172_800_000,
];

/// The axis step for a chart spanning `end`: the smallest round step giving at
/// most five intervals; beyond the table, whole multiples of a week.
pub fn tick_step(end: Duration) -> Duration {
    let fits = |ms: u64| end.as_millis() <= u128::from(ms) * u128::from(MAX_INTERVALS);
    let ms = STEPS_MS
        .into_iter()
        .find(|ms| fits(*ms))
        .unwrap_or_else(|| {
            let week = 7 * 86_400_000u64;
            let weeks = (end.as_millis() / u128::from(week * u64::from(MAX_INTERVALS))) as u64 + 1;
            week * weeks
        });
    Duration::from_millis(ms)
}

/// Tick times from 0 to `end` every [`tick_step`], each with its label.
pub fn ticks(end: Duration) -> Vec<(Duration, String)> {
    let step = tick_step(end);
    let times: Vec<Duration> = (0..=MAX_INTERVALS)
        .map(|i| step * i)
        .take_while(|t| *t <= end)
        .collect();
    // Below a second a step needs decimals; one unit for all labels of an axis.
    let seconds = times.last().is_some_and(|t| *t >= Duration::from_secs(1));
    times
        .into_iter()
        .map(|t| (t, label(t, step, seconds)))
        .collect()
}

/// A time on the axis or in a tooltip, to the precision `step` needs:
/// `0`, `150 ms`, `1.5 s`, `45s`, `1m 30s`, `2h`, `1d 12h`.
pub fn label(t: Duration, step: Duration, seconds: bool) -> String {
    if t.is_zero() {
        return "0".to_string();
    }
    if step < Duration::from_secs(1) {
        if !seconds {
            return format!("{} ms", t.as_millis());
        }
        let decimals = if step.as_millis().is_multiple_of(100) {
            1
        } else if step.as_millis().is_multiple_of(10) {
            2
        } else {
            3
        };
        return format!("{:.*} s", decimals, t.as_secs_f64());
    }
    let s = t.as_secs();
    let (big, small, units) = match s {
        0..60 => return format!("{s}s"),
        60..3600 => (s / 60, s % 60, ("m", "s")),
        3600..86_400 => (s / 3600, s % 3600 / 60, ("h", "m")),
        _ => (s / 86_400, s % 86_400 / 3600, ("d", "h")),
    };
    if small == 0 {
        format!("{big}{}", units.0)
    } else {
        format!("{big}{} {small}{}", units.0, units.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::outcome::{OutcomeKind, PageRecord};

    /// `n` URLs finishing evenly over `secs`, in a timeline of `elapsed`.
    fn even(n: u64, secs: f64) -> Timeline {
        let mut t = Timeline::new();
        let mut r = PageRecord::new(url::Url::parse("http://h/").unwrap(), 0, None);
        r.kind = OutcomeKind::Html;
        for i in 0..n {
            t.add(Duration::from_secs_f64(secs * i as f64 / n as f64), &r);
        }
        t
    }

    fn labels(end: Duration) -> Vec<String> {
        ticks(end).into_iter().map(|(_, l)| l).collect()
    }

    #[test]
    fn axis_labels_are_round_at_any_length() {
        let ms = Duration::from_millis;
        let s = Duration::from_secs;
        let cases: [(Duration, &[&str]); 10] = [
            (ms(1), &["0", "1 ms"]),
            (ms(233), &["0", "50 ms", "100 ms", "150 ms", "200 ms"]),
            (ms(2300), &["0", "0.5 s", "1.0 s", "1.5 s", "2.0 s"]),
            (s(45), &["0", "10s", "20s", "30s", "40s"]),
            (s(90), &["0", "30s", "1m", "1m 30s"]),
            (s(180), &["0", "1m", "2m", "3m"]),
            (s(9000), &["0", "30m", "1h", "1h 30m", "2h", "2h 30m"]),
            (s(3 * 86_400 + 600), &["0", "1d", "2d", "3d"]),
            (s(86_400 + 7200), &["0", "6h", "12h", "18h", "1d"]),
            (s(100 * 86_400), &["0", "21d", "42d", "63d", "84d"]),
        ];
        for (end, want) in cases {
            assert_eq!(labels(end), want, "{end:?}");
        }
    }

    #[test]
    fn a_sub_second_crawl_reads_its_true_rate() {
        // The report this came from: 1,170 URLs in 0.2332 s, 5,017 URLs/s on its card.
        let elapsed = Duration::from_micros(233_200);
        let t = even(1170, 0.2331);
        let end = span(&t, elapsed);
        assert_eq!(end, elapsed);
        let (_, points) = points(&t, end);
        assert_eq!(points.last().map(|p| p.to), Some(elapsed));
        let done: u64 = points.iter().map(Point::done).sum();
        assert_eq!(done, 1170);
        // Time-weighted, the points average to the card's figure.
        let mean = points
            .iter()
            .map(|p| p.rate(p.done()) * (p.to - p.from).as_secs_f64())
            .sum::<f64>()
            / elapsed.as_secs_f64();
        assert!((mean - 1170.0 / 0.2332).abs() < 1.0, "{mean}");
        let peak = points.iter().map(|p| p.rate(p.done())).fold(0.0, f64::max);
        assert!(peak > 4000.0, "peak {peak}");
    }

    #[test]
    fn a_steady_crawl_has_no_spike_or_dip_at_its_end() {
        // 1,000 URLs/s for 10.01 s: the last 10 ms must not stand as a point of its own.
        let t = even(10_010, 10.01);
        let (step, points) = points(&t, span(&t, Duration::from_millis(10_010)));
        assert!(points.len() <= MAX_POINTS);
        assert!(step >= Duration::from_millis(64), "{step:?}");
        for p in &points {
            let r = p.rate(p.done());
            assert!((r - 1000.0).abs() < 1000.0 * 0.05, "{p:?}: {r}");
        }
    }

    #[test]
    fn a_day_long_crawl_is_capped_and_keeps_its_totals() {
        let t = even(20_000, 86_400.0);
        let end = span(&t, Duration::from_secs(86_400));
        let (step, drawn) = points(&t, end);
        assert!(drawn.len() <= MAX_POINTS);
        assert!(step >= Duration::from_secs(86_400) / MAX_POINTS as u32);
        assert_eq!(drawn.iter().map(Point::done).sum::<u64>(), 20_000);
        assert_eq!(drawn.last().map(|p| p.to), Some(end));
        // The quiet time after the last URL is part of the chart, at rate 0.
        let idle = points(&t, Duration::from_secs(2 * 86_400)).1;
        assert!(idle.last().is_some_and(|p| p.done() == 0));
    }
}
