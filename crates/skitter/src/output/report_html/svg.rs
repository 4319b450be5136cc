//! The report's two chart shapes, drawn as inline SVG on the Rust side so the page
//! needs no script and no library to show them: columns (status codes, response
//! times) and a step-area chart over time (URLs/s). Every label passes through
//! [`esc`]; colours come from CSS classes so the stylesheet owns the palette.

use std::fmt::Write;
use std::time::Duration;

use super::format::{esc, number, rate};
use super::timeaxis::{self, Point};
use super::timeline::Timeline;

/// The time chart spans the page; column charts sit two abreast, so they get a
/// narrower canvas and their text stays legible when scaled down.
const W: f64 = 760.0;
const H: f64 = 240.0;
const COL_W: f64 = 480.0;
const COL_H: f64 = 260.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 18.0;
const BOTTOM: f64 = 34.0;

/// One column of a column chart.
#[derive(Clone, Debug)]
pub struct Column {
    /// Shown under the column.
    pub label: String,
    /// Its height.
    pub value: u64,
    /// CSS class giving its colour.
    pub class: &'static str,
}

/// A column chart with the count above each column and a tooltip on each.
pub fn columns(cols: &[Column], aria: &str) -> String {
    let (w, h) = (COL_W, COL_H);
    let mut out = open(w, h, aria);
    let peak = cols.iter().map(|c| c.value).max().unwrap_or(0) as f64;
    let top = axis_y(&mut out, w, h, peak, "");
    let plot_w = w - LEFT - RIGHT;
    let slot = plot_w / cols.len().max(1) as f64;
    let bar_w = (slot * 0.72).min(48.0);
    let plot_h = h - TOP - BOTTOM;
    for (i, c) in cols.iter().enumerate() {
        // A non-zero column is never thinner than 2 units, so rare codes stay visible
        // next to a million 200s.
        let bar_h = if c.value == 0 {
            0.0
        } else {
            (c.value as f64 / top * plot_h).max(2.0)
        };
        let x = LEFT + slot * i as f64 + (slot - bar_w) / 2.0;
        let y = TOP + plot_h - bar_h;
        let cx = x + bar_w / 2.0;
        let n = number(c.value);
        // Zero columns keep their label but not a "0" floating on the axis.
        let value = if c.value == 0 { "" } else { n.as_str() };
        let _ = write!(
            out,
            r#"<g class="col {class}"><title>{label}: {n}</title><rect x="{x:.1}" y="{y:.1}" width="{bar_w:.1}" height="{bar_h:.1}" rx="2"/><text class="val" x="{cx:.1}" y="{ty:.1}">{value}</text><text class="lab" x="{cx:.1}" y="{ly:.1}">{label}</text></g>"#,
            class = c.class,
            label = esc(&c.label),
            ty = y - 4.0,
            ly = h - BOTTOM + 16.0,
        );
    }
    out.push_str("</svg>");
    out
}

/// URLs finished per second over the crawl (`elapsed` long), with failures and
/// error statuses shaded over the total; x is time, so every point is drawn as wide
/// as the time it covers.
pub fn rate_chart(timeline: &Timeline, elapsed: Duration) -> String {
    let end = timeaxis::span(timeline, elapsed);
    let (step, points) = timeaxis::points(timeline, end);
    let peak = points.iter().map(|p| p.rate(p.done())).fold(0.0, f64::max);
    let mut out = open(W, H, "URLs per second over time");
    let top = axis_y(&mut out, W, H, peak, "/s");
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let x = |t: Duration| LEFT + plot_w * (t.as_secs_f64() / end.as_secs_f64()).min(1.0);
    let y = |v: f64| TOP + plot_h - v / top * plot_h;
    let total: Vec<(&Point, f64)> = points.iter().map(|p| (p, p.rate(p.done()))).collect();
    let errors: Vec<(&Point, f64)> = points.iter().map(|p| (p, p.rate(p.errors))).collect();
    for (series, class) in [(&total, "area"), (&errors, "area err")] {
        let mut edge = String::new();
        for (i, (p, v)) in series.iter().enumerate() {
            let cmd = if i == 0 { 'M' } else { 'L' };
            let (x0, x1, y0) = (x(p.from), x(p.to), y(*v));
            let _ = write!(edge, "{cmd}{x0:.1},{y0:.1}L{x1:.1},{y0:.1}");
        }
        let (right, base) = (x(end), y(0.0));
        let _ = write!(
            out,
            r#"<path class="{class}" d="M{LEFT:.1},{base:.1}{}L{right:.1},{base:.1}Z"/>"#,
            edge.replacen('M', "L", 1)
        );
        if class == "area" {
            // Only the total gets an outline; the errors are a shade inside it.
            let _ = write!(out, r#"<path class="edge" d="{edge}"/>"#);
        }
    }
    axis_time(&mut out, end);
    let seconds = end >= Duration::from_secs(1);
    for p in &points {
        let _ = write!(
            out,
            r#"<rect class="hover" x="{:.1}" y="{TOP}" width="{:.2}" height="{plot_h}"><title>{}–{}: {} URLs/s; {} fetched, {} errors, {} skipped</title></rect>"#,
            x(p.from),
            x(p.to) - x(p.from),
            timeaxis::label(p.from, step, seconds),
            timeaxis::label(p.to, step, seconds),
            rate(p.rate(p.done())),
            number(p.fetched),
            number(p.errors),
            number(p.skipped),
        );
    }
    out.push_str("</svg>");
    out
}

/// The smallest 1-2-5 number ≥ `v`, so the y axis ends on a round value.
pub fn nice_top(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|t| *t >= v)
        .unwrap_or(10.0 * mag)
}

fn open(w: f64, h: f64, aria: &str) -> String {
    format!(
        r#"<svg class="chart" viewBox="0 0 {w} {h}" role="img" aria-label="{}" preserveAspectRatio="xMidYMid meet">"#,
        esc(aria)
    )
}

/// Grid lines at round steps from 0 up to at least `peak`; returns the axis top.
fn axis_y(out: &mut String, w: f64, h: f64, peak: f64, unit: &str) -> f64 {
    let (step, lines) = y_ticks(peak);
    let top = step * lines as f64;
    let plot_h = h - TOP - BOTTOM;
    for i in 0..=lines {
        let v = step * i as f64;
        let y = TOP + plot_h - plot_h * i as f64 / lines as f64;
        let label = if step >= 1.0 {
            number(v.round() as u64)
        } else {
            format!("{v:.2}")
        };
        let _ = write!(
            out,
            r#"<line class="grid" x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/><text class="tick" x="{:.1}" y="{:.1}">{label}{unit}</text>"#,
            w - RIGHT,
            LEFT - 6.0,
            y + 4.0,
        );
    }
    top
}

/// A round step (1-2-5) giving at most four grid intervals above `peak`, and how
/// many intervals are needed to reach it.
pub fn y_ticks(peak: f64) -> (f64, u32) {
    let step = nice_top(peak / 4.0);
    let lines = if peak > 0.0 && peak.is_finite() {
        ((peak / step).ceil() as u32).clamp(1, 4)
    } else {
        1
    };
    (step, lines)
}

/// Labels at round times along the bottom, from 0 to at most `end`; a label near
/// either edge is anchored so it stays inside the chart.
fn axis_time(out: &mut String, end: Duration) {
    let plot_w = W - LEFT - RIGHT;
    for (t, label) in timeaxis::ticks(end) {
        let x = LEFT + plot_w * (t.as_secs_f64() / end.as_secs_f64()).min(1.0);
        // The anchor is a class: CSS would override a presentation attribute.
        let anchor = if t.is_zero() {
            "start"
        } else if x > W - RIGHT - 40.0 {
            "end"
        } else {
            "middle"
        };
        let _ = write!(
            out,
            r#"<line class="grid mark" x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}"/><text class="t {anchor}" x="{x:.1}" y="{:.1}">{label}</text>"#,
            H - BOTTOM,
            H - BOTTOM + 4.0,
            H - BOTTOM + 16.0,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_top_rounds_up_to_1_2_5() {
        let cases = [
            (0.0, 1.0),
            (0.3, 0.5),
            (1.0, 1.0),
            (1.1, 2.0),
            (4.0, 5.0),
            (7.0, 10.0),
            (1234.0, 2000.0),
        ];
        for (v, want) in cases {
            assert!((nice_top(v) - want).abs() < 1e-9, "{v} -> {}", nice_top(v));
        }
    }

    #[test]
    fn y_ticks_are_round_and_cover_the_peak() {
        let cases = [
            (0.0, (1.0, 1)),
            (1.0, (0.5, 2)),
            (500.0, (200.0, 3)),
            (505.0, (200.0, 3)),
            (800.0, (200.0, 4)),
            (801.0, (500.0, 2)),
            (3.0, (1.0, 3)),
        ];
        for (peak, want) in cases {
            assert_eq!(y_ticks(peak), want, "peak {peak}");
        }
    }
}
