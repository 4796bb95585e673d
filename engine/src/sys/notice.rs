//! Where the engine's messages go. The engine never writes a message of its own to stderr: it
//! hands each one, as a [`Notice`], to the sink the front end gave the run ([`install`]), and
//! the front end decides the words around it (the program's name) and where it goes.
//!
//! One sink per process: a run's stages are threads and forked children of one process, and
//! the front ends start one run per process (the bash builtin and the Python module fork an
//! engine process for it). Messages are rare (a retry, a resume, the run's end), so the sink is
//! read under a lock; nothing on a per-record path says anything.

use std::fmt;
use std::sync::{Arc, RwLock};

/// One message of the engine.
#[derive(Clone, Copy, Debug)]
pub struct Notice<'a> {
    /// What it is about.
    pub kind: NoticeKind,
    /// The text, one line without the program's name (`cannot open 'x': No such file`).
    pub text: &'a str,
    /// What the message is about, for a front end that words it as another tool does (GNU
    /// Parallel's personality words its warnings GNU's way); None for most messages.
    pub fact: Option<Fact>,
    /// What the fact is about, when it is about a text (a job's command line); else empty.
    pub detail: &'a str,
}

/// The facts some [`Notice`]s state, in numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fact {
    /// The run goes on with fewer workers than asked.
    FewerWorkers {
        /// The most it runs now.
        workers: usize,
        /// The most it was asked to run.
        asked: usize,
        /// Why.
        limit: WorkerLimit,
    },
    /// A NUL byte in the input was put in its job's line as the two characters `\0`.
    NulEscaped,
    /// `--retry-failed` read command lines with newlines (written as NUL bytes) from a joblog.
    LoggedNewlines,
    /// A job was killed for running too long (`--job-timeout`): its command line is the
    /// notice's detail.
    TimedOut,
    /// A job was ended because memory ran short (`--memfree`): its command line is the
    /// notice's detail.
    Evicted,
    /// A job that `--halt` counts ended (GNU Parallel names each one): its command line is
    /// the notice's detail.
    Halted {
        /// The job failed.
        failed: bool,
        /// `--halt …,done=`: every job counts, failed or not.
        done: bool,
    },
    /// A job's line was too long to run ([`crate::plan::config::Config::line_limit`]): the
    /// text is GNU Parallel's sentence for it, its first letter in lower case.
    LineTooLong,
    /// A record was longer than `--block` ([`crate::plan::config::Config::grow_blocks`]):
    /// blocks are `to` bytes from now on.
    BlockGrown {
        /// The block size before.
        from: u64,
        /// The block size now.
        to: u64,
    },
    /// A job failed its last attempt (after its retries): GNU Parallel says nothing of it.
    GivenUp,
}

/// What keeps a run from starting as many workers as asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WorkerLimit {
    /// The open-file limit (`ulimit -n`).
    OpenFiles,
    /// Anything else: processes, threads, memory mappings, a worker that could not start.
    Other,
}

/// What a [`Notice`] is about: a front end may word or route the kinds differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticeKind {
    /// Something went wrong, or did not happen as asked; the run's status says how it ended.
    Problem,
    /// What the run did (resumed from a checkpoint, its `--stats`): no fault.
    Info,
    /// Text printed as it is, not as a message: the front end adds no program name.
    Report,
}

/// A sink for the engine's messages; called from any thread of the run.
pub trait Notices: Send + Sync {
    /// Takes one message.
    fn notice(&self, notice: &Notice<'_>);
}

impl<F: Fn(&Notice<'_>) + Send + Sync> Notices for F {
    fn notice(&self, notice: &Notice<'_>) {
        self(notice)
    }
}

static SINK: RwLock<Option<Arc<dyn Notices>>> = RwLock::new(None);

/// Makes `sink` the one the engine's messages go to from now on, in this process (and the
/// children it forks). Without one, messages are dropped.
pub fn install(sink: Arc<dyn Notices>) {
    *SINK.write().unwrap_or_else(|e| e.into_inner()) = Some(sink);
}

/// Writes `text` (a front end's whole message) to stderr at once: one `write`, for a message
/// shorter than a pipe's buffer. std's `eprintln!` writes a message's pieces one by one, and
/// the jobs' output on the same stderr (`2>&1`) could land between them. A failure to write
/// is ignored: a message that cannot be shown never changes a run or its status.
pub fn write_whole(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Hands one message to the sink.
pub(crate) fn say(kind: NoticeKind, args: fmt::Arguments<'_>) {
    say_fact(kind, None, args)
}

/// Hands one message, and the fact it states, to the sink.
pub(crate) fn say_fact(kind: NoticeKind, fact: Option<Fact>, args: fmt::Arguments<'_>) {
    say_about(kind, fact, "", args)
}

/// Hands one message, the fact it states and what that is about, to the sink.
pub(crate) fn say_about(
    kind: NoticeKind,
    fact: Option<Fact>,
    detail: &str,
    args: fmt::Arguments<'_>,
) {
    let sink = SINK.read().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some(sink) = sink {
        let owned;
        let text = match args.as_str() {
            Some(s) => s,
            None => {
                owned = args.to_string();
                &owned
            }
        };
        sink.notice(&Notice {
            kind,
            text,
            fact,
            detail,
        });
    }
}
