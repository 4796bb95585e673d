//! The one definition of every flag: names, value, negation and help text.
//!
//! The parser, `--help`, the man page and the shell completions are all built from [`FLAGS`], so
//! they cannot disagree. This module only describes flags; turning values into a `Config` is
//! `cli::parse`'s job.

/// Flags in one family override each other: the last one given wins (`-k -u` is `-u`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Family {
    None,
    /// `-k`, `--buffered`, `-u`, `-o`.
    Order,
    /// `-z`, `-d`.
    Delimiter,
    /// `-l`, `-L`: records per batch.
    Records,
}

/// One command-line flag.
pub struct FlagDef {
    /// Stable identifier (also the clap id).
    pub id: &'static str,
    pub short: Option<char>,
    pub short_aliases: &'static [char],
    pub long: &'static str,
    pub long_aliases: &'static [&'static str],
    /// Name of the value, or `None` for a switch.
    pub value: Option<&'static str>,
    /// `+X` (and the hidden `--no-LONG`) undo this flag.
    pub negatable: bool,
    /// The value may be left out (`-b` alone): then the next word is the value only when it
    /// is a number.
    pub optional_value: bool,
    pub family: Family,
    /// Flags this one cannot be combined with, in any order (a usage error naming both). For
    /// flags that choose how batches are cut, so that the set of flags given, never their order,
    /// decides the mode.
    pub conflicts: &'static [&'static str],
    /// One line for `--help`.
    pub help: &'static str,
    /// More text for `--help` and the man page (may be empty).
    pub long_help: &'static str,
}

const fn flag(id: &'static str, short: Option<char>, long: &'static str) -> FlagDef {
    FlagDef {
        id,
        short,
        short_aliases: &[],
        long,
        long_aliases: &[],
        value: None,
        negatable: true,
        optional_value: false,
        family: Family::None,
        conflicts: &[],
        help: "",
        long_help: "",
    }
}

/// Every flag frun accepts, in `--help` order.
pub const FLAGS: &[FlagDef] = &[
    FlagDef {
        short_aliases: &['P'],
        value: Some("W"),
        help: "Number of workers: N, or INIT:MAX (default 1:<usable CPUs>; 0 or auto = default)",
        long_help: "Workers start at INIT and are added up to MAX while every worker is busy. \
                    Usable CPUs honour the affinity mask and the cgroup CPU quota. In a range, \
                    an empty part or 0 means the default and -1 the number of usable CPUs.",
        ..flag("workers", Some('j'), "workers")
    },
    FlagDef {
        value: Some("L"),
        family: Family::Records,
        help: "Records per batch: N fixed, or INIT:MAX adaptive (default 1:-1)",
        long_help: "The adaptive default starts at one record and doubles while input is \
                    plentiful and every worker is busy, up to 65536 records and never past \
                    ARG_MAX; it halves again when workers starve. In a range, an empty part or 0 \
                    means the default and -1 the hard maximum (65536).",
        ..flag("lines", Some('l'), "lines")
    },
    FlagDef {
        value: Some("N"),
        family: Family::Records,
        help: "Exactly N records per batch (the last batch may be short)",
        long_help: "Unlike -l, a batch is never cut early by a timeout. A batch whose arguments \
                    would not fit in ARG_MAX is not run and counts as a failure.",
        ..flag("exact-lines", Some('L'), "exact-lines")
    },
    FlagDef {
        help: "Send each batch's bytes (delimiters kept) to the command's stdin, not its arguments",
        long_help: "The bytes are moved from the spool kernel-side. A command that exits without \
                    reading its stdin is not an error.",
        ..flag("stdin", Some('s'), "stdin")
    },
    FlagDef {
        value: Some("N"),
        optional_value: true,
        conflicts: &["lines", "exact-lines", "block"],
        help: "Byte mode: raw N-byte chunks, no record scan; implies -s (default N: 1Mi)",
        long_help: "Chunks may cut records (and multi-byte characters) anywhere. With +s each \
                    chunk is passed as one argument instead (N at most 131071). Not with -l, -L \
                    or --block, in any order.",
        ..flag("bytes", Some('b'), "bytes")
    },
    FlagDef {
        value: Some("N"),
        negatable: false,
        conflicts: &["lines", "exact-lines", "bytes"],
        help: "Chunks of about N bytes cut at record boundaries, to stdin (implies -s)",
        long_help: "Like GNU Parallel --pipe --block: a chunk ends at the last record boundary \
                    within N bytes; a record longer than N is a chunk of its own. Not with -l, \
                    -L or -b, in any order.",
        ..flag("block", None, "block")
    },
    FlagDef {
        long_aliases: &["ordered"],
        family: Family::Order,
        help: "Output in input order (whole batches)",
        ..flag("keep-order", Some('k'), "keep-order")
    },
    FlagDef {
        long_aliases: &["atomic"],
        family: Family::Order,
        negatable: false,
        help: "Each batch's output whole, in completion order (the default)",
        ..flag("buffered", None, "buffered")
    },
    FlagDef {
        long_aliases: &["realtime"],
        family: Family::Order,
        help: "Commands write straight to stdout (output of batches may interleave)",
        ..flag("unbuffered", Some('u'), "unbuffered")
    },
    FlagDef {
        value: Some("MODE"),
        family: Family::Order,
        help: "Output mode: buffered (atomic), ordered, or unbuffered (realtime)",
        ..flag("order", Some('o'), "order")
    },
    FlagDef {
        help: "Replace {} in any word with the batch's records (one word per record)",
        long_help: "A word holding {} (even mid-word, e.g. x{}.txt) is repeated once per record. \
                    When no word holds {}, the records are appended as usual.",
        ..flag("insert", Some('i'), "insert")
    },
    FlagDef {
        help: "Replace {ID} in any word with a unique batch id NODE.WORKER.BATCH",
        long_help: "Records are still appended. The id never repeats within a run. Task I of N \
                    (--shard) puts I-of-N first, I-of-N.NODE.WORKER.BATCH, and with --results \
                    also the number of its run there, I-of-N.RUN.NODE.WORKER.BATCH (as in its \
                    file names), so ids never repeat across tasks or reruns.",
        ..flag("insert-id", Some('I'), "insert-id")
    },
    FlagDef {
        value: Some("N"),
        help: "Stop after the first N records (xargs -n N is -L N here)",
        long_help: "Units are allowed: 1k = 1000, 1Ki = 1024. The records after the first N \
                    are not run at all.",
        ..flag("limit", Some('n'), "limit")
    },
    FlagDef {
        value: Some("US"),
        help: "Flush a partial batch after US microseconds without new input",
        ..flag("timeout", Some('t'), "timeout")
    },
    FlagDef {
        short_aliases: &['0'],
        family: Family::Delimiter,
        help: "Records end with NUL instead of newline",
        ..flag("null", Some('z'), "null")
    },
    FlagDef {
        value: Some("C"),
        family: Family::Delimiter,
        help: "Records end with byte C ('' = NUL; escapes like \\t, \\x1f, \\0 accepted)",
        ..flag("delimiter", Some('d'), "delimiter")
    },
    FlagDef {
        value: Some("FILE"),
        help: "Read records from FILE instead of stdin (commands then keep frun's stdin)",
        ..flag("arg-file", Some('a'), "arg-file")
    },
    FlagDef {
        help: "Word-split and glob-expand records (runs each batch through bash)",
        ..flag("unsafe", Some('U'), "unsafe")
    },
    FlagDef {
        help: "Prefer a binary on disk over a same-named shell function or builtin",
        long_help: "The frun binary always runs binaries from disk; this matters for frun.bash.",
        ..flag("external", Some('X'), "external")
    },
    FlagDef {
        long_aliases: &["retry-nonzero-exit"],
        help: "Retry a batch whose command exits non-zero (as one killed by a signal is)",
        long_help: "Without it, only batches whose command dies by a signal or exits 137, 139, \
                    200 or 254 are retried. A batch is retried FRUN_RETRY_LIMIT times \
                    (default 3; 0 = never; negative = forever), then given up: skipped, named \
                    on stderr, exit status 3. Partial output of a failed attempt is discarded.",
        ..flag("retry-failed", Some('E'), "retry-failed")
    },
    FlagDef {
        value: Some("MAP"),
        help: "NUMA placement: auto, @N (N logical nodes), a node list like 0,1 or 0-3, or none",
        long_help: "With more than one node, workers are split across nodes in proportion to \
                    their CPUs and pinned there; the input is cut into chunks dealt to the nodes \
                    (a streamed input's chunks are bound to their node's memory) and each \
                    chunk's batches run on its node. An idle node takes another's work only when \
                    that node is far behind or has all its workers busy, or at the end of the \
                    input. auto uses every node with \
                    usable CPUs (HWLOC_XMLFILE and HWLOC_SYNTHETIC simulate another machine); \
                    @N cuts the usable CPUs into N logical nodes, also on a one-node machine. \
                    Output, order, batches and resume are the same in every mode. The \
                    default is FRUN_NODES when set, else auto.",
        ..flag("nodes", None, "nodes")
    },
    FlagDef {
        value: Some("I/N"),
        help: "Process only task I's share of the input, of N tasks (auto: Slurm's task, none)",
        long_help: "The input is cut into fixed chunks at record boundaries, the same in every \
                    task, and chunk k is task k mod N's, so every record is done by exactly one \
                    task. The input must reach every task: a file on shared storage (-a FILE, \
                    or < FILE), or a stream sent to each (srun --input=all); a task whose stdin \
                    is /dev/null or a terminal refuses to start. auto (the default) takes I and \
                    N from SLURM_PROCID and the step's task count inside an srun step and means \
                    none elsewhere. Without --results each task writes to its own stdout and \
                    keeps its checkpoint in ./.frun_resume.I-of-N. The default is FRUN_SHARD \
                    when set, else auto; a task's commands get FRUN_SHARD=none, so a frun they \
                    run does all of its own input.",
        ..flag("shard", None, "shard")
    },
    FlagDef {
        value: Some("DIR"),
        help: "Write this task's output and journal under DIR; a rerun continues the run there",
        long_help: "For a run split over tasks (--shard, Slurm): DIR is shared storage; each \
                    task writes task-I-of-N.A.out and .journal files there. Running the same \
                    command again on DIR skips every record any task of any earlier run \
                    completed, whatever the number of tasks now, so a stopped, preempted or \
                    requeued job just runs again. frun merge DIR then writes the whole output: \
                    in input order with -k, whole batches otherwise. Not with -u, -N, --resume \
                    or --checkpoint-file.",
        ..flag("results", None, "results")
    },
    FlagDef {
        value: Some("SPEC"),
        help: "Stop once batches fail: fail=N, fail=N%, now,fail=N or soon,fail=N",
        long_help: "A failed batch is one whose command exited non-zero (and was not retried) \
                    or one given up after its retries. now ends running commands at once; soon \
                    (the default) lets them finish but starts no more. frun then exits 1 and \
                    keeps the checkpoint. N% counts from the third finished batch on.",
        ..flag("halt", None, "halt")
    },
    FlagDef {
        value: Some("FILE"),
        help: "Where the checkpoint journal goes (default ./.frun_resume)",
        long_help: "The journal records every completed batch while the run goes; it is removed \
                    when the run ends normally and kept when it is stopped (signal, --halt, \
                    kill -9), or when batches were given up, for --resume. FILE must not \
                    exist: frun creates it (mode 0600) and refuses an existing file, whatever \
                    it is. Without this flag a ./.frun_resume that exists is left alone and the \
                    journal goes to ./.frun_resume.1 (.2, ...). An unwritable location given \
                    here is an error at start.",
        ..flag("checkpoint-file", None, "checkpoint-file")
    },
    FlagDef {
        value: Some("FILE"),
        help: "Continue the run checkpointed in FILE: same command, same input",
        long_help: "Records the checkpoint lists as done are skipped. When stdout is a regular \
                    file opened for appending (>>), frun first truncates it to the output the \
                    checkpoint recorded; otherwise it prints that byte count. Records whose \
                    command failed are run again. A checkpoint for another command or input is \
                    refused, and so is FILE unless it is a regular file (not a link) that you \
                    own and nobody else can write.",
        ..flag("resume", None, "resume")
    },
    FlagDef {
        help: "Print each invocation, shell-quoted, instead of running it",
        ..flag("dry-run", Some('N'), "dry-run")
    },
    FlagDef {
        help: "Print a summary on stderr at the end: batches, records, workers, CPU use, and \
               per NUMA node chunks placed and stolen, cross-node share and worker busy share",
        ..flag("stats", Some('v'), "stats")
    },
    FlagDef {
        negatable: false,
        help: "Print version information and exit",
        ..flag("version", Some('V'), "version")
    },
    FlagDef {
        negatable: false,
        help: "Print this help and exit",
        ..flag("help", Some('h'), "help")
    },
];

impl FlagDef {
    /// The id of the hidden argument that `+X` turns into.
    pub fn negation_id(&self) -> String {
        format!("no-{}", self.id)
    }

    pub fn takes_value(&self) -> bool {
        self.value.is_some()
    }
}

/// Looks a flag up by its short name (or short alias).
pub fn by_short(c: char) -> Option<&'static FlagDef> {
    FLAGS
        .iter()
        .find(|f| f.short == Some(c) || f.short_aliases.contains(&c))
}

/// Looks a flag up by its long name (or long alias), without the leading `--`.
pub fn by_long(name: &str) -> Option<&'static FlagDef> {
    FLAGS
        .iter()
        .find(|f| f.long == name || f.long_aliases.contains(&name))
}
