//! Text formatting for the HTML report: escaping and human-readable numbers.
//!
//! Everything that came from the network (URLs, error messages, content types) is
//! hostile input, and every string the report writes goes through [`esc`], which
//! is safe in text and in single- or double-quoted attributes alike.

use std::borrow::Cow;
use std::time::Duration;

/// Escapes `&`, `<`, `>`, `"` and `'`.
pub fn esc(s: &str) -> Cow<'_, str> {
    htmlize::escape_all_quotes(s)
}

/// `1234567` → `1,234,567`.
pub fn number(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes in binary units: `512 B`, `1.5 KiB`, `23.4 MiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// A duration at the precision a person wants: `850 ms`, `2.35 s`, `4m 05s`, `3h 07m`.
pub fn duration(d: Duration) -> String {
    let secs = d.as_secs();
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else if secs < 60 {
        format!("{:.2} s", d.as_secs_f64())
    } else if secs < 3600 {
        format!("{}m {:02}s", secs / 60, secs % 60)
    } else {
        format!("{}h {:02}m", secs / 3600, secs % 3600 / 60)
    }
}

/// A rate with sensible precision: `0.25`, `12.5`, `1,234`.
pub fn rate(r: f64) -> String {
    if !r.is_finite() || r <= 0.0 {
        "0".to_string()
    } else if r < 10.0 {
        format!("{r:.2}")
    } else if r < 100.0 {
        format!("{r:.1}")
    } else {
        number(r.round() as u64)
    }
}

/// At most `max` characters of `s`, with an ellipsis when cut.
pub fn clip(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some((end, _)) => Cow::Owned(format!("{}…", &s[..end])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let cases: &[(String, &str)] = &[
            (
                esc(r#"<a href="x" b='y'>&"#).into_owned(),
                "&lt;a href=&quot;x&quot; b=&apos;y&apos;&gt;&amp;",
            ),
            (number(0), "0"),
            (number(999), "999"),
            (number(1000), "1,000"),
            (number(1_234_567), "1,234,567"),
            (bytes(0), "0 B"),
            (bytes(1023), "1023 B"),
            (bytes(1536), "1.5 KiB"),
            (bytes(5 << 30), "5.0 GiB"),
            (bytes(u64::MAX), "16.0 EiB"),
            (duration(Duration::from_millis(850)), "850 ms"),
            (duration(Duration::from_millis(2346)), "2.35 s"),
            (duration(Duration::from_secs(245)), "4m 05s"),
            (
                duration(Duration::from_secs(3 * 3600 + 7 * 60 + 5)),
                "3h 07m",
            ),
            (rate(0.0), "0"),
            (rate(f64::NAN), "0"),
            (rate(0.254), "0.25"),
            (rate(12.54), "12.5"),
            (rate(1234.4), "1,234"),
            (clip("héllo", 3).into_owned(), "hél…"),
            (clip("héllo", 5).into_owned(), "héllo"),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }
}
