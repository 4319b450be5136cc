//! `--config FILE`: every option of every command from a TOML file, under the
//! command line's flags.
//!
//! The file's entries are turned into arguments and handed to clap together
//! with the command line's, so an option has one definition (its clap
//! argument: name, value parser, help, default) whether it comes from a flag or
//! a file, and `--help`, the man page, the reference and the file cannot
//! disagree. Precedence, highest first: the command line, the command's table
//! in the file (`[crawl]`, `[fetch]`, …), the file's top level, the built-in
//! default. A file's top-level key that is an option of some other command
//! only is left alone, so one file serves `crawl`, `worker` and `fetch`; a key
//! no command has, or one in a command's table that the command lacks, is an
//! error naming the file, the line and the key.
//!
//! Keys are the long flag names (`max-tasks`, or `max_tasks`), positional
//! arguments by their name (`roots`, `urls`, `names`). A switch is `true` or
//! `false`; a repeatable option takes an array; numbers and strings are
//! written as TOML numbers and strings, in the syntax the flag takes
//! (`timeout = "30s"`, `max-body-size = "10M"`).

mod exposed;
mod file;
mod print;

pub use exposed::warn_if_rendering;
pub use file::{Expanded, expand};
pub use print::print_config;

#[cfg(test)]
mod tests;
