//! The external WARC validators the test suites run (`warcio check` and
//! `fastwarc check`), found in one place so every suite judges files the same way.
//!
//! They come from `scripts/validators.sh`: a venv in `target/validators-venv`, or
//! the bin dir named by `$SKITTER_VALIDATORS`. When they are missing a test says
//! SKIPPED loudly ([`crate::skip`]), and fails outright when `$CI` is set, so CI
//! cannot pass without actually validating.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::skip::cannot_run;

/// The validators' bin dir, or `None` after saying loudly why the validating part
/// of `test` is skipped ([`cannot_run`]). Panics when `$CI` is set and they are missing.
pub fn warc_validators(test: &str) -> Option<PathBuf> {
    python_tools(test, &["warcio", "fastwarc"])
}

/// The bin dir holding every one of `tools` (programs `scripts/validators.sh`
/// installs, such as `cdxj-indexer`), or `None` after [`cannot_run`] said why.
pub fn python_tools(test: &str, tools: &[&str]) -> Option<PathBuf> {
    let dir = std::env::var_os("SKITTER_VALIDATORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/validators-venv/bin")
        });
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| !dir.join(t).is_file())
        .collect();
    if missing.is_empty() {
        return Some(dir);
    }
    cannot_run(
        test,
        &format!("the {} part", tools.join(" + ")),
        &format!(
            "{} not installed in {}; run scripts/validators.sh (or scripts/test.sh)",
            missing.join(", "),
            dir.display()
        ),
    );
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

/// `wacz validate -f file`, the Webrecorder WACZ validator (py-wacz): ok only
/// when it exits 0 and says the file is valid.
pub fn check_wacz(bin: &Path, file: &Path) -> Verdict {
    let mut verdict = run_validator(bin, "wacz", &["validate", "-f"], file);
    verdict.ok &= verdict.output.contains("Validation succeeded");
    verdict
}
