//! `skitter man` and `skitter completions`: the manual pages and the shell
//! completion scripts, generated from the clap definitions that parse the
//! command line, so neither can offer a flag the parser does not take.
//!
//! Both are rendered into memory first and then written whole: the generators
//! panic on a failed write, and a closed stdout (`skitter man | head`) must stay
//! a clean exit.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::CommandFactory as _;

use crate::output::IgnoreClosed;

/// Options of `skitter man`.
#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write one page per command into DIR (`skitter.1`, `skitter-crawl.1`, …)
    /// instead of printing `skitter.1` on stdout.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Options of `skitter completions`.
#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to write the completion script for.
    #[arg(value_enum, value_name = "SHELL")]
    shell: clap_complete::Shell,
}

/// Runs `skitter man`; returns the exit status.
pub fn man(args: ManArgs) -> anyhow::Result<u8> {
    match args.dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(crate::Cli::command(), &dir)
                .with_context(|| format!("cannot write the manual pages into {}", dir.display()))?;
        }
        None => write_stdout(&man_page())?,
    }
    Ok(0)
}

/// Runs `skitter completions SHELL`; returns the exit status.
pub fn completions(args: CompletionsArgs) -> anyhow::Result<u8> {
    write_stdout(&completion_script(args.shell))?;
    Ok(0)
}

/// The `skitter(1)` page: every command's name and summary, the global options.
fn man_page() -> Vec<u8> {
    let mut page = Vec::new();
    clap_mangen::Man::new(crate::Cli::command())
        .render(&mut page)
        .expect("writing to memory cannot fail");
    page
}

fn completion_script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut crate::Cli::command(), "skitter", &mut script);
    script
}

fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = IgnoreClosed(std::io::stdout().lock());
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .context("cannot write to stdout")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_man_page_lists_every_command() {
        let page = String::from_utf8(man_page()).unwrap();
        assert!(
            page.contains(".TH skitter 1"),
            "not a man page: {page:.200}"
        );
        for command in crate::Cli::command().get_subcommands() {
            // roff escapes every `-`: `skitter\-redis\-clean(1)`.
            let entry = format!("skitter-{}(1)", command.get_name()).replace('-', "\\-");
            assert!(page.contains(&entry), "the man page lacks {entry}:\n{page}");
        }
    }

    #[test]
    fn one_man_page_per_command_goes_into_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("man1");
        man(ManArgs {
            dir: Some(sub.clone()),
        })
        .unwrap();
        for page in ["skitter.1", "skitter-crawl.1", "skitter-proxies-check.1"] {
            let text =
                std::fs::read_to_string(sub.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
            assert!(text.contains(".TH"), "{page} is not a man page");
        }
    }

    #[test]
    fn bash_completes_the_commands_and_their_flags() {
        let script = String::from_utf8(completion_script(clap_complete::Shell::Bash)).unwrap();
        for word in [
            "crawl",
            "fetch",
            "worker",
            "redis-clean",
            "--max-tasks",
            "--warc",
        ] {
            assert!(script.contains(word), "bash completions lack {word}");
        }
    }

    #[test]
    fn every_shell_gets_a_script() {
        use clap::ValueEnum as _;
        for shell in clap_complete::Shell::value_variants() {
            let script = completion_script(*shell);
            assert!(
                String::from_utf8_lossy(&script).contains("crawl"),
                "{shell} completions lack crawl"
            );
        }
    }
}
