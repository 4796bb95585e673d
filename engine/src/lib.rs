//! The frun engine: runs a command over every record of its input, in parallel, as one
//! [`plan::config::Config`] describes.
//!
//! The pipeline, one folder per stage: [`input`] (the spool of input bytes, the scanner that
//! cuts records and batches) → [`dispatch`] (the rings whose slots workers claim lock-free,
//! the ledger of outcomes) → [`exec`] (the backends that run a batch) → [`output`] (captured
//! output emitted whole or in order, the results directory, joblog, progress), with the
//! [`journal`] recording what is done for a resume. [`plan`] derives each stage's settings from
//! a `Config`, [`run`] wires the stages and supervises one run; [`sys`] holds the system calls
//! they share. The front ends (frun's flags, `frun parallel`, `frun xargs`, the bash builtin, the
//! Python module) build the `Config`; nothing here parses a command line.

#![deny(missing_docs)]

/// Shadows std's `eprintln!` in every module of the crate (they are declared below it): std's
/// panics when stderr cannot be written, as when it is a pipe whose reader has gone, which would
/// turn any message into a panic and exit status 101. A message that cannot be written is
/// dropped; the run and its status go on unchanged.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod dispatch;
pub mod exec;
pub mod input;
pub mod journal;
pub mod output;
pub mod plan;
pub mod run;
pub mod sys;

pub use sys::exit::ExitCode;

/// Plans and runs a parsed invocation; returns the exit status. `shell` is where worker shells
/// come from when the command is a bash function (the bash front end).
pub fn run_config(
    cfg: &plan::config::Config,
    shell: Option<std::sync::Arc<dyn exec::shell::Host>>,
) -> ExitCode {
    run_config_reporting(cfg, shell).0
}

/// [`run_config`] for a process that exits as soon as it returns: the run's state is left to
/// the exit instead of being freed (see `run::Settings::exits_after`).
pub fn run_config_then_exit(
    cfg: &plan::config::Config,
    shell: Option<std::sync::Arc<dyn exec::shell::Host>>,
) -> ExitCode {
    run_planned(cfg, shell, true).0
}

/// [`run_config`], also saying what the run did (None when it did not start: a usage error or
/// a command that cannot run), for a front end whose exit status counts jobs.
pub fn run_config_reporting(
    cfg: &plan::config::Config,
    shell: Option<std::sync::Arc<dyn exec::shell::Host>>,
) -> (ExitCode, Option<run::RunReport>) {
    run_planned(cfg, shell, false)
}

fn run_planned(
    cfg: &plan::config::Config,
    shell: Option<std::sync::Arc<dyn exec::shell::Host>>,
    exits_after: bool,
) -> (ExitCode, Option<run::RunReport>) {
    // SAFETY: no other thread exists: the binary plans before starting any, and the bash front
    // end plans in its forked, single-threaded engine process.
    let settings = match unsafe { plan::plan(cfg) } {
        Ok(p) => p,
        Err(plan::PlanError::Usage(msg)) => {
            eprintln!("frun: {msg}");
            // GNU Parallel ends with 255 on every error that is not a job's; xargs with 1.
            match cfg.dialect {
                plan::config::Dialect::Parallel => return (ExitCode::Passed(255), None),
                plan::config::Dialect::Xargs => return (ExitCode::Passed(1), None),
                plan::config::Dialect::Frun => return (ExitCode::Usage, None),
            }
        }
        Err(plan::PlanError::Missing(msg)) => {
            eprintln!("frun: {msg}");
            let code = match cfg.dialect {
                plan::config::Dialect::Parallel => ExitCode::Passed(255),
                plan::config::Dialect::Xargs => ExitCode::Passed(1),
                plan::config::Dialect::Frun => ExitCode::Error,
            };
            return (code, None);
        }
        Err(plan::PlanError::Command(e)) => {
            eprintln!("frun: {}", e.message());
            return (e.status(), None);
        }
    };
    // Block the stop signals in every thread (the supervisor reads them from a signalfd);
    // children get the original mask back.
    let settings = run::Settings {
        exits_after,
        ..settings
    };
    let original = *sys::block_signals(&run::stop_signals(settings.preempt)).as_ref();
    // An inherited "ignore SIGCHLD" would make the kernel reap children before frun can read
    // their status.
    sys::default_disposition(libc::SIGCHLD);
    let (code, report) = run::run_reporting(settings, original, shell);
    (code, Some(report))
}
