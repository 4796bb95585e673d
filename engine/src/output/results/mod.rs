//! The results directory of a run split over tasks (`--results DIR`): each task of each run
//! writes its own output file and journal there; a new run reads every journal back to skip
//! what any task of any earlier run completed; `frun merge DIR` puts the outputs together.
//!
//! It only handles those files: the scanner skips the input, the emitter writes the output and
//! the journal records it. Nothing here runs a command or looks at the input.
//!
//! Files are `task-I-of-N.A.out` and `task-I-of-N.A.journal`, where `A` is the first number
//! not taken yet, so no run ever writes into another's files. Shared storage only needs
//! exclusive creation and POSIX record locks (NFS has both).

pub mod compress;
pub mod job_files;
pub mod spill;
pub mod table;

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nix::fcntl::OFlag;

use crate::input::shard::Shard;
use crate::input::shard::claims::Book;
use crate::journal::{self, Checkpoint, InputId, Journal, merge_intervals};
use crate::output::emit::OrderMode;
use crate::sys::errors::count;

const PREFIX: &str = "task-";
const JOURNAL: &str = ".journal";
const OUTPUT: &str = ".out";

/// Where a task's output goes.
pub struct Destination {
    /// This task's output file (instead of stdout).
    pub out: File,
    /// The task, for messages: `task I/N`.
    pub task: String,
    /// The results directory.
    pub dir: PathBuf,
    /// The number of this task's files (`A` in `task-I-of-N.A.out`): how many runs of this
    /// task wrote to DIR before.
    pub run: u32,
}

/// This task's files, set up before any work.
pub struct TaskFiles {
    /// Where the task's output goes.
    pub dest: Destination,
    /// The task's journal, in the results directory.
    pub journal: Arc<Journal>,
    /// What earlier runs completed, when there were any.
    pub resume: Option<Checkpoint>,
}

fn os(e: &io::Error) -> String {
    crate::sys::errors::os_message(e)
}

/// The journals in `dir`, sorted by name.
fn journals(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rd =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {}", dir.display(), os(&e)))?;
    let mut out = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| format!("cannot read {}: {}", dir.display(), os(&e)))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(PREFIX) && name.ends_with(JOURNAL) {
            out.push(entry.path());
        }
    }
    out.sort();
    Ok(out)
}

/// The task a journal's name says: `(I, N)` of `task-I-of-N.A.journal`.
fn task_of(path: &Path) -> Option<(u64, u64)> {
    let name = path.file_name()?.to_str()?.strip_prefix(PREFIX)?;
    let (i, rest) = name.split_once("-of-")?;
    let (n, _) = rest.split_once('.')?;
    Some((i.parse().ok()?, n.parse().ok()?))
}

/// `task-….A` of a journal's name.
fn stem_of(journal: &Path) -> String {
    let name = journal.file_name().unwrap_or_default().to_string_lossy();
    name.trim_end_matches(JOURNAL).to_string()
}

/// The output file next to a journal.
fn output_of(journal: &Path) -> PathBuf {
    let name = journal.file_name().unwrap_or_default().to_string_lossy();
    journal.with_file_name(format!("{}{OUTPUT}", name.trim_end_matches(JOURNAL)))
}

/// Which task this is: one of a fixed number (`--shard I/N`), or one of those sharing the run
/// by claims.
#[derive(Clone, Copy)]
pub enum TaskOf<'a> {
    /// Task I of N, with fixed chunks.
    Fixed(Shard),
    /// A task taking claims from this book.
    Claims(&'a Arc<Book>),
}

impl TaskOf<'_> {
    /// The name in the task's file names: `I-of-N`, or the task's id.
    fn name(&self) -> String {
        match self {
            TaskOf::Fixed(s) => s.name(),
            TaskOf::Claims(b) => b.task().to_string(),
        }
    }
}

/// Opens (creating) `dir`, reads what earlier runs completed, and creates this task's files.
/// `run` identifies the command (as a checkpoint's `run`), `command` is shown in the journal,
/// `chunk` is the task's chunk size. Errors are one line for the user (exit 2). A task sharing
/// by claims skips nothing by the journals (its claims say what is its), and joins the tasks
/// of the same run still going.
pub fn prepare(
    dir: &Path,
    of: TaskOf<'_>,
    chunk: u64,
    run: &str,
    command: &str,
    order: OrderMode,
) -> Result<TaskFiles, String> {
    let task = match of {
        TaskOf::Fixed(shard) => format!("task {}/{}", shard.index, shard.count),
        TaskOf::Claims(b) => format!("task {}", b.task()),
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("--results: cannot create {}: {}", dir.display(), os(&e)))?;
    let resume = earlier_runs(dir, of, run)?;
    let resume = match of {
        TaskOf::Fixed(_) => resume,
        TaskOf::Claims(_) => None,
    };
    let (out, journal_path, attempt) = create_output(dir, &of.name())?;
    if let TaskOf::Claims(b) = of {
        b.set_stem(&format!("{PREFIX}{}.{attempt}", of.name()));
    }
    let header = format!(
        "command: {command}\n# {task} of a run writing to {}: run the same command again to \
         continue it; frun merge {} writes the output",
        dir.display(),
        dir.display()
    );
    let journal = Arc::new(create_journal(
        &journal_path,
        run,
        &header,
        &out,
        of,
        chunk,
        order,
    )?);
    if let TaskOf::Claims(b) = of {
        b.set_journal(&journal);
    }
    Ok(TaskFiles {
        dest: Destination {
            out,
            task,
            dir: dir.to_path_buf(),
            run: attempt,
        },
        journal,
        resume,
    })
}

/// What every earlier run's tasks in `dir` completed, as one checkpoint (None when there were
/// none). Refused: a run still going, results of another command or of another input.
fn earlier_runs(dir: &Path, of: TaskOf<'_>, run: &str) -> Result<Option<Checkpoint>, String> {
    let mut done = Checkpoint {
        run: run.to_string(),
        ..Checkpoint::default()
    };
    let mut any = false;
    let mut intervals = Vec::new();
    let claims_dir = dir.join(crate::input::shard::claims::SHARE_DIR).is_dir();
    if let (TaskOf::Fixed(_), true) = (of, claims_dir) {
        return Err(format!(
            "--results: {} holds a run shared by claims; continue it with --share claims (or \
             use another directory)",
            dir.display()
        ));
    }
    for path in journals(dir)? {
        if let (TaskOf::Claims(_), Some(_)) = (of, task_of(&path)) {
            return Err(format!(
                "--results: {} holds a run split in fixed shares; continue it with --share \
                 fixed (or use another directory)",
                dir.display()
            ));
        }
        let file = journal::open_read(&path).map_err(|e| format!("--results: {e}"))?;
        if let Some(pid) = journal::holder(&file) {
            // A live task. One of this run (same task count, another task) is fine: its work
            // lies in its own chunks. Any other is a run still going (an old job not yet gone):
            // running beside it would do its chunks twice. Tasks sharing by claims join the
            // live ones of the same command (checked below, with the finished ones).
            match of {
                TaskOf::Fixed(shard) => {
                    if task_of(&path).is_some_and(|(i, n)| n == shard.count && i != shard.index) {
                        continue;
                    }
                }
                TaskOf::Claims(_) if task_of(&path).is_none() => {
                    match journal::read(&path) {
                        Ok(cp) if cp.run == run => continue,
                        Ok(_) => {}
                        // Being created right now.
                        Err(_) if !records_anything(&path) => continue,
                        Err(e) => return Err(format!("--results: {e}")),
                    }
                }
                TaskOf::Claims(_) => {}
            }
            return Err(format!(
                "--results: {} is being written by a running frun (pid {pid} here or on \
                 another host); wait for that run to end, or use another directory",
                path.display()
            ));
        }
        let cp = match journal::read(&path) {
            Ok(cp) => cp,
            // A task of this run creating its journal right now (created, not yet locked and
            // written): it records nothing yet.
            Err(_) if !records_anything(&path) => continue,
            Err(e) => return Err(format!("--results: {e}")),
        };
        if cp.run != run {
            return Err(format!(
                "--results: {} holds results of another command (or of other options that shape \
                 its output); use a new directory, or the same arguments",
                dir.display()
            ));
        }
        if let Some(id) = &cp.input {
            match &done.input {
                None => done.input = Some(id.clone()),
                Some(first) if !same_input(first, id) => {
                    return Err(format!(
                        "--results: the journals in {} were written for different inputs",
                        dir.display()
                    ));
                }
                Some(_) => {}
            }
        }
        intervals.extend_from_slice(&cp.intervals);
        done.batches += cp.batches;
        any = true;
    }
    done.intervals = merge_intervals(intervals);
    Ok(any.then_some(done))
}

/// This task's output file, created under the first attempt number whose name is free, with
/// the path of its journal and that number.
fn create_output(dir: &Path, name: &str) -> Result<(File, PathBuf, u32), String> {
    let mut attempt = 0u32;
    loop {
        let stem = format!("{PREFIX}{name}.{attempt}");
        let out_path = dir.join(format!("{stem}{OUTPUT}"));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(OFlag::O_CLOEXEC.bits())
            .open(&out_path)
        {
            Ok(f) => return Ok((f, dir.join(format!("{stem}{JOURNAL}")), attempt)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => attempt += 1,
            Err(e) => {
                return Err(format!(
                    "--results: cannot create {}: {}",
                    out_path.display(),
                    os(&e)
                ));
            }
        }
    }
}

/// This task's journal, created now next to its output file `out`, with its `task` line.
fn create_journal(
    journal_path: &Path,
    run: &str,
    header: &str,
    out: &File,
    of: TaskOf<'_>,
    chunk: u64,
    order: OrderMode,
) -> Result<Journal, String> {
    let mut j = Journal::new(
        journal_path,
        run,
        header,
        Some(0),
        false,
        out.try_clone().ok().map(std::os::fd::OwnedFd::from),
    )
    .with_failures_done();
    let order = match order {
        OrderMode::Ordered => "ordered",
        _ => "buffered",
    };
    // A task sharing by claims has no number: its line says 0 of 0.
    let (index, count) = match of {
        TaskOf::Fixed(s) => (s.index, s.count),
        TaskOf::Claims(b) => {
            let book = Arc::clone(b);
            j = j.on_durable(move |done| book.durable(done));
            (0, 0)
        }
    };
    j.head_line(&format!("task {index} {count} {chunk} {order}"));
    match j.create_now() {
        Ok(()) => Ok(j),
        Err(journal::OpenError::Busy) => Err(format!(
            "--results: {} is in use by another frun",
            journal_path.display()
        )),
        Err(journal::OpenError::Refused(why)) => Err(format!("--results: {why}")),
        Err(journal::OpenError::Io(e)) => Err(format!(
            "--results: cannot write {}: {}",
            journal_path.display(),
            os(&e)
        )),
    }
}

/// Whether a journal holds any `done` entry.
fn records_anything(path: &Path) -> bool {
    use std::io::Read;
    let mut t = Vec::new();
    journal::open_read(path)
        .and_then(|f| {
            f.take(journal::READ_CAP)
                .read_to_end(&mut t)
                .map_err(|e| os(&e))
        })
        .map_or(true, |_| {
            t.starts_with(b"done ") || t.windows(6).any(|w| w == b"\ndone ")
        })
}

fn same_input(a: &InputId, b: &InputId) -> bool {
    a.head_len == b.head_len
        && a.head_hash == b.head_hash
        && (a.size.is_none() || b.size.is_none() || a.size == b.size)
}

/// One batch's output in a task's output file: input `[start, end)`, bytes `[from, to)`.
struct Piece {
    start: u64,
    end: u64,
    file: usize,
    from: u64,
    to: u64,
}

/// `frun merge DIR`: writes the combined output of every task to stdout — in input order when
/// the run kept order (`-k`), else each task's batches whole, task after task. Done when every
/// record of the input is done (or stdout's reader went away); else why not.
pub fn merge(dir: &Path) -> Result<(), MergeError> {
    match merge_into(dir, std::io::stdout().as_fd()) {
        Ok(Merged::Complete) | Ok(Merged::ReaderGone) => Ok(()),
        Ok(Merged::Incomplete(msg)) => Err(MergeError::Incomplete(msg)),
        Err(msg) => Err(MergeError::Unusable(msg)),
    }
}

/// Why `frun merge` could not write a whole run's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeError {
    /// Some records of the input are not done; what is done was written.
    Incomplete(String),
    /// The directory cannot be merged (not a results directory, unreadable, inconsistent).
    Unusable(String),
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MergeError::Incomplete(m) | MergeError::Unusable(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for MergeError {}

enum Merged {
    Complete,
    ReaderGone,
    Incomplete(String),
}

/// Shared by claims: a claim's results are the batches of the task that committed it; those
/// another task ran too (a claim taken over from a task that was only slow) are left out.
/// `stems` names each piece's task files.
fn keep_committed(dir: &Path, stems: &[String], pieces: &mut Vec<Piece>) -> Result<(), String> {
    if let Some(commits) = crate::input::shard::claims::commits(dir)? {
        pieces.retain(|p| {
            let at = commits.partition_point(|c| c.start <= p.start);
            at > 0 && {
                let c = &commits[at - 1];
                c.stem == stems[p.file] && p.end <= c.end
            }
        });
    }
    Ok(())
}

fn merge_into(dir: &Path, to: BorrowedFd<'_>) -> Result<Merged, String> {
    let paths = journals(dir)?;
    if paths.is_empty() {
        return Err(format!(
            "{} holds no results (no {PREFIX}*{JOURNAL} files)",
            dir.display()
        ));
    }
    let mut files = Vec::new();
    let mut stems = Vec::new();
    let mut pieces = Vec::new();
    let mut run = None;
    let mut ordered = None;
    let mut total: Option<u64> = None;
    for path in &paths {
        let file = journal::open_read(path)?;
        if let Some(pid) = journal::holder(&file) {
            return Err(format!(
                "{} is still being written (by pid {pid} here or on another host); merge once \
                 the run has ended",
                path.display()
            ));
        }
        let cp = journal::read(path)?;
        match &run {
            None => run = Some(cp.run.clone()),
            Some(r) if *r != cp.run => {
                return Err(format!(
                    "{} holds results of different commands ({} is another's)",
                    dir.display(),
                    path.display()
                ));
            }
            Some(_) => {}
        }
        let Some(task) = &cp.task else {
            return Err(format!("{} is not a task's journal", path.display()));
        };
        ordered.get_or_insert(task.order == "ordered");
        for len in [cp.end, cp.input.as_ref().and_then(|i| i.size)]
            .into_iter()
            .flatten()
        {
            total = Some(total.map_or(len, |t: u64| t.max(len)));
        }
        let out_path = output_of(path);
        // The same rules as for the journal: a FIFO would hang the merge, and a link or another
        // user's file would put bytes frun never wrote into the merged output.
        let out = journal::open_owned(&out_path)?;
        let size = out.metadata().map_err(|e| os(&e))?.len();
        let mut at = cp.base.unwrap_or(0);
        for &(start, end, written) in &cp.entries {
            let Some(written) = written else {
                return Err(format!("{} did not record its output (-u)", path.display()));
            };
            if written < at || written > size {
                return Err(format!(
                    "{} records {} of output, but {} holds {size}",
                    path.display(),
                    count(written, "byte", "bytes"),
                    out_path.display()
                ));
            }
            pieces.push(Piece {
                start,
                end,
                file: files.len(),
                from: at,
                to: written,
            });
            at = written;
        }
        files.push(out);
        stems.push(stem_of(path));
    }
    keep_committed(dir, &stems, &mut pieces)?;
    if ordered == Some(true) {
        pieces.sort_by_key(|p| p.start);
    }
    let mut by_start: Vec<(u64, u64)> = pieces.iter().map(|p| (p.start, p.end)).collect();
    by_start.sort_unstable();
    for w in by_start.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(format!(
                "input bytes {}..{} were done twice (two runs wrote to {} at once?)",
                w[1].0,
                w[0].1.min(w[1].1),
                dir.display()
            ));
        }
    }
    for p in &pieces {
        if p.to > p.from {
            match crate::output::emit::copy_range(to, files[p.file].as_fd(), p.from, p.to - p.from)
            {
                Ok(()) => {}
                Err(crate::output::emit::EmitError::Closed) => return Ok(Merged::ReaderGone),
                Err(crate::output::emit::EmitError::Io(e)) => {
                    return Err(format!("cannot write the output: {}", os(&e)));
                }
                Err(crate::output::emit::EmitError::Joblog(why)) => return Err(why),
            }
        }
    }
    let covered: u64 = merge_intervals(by_start).iter().map(|(s, e)| e - s).sum();
    Ok(match total {
        Some(t) if covered >= t => Merged::Complete,
        Some(t) => Merged::Incomplete(format!(
            "{} is incomplete: {covered} of {} are done; run the same command again to finish",
            dir.display(),
            count(t, "input byte", "input bytes")
        )),
        None => Merged::Incomplete(format!(
            "{} is incomplete: no task reached the end of the input; run the same command \
             again to finish",
            dir.display()
        )),
    })
}

/// `frun status DIR`: how far the run writing to `dir` is, as text for a terminal.
pub fn status(dir: &Path) -> Result<String, String> {
    use std::fmt::Write as _;
    let paths = journals(dir)?;
    if paths.is_empty() {
        return Err(format!(
            "{} holds no results (no {PREFIX}*{JOURNAL} files)",
            dir.display()
        ));
    }
    let mut out = String::new();
    let (mut live, mut total, mut command) = (0, None::<u64>, None);
    let mut intervals = Vec::new();
    for path in &paths {
        let file = journal::open_read(path)?;
        live += usize::from(journal::holder(&file).is_some());
        let Ok(cp) = journal::read(path) else {
            continue;
        };
        for len in [cp.end, cp.input.as_ref().and_then(|i| i.size)]
            .into_iter()
            .flatten()
        {
            total = Some(total.map_or(len, |t| t.max(len)));
        }
        if command.is_none() {
            command = std::fs::read_to_string(path).ok().and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("# command: ").map(str::to_string))
            });
        }
        intervals.extend_from_slice(&cp.intervals);
    }
    let share = crate::input::shard::claims::view(dir)?;
    let done: u64 = match &share {
        Some(v) => v.committed_bytes,
        None => merge_intervals(intervals).iter().map(|(s, e)| e - s).sum(),
    };
    let _ = writeln!(
        out,
        "{}: {}",
        dir.display(),
        command.unwrap_or_else(|| "(command not recorded)".into())
    );
    let _ = writeln!(out, "task files: {}, {live} being written", paths.len());
    match total {
        Some(t) => {
            let pct = if t == 0 {
                100.0
            } else {
                done as f64 * 100.0 / t as f64
            };
            let _ = writeln!(
                out,
                "input: {done} of {} done ({pct:.1}%)",
                count(t, "byte", "bytes")
            );
        }
        None => {
            let _ = writeln!(
                out,
                "input: {} done (its length not known yet)",
                count(done, "byte", "bytes")
            );
        }
    }
    let Some(v) = share else {
        return Ok(out);
    };
    let _ = writeln!(
        out,
        "shared by claims: {} committed, chunks claimed up to {}",
        count(v.committed, "claim", "claims"),
        v.claimed_to
    );
    let mut stale_of = std::collections::HashMap::new();
    for l in &v.leases {
        let stale = l.state == "working" && (l.age > l.lease || l.gone);
        stale_of.insert(l.task.clone(), (l.state.clone(), stale));
        let rate = l.bytes.checked_div(l.seconds).unwrap_or(0);
        let _ = writeln!(
            out,
            "  task {}: {}{}, renewed {} s ago (lease {} s), {} pid {}, {} committed ({rate} B/s), claims {} split off {} taken over {} duplicates {}",
            l.task,
            l.state,
            match (l.gone, stale) {
                (true, _) if l.state == "working" => " (its process is gone)",
                (_, true) => " STALE",
                _ => "",
            },
            l.age.as_secs(),
            l.lease.as_secs(),
            l.host,
            l.pid,
            count(l.bytes, "byte", "bytes"),
            l.claims,
            l.splits,
            l.taken_over,
            l.duplicates
        );
    }
    let _ = writeln!(out, "open claims: {}", v.open.len());
    for (a, e, owner) in &v.open {
        let how = match stale_of.get(owner) {
            Some((_, true)) => "its lease is stale",
            Some((s, false)) if s == "left" => "its task left",
            Some(_) => "being worked on",
            None => "no lease",
        };
        let _ = writeln!(out, "  chunks {a}..{e}: task {owner}, {how}");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_files_sit_next_to_their_journals() {
        assert_eq!(
            output_of(Path::new("d/task-1-of-3.0.journal")),
            Path::new("d/task-1-of-3.0.out")
        );
    }

    #[test]
    fn journal_names_say_their_task() {
        assert_eq!(task_of(Path::new("d/task-1-of-3.0.journal")), Some((1, 3)));
        assert_eq!(
            task_of(Path::new("d/task-12-of-40.7.journal")),
            Some((12, 40))
        );
        assert_eq!(task_of(Path::new("d/other.journal")), None);
    }

    #[test]
    fn a_journal_being_created_records_nothing_and_garbage_is_refused() {
        let d = tempfile::tempdir().unwrap();
        // Created by a sibling task a moment ago: not yet locked nor written.
        std::fs::write(d.path().join("task-0-of-2.0.journal"), "").unwrap();
        let shard = Shard { index: 1, count: 2 };
        let t = prepare(
            d.path(),
            TaskOf::Fixed(shard),
            0,
            "r",
            "cmd",
            OrderMode::Ordered,
        )
        .unwrap();
        assert!(t.resume.is_none());
        assert_eq!(t.dest.run, 0);
        drop(t);
        std::fs::write(d.path().join("task-0-of-2.1.journal"), "junk\ndone 0 4 9\n").unwrap();
        assert!(
            prepare(
                d.path(),
                TaskOf::Fixed(shard),
                0,
                "r",
                "cmd",
                OrderMode::Ordered
            )
            .is_err()
        );
    }

    #[test]
    fn intervals_merge() {
        assert_eq!(
            merge_intervals(vec![(5, 7), (0, 2), (2, 4), (6, 9)]),
            [(0, 4), (5, 9)]
        );
    }
}
