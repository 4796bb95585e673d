//! What the engine is given for one run: each stage's own settings, resolved once by the plan,
//! and the files the plan opened (input, journal, results).
//!
//! Plain data: building it is the plan's job, running it the engine's; nothing here decides.

use std::fs::File;
use std::sync::Arc;

use crate::dispatch::ledger::{Halt, RetryPolicy};
use crate::exec::command::argv::ArgvTemplate;
use crate::journal::Prepared;
use crate::output::results::Destination;
use crate::sys::numa::Layout;

/// One run, as the plan resolved it.
pub struct Settings {
    /// The input, opened.
    pub input: Input,
    /// Records and batches: handed to the scanner whole.
    pub scan: crate::input::scan::Settings,
    /// How each batch runs.
    pub work: Work,
    /// How many workers, and where they run.
    pub workers: Workers,
    /// How output reaches stdout (the emitter's one setting).
    pub order: crate::output::emit::OrderMode,
    /// The checkpoint journal this run keeps, the one it resumes, and what resuming does to
    /// stdout.
    pub checkpoint: Prepared,
    /// `--results`: this task's output file, instead of stdout.
    pub results: Option<Destination>,
    /// `--stats`: a summary line at the end (and workers time their batches).
    pub stats: bool,
    /// USR1, USR2, XCPU and XFSZ stop the run too (`FRUN_PREEMPT`).
    pub preempt: bool,
    /// Live progress on stderr.
    pub progress: Option<crate::output::progress::Spec>,
    /// `--joblog`, opened (its header written to a file).
    pub joblog: Option<crate::output::joblog::Joblog>,
    /// How failed commands turn into the exit status.
    pub statuses: Statuses,
    /// The process exits as soon as the run returns (the binary, the bash front end's engine
    /// process): the run's mappings and descriptors are then left to the exit, which frees them
    /// at once. Unmapping them one by one makes the kernel flush the TLB of every CPU a worker
    /// ran on; on a virtual machine that was a tenth of a one-line run. False for a front end
    /// that goes on (Python).
    pub exits_after: bool,
    /// The environment the commands get, when it is not frun's own (a task of a split run
    /// gives its commands `FRUN_SHARD=none`, so a frun they start does all of its input).
    pub children_env: Option<Vec<std::ffi::CString>>,
    /// The run is shared by claims: this task's part (the scanner claims through it, the
    /// journal commits through it).
    pub share: Option<std::sync::Arc<crate::input::shard::claims::Book>>,
}

/// How a completed run's failures become its exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statuses {
    /// 123 when a command failed, 3 when records were given up, with a summary on stderr;
    /// `--halt` and a stop by a signal say what happened (frun's own).
    Summarised,
    /// 123 when a command failed, without a summary.
    Plain,
    /// The number of failed jobs (101 for more than 100), without a summary; 255 when a value
    /// was too long to pass; at `--halt fail=1` the failing job's own status.
    JobCount,
}

/// The input, opened.
pub struct Input {
    /// The open input (standard input or the file).
    pub file: File,
    /// The input as messages name it: its path, or "standard input".
    pub name: String,
    /// Children keep frun's stdin (input came from `-a FILE`); otherwise they get /dev/null.
    pub children_keep_stdin: bool,
    /// Writes what `file` reads (the other end of a pipe), on a thread of its own from the
    /// run's start (`frun xargs`' input rules); its error ends a completed run with status 1.
    pub feeder: Option<Feeder>,
    /// How much of the input the commands used (`frun xargs`): a run that stops gives back
    /// the rest of a seekable input.
    pub used: Option<std::sync::Arc<crate::input::used::Used>>,
}

pub use crate::input::Feeder;

/// xargs' own ways with commands (`frun xargs`); all off for frun's own flags.
#[derive(Clone, Debug, Default)]
pub struct Interaction {
    /// `-t`: each command line goes to stderr before it runs.
    pub trace: bool,
    /// `frun parallel -v`: each command line goes first into its job's output.
    pub trace_output: bool,
    /// `-p`: each command line is asked about on /dev/tty; only `y` runs it.
    pub prompt: bool,
    /// `--process-slot-var NAME`: each child gets NAME set to its worker's slot (0, 1, …).
    pub slot_var: Option<std::ffi::OsString>,
    /// A command exiting 255 or killed by a signal stops the run at once (124 / 125).
    pub abort: bool,
    /// `frun parallel -t`: the line is shown as GNU Parallel shows it: the words after this
    /// many (`SHELL -c`) as they are, or each word quoted its way.
    pub trace_shell_line: Option<usize>,
    /// The command was not found when the run was planned: the first command that would run
    /// ends the run with this instead (after `-t` shows it), as xargs only then looks for it.
    pub cannot_run: Option<crate::exec::resolve::ResolveError>,
}

/// How a batch is run.
pub enum Backend {
    /// Spawn the command with the records as arguments.
    Argv,
    /// Spawn the command with the batch's bytes on its stdin (`-s`, `-b`, `--block`).
    Stdin,
    /// Print the command line instead of running it (`-N`).
    DryRun {
        /// With `-U`: the words from this one on are shown word-split and glob-expanded, as
        /// they would run.
        split_from: Option<usize>,
        /// The line is shell-quoted this many times before it is printed (`--shellquote`).
        quote: u32,
    },
}

/// What every worker does with a batch.
pub struct Work {
    /// How a batch is run: its records as arguments, on stdin, or shown (`-N`).
    pub backend: Backend,
    /// The command line each batch's records are added to.
    pub template: ArgvTemplate,
    /// Batches go to stdin, not into arguments (also for `--dry-run`).
    pub records_on_stdin: bool,
    /// When a failed attempt is run again.
    pub retry: RetryPolicy,
    /// `--halt`: when failures stop the run.
    pub halt: Option<Halt>,
    /// Each job `--halt` counts is named on stderr as it ends (GNU Parallel's way), rather
    /// than only the one that stopped the run.
    pub halt_names_jobs: bool,
    /// A failed batch of several records may be split (not with `-L`, `-b`, `--block`).
    pub splittable: bool,
    /// `--job-timeout`.
    pub job_timeout: Option<crate::dispatch::pace::JobTimeout>,
    /// [`crate::plan::config::Config::line_limit`].
    pub line_limit: Option<u64>,
    /// `--delay`: the least time between two starts.
    pub delay: Option<std::time::Duration>,
    /// `--memfree`: the memory (bytes) a batch needs available to start, and where it is read.
    pub memfree: Option<(u64, crate::sys::memory::MemorySource)>,
    /// `-j FILE`: the file the number of jobs that may run at once is read from again, the
    /// CPUs its `N%`, `+N` and `-N` count from, and the number it held at the start.
    pub jobs_file: Option<(std::path::PathBuf, u64, u64)>,
    /// [`crate::plan::config::Config::termseq`].
    pub termseq: Option<Vec<(i32, std::time::Duration)>>,
    /// Leading words of the command line a joblog line does not show.
    pub joblog_skip_words: usize,
    /// The first word a joblog line shows is a shell line, shown as it is (not quoted).
    pub joblog_raw_first: bool,
    /// How each command is shown, confirmed and identified (`-t`, `-p`, `-v`, the slot
    /// variable), and what ends the run at once: all off for frun's own flags.
    pub interaction: Interaction,
    /// `frun parallel --results NAME`: each job's stdout and stderr are saved there instead of
    /// printed.
    pub job_files: Option<crate::output::results::job_files::JobFiles>,
    /// `frun parallel --results NAME.json/.csv/.tsv`: each job's record replaces its output.
    pub results_table: Option<crate::output::results::table::Table>,
    /// Jobs an earlier run did (`frun parallel --resume…`): their numbers from 1, sorted; they
    /// are not run again.
    pub skip_jobs: Vec<u64>,
    /// `--resume` with `--results`: a job whose results are there is not run again.
    pub skip_saved: bool,
    /// Blank lines are dropped from what a command gets on stdin, and a batch of nothing but
    /// blank lines is not run.
    pub drop_blank: bool,
    /// Record separators left out of what a command gets on stdin (`--rrs`).
    pub strip_separators: Option<crate::input::bounds::RecordBounds>,
    /// `--tag` / `--tagstring`: every line of a job's output starts with its tag and a tab.
    pub tag: Option<crate::exec::command::job::JobLine>,
    /// [`crate::plan::config::Config::colour`].
    pub colour: Option<crate::output::colour::Colouring>,
    /// `--retries STR`: each job's attempts, read from its values ([`crate::plan::config::Config::retries_from`]).
    pub retries_from: Option<crate::exec::command::job::JobLine>,
    /// `--pipe --header`: bytes every command gets on stdin before its block.
    pub stdin_header: Vec<u8>,
    /// `--tmpl`: each job's template files (the text, and the file's name, to fill in).
    pub templates: Vec<(
        crate::exec::command::job::JobLine,
        crate::exec::command::job::JobLine,
    )>,
    /// `--cleanup`: a job's template files are removed when it ends.
    pub templates_cleanup: bool,
    /// `--line-buffer`: commands' output is passed on line by line while they run.
    pub line_buffer: bool,
    /// A job's stderr is captured and written to frun's stderr right after its stdout
    /// ([`crate::plan::config::Conduct::stderr_grouped`], where output is grouped and no
    /// results keep it).
    pub stderr_grouped: bool,
    /// `--line-buffer` where stderr would otherwise be grouped: the children's stderr goes
    /// through the line relay too, each line whole and dressed as stdout's are (`--tag`,
    /// `--color`), to frun's stderr (as GNU Parallel's `--lb` passes both).
    pub stderr_relayed: bool,
    /// `--line-buffer`: the bytes of long unended lines the run's relays may hold together.
    pub line_room: usize,
    /// [`crate::plan::config::Config::latest_line`].
    pub latest_line: bool,
    /// `frun parallel --files`: each job's output goes to a new file here; its name is printed.
    pub output_files_in: Option<std::path::PathBuf>,
    /// `--files --compress`: the shell command line each file's content goes through.
    pub output_files_compress: Option<Vec<u8>>,
    /// `-C SO:FN`: batches are calls of a C function in plugin hosts instead of commands.
    pub plugin: Option<crate::exec::plugin::PluginWork>,
    /// `--round-robin` (batches on stdin): each worker runs one command, fed every N-th batch.
    pub round_robin: bool,
}

impl Work {
    /// Whether each worker keeps its commands' stderr in a file of its own: grouped after
    /// their stdout, or saved as their results.
    pub fn keeps_stderr(&self) -> bool {
        self.stderr_grouped || self.job_files.is_some() || self.results_table.is_some()
    }
}

/// How many workers, and where they run.
pub struct Workers {
    /// Workers started before the run grows by need (`-j INIT:MAX`'s INIT).
    pub init: usize,
    /// The most workers the run grows to (`-j INIT:MAX`'s MAX).
    pub max: usize,
    /// NUMA placement: nodes, their workers and CPUs, and the chunk-to-node map.
    pub layout: Arc<Layout>,
    /// CPUs this process may use (for `--stats`).
    pub usable_cpus: usize,
}
