//! Value parsers shared by the subcommands: durations, byte sizes and headers.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

/// The longest duration a flag takes: a year. Longer ones are surely typos, and
/// a deadline far enough out overflows the clock (`--timeout 1e20` panicked).
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// Most concurrent tasks a count flag (`--max-tasks`, `--per-host`) takes.
pub const MAX_COUNT: usize = 1_000_000;

/// Parses `30s`, `500ms`, `2m`, `1h 30m`, or a bare number of seconds (`1.5`),
/// up to [`MAX_DURATION`].
pub fn duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let d = if let Ok(secs) = s.parse::<f64>() {
        if !(secs.is_finite() && secs >= 0.0) {
            return Err(format!("{s:?} is not a non-negative number of seconds"));
        }
        Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
    } else {
        humantime::parse_duration(s)
            .map_err(|e| format!("{s:?} is not a duration like 30s or 500ms: {e}"))?
    };
    if d > MAX_DURATION {
        return Err(format!("{s:?} is longer than the limit of 365 days"));
    }
    Ok(d)
}

/// Parses a concurrency count: 1 to [`MAX_COUNT`].
pub fn count(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a whole number"))?;
    if n == 0 {
        return Err(format!("{s:?}: must be at least 1"));
    }
    if n > MAX_COUNT {
        return Err(format!("{s:?}: must be at most {MAX_COUNT}"));
    }
    Ok(n)
}

/// Parses `1048576`, `512K`, `10M`, `10MiB`, `1G` (K/M/G are powers of 1024).
pub fn size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a size like 10M or 512K"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("{s:?}: unknown size unit {unit:?} (use K, M or G)")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// Splits `--header 'Name: value'` flags into trimmed (name, value) pairs.
pub fn headers(raw: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    raw.iter()
        .map(|h| {
            let (name, value) = h
                .split_once(':')
                // The text may be a secret typed without its name: never echo it.
                .context("invalid --header: expected 'Name: value' (no ':' found)")?;
            Ok((name.trim().to_string(), value.trim().to_string()))
        })
        .collect()
}

/// Parses `--resolve HOST:PORT:ADDR` (curl's form; ADDR may be an IPv6 address,
/// bracketed or not): `(host, addr)`.
pub fn resolve_rule(rule: &str) -> anyhow::Result<(String, std::net::IpAddr)> {
    let bad = || anyhow::anyhow!("invalid --resolve {rule:?}: expected HOST:PORT:ADDR");
    let (host, rest) = rule.split_once(':').ok_or_else(bad)?;
    let (port, addr) = rest.split_once(':').ok_or_else(bad)?;
    if host.is_empty() || (port != "*" && port.parse::<u16>().is_err()) {
        return Err(bad());
    }
    let addr = addr.trim_start_matches('[').trim_end_matches(']');
    let addr = addr.parse().map_err(|_| bad())?;
    Ok((host.to_ascii_lowercase(), addr))
}

/// Parses `--dns-server IP[:PORT]` (`[v6]:PORT` for IPv6 with a port).
pub fn dns_server(s: &str) -> anyhow::Result<std::net::SocketAddr> {
    if let Ok(addr) = s.parse::<std::net::SocketAddr>() {
        return Ok(addr);
    }
    let ip: std::net::IpAddr = s
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .map_err(|_| anyhow::anyhow!("invalid --dns-server {s:?}: expected IP or IP:PORT"))?;
    Ok(std::net::SocketAddr::new(ip, 53))
}

/// Inserts `-ID` before the first dot of the file name (a leading dot is part
/// of the name): `crawl.warc.gz` → `crawl-ID.warc.gz`, `out` → `out-ID`.
pub(crate) fn with_worker_id(path: &Path, id: &str) -> PathBuf {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        let mut raw = path.as_os_str().to_owned();
        raw.push(format!("-{id}"));
        return PathBuf::from(raw);
    };
    let cut = name
        .char_indices()
        .skip(1)
        .find(|(_, c)| *c == '.')
        .map_or(name.len(), |(i, _)| i);
    path.with_file_name(format!("{}-{id}{}", &name[..cut], &name[cut..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(duration("1.5").unwrap(), Duration::from_millis(1500));
        assert!(duration("-1").is_err());
        assert!(duration("soon").is_err());
        for huge in [
            "1e20",
            "1e300",
            "366days",
            "99999999999999999999y",
            "31536001",
        ] {
            assert!(duration(huge).is_err(), "{huge}");
        }
        assert_eq!(duration("365days").unwrap(), MAX_DURATION);
    }

    #[test]
    fn counts() {
        assert_eq!(count("100").unwrap(), 100);
        for bad in ["0", "-1", "18446744073709551615", "1000001", "x"] {
            assert!(count(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(size("100").unwrap(), 100);
        assert_eq!(size("512K").unwrap(), 512 * 1024);
        assert_eq!(size("10MiB").unwrap(), 10 << 20);
        assert_eq!(size("1g").unwrap(), 1 << 30);
        assert!(size("10X").is_err());
        assert!(size("").is_err());
        assert!(size("99999999999999999999G").is_err());
    }

    #[test]
    fn resolve_rules_and_dns_servers() {
        let v4: std::net::IpAddr = "127.0.0.2".parse().unwrap();
        assert_eq!(
            resolve_rule("A.test:80:127.0.0.2").unwrap(),
            ("a.test".into(), v4)
        );
        assert_eq!(resolve_rule("a.test:*:127.0.0.2").unwrap().1, v4);
        let v6: std::net::IpAddr = "::1".parse().unwrap();
        assert_eq!(resolve_rule("a.test:443:[::1]").unwrap().1, v6);
        assert_eq!(resolve_rule("a.test:443:::1").unwrap().1, v6);
        for bad in [
            "a.test",
            "a.test:80",
            ":80:1.2.3.4",
            "a.test:x:1.2.3.4",
            "a:80:nope",
        ] {
            assert!(resolve_rule(bad).is_err(), "{bad}");
        }
        assert_eq!(dns_server("10.0.0.1").unwrap().to_string(), "10.0.0.1:53");
        assert_eq!(dns_server("127.0.0.1:5353").unwrap().port(), 5353);
        assert_eq!(dns_server("[::1]:54").unwrap().port(), 54);
        assert_eq!(dns_server("::1").unwrap().port(), 53);
        assert!(dns_server("dns.example").is_err());
    }
}
