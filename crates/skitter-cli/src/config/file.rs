//! Reading a `--config` file and merging it into the command line's arguments.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};
use toml::de::{DeTable, DeValue};

/// The largest config file read (1 MiB): a settings file is a few KB, and a
/// larger one is a mistake (a WARC given by accident), not something to parse.
pub const MAX_FILE_SIZE: u64 = 1 << 20;

/// The arguments after merging a config file in, and which options it set.
#[derive(Debug)]
pub struct Expanded {
    /// The argument list to parse, the file's options in it.
    pub args: Vec<OsString>,
    /// The file, when one was given.
    pub file: Option<PathBuf>,
    /// The ids of the arguments whose value came from the file.
    pub from_file: BTreeSet<String>,
}

/// A config file that cannot be used. Each names the file and, where it can,
/// the line and the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read the config file {}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_FILE_SIZE`].
    #[error("the config file {} is over the 1 MiB a config file may have", file.display())]
    TooLarge {
        /// The file.
        file: PathBuf,
    },
    /// The file is not valid TOML.
    #[error("{}:{line}: not valid TOML: {message}", file.display())]
    Syntax {
        /// The file.
        file: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What the parser said.
        message: String,
    },
    /// A table named after no command.
    #[error("{}:{line}: `[{name}]` names no skitter command (see `skitter help`)", file.display())]
    UnknownTable {
        /// The file.
        file: PathBuf,
        /// The line, from 1.
        line: usize,
        /// The table's name.
        name: String,
    },
    /// A key that names no option.
    #[error("{}:{line}: unknown option `{key}`{}", file.display(), hint(.command))]
    UnknownKey {
        /// The file.
        file: PathBuf,
        /// The line, from 1.
        line: usize,
        /// The key as written.
        key: String,
        /// The command whose table it is in, if any.
        command: Option<String>,
    },
    /// A value the option does not take.
    #[error("{}:{line}: `{key}`: {message}", file.display())]
    Value {
        /// The file.
        file: PathBuf,
        /// The line, from 1.
        line: usize,
        /// The key.
        key: String,
        /// What is wrong with the value.
        message: String,
    },
}

fn hint(command: &Option<String>) -> String {
    match command {
        Some(c) => format!(" for `skitter {c}` (see `skitter {c} --help`)"),
        None => " (no skitter command has it; see `skitter help`)".into(),
    }
}

/// The value of `--config` on the command line, if any (before a `--`).
fn config_path(args: &[OsString]) -> Option<PathBuf> {
    let mut found = None;
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let Some(s) = a.to_str() else { continue };
        if s == "--" {
            break;
        }
        if s == "--config" {
            found = it.next().map(PathBuf::from);
        } else if let Some(v) = s.strip_prefix("--config=") {
            found = Some(PathBuf::from(v));
        }
    }
    found
}

/// Merges the `--config` file named in `args` (if any) into them. Without
/// `--config` the arguments come back as they are.
pub fn expand(cmd: &Command, args: Vec<OsString>) -> Result<Expanded, ConfigError> {
    let Some(file) = config_path(&args) else {
        return Ok(Expanded {
            args,
            file: None,
            from_file: BTreeSet::new(),
        });
    };
    let text = read(&file)?;
    let mut cmd = cmd.clone();
    cmd.build();
    // Which command runs, and what the command line already says: parsed
    // leniently, since a required argument may be the file's to give.
    let partial = cmd
        .clone()
        .ignore_errors(true)
        .try_get_matches_from(&args)
        .ok();
    // The chain of commands that runs (`proxies check` is two deep).
    let mut chain: Vec<String> = Vec::new();
    let mut sub_m = partial;
    let mut sub = &cmd;
    let mut at = 0;
    loop {
        let next = sub_m.as_ref().and_then(ArgMatches::subcommand);
        let (name, m) = match next {
            Some((name, m)) => (name.to_owned(), Some(m.clone())),
            // Lenient parsing records no inner command whose own parse failed
            // (`proxies check` without its required `--test-url`): find its
            // name among the words and parse from there.
            None => {
                let Some(i) = args[at + 1..]
                    .iter()
                    .position(|a| a.to_str().is_some_and(|s| sub.find_subcommand(s).is_some()))
                else {
                    break;
                };
                let name = args[at + 1 + i].to_string_lossy().into_owned();
                let inner = sub.find_subcommand(&name).expect("found above");
                let m = inner
                    .clone()
                    .ignore_errors(true)
                    .try_get_matches_from(&args[at + 1 + i..])
                    .ok();
                (name, m)
            }
        };
        sub = sub
            .find_subcommand(&name)
            .expect("clap matched this subcommand");
        if let Some(i) = args[at + 1..]
            .iter()
            .position(|a| a.to_str() == Some(name.as_str()))
        {
            at += 1 + i;
        }
        chain.push(name);
        sub_m = m;
    }
    let (Some(sub_m), false) = (sub_m.as_ref(), chain.is_empty()) else {
        // No command named: clap's own answer (help, or the error) follows.
        return Ok(Expanded {
            args,
            file: Some(file),
            from_file: BTreeSet::new(),
        });
    };
    let sub = sub.clone();
    let entries = entries(&cmd, &sub, &chain, &file, &text)?;
    let mut opts = Vec::new();
    let mut positionals = Vec::new();
    let mut from_file = BTreeSet::new();
    for e in entries {
        let arg = e.arg;
        let id = arg.get_id().as_str();
        if given(sub_m, id)
            || sub
                .get_arg_conflicts_with(arg)
                .iter()
                .any(|c| given(sub_m, c.get_id().as_str()))
        {
            continue;
        }
        let tokens = tokens(&sub, arg, &e.value, &file, e.line, &e.key)?;
        if arg.is_positional() {
            positionals.extend(tokens);
        } else {
            opts.extend(tokens);
        }
        from_file.insert(id.to_owned());
    }
    Ok(Expanded {
        args: splice(&args, &chain, opts, positionals),
        file: Some(file),
        from_file,
    })
}

fn given(m: &ArgMatches, id: &str) -> bool {
    m.try_contains_id(id).unwrap_or(false) && m.value_source(id) == Some(ValueSource::CommandLine)
}

fn read(file: &Path) -> Result<String, ConfigError> {
    let err = |source| ConfigError::Read {
        file: file.to_owned(),
        source,
    };
    let meta = std::fs::metadata(file).map_err(err)?;
    if meta.len() > MAX_FILE_SIZE {
        return Err(ConfigError::TooLarge {
            file: file.to_owned(),
        });
    }
    std::fs::read_to_string(file).map_err(err)
}

/// One option the file sets for the command that runs.
struct Entry<'c> {
    key: String,
    line: usize,
    arg: &'c Arg,
    value: Val,
}

/// A TOML value as an option sees it: numbers are kept as their text, for
/// clap's value parser to read.
#[derive(Debug)]
enum Val {
    Bool(bool),
    Text(String),
    List(Vec<Val>),
    Table,
}

impl Val {
    fn of(v: &DeValue<'_>) -> Val {
        match v {
            DeValue::String(s) => Val::Text(s.to_string()),
            DeValue::Boolean(b) => Val::Bool(*b),
            DeValue::Datetime(d) => Val::Text(d.to_string()),
            DeValue::Integer(i) if i.radix() == 10 => Val::Text(i.as_str().replace('_', "")),
            DeValue::Integer(i) => Val::Text(i.as_str().to_owned()),
            DeValue::Float(f) => Val::Text(f.as_str().replace('_', "")),
            DeValue::Array(a) => Val::List(a.iter().map(|x| Val::of(x.get_ref())).collect()),
            DeValue::Table(_) => Val::Table,
        }
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn find_arg<'c>(cmd: &'c Command, key: &str) -> Option<&'c Arg> {
    let long = key.replace('_', "-");
    cmd.get_arguments()
        .find(|a| {
            if a.is_positional() {
                return a.get_id().as_str() == key || a.get_id().as_str() == long.replace('-', "_");
            }
            a.get_long() == Some(long.as_str())
                || a.get_all_aliases()
                    .is_some_and(|al| al.iter().any(|x| x.replace('_', "-") == long))
        })
        .filter(|a| {
            !matches!(
                a.get_action(),
                ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
            )
        })
        .filter(|a| !matches!(a.get_id().as_str(), "config" | "print_config"))
}

/// Whether any command under `cmd` (itself included) has an option `key`.
fn anywhere(cmd: &Command, key: &str) -> bool {
    find_arg(cmd, key).is_some() || cmd.get_subcommands().any(|c| anywhere(c, key))
}

/// The entries of the file that apply to `sub`, the last command of `chain`:
/// the top level's, overridden by those of its own table (`[crawl]`,
/// `[proxies.check]`). Every key and table of the file is checked, whichever
/// command runs.
fn entries<'c>(
    root: &Command,
    sub: &'c Command,
    chain: &[String],
    file: &Path,
    text: &str,
) -> Result<Vec<Entry<'c>>, ConfigError> {
    let table = DeTable::parse(text).map_err(|e| ConfigError::Syntax {
        file: file.to_owned(),
        line: e.span().map_or(1, |s| line_of(text, s.start)),
        message: e.message().to_owned(),
    })?;
    let mut top: Vec<Entry<'c>> = Vec::new();
    let mut own: Vec<Entry<'c>> = Vec::new();
    for (key, value) in table.get_ref().iter() {
        let line = line_of(text, key.span().start);
        let k = key.get_ref().to_string();
        if let DeValue::Table(t) = value.get_ref() {
            let Some(target) = root.find_subcommand(&k) else {
                return Err(ConfigError::UnknownTable {
                    file: file.to_owned(),
                    line,
                    name: k,
                });
            };
            let path = vec![k];
            command_table(target, t, &path, chain, sub, file, text, &mut own)?;
            continue;
        }
        match find_arg(sub, &k) {
            Some(arg) => top.push(Entry {
                key: k,
                line,
                arg,
                value: Val::of(value.get_ref()),
            }),
            None if anywhere(root, &k) => {}
            None => {
                return Err(ConfigError::UnknownKey {
                    file: file.to_owned(),
                    line,
                    key: k,
                    command: None,
                });
            }
        }
    }
    top.retain(|t| !own.iter().any(|o| o.arg.get_id() == t.arg.get_id()));
    top.extend(own);
    Ok(top)
}

/// Checks the table of command `target` (at `path`), and collects its
/// entries into `own` when it is the table of the command that runs.
#[allow(clippy::too_many_arguments)]
fn command_table<'c>(
    target: &Command,
    table: &DeTable<'_>,
    path: &[String],
    chain: &[String],
    sub: &'c Command,
    file: &Path,
    text: &str,
    own: &mut Vec<Entry<'c>>,
) -> Result<(), ConfigError> {
    for (ik, iv) in table.iter() {
        let line = line_of(text, ik.span().start);
        let key = ik.get_ref().to_string();
        if let DeValue::Table(inner) = iv.get_ref() {
            let Some(next) = target.find_subcommand(&key) else {
                return Err(ConfigError::UnknownTable {
                    file: file.to_owned(),
                    line,
                    name: [path, &[key]].concat().join("."),
                });
            };
            let deeper = [path, &[key]].concat();
            command_table(next, inner, &deeper, chain, sub, file, text, own)?;
            continue;
        }
        if find_arg(target, &key).is_none() {
            return Err(ConfigError::UnknownKey {
                file: file.to_owned(),
                line,
                key,
                command: Some(path.join(" ")),
            });
        }
        if path == chain {
            let arg = find_arg(sub, &key).expect("the table's command is the one that runs");
            own.push(Entry {
                key,
                line,
                arg,
                value: Val::of(iv.get_ref()),
            });
        }
    }
    Ok(())
}

/// The command-line words that say what `value` says for `arg`.
fn tokens(
    sub: &Command,
    arg: &Arg,
    value: &Val,
    file: &Path,
    line: usize,
    key: &str,
) -> Result<Vec<OsString>, ConfigError> {
    let bad = |message: String| ConfigError::Value {
        file: file.to_owned(),
        line,
        key: key.to_owned(),
        message,
    };
    let long = arg.get_long().map(|l| format!("--{l}"));
    let flag = || OsString::from(long.clone().expect("options have a long name"));
    match (arg.get_action(), value) {
        (ArgAction::SetTrue, Val::Bool(b)) => Ok(if *b { vec![flag()] } else { vec![] }),
        (ArgAction::SetFalse, Val::Bool(b)) => Ok(if *b { vec![] } else { vec![flag()] }),
        (ArgAction::SetTrue | ArgAction::SetFalse, _) => {
            Err(bad(format!("a switch: write `{key} = true` or `false`")))
        }
        (ArgAction::Count, Val::Text(n)) => {
            let n: usize = n
                .parse()
                .map_err(|_| bad("a count: write a whole number".into()))?;
            if n > 16 {
                return Err(bad("a count of at most 16".into()));
            }
            Ok(vec![flag(); n])
        }
        (ArgAction::Count, Val::Bool(b)) => Ok(if *b { vec![flag()] } else { vec![] }),
        (ArgAction::Count, _) => Err(bad("a count: write a whole number".into())),
        (action, Val::List(items)) => {
            let many = matches!(action, ArgAction::Append)
                || arg.get_num_args().is_some_and(|n| n.max_values() > 1);
            if !many {
                return Err(bad("takes one value, not an array".into()));
            }
            let mut out = Vec::new();
            for item in items {
                let v = scalar(item).ok_or_else(|| bad("an array of strings or numbers".into()))?;
                check(sub, arg, &v).map_err(bad)?;
                out.push(word(&long, v));
            }
            Ok(out)
        }
        (_, Val::Table) => Err(bad("a table is not a value of this option".into())),
        (_, v) => {
            let v = scalar(v).ok_or_else(|| bad("not a value of this option".into()))?;
            check(sub, arg, &v).map_err(bad)?;
            Ok(vec![word(&long, v)])
        }
    }
}

fn scalar(v: &Val) -> Option<String> {
    match v {
        Val::Text(s) => Some(s.clone()),
        Val::Bool(b) => Some(b.to_string()),
        Val::List(_) | Val::Table => None,
    }
}

/// `--name=value` for an option (so a value starting with `-` stays a
/// value), the bare value for a positional argument.
fn word(long: &Option<String>, v: String) -> OsString {
    match long {
        Some(l) => OsString::from(format!("{l}={v}")),
        None => OsString::from(v),
    }
}

/// Runs the option's own value parser (by parsing the command with this one
/// value), so a bad value is reported with the file's line rather than as if
/// it had been typed.
fn check(sub: &Command, arg: &Arg, v: &str) -> Result<(), String> {
    use clap::error::ErrorKind;
    let word = word(&arg.get_long().map(|l| format!("--{l}")), v.to_owned());
    let words = [OsString::from(sub.get_name()), word];
    match sub.clone().try_get_matches_from(words) {
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::InvalidValue
                    | ErrorKind::ValueValidation
                    | ErrorKind::InvalidUtf8
                    | ErrorKind::TooManyValues
                    | ErrorKind::TooFewValues
                    | ErrorKind::WrongNumberOfValues
            ) =>
        {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            Err(first.trim_start_matches("error: ").to_owned())
        }
        // Anything else (a required argument missing from this one-value
        // parse) says nothing about the value.
        _ => Ok(()),
    }
}

/// The arguments with the file's options right after the command's name
/// (so the command line's, later, win where clap lets the last one win) and
/// its positional values at the end.
fn splice(
    args: &[OsString],
    chain: &[String],
    opts: Vec<OsString>,
    positionals: Vec<OsString>,
) -> Vec<OsString> {
    let mut at = 1;
    for name in chain {
        match args[at..].iter().position(|a| a.to_str() == Some(name)) {
            Some(i) => at += i + 1,
            None => {
                at = args.len();
                break;
            }
        }
    }
    let mut out: Vec<OsString> = args[..at].to_vec();
    out.extend(opts);
    out.extend(args[at..].iter().cloned());
    if !positionals.is_empty() {
        if !out[at..].iter().any(|a| a == "--") {
            out.push("--".into());
        }
        out.extend(positionals);
    }
    out
}
