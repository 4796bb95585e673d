//! frun's front ends: the command lines users type, each turned into one engine
//! `Config` (`frun_engine::Config`) and its run's outcome turned back into words
//! and an exit status.
//!
//! [`native`] is frun's own flags, [`parallel`] GNU Parallel's command line (`frun parallel`),
//! [`xargs`] GNU xargs' (`frun xargs`); all three produce an [`Invocation`], and share the value
//! parsers of [`units`]. The bash builtin (feature `bash`) parses its arguments with the same
//! parsers; the Python module is a crate of its own (python/). The engine (`frun_engine`)
//! knows none of them.

use frun_engine::sys::errors::PROG;

/// Shadows std's `eprintln!` in every module of the crate (they are declared below it), for two
/// reasons. std's panics when stderr cannot be written, as when it is a pipe whose reader has
/// gone, which would turn any message into a panic and exit status 101: here a message that
/// cannot be written is dropped and the run and its status go on unchanged. And std's writes a
/// message piece by piece (the name, `: `, the text, the newline: one `write` each, stderr being
/// unbuffered), so that the jobs' output, going to the same pipe under `2>&1`, could land inside
/// a message: here the whole line is made first and written at once.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        let mut line = format!($($arg)*);
        line.push('\n');
        frun_engine::sys::notice::write_whole(&line);
    }};
}

/// Shadows std's `eprint!` for the same reasons as [`eprintln!`].
macro_rules! eprint {
    ($($arg:tt)*) => {
        frun_engine::sys::notice::write_whole(&format!($($arg)*))
    };
}

#[cfg(feature = "bash")]
mod bash;
pub mod invocation;
pub mod native;
pub mod parallel;
pub mod units;
pub mod xargs;

use std::io::Write;

pub use frun_engine::ExitCode;
use frun_engine::plan::config::Config;
use frun_engine::run::Statuses;
use frun_engine::{Io, RunError, exec, output::results, sys::errors};
pub use invocation::{Invocation, Sidecar, UsageError};

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
    install_notices();
    let mut args = args.into_iter().peekable();
    // Started by a worker as its plugin host (`-C`), not as frun.
    if args
        .peek()
        .is_some_and(|a| a.as_encoded_bytes() == exec::plugin::HOST_NAME.as_bytes())
    {
        return ExitCode::Passed(exec::plugin::host::main(args.collect()));
    }
    let args: Vec<std::ffi::OsString> = args.collect();
    if let Some(name) = xargs_name(&args) {
        errors::set_program_name(&name);
    }
    let args = args.into_iter();
    if closed.stdout {
        eprintln!("{PROG}: standard output is closed: the output would be lost (use >/dev/null)");
        return ExitCode::Error;
    }
    match parse_args(args) {
        Ok(run) if closed.stdin && run.cfg.input == frun_engine::plan::config::InputSpec::Stdin => {
            eprintln!(
                "{PROG}: standard input is closed: no records to read (use -a FILE, or </dev/null \
                 for no input)"
            );
            ExitCode::Usage
        }
        Ok(Parsed { cfg, sidecar }) => {
            // `frun parallel --tee --pipe`: all of stdin to every job (see parallel/tee.rs).
            let sidecar = match sidecar.map(Sidecar::start).transpose() {
                Ok(s) => s,
                Err(m) => {
                    eprintln!("{PROG}: {m}");
                    return ExitCode::Passed(255);
                }
            };
            let code = run_config(&cfg, None, true);
            drop(sidecar);
            // The process exits next: freeing a sweep's hundred thousand words one by one
            // would only cost time.
            std::mem::forget(cfg);
            code
        }
        Err(code) => code,
    }
}

/// The name messages start with when frun is xargs: GNU xargs prints its `argv[0]` as given
/// (`xargs`, `./xargs`), and `frun xargs` is xargs invoked as `xargs`.
fn xargs_name(args: &[std::ffi::OsString]) -> Option<String> {
    let first = args.first()?;
    let called = std::path::Path::new(first).file_name().unwrap_or_default();
    if xargs::is_name(called) {
        return Some(first.to_string_lossy().into_owned());
    }
    let by_word = !parallel::is_name(called) && args.get(1).is_some_and(|w| xargs::is_name(w));
    by_word.then(|| "xargs".to_string())
}

/// A command line that asks for a run: its checked `Config`, and the sidecar (if any) that
/// frun's own process keeps going beside the run.
pub struct Parsed {
    /// The run, as the engine's builder accepted it.
    pub cfg: Config,
    /// Started just before the run, dropped after it (`--tee --pipe`'s feeder).
    pub sidecar: Option<Sidecar>,
}

/// Parses the arguments. What needs no run (help, version, `frun merge`, a usage error) is done
/// here and comes back as the exit status.
pub fn parse_args(args: impl IntoIterator<Item = std::ffi::OsString>) -> Result<Parsed, ExitCode> {
    // Every front end's Config passes the engine's builder: settings that cannot go
    // together are refused here, before any input is opened.
    let checked = |cfg: Box<Config>, sidecar| {
        let statuses = cfg.conduct.statuses;
        frun_engine::ConfigBuilder::from_config(*cfg)
            .build()
            .map(|cfg| Parsed { cfg, sidecar })
            .map_err(|e| {
                eprintln!("{PROG}: {e}");
                refusal_status(statuses, &RunError::Config(e))
            })
    };
    match parse(args) {
        Ok(Invocation::Run(cfg)) => checked(cfg, None),
        Ok(Invocation::RunWith(cfg, sidecar)) => checked(cfg, Some(sidecar)),
        Ok(Invocation::Merge(dir)) => Err(match results::merge(&dir) {
            Ok(()) => ExitCode::Success,
            Err(e @ results::MergeError::Incomplete(_)) => {
                eprintln!("frun merge: {e}");
                ExitCode::Error
            }
            Err(e @ results::MergeError::Unusable(_)) => {
                eprintln!("frun merge: {e}");
                ExitCode::Usage
            }
        }),
        Ok(Invocation::Act(act)) => Err(act()),
        Ok(Invocation::Print(text)) => {
            let mut out = std::io::stdout().lock();
            Err(match out.write_all(&text).and_then(|()| out.flush()) {
                Ok(()) => ExitCode::Success,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::Success,
                Err(e) => {
                    eprintln!("{PROG}: {}", errors::os_message(&e));
                    ExitCode::Error
                }
            })
        }
        Ok(Invocation::Refuse { message, status }) => {
            eprintln!("{PROG}: {message}");
            Err(status)
        }
        Ok(Invocation::Fail { text, status }) => {
            eprint!("{text}");
            Err(status)
        }
        Err(UsageError(msg)) => {
            eprintln!("{PROG}: {msg} (see frun --help)");
            Err(ExitCode::Usage)
        }
    }
}

/// Parses a whole command line (including `argv[0]`) with the personality it names: `parallel`,
/// `sem` (`parallel --semaphore`) or `xargs` as the program's name (a link) or as its first
/// word, else frun's own flags.
pub fn parse(args: impl IntoIterator<Item = std::ffi::OsString>) -> Result<Invocation, UsageError> {
    let mut args: Vec<std::ffi::OsString> = args.into_iter().collect();
    // Started as `parallel` or `xargs` (a link), or `frun parallel …` / `frun xargs …`.
    let called = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .unwrap_or_default();
    if parallel::is_name(called) {
        args.drain(..1);
        return Ok(parallel::parse(args));
    }
    // GNU Parallel's `sem` is `parallel --semaphore`.
    if called == "sem" {
        args[0] = "--semaphore".into();
        return Ok(parallel::parse(args));
    }
    if xargs::is_name(called) {
        return Ok(xargs::parse(&args[1..]));
    }
    match args.get(1) {
        Some(w) if parallel::is_name(w) => {
            args.drain(..2);
            return Ok(parallel::parse(args));
        }
        Some(w) if xargs::is_name(w) => return Ok(xargs::parse(&args[2..])),
        Some(w) if w == "sem" => {
            args.drain(..1);
            args[0] = "--semaphore".into();
            return Ok(parallel::parse(args));
        }
        _ => {}
    }
    native::parse(args)
}

/// Sends the engine's messages to stderr, each after the program's name (`frun`, or the name
/// a personality was invoked as: [`PROG`]) — a report as it is. A message that cannot be
/// written (stderr closed, its reader gone) is dropped; the run goes on.
pub fn install_notices() {
    install_notices_for(Statuses::Summarised);
}

/// [`install_notices`] for the personality whose exit statuses are `statuses`: GNU Parallel's
/// words some messages as GNU does ([`parallel::gnu_words`]).
fn install_notices_for(statuses: Statuses) {
    use frun_engine::sys::notice::{Notice, NoticeKind, install};
    let gnu = statuses == Statuses::JobCount;
    install(std::sync::Arc::new(move |n: &Notice<'_>| {
        if let Some(words) = gnu.then(|| parallel::gnu_words(n)).flatten() {
            // GNU Parallel says nothing where its words are none.
            if !words.is_empty() {
                eprintln!("{words}");
            }
            return;
        }
        match n.kind {
            NoticeKind::Report => eprintln!("{}", n.text),
            NoticeKind::Problem | NoticeKind::Info => eprintln!("{PROG}: {}", n.text),
        }
    }));
}

/// Runs `cfg` (its messages go to the sink [`install_notices`] set) and gives the exit status
/// of the personality that parsed it: the run's own, or for a run that could not start, the
/// personality's status for that (GNU Parallel's 255, xargs' 1, frun's 2, 1, 126 or 127).
/// `shell` is where worker shells come from when the command is a bash function;
/// `exits_after`: the process exits as soon as this returns.
pub fn run_config(
    cfg: &Config,
    shell: Option<std::sync::Arc<dyn exec::shell::Host>>,
    exits_after: bool,
) -> ExitCode {
    if cfg.conduct.statuses != Statuses::Summarised {
        install_notices_for(cfg.conduct.statuses);
    }
    let mut io = Io::quiet();
    if let Some(host) = shell {
        io = io.with_shell(host);
    }
    if exits_after {
        io = io.exiting();
    }
    match frun_engine::run(cfg, io) {
        Ok(report) => report.status,
        Err(e) => {
            eprintln!("{PROG}: {e}");
            refusal_status(cfg.conduct.statuses, &e)
        }
    }
}

/// The exit status of a run that could not start, as the personality that asked for it gives
/// one (each personality's runs count their failures in a way of their own).
fn refusal_status(statuses: Statuses, e: &RunError) -> ExitCode {
    match statuses {
        Statuses::Summarised => e.status(),
        Statuses::JobCount => parallel::refusal_status(e),
        Statuses::Plain => xargs::refusal_status(e),
    }
}
