//! `skitter wacz create WARC… -o FILE` and `skitter wacz validate FILE`: packing
//! WARC files (skitter's or anyone's) into a WACZ file, and checking one; both
//! are the library's (`skitter::output::pack_wacz`, `validate_wacz`).

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use skitter::output::{WaczOptions, pack_wacz, validate_wacz};

/// `skitter wacz …`.
#[derive(Subcommand, Debug)]
pub enum WaczCommand {
    /// Pack WARC files into a WACZ file (archive, index, page list with titles
    /// and text, manifest), written whole or not at all.
    Create(CreateArgs),
    /// Check a WACZ file: its layout, every file's size and SHA-256 against
    /// the manifest, and that every index entry points at its record.
    Validate(ValidateArgs),
}

/// Options of `skitter wacz create`.
#[derive(Args, Debug)]
pub struct CreateArgs {
    /// The WARC files (`.warc.gz` with one record per gzip member, or `.warc`).
    #[arg(value_name = "WARC", required = true)]
    pub warcs: Vec<PathBuf>,
    /// The WACZ file to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// A title for the collection (the manifest's `title`).
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
}

/// Options of `skitter wacz validate`.
#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// The WACZ file to check.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

impl WaczCommand {
    /// Runs the command: exit status 0, or 1 when a checked file is invalid.
    pub async fn run(self) -> anyhow::Result<u8> {
        match self {
            WaczCommand::Create(args) => create(args).await,
            WaczCommand::Validate(args) => validate(args).await,
        }
    }
}

/// The `software` the manifest names.
pub fn software() -> String {
    format!("skitter {}", env!("CARGO_PKG_VERSION"))
}

async fn create(args: CreateArgs) -> anyhow::Result<u8> {
    let options = WaczOptions {
        software: software(),
        title: args.title,
    };
    let out = args.output.clone();
    let summary = tokio::task::spawn_blocking(move || pack_wacz(&args.warcs, &out, &options))
        .await?
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    println!(
        "{}: {} WARC file(s), {} captures, {} pages, {} bytes",
        summary.path.display(),
        summary.warcs,
        summary.captures,
        summary.pages,
        summary.bytes
    );
    Ok(0)
}

async fn validate(args: ValidateArgs) -> anyhow::Result<u8> {
    let file = args.file.clone();
    let check = tokio::task::spawn_blocking(move || validate_wacz(&file)).await??;
    for problem in &check.problems {
        println!("{}: {problem}", args.file.display());
    }
    let verdict = if check.problems.is_empty() {
        "valid"
    } else {
        "INVALID"
    };
    println!(
        "{}: {verdict}: {} files, {} captures, {} pages checked, {} problem(s)",
        args.file.display(),
        check.resources,
        check.captures,
        check.pages,
        check.problems.len()
    );
    Ok(u8::from(!check.problems.is_empty()))
}
