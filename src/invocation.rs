//! What a front end's parser hands back: run this `Config`, merge a results directory, print a
//! text, or refuse with a personality's own status. Shared by every personality, so that none
//! imports another.

use std::path::PathBuf;

use frun_engine::plan::config::Config;

/// What the command line asks frun to do.
pub enum Invocation {
    Run(Box<Config>),
    /// `frun merge DIR`: write a results directory's combined output.
    Merge(PathBuf),
    /// Do this (a personality's own small task, such as GNU Parallel's `sem`) and exit with
    /// the status it returns.
    Act(Box<dyn FnOnce() -> frun_engine::ExitCode>),
    /// Print this text to stdout and exit 0 (`--help`, `--version`, `--generate`).
    Print(Vec<u8>),
    /// Say this (one line) and exit with this status: a personality's usage error, with its
    /// tool's status.
    Refuse {
        message: String,
        status: frun_engine::ExitCode,
    },
    /// Print this text to stderr as it is (the lines a personality's tool prints, its own
    /// program name in them) and exit with this status.
    Fail {
        text: String,
        status: frun_engine::ExitCode,
    },
}

/// A usage error: one line, exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);
