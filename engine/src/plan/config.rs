//! What the user asked for, as every front end states it: the `Config` the plan starts from.
//!
//! Plain data, validated by whoever builds it (the command line, the bash builtin, later the
//! personalities and the Python module); nothing here opens a file or knows a flag's spelling.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::dispatch::ledger::Halt;
use crate::dispatch::pace::JobTimeout;
pub use crate::exec::command::job::{Columns, JobSpec, ReplacementNames, Spread, Trim};
use crate::input::shard::Shard;
use crate::output::emit::OrderMode;
pub use crate::output::progress::{Spec as ProgressSpec, Style as ProgressStyle};
use crate::sys::numa::NodeSpec;

/// One end of a range as the user wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Empty, `0` or `auto`: the flag's default.
    Default,
    /// `-1`: the flag's hard maximum.
    HardMax,
    /// This number.
    Value(u64),
}

/// `INIT:MAX`, or a single value `N` meaning `N:N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    /// The first value.
    pub init: Bound,
    /// The value it may grow to.
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
    /// `--block N` with records of `lines` lines (GNU Parallel's `--pipe -L`): about N bytes
    /// of whole records; an incomplete last record is a chunk of its own.
    BlockLines {
        /// About this many bytes per chunk.
        bytes: u64,
        /// Lines per record (at least 1).
        lines: u64,
    },
    /// Records that are runs of consecutive lines with the same key (GNU Parallel's `--pipe
    /// --group-by`): `per_job` of them per batch, or (0) about `bytes` bytes of whole ones.
    Groups {
        /// About this many bytes per batch (when `per_job` is 0).
        bytes: u64,
        /// Groups per batch (0: by size).
        per_job: u64,
        /// Which part of a line is its key.
        key: crate::input::group::GroupKey,
    },
    /// Chunks of at least N bytes: each ends at the first record boundary at or past N bytes
    /// from its start (GNU Parallel's `--pipepart --block N`).
    BlockPast(u64),
    /// `--block -N` of GNU Parallel's `--pipepart`: the input file cut into about N chunks
    /// per worker: chunks of at least 1 + size / (N × workers) bytes, as [`BatchSpec::BlockPast`];
    /// the input must be a regular file.
    BlocksPerWorker(u64),
    /// Lines filled the way GNU Parallel's `-X` and `-m` fill them: as many records as keep
    /// the job's shell line (plus one) within `chars` bytes, at most `records`; once the
    /// records left all fit in one line, they are spread evenly over the workers instead. The
    /// input is read whole first.
    Fill {
        /// The longest line, in bytes (GNU Parallel's `-s`, its line length plus one).
        chars: u64,
        /// The most records in one line (`-n`; `u64::MAX`: no limit).
        records: u64,
    },
}

/// Default chunk size of `-b` given without a number.
pub const DEFAULT_BYTES: u64 = 1 << 20;

/// Where records come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputSpec {
    /// Standard input.
    Stdin,
    /// This file.
    File(PathBuf),
    /// Input sources combined into one record per tuple (`:::`, `::::`, `--link`): the plan
    /// reads them all and writes the tuples to an in-memory file.
    Sweep(Sweep),
}

/// The input sources of a sweep, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sweep {
    /// The sources, in the order given.
    pub sources: Vec<Source>,
    /// `--link`: the i-th values of every source go together; otherwise every combination,
    /// the last source varying fastest.
    pub link: bool,
    /// Linked sources of different lengths: shorter ones start again from their first value
    /// (GNU Parallel), or all stop at the shortest, with a warning (frun's own flags).
    pub wrap: bool,
    /// The first value of every source names its column (`--header :`), for `{name}`.
    pub header: bool,
    /// Column names given, not read (GNU Parallel's `--header 0`: a `::::` source is named by
    /// its file); each name stands for its source's columns (the first of them).
    pub names: Vec<Vec<u8>>,
    /// What ends the values of `::::` files (the run's records are the tuples, NUL-ended).
    pub delimiter: u8,
    /// When not empty, what ends the values of `::::` files instead of `delimiter`: a
    /// delimiter of several bytes (GNU Parallel's `-d '\n\n'`).
    pub separator: Vec<u8>,
    /// `-E STR`: a source ends at its first value equal to STR.
    pub eof: Option<Vec<u8>>,
    /// `-r`: values that are empty or only blanks are left out.
    pub skip_empty: bool,
    /// `--shuf`: the tuples run in a random order.
    pub shuffle: bool,
    /// A value ending in a blank (space or tab) goes on with the next one, as one value (the
    /// lines of xargs' and GNU Parallel's `-L`).
    pub continued: bool,
    /// `--csv`: values are CSV records (a quoted field may hold newlines) whose fields,
    /// separated by this byte, are the tuple's values.
    pub csv: Option<u8>,
    /// A source with no values (none given, an empty file, or none left by `-E`/`-r`) is one
    /// empty value beside sources that hold some, as GNU Parallel reads it; when every source
    /// is empty, or without this, an empty source leaves nothing to run.
    pub empty_is_blank: bool,
}

impl Sweep {
    /// A sweep of `sources` (linked or not, shorter ones starting again), values ending in
    /// newlines, with every other setting off.
    pub fn of(sources: Vec<Source>, link: bool) -> Sweep {
        Sweep {
            sources,
            link,
            wrap: true,
            header: false,
            names: Vec::new(),
            delimiter: b'\n',
            separator: Vec::new(),
            eof: None,
            skip_empty: false,
            shuffle: false,
            continued: false,
            csv: None,
            empty_is_blank: false,
        }
    }
}

/// One input source of a sweep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// Where its values come from.
    pub values: SourceValues,
    /// `:::+` / `::::+`: linked to the source before it instead of combined with it.
    pub linked: bool,
}

/// Where the values of one sweep source come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceValues {
    /// `::: a b c`.
    Words(Vec<OsString>),
    /// `:::: FILE` (`-` = standard input): one value per record.
    File(PathBuf),
}

/// How a run behaves where frun and the tools it stands in for differ. Each front end sets
/// its tool's; `Conduct::default()` is frun's own. The engine follows these settings and knows
/// nothing of who chose them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conduct {
    /// How failed commands become the exit status, and whether a summary says so on stderr.
    pub statuses: crate::run::Statuses,
    /// Without being asked: a crashed command is retried (up to `FRUN_RETRY_LIMIT`), and a
    /// failing batch whose size frun chose is split to find the record that fails. Otherwise
    /// nothing is retried unless `retries` asks for it.
    pub retries_unasked: bool,
    /// What a NUL byte in a record bound for an argument does.
    pub nul_in_value: NulInValue,
    /// The commands may read frun's standard input when the records come from elsewhere (a
    /// file, the input sources); false: they read /dev/null.
    pub children_read_stdin: bool,
    /// A checkpoint is kept without being asked (`--checkpoint-file`, `--resume`).
    pub checkpoint_unasked: bool,
    /// A job's stderr is held with its stdout and written to frun's stderr right after it
    /// (GNU Parallel's grouping), wherever output is grouped (not `-u`, `--line-buffer`,
    /// `--latest-line`); false: the commands write to frun's stderr themselves, as they run.
    pub stderr_grouped: bool,
}

/// What a NUL byte in a record bound for an argument does (no argument can hold one). The first
/// one is reported in every case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NulInValue {
    /// The argument ends there (xargs' way).
    Cut,
    /// The run stops before the job that holds it, with this exit status.
    Refuse(i32),
    /// The job line holds the two characters `\0` in its place (GNU Parallel's way).
    Escape,
}

impl Conduct {
    /// Whether a NUL byte in a value becomes `\0` in its job's line (GNU Parallel's way).
    pub fn escapes_nul(&self) -> bool {
        self.nul_in_value == NulInValue::Escape
    }
}

impl Default for Conduct {
    fn default() -> Conduct {
        Conduct {
            statuses: crate::run::Statuses::Summarised,
            retries_unasked: true,
            nul_in_value: NulInValue::Cut,
            children_read_stdin: true,
            checkpoint_unasked: true,
            stderr_grouped: false,
        }
    }
}

/// Everything the user asked for, validated.
#[derive(Clone, Debug)]
pub struct Config {
    /// `-j INIT:MAX`: how many workers run batches at once.
    pub workers: Range,
    /// `-l`, `-L`, `-b`, `--block`: how records are grouped into batches.
    pub batch: BatchSpec,
    /// `--order` (`-k`, `-u`): how batch output reaches stdout.
    pub order: OrderMode,
    /// `-i`: `{}` and the other replacement strings in any word are replaced by the records.
    pub insert: bool,
    /// `-I`: `{ID}` in any word is replaced by the batch id `NODE.WORKER.BATCH`.
    pub insert_id: bool,
    /// Batches go to the command's stdin (`-s`, implied by `-b`/`--block` unless `+s`).
    pub stdin: bool,
    /// With `stdin`: lines of nothing but ASCII whitespace are dropped from each batch, and a
    /// batch left empty runs no command.
    pub drop_blank_lines: bool,
    /// With `stdin` and [`Config::record_bounds`]: the separators are left out of what each
    /// job reads (GNU Parallel's `--remove-rec-sep`; see `RecordBounds::kept_runs`).
    pub strip_separators: bool,
    /// With [`BatchSpec::Block`]: when no record ends within a block, the block grows (to
    /// ⌈1.3 × size + 1⌉, again until one does) and keeps its new size, saying so each time
    /// (GNU Parallel's `--pipe`); without, that block alone ends at the first record end.
    pub grow_blocks: bool,
    /// `--round-robin` with batches on stdin: each worker runs one command, which gets every
    /// N-th batch (N workers) on its stdin, in turn, until the input ends.
    pub round_robin: bool,
    /// `-n N`: stop after the first N records.
    pub limit: Option<u64>,
    /// `-t`: a partial batch is flushed after this long without new input.
    pub timeout: Option<Duration>,
    /// The byte that ends each record (`-z`: NUL; `-d`).
    pub delimiter: u8,
    /// Where records come from.
    pub input: InputSpec,
    /// `-U`: records are word-split and glob-expanded (each batch runs through bash).
    pub unsafe_words: bool,
    /// `-X`: a binary on disk is preferred over a same-named shell function or builtin.
    pub external: bool,
    /// `-N`: each command line is printed, shell-quoted, instead of run.
    pub dry_run: bool,
    /// `--shellquote`: each line `dry_run` shows is shell-quoted this many times (0: none).
    pub dry_run_quotes: u32,
    /// `-v`: a summary line on stderr at the end.
    pub stats: bool,
    /// `--nodes`: NUMA placement.
    pub nodes: NodeSpec,
    /// A non-zero exit retries the batch (`-E`).
    pub retry_failed: bool,
    /// `--halt`: when failures stop the run.
    pub halt: Option<Halt>,
    /// `--joblog FILE` (`-`: stdout): a GNU Parallel joblog line per finished batch.
    pub joblog: Option<PathBuf>,
    /// `--joblog +FILE`: lines are appended to FILE (its torn last line cut off first), and no
    /// header is written, as GNU Parallel does.
    pub joblog_append: bool,
    /// Leading words of the command line the joblog does not show, for a front end that wraps
    /// a shell line in `sh -c LINE`: when not 0, the word after them (the line) is shown as it
    /// is and the rest shell-quoted. 0 from the command line (every word shell-quoted).
    pub joblog_skip_words: usize,
    /// `--job-timeout`: a batch running longer is killed (and counts as failed, not retried).
    pub job_timeout: Option<JobTimeout>,
    /// `--delay`: at least this long between two batch starts.
    pub delay: Option<Duration>,
    /// `--memfree`: no batch starts while less memory than this is available; while less than
    /// half of it is, the youngest running batch (the highest number) is ended as `termseq`
    /// says, one at a time, and fails (retried as `retries` allows).
    pub memfree: Option<u64>,
    /// Where the memory available is read (`--memfree`, and the room `--line-buffer` has for
    /// long unended lines: a quarter of it): a file of `/proc/meminfo`'s shape (a container's
    /// view of its own limit, a test's), or None for `/proc/meminfo` itself.
    pub meminfo: Option<PathBuf>,
    /// `-j FILE`: the number of jobs that may run at once is read from this file again
    /// whenever its text changes (values relative to `cpus`); `workers` is what it held at
    /// the start, up to the most it may ever hold.
    pub jobs_file: Option<JobsFile>,
    /// `--termseq`: how a command is ended (for its time, or as the run stops): each signal,
    /// then how long it is given before the next step. None: TERM, TERM, TERM, KILL over 375
    /// ms for a timeout, TERM then KILL 1.5 s later as a run stops.
    pub termseq: Option<Vec<(i32, Duration)>>,
    /// `--checkpoint-file FILE`: where the checkpoint journal goes.
    pub checkpoint_file: Option<PathBuf>,
    /// No checkpoint journal unless `checkpoint_file` or `resume` asks for one (a library front
    /// end, which must not leave files in the caller's directory).
    pub no_default_journal: bool,
    /// Stdout is a pipe to the program that started the run and collects its output (a library
    /// front end): a resume has no earlier output there to cut back, so it says nothing of it.
    pub output_to_caller: bool,
    /// `--resume FILE`: the checkpoint journal of the run to continue.
    pub resume: Option<PathBuf>,
    /// `--shard`: this task's share of the input.
    pub shard: ShardSpec,
    /// `--results DIR`: where this task's output and journal go.
    pub results: Option<PathBuf>,
    /// `--share`: how the tasks of a run split the input.
    pub share: ShareSpec,
    /// `--lease`, `--at-most-once`: how tasks sharing by claims hold their work.
    pub share_settings: crate::input::shard::claims::ShareSettings,
    /// The command and its fixed arguments; never empty (default `echo`).
    pub command: Vec<OsString>,
    /// The command is a function, builtin or alias of the calling bash, run in worker shells.
    /// No flag sets this: the bash front end does, after looking the name up.
    pub shell_command: bool,
    /// `--link`: a sweep's sources go together value by value (no effect without a sweep).
    pub link: bool,
    /// How the run behaves where frun and the tools it stands in for differ.
    pub conduct: Conduct,
    /// The command is a GNU Parallel-style line with replacement strings (then `command` holds
    /// its words, for messages and the checkpoint's identity).
    pub job: Option<JobSpec>,
    /// GNU Parallel's check of every job's line (with [`Config::job`]): a job whose shell line
    /// (values quoted, as `-X` measures it) is this many bytes or longer is not run, and the
    /// run stops with 255 ("Command line too long"); records are then not skipped for their
    /// length alone (a long record whose line uses a short column of it runs).
    pub line_limit: Option<u64>,
    /// Shell code run before each job's line, in the same shell (so its assignments and
    /// functions are there); the line then always runs through the shell. Not shown by
    /// `--dry-run` or the trace, which show the line; frun's own words (`literal`) and a bash
    /// worker shell's `eval` run without it.
    pub shell_prologue: Option<Vec<u8>>,
    /// Each command gets its slot number (from 0) in this environment variable (frun xargs
    /// sets its own in `ArgumentLists`).
    pub slot_var: Option<OsString>,
    /// Retries per batch, overriding `FRUN_RETRY_LIMIT` (`--retries`; None: the environment's).
    pub retries: Option<u64>,
    /// `frun parallel --retries STR` with replacement strings (`--retries {//}`): each job's
    /// attempts are the number its values make of STR (0: as many as it takes); `retries`
    /// stays the ceiling.
    pub retries_from: Option<JobSpec>,
    /// `--pipe`: lines at the input's start that are no records (`--skip-first-line`, a
    /// header every job gets before its block).
    pub pipe_head: Option<crate::input::head::PipeHead>,
    /// `frun parallel --tmpl FILE=NAME`: before each job, FILE's text with the job's values
    /// filled in is written to the file NAME (filled in too) names.
    pub templates: Vec<(PathBuf, JobSpec)>,
    /// `--cleanup`: a job's template files are removed when it ends.
    pub templates_cleanup: bool,
    /// `--progress`, `--bar`, `--eta`: live progress on stderr.
    pub progress: Option<ProgressSpec>,
    /// `frun parallel -t` / `--verbose`: each command line goes to stderr before it runs.
    pub trace: bool,
    /// `frun parallel -p` / `--interactive`: each command line is asked about on the terminal
    /// (on stderr, then a line from /dev/tty: `y…` runs it) before it runs.
    pub prompt: bool,
    /// `frun parallel -v`: each command line goes to stdout, as the first line of
    /// its job's output (grouped, ordered and tagged with it).
    pub trace_output: bool,
    /// `--tag` / `--tagstring STR`: the tag each output line of a job starts with (its
    /// replacement strings filled in, before a tab).
    pub tag: Option<JobSpec>,
    /// `--color`, `--ctag`, `--color-failed`: whose output lines are coloured.
    pub colour: Option<crate::output::colour::Colouring>,
    /// `frun xargs`: xargs' input rules cut the input into commands (then `command` is the
    /// command and its initial arguments).
    pub argument_lists: Option<ArgumentLists>,
    /// `--recend STR` / `--recstart STR` (GNU Parallel's `--pipe`): `--block` chunks end at
    /// these string boundaries instead of at the delimiter byte.
    pub record_bounds: Option<crate::input::bounds::RecordBounds>,
    /// `--line-buffer`: output is passed on a whole line at a time while commands run (not
    /// with `-u`; with `-k`, only the oldest batch's lines pass live).
    pub line_buffer: bool,
    /// `--latest-line` (GNU Parallel's `--ll`, with `line_buffer`): each job's stdout and
    /// stderr together, shown as its latest whole line on a terminal row of its own.
    pub latest_line: bool,
    /// `frun parallel --results NAME`: each job's stdout, stderr and number saved in files
    /// (GNU Parallel's layout) instead of printed.
    pub job_files: Option<Vec<u8>>,
    /// `frun parallel --results NAME.json/.csv/.tsv`: a record per job (its output in it) in
    /// place of the job's output, on stdout or in the file.
    pub results_table: Option<crate::output::results::table::TableSpec>,
    /// `frun parallel --results DIR --compress` (or `--files --compress`): the shell command
    /// line the stdout and stderr files (the `--files` files) go through.
    pub results_compress: Option<Vec<u8>>,
    /// `frun parallel --files`: each job's output is kept in a new file in this directory and
    /// the file's name is printed instead (tagged as output is).
    pub output_files_in: Option<PathBuf>,
    /// `frun parallel --resume`, `--resume-failed`, `--retry-failed`: which jobs of an earlier
    /// run (its `--joblog`, or its `--results`) are run again.
    pub job_resume: Option<JobResume>,
    /// `-C SO:FN`: each batch is a call of function FN of the C library SO (then `command` is
    /// the `SO:FN` word as given and the fixed words after it).
    pub plugin: Option<PluginSpec>,
}

/// `-C SO:FN`, as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginSpec {
    /// The library's path, taken literally (relative to the working directory; never searched).
    pub library: PathBuf,
    /// The name of the function to call in it.
    pub function: OsString,
}

/// `-j FILE`, as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobsFile {
    /// The file.
    pub path: PathBuf,
    /// The CPUs `N%`, `+N` and `-N` count from.
    pub cpus: u64,
    /// The number of jobs it held when the run started.
    pub now: u64,
}

/// How a GNU Parallel-style run takes up an earlier one's jobs (by their numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobResume {
    /// `--resume`: jobs the joblog (or the results) shows are not run again.
    Resume,
    /// `--resume-failed`: jobs the joblog shows succeeded are not run again.
    ResumeFailed,
    /// `--retry-failed`: the joblog's jobs that never succeeded run again, as it recorded
    /// them; the command line's command and input are not used.
    RetryFailed,
}

/// What `frun xargs` asked for beyond the common settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgumentLists {
    /// How the input becomes argument lists.
    pub rules: crate::input::arguments::Rules,
    /// `-I STR`: STR in the initial arguments is replaced by the line.
    pub replace: Option<Vec<u8>>,
    /// `-t`: each command line goes to stderr before it runs.
    pub trace: bool,
    /// `-p`: each command line is asked about on the terminal before it runs.
    pub prompt: bool,
    /// `--process-slot-var NAME`: each command gets its slot number in this environment variable.
    pub slot_var: Option<OsString>,
}

impl Default for Config {
    /// The config of a command line with no flags (the command still to be set).
    fn default() -> Config {
        let default_range = Range {
            init: Bound::Default,
            max: Bound::Default,
        };
        Config {
            shell_prologue: None,
            slot_var: None,
            workers: default_range,
            batch: BatchSpec::Lines(default_range),
            order: OrderMode::Buffered,
            insert: false,
            insert_id: false,
            stdin: false,
            drop_blank_lines: false,
            strip_separators: false,
            grow_blocks: false,
            round_robin: false,
            limit: None,
            timeout: None,
            delimiter: b'\n',
            input: InputSpec::Stdin,
            unsafe_words: false,
            external: false,
            dry_run: false,
            dry_run_quotes: 0,
            stats: false,
            nodes: NodeSpec::Auto,
            retry_failed: false,
            halt: None,
            joblog: None,
            joblog_append: false,
            joblog_skip_words: 0,
            job_timeout: None,
            memfree: None,
            meminfo: None,
            jobs_file: None,
            delay: None,
            termseq: None,
            checkpoint_file: None,
            no_default_journal: false,
            output_to_caller: false,
            resume: None,
            shard: ShardSpec::Auto,
            results: None,
            share: ShareSpec::Auto,
            share_settings: Default::default(),
            command: Vec::new(),
            shell_command: false,
            link: false,
            conduct: Conduct::default(),
            job: None,
            line_limit: None,
            retries: None,
            retries_from: None,
            pipe_head: None,
            templates: Vec::new(),
            templates_cleanup: false,
            progress: None,
            trace: false,
            prompt: false,
            trace_output: false,
            tag: None,
            colour: None,
            argument_lists: None,
            job_files: None,
            results_table: None,
            results_compress: None,
            output_files_in: None,
            job_resume: None,
            record_bounds: None,
            line_buffer: false,
            latest_line: false,
            plugin: None,
        }
    }
}

impl Config {
    /// How many leading command words stay literal with `-U`: with `-i`, the words before the
    /// first one holding `{}`; else every command word (only the records are split).
    pub fn literal_words(&self) -> usize {
        if self.insert {
            1 + self.command[1..]
                .iter()
                .take_while(|w| !w.as_encoded_bytes().windows(2).any(|p| p == b"{}"))
                .count()
        } else {
            self.command.len()
        }
    }
}

/// `--share`: how the tasks of a run split the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareSpec {
    /// Claims for the tasks of a Slurm step writing to `--results` from a regular file, fixed
    /// chunks otherwise.
    Auto,
    /// Fixed chunks: chunk k is task k mod N's (`--shard I/N`).
    Fixed,
    /// Claims through the results directory: any number of tasks, joining at any time.
    Claims,
}

/// `--shard`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardSpec {
    /// Slurm's task inside an `srun` step, else none.
    Auto,
    /// No sharding: this task does all of the input.
    None,
    /// This task's share, as given.
    Given(Shard),
}
