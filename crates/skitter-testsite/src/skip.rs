//! How a test says that one of its checks could not run because an outside program
//! (a WARC validator, `redis-server`, `chromium`) is missing.
//!
//! The notice goes to stderr, which the test harness shows only for failing tests,
//! so a passing run would hide it. Each notice is therefore also appended to the
//! file named by `$SKITTER_SKIPPED`, which `scripts/test.sh` sets and prints at the
//! end of the run, where a person reads it. Under CI (`$CI` set) nothing may be
//! skipped: the test fails instead.

use std::io::Write;

/// Says loudly that `check` of `test` cannot run because of `why` (which should
/// name the fix), records it for the run's summary, and panics when `$CI` is set.
pub fn cannot_run(test: &str, check: &str, why: &str) {
    let line = format!("{test}: {check} not run: {why}");
    if std::env::var_os("CI").is_some() {
        panic!("{line} (CI must run every check)");
    }
    eprintln!("\n*** SKIPPED {line} ***\n");
    if let Some(path) = std::env::var_os("SKITTER_SKIPPED") {
        // One write per line in append mode, so concurrent test processes do not
        // interleave within a line.
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
        if let Err(e) = written {
            eprintln!("cannot record the skip in {}: {e}", path.to_string_lossy());
        }
    }
}

/// Where Chromium is: `$SKITTER_CHROMIUM`, else `chromium` or
/// `chromium-browser` on `PATH`.
pub fn find_chromium() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("SKITTER_CHROMIUM") {
        return Some(p.into());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|p| p.is_file())
}

/// [`find_chromium`], saying loudly through [`cannot_run`] that `check` of
/// `test` cannot run when there is none.
pub fn chromium(test: &str, check: &str) -> Option<std::path::PathBuf> {
    let found = find_chromium();
    if found.is_none() {
        cannot_run(
            test,
            check,
            "chromium is not installed (apt-get install chromium, or set SKITTER_CHROMIUM)",
        );
    }
    found
}
