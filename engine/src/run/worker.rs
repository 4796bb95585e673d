//! A worker: claims batches, runs each through its runner, hands the output to the emitter and
//! the outcome to the ledger — until the ring is done or the run stops. A failed attempt is run
//! again, split in two or given up here, as the retry policy says.
//!
//! A worker never reads input and never decides batch sizes; it only touches its own batch's
//! bytes, its own capture file and its runner. How an attempt runs (a child, a worker shell, a
//! printed line) is the runner's business; the worker loop is the same for all of them.

use std::cell::Cell;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::Backend;
use crate::dispatch::batch::{Batch, count_records};
use crate::dispatch::ledger::{FailureShown, Halt, HaltOn, Ledger, Outcome, RetryPolicy, Verdict};
use crate::dispatch::ring::Claim;
use crate::exec::command::argv::{Argv, BatchId};
use crate::exec::stdin::StdinSlot;
use crate::output::emit::{Capture, DoneSet, EmitError, Finished, Piece};
use crate::output::linebuf::LineRelay;
use crate::run::Shared;
use crate::run::runner::{self, Attempt, Ending, Runner};
use crate::run::stop::{Stop, StopReason, emit_stop};

/// Runs worker `index` until there is no more work. Errors stop the whole run.
pub(super) fn run(shared: &Shared, index: usize) {
    if let Err(e) = work(shared, index) {
        shared
            .stop
            .request(StopReason::Fatal(format!("worker {index}: {e}")));
    }
}

/// What a worker holds for all its batches: its capture files (stdout; stderr with
/// `frun parallel --results`) and its runner.
type Setup<'a> = (
    Option<Arc<Capture>>,
    Option<Arc<Capture>>,
    Box<dyn Runner + 'a>,
);

fn setup<'a>(
    shared: &'a Shared,
    index: usize,
    node: usize,
    relay: Option<&'a LineRelay>,
) -> io::Result<Setup<'a>> {
    let capture = if shared.output.captures() {
        Some(Capture::new()?)
    } else {
        None
    };
    if let (Some(r), Some(c)) = (relay, &capture) {
        r.keep_in(c);
    }
    let stdin_slot = match shared.work.backend {
        Backend::Stdin => Some(StdinSlot::new()?),
        _ => None,
    };
    let errors = if shared.work.keeps_stderr() {
        Some(Capture::new()?)
    } else {
        None
    };
    let runner = runner::choose(
        shared,
        index,
        node,
        capture.as_ref(),
        errors.as_ref(),
        stdin_slot,
        relay,
    )?;
    Ok((capture, errors, runner))
}

/// `--line-buffer`: the worker's line relay runs on a thread of its own beside it.
fn work(shared: &Shared, index: usize) -> io::Result<()> {
    let relayed = shared.work.line_buffer
        && shared.output.captures()
        && !matches!(shared.work.backend, Backend::DryRun { .. });
    if !relayed {
        return work_with(shared, index, None);
    }
    let relay = LineRelay::new(shared.screen.is_some(), shared.work.stderr_relayed)?;
    std::thread::scope(|s| {
        let pump = std::thread::Builder::new()
            .name(format!("frun-lines-{index}"))
            .stack_size(128 << 10)
            .spawn_scoped(s, || {
                relay.pump(&shared.output, shared.screen.as_ref(), &shared.line_room)
            })?;
        let worked = work_with(shared, index, Some(&relay));
        relay.quit();
        let _ = pump.join();
        worked
    })
}

fn work_with(shared: &Shared, index: usize, relay: Option<&LineRelay>) -> io::Result<()> {
    // With NUMA placement, this worker belongs to one node: it runs there and takes that
    // node's batches first.
    let layout = shared.rings.layout();
    let node = layout.node_of_worker(index);
    // A worker that cannot get its descriptors (the open-file limit) leaves the work to the
    // others; only the first one's failure ends the run.
    let (capture, errors, mut runner) = match setup(shared, index, node, relay) {
        Ok(s) => s,
        Err(e) if index > 0 => {
            shared.worker_failed(
                index,
                &format!(
                    "cannot set up a worker: {}",
                    crate::sys::errors::os_message(&e)
                ),
                if e.raw_os_error() == Some(libc::EMFILE) {
                    crate::sys::notice::WorkerLimit::OpenFiles
                } else {
                    crate::sys::notice::WorkerLimit::Other
                },
            );
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    if !layout.is_single() {
        layout.pin_thread(node);
    }
    let site = Post {
        shared,
        index,
        node,
        slot: Cell::new(0),
        holding: Cell::new(false),
    };
    let mut worker = Worker::new(&site, runner.as_mut(), capture.as_ref());
    worker.errors = errors.as_ref();
    worker.relay = relay;
    worker.serve()
}

/// How a worker judges attempts and when it stops the run: the run's settings, copied once.
#[derive(Clone, Copy, Debug)]
pub(super) struct Rules {
    pub retry: RetryPolicy,
    pub halt: Option<Halt>,
    /// Each job `--halt` counts is named as it ends ([`crate::run::Work::halt_names_jobs`]).
    pub halt_names_jobs: bool,
    /// A failed part of several records may be split (not with `-L`, `-b`, `--block`).
    pub splittable: bool,
    pub delimiter: u8,
    /// xargs' way: a command that exited 255 or was killed stops the run once its output is
    /// out (124 / 125).
    pub abort: bool,
}

/// What a worker's loop needs from the run around it: batches to claim, their input bytes and
/// command lines, the stop, the ledger and the emitter. The engine's is [`Post`]; tests script
/// one.
pub(super) trait Site {
    /// The next batch for this worker, or None when there is no more work for it.
    /// `finished`: this worker finished a batch before.
    fn claim(&self, finished: bool) -> Option<Batch>;
    /// The input bytes `[start, end)`.
    fn bytes(&self, start: u64, end: u64) -> &[u8];
    /// Fills `argv` with the command line for the part whose input is `bytes`; `attempt`
    /// numbers this worker's attempts.
    fn command(&self, bytes: &[u8], seq: u64, attempt: u64, argv: &mut Argv);
    /// The attempt whose command line [`Site::command`] built last has ended (or will not
    /// run): what it held while it ran (a job slot) is free.
    fn attempt_ended(&self) {}
    /// The job slot (from 1) of the attempt [`Site::command`] built last.
    fn job_slot(&self) -> u64 {
        1
    }
    /// `-t`: the turn of the batch just claimed to show its command line (drawn while the
    /// start gate is held, so in claim order); None without -t.
    fn draw_trace_turn(&self) -> Option<u64> {
        None
    }
    /// The batch whose turn `turn` is has shown its line, or never will.
    fn pass_trace_turn(&self, _turn: u64) {}
    /// Whether the part ending at `end` was read whole (the input did not shrink under it).
    fn intact(&self, end: u64) -> bool;
    /// Whether the input shrank while it was read.
    fn shrank(&self) -> bool;
    /// Stops the run because the input shrank.
    fn input_shrank(&self);
    /// Batch `seq`'s input bytes are no longer needed.
    fn release(&self, seq: u64);
    /// Hands batch `seq`'s output and the input it completed to the emitter.
    fn complete(&self, finished: Finished) -> Result<(), EmitError>;
    /// What the output goes to, for messages.
    fn output_target(&self) -> &str {
        "standard output"
    }
    /// Whether nobody reads stdout any more.
    fn reader_gone(&self) -> bool;
    /// Whether batches are timed (for [`Site::note_busy`]).
    fn timed(&self) -> bool;
    /// This worker spent `busy` on one batch.
    fn note_busy(&self, busy: Duration);
    fn stop(&self) -> &Stop;
    fn ledger(&self) -> &Ledger;
    fn rules(&self) -> Rules;
    /// Waits for this start's turn (`--delay`): None when the run stopped meanwhile, else the
    /// moment the gate let it through (None without a gate: the start is now).
    fn pace(&self) -> Option<Option<crate::dispatch::pace::Started>> {
        Some(None)
    }
    /// The command line of `argv` as messages and the joblog show it.
    fn shown_line(&self, argv: &Argv) -> String {
        let mut line = Vec::new();
        crate::output::joblog::command_line(argv.words(), false, &mut line);
        String::from_utf8_lossy(&line).into_owned()
    }
    /// Why the job line [`Site::command`] built from `bytes` must not run (`Work::line_limit`).
    fn line_too_long(&self, _bytes: &[u8], _argv: &Argv) -> Option<StopReason> {
        None
    }
    /// `-j FILE`: takes a place for the next batch, waiting while as many jobs run as may run
    /// now (before the worker takes the start gate's turn and claims); false, having left,
    /// when the run stopped.
    fn job_room(&self, _finished: bool) -> bool {
        true
    }
    /// `-j FILE`: gives the place back (the batch ended, or none was claimed).
    fn job_done(&self) {}
    /// `--memfree`: waits until the memory a batch needs is available; false when the run
    /// stopped meanwhile.
    fn memory_room(&self) -> bool {
        true
    }
    /// `--delay`: the start gate, held from before a claim to the claimed batch's start.
    fn start_turn(&self) -> Option<crate::dispatch::pace::StartTurn<'_>> {
        None
    }
    /// Whether successful attempts' runtimes are wanted ([`Site::note_runtime`]).
    fn measures_runtimes(&self) -> bool {
        false
    }
    /// An attempt succeeded after running `took` (for `--job-timeout N%`).
    fn note_runtime(&self, _took: Duration) {}
    /// Whether finished batches are logged (`--joblog`): the leading words of the command line
    /// the log does not show, and whether the next one is shown as it is.
    fn joblog(&self) -> Option<(usize, bool)> {
        None
    }
    /// Writes a finished batch's joblog line; the error is why the run must stop.
    fn log_job(&self, _line: &[u8]) -> Result<(), StopReason> {
        Ok(())
    }
    /// True when a batch's joblog line goes with it to the emitter ([`Finished::log`]), which
    /// writes it once every earlier batch's output is out (`-k`).
    fn orders_log(&self) -> bool {
        false
    }
    /// How many batches the whole input has, once it was read to its end.
    fn total_batches(&self) -> Option<u64> {
        None
    }
    /// The command as messages name it.
    fn command_name(&self) -> String {
        "the command".into()
    }
    /// `--color` and the like: whose output lines are coloured.
    fn colour(&self) -> Option<crate::output::colour::Colouring> {
        None
    }
    /// `--tag`: writes the tag of batch `seq`'s records (`bytes`) into `out`; false when output
    /// is not tagged.
    fn tag_of(&self, _bytes: &[u8], _seq: u64, _out: &mut Vec<u8>) -> bool {
        false
    }

    /// `--tmpl`: writes batch `seq`'s (`bytes`) template files, their names into `names`.
    fn write_templates(
        &self,
        _bytes: &[u8],
        _seq: u64,
        _names: &mut Vec<std::path::PathBuf>,
    ) -> io::Result<()> {
        Ok(())
    }

    /// `--cleanup`: template files go when their job ends.
    fn cleans_templates(&self) -> bool {
        false
    }

    /// `--retries STR`: the retries batch `seq` (`bytes`) may have (None inside: as many as
    /// it takes); None when the run's policy stands.
    fn retries_of(&self, _bytes: &[u8], _seq: u64) -> Option<Option<u64>> {
        None
    }
    /// `frun parallel --files`: the directory each job's output is kept in (its file's name is
    /// the job's output instead).
    fn output_files_in(&self) -> Option<&std::path::Path> {
        None
    }
    /// `--files --compress`: the program each file's content goes through.
    fn output_files_compress(&self) -> Option<&[u8]> {
        None
    }
    /// Whether batch `seq` (its records `bytes`) was done by an earlier run and is not run
    /// again (`frun parallel --resume…`).
    fn skips(&self, _bytes: &[u8], _seq: u64) -> bool {
        false
    }
    /// Whether each batch's output is saved as its results (`frun parallel --results`)
    /// instead of printed.
    fn saves_results(&self) -> bool {
        false
    }
    /// Whether a batch's stderr is printed after its stdout (GNU Parallel's grouping), not
    /// written by its commands as they run (and not saved as its results).
    fn groups_stderr(&self) -> bool {
        false
    }
    /// `frun parallel --results NAME.json/.csv/.tsv`: the table whose record replaces each
    /// batch's output.
    fn results_table(&self) -> Option<&crate::output::results::table::Table> {
        None
    }
    /// Saves batch `seq`'s results; the error is why the run must stop.
    fn save_results(
        &self,
        _bytes: &[u8],
        _seq: u64,
        _stdout: &[u8],
        _stderr: &[u8],
    ) -> Result<(), StopReason> {
        Ok(())
    }
}

/// The engine's side of worker `index`, on NUMA node `node`.
struct Post<'a> {
    shared: &'a Shared,
    index: usize,
    node: usize,
    /// The job slot (`{%}`) of its current or last job line (0: none), for its tag.
    slot: Cell<u64>,
    /// Whether `slot` is held: from the job's start to its end, not until the next job, so
    /// that a job starting on another worker meanwhile may take it.
    holding: Cell<bool>,
}

impl Post<'_> {
    /// The job slot for an attempt at job `seq`: the one held so far is given back first
    /// (this worker's previous job has ended).
    fn retake_slot(&self, seq: u64) -> u64 {
        self.give_slot();
        let slot = self.shared.slots.take(seq);
        self.slot.set(slot);
        self.holding.set(true);
        slot
    }

    fn give_slot(&self) {
        if self.holding.replace(false) {
            self.shared.slots.give(self.slot.get());
        }
    }
}

impl Drop for Post<'_> {
    fn drop(&mut self) {
        self.give_slot();
    }
}

impl Site for Post<'_> {
    fn claim(&self, finished: bool) -> Option<Batch> {
        let s = self.shared;
        // The system allows fewer workers than run (processes could not be started): the last
        // ones leave, between batches.
        if s.over_cap(self.index) {
            s.rings.leave(self.node, finished);
            return None;
        }
        match s.rings.claim(self.node, finished) {
            Claim::Batch(batch) => {
                if let Some(lanes) = &s.lanes {
                    lanes.claimed();
                }
                Some(batch)
            }
            Claim::Done => None,
        }
    }

    fn bytes(&self, start: u64, end: u64) -> &[u8] {
        self.shared.spool.bytes(start, end)
    }

    fn command(&self, bytes: &[u8], seq: u64, attempt: u64, argv: &mut Argv) {
        let s = self.shared;
        if let Some(u) = s.input_used.get() {
            u.started(seq);
        }
        // A plugin host reads the records from the spool itself (a worker shell does not).
        let arg_bytes = if s.work.records_on_stdin || (s.work.plugin.is_some() && s.shell.is_none())
        {
            &[][..]
        } else {
            bytes
        };
        // A job's slot, or `--process-slot-var`'s (xargs gives the lowest free one too).
        let slot = if s.work.template.is_job() || s.work.interaction.slot_var.is_some() {
            self.retake_slot(seq)
        } else {
            self.index as u64 + 1
        };
        let id = BatchId {
            node: self.node as u32,
            worker: self.index as u32,
            batch: attempt,
            seq,
            slot,
        };
        s.work.template.build(arg_bytes, id, argv);
    }

    fn attempt_ended(&self) {
        self.give_slot();
    }

    fn draw_trace_turn(&self) -> Option<u64> {
        self.shared.trace_turns.as_ref().map(|t| t.issue())
    }

    fn pass_trace_turn(&self, turn: u64) {
        if let Some(t) = &self.shared.trace_turns {
            t.pass(turn);
        }
    }

    fn job_slot(&self) -> u64 {
        match self.slot.get() {
            0 => self.index as u64 + 1,
            held => held,
        }
    }

    fn intact(&self, end: u64) -> bool {
        // Argv mode checks the file's size; stdin mode's copy from the file checks it itself.
        let s = self.shared;
        if s.work.records_on_stdin {
            !s.spool.shrank()
        } else {
            s.spool.intact(end)
        }
    }

    fn shrank(&self) -> bool {
        self.shared.spool.shrank()
    }

    fn input_shrank(&self) {
        self.shared.input_shrank();
    }

    fn release(&self, seq: u64) {
        self.shared.input_release.release(seq);
    }

    fn complete(&self, finished: Finished) -> Result<(), EmitError> {
        self.shared.output.complete(finished)
    }

    fn output_target(&self) -> &str {
        self.shared.output.target()
    }

    fn reader_gone(&self) -> bool {
        crate::output::emit::reader_gone(std::os::fd::AsFd::as_fd(&std::io::stdout()))
    }

    fn timed(&self) -> bool {
        self.shared.stats && !self.shared.rings.layout().is_single()
    }

    fn note_busy(&self, busy: Duration) {
        let ns = busy.as_nanos().min(u64::MAX as u128) as u64;
        self.shared.rings.note_busy(self.node, ns);
    }

    fn stop(&self) -> &Stop {
        &self.shared.stop
    }

    fn ledger(&self) -> &Ledger {
        &self.shared.ledger
    }

    fn pace(&self) -> Option<Option<crate::dispatch::pace::Started>> {
        let s = self.shared;
        match &s.gate {
            Some(g) => g.wait(s.stop.as_fd()).map(Some),
            None => Some(None),
        }
    }

    fn start_turn(&self) -> Option<crate::dispatch::pace::StartTurn<'_>> {
        self.shared.gate.as_ref().map(|g| g.hold())
    }

    fn job_room(&self, finished: bool) -> bool {
        let s = self.shared;
        // Once the input is all handed out, a parked worker goes on to find that out.
        let over = || s.rings.drained();
        let room = s
            .job_cap
            .as_ref()
            .is_none_or(|cap| cap.take(s.stop.as_fd(), &over));
        if !room {
            s.rings.leave(self.node, finished);
        }
        room
    }

    fn job_done(&self) {
        if let Some(cap) = &self.shared.job_cap {
            cap.give_back();
        }
    }

    fn memory_room(&self) -> bool {
        let s = self.shared;
        s.memory
            .as_ref()
            .is_none_or(|m| m.wait_for_room(s.stop.as_fd()))
    }

    fn shown_line(&self, argv: &Argv) -> String {
        let w = &self.shared.work;
        if let Some(line) = argv.shown() {
            return String::from_utf8_lossy(line).into_owned();
        }
        let mut line = Vec::new();
        crate::output::joblog::command_line(
            argv.words().skip(w.joblog_skip_words),
            w.joblog_raw_first,
            &mut line,
        );
        String::from_utf8_lossy(&line).into_owned()
    }

    fn line_too_long(&self, bytes: &[u8], argv: &Argv) -> Option<StopReason> {
        let w = &self.shared.work;
        let limit = w.line_limit?;
        let job = w.template.job()?;
        let delimiter = w.template.delimiter();
        // Through a shell the line is the last word, as measured; without one, its words
        // quoted are at most three times as long (plus quotes and a space each).
        let bound = job.length_factor()
            * if job.shell().is_some() {
                argv.last_word_len() as u64
            } else {
                3 * (argv.words_len() + argv.word_count()) as u64
            };
        if bound < limit {
            return None;
        }
        let length = if job.shell().is_some() {
            bound
        } else {
            job.shell_line_len(bytes, delimiter, &mut Vec::new(), &mut Vec::new())
        };
        if length < limit {
            return None;
        }
        // GNU Parallel shows the job's values, space-separated, cut after 50 characters.
        let mut values = Vec::new();
        job.each_value(bytes, delimiter, |k, v| {
            if k > 0 || !values.is_empty() {
                values.push(b' ');
            }
            values.extend_from_slice(v);
        });
        let mut shown = String::from_utf8_lossy(&values[..values.len().min(50)]).into_owned();
        if values.len() > 50 {
            shown.push_str("...");
        }
        Some(StopReason::Abort {
            message: format!("command line too long ({length} >= {limit}) at input 0: {shown}"),
            status: 255,
            fact: Some(crate::sys::notice::Fact::LineTooLong),
        })
    }

    fn measures_runtimes(&self) -> bool {
        matches!(
            self.shared.clock.limit,
            Some(crate::dispatch::pace::JobTimeout::Percent(_))
        )
    }

    fn note_runtime(&self, took: Duration) {
        self.shared.clock.median.record(took);
    }

    fn joblog(&self) -> Option<(usize, bool)> {
        let s = self.shared;
        let w = &s.work;
        // A results table's records say what a joblog line says.
        (s.output.joblog().is_some() || w.results_table.is_some())
            .then_some((w.joblog_skip_words, w.joblog_raw_first))
    }

    fn results_table(&self) -> Option<&crate::output::results::table::Table> {
        self.shared.work.results_table.as_ref()
    }

    fn log_job(&self, line: &[u8]) -> Result<(), StopReason> {
        let out = &self.shared.output;
        out.log(line).map_err(|e| emit_stop(e, out.target()))
    }

    fn orders_log(&self) -> bool {
        self.shared.output.orders_log()
    }

    fn total_batches(&self) -> Option<u64> {
        super::total_batches(self.shared)
    }

    fn rules(&self) -> Rules {
        let s = self.shared;
        Rules {
            retry: s.work.retry,
            halt: s.work.halt,
            halt_names_jobs: s.work.halt_names_jobs,
            splittable: s.work.splittable,
            delimiter: s.delimiter,
            abort: s.work.interaction.abort,
        }
    }

    fn command_name(&self) -> String {
        String::from_utf8_lossy(self.shared.work.template.argv0()).into_owned()
    }

    fn skips(&self, bytes: &[u8], seq: u64) -> bool {
        let w = &self.shared.work;
        let skipped = w.skip_jobs.binary_search(&(seq + 1)).is_ok()
            || (w.drop_blank && crate::input::blank::all_blank(bytes))
            || match &w.job_files {
                Some(r) if w.skip_saved => r.saved(bytes, seq + 1),
                _ => false,
            };
        if skipped {
            self.shared.slots.forgo(seq);
        }
        skipped
    }

    fn saves_results(&self) -> bool {
        self.shared.work.job_files.is_some()
    }

    fn groups_stderr(&self) -> bool {
        self.shared.work.stderr_grouped
    }

    fn save_results(
        &self,
        bytes: &[u8],
        seq: u64,
        stdout: &[u8],
        stderr: &[u8],
    ) -> Result<(), StopReason> {
        match &self.shared.work.job_files {
            Some(r) => r
                .save(bytes, seq + 1, stdout, stderr)
                .map_err(StopReason::Fatal),
            None => Ok(()),
        }
    }

    fn output_files_compress(&self) -> Option<&[u8]> {
        self.shared.work.output_files_compress.as_deref()
    }

    fn output_files_in(&self) -> Option<&std::path::Path> {
        self.shared.work.output_files_in.as_deref()
    }

    fn write_templates(
        &self,
        bytes: &[u8],
        seq: u64,
        names: &mut Vec<std::path::PathBuf>,
    ) -> io::Result<()> {
        let s = self.shared;
        let slot = match self.slot.get() {
            0 => self.index as u64 + 1,
            held => held,
        };
        let delimiter = s.work.template.delimiter();
        let (mut name, mut text) = (Vec::new(), Vec::new());
        for (body, dest) in &s.work.templates {
            dest.render_joined(bytes, delimiter, seq + 1, slot, &mut name);
            body.render_joined(bytes, delimiter, seq + 1, slot, &mut text);
            let path = std::path::PathBuf::from(
                <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(&name),
            );
            std::fs::write(&path, &text).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("--tmpl: cannot write {}: {e}", path.display()),
                )
            })?;
            names.push(path);
        }
        Ok(())
    }

    fn cleans_templates(&self) -> bool {
        self.shared.work.templates_cleanup
    }

    fn retries_of(&self, bytes: &[u8], seq: u64) -> Option<Option<u64>> {
        let s = self.shared;
        let line = s.work.retries_from.as_ref()?;
        let mut text = Vec::new();
        line.render(bytes, s.work.template.delimiter(), seq + 1, 1, &mut text);
        // GNU Parallel's count of attempts: 0 is as many as it takes; what is no number, one.
        let n: u64 = std::str::from_utf8(&text)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(1);
        Some(n.checked_sub(1))
    }

    fn colour(&self) -> Option<crate::output::colour::Colouring> {
        self.shared.work.colour
    }

    fn tag_of(&self, bytes: &[u8], seq: u64, out: &mut Vec<u8>) -> bool {
        let s = self.shared;
        // A block on the command's stdin is no value of the line: `{}` in the tag is empty
        // there, as in the command (GNU Parallel's `--pipe --tagstring`).
        let values = match s.work.backend {
            Backend::Stdin => &[][..],
            _ => bytes,
        };
        match &s.work.tag {
            Some(tag) => {
                tag.render(
                    values,
                    s.work.template.delimiter(),
                    seq + 1,
                    match self.slot.get() {
                        0 => self.index as u64 + 1,
                        held => held,
                    },
                    out,
                );
                true
            }
            None => false,
        }
    }
}

/// The command line of `argv` as the joblog and a results table show it (into `out`, cleared
/// first): a job line's text as written, else its words after the first `skip` (the shell's),
/// quoted where they need it, the first as it is when `raw_first` (a shell line).
fn shown_command(argv: &Argv, (skip, raw_first): (usize, bool), out: &mut Vec<u8>) {
    out.clear();
    match argv.shown() {
        Some(text) => out.extend_from_slice(text),
        None => crate::output::joblog::command_line(argv.words().skip(skip), raw_first, out),
    }
}

/// One worker's loop, and what it keeps across batches: buffers reused so that a batch
/// allocates nothing, and where its capture file stands.
struct Worker<'a, S: Site> {
    site: &'a S,
    /// `-t`: the claimed batch's turn to show its command line ([`Site::draw_trace_turn`]).
    trace_turn: Option<u64>,
    runner: &'a mut dyn Runner,
    capture: Option<&'a Arc<Capture>>,
    /// Commands' stderr, kept for their results (`frun parallel --results`) or to follow
    /// their stdout ([`Site::groups_stderr`]).
    errors: Option<&'a Arc<Capture>>,
    /// [`Site::groups_stderr`]: how many bytes at the end of the batch's output in the capture
    /// are its stderr (tagged as its stdout is).
    stderr: u64,
    rules: Rules,
    /// Arguments are copies: a part's input bytes are not needed once they are built, unless
    /// they are fed to the command's stdin or the part may have to run again.
    release_early: bool,
    argv: Argv,
    /// Parts of the current batch still to run, with the retries each had (a failed batch of
    /// several records is split in two, so one bad record cannot take the others down), and
    /// the parts that are done.
    parts: Vec<(u64, u64, u64)>,
    done: Vec<(u64, u64)>,
    /// The capture up to here went to the emitter.
    written: u64,
    /// This worker's attempts so far (they number its command lines).
    attempts: u64,
    /// `--joblog`: what the current batch's line will say (None: no joblog).
    job: Option<JobNote>,
    /// Successful attempts are timed (`--job-timeout N%`).
    measure: bool,
    /// The joblog line being written (reused).
    line: Vec<u8>,
    /// The command line the joblog or a results table shows (reused).
    command: Vec<u8>,
    /// `--line-buffer`: the relay that passes on this worker's output, tagging its lines with
    /// `tag` (`--tag`; reused, empty for none).
    relay: Option<&'a LineRelay>,
    tag: Vec<u8>,
    /// `--color` with the relay: the escape that starts the batch's colour (reused).
    colour: Vec<u8>,
    /// The start gate's turn, held from before the claim until the claimed batch's first
    /// attempt starts: after its line was measured ([`Site::line_too_long`]), so no later job
    /// starts before an earlier one's line is known to fit, and after its `--delay`.
    turn: Option<crate::dispatch::pace::StartTurn<'a>>,
    /// `--tmpl`: the files written for the current batch.
    templated: Vec<std::path::PathBuf>,
}

/// What a batch's joblog line says, gathered over its attempts.
#[derive(Clone, Copy)]
struct JobNote {
    /// Leading words of the command line the log does not show, and whether the next is shown
    /// as it is.
    skip_words: (usize, bool),
    /// When its first attempt started, and that attempt's number.
    start: Option<(SystemTime, Instant, u64)>,
    /// The last failure of one of its parts (zero when they all succeeded).
    shown: FailureShown,
    /// Bytes fed to its commands' stdin.
    send: u64,
    /// A failure split it: its line shows the whole batch's command, rebuilt.
    split: bool,
}

impl JobNote {
    fn new(skip_words: (usize, bool)) -> JobNote {
        JobNote {
            skip_words,
            start: None,
            shown: FailureShown {
                exitval: 0,
                signal: 0,
            },
            send: 0,
            split: false,
        }
    }
}

/// Where a batch stands once each of its parts is done or given up.
struct Settled {
    /// The capture holds the batch's kept output from `written` to here.
    kept: u64,
    /// Bytes its commands wrote to stdout (before `--files` or a tag changed them).
    received: u64,
    /// A command of the batch exited non-zero and that stands (it is not retried).
    failed: bool,
    /// Its end stops the run once the batch's output is out (`Rules::abort`).
    abort: Option<StopReason>,
}

impl<'a, S: Site> Worker<'a, S> {
    fn new(
        site: &'a S,
        runner: &'a mut dyn Runner,
        capture: Option<&'a Arc<Capture>>,
    ) -> Worker<'a, S> {
        let rules = site.rules();
        // A batch that may be run again keeps its input until its outcome is final.
        let release_early = !runner.reads_input() && !rules.retry.may_retry();
        Worker {
            site,
            runner,
            capture,
            errors: None,
            rules,
            release_early,
            argv: Argv::default(),
            parts: Vec::new(),
            done: Vec::new(),
            written: 0,
            attempts: 0,
            job: site.joblog().map(JobNote::new),
            measure: site.measures_runtimes(),
            line: Vec::new(),
            command: Vec::new(),
            stderr: 0,
            relay: None,
            tag: Vec::new(),
            colour: Vec::new(),
            turn: None,
            templated: Vec::new(),
            trace_turn: None,
        }
    }

    /// Claims and runs batches until there are no more or the run stops.
    fn serve(mut self) -> io::Result<()> {
        let mut finished = false;
        loop {
            if !self.site.job_room(finished) {
                break;
            }
            // The start gate is held across the claim, so batches start in claim order.
            self.turn = self.site.start_turn();
            let Some(batch) = self.site.claim(finished) else {
                self.turn = None;
                self.site.job_done();
                break;
            };
            finished = true;
            self.trace_turn = self.site.draw_trace_turn();
            let served = self.serve_one(&batch);
            self.site.job_done();
            self.turn = None;
            if let Some(t) = self.trace_turn.take() {
                self.site.pass_trace_turn(t);
            }
            if !served? {
                break;
            }
        }
        Ok(())
    }

    /// Runs (or skips) one claimed batch, holding the start gate's turn until its first
    /// attempt may start; false when the worker must stop.
    fn serve_one(&mut self, batch: &Batch) -> io::Result<bool> {
        if self.site.stop().is_stopped() {
            return Ok(false);
        }
        if self
            .site
            .skips(self.site.bytes(batch.start, batch.end), batch.seq)
        {
            self.turn = None;
            return Ok(self.skip(batch));
        }
        let began = self.site.timed().then(Instant::now);
        // None: the run stops, and the batch stays undone (a resume runs it).
        let Some(settled) = self.run_parts(batch)? else {
            return Ok(false);
        };
        self.finish(batch, settled, began)
    }

    /// Hands a batch an earlier run did to the emitter as done, without running it; false when
    /// the worker must stop.
    fn skip(&mut self, batch: &Batch) -> bool {
        let site = self.site;
        site.release(batch.seq);
        let finished = Finished {
            seq: batch.seq,
            piece: None,
            done: DoneSet::of(&[(batch.start, batch.end)]),
            failed: false,
            log: None,
        };
        match site.complete(finished) {
            Ok(()) => true,
            Err(e) => {
                site.stop().request(emit_stop(e, site.output_target()));
                false
            }
        }
    }

    /// Takes the settled batch's stdout (the capture from `written` to `kept`) and stderr out
    /// of the captures.
    fn take_output(&mut self, settled: &Settled) -> io::Result<(Vec<u8>, Vec<u8>)> {
        let stdout = match self.capture {
            Some(c) => {
                let mut out = c.read_from(self.written)?;
                out.truncate((settled.kept - self.written) as usize);
                c.discard_from(self.written)?;
                out
            }
            None => Vec::new(),
        };
        let stderr = match self.errors {
            Some(c) => {
                let err = c.read_from(0)?;
                c.discard_from(0)?;
                err
            }
            None => Vec::new(),
        };
        Ok((stdout, stderr))
    }

    /// Saves the settled batch's stdout (the capture from `written` on) and stderr as its
    /// results and drops them from the captures: nothing of it is printed.
    fn save(&mut self, batch: &Batch, settled: &mut Settled) -> io::Result<Result<(), StopReason>> {
        let (stdout, stderr) = self.take_output(settled)?;
        settled.kept = self.written;
        let bytes = self.site.bytes(batch.start, batch.end);
        Ok(self.site.save_results(bytes, batch.seq, &stdout, &stderr))
    }

    /// `--results NAME.json/.csv/.tsv`: replaces the batch's output in the capture with its
    /// record (its stdout and stderr in it).
    fn table_record(
        &mut self,
        table: &crate::output::results::table::Table,
        batch: &Batch,
        (facts, note): (crate::output::joblog::JobFacts, JobNote),
        settled: &mut Settled,
    ) -> io::Result<()> {
        let (mut stdout, stderr) = self.take_output(settled)?;
        // `--files`: the field holds the file's name, without the line's newline.
        if self.site.output_files_in().is_some() && stdout.ends_with(b"\n") {
            stdout.pop();
        }
        shown_command(&self.argv, note.skip_words, &mut self.command);
        let mut record = Vec::new();
        table.record(
            &crate::output::results::table::Row {
                facts,
                command: &self.command,
                batch: self.site.bytes(batch.start, batch.end),
                stdout: &stdout,
                stderr: &stderr,
            },
            &mut record,
        );
        settled.kept = self.written;
        if let Some(c) = self.capture {
            c.append(&record)?;
            settled.kept += record.len() as u64;
        }
        Ok(())
    }

    /// Runs the batch's parts until each is done or given up; None when the run stops first.
    fn run_parts(&mut self, batch: &Batch) -> io::Result<Option<Settled>> {
        self.parts.clear();
        self.done.clear();
        self.parts.push((batch.start, batch.end, 0));
        if let Some(j) = &mut self.job {
            *j = JobNote::new(j.skip_words);
        }
        let mut settled = Settled {
            kept: self.written,
            received: 0,
            failed: false,
            abort: None,
        };
        while let Some((start, end, retried)) = self.parts.pop() {
            let bytes = self.site.bytes(start, end);
            // A part of a split batch holds only its own records (an uncounted batch, 0, stays
            // uncounted).
            let whole = (start, end) == (batch.start, batch.end);
            let part = Batch {
                start,
                end,
                records: if whole || batch.records == 0 {
                    batch.records
                } else {
                    count_records(bytes, self.rules.delimiter)
                },
                ..*batch
            };
            let Some(outcome) = self.attempt(part, retried, bytes)? else {
                return Ok(None);
            };
            self.settle(part, retried, bytes, outcome, &mut settled)?;
        }
        Ok(Some(settled))
    }

    /// Runs one attempt at `part` (after `retried` retries); None when the run stops instead
    /// (the part stays undone).
    fn attempt(&mut self, part: Batch, retried: u64, bytes: &[u8]) -> io::Result<Option<Outcome>> {
        let ended = self.attempt_once(part, retried, bytes);
        self.site.attempt_ended();
        ended
    }

    fn attempt_once(
        &mut self,
        part: Batch,
        retried: u64,
        bytes: &[u8],
    ) -> io::Result<Option<Outcome>> {
        let site = self.site;
        site.command(bytes, part.seq, self.attempts, &mut self.argv);
        // A perl replacement string called `skip()`: the job does not run, and counts as failed
        // (as GNU Parallel counts it).
        if crate::exec::command::perl::take_skipped() {
            return Ok(Some(Outcome::Exited(1)));
        }
        site.write_templates(bytes, part.seq, &mut self.templated)?;
        if let Some(why) = site.line_too_long(bytes, &self.argv) {
            // Asked before the turn is let go: the next holder sees the run stopped.
            site.stop().request(why);
            return Ok(None);
        }
        self.attempts += 1;
        if let Some(r) = self.relay {
            self.tag.clear();
            let tagged = site.tag_of(bytes, part.seq, &mut self.tag);
            // `--color` on live lines: a job's colour is its number's (whether it fails is not
            // known while its lines go out, so `--color-failed` alone colours none).
            self.colour.clear();
            let mut live = 0;
            if let Some(c) = site.colour() {
                crate::output::colour::start(c, part.seq + 1, false, &mut self.colour);
                live = self.colour.len();
                crate::output::colour::start(c, part.seq + 1, true, &mut self.colour);
            }
            let (live, failed) = self.colour.split_at(live);
            r.dress_lines_with(tagged.then_some(&self.tag[..]), live, failed);
        }
        // Nothing runs on bytes read past the end of an input file that shrank.
        if !site.intact(part.end) {
            site.input_shrank();
            return Ok(None);
        }
        if self.release_early {
            site.release(part.seq);
        }
        // `--memfree`, then `--delay`: a run that stops meanwhile leaves the part undone (a
        // batch's first attempt waits on the turn it holds since its claim, later ones on the
        // gate).
        if !site.memory_room() {
            return Ok(None);
        }
        let paced = match self.turn.take() {
            Some(turn) => turn.wait(site.stop().as_fd()).map(Some),
            None => site.pace(),
        };
        let Some(gated) = paced else {
            return Ok(None);
        };
        if let Some(j) = &mut self.job {
            if j.start.is_none() {
                // The clocks are read only for a joblog, the gate's moment when it has one.
                let at = gated.unwrap_or_else(crate::dispatch::pace::Started::now);
                j.start = Some((at.wall, at.mono, self.attempts - 1));
            }
        }
        if let Some(c) = self.errors {
            c.discard_from(0)?;
        }
        let began = self.measure.then(Instant::now);
        let attempt = Attempt {
            part,
            argv: &self.argv,
            retried,
            slot: site.job_slot(),
            trace_turn: self.trace_turn.filter(|_| retried == 0),
        };
        let outcome = match self.runner.run(&attempt)? {
            Ending::Ran(outcome) => outcome,
            Ending::Stop(why) => {
                site.stop().request(why);
                return Ok(None);
            }
        };
        // A run that is stopping discards the part (it stays undone for a resume), unless it
        // drains (`--halt soon`): then running batches count.
        let stop = site.stop();
        if stop.is_stopped() && !stop.drains() {
            return Ok(None);
        }
        if matches!(outcome, Outcome::Signaled(libc::SIGPIPE)) && site.reader_gone() {
            stop.request(StopReason::ReaderGone);
            return Ok(None);
        }
        if let (Some(t), Outcome::Ok) = (began, &outcome) {
            site.note_runtime(t.elapsed());
        }
        Ok(Some(outcome))
    }

    /// Judges an attempt at `part` (after `retried` retries): it stands, or the part is split,
    /// queued again or given up, and a failed attempt's partial output is dropped. A worker
    /// shell killed on every attempt is given up like a command (forkrun stopped the run).
    fn settle(
        &mut self,
        part: Batch,
        retried: u64,
        bytes: &[u8],
        outcome: Outcome,
        settled: &mut Settled,
    ) -> io::Result<()> {
        let (site, rules) = (self.site, self.rules);
        let mut policy = rules.retry;
        if !matches!(outcome, Outcome::Ok) {
            if let Some(limit) = site.retries_of(bytes, part.seq) {
                policy.limit = limit;
            }
        }
        let verdict = policy.judge(&outcome, retried);
        if verdict == Verdict::Final {
            if let Some(c) = self.capture {
                settled.received += c.size()?.saturating_sub(settled.kept);
                // With a line relay, lines are tagged as they pass.
                if let Some(dir) = site.output_files_in() {
                    match spill_output(c, settled.kept, dir, site.output_files_compress()) {
                        // What the job gave is what its file holds (compressed, GNU Parallel's
                        // Receive says so).
                        Ok(Some((raw, kept))) => settled.received = settled.received - raw + kept,
                        Ok(None) => {}
                        Err(e) => {
                            // The output is neither kept nor printed in place of its file's name.
                            c.discard_from(settled.kept)?;
                            let why = crate::sys::errors::os_message(&e);
                            let msg =
                                format!("cannot keep a job's output in {}: {why}", dir.display());
                            site.stop().request(StopReason::Fatal(msg));
                        }
                    }
                }
                let mut tag = Vec::new();
                let tagged = self.relay.is_none() && site.tag_of(bytes, part.seq, &mut tag);
                // `--files`: the line is the file's name, which is never coloured. With a line
                // relay, lines are dressed as they pass.
                let colour = site
                    .colour()
                    .filter(|_| site.output_files_in().is_none() && self.relay.is_none());
                let mut start = Vec::new();
                if let Some(colouring) = colour {
                    let failed = !matches!(outcome, Outcome::Ok);
                    crate::output::colour::start(colouring, part.seq + 1, failed, &mut start);
                }
                // The job's lines from `off` on, coloured and tagged as asked.
                let dress = |off: u64| match colour {
                    Some(_) => colour_lines(c, off, &start, tagged.then_some(&tag[..])),
                    None if tagged => tag_lines(c, off, &tag),
                    None => Ok(()),
                };
                dress(settled.kept)?;
                settled.kept = c.size()?;
                // The job's stderr follows its stdout, dressed as it is (a grouped batch is one
                // job: it never splits, so nothing of it comes after this).
                if let Some(e) = self.errors.filter(|_| site.groups_stderr()) {
                    if c.append_all_of(e)? > 0 {
                        e.discard_from(0)?;
                        dress(settled.kept)?;
                        let end = c.size()?;
                        self.stderr += end - settled.kept;
                        settled.kept = end;
                    }
                }
            }
            self.done.push((part.start, part.end));
            settled.failed |= !matches!(outcome, Outcome::Ok);
            if let Some(j) = &mut self.job {
                if !matches!(outcome, Outcome::Ok) {
                    j.shown = outcome.shown();
                }
                if self.runner.feeds_stdin() {
                    j.send += part.end - part.start;
                }
            }
            if rules.abort && settled.abort.is_none() {
                settled.abort = abort_reason(&outcome, || site.command_name());
            }
            site.ledger()
                .record(&part, &outcome, &|| site.shown_line(&self.argv));
            return Ok(());
        }
        // A failed attempt's partial output never appears.
        if let Some(c) = self.capture {
            c.discard_from(settled.kept)?;
        }
        let split = if rules.splittable {
            split_point(bytes, rules.delimiter)
        } else {
            None
        };
        let (start, end) = (part.start, part.end);
        if let Some(j) = &mut self.job {
            j.split |= split.is_some();
        }
        if let Some(mid) = split {
            // Left half first (it is popped first), so output keeps input order.
            self.parts.push((start + mid, end, 0));
            self.parts.push((start, start + mid, 0));
            site.ledger().retried();
        } else if verdict == Verdict::Retry && !site.stop().is_stopped() {
            self.parts.push((start, end, retried + 1));
            site.ledger().retried();
        } else {
            let records = if part.records == 0 {
                0
            } else {
                count_records(bytes, rules.delimiter)
            };
            if let Some(j) = &mut self.job {
                j.shown = outcome.shown();
            }
            site.ledger()
                .given_up(&Batch { records, ..part }, &outcome, retried + 1);
        }
        Ok(())
    }

    /// Hands a settled batch to the emitter, then stops the run if `--halt` is reached; false
    /// when the worker must stop.
    fn finish(
        &mut self,
        batch: &Batch,
        mut settled: Settled,
        began: Option<Instant>,
    ) -> io::Result<bool> {
        let site = self.site;
        let stop = site.stop();
        let ended = Instant::now();
        // A job completed (perl's `$Global::total_completed`).
        crate::exec::command::perl::add_completed(1);
        for p in self.templated.drain(..) {
            if site.cleans_templates() {
                let _ = std::fs::remove_file(p);
            }
        }
        // A split batch's line shows its whole command, built again while its input is here.
        if let Some(JobNote {
            split: true,
            start: Some((_, _, first)),
            ..
        }) = self.job
        {
            let bytes = site.bytes(batch.start, batch.end);
            site.command(bytes, batch.seq, first, &mut self.argv);
            site.attempt_ended();
        }
        let receive = settled.received;
        if site.saves_results() {
            if let Err(why) = self.save(batch, &mut settled)? {
                stop.request(why);
                return Ok(false);
            }
        }
        // What the joblog and a results table say of the batch.
        let facts = self.job.and_then(|j| {
            let (start, at, _) = j.start?;
            Some(crate::output::joblog::JobFacts {
                seq: batch.seq + 1,
                start,
                runtime: ended.duration_since(at),
                send: j.send,
                receive,
                exitval: j.shown.exitval,
                signal: j.shown.signal,
            })
        });
        if let (Some(table), Some(j), Some(facts)) = (site.results_table(), self.job, facts) {
            self.table_record(table, batch, (facts, j), &mut settled)?;
        }
        site.release(batch.seq);
        // Checked before the batch is recorded done: its stdin copy may have come up short.
        if site.shrank() {
            site.input_shrank();
            return Ok(false);
        }
        let stderr = std::mem::take(&mut self.stderr);
        let piece = self.capture.and_then(|c| {
            let p = Piece {
                capture: Arc::clone(c),
                off: self.written,
                len: settled.kept - self.written,
                stderr,
            };
            self.written = settled.kept;
            (p.len > 0).then_some(p)
        });
        let log_line = match (self.job, facts) {
            (Some(j), Some(facts)) => {
                self.line.clear();
                shown_command(&self.argv, j.skip_words, &mut self.command);
                crate::output::joblog::Entry {
                    facts,
                    command: std::iter::once(&self.command[..]),
                    raw_first: true,
                }
                .format(&mut self.line);
                true
            }
            _ => false,
        };
        let ordered_log = log_line && site.orders_log();
        let finished = Finished {
            seq: batch.seq,
            piece,
            done: DoneSet::of(&self.done),
            failed: settled.failed,
            log: ordered_log.then(|| self.line.clone()),
        };
        let abort = settled.abort;
        if let Err(e) = site.complete(finished) {
            stop.request(emit_stop(e, site.output_target()));
            return Ok(false);
        }
        if let Some(why) = abort {
            stop.request(why);
            return Ok(false);
        }
        if let Some(t) = began {
            site.note_busy(t.elapsed());
        }
        if log_line && !ordered_log {
            if let Err(why) = site.log_job(&self.line) {
                stop.request(why);
                return Ok(false);
            }
        }
        if let Some(h) = self.rules.halt {
            self.judge_halt(h, settled.failed);
        }
        if let Some(c) = self.capture {
            if self.written > 0 && c.reset_if_drained()? {
                self.written = 0;
            }
        }
        Ok(true)
    }

    /// `--halt`: names the batch that just ended when the halt counts it (GNU Parallel's way)
    /// and stops the run when enough such batches ended.
    fn judge_halt(&self, h: Halt, failed: bool) {
        let (site, stop) = (self.site, self.site.stop());
        let counted = match h.on {
            HaltOn::Fail => failed,
            HaltOn::Success => !failed,
            HaltOn::Done => true,
        };
        if counted && self.rules.halt_names_jobs && !stop.is_stopped() {
            let line = site.shown_line(&self.argv);
            crate::sys::notice::say_about(
                crate::sys::notice::NoticeKind::Problem,
                Some(crate::sys::notice::Fact::Halted {
                    failed,
                    done: h.on == HaltOn::Done,
                }),
                &line,
                format_args!(
                    "--halt counts a job that {}: {line}",
                    if failed { "failed" } else { "succeeded" }
                ),
            );
        }
        if site.ledger().halt_reached(h, site.total_batches()) {
            let ledger = site.ledger();
            stop.request(StopReason::Halt {
                now: h.now,
                on: h.on,
                failed: ledger.failed_batches() + ledger.given_up_batches(),
                job: Some((failed, site.shown_line(&self.argv))),
            });
        }
    }
}

/// xargs' immediate stops: a command that exited 255 (124) or was killed by a signal (125).
fn abort_reason(outcome: &Outcome, name: impl Fn() -> String) -> Option<StopReason> {
    match outcome {
        Outcome::Exited(255) => Some(StopReason::Abort {
            message: format!("{}: exited with status 255; aborting", name()),
            status: 124,
            fact: None,
        }),
        Outcome::Signaled(s) => Some(StopReason::Abort {
            message: format!("{}: terminated by signal {s}", name()),
            status: 125,
            fact: None,
        }),
        _ => None,
    }
}

/// Where to split a failed part of several records in two: the record boundary nearest its
/// middle (an offset within `bytes`), or None for a single record.
fn split_point(bytes: &[u8], delimiter: u8) -> Option<u64> {
    // The last byte ends the last record; a boundary must have a record after it.
    let body = bytes.get(..bytes.len().checked_sub(1)?)?;
    let mid = body.len() / 2;
    let after = memchr::memchr(delimiter, &body[mid..]).map(|i| mid + i + 1);
    let before = memchr::memrchr(delimiter, &body[..mid]).map(|i| i + 1);
    let at = match (before, after) {
        (Some(b), Some(a)) => {
            if mid - b < a - mid {
                b
            } else {
                a
            }
        }
        (b, a) => a.or(b)?,
    };
    Some(at as u64)
}

#[cfg(test)]
mod tests;

/// `--files`: moves what was written to `capture` from `off` on (through `compress`, when
/// given) into a new file in `dir` and writes the file's name and a newline there instead.
/// With `compress`: the bytes the job wrote and the bytes the file holds.
fn spill_output(
    capture: &Capture,
    off: u64,
    dir: &std::path::Path,
    compress: Option<&[u8]>,
) -> io::Result<Option<(u64, u64)>> {
    use std::os::unix::ffi::OsStrExt;
    let mut out = capture.read_from(off)?;
    let mut sizes = None;
    if let Some(program) = compress {
        let raw = out.len() as u64;
        out = crate::output::results::compress::compressed(program, &out)
            .map_err(io::Error::other)?;
        sizes = Some((raw, out.len() as u64));
    }
    let path = crate::output::results::spill::keep(dir, &out)?;
    capture.discard_from(off)?;
    let mut line = path.as_os_str().as_bytes().to_vec();
    line.push(b'\n');
    capture.append(&line)?;
    Ok(sizes)
}

/// `--color`: dresses the capture's lines from `off` on in the job's colour (`start`) and tag
/// ([`crate::output::colour::dress`]).
fn colour_lines(capture: &Capture, off: u64, start: &[u8], tag: Option<&[u8]>) -> io::Result<()> {
    let out = capture.read_from(off)?;
    if out.is_empty() {
        return Ok(());
    }
    let mut dressed = Vec::with_capacity(out.len() + 64);
    crate::output::colour::dress(&out, start, tag, &mut dressed);
    capture.discard_from(off)?;
    capture.append(&dressed)
}

/// Starts every line written to `capture` from `off` on with `tag` and a tab (a last line
/// without its newline too). A carriage return ends a line as a newline does (GNU Parallel
/// tags what a terminal shows over a `\r`; in `x\r\n` the `\n` gets a tag of its own too).
fn tag_lines(capture: &Capture, off: u64, tag: &[u8]) -> io::Result<()> {
    let out = capture.read_from(off)?;
    if out.is_empty() {
        return Ok(());
    }
    let lines = out.split_inclusive(|&b| b == b'\n' || b == b'\r');
    let mut tagged = Vec::with_capacity(out.len() + (tag.len() + 1) * 8);
    for line in lines {
        tagged.extend_from_slice(tag);
        tagged.push(b'\t');
        tagged.extend_from_slice(line);
    }
    capture.discard_from(off)?;
    capture.append(&tagged)
}
