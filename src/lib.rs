//! frun runs a command over every record of its input, in parallel.
//!
//! The pipeline, one module per stage: [`spool`] (input bytes) → [`scan`] (records, batches) →
//! [`ring`] (slots claimed lock-free) → [`worker`] (runs [`exec`] backends) → [`output`]
//! (captured stdout, emitted whole or in order), with the [`ledger`] keeping outcomes.
//! [`cli`] turns flags into a `Config`, [`plan`] derives the run from it, [`engine`] wires the
//! stages and supervises the run.

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

#[cfg(feature = "bash")]
mod bash;
pub mod batch;
pub mod bounds;
pub mod cli;
pub mod engine;
pub mod errors;
pub mod exec;
pub mod exit;
pub mod joblog;
pub mod journal;
pub mod ledger;
pub mod linebuf;
pub mod numa;
pub mod output;
pub mod pace;
pub mod plan;
pub mod progress;
pub mod results;
pub mod ring;
pub mod rings;
pub mod scan;
pub mod shard;
pub mod slots;
pub mod spool;
pub mod stats;
pub mod stop;
pub mod sys;
pub mod xargs_input;

use std::io::Write;

pub use exit::ExitCode;

/// Which standard descriptors were closed when the process started, before the Rust runtime
/// reopened them on /dev/null (the binary finds out; see `src/main.rs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ClosedAtStart {
    pub stdin: bool,
    pub stdout: bool,
}

/// Runs frun with this process's arguments; returns the exit status.
///
/// A closed stdout is refused (status 1, as for any stdout frun cannot write): output would be
/// lost while the run reports success. A closed stdin is refused (status 2, as an input file that
/// cannot be opened) when the records would come from it; with `-a FILE` it does not matter.
pub fn main_with_args(
    args: impl IntoIterator<Item = std::ffi::OsString>,
    closed: ClosedAtStart,
) -> ExitCode {
    let mut args = args.into_iter().peekable();
    // Started by a worker as its plugin host (`-C`), not as frun.
    if args
        .peek()
        .is_some_and(|a| a.as_encoded_bytes() == exec::plugin::HOST_NAME.as_bytes())
    {
        return ExitCode::Passed(exec::plugin_host::main(args.collect()));
    }
    if closed.stdout {
        eprintln!("frun: standard output is closed: the output would be lost (use >/dev/null)");
        return ExitCode::Error;
    }
    match parse_args(args) {
        Ok(cfg) if closed.stdin && cfg.input == cli::InputSpec::Stdin => {
            eprintln!(
                "frun: standard input is closed: no records to read (use -a FILE, or </dev/null \
                 for no input)"
            );
            ExitCode::Usage
        }
        Ok(cfg) => {
            let code = run_config_then_exit(&cfg, None);
            // The process exits next: freeing a sweep's hundred thousand words one by one
            // would only cost time.
            std::mem::forget(cfg);
            code
        }
        Err(code) => code,
    }
}

/// Parses the arguments. What needs no run (help, version, `frun merge`, a usage error) is done
/// here and comes back as the exit status.
pub fn parse_args(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Result<cli::Config, ExitCode> {
    match cli::parse(args) {
        Ok(cli::Invocation::Run(cfg)) => Ok(*cfg),
        Ok(cli::Invocation::Merge(dir)) => Err(results::merge(&dir)),
        Ok(cli::Invocation::Print(text)) => {
            let mut out = std::io::stdout().lock();
            Err(match out.write_all(&text).and_then(|()| out.flush()) {
                Ok(()) => ExitCode::Success,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::Success,
                Err(e) => {
                    eprintln!("frun: {}", errors::os_message(&e));
                    ExitCode::Error
                }
            })
        }
        Ok(cli::Invocation::Refuse { message, status }) => {
            eprintln!("frun: {message}");
            Err(status)
        }
        Err(cli::UsageError(msg)) => {
            eprintln!("frun: {msg} (see frun --help)");
            Err(ExitCode::Usage)
        }
    }
}

/// Plans and runs a parsed invocation; returns the exit status. `shell` is where worker shells
/// come from when the command is a bash function (the bash front end).
pub fn run_config(
    cfg: &cli::Config,
    shell: Option<std::sync::Arc<dyn exec::shell::Host>>,
) -> ExitCode {
    run_config_reporting(cfg, shell).0
}

/// [`run_config`] for a process that exits as soon as it returns: the run's state is left to
/// the exit instead of being freed (see `engine::Settings::exits_after`).
pub fn run_config_then_exit(
    cfg: &cli::Config,
    shell: Option<std::sync::Arc<dyn exec::shell::Host>>,
) -> ExitCode {
    run_planned(cfg, shell, true).0
}

/// [`run_config`], also saying what the run did (None when it did not start: a usage error or
/// a command that cannot run), for a front end whose exit status counts jobs.
pub fn run_config_reporting(
    cfg: &cli::Config,
    shell: Option<std::sync::Arc<dyn exec::shell::Host>>,
) -> (ExitCode, Option<engine::RunReport>) {
    run_planned(cfg, shell, false)
}

fn run_planned(
    cfg: &cli::Config,
    shell: Option<std::sync::Arc<dyn exec::shell::Host>>,
    exits_after: bool,
) -> (ExitCode, Option<engine::RunReport>) {
    let settings = match plan::plan(cfg) {
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
    if settings.scan.shard.is_some() {
        // The commands of a task of a split run are not tasks themselves: a frun they run
        // (seeing the same Slurm variables) must do all of its own input.
        // SAFETY: no other thread exists, so none reads or writes the environment meanwhile:
        // the binary plans before starting any, and the bash and Python front ends plan in
        // their forked, single-threaded engine process.
        unsafe { std::env::set_var("FRUN_SHARD", "none") };
    }
    // Block the stop signals in every thread (the supervisor reads them from a signalfd);
    // children get the original mask back.
    let settings = engine::Settings {
        exits_after,
        ..settings
    };
    let original = *sys::block_signals(&engine::stop_signals(settings.preempt)).as_ref();
    // An inherited "ignore SIGCHLD" would make the kernel reap children before frun can read
    // their status.
    sys::default_disposition(libc::SIGCHLD);
    let (code, report) = engine::run_reporting(settings, original, shell);
    (code, Some(report))
}
