//! [`RulesError`]: why a set of extraction rules was refused at load time.
//!
//! Every problem is found when the rules are loaded, never halfway through a
//! crawl, and the message names the rule set and the field it is in.

/// Extraction rules that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// The rules file could not be read.
    #[error("cannot read the rules file {path}")]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The rules are not valid TOML.
    #[error("the rules are not valid TOML")]
    Toml(#[source] toml::de::Error),
    /// No rule set, or a rule set without fields.
    #[error("{0}")]
    Empty(String),
    /// A rule set is wrong as a whole (its name, its URL pattern, its `item`).
    #[error("rule set `{set}`: {problem}")]
    Set {
        /// The rule set's name.
        set: String,
        /// What is wrong.
        problem: String,
        /// The underlying error, if any (a regex error, for instance).
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// One field of a rule set is wrong.
    #[error("rule set `{set}`, field `{field}`: {problem}")]
    Field {
        /// The rule set's name.
        set: String,
        /// The field's name.
        field: String,
        /// What is wrong.
        problem: String,
        /// The underlying error, if any.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// An inline field (`--field NAME=SPEC`) is not of that form.
    #[error("--field {spec:?}: {problem}")]
    Inline {
        /// The argument as given.
        spec: String,
        /// What is wrong.
        problem: String,
    },
}

impl RulesError {
    pub(crate) fn set(set: &str, problem: impl Into<String>) -> RulesError {
        RulesError::Set {
            set: set.to_string(),
            problem: problem.into(),
            source: None,
        }
    }

    pub(crate) fn field(set: &str, field: &str, problem: impl Into<String>) -> RulesError {
        RulesError::Field {
            set: set.to_string(),
            field: field.to_string(),
            problem: problem.into(),
            source: None,
        }
    }

    /// The same error with an underlying cause attached.
    pub(crate) fn because(
        mut self,
        cause: impl std::error::Error + Send + Sync + 'static,
    ) -> RulesError {
        if let RulesError::Set { source, .. } | RulesError::Field { source, .. } = &mut self {
            *source = Some(Box::new(cause));
        }
        self
    }
}
