//! Why a run is stopping, decided once (the first reason wins), and an eventfd that becomes
//! readable at that moment so blocked stages wake up. It does not kill or clean up anything.

use std::os::fd::RawFd;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::sys::Event;

/// The reason a run ended early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// A signal arrived (exit 128 + n).
    Signal(i32),
    /// Nobody reads stdout any more (quiet exit 0).
    ReaderGone,
    /// An error frun cannot continue after (exit 1).
    Fatal(String),
    /// `--halt` was reached (on failures: exit 1); `now` ends running commands, otherwise they
    /// finish.
    Halt {
        /// Running commands are ended at once.
        now: bool,
        /// Which batches `--halt` counted.
        on: crate::dispatch::ledger::HaltOn,
        /// Jobs failed when it was reached (GNU Parallel's status counts them, not the
        /// failures of jobs that were still running).
        failed: u64,
        /// The job that reached it: whether it failed, and its command line as shown.
        job: Option<(bool, String)>,
    },
    /// The run cannot go on as asked, e.g. `--resume` with another input (exit 2).
    Refused(String),
    /// The command cannot be started at all (a missing interpreter, a file gone): exit 126 or
    /// 127, reported once.
    CannotRun(crate::exec::resolve::ResolveError),
    /// A worker shell's setup code (`FORKRUN_EXTRA_SETUP`) failed with this status (exit with
    /// it).
    Setup(i32),
    /// A command's end stops the run at once, as the personality's tool does (xargs: a command
    /// exited 255, 124; was killed, 125): this message, this status.
    Abort {
        /// The one-line message (without `frun: `).
        message: String,
        /// The exit status.
        status: i32,
        /// What the message states, for a front end that words it as another tool does.
        fact: Option<crate::sys::notice::Fact>,
    },
}

/// The run's stop: its reason, set once, and an eventfd readable from then on.
pub struct Stop {
    /// 0 = running; otherwise set once.
    state: AtomicU32,
    reason: Mutex<Option<StopReason>>,
    event: Event,
}

impl Stop {
    /// A run not stopping yet.
    pub fn new() -> std::io::Result<Stop> {
        Ok(Stop {
            state: AtomicU32::new(0),
            reason: Mutex::new(None),
            event: Event::new()?,
        })
    }

    /// Requests a stop; returns true if this call decided the reason.
    pub fn request(&self, reason: StopReason) -> bool {
        if self
            .state
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return false;
        }
        *self.reason.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
        self.event.signal();
        true
    }

    /// True when running batches may finish (and count) although the run is stopping.
    pub fn drains(&self) -> bool {
        self.is_stopped() && matches!(self.reason(), Some(StopReason::Halt { now: false, .. }))
    }

    /// Whether a stop was requested.
    pub fn is_stopped(&self) -> bool {
        self.state.load(Ordering::Acquire) != 0
    }

    /// Why the run is stopping (None while it is not).
    pub fn reason(&self) -> Option<StopReason> {
        self.reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Readable once a stop was requested.
    pub fn fd(&self) -> RawFd {
        self.event.raw()
    }

    /// The same descriptor, lent for as long as `self` lives.
    pub fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(&self.event)
    }
}

/// Why the run stops when the output (`target`: what it writes to) could not take a batch.
pub(crate) fn emit_stop(e: crate::output::emit::EmitError, target: &str) -> StopReason {
    match e {
        crate::output::emit::EmitError::Closed => StopReason::ReaderGone,
        crate::output::emit::EmitError::Io(e) => StopReason::Fatal(format!(
            "cannot write to {target}: {}",
            crate::sys::errors::os_message(&e)
        )),
        crate::output::emit::EmitError::Joblog(why) => StopReason::Fatal(why),
    }
}
