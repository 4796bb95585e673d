//! The frun engine: runs a command over every record of its input, in parallel, as one
//! [`plan::config::Config`] describes.
//!
//! The pipeline, one folder per stage: [`input`] (the spool of input bytes, the scanner that
//! cuts records and batches) → [`dispatch`] (the rings whose slots workers claim lock-free,
//! the ledger of outcomes) → [`exec`] (the backends that run a batch) → [`output`] (captured
//! output emitted whole or in order, the results directory, joblog, progress), with the
//! [`journal`] recording what is done for a resume. [`plan`] derives each stage's settings from
//! a `Config`, [`run`](mod@run) wires the stages and supervises one run; [`sys`] holds the system calls
//! they share. The front ends (frun's flags, `frun parallel`, `frun xargs`, the bash builtin, the
//! Python module) build the `Config`; nothing here parses a command line.

#![deny(missing_docs)]

/// A message of the engine (a problem, by default; `info:` or `report:` first for the other
/// kinds), handed to the front end's sink ([`sys::notice`]): the engine prints nothing itself.
macro_rules! say {
    (info: $($arg:tt)*) => {
        $crate::sys::notice::say($crate::sys::notice::NoticeKind::Info, format_args!($($arg)*))
    };
    (report: $($arg:tt)*) => {
        $crate::sys::notice::say($crate::sys::notice::NoticeKind::Report, format_args!($($arg)*))
    };
    ($($arg:tt)*) => {
        $crate::sys::notice::say($crate::sys::notice::NoticeKind::Problem, format_args!($($arg)*))
    };
}

pub mod dispatch;
pub mod exec;
pub mod input;
pub mod journal;
pub mod output;
pub mod plan;
pub mod run;
pub mod sys;

use std::sync::Arc;

pub use plan::builder::ConfigBuilder;
pub use plan::config::Config;
pub use plan::error::{ConfigError, RunError};
pub use run::{Ended, RunReport};
pub use sys::exit::ExitCode;
pub use sys::notice::{Fact, Notice, NoticeKind, Notices, WorkerLimit};

/// What a run is given besides its [`Config`]: where its messages go, where worker shells come
/// from (a front end whose commands are functions of its own), whether the process exits after
/// it.
#[derive(Default)]
pub struct Io {
    notices: Option<Arc<dyn Notices>>,
    shell: Option<Arc<dyn exec::shell::Host>>,
    exits_after: bool,
}

impl Io {
    /// The run's messages (a retry given up, a checkpoint kept, `--stats`) go to `notices`.
    pub fn new(notices: Arc<dyn Notices>) -> Io {
        Io {
            notices: Some(notices),
            ..Io::default()
        }
    }

    /// A run that brings no sink of its own: its messages go to the one installed before
    /// ([`sys::notice::install`]; the command-line front ends install theirs at start), or
    /// nowhere when there is none. Its report and its error say how it went either way.
    pub fn quiet() -> Io {
        Io::default()
    }

    /// Batches run in worker shells from `host` (the command is a function of the caller's
    /// shell: [`ConfigBuilder::shell_command`]).
    pub fn with_shell(mut self, host: Arc<dyn exec::shell::Host>) -> Io {
        self.shell = Some(host);
        self
    }

    /// The process exits as soon as the run returns: the run's mappings and descriptors are
    /// left to the exit instead of being freed one by one (faster; see `run::Settings`).
    pub fn exiting(mut self) -> Io {
        self.exits_after = true;
        self
    }
}

/// Runs `config`: plans it (checks it, opens its input, finds its command), runs every batch,
/// and says what happened. `Err` when the run could not start (nothing ran); a run that
/// started returns its [`RunReport`], whose `status` counts failed commands, a halt or a stop
/// by a signal.
///
/// The run blocks SIGINT, SIGTERM, SIGHUP (and with `FRUN_PREEMPT`, USR1, USR2, XCPU, XFSZ) in
/// every thread while it lasts and reads them itself: one of them stops the run, which then
/// reports [`Ended::Signal`].
///
/// ```
/// use std::sync::{Arc, Mutex};
///
/// use frun_engine::{ConfigBuilder, Ended, ExitCode, Io, Notice};
///
/// let input = std::env::temp_dir().join(format!("frun-doc-{}", std::process::id()));
/// std::fs::write(&input, "a\nb\nc\n").unwrap();
/// let config = ConfigBuilder::new(["true"])
///     .input_file(&input)
///     .workers(2)
///     .for_library()
///     .build()
///     .unwrap();
/// let said = Arc::new(Mutex::new(Vec::new()));
/// let sink = said.clone();
/// let io = Io::new(Arc::new(move |n: &Notice<'_>| sink.lock().unwrap().push(n.text.to_string())));
/// let report = frun_engine::run(&config, io).unwrap();
/// assert_eq!(report.status, ExitCode::Success);
/// assert_eq!(report.ended, Ended::Done);
/// assert_eq!(report.failed, 0);
/// assert!(report.succeeded >= 1);
/// assert!(said.lock().unwrap().is_empty());
///
/// let missing = ConfigBuilder::new(["no-such-command-frun-doc"]).build().unwrap();
/// let e = frun_engine::run(&missing, Io::quiet()).unwrap_err();
/// assert_eq!(e.status(), ExitCode::NotFound);
/// std::fs::remove_file(&input).unwrap();
/// ```
pub fn run(config: &Config, io: Io) -> Result<RunReport, RunError> {
    if let Some(n) = io.notices {
        sys::notice::install(n);
    }
    let settings = plan::plan(config)?;
    let settings = run::Settings {
        exits_after: io.exits_after,
        ..settings
    };
    // Block the stop signals in every thread (the supervisor reads them from a signalfd);
    // children get the original mask back.
    let exits_after = settings.exits_after;
    let preempt = settings.preempt;
    let original = sys::block_signals(&run::stop_signals(preempt));
    // An inherited "ignore SIGCHLD" would make the kernel reap children before frun can read
    // their status.
    sys::default_disposition(libc::SIGCHLD);
    let book = settings.share.clone();
    let mut report = run::run_reporting(settings, *original.as_ref(), io.shell.clone());
    if let Some(book) = book {
        report = shared_passes(config, &book, report, preempt, |s| {
            let s = run::Settings {
                exits_after: io.exits_after,
                ..s
            };
            run::run_reporting(s, *original.as_ref(), io.shell.clone())
        });
    }
    if !exits_after {
        // The caller goes on: its signals are its own again (one that came after the run
        // stopped reading them is delivered now).
        let _ = original.thread_set_mask();
    }
    Ok(report)
}

/// The passes after the first of a task sharing its run by claims: while other tasks hold
/// open claims it waits (renewing its lease), and when one of them was lost, or chunks are
/// left unclaimed, it runs another pass over the input for them. It leaves the run (its lease
/// says so) when nothing is left, when it is stopped, or when the job's end is near.
fn shared_passes(
    config: &Config,
    book: &Arc<input::shard::claims::Book>,
    mut report: RunReport,
    preempt: bool,
    mut run_pass: impl FnMut(run::Settings) -> RunReport,
) -> RunReport {
    use input::shard::claims::Rest;
    let signals = sys::signalfd(&run::stop_signals(preempt)).ok();
    'passes: while report.ended == Ended::Done {
        loop {
            match book.rest() {
                Rest::Done => break 'passes,
                Rest::Again => break,
                Rest::Wait => {}
            }
            // A stop signal while waiting ends the task as it would end a pass.
            let wait = nix::poll::PollTimeout::from(200u16);
            if let Some(fd) = &signals {
                use std::os::fd::AsFd;
                let mut p = [nix::poll::PollFd::new(
                    fd.as_fd(),
                    nix::poll::PollFlags::POLLIN,
                )];
                if nix::poll::poll(&mut p, wait).unwrap_or(0) > 0 {
                    if let Some(sig) = sys::read_signal(fd.as_fd()) {
                        report.status = ExitCode::Signal(sig);
                        report.ended = Ended::Signal(sig);
                        break 'passes;
                    }
                }
            } else {
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
        }
        // The input is read again from its start (a file: -a FILE, or stdin from one).
        if matches!(config.input, plan::config::InputSpec::Stdin) {
            let _ = nix::unistd::lseek(std::io::stdin(), 0, nix::unistd::Whence::SeekSet);
        }
        match plan::plan_pass(config, Some(Arc::clone(book))) {
            Ok(settings) => {
                let next = run_pass(settings);
                report = RunReport {
                    status: worse(report.status, next.status),
                    batches: report.batches + next.batches,
                    failed: report.failed + next.failed,
                    succeeded: report.succeeded + next.succeeded,
                    ..next
                };
            }
            Err(e) => {
                say!("{e}");
                report.status = e.status();
                report.ended = Ended::Failed;
            }
        }
    }
    book.leave();
    if config.stats {
        say!(report: "{}", book.stats_line());
    }
    report
}

/// The status of two passes together: a failure over success, an error or a signal over both.
fn worse(a: ExitCode, b: ExitCode) -> ExitCode {
    match (a, b) {
        (ExitCode::Success, x) | (x, ExitCode::Success) => x,
        (_, x) => x,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::error::Subject;

    /// A run that cannot start says what it could not use, by path or setting.
    #[test]
    fn errors_name_what_is_at_fault() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = ConfigBuilder::new(["true"])
            .input_file(dir.path())
            .for_library()
            .build()
            .unwrap();
        match run(&cfg, Io::quiet()) {
            Err(RunError::Unusable {
                subject: Subject::Input(Some(p)),
                message,
            }) => {
                assert_eq!(p, dir.path());
                assert_eq!(message, "the input is a directory");
            }
            other => panic!("{other:?}"),
        }

        let missing = dir.path().join("no-such-checkpoint");
        let mut cfg = ConfigBuilder::new(["true"]).for_library().build().unwrap();
        cfg.resume = Some(missing.clone());
        match run(&cfg, Io::quiet()) {
            Err(e @ RunError::Missing { .. }) => {
                assert_eq!(e.status(), ExitCode::Error);
                let RunError::Missing { path, .. } = e else {
                    unreachable!()
                };
                assert_eq!(path, missing);
            }
            other => panic!("{other:?}"),
        }

        let mut cfg = ConfigBuilder::new(["true"]).for_library().build().unwrap();
        cfg.workers = plan::config::Range {
            init: plan::config::Bound::Value(4),
            max: plan::config::Bound::Value(2),
        };
        match run(&cfg, Io::quiet()) {
            Err(RunError::Config(e)) => assert_eq!(e.option(), "workers"),
            other => panic!("{other:?}"),
        }

        let e = ConfigBuilder::new([""]).build().unwrap_err();
        assert_eq!(
            (e.option(), e.message()),
            ("command", "the command name is empty")
        );
    }
}
