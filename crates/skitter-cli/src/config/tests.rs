use std::ffi::OsString;
use std::path::Path;

use clap::{ArgMatches, CommandFactory};

use super::file::ConfigError;
use super::print::redact;
use super::{expand, print_config};
use crate::Cli;

fn write(dir: &Path, text: &str) -> String {
    let path = dir.join("skitter.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn args(words: &[&str]) -> Vec<OsString> {
    std::iter::once("skitter")
        .chain(words.iter().copied())
        .map(OsString::from)
        .collect()
}

/// The parsed arguments of `words` with `text` as the config file.
fn parse(text: &str, words: &[&str]) -> Result<ArgMatches, ConfigError> {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), text);
    let mut all: Vec<&str> = words.to_vec();
    all.extend(["--config", file.as_str()]);
    let expanded = expand(&Cli::command(), args(&all))?;
    Ok(Cli::command()
        .try_get_matches_from(&expanded.args)
        .unwrap_or_else(|e| panic!("{e}")))
}

fn crawl_usize(m: &ArgMatches, id: &str) -> Option<usize> {
    m.subcommand_matches("crawl")
        .unwrap()
        .get_one::<usize>(id)
        .copied()
}

#[test]
fn without_config_the_arguments_are_untouched() {
    let words = args(&["crawl", "--max-tasks", "3", "http://a/"]);
    let expanded = expand(&Cli::command(), words.clone()).unwrap();
    assert_eq!(expanded.args, words);
    assert!(expanded.file.is_none());
}

#[test]
fn the_command_line_wins_over_the_table_which_wins_over_the_top_level() {
    let text = "max-tasks = 5\nper-host = 2\n[crawl]\nmax-tasks = 6\n";
    let m = parse(text, &["crawl", "http://a/"]).unwrap();
    assert_eq!(crawl_usize(&m, "max_tasks"), Some(6));
    assert_eq!(crawl_usize(&m, "per_host"), Some(2));
    let m = parse(text, &["crawl", "--max-tasks", "7", "http://a/"]).unwrap();
    assert_eq!(crawl_usize(&m, "max_tasks"), Some(7));
    let m = parse(text, &["crawl", "--max-tasks=8", "http://a/"]).unwrap();
    assert_eq!(crawl_usize(&m, "max_tasks"), Some(8));
    // An alias on the command line is the same option.
    let m = parse(text, &["crawl", "--max_tasks", "9", "http://a/"]).unwrap();
    assert_eq!(crawl_usize(&m, "max_tasks"), Some(9));
}

#[test]
fn positional_arguments_and_lists_come_from_the_file() {
    let text = "[crawl]\nroots = [\"http://a/\", \"http://b/\"]\nexclude = ['\\.pdf$', \"-x\"]\n";
    let m = parse(text, &["crawl"]).unwrap();
    let sub = m.subcommand_matches("crawl").unwrap();
    let roots: Vec<&String> = sub.get_many("roots").unwrap().collect();
    assert_eq!(roots, ["http://a/", "http://b/"]);
    let exclude: Vec<&String> = sub.get_many("exclude").unwrap().collect();
    assert_eq!(
        exclude,
        ["\\.pdf$", "-x"],
        "a value starting with - stays a value"
    );
    // Roots on the command line replace the file's.
    let m = parse(text, &["crawl", "http://c/"]).unwrap();
    let roots: Vec<&String> = m
        .subcommand_matches("crawl")
        .unwrap()
        .get_many("roots")
        .unwrap()
        .collect();
    assert_eq!(roots, ["http://c/"]);
}

#[test]
fn a_switch_on_the_command_line_overrides_or_silences_the_files() {
    let m = parse(
        "lenient = true\nsitemaps = true\n",
        &["crawl", "--strict", "--no-sitemaps", "x"],
    )
    .unwrap();
    let sub = m.subcommand_matches("crawl").unwrap();
    assert!(sub.get_flag("strict"));
    assert!(!sub.get_flag("lenient"));
    assert!(sub.get_flag("no_sitemaps"));
    assert!(!sub.get_flag("sitemaps"));
    let m = parse("lenient = true\nignore-robots = false\n", &["crawl", "x"]).unwrap();
    let sub = m.subcommand_matches("crawl").unwrap();
    assert!(sub.get_flag("lenient"));
    assert!(!sub.get_flag("ignore_robots"));
}

#[test]
fn one_file_serves_several_commands() {
    // `urls` is fetch's, `roots` and `max-depth` crawl's: each command takes its own.
    let text = "max-tasks = 4\nmax-depth = 2\nroots = [\"http://a/\"]\nurls = [\"http://u/\"]\n";
    let m = parse(text, &["crawl"]).unwrap();
    assert_eq!(crawl_usize(&m, "max_tasks"), Some(4));
    let m = parse(text, &["fetch"]).unwrap();
    let sub = m.subcommand_matches("fetch").unwrap();
    let urls: Vec<&String> = sub.get_many("urls").unwrap().collect();
    assert_eq!(urls, ["http://u/"]);
}

#[test]
fn bad_files_name_the_line_and_the_key() {
    let err = |text: &str| parse(text, &["crawl", "x"]).unwrap_err().to_string();
    let e = err("max-tasks = 5\nmax-taks = 3\n");
    assert!(
        e.ends_with(
            ":2: unknown option `max-taks` (no skitter command has it; see `skitter help`)"
        ),
        "{e}"
    );
    let e = err("[crawl]\nurls = [\"a\"]\n");
    assert!(
        e.contains(":2: unknown option `urls` for `skitter crawl`"),
        "{e}"
    );
    let e = err("max-tasks = 5\n\n[crawl]\nmax-tasks = \"lots\"\n");
    assert!(e.contains(":4: `max-tasks`: invalid value 'lots'"), "{e}");
    let e = err("per-host = 0\n");
    assert!(e.contains(":1: `per-host`: invalid value '0'"), "{e}");
    let e = err("timeout = \"forever\"\n");
    assert!(
        e.contains(":1: `timeout`:") && e.contains("not a duration"),
        "{e}"
    );
    let e = err("\n\nmax-depth = [1, 2]\n");
    assert!(
        e.contains(":3: `max-depth`: takes one value, not an array"),
        "{e}"
    );
    let e = err("ignore-robots = \"yes\"\n");
    assert!(e.contains(":1: `ignore-robots`: a switch"), "{e}");
    let e = err("max-tasks = 5\n[crawl\n");
    assert!(e.contains(":2: not valid TOML"), "{e}");
    let e = err("[crowl]\nmax-tasks = 1\n");
    assert!(e.contains(":1: `[crowl]` names no skitter command"), "{e}");
    let e = err("report = \"xml\"\n");
    assert!(e.contains(":1: `report`: invalid value 'xml'"), "{e}");
}

#[test]
fn a_missing_or_huge_file_is_an_error() {
    let missing = expand(
        &Cli::command(),
        args(&["crawl", "--config", "/nonexistent/s.toml", "x"]),
    );
    assert!(matches!(missing, Err(ConfigError::Read { .. })));
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), &"# padding\n".repeat(120_000));
    let huge = expand(&Cli::command(), args(&["crawl", "--config", &file, "x"]));
    assert!(matches!(huge, Err(ConfigError::TooLarge { .. })));
}

#[test]
fn printed_settings_read_back_to_the_same_settings() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "max-tasks = 5\nexclude = ['\\.pdf$']\n[crawl]\nroots = [\"http://a/\"]\nmax-depth = 3\nlenient = true\n",
    );
    let first = expand(
        &Cli::command(),
        args(&["crawl", "--per-host", "3", "--config", &file]),
    )
    .unwrap();
    let m = Cli::command().try_get_matches_from(&first.args).unwrap();
    let printed = print_config(&Cli::command(), &m, &first);
    assert!(
        printed.contains("max-tasks = 5  # config file"),
        "{printed}"
    );
    assert!(
        printed.contains("per-host = 3  # command line"),
        "{printed}"
    );
    assert!(
        printed.contains("# max-redirect = 10  (default)"),
        "{printed}"
    );
    assert!(printed.contains("# max-pages = (not set)"), "{printed}");
    let again = write(dir.path(), &printed);
    let second = expand(&Cli::command(), args(&["crawl", "--config", &again])).unwrap();
    let m2 = Cli::command().try_get_matches_from(&second.args).unwrap();
    let reprinted = print_config(&Cli::command(), &m2, &second);
    let settings = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split("  # ").next().unwrap().to_owned())
            .collect()
    };
    assert_eq!(settings(&printed), settings(&reprinted));
}

#[test]
fn secrets_are_redacted_when_printed() {
    assert_eq!(
        redact("header", "Authorization: Bearer x"),
        "Authorization: [redacted]"
    );
    assert_eq!(
        redact("proxy", "http://user:pw@127.0.0.1:3128/"),
        "http://user:[redacted]@127.0.0.1:3128/"
    );
    assert_eq!(
        redact("redis", "redis://:pw@h:6379/0"),
        "redis://:[redacted]@h:6379/0"
    );
    assert_eq!(redact("redis", "redis://token@h/"), "redis://[redacted]@h/");
    assert_eq!(redact("root", "http://h/a@b"), "http://h/a@b");
    assert_eq!(redact("root", "plain"), "plain");
}

#[test]
fn a_nested_command_has_a_nested_table() {
    let text = "[proxies.check]\ntest-url = \"http://127.0.0.1:1/\"\nconcurrency = 3\n";
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), text);
    let expanded = expand(
        &Cli::command(),
        args(&["proxies", "check", "list.txt", "--config", &file]),
    )
    .unwrap();
    let m = Cli::command().try_get_matches_from(&expanded.args).unwrap();
    let printed = print_config(&Cli::command(), &m, &expanded);
    assert!(printed.contains("[proxies.check]"), "{printed}");
    assert!(
        printed.contains("test-url = \"http://127.0.0.1:1/\"  # config file"),
        "{printed}"
    );
    let bad = write(dir.path(), "[proxies.chek]\n");
    let e = expand(
        &Cli::command(),
        args(&["proxies", "check", "l", "--config", &bad]),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains(":1: `[proxies.chek]` names no skitter command"),
        "{e}"
    );
}
