//! The engine's typed errors: a [`ConfigError`] names the setting at fault in a `Config`; a
//! [`RunError`] says why a run could not start. Each words itself in one line and implements
//! `std::error::Error`; the exit status a front end gives each is its own choice
//! ([`RunError::status`] is frun's).

use std::fmt;
use std::path::PathBuf;

use crate::exec::resolve::ResolveError;
use crate::sys::exit::ExitCode;

/// A setting that cannot run as given, or two that cannot run together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    option: &'static str,
    message: String,
}

impl ConfigError {
    /// The setting at fault, by its [`ConfigBuilder`](super::builder::ConfigBuilder) name
    /// (`workers`, `delimiter`, `results`, …), and what is wrong with it.
    pub fn new(option: &'static str, message: impl Into<String>) -> ConfigError {
        ConfigError {
            option,
            message: message.into(),
        }
    }

    /// The setting at fault, as the builder names it.
    pub fn option(&self) -> &'static str {
        self.option
    }

    /// What is wrong, one line.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// What a run could not use.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Subject {
    /// The input: this file, or standard input and the input sources (None).
    Input(Option<PathBuf>),
    /// The checkpoint journal: this file, or the default one (None).
    Checkpoint(Option<PathBuf>),
    /// The results directory, or the per-job output files' name.
    Results(PathBuf),
    /// The joblog.
    Joblog(PathBuf),
    /// This environment variable's value.
    Environment(&'static str),
    /// What the system gives a run: a pipe, memory for the input.
    System,
}

/// Why a run could not start. Nothing ran; nothing of the input was read past what the check
/// needed.
#[derive(Debug)]
pub enum RunError {
    /// A setting cannot run as given.
    Config(ConfigError),
    /// The input, a checkpoint, a results directory, the joblog, the environment or the
    /// machine cannot serve this run (a directory as input, a journal of another run, no
    /// memory for a pipe's input).
    Unusable {
        /// What could not be used.
        subject: Subject,
        /// Why, one line.
        message: String,
    },
    /// A file the run needs is not there (the checkpoint a resume names).
    Missing {
        /// The file.
        path: PathBuf,
        /// What it was for, one line.
        message: String,
    },
    /// The command cannot be run: not found, or not executable.
    Command(ResolveError),
}

impl RunError {
    /// frun's own exit status for it: 2, 1, or 127/126 (another front end may give its own:
    /// GNU Parallel's 255, xargs' 1).
    pub fn status(&self) -> ExitCode {
        match self {
            RunError::Config(_) | RunError::Unusable { .. } => ExitCode::Usage,
            RunError::Missing { .. } => ExitCode::Error,
            RunError::Command(e) => e.status(),
        }
    }

    /// `subject` could not be used, for this reason.
    pub fn unusable(subject: Subject, message: impl Into<String>) -> RunError {
        RunError::Unusable {
            subject,
            message: message.into(),
        }
    }

    /// The setting `option` is refused, for this reason.
    pub fn config(option: &'static str, message: impl Into<String>) -> RunError {
        RunError::Config(ConfigError::new(option, message))
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Config(e) => e.fmt(f),
            RunError::Unusable { message, .. } | RunError::Missing { message, .. } => {
                f.write_str(message)
            }
            RunError::Command(e) => f.write_str(e.message()),
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Config(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ConfigError> for RunError {
    fn from(e: ConfigError) -> RunError {
        RunError::Config(e)
    }
}
