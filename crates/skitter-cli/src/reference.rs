//! The book's command-line reference (`docs/src/reference/`), rendered from the
//! clap definitions: one Markdown page per command with its usage, description
//! and every argument's help, default and possible values.
//!
//! The pages are checked in so the book builds without running the binary; the
//! test below renders them again and fails when a flag changed without them, so
//! the reference cannot drift from `--help`. `SKITTER_BLESS=1` rewrites them.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, Command, CommandFactory as _};

/// Says where the pages come from, so nobody edits one by hand.
const GENERATED: &str = "<!-- Generated from the clap definitions by \
crates/skitter-cli/src/reference.rs: do not edit. To rewrite, run \
SKITTER_BLESS=1 cargo test -p skitter-cli --features testsite --bins reference -->";

/// Every page of the reference, by file name: `index.md` for `skitter`
/// itself, then `<command>.md` for each command.
pub fn pages() -> BTreeMap<String, String> {
    let mut root = crate::Cli::command();
    // Propagates the global flags and names each command `skitter <command>`.
    root.build();
    let mut pages = BTreeMap::new();
    pages.insert("index.md".to_string(), index_page(&root));
    for command in commands(&root) {
        pages.insert(format!("{}.md", command.get_name()), command_page(command));
    }
    pages
}

/// The commands a reader can run; clap's own `help` is described by `--help`.
fn commands(parent: &Command) -> impl Iterator<Item = &Command> {
    parent
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
}

fn index_page(root: &Command) -> String {
    let mut page = format!("{GENERATED}\n\n# The skitter command\n\n");
    push_about(&mut page, root);
    push_usage(&mut page, root);
    page.push_str("## Commands\n\n| command | what it does |\n| --- | --- |\n");
    for command in commands(root) {
        let about = command
            .get_about()
            .map(|s| s.to_string())
            .unwrap_or_default();
        let _ = writeln!(
            page,
            "| [`skitter {name}`]({name}.md) | {} |",
            prose(&one_line(&about)).replace('|', "\\|"),
            name = command.get_name(),
        );
    }
    page.push('\n');
    let globals: Vec<&Arg> = shown_args(root).filter(|a| a.is_global_set()).collect();
    if !globals.is_empty() {
        page.push_str("## Global options\n\nThese go before or after the command's name.\n\n");
        for arg in globals {
            push_arg(&mut page, arg, 3);
        }
    }
    finish(page)
}

fn command_page(command: &Command) -> String {
    let mut page = format!("{GENERATED}\n\n");
    push_command(&mut page, command, 1);
    finish(page)
}

/// One command at heading `level`: about, usage, arguments, options, and its
/// own commands (`skitter proxies check`) one level down.
fn push_command(page: &mut String, command: &Command, level: usize) {
    let _ = writeln!(page, "{} {}\n", "#".repeat(level), full_name(command));
    push_about(page, command);
    push_usage(page, command);
    let sub = "#".repeat(level + 1);
    let positionals: Vec<&Arg> = shown_args(command).filter(|a| a.is_positional()).collect();
    if !positionals.is_empty() {
        let _ = writeln!(page, "{sub} Arguments\n");
        for arg in positionals {
            push_arg(page, arg, level + 2);
        }
    }
    let options: Vec<&Arg> = shown_args(command)
        .filter(|a| !a.is_positional() && !a.is_global_set())
        .collect();
    if !options.is_empty() {
        let _ = writeln!(page, "{sub} Options\n");
        for arg in options {
            push_arg(page, arg, level + 2);
        }
    }
    let globals: Vec<String> = shown_args(command)
        .filter(|a| a.is_global_set())
        .map(|a| format!("`{}`", arg_title(a)))
        .collect();
    if !globals.is_empty() {
        let _ = writeln!(
            page,
            "Also takes the [global options](index.md#global-options): {}.\n",
            globals.join(", ")
        );
    }
    for child in commands(command) {
        push_command(page, child, level + 1);
    }
}

/// `skitter proxies check`, as clap names it once built.
fn full_name(command: &Command) -> String {
    command
        .get_bin_name()
        .unwrap_or_else(|| command.get_name())
        .to_string()
}

/// The arguments worth a line: not hidden, not clap's own `--help`/`--version`.
fn shown_args(command: &Command) -> impl Iterator<Item = &Arg> {
    command
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"))
}

fn push_about(page: &mut String, command: &Command) {
    if let Some(about) = command.get_long_about().or_else(|| command.get_about()) {
        let _ = writeln!(page, "{}\n", prose(&about.to_string()));
    }
}

fn push_usage(page: &mut String, command: &Command) {
    let usage = command.clone().render_usage().to_string();
    let _ = writeln!(page, "```text\n{}\n```\n", usage.trim_end());
}

/// One argument: its spelling as a heading, its help, then the facts a reader
/// looks up (default, choices, aliases, environment variable).
fn push_arg(page: &mut String, arg: &Arg, level: usize) {
    let _ = writeln!(page, "{} `{}`\n", "#".repeat(level), arg_title(arg));
    if let Some(help) = arg.get_long_help().or_else(|| arg.get_help()) {
        let _ = writeln!(page, "{}\n", prose(&help.to_string()));
    }
    let mut facts = Vec::new();
    if arg.is_required_set() {
        facts.push("Required.".to_string());
    }
    if matches!(arg.get_action(), ArgAction::Append) || arg.is_positional() && takes_many(arg) {
        facts.push("May be given more than once.".to_string());
    }
    let takes_value = arg.get_action().takes_values();
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| format!("`{}`", v.to_string_lossy()))
        .collect();
    if takes_value && !defaults.is_empty() && !arg.is_hide_default_value_set() {
        facts.push(format!("Default: {}.", defaults.join(", ")));
    }
    if let Some(delimiter) = arg.get_value_delimiter() {
        facts.push(format!("Values are separated by `{delimiter}`."));
    }
    if let Some(env) = arg.get_env() {
        facts.push(format!(
            "Read from the environment variable `{}` when not given.",
            env.to_string_lossy()
        ));
    }
    let aliases: Vec<String> = arg
        .get_all_aliases()
        .unwrap_or_default()
        .iter()
        .map(|a| format!("`--{a}`"))
        .chain(
            arg.get_all_short_aliases()
                .unwrap_or_default()
                .iter()
                .map(|a| format!("`-{a}`")),
        )
        .collect();
    if !aliases.is_empty() {
        facts.push(format!("Also spelt {}.", aliases.join(", ")));
    }
    if !facts.is_empty() {
        let _ = writeln!(page, "{}\n", facts.join(" "));
    }
    let values: Vec<_> = arg
        .get_possible_values()
        .into_iter()
        .filter(|v| !v.is_hide_set())
        .collect();
    if takes_value && !values.is_empty() && !arg.is_hide_possible_values_set() {
        page.push_str("Possible values:\n\n");
        for value in values {
            match value.get_help() {
                Some(help) => {
                    let help = prose(&one_line(&help.to_string()));
                    let _ = writeln!(page, "- `{}`: {help}", value.get_name());
                }
                None => {
                    let _ = writeln!(page, "- `{}`", value.get_name());
                }
            }
        }
        page.push('\n');
    }
}

/// `-c, --concurrency <N>`, `<ROOT>...`, `-v, --verbose...`: as `--help`
/// spells it.
fn arg_title(arg: &Arg) -> String {
    match (arg.get_short(), arg.get_long()) {
        (Some(short), Some(_)) => format!("-{short}, {arg}"),
        _ => arg.to_string(),
    }
}

fn takes_many(arg: &Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.max_values() > 1)
}

/// Help text as Markdown prose: a `<` outside a code span would open an HTML
/// tag in the book (`a <noscript> asking…` hid the rest of the page), so it is
/// written `&lt;`; code spans are kept as they are.
fn prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for c in text.trim_end().chars() {
        match c {
            '`' => {
                in_code = !in_code;
                out.push(c);
            }
            '<' if !in_code => out.push_str("&lt;"),
            _ => out.push(c),
        }
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One trailing newline, whatever the last section wrote.
fn finish(page: String) -> String {
    format!("{}\n", page.trim_end())
}

/// The book's sources in the repository.
fn book_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src")
}

/// Where the pages live in the repository.
#[cfg(feature = "testsite")]
fn reference_dir() -> PathBuf {
    book_src().join("reference")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What differs between the rendered pages and the files: pages missing or
    /// different on disk, and files no command renders any more.
    fn drift(dir: &Path, pages: &BTreeMap<String, String>) -> Vec<String> {
        let mut drift = Vec::new();
        for (name, text) in pages {
            match std::fs::read_to_string(dir.join(name)) {
                Ok(on_disk) if &on_disk == text => {}
                Ok(_) => drift.push(format!("{name} differs")),
                Err(_) => drift.push(format!("{name} is missing")),
            }
        }
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") && !pages.contains_key(&name) {
                drift.push(format!("{name} belongs to no command"));
            }
        }
        drift
    }

    fn bless(dir: &Path, pages: &BTreeMap<String, String>) {
        std::fs::create_dir_all(dir).unwrap();
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") && !pages.contains_key(&name) {
                std::fs::remove_file(entry.path()).unwrap();
            }
        }
        for (name, text) in pages {
            std::fs::write(dir.join(name), text).unwrap();
        }
    }

    /// The book documents the whole command line, `bench` and `testsite`
    /// included, which only a build with the `testsite` feature has (as
    /// `scripts/test.sh` builds it).
    #[test]
    #[cfg(not(feature = "testsite"))]
    fn the_reference_is_checked_only_with_the_testsite_feature() {
        let why = "skitter-cli reference: docs/src/reference/ was NOT checked: it documents \
                   the build with the `testsite` feature (run `cargo test -p skitter-cli \
                   --features testsite`, or scripts/test.sh)";
        eprintln!("SKIPPED: {why}");
        if let Some(path) = std::env::var_os("SKITTER_SKIPPED") {
            use std::io::Write as _;
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .expect("the skipped-checks file");
            writeln!(file, "{why}").expect("the skipped-checks file");
        }
    }

    #[test]
    #[cfg(feature = "testsite")]
    fn the_reference_in_the_book_matches_the_clap_definitions() {
        let dir = reference_dir();
        let pages = pages();
        if std::env::var_os("SKITTER_BLESS").is_some_and(|v| v == "1") {
            bless(&dir, &pages);
        }
        let drift = drift(&dir, &pages);
        assert!(
            drift.is_empty(),
            "docs/src/reference/ is out of date with the command line:\n  {}\n\
             Run `SKITTER_BLESS=1 cargo test -p skitter-cli --features testsite --bins reference` to rewrite it, \
             and commit the result.",
            drift.join("\n  ")
        );
    }

    #[test]
    fn the_book_lists_every_reference_page() {
        let summary = std::fs::read_to_string(book_src().join("SUMMARY.md")).unwrap();
        for name in pages().keys() {
            assert!(
                summary.contains(&format!("(reference/{name})")),
                "docs/src/SUMMARY.md has no entry for reference/{name}, so the book leaves it out"
            );
        }
    }

    #[test]
    fn a_page_shows_help_default_choices_and_aliases() {
        let pages = pages();
        let crawl = &pages["crawl.md"];
        for expected in [
            "# skitter crawl",
            "Usage: skitter crawl [OPTIONS] <ROOT>...",
            "### `--max-tasks <N>`",
            "Concurrent requests at most, over all hosts",
            "Default: `100`.",
            "Also spelt `--max_tasks`.",
            "- `json`",
        ] {
            assert!(
                crawl.contains(expected),
                "crawl.md lacks {expected:?}:\n{crawl}"
            );
        }
        assert!(pages["proxies.md"].contains("## skitter proxies check"));
        assert!(pages["index.md"].contains("[`skitter crawl`](crawl.md)"));
    }

    #[test]
    fn prose_escapes_tags_but_not_code() {
        assert_eq!(
            prose("a <noscript> or `<ROOT>` and <b>\n"),
            "a &lt;noscript> or `<ROOT>` and &lt;b>"
        );
    }

    #[test]
    fn drift_names_the_stale_missing_and_changed_pages() {
        let dir = tempfile::tempdir().unwrap();
        let mut pages = BTreeMap::new();
        pages.insert("a.md".to_string(), "new\n".to_string());
        pages.insert("b.md".to_string(), "b\n".to_string());
        std::fs::write(dir.path().join("a.md"), "old\n").unwrap();
        std::fs::write(dir.path().join("gone.md"), "x\n").unwrap();
        let mut found = drift(dir.path(), &pages);
        found.sort();
        assert_eq!(
            found,
            [
                "a.md differs",
                "b.md is missing",
                "gone.md belongs to no command"
            ]
        );
        bless(dir.path(), &pages);
        assert!(drift(dir.path(), &pages).is_empty());
    }
}
