//! What a front end's parser hands back: run this `Config` (with, for some runs, a sidecar that
//! frun's own process keeps going beside the jobs), merge a results directory, print a text, or
//! refuse with a personality's own status. Shared by every personality, so that none imports
//! another.

use std::path::PathBuf;

use frun_engine::plan::config::Config;

/// What the command line asks frun to do.
pub enum Invocation {
    Run(Box<Config>),
    /// Run this `Config` with this sidecar started first (GNU Parallel's `--tee --pipe`).
    RunWith(Box<Config>, Sidecar),
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

/// Work that frun's own process must do beside a run (GNU Parallel's `--tee --pipe` copies
/// standard input to every job): started just before the run, stopped when what it returns is
/// dropped (after the run). It is not a job and not part of the engine's `Config`: the command
/// line describes it, the process that runs the `Config` keeps it going.
pub struct Sidecar(Box<dyn FnOnce() -> Result<Box<dyn std::any::Any>, String>>);

impl Sidecar {
    /// A sidecar that `start` starts; its error is one line for the user.
    pub fn new(start: impl FnOnce() -> Result<Box<dyn std::any::Any>, String> + 'static) -> Self {
        Sidecar(Box::new(start))
    }

    /// Starts it: the value it returns keeps it going until dropped.
    pub fn start(self) -> Result<Box<dyn std::any::Any>, String> {
        (self.0)()
    }
}

/// A usage error: one line, exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);
