//! The engine: wires spool → scan → ring → workers → output for one run, supervises it (signals,
//! a vanished stdout reader, end of work) and turns the result into an exit status.
//!
//! It owns the threads and the shared state; the stages themselves live in their own modules and
//! only meet here. Threads: this one supervises, one scans, one per worker.

use crate::input::scan::NulInArgument;
use crate::sys::notice::{Fact, WorkerLimit};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::dispatch::ledger::{InputRelease, Ledger};
use crate::dispatch::rings::Rings;
use crate::exec::descendants;
use crate::input::scan::{ScanEvents, ScanTotals, Scanner};
use crate::input::spool::{self, Spool};
use crate::journal::{InputId, Journal};
use crate::output::emit::Output;
use crate::output::stats::Stats;
use crate::run::stop::{Stop, StopReason};
use crate::sys;
use crate::sys::exit::ExitCode;

mod ending;
mod limits;
mod meter;
mod runner;
mod settings;
pub mod stop;
mod worker;

pub use limits::jobs::{jobs_value, read_jobs_file};
use limits::{memory, timeouts};

use ending::Checkpointing;
pub use settings::{Backend, Feeder, Input, Interaction, Settings, Statuses, Work, Workers};

/// Slots in the ring: enough that the scanner runs well ahead of the workers.
const RING_SLOTS: usize = 1024;
/// An input already in memory (a mapped file, or a stream that had ended when the run began)
/// and no longer than this is cut on the supervisor's thread (no scanner thread to start):
/// every batch holds at least one byte, so its batches always fit the ring.
const INLINE_SCAN_BYTES: u64 = RING_SLOTS as u64;
/// How long children get between SIGTERM and SIGKILL when a run stops.
const KILL_GRACE: Duration = Duration::from_millis(1500);

/// How often descendants frun adopted are reaped while a run goes (they stay zombies until).
const ORPHAN_REAP: Duration = Duration::from_millis(500);

/// How often the checkpoint journal is made durable while a run goes.
const JOURNAL_SYNC: Duration = Duration::from_millis(200);
/// How often `-j FILE`'s file is read again.
const JOBS_FILE_LOOK: Duration = Duration::from_millis(250);

/// The signals that stop a run (exit 128 + n).
pub const STOP_SIGNALS: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];
/// The signals that also stop it in preempt mode (a batch scheduler's warning).
pub const PREEMPT_SIGNALS: [i32; 4] = [libc::SIGUSR1, libc::SIGUSR2, libc::SIGXCPU, libc::SIGXFSZ];

/// The signals that stop a run with this plan.
pub fn stop_signals(preempt: bool) -> Vec<i32> {
    let mut v = STOP_SIGNALS.to_vec();
    if preempt {
        v.extend(PREEMPT_SIGNALS);
    }
    v
}

/// State every thread of the run shares.
pub struct Shared {
    /// Every input byte, at a fixed address for the whole run.
    pub spool: Spool,
    /// The rings the scanner publishes batches on and workers claim them from.
    pub rings: Rings,
    /// The emitter: how batch output reaches stdout.
    pub output: Output,
    /// What happened to every batch, and the retry and halt decisions.
    pub ledger: Ledger,
    /// Which batches no longer need their input (the spool frees behind them).
    pub input_release: InputRelease,
    /// Why and when the run stops.
    pub stop: Stop,
    /// What every worker does with a batch.
    pub work: Work,
    /// `--stats`: workers time their batches (per-node busy share).
    pub stats: bool,
    /// The byte that ends each record.
    pub delimiter: u8,
    /// The input as messages name it.
    input_name: String,
    journal: Option<Arc<Journal>>,
    /// The input identity a resumed checkpoint recorded.
    resume_input: Option<InputId>,
    /// The results directory being continued (None: a `--resume` checkpoint), for the message
    /// when the input differs.
    resumed_from: Option<String>,
    /// Resuming: what to do to stdout once the input is checked.
    restore: Mutex<Option<crate::journal::Restore>>,
    /// The running child of each worker (0 = none).
    pub children: Vec<AtomicI32>,
    /// `--round-robin`: one command per worker takes every N-th batch.
    pub lanes: Option<runner::lanes::Lanes>,
    /// Job lines' `{%}`: which slot each running job holds.
    pub slots: crate::dispatch::slots::JobSlots,
    /// The signal mask children start with (frun's mask before it blocked signals).
    pub sigmask: libc::sigset_t,
    /// Each child leads its own process group (stopping it reaches its descendants). Off only
    /// when children share frun's terminal as stdin and must stay in the foreground group.
    pub children_own_group: bool,
    /// The commands' environment, when it is not frun's own ([`Settings::children_env`]).
    pub children_env: Option<Vec<std::ffi::CString>>,
    /// The command is a script without `#!`: it runs under /bin/sh (set at its first start).
    pub script_via_sh: AtomicBool,
    /// Where worker shells come from, when batches run as bash functions (the bash front end).
    pub shell: Option<Arc<dyn crate::exec::shell::Host>>,
    devnull: Option<OwnedFd>,
    /// Workers started before the run grows by need (`-j INIT:MAX`'s INIT), each only once
    /// work for it appears.
    workers_init: usize,
    workers_max: usize,
    /// The most workers this run can have: `workers_max`, lowered to what the system allows
    /// and once starting a worker failed.
    workers_cap: AtomicUsize,
    /// Why the system allows fewer than `workers_max` workers (said once, when it matters).
    workers_limit: Option<(String, WorkerLimit)>,
    /// The note about fewer workers was printed.
    workers_noted: AtomicBool,
    workers_started: AtomicUsize,
    workers_live: AtomicUsize,
    scan_done: AtomicBool,
    scan_totals: Mutex<Option<std::io::Result<ScanTotals>>>,
    /// Written when a worker or the scanner finishes, to wake the supervisor.
    done: sys::Event,
    arg_max_record: u64,
    /// How much of the input the commands used (`frun xargs`), set before any worker starts.
    pub input_used: std::sync::OnceLock<Arc<crate::input::used::Used>>,
    /// When each worker's command started, for `--job-timeout`.
    pub clock: timeouts::Clock,
    /// `--delay`.
    pub gate: Option<crate::dispatch::pace::StartGate>,
    /// `--memfree`.
    pub memory: Option<memory::MemoryFloor>,
    /// `-j FILE`.
    pub job_cap: Option<limits::jobs::JobCap>,
    /// `--line-buffer`: what the relays may hold of long unended lines.
    pub line_room: crate::output::linebuf::LineRoom,
    /// `--latest-line`: the terminal rows the jobs' latest lines are drawn on.
    pub screen: Option<Mutex<crate::output::latest::Screen>>,
    /// `-t`: command lines are shown on stderr in the order their batches were claimed (the
    /// gate is held across each claim, so a ticket drawn then is in that order).
    pub trace_turns: Option<crate::dispatch::ledger::Turns>,
}

impl Shared {
    /// The state of a run about to start (no thread runs yet). Each argument is one part of
    /// the run's `Settings` (or what the engine made of one), taken whole.
    #[allow(clippy::too_many_arguments)]
    fn new(
        spool: Spool,
        input_name: String,
        children_keep_stdin: bool,
        scan: &crate::input::scan::Settings,
        work: Work,
        workers: &Workers,
        ceiling: (usize, String, WorkerLimit),
        order: crate::output::emit::OrderMode,
        checkpoint: crate::journal::Prepared,
        results: Option<&crate::output::results::Destination>,
        stats: bool,
        sigmask: libc::sigset_t,
        shell: Option<Arc<dyn crate::exec::shell::Host>>,
        joblog: Option<crate::output::joblog::Joblog>,
        children_env: Option<Vec<std::ffi::CString>>,
    ) -> std::io::Result<Shared> {
        // The workers the system allows: `-j`, or fewer.
        let cap = workers.max.min(ceiling.0);
        let devnull = if children_keep_stdin {
            None
        } else {
            Some(OwnedFd::from(crate::sys::dev_null()?))
        };
        let clock = timeouts::Clock::new(
            work.job_timeout,
            work.memfree.is_some(),
            workers.max,
            work.termseq
                .as_deref()
                .unwrap_or(&crate::dispatch::pace::KILL_STEPS),
        );
        let trace_turns = work
            .interaction
            .trace
            .then(crate::dispatch::ledger::Turns::default);
        let gate = match work.delay {
            Some(gap) => Some(crate::dispatch::pace::StartGate::new(gap)),
            // `-t` shows lines in start order; a line limit lets no job start before the
            // earlier ones' lines were measured.
            None if trace_turns.is_some() || work.line_limit.is_some() => Some(
                crate::dispatch::pace::StartGate::new(std::time::Duration::ZERO),
            ),
            None => None,
        };
        Ok(Shared {
            clock,
            gate,
            memory: memory::MemoryFloor::of(&work),
            job_cap: limits::jobs::JobCap::of(&work, workers.max),
            line_room: crate::output::linebuf::LineRoom::new(work.line_room),
            screen: work.latest_line.then(|| {
                Mutex::new(crate::output::latest::Screen::on_terminal(
                    order == crate::output::emit::OrderMode::Ordered,
                ))
            }),
            trace_turns,
            spool,
            rings: Rings::new(workers.layout.clone(), RING_SLOTS)?,
            output: Output::new(
                order,
                match results {
                    // A copy of the file's descriptor, which the output owns.
                    Some(r) => (
                        Some(OwnedFd::from(r.out.try_clone()?)),
                        format!("the output file of {} in {}", r.task, r.dir.display()),
                    ),
                    None => match work.results_table.as_ref().and_then(|t| t.file()) {
                        // `--results NAME.json` (and .csv, .tsv): the records go to the file.
                        Some(f) => (Some(f.try_clone()?), "the --results file".into()),
                        None => (None, "standard output".into()),
                    },
                },
                checkpoint.journal.clone(),
                checkpoint.stdout_base,
            )
            .with_joblog(joblog),
            lanes: work
                .round_robin
                .then(|| runner::lanes::Lanes::new(workers.max)),
            ledger: Ledger::default(),
            input_release: InputRelease::new(RING_SLOTS * 64)?,
            stop: Stop::new()?,
            work,
            stats,
            delimiter: scan.delimiter,
            input_name,
            journal: checkpoint.journal,
            resume_input: checkpoint.resume.as_ref().and_then(|cp| cp.input.clone()),
            resumed_from: results.map(|r| r.dir.display().to_string()),
            restore: Mutex::new(checkpoint.restore),
            children: (0..workers.max).map(|_| AtomicI32::new(0)).collect(),
            // As many slots as jobs can run at once (`{%}` never numbers past them).
            slots: crate::dispatch::slots::JobSlots::new(cap),
            sigmask,
            children_own_group: !(children_keep_stdin
                && std::io::IsTerminal::is_terminal(&std::io::stdin())),
            script_via_sh: AtomicBool::new(false),
            children_env,
            shell,
            devnull,
            workers_init: workers.init,
            workers_max: workers.max,
            workers_cap: AtomicUsize::new(cap),
            workers_limit: (ceiling.0 < workers.max).then_some((ceiling.1, ceiling.2)),
            workers_noted: AtomicBool::new(false),
            workers_started: AtomicUsize::new(0),
            workers_live: AtomicUsize::new(0),
            scan_done: AtomicBool::new(false),
            scan_totals: Mutex::new(None),
            done: sys::Event::new()?,
            arg_max_record: scan.arg_space.map_or(u64::MAX, |s| s.max_record_len),
            input_used: std::sync::OnceLock::new(),
        })
    }

    /// The fd children get as stdin (None: they keep frun's).
    pub fn child_stdin(&self) -> Option<RawFd> {
        self.devnull.as_ref().map(|f| f.as_raw_fd())
    }

    /// Stops the run because the input file shrank while it was read (see [`Spool::shrank`]).
    pub fn input_shrank(&self) {
        self.stop.request(self.shrank_reason());
    }

    fn shrank_reason(&self) -> StopReason {
        let (was, now) = self.spool.sizes();
        let advice = "frun reads a regular input file in place, so it must not change until the \
                      run ends (give frun a copy of a file that is rotated or rewritten)";
        StopReason::Fatal(match now {
            // Not smaller now: it shrank and grew again, or the read failed (an I/O error).
            Some(n) if n >= was => format!(
                "{} could not be read where it was mapped (it was truncated and written again, \
                 or an I/O error; {n} bytes now): {advice}",
                self.input_name
            ),
            _ => format!(
                "{} shrank while being read (was {was} bytes, now {}): {advice}",
                self.input_name,
                now.map_or_else(|| "unknown".to_string(), |n| n.to_string())
            ),
        })
    }

    fn notify_done(&self) {
        self.done.signal();
    }

    /// Says once that the run goes on with fewer workers than asked, and why.
    fn note_fewer_workers(&self, why: &str, limit: WorkerLimit) {
        if !self.workers_noted.swap(true, Ordering::AcqRel) {
            let workers = self.workers_cap.load(Ordering::Acquire).max(1);
            let fact = Fact::FewerWorkers {
                workers,
                asked: self.workers_max,
                limit,
            };
            crate::sys::notice::say_fact(
                crate::sys::notice::NoticeKind::Problem,
                Some(fact),
                format_args!(
                    "running with at most {workers} workers instead of {}: {why}",
                    self.workers_max
                ),
            );
        }
    }

    /// A worker could not be set up or started: the run goes on with the ones it has.
    pub fn worker_failed(&self, index: usize, why: &str, limit: WorkerLimit) {
        self.workers_cap.fetch_min(index.max(1), Ordering::AcqRel);
        self.slots.lower(index.max(1));
        self.note_fewer_workers(why, limit);
    }

    /// A command could not be started for want of processes: one worker fewer (the last one
    /// leaves after its batch), and no new ones.
    pub fn too_many_processes(&self) {
        let live = self.workers_live.load(Ordering::Acquire);
        let cap = self.workers_cap.load(Ordering::Acquire);
        if cap >= live {
            self.worker_failed(
                live.saturating_sub(1),
                "cannot start more processes: Resource temporarily unavailable",
                WorkerLimit::Other,
            );
        }
    }

    /// How many workers the run can have now: the cap, lowered by `-j FILE`'s number.
    pub fn workers_possible(&self) -> usize {
        let cap = self.workers_cap.load(Ordering::Acquire);
        self.job_cap.as_ref().map_or(cap, |c| cap.min(c.get()))
    }

    /// True when worker `index` is past the number of workers the run may have now (never the
    /// first one).
    pub fn over_cap(&self, index: usize) -> bool {
        index > 0 && index >= self.workers_cap.load(Ordering::Relaxed)
    }

    /// Starts one more worker unless the maximum is reached; returns whether it did.
    fn add_worker(self: &Arc<Self>) -> bool {
        let index = self.workers_started.fetch_add(1, Ordering::AcqRel);
        if index >= self.workers_cap.load(Ordering::Acquire) {
            self.workers_started.fetch_sub(1, Ordering::AcqRel);
            if index < self.workers_max {
                if let Some((why, limit)) = &self.workers_limit {
                    self.note_fewer_workers(why, *limit);
                }
            }
            return false;
        }
        self.workers_live.fetch_add(1, Ordering::AcqRel);
        let me = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name(format!("frun-worker-{index}"))
            .stack_size(256 << 10)
            .spawn(move || {
                let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    worker::run(&me, index)
                }));
                if ran.is_err() {
                    me.stop
                        .request(StopReason::Fatal(format!("worker {index} failed (a bug)")));
                }
                me.workers_live.fetch_sub(1, Ordering::AcqRel);
                me.notify_done();
            });
        if let Err(e) = spawned {
            self.workers_live.fetch_sub(1, Ordering::AcqRel);
            self.workers_started.fetch_sub(1, Ordering::AcqRel);
            let why = format!(
                "cannot start a worker thread: {}",
                crate::sys::errors::os_message(&e)
            );
            if index == 0 {
                self.stop.request(StopReason::Fatal(why));
            } else {
                self.worker_failed(index, &why, WorkerLimit::Other);
            }
            return false;
        }
        true
    }

    /// Sends `sig` to a running child (and its process group when it leads one). `pid` must be
    /// an unreaped child, so it cannot have been reused.
    pub fn signal_child(&self, pid: libc::pid_t, sig: i32) {
        use nix::sys::signal::{Signal, kill, killpg};
        let (Ok(sig), pid) = (Signal::try_from(sig), nix::unistd::Pid::from_raw(pid)) else {
            return;
        };
        // The target is our own unreaped child (or, for a worker shell, our parent's child,
        // which is reaped only after the slot is cleared). A worker shell makes itself a group
        // leader only once it runs: until then, the group does not exist and the process itself
        // is signalled.
        if !self.children_own_group || killpg(pid, sig).is_err() {
            let _ = kill(pid, sig);
        }
    }

    fn kill_children(&self, sig: i32) {
        for c in &self.children {
            let pid = c.load(Ordering::SeqCst);
            if pid > 0 {
                // The slot only holds pids of unreaped children (see `runner::Child`).
                self.signal_child(pid, sig);
            }
        }
    }
}

/// The scanner's view of the engine: grows the worker pool while work piles up.
struct Events<'a> {
    shared: &'a Arc<Shared>,
    /// The scan runs on the supervisor's thread over a few records already in memory: it must
    /// never wait (signals are only read once it is done), so held `-k` output does not pause
    /// it. Bounding held output is for long inputs; this one ends a moment later anyway.
    inline: bool,
    /// Workers start as batches wait; false while the whole input is counted before any job
    /// starts (the caller starts them).
    grow: bool,
}

impl ScanEvents for Events<'_> {
    fn published(&self, ring: &Rings) {
        // A worker starts only for work that waits: up to INIT whenever a batch is waiting,
        // beyond that only while no worker starves.
        if !self.grow {
            return;
        }
        let s = self.shared;
        let started = s.workers_started.load(Ordering::Acquire);
        if ring.backlog() > 0
            && started < s.workers_max
            && (started < s.workers_init || !ring.starving())
            && s.job_cap.as_ref().is_none_or(|c| started < c.get())
        {
            s.add_worker();
        }
    }

    fn oversized(&self, offset: u64, len: u64, end: u64) {
        // Zeros read past a shrunk file's end are no record: nothing is recorded done.
        if !self.shared.spool.intact(end) {
            self.shared.input_shrank();
            return;
        }
        self.shared
            .ledger
            .oversized(offset, len, self.shared.arg_max_record);
        // Reported and final (it would be too long again): done, as a failed batch is.
        self.shared.output.record_skipped(offset, end);
    }

    fn stopped(&self) -> bool {
        self.shared.stop.is_stopped()
    }

    fn block_grown(&self, from: u64, to: u64) {
        crate::sys::notice::say_fact(
            crate::sys::notice::NoticeKind::Problem,
            Some(Fact::BlockGrown { from, to }),
            format_args!(
                "warning: a record is longer than the block of {from} bytes: blocks are {to} \
                 bytes from now on"
            ),
        );
    }

    fn nul_in_argument(&self, offset: u64, chunk: bool, nul: NulInArgument) {
        let (what, hint) = if chunk {
            ("chunk", "-s passes chunks on stdin instead")
        } else {
            ("record", "for NUL-delimited input use -0")
        };
        if nul == NulInArgument::Escape {
            crate::sys::notice::say_fact(
                crate::sys::notice::NoticeKind::Problem,
                Some(Fact::NulEscaped),
                format_args!(
                    "warning: the {what} at byte {offset} contains a NUL byte, which no \
                     argument can hold: its job gets the two characters \\0 in its place \
                     ({hint}; later ones are not reported)"
                ),
            );
            return;
        }
        if let NulInArgument::Refuse(status) = nul {
            self.shared.stop.request(StopReason::Abort {
                message: format!(
                    "the {what} at byte {offset} holds a NUL byte, which no argument can hold: \
                     refused, and the run stopped before its batch ({hint})"
                ),
                status,
                fact: None,
            });
            return;
        }
        say!(
            "warning: the {what} at byte {offset} contains a NUL byte, which ends an \
             argument: it is cut there ({hint}; later such {what}s are not reported)"
        );
    }

    fn released(&self, seq: u64) -> bool {
        self.shared.input_release.is_released(seq)
    }

    fn output_held(&self) -> u64 {
        if self.inline {
            return 0;
        }
        self.shared.output.held_bytes()
    }

    fn outstanding_limit(&self) -> u64 {
        self.shared.input_release.capacity()
    }

    fn input_head(&self, head: &[u8], size: Option<u64>) -> bool {
        let s = self.shared;
        if let Some(want) = &s.resume_input {
            let len = (want.head_len as usize).min(head.len());
            let now = InputId::of(&head[..len], size);
            let same = now.head_len == want.head_len
                && now.head_hash == want.head_hash
                && (want.size.is_none() || size.is_none() || want.size == size);
            if !same {
                let msg = match &s.resumed_from {
                    None => "--resume: the input is not the one the checkpoint was written for"
                        .to_string(),
                    Some(dir) => {
                        format!("--results: the input is not the one the runs in {dir} had")
                    }
                };
                s.stop.request(StopReason::Refused(format!(
                    "{msg} (its first bytes or its size differ)"
                )));
                return false;
            }
        }
        // A new journal names its input (one continuing a resumed file has it already).
        if let Some(j) = s.journal.as_ref().filter(|j| j.is_new()) {
            j.input(&InputId::of(head, size));
        }
        let restore = s.restore.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(r) = restore {
            if let Err(msg) = r.apply() {
                s.stop.request(StopReason::Refused(msg));
                return false;
            }
        }
        true
    }
}

/// Up to this many workers, the kernel's system-wide limits (mappings, threads, pids) are not
/// looked up: the smallest values Linux accepts for them leave room for more. Reading them costs
/// five files in /proc, a tenth of frun's start-up.
const SURE_WORKERS: usize = 64;

/// The most workers this system can run at once (at least `wanted` when nothing stops that),
/// and the limit that says so: each worker is a thread (with its child, a process or task), a
/// few memory mappings (stack, guard pages, signal stack) and `fds_per_worker` descriptors. Past
/// these, starting a thread fails, or the Rust runtime aborts the process when a new thread's
/// signal stack cannot be mapped.
fn worker_ceiling(wanted: usize, fds_per_worker: u64) -> (usize, String, WorkerLimit) {
    let mut best = (u64::MAX, String::new(), WorkerLimit::Other);
    let mut limit = |n: u64, why: String, what: WorkerLimit| {
        if n < best.0 {
            best = (n, why, what);
        }
    };
    if wanted <= SURE_WORKERS {
        // Only the per-user limits, which `ulimit` can set to anything, are checked; the
        // descriptors in use are counted only when the open-file limit is low enough to matter.
        let open = match sys::open_file_limit() {
            Some(files) if files < 1024 => open_descriptors(),
            _ => 16,
        };
        user_limits(&mut limit, fds_per_worker, open);
        return (best.0.clamp(1, usize::MAX as u64) as usize, best.1, best.2);
    }
    if let Some(maps) = sys::sysctl("/proc/sys/vm/max_map_count") {
        let used = std::fs::read("/proc/self/maps")
            .map_or(0, |m| m.iter().filter(|&&b| b == b'\n').count() as u64);
        limit(
            maps.saturating_sub(used + 4096) / 6,
            format!("vm.max_map_count is {maps} (memory mappings per process)"),
            WorkerLimit::Other,
        );
    }
    if let Some(threads) = sys::sysctl("/proc/sys/kernel/threads-max") {
        limit(
            threads / 4,
            format!("kernel.threads-max is {threads}"),
            WorkerLimit::Other,
        );
    }
    if let Some(pids) = sys::sysctl("/proc/sys/kernel/pid_max") {
        limit(
            pids / 4,
            format!("kernel.pid_max is {pids}"),
            WorkerLimit::Other,
        );
    }
    user_limits(&mut limit, fds_per_worker, open_descriptors());
    (best.0.clamp(1, usize::MAX as u64) as usize, best.1, best.2)
}

/// The descriptors this process has open (16 when /proc cannot say).
fn open_descriptors() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(16, |d| d.count() as u64)
}

/// Descriptors each worker holds: a worker shell's, or a command's with a stdin pipe, or its
/// output's file; and the file its commands' stderr is kept in (grouped after their stdout, or
/// saved as results), and `--line-buffer`'s relay.
fn fds_per_worker(shell: bool, work: &Work) -> u64 {
    let runner = match (shell, work.records_on_stdin) {
        (true, _) => 4,
        (false, true) => 5,
        (false, false) => 1,
    };
    runner
        + u64::from(work.keeps_stderr())
        + if work.line_buffer { 3 } else { 0 }
        + if work.stderr_relayed { 2 } else { 0 }
}

/// Descriptors kept free beyond the workers' own: what the run opens after the ceiling is
/// computed (the spool, signal and event descriptors, the journal; about ten measured, with a
/// command's pipes while it starts) and what a plugin or a results directory adds.
const RESERVED_FDS: u64 = 16;

/// The ceilings `ulimit -n` and `ulimit -u` set, with `open` descriptors already in use.
fn user_limits(limit: &mut impl FnMut(u64, String, WorkerLimit), fds_per_worker: u64, open: u64) {
    if let Some(files) = sys::open_file_limit() {
        limit(
            files.saturating_sub(open + RESERVED_FDS) / fds_per_worker,
            format!("the open-file limit (ulimit -n) is {files}"),
            WorkerLimit::OpenFiles,
        );
    }
    if let Some(processes) = sys::process_limit() {
        limit(
            processes / 2,
            format!("the process limit (ulimit -u) is {processes}"),
            WorkerLimit::Other,
        );
    }
}

/// A signalfd for [`stop_signals`], which the caller has blocked in every thread.
pub fn stop_signalfd(preempt: bool) -> std::io::Result<OwnedFd> {
    sys::signalfd(&stop_signals(preempt))
}

/// What a run did: its exit status, how it ended, and its counts (a front end whose exit
/// status counts jobs, GNU Parallel's, reads them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunReport {
    /// The status frun gives the run (the binary exits with it; `i32::from` makes the number).
    pub status: ExitCode,
    /// How the run ended.
    pub ended: Ended,
    /// Batches finished (succeeded, failed or given up).
    pub batches: u64,
    /// Failed or given up.
    pub failed: u64,
    /// Batches whose command succeeded.
    pub succeeded: u64,
    /// The input's batches, when it was read to its end.
    pub total: Option<u64>,
    /// The run stopped at `--halt`: what it counted, and the last failure.
    pub halted: Option<Halted>,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// It did what there was to do (every batch ran, or as many as a resume left; some may
    /// have failed), or stdout's reader went away.
    Done,
    /// `--halt` stopped it.
    Halted,
    /// This signal stopped it (SIGINT, SIGTERM, SIGHUP; with `FRUN_PREEMPT` also USR1, USR2,
    /// XCPU, XFSZ): the checkpoint says what is left.
    Signal(i32),
    /// frun itself could not go on (an I/O error, an unwritable stdout).
    Failed,
}

/// Why a run stopped at `--halt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Halted {
    /// What `--halt` counted: failures, successes or finished batches.
    pub on: crate::dispatch::ledger::HaltOn,
    /// The last failed batch's exit value and signal, as its joblog line shows them.
    pub last_failure: Option<crate::dispatch::ledger::FailureShown>,
}

/// Runs the planned run to the end and says what it did: the engine side of [`crate::run()`].
pub fn run_reporting(
    settings: Settings,
    sigmask: libc::sigset_t,
    shell: Option<Arc<dyn crate::exec::shell::Host>>,
) -> RunReport {
    match try_run(settings, sigmask, shell) {
        Ok(done) => done,
        Err(e) => {
            say!("{}", crate::sys::errors::os_message(&e));
            RunReport {
                status: ExitCode::Error,
                ended: Ended::Failed,
                batches: 0,
                failed: 0,
                succeeded: 0,
                total: None,
                halted: None,
            }
        }
    }
}

fn report(shared: &Shared, status: ExitCode) -> RunReport {
    let l = &shared.ledger;
    let total = match &*shared.scan_totals.lock().unwrap_or_else(|e| e.into_inner()) {
        Some(Ok(t)) => Some(t.batches),
        _ => None,
    };
    let reason = shared.stop.reason();
    RunReport {
        status,
        ended: match (&reason, status) {
            (Some(StopReason::Halt { .. }), _) => Ended::Halted,
            (Some(StopReason::Signal(n)), _) => Ended::Signal(*n),
            (_, ExitCode::Signal(n)) => Ended::Signal(n),
            (_, ExitCode::Error) => Ended::Failed,
            _ => Ended::Done,
        },
        batches: l.batches(),
        failed: l.failed_batches() + l.given_up_batches(),
        succeeded: l.succeeded_batches(),
        total,
        halted: match reason {
            Some(StopReason::Halt { on, .. }) => Some(Halted {
                on,
                last_failure: l.last_failure(),
            }),
            _ => None,
        },
    }
}

/// How many batches the whole input has, once the scanner has read it to its end.
fn total_batches(shared: &Shared) -> Option<u64> {
    if !shared.scan_done.load(Ordering::Acquire) {
        return None;
    }
    match &*shared.scan_totals.lock().unwrap_or_else(|e| e.into_inner()) {
        Some(Ok(t)) => Some(t.batches),
        _ => None,
    }
}

/// What outlives the wiring of a run: the settings its end reads.
struct EndOfRun {
    started: Instant,
    stats: bool,
    workers_max: usize,
    usable_cpus: usize,
    journal_missing: Option<String>,
    results: Option<crate::output::results::Destination>,
    statuses: Statuses,
}

fn try_run(
    settings: Settings,
    sigmask: libc::sigset_t,
    shell: Option<Arc<dyn crate::exec::shell::Host>>,
) -> std::io::Result<RunReport> {
    let started = Instant::now();
    descendants::adopt_orphans();
    let Settings {
        input,
        scan,
        work,
        workers,
        order,
        mut checkpoint,
        results,
        stats,
        preempt,
        statuses,
        joblog,
        progress,
        exits_after,
        children_env,
        share: _,
    } = settings;
    // The input's total is learned before the spool takes the input.
    let total = progress.map(|_| meter::total_of(&input.file, &scan, checkpoint.resume.is_some()));
    let feeder = match input.feeder {
        Some(feed) => Some(
            std::thread::Builder::new()
                .name("frun-feed".into())
                .spawn(feed)?,
        ),
        None => None,
    };
    let (spool, mut ingest) = spool::open(input.file)?;
    let ceiling = worker_ceiling(workers.max, fds_per_worker(shell.is_some(), &work));
    let skip: Vec<(u64, u64)> = checkpoint
        .resume
        .as_ref()
        .map(|cp| cp.intervals.clone())
        .unwrap_or_default();
    // Only the end of the run reads why no journal is kept.
    let journal_missing = checkpoint.missing.take();
    let shared = Arc::new(Shared::new(
        spool,
        input.name,
        input.children_keep_stdin,
        &scan,
        work,
        &workers,
        ceiling.clone(),
        order,
        checkpoint,
        results.as_ref(),
        stats,
        sigmask,
        shell,
        joblog,
        children_env,
    )?);
    if let Some(u) = input.used {
        let _ = shared.input_used.set(u);
    }
    write_headers(&shared);
    let ending = EndOfRun {
        started,
        stats,
        workers_max: workers.max,
        usable_cpus: workers.usable_cpus,
        journal_missing,
        results,
        statuses,
    };
    let signals = stop_signalfd(preempt)?;
    // Dropped on an error below, it clears its line too.
    let progress = progress.zip(total).and_then(|(spec, total)| {
        crate::output::progress::Meter::start(spec, meter::source(&shared, &scan, total))
    });
    if !workers.layout.is_single() {
        let shared = Arc::clone(&shared);
        ingest.set_binder(Box::new(move |base, from, to| {
            shared
                .rings
                .layout()
                .bind(base, from, to, |node| shared.rings.note_bound(node))
        }));
    }
    // A stream that has ended by now is read whole, and then cut like a small file below.
    ingest.read_ready(&shared.spool, INLINE_SCAN_BYTES);
    let shard = scan.shard;
    start_work(
        &shared,
        ingest,
        scan,
        skip,
        (&workers, workers.max.min(ceiling.0) as u64),
    )?;

    supervise(&shared, signals.as_fd());
    if let Some(m) = progress {
        m.finish(shared.stop.reason().is_none() && !shared.spool.shrank());
    }
    Ok(wind_up(shared, feeder, &ending, shard, exits_after))
}

/// What goes out before any job's output: a results table's header line, a joblog's on
/// stdout.
fn write_headers(shared: &Shared) {
    if let Some(t) = &shared.work.results_table {
        let _ = shared.output.write_aside(shared.output.fd(), &t.header());
    }
    if let Some(crate::output::joblog::Joblog::Stdout) = shared.output.joblog() {
        let _ = shared.output.write_aside(
            std::os::fd::AsFd::as_fd(&std::io::stdout()),
            crate::output::joblog::HEADER,
        );
    }
}

/// The end of a supervised run: what the commands left running ends, the feeder is joined and
/// the exit status made. With `exits_after`, the run's state is left to the process's exit.
fn wind_up(
    shared: Arc<Shared>,
    feeder: Option<std::thread::JoinHandle<Result<(), String>>>,
    ending: &EndOfRun,
    shard: Option<crate::input::shard::ShardMap>,
    exits_after: bool,
) -> RunReport {
    // Every command has ended; what they left running (adopted by frun) ends with the run.
    descendants::end_all(KILL_GRACE, shared.workers_live.load(Ordering::Acquire) == 0);
    // A completed run read the feeder's input to its end: the feeder has returned. (A run that
    // stopped leaves it to end with the process.)
    // A run that stopped early leaves the input just after what its commands used.
    if shared.stop.reason().is_some() {
        if let Some(u) = shared.input_used.get() {
            u.give_back();
        }
    }
    let fed = match feeder {
        Some(h) if shared.stop.reason().is_none() => h
            .join()
            .unwrap_or_else(|_| Err("the input pass failed (a bug)".into())),
        _ => Ok(()),
    };
    let mut code = end(&shared, ending, shard);
    if let Err(msg) = fed {
        say!("{msg}");
        code = ExitCode::Passed(1);
    }
    let done = report(&shared, code);
    if exits_after {
        // Every worker has returned and all output is written; the exit frees the rest.
        std::mem::forget(shared);
    }
    done
}

/// Starts the first workers and the scan: on this thread when the input is a few records in
/// memory already, else on the scanner's thread. `scan_workers`: the most workers the scan
/// cuts batches for.
fn start_work(
    shared: &Arc<Shared>,
    ingest: spool::Ingest,
    scan: crate::input::scan::Settings,
    skip: Vec<(u64, u64)>,
    (workers, scan_workers): (&Workers, u64),
) -> std::io::Result<()> {
    let inline = ingest.fd().is_none() && shared.spool.filled() <= INLINE_SCAN_BYTES;
    // `--halt fail=N%` counts against all the batches: with the input in memory they are
    // counted before the first job starts, so the first check already knows the total (GNU
    // Parallel reads its whole input first for the same reason).
    let count_first = inline
        && matches!(
            shared.work.halt.map(|h| h.count),
            Some(crate::dispatch::ledger::HaltCount::PercentOfAll(_))
        );
    // The first worker (one per node) starts now; the others as batches wait for them, so a
    // large -j over little input starts no more workers than it has batches.
    let first_workers = |shared: &Arc<Shared>| {
        for _ in 0..workers.init.min(workers.layout.nodes.len().max(1)) {
            shared.add_worker();
        }
    };
    if !count_first {
        first_workers(shared);
    }
    if inline {
        // A few records already in memory: cut on this thread, which then supervises. The scan
        // cannot wait: at most INLINE_SCAN_BYTES batches fit the ring's RING_SLOTS, no window
        // or outstanding limit is near, and it does not wait for held output (`Events`).
        scan_all(
            shared,
            ingest,
            scan,
            &skip,
            scan_workers,
            (true, !count_first),
        )?;
        if count_first {
            // Workers for the batches that wait, as the scan would have started them.
            first_workers(shared);
            let events = Events {
                shared,
                inline: true,
                grow: true,
            };
            for _ in 0..shared.rings.backlog().min(shared.workers_init as u64) {
                events.published(&shared.rings);
            }
        }
    } else {
        start_scanner(shared, ingest, scan, skip, scan_workers)?;
    }
    Ok(())
}

/// Starts the scanner thread: it cuts batches from `ingest` until the input ends or the run
/// stops, then records its totals and wakes the supervisor.
fn start_scanner(
    shared: &Arc<Shared>,
    ingest: spool::Ingest,
    scan: crate::input::scan::Settings,
    skip: Vec<(u64, u64)>,
    workers: u64,
) -> std::io::Result<()> {
    let shared = Arc::clone(shared);
    std::thread::Builder::new()
        .name("frun-scan".into())
        .spawn(move || {
            if let Err(e) = scan_all(&shared, ingest, scan, &skip, workers, (false, true)) {
                // The scanner had nothing to wait with: it publishes no more.
                shared.rings.abort();
                *shared.scan_totals.lock().unwrap_or_else(|e| e.into_inner()) = Some(Err(e));
                shared.scan_done.store(true, Ordering::Release);
                shared.notify_done();
            }
        })?;
    Ok(())
}

/// Cuts batches from `ingest` until the input ends or the run stops, then records the scan's
/// totals and wakes the supervisor. `inline`: on the supervisor's own thread, over an input
/// already in memory (see `Events::inline`); `grow`: see `Events::grow`.
fn scan_all(
    shared: &Arc<Shared>,
    mut ingest: spool::Ingest,
    scan: crate::input::scan::Settings,
    skip: &[(u64, u64)],
    workers: u64,
    (inline, grow): (bool, bool),
) -> std::io::Result<()> {
    let hunger = sys::Event::new()?;
    let scanner = Scanner {
        settings: scan,
        spool: &shared.spool,
        ring: &shared.rings,
        stop_fd: shared.stop.fd(),
        hunger_fd: hunger.raw(),
        workers,
        skip,
    };
    let events = Events {
        shared,
        inline,
        grow,
    };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        scanner.run(&mut ingest, &events)
    }))
    .unwrap_or_else(|_| {
        shared.rings.abort();
        Err(std::io::Error::other("the scanner failed (a bug)"))
    });
    drop(ingest);
    *shared.scan_totals.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
    shared.scan_done.store(true, Ordering::Release);
    shared.notify_done();
    // The hunger eventfd lived as long as the scanner could be woken by it.
    drop(hunger);
    Ok(())
}

/// The end of a run once every worker has returned: `--stats`, the checkpoint (kept, finished
/// or removed) and the exit status.
fn end(shared: &Shared, e: &EndOfRun, shard: Option<crate::input::shard::ShardMap>) -> ExitCode {
    // An input that shrank stops the run even when the scanner alone saw it (it then published
    // nothing more, and every batch the workers ran was intact).
    let stop = match shared.stop.reason() {
        None if shared.spool.shrank() => Some(shared.shrank_reason()),
        stop => stop,
    };
    let scan_error = match &*shared.scan_totals.lock().unwrap_or_else(|e| e.into_inner()) {
        Some(Err(e)) => Some(crate::sys::errors::os_message(e)),
        _ => None,
    };
    if e.stats {
        report_stats(shared, e, shard);
    }
    let checkpoint = Checkpointing { shared, ending: e };
    match stop {
        Some(reason) => checkpoint.stopped(reason),
        None => checkpoint.completed(scan_error),
    }
}

fn report_stats(shared: &Shared, e: &EndOfRun, shard: Option<crate::input::shard::ShardMap>) {
    let stats = Stats::measure(
        e.started.elapsed(),
        shared.ledger.batches(),
        shared.ledger.records(),
        shared.workers_started.load(Ordering::Acquire),
        e.workers_max,
        e.usable_cpus,
    );
    say!(info: "{}", stats.line());
    if let Some(m) = shard {
        say!(
            "stats: shard={}/{} chunk={}",
            m.shard.index,
            m.shard.count,
            m.chunk
        );
    }
    for line in node_stats(&shared.rings, e.started.elapsed()) {
        say!(info: "{line}");
    }
}

/// `--stats` lines for each NUMA node (none when the run used one).
fn node_stats(rings: &Rings, wall: Duration) -> Vec<String> {
    let layout = rings.layout();
    if layout.is_single() {
        return Vec::new();
    }
    let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let percent = |part: f64, whole: f64| {
        if whole > 0.0 {
            100.0 * part / whole
        } else {
            0.0
        }
    };
    let (all, stolen) = rings.counters.iter().fold((0, 0), |(a, s), c| {
        (a + load(&c.batches), s + load(&c.batches_stolen))
    });
    let mut lines = vec![format!(
        "stats: nodes={} source={} chunk={} cross_node={:.1}%",
        layout.nodes.len(),
        layout.source,
        layout.chunk_size,
        percent(stolen as f64, all as f64)
    )];
    for (i, (node, c)) in layout.nodes.iter().zip(&rings.counters).enumerate() {
        let cpus: Vec<String> = node.cpus.iter().map(|c| c.to_string()).collect();
        lines.push(format!(
            "stats: node={i} memory={} cpus={} distances={} workers={} chunks_placed={} \
             chunks_bound={} chunks_stolen={} batches={} cross_node={:.1}% busy={:.1}%",
            node.memory.map_or("-".into(), |m| m.to_string()),
            cpus.join(","),
            layout.distance[i]
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(","),
            node.workers,
            load(&c.chunks_placed),
            load(&c.chunks_bound),
            load(&c.chunks_stolen),
            load(&c.batches),
            percent(load(&c.batches_stolen) as f64, load(&c.batches) as f64),
            percent(
                load(&c.busy_ns) as f64,
                wall.as_nanos() as f64 * node.workers as f64
            ),
        ));
    }
    lines
}

/// Waits for the end of the run, handling signals and a vanished stdout reader.
fn supervise(shared: &Arc<Shared>, signals: BorrowedFd<'_>) {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let out = shared.output.fd();
    let mut watch_stdout = crate::output::emit::is_pipe_like(out);
    let readable = |fd: &PollFd<'_>| fd.revents().is_some_and(|r| r.contains(PollFlags::POLLIN));
    let finished = || {
        shared.scan_done.load(Ordering::Acquire) && shared.workers_live.load(Ordering::Acquire) == 0
    };
    // Wakes up now and then to sync the journal and reap descendants that ended after frun
    // adopted them.
    let base_ms = if shared.journal.is_some() {
        JOURNAL_SYNC.as_millis() as u16
    } else if shared.job_cap.is_some() {
        JOBS_FILE_LOOK.as_millis() as u16
    } else {
        ORPHAN_REAP.as_millis() as u16
    };
    let mut jobs_looked = Instant::now();
    let timeout = PollTimeout::from(base_ms);
    let mut synced = Instant::now();
    let mut enforcer = (shared.clock.limit.is_some() || shared.memory.is_some())
        .then(|| timeouts::Enforcer::new(shared.children.len()));
    // The poll timeout, shortened to the next `--job-timeout` step (or `--memfree` look) due.
    let wait = |enforcer: &mut Option<timeouts::Enforcer>| match enforcer
        .as_mut()
        .and_then(|e| e.tick(shared))
    {
        Some(d) => PollTimeout::from(d.as_millis().clamp(1, u128::from(base_ms)) as u16),
        None => timeout,
    };
    let sync_journal = |synced: &mut Instant| {
        if let Some(j) = &shared.journal {
            if synced.elapsed() >= JOURNAL_SYNC {
                if let Err(e) = j.flush() {
                    shared.stop.request(StopReason::Fatal(format!(
                        "cannot write the checkpoint {}: {}",
                        j.path().display(),
                        crate::sys::errors::os_message(&e)
                    )));
                }
                *synced = Instant::now();
            }
        }
    };
    loop {
        if shared.stop.is_stopped() {
            break;
        }
        if finished() {
            end_groups(shared, enforcer.as_mut(), signals);
            return;
        }
        let mut fds = [
            PollFd::new(signals, PollFlags::POLLIN),
            PollFd::new(shared.done.as_fd(), PollFlags::POLLIN),
            PollFd::new(out, PollFlags::empty()),
        ];
        let watched = if watch_stdout { 3 } else { 2 };
        let n = poll(&mut fds[..watched], wait(&mut enforcer)).unwrap_or(0);
        sync_journal(&mut synced);
        if jobs_looked.elapsed() >= JOBS_FILE_LOOK {
            jobs_looked = Instant::now();
            follow_jobs_file(shared);
        }
        descendants::reap_adopted();
        if n == 0 {
            continue;
        }
        if readable(&fds[0]) {
            if let Some(sig) = sys::read_signal(signals) {
                shared.stop.request(StopReason::Signal(sig));
            }
        }
        if readable(&fds[1]) {
            shared.done.drain();
        }
        if watch_stdout
            && fds[2]
                .revents()
                .is_some_and(|r| r.contains(PollFlags::POLLERR))
        {
            shared.stop.request(StopReason::ReaderGone);
            watch_stdout = false;
        }
    }

    // Stopping: no new batches. `--halt soon` lets running commands finish (a signal still ends
    // them); otherwise they end now (TERM, then KILL after a grace period).
    shared.rings.abort();
    while shared.stop.drains() && shared.workers_live.load(Ordering::Acquire) > 0 {
        let mut p = [
            PollFd::new(signals, PollFlags::POLLIN),
            PollFd::new(shared.done.as_fd(), PollFlags::POLLIN),
        ];
        let _ = poll(&mut p, wait(&mut enforcer));
        sync_journal(&mut synced);
        if readable(&p[0]) && sys::read_signal(signals).is_some() {
            break;
        }
        shared.done.drain();
    }
    // `--termseq`: its steps, then KILL if any command outlived them.
    if let Some(steps) = &shared.work.termseq {
        for &(sig, wait) in steps {
            shared.kill_children(sig);
            if wait_workers(shared, Instant::now() + wait) {
                return;
            }
        }
    } else {
        shared.kill_children(libc::SIGTERM);
        if wait_workers(shared, Instant::now() + KILL_GRACE) {
            return;
        }
    }
    shared.kill_children(libc::SIGKILL);
    wait_workers(shared, Instant::now() + KILL_GRACE);
}

/// Once every worker has returned: a timed-out command's group, still being ended, gets the
/// rest of its steps (`--termseq`) unless a signal stops frun first.
/// `-j FILE`: reads the file again; a larger number starts workers for the batches that wait
/// (fewer park themselves before their next claim).
fn follow_jobs_file(shared: &Arc<Shared>) {
    let Some(n) = shared.job_cap.as_ref().and_then(|c| c.reread()) else {
        return;
    };
    while shared.workers_started.load(Ordering::Acquire) < n
        && shared.rings.backlog() > 0
        && shared.add_worker()
    {}
}

fn end_groups(shared: &Shared, enforcer: Option<&mut timeouts::Enforcer>, signals: BorrowedFd<'_>) {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let Some(e) = enforcer else {
        return;
    };
    // A tick first: a command that just ended hands its group over.
    let mut next = e.tick(shared);
    while e.ends_groups() {
        let ms = next.map_or(100, |d| d.as_millis().clamp(1, 1000) as u16);
        let mut p = [PollFd::new(signals, PollFlags::POLLIN)];
        if poll(&mut p, PollTimeout::from(ms)).unwrap_or(0) > 0 {
            break;
        }
        next = e.tick(shared);
    }
}

/// Waits until every worker has returned or `deadline` passes; true if they all returned.
fn wait_workers(shared: &Shared, deadline: Instant) -> bool {
    loop {
        if shared.workers_live.load(Ordering::Acquire) == 0 {
            return true;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let mut p = [nix::poll::PollFd::new(
            shared.done.as_fd(),
            nix::poll::PollFlags::POLLIN,
        )];
        let wait = nix::poll::PollTimeout::from(left.as_millis().clamp(1, 100) as u16);
        let _ = nix::poll::poll(&mut p, wait);
        shared.done.drain();
    }
}
