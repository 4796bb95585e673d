//! The checkpoint journal: one versioned text file that records what a run has completed, kept
//! up to date while the run goes, so a run stopped in any way — a signal, `--halt`, even
//! `kill -9` of frun or a power loss — can be resumed exactly (`--resume`).
//!
//! It writes and reads that file and nothing else: it does not decide what is complete (the
//! emitter reports a batch once its output is out) and it does not skip input (the scanner
//! does, from [`Checkpoint::intervals`]).
//!
//! Its parts: `format` (the lines of the file, written and parsed), `file` (which files may be
//! a journal, how they are opened and locked), `writer` (the [`Journal`] of a running run),
//! `resume` (a journal read back, and [`Restore`]) and `prepare` (choosing, checking and
//! opening the journal of a run). This file holds the types they share and the public surface;
//! it does no I/O of its own.
//!
//! A new journal is created (mode 0600) under a name that does not exist, never through a
//! symbolic link; the default place moves to the next free name (`.frun_resume.1`, …) when
//! another file holds it, so a stopped run's checkpoint is never overwritten. A journal read or
//! continued must be a regular file (not a symbolic link, FIFO or device) that this user owns
//! and nobody else can write, no larger than a journal of the input could be. A run removes
//! only the file it created or continued (and the other default name, `.forkrun_resume` or
//! `.frun_resume`, where that is a link to the same file).
//!
//! In a results directory (`--results`) each task of each run writes its own journal next to
//! its own output file, with a `task` line (which share of the input it took, and the order
//! mode `frun merge` needs) and, once its scan reached the end of the input, an `end` line with
//! the input's length; `stdout` there means that output file.

use std::io;

use sha2::{Digest, Sha256};

mod file;
mod format;
mod prepare;
mod resume;
mod writer;

pub use file::{FileId, holder, open_owned, open_read};
pub use format::MAGIC;
pub use prepare::{Prepared, prepare};
pub use resume::{Loaded, READ_CAP, Restore, load, read, read_cap, stdout_size};
pub use writer::Journal;

/// Where the journal goes unless `--checkpoint-file` says otherwise.
pub const DEFAULT_PATH: &str = ".frun_resume";
/// The name forkrun's scripts look for: a stopped run's checkpoint at the default place is
/// also linked there (the same file), when the name is free.
pub const LEGACY_PATH: &str = ".forkrun_resume";
/// How many input bytes identify the input.
pub const HEAD_BYTES: usize = 64 << 10;

/// Hex SHA-256 of `data`.
pub fn digest(data: &[u8]) -> String {
    let d = Sha256::digest(data);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// What identifies the input: its first bytes and, when known, its size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputId {
    /// How many first bytes were hashed (at most `HEAD_BYTES`).
    pub head_len: u64,
    /// Hex SHA-256 of those bytes.
    pub head_hash: String,
    /// The input's size in bytes, when it is a regular file.
    pub size: Option<u64>,
}

impl InputId {
    /// The identity of an input that begins with `head` and has `size` bytes.
    pub fn of(head: &[u8], size: Option<u64>) -> InputId {
        InputId {
            head_len: head.len() as u64,
            head_hash: digest(head),
            size,
        }
    }
}

/// A journal read back for `--resume`.
#[derive(Debug, Default)]
pub struct Checkpoint {
    /// The hash of the command the journal was written for (its `run` line).
    pub run: String,
    /// The input the journal was written for (its `input` line), when recorded.
    pub input: Option<InputId>,
    /// Completed input intervals, sorted and merged.
    pub intervals: Vec<(u64, u64)>,
    /// Stdout's byte count after the last completed batch (None: not known, `-u`).
    pub stdout: Option<u64>,
    /// Completed batches recorded.
    pub batches: u64,
    /// The output's byte count when the run began (`stdout`).
    pub base: Option<u64>,
    /// Every `done` entry in file order: input `[start, end)` and the output's byte count after
    /// it.
    pub entries: Vec<(u64, u64, Option<u64>)>,
    /// The `task` line of a results directory's journal.
    pub task: Option<TaskLine>,
    /// The input's length, once the run's scan reached its end (`end`).
    pub end: Option<u64>,
}

/// A task's share and output order, as its journal records them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskLine {
    /// This task's number, from 0 (`--shard I/N`: I).
    pub index: u64,
    /// How many tasks share the input (N).
    pub count: u64,
    /// The shard chunk size in bytes.
    pub chunk: u64,
    /// `ordered` (`-k`) or `buffered`.
    pub order: String,
}

/// Why a journal could not be opened.
pub enum OpenError {
    /// Another frun holds it.
    Busy,
    /// It is not a file frun may use as a journal (one line, why).
    Refused(String),
    /// Reading, writing or locking it failed.
    Io(io::Error),
}

/// Input intervals sorted, with overlapping and touching ones merged.
pub fn merge_intervals(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}
