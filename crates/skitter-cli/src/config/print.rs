//! `--print-config`: the settings a command would run with, merged from the
//! command line, the `--config` file and the defaults, as a config file.
//!
//! The output is a TOML file that `--config` reads back to the same settings,
//! with one exception made for safety: header values (`-H`) and passwords in
//! URLs are shown as `[redacted]`, so the output can be pasted into a bug
//! report. Options left at their default, or without a value, are listed as
//! comments (with the default), so the output is also the list of keys a file
//! may set, and reads back to the same settings.

use std::fmt::Write as _;

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};

use super::Expanded;

/// What is shown for a secret.
pub const REDACTED: &str = "[redacted]";

/// The merged settings of the command `matches` runs, as a config file.
pub fn print_config(cmd: &Command, matches: &ArgMatches, expanded: &Expanded) -> String {
    let mut cmd = cmd.clone();
    cmd.build();
    let mut chain = Vec::new();
    let (mut sub, mut sub_m) = (&cmd, matches);
    while let Some((name, m)) = sub_m.subcommand() {
        chain.push(name);
        sub = sub.find_subcommand(name).expect("clap matched it");
        sub_m = m;
    }
    if chain.is_empty() {
        return String::new();
    }
    let (name, table) = (chain.join(" "), chain.join("."));
    let mut out = String::new();
    let file = expanded
        .file
        .as_ref()
        .map_or("no config file".to_owned(), |f| f.display().to_string());
    let _ = writeln!(
        out,
        "# skitter {name}: the settings it runs with (the command line over {file} over the defaults).\n\
         # Header values and URL passwords are shown as {REDACTED}.\n[{table}]"
    );
    for arg in sub.get_arguments() {
        let id = arg.get_id().as_str();
        if skip(arg) {
            continue;
        }
        let key = key_of(arg);
        let source = match sub_m.value_source(id) {
            Some(ValueSource::CommandLine) if expanded.from_file.contains(id) => "config file",
            Some(ValueSource::CommandLine) => "command line",
            Some(ValueSource::EnvVariable) => "environment",
            Some(ValueSource::DefaultValue) => "default",
            _ => "",
        };
        if source.is_empty() {
            let _ = writeln!(out, "# {key} = (not set)");
            continue;
        }
        let value = match arg.get_action() {
            ArgAction::SetTrue | ArgAction::SetFalse => {
                let on = sub_m.get_flag(id);
                on.to_string()
            }
            ArgAction::Count => sub_m.get_count(id).to_string(),
            _ => {
                let raw: Vec<String> = sub_m
                    .get_raw(id)
                    .into_iter()
                    .flatten()
                    .map(|v| redact(&key, &v.to_string_lossy()))
                    .collect();
                let many = matches!(arg.get_action(), ArgAction::Append)
                    || arg.get_num_args().is_some_and(|n| n.max_values() > 1);
                if many {
                    let items: Vec<String> = raw.iter().map(|v| toml_value(v)).collect();
                    format!("[{}]", items.join(", "))
                } else {
                    raw.first().map_or_else(String::new, |v| toml_value(v))
                }
            }
        };
        if source == "default" {
            let _ = writeln!(out, "# {key} = {value}  (default)");
        } else {
            let _ = writeln!(out, "{key} = {value}  # {source}");
        }
    }
    out
}

fn skip(arg: &Arg) -> bool {
    matches!(
        arg.get_action(),
        ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
    ) || matches!(arg.get_id().as_str(), "config" | "print_config")
}

/// The key a file uses for `arg`: its long name, or a positional's name.
fn key_of(arg: &Arg) -> String {
    arg.get_long()
        .map_or_else(|| arg.get_id().as_str().to_owned(), str::to_owned)
}

/// A value as TOML: whole numbers as numbers, everything else as a string
/// (the syntax the flag takes: `"30s"`, `"10M"`).
fn toml_value(v: &str) -> String {
    let plain_number = !v.is_empty()
        && v.len() < 19
        && v.bytes().all(|b| b.is_ascii_digit())
        && (v == "0" || !v.starts_with('0'));
    if plain_number {
        v.to_owned()
    } else {
        toml::Value::String(v.to_owned()).to_string()
    }
}

/// Hides a header's value and a URL's password.
pub fn redact(key: &str, v: &str) -> String {
    if key == "header" {
        return match v.split_once(':') {
            Some((name, _)) => format!("{name}: {REDACTED}"),
            None => REDACTED.to_owned(),
        };
    }
    let Some(scheme_end) = v.find("://") else {
        return v.to_owned();
    };
    let rest = &v[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let Some(at) = authority.rfind('@') else {
        return v.to_owned();
    };
    let userinfo = &authority[..at];
    let shown = match userinfo.split_once(':') {
        Some((user, _)) => format!("{user}:{REDACTED}"),
        None if userinfo.is_empty() => return v.to_owned(),
        // A lone user part may be a token (`redis://TOKEN@host`).
        None => REDACTED.to_owned(),
    };
    format!(
        "{}{shown}{}",
        &v[..scheme_end + 3],
        &v[scheme_end + 3 + at..]
    )
}
