//! The external WARC validators the test suites run (`warcio check` and
//! `fastwarc check`), found in one place so every suite judges files the same way.
//!
//! They come from `scripts/validators.sh`: a venv in `target/validators-venv`, or
//! the bin dir named by `$SKITTER_VALIDATORS`. When they are missing a test says
//! SKIPPED loudly, and fails outright when `$CI` is set, so CI cannot pass without
//! actually validating.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The validators' bin dir, or `None` after saying loudly on stderr why the
/// validating part of `test` is skipped. Panics when `$CI` is set and they are missing.
pub fn warc_validators(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("SKITTER_VALIDATORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/validators-venv/bin")
        });
    if dir.join("warcio").is_file() && dir.join("fastwarc").is_file() {
        return Some(dir);
    }
    let msg = format!(
        "{test}: WARC validators not installed in {}; run scripts/validators.sh",
        dir.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{msg}");
    }
    eprintln!("\n*** SKIPPED (validator part): {msg} ***\n");
    None
}

/// One validator's verdict on one file.
#[derive(Debug)]
pub struct Verdict {
    /// It exited with status 0.
    pub ok: bool,
    /// What it printed (stdout, then stderr).
    pub output: String,
}

/// Runs `bin/tool ARGS… file`.
pub fn run_validator(bin: &Path, tool: &str, args: &[&str], file: &Path) -> Verdict {
    match Command::new(bin.join(tool)).args(args).arg(file).output() {
        Ok(out) => Verdict {
            ok: out.status.success(),
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        },
        Err(e) => Verdict {
            ok: false,
            output: format!("cannot run {tool}: {e}"),
        },
    }
}

/// `warcio check` and `fastwarc check` (the latter also catches a truncated last
/// record, which warcio misses).
pub fn check_warc(bin: &Path, file: &Path) -> (Verdict, Verdict) {
    (
        run_validator(bin, "warcio", &["check"], file),
        run_validator(bin, "fastwarc", &["check", "-q", "-p"], file),
    )
}
