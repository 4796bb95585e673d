//! What the user asked for, as every front end states it: the `Config` the plan starts from.
//!
//! Plain data, validated by whoever builds it (the command line, the bash builtin, later the
//! personalities and the Python module); nothing here opens a file or knows a flag's spelling.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::ledger::Halt;
use crate::numa::NodeSpec;
use crate::output::OrderMode;
pub use crate::progress::{Spec as ProgressSpec, Style as ProgressStyle};
use crate::shard::Shard;

/// One end of a range as the user wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Empty, `0` or `auto`: the flag's default.
    Default,
    /// `-1`: the flag's hard maximum.
    HardMax,
    Value(u64),
}

/// `INIT:MAX`, or a single value `N` meaning `N:N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub init: Bound,
    pub max: Bound,
}

/// How records are grouped into batches, as asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchSpec {
    /// `-l INIT:MAX` (a single `N` is `N:N`).
    Lines(Range),
    /// `-L N`.
    Exact(u64),
    /// `-b N`: raw N-byte chunks.
    Bytes(u64),
    /// `--block N`: about N bytes, cut at record boundaries.
    Block(u64),
}

/// Default chunk size of `-b` given without a number.
pub const DEFAULT_BYTES: u64 = 1 << 20;

/// Where records come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputSpec {
    Stdin,
    File(PathBuf),
}

/// Everything the user asked for, validated.
#[derive(Clone, Debug)]
pub struct Config {
    pub workers: Range,
    pub batch: BatchSpec,
    pub order: OrderMode,
    pub insert: bool,
    pub insert_id: bool,
    /// Batches go to the command's stdin (`-s`, implied by `-b`/`--block` unless `+s`).
    pub stdin: bool,
    pub limit: Option<u64>,
    pub timeout: Option<Duration>,
    pub delimiter: u8,
    pub input: InputSpec,
    pub unsafe_words: bool,
    pub external: bool,
    pub dry_run: bool,
    pub stats: bool,
    /// `--nodes`: NUMA placement.
    pub nodes: NodeSpec,
    /// A non-zero exit retries the batch (`-E`).
    pub retry_failed: bool,
    pub halt: Option<Halt>,
    pub checkpoint_file: Option<PathBuf>,
    pub resume: Option<PathBuf>,
    /// `--shard`: this task's share of the input.
    pub shard: ShardSpec,
    /// `--results DIR`: where this task's output and journal go.
    pub results: Option<PathBuf>,
    /// The command and its fixed arguments; never empty (default `echo`).
    pub command: Vec<OsString>,
    /// The command is a function, builtin or alias of the calling bash, run in worker shells.
    /// No flag sets this: the bash front end does, after looking the name up.
    pub shell_command: bool,
    /// `--progress`, `--bar`, `--eta`: live progress on stderr (None: none).
    pub progress: Option<ProgressSpec>,
}

/// `--shard`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardSpec {
    /// Slurm's task inside an `srun` step, else none.
    Auto,
    None,
    Given(Shard),
}
