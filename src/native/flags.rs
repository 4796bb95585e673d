//! The one definition of every flag: names, value, negation, help text and what it sets.
//!
//! The parser, `--help`, the man page and the shell completions are all built from [`FLAGS`], so
//! they cannot disagree; and each row carries its own `apply`, which turns the flag's value into
//! its part of the [`Config`], so a flag's meaning sits beside its help. An `apply` only validates
//! and records: it opens no file and reads no environment (the caller hands it the `env` default).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::Duration;

use super::{parse_nodes, parse_shard};
use crate::units::{
    parse_delimiter, parse_duration, parse_halt, parse_job_timeout, parse_number, parse_range,
};
use frun_engine::output::emit::OrderMode;
use frun_engine::plan::config::{
    BatchSpec, Config, DEFAULT_BYTES, InputSpec, PluginSpec, ProgressSpec, ProgressStyle,
};

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
    /// `--progress`, `--bar`, `--eta`: one progress line.
    Progress,
}

/// What one flag was given as, once clap has settled overrides (the last of a family, of a flag
/// and its undo form, wins; the others are gone).
#[derive(Clone, Copy, Debug)]
pub enum Value<'a> {
    /// The switch was given (`-k`).
    On,
    /// Its undo form was given (`+k`, `--no-keep-order`). What it undoes is already gone, so an
    /// `apply` leaves its default in place; only `-s` keeps it (`+s` stops `-b` implying `-s`).
    Off,
    /// The value given (`-n 5`), or the default from the flag's environment variable.
    Text(&'a OsStr),
}

impl<'a> Value<'a> {
    /// Whether the switch was given.
    pub fn on(self) -> bool {
        matches!(self, Value::On)
    }

    /// The value as given, if any.
    pub fn os(self) -> Option<&'a OsStr> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The value as text, if any; a value that is not UTF-8 is refused.
    pub fn text(self) -> Result<Option<&'a str>, String> {
        self.os()
            .map(|s| s.to_str().ok_or_else(|| "not valid UTF-8".to_string()))
            .transpose()
    }

    /// The value as a path, if any; an empty one is refused.
    pub fn path(self) -> Result<Option<PathBuf>, String> {
        match self.os() {
            Some(p) if p.is_empty() => Err("empty file name".into()),
            p => Ok(p.map(PathBuf::from)),
        }
    }
}

/// The [`Config`] while the flags fill it in: it starts as the config of a command line with no
/// flags, and holds what one flag leaves for another to settle.
#[derive(Default)]
pub struct Draft {
    pub config: Config,
    /// `-s` (`Some(true)`) or `+s` (`Some(false)`); when neither was given, byte chunks (`-b`,
    /// `--block`) go to stdin and records do not.
    pub stdin: Option<bool>,
}

impl Draft {
    /// The finished config, running `command` (never empty).
    pub fn finish(self, command: Vec<OsString>) -> Config {
        let chunked = matches!(self.config.batch, BatchSpec::Bytes(_) | BatchSpec::Block(_));
        Config {
            stdin: self.stdin.unwrap_or(chunked),
            command,
            ..self.config
        }
    }
}

/// What giving a flag does.
#[derive(Clone, Copy)]
pub enum Apply {
    /// Records the value in the draft; an error says why the value is refused (the caller
    /// names the flag, or the environment variable the value came from).
    Config(fn(&mut Draft, Value) -> Result<(), String>),
    /// clap prints the help.
    Help,
    /// clap prints the version.
    Version,
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
    /// The only words the value may be (checked by clap, listed in `--help`); empty: any.
    pub possible_values: &'static [&'static str],
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
    /// When the flag is not given (or undone), this environment variable, when set and not
    /// empty, gives its value.
    pub env: Option<&'static str>,
    /// Values are checked in table order, except that rows with a higher `check` come after all
    /// lower ones: so that of two bad values, the one named is the one named before.
    pub check: u8,
    /// What giving the flag does.
    pub apply: Apply,
    /// One line for `--help`.
    pub help: &'static str,
    /// More text for `--help` and the man page (may be empty).
    pub long_help: &'static str,
}

const fn flag(id: &'static str, short: Option<char>, long: &'static str, apply: Apply) -> FlagDef {
    FlagDef {
        id,
        short,
        short_aliases: &[],
        long,
        long_aliases: &[],
        value: None,
        possible_values: &[],
        negatable: true,
        optional_value: false,
        family: Family::None,
        conflicts: &[],
        env: None,
        check: 0,
        apply,
        help: "",
        long_help: "",
    }
}

/// `-C SO:FN`: the library and the function, split at the last colon.
fn plugin_spec(v: &OsStr) -> Result<PluginSpec, String> {
    let b = v.as_bytes();
    let at = memchr::memrchr(b':', b).ok_or("wants LIBRARY:FUNCTION (e.g. ./plugin.so:run)")?;
    let (library, function) = (&b[..at], &b[at + 1..]);
    if library.is_empty() {
        return Err("the library's path is empty".into());
    }
    if function.is_empty()
        || !function
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_')
    {
        return Err(format!(
            "'{}' is not a C function name",
            String::from_utf8_lossy(function)
        ));
    }
    Ok(PluginSpec {
        library: PathBuf::from(OsStr::from_bytes(library)),
        function: OsStr::from_bytes(function).to_os_string(),
    })
}

/// The size of a byte chunk (`-b`, `--block`): empty (`-b` alone) is the default.
fn chunk_size(s: &str) -> Result<u64, String> {
    if s.is_empty() {
        return Ok(DEFAULT_BYTES);
    }
    if s.starts_with('-') {
        return Err(format!(
            "'{s}' is not a size: give a number of bytes, at least 1"
        ));
    }
    match parse_number(s)? {
        0 => Err("must be at least 1".into()),
        n => Ok(n),
    }
}

/// `--progress[=WHEN]`, `--bar[=WHEN]`, `--eta[=WHEN]`: WHEN is auto (the default: only when
/// stderr is a terminal), always or never.
fn progress(d: &mut Draft, v: Value, style: ProgressStyle) -> Result<(), String> {
    let Some(when) = v.text()? else {
        return Ok(());
    };
    d.config.progress = match when {
        "" | "auto" => Some(ProgressSpec {
            style,
            forced: false,
        }),
        "always" => Some(ProgressSpec {
            style,
            forced: true,
        }),
        "never" => None,
        w => return Err(format!("'{w}' is not auto, always or never")),
    };
    Ok(())
}

/// What the three progress flags say about WHEN, and how it all looks.
const PROGRESS_HELP: &str = "WHEN is auto (the flag alone), always or never, given as \
                             --bar=WHEN. Drawn on stderr only when stderr is a terminal, unless \
                             WHEN is always (never: none); at most 10 redraws a second, by a thread of \
                             its own that reads counters the run keeps anyway. The total is \
                             known when the input is a regular file (-a FILE or < FILE): its \
                             records are counted in the background (-b: its size over N \
                             chunks), else once the whole input has been read. The line is \
                             cleared when the run ends, however it ends (a run that completes \
                             shows its final figures first). The last of --progress, --bar and \
                             --eta wins.";

/// Every flag frun accepts, in `--help` order.
pub const FLAGS: &[FlagDef] = &[
    FlagDef {
        short_aliases: &['P'],
        value: Some("W"),
        help: "Number of workers: N, or INIT:MAX (default 1:<usable CPUs>; 0 or auto = default)",
        long_help: "Workers start at INIT and are added up to MAX while every worker is busy. \
                    Usable CPUs honour the affinity mask and the cgroup CPU quota. In a range, \
                    an empty part or 0 means the default and -1 the number of usable CPUs.",
        ..flag(
            "workers",
            Some('j'),
            "workers",
            Apply::Config(|d, v| {
                if let Some(s) = v.text()? {
                    d.config.workers = parse_range(s)?;
                }
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("L"),
        family: Family::Records,
        help: "Records per batch: N fixed, or INIT:MAX adaptive (default 1:-1)",
        long_help: "The adaptive default starts at one record and doubles while input is \
                    plentiful and every worker is busy, up to as many records as ARG_MAX takes \
                    (each record costs its bytes, a NUL and a pointer); it halves again when \
                    workers starve. In a range, an empty part or 0 means the default and -1 the \
                    hard maximum (what ARG_MAX allows, at most 1048576 records; 65536 for a bash \
                    function, which ARG_MAX does not bound).",
        ..flag(
            "lines",
            Some('l'),
            "lines",
            Apply::Config(|d, v| {
                if let Some(s) = v.text()? {
                    d.config.batch = BatchSpec::Lines(parse_range(s)?);
                }
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("N"),
        family: Family::Records,
        help: "Exactly N records per batch (the last batch may be short)",
        long_help: "Unlike -l, a batch is never cut early by a timeout. A batch whose arguments \
                    would not fit in ARG_MAX is not run and counts as a failure.",
        ..flag(
            "exact-lines",
            Some('L'),
            "exact-lines",
            Apply::Config(|d, v| {
                if let Some(s) = v.text()? {
                    d.config.batch = match parse_number(s)? {
                        0 => return Err("must be at least 1".into()),
                        n => BatchSpec::Exact(n),
                    };
                }
                Ok(())
            }),
        )
    },
    FlagDef {
        help: "Send each batch's bytes (delimiters kept) to the command's stdin, not its arguments",
        long_help: "The bytes are moved from the spool kernel-side. A command that exits without \
                    reading its stdin is not an error.",
        ..flag(
            "stdin",
            Some('s'),
            "stdin",
            Apply::Config(|d, v| {
                d.stdin = Some(v.on());
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("N"),
        optional_value: true,
        conflicts: &["lines", "exact-lines", "block"],
        help: "Byte mode: raw N-byte chunks, no record scan; implies -s (default N: 1Mi)",
        long_help: "Chunks may cut records (and multi-byte characters) anywhere. With +s each \
                    chunk is passed as one argument instead (N at most 131071). Not with -l, -L \
                    or --block, in any order.",
        ..flag(
            "bytes",
            Some('b'),
            "bytes",
            Apply::Config(|d, v| {
                if let Some(s) = v.text()? {
                    d.config.batch = BatchSpec::Bytes(chunk_size(s)?);
                }
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("N"),
        negatable: false,
        conflicts: &["lines", "exact-lines", "bytes"],
        help: "Chunks of about N bytes cut at record boundaries, to stdin (implies -s)",
        long_help: "Like GNU Parallel --pipe --block: a chunk ends at the last record boundary \
                    within N bytes; a record longer than N is a chunk of its own. Not with -l, \
                    -L or -b, in any order.",
        ..flag(
            "block",
            None,
            "block",
            Apply::Config(|d, v| {
                if let Some(s) = v.text()? {
                    d.config.batch = BatchSpec::Block(chunk_size(s)?);
                }
                Ok(())
            }),
        )
    },
    FlagDef {
        long_aliases: &["ordered"],
        family: Family::Order,
        help: "Output in input order (whole batches)",
        ..flag(
            "keep-order",
            Some('k'),
            "keep-order",
            Apply::Config(|d, v| {
                if v.on() {
                    d.config.order = OrderMode::Ordered;
                }
                Ok(())
            }),
        )
    },
    FlagDef {
        long_aliases: &["atomic"],
        family: Family::Order,
        negatable: false,
        help: "Each batch's output whole, in completion order (the default)",
        ..flag(
            "buffered",
            None,
            "buffered",
            Apply::Config(|d, v| {
                if v.on() {
                    d.config.order = OrderMode::Buffered;
                }
                Ok(())
            }),
        )
    },
    FlagDef {
        long_aliases: &["realtime"],
        family: Family::Order,
        help: "Commands write straight to stdout (output of batches may interleave)",
        ..flag(
            "unbuffered",
            Some('u'),
            "unbuffered",
            Apply::Config(|d, v| {
                if v.on() {
                    d.config.order = OrderMode::Unbuffered;
                }
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("MODE"),
        family: Family::Order,
        possible_values: &["buffered", "atomic", "ordered", "unbuffered", "realtime"],
        help: "Output mode: buffered (atomic), ordered, or unbuffered (realtime)",
        ..flag(
            "order",
            Some('o'),
            "order",
            Apply::Config(|d, v| {
                // clap has checked the word against `possible_values`.
                if let Some(mode) = v.text()? {
                    d.config.order = match mode {
                        "ordered" => OrderMode::Ordered,
                        "unbuffered" | "realtime" => OrderMode::Unbuffered,
                        _ => OrderMode::Buffered,
                    };
                }
                Ok(())
            }),
        )
    },
    FlagDef {
        help: "Replace {} (and {.} {/} {//} {/.} {#} {%}) in any word with the batch's records",
        long_help: "A word holding {} (even mid-word, e.g. x{}.txt) is repeated once per record. \
                    When no word holds {}, the records are appended as usual.",
        ..flag(
            "insert",
            Some('i'),
            "insert",
            Apply::Config(|d, v| {
                d.config.insert = v.on();
                Ok(())
            }),
        )
    },
    FlagDef {
        help: "A sweep's sources go together value by value (zip), not in every combination",
        long_help: "CMD ::: a b ::: 1 2 runs the records a 1, a 2, b 1, b 2; with --link, a 1 and \
                    b 2 (a shorter source starts again from its first value). :::+ links one \
                    source to the one before it instead.",
        ..flag(
            "link",
            None,
            "link",
            Apply::Config(|d, v| {
                d.config.link = v.on();
                Ok(())
            }),
        )
    },
    FlagDef {
        help: "Replace {ID} in any word with a unique batch id NODE.WORKER.BATCH",
        long_help: "Records are still appended. The id never repeats within a run. Task I of N \
                    (--shard) puts I-of-N first, I-of-N.NODE.WORKER.BATCH, and with --results \
                    also the number of its run there, I-of-N.RUN.NODE.WORKER.BATCH (as in its \
                    file names), so ids never repeat across tasks or reruns.",
        ..flag(
            "insert-id",
            Some('I'),
            "insert-id",
            Apply::Config(|d, v| {
                d.config.insert_id = v.on();
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("N"),
        help: "Stop after the first N records (xargs -n N is -L N here)",
        long_help: "Units are allowed: 1k = 1000, 1Ki = 1024. The records after the first N \
                    are not run at all.",
        ..flag(
            "limit",
            Some('n'),
            "limit",
            Apply::Config(|d, v| {
                d.config.limit = v.text()?.map(parse_number).transpose()?;
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("US"),
        help: "Flush a partial batch after US microseconds without new input",
        ..flag(
            "timeout",
            Some('t'),
            "timeout",
            Apply::Config(|d, v| {
                let us = v.text()?.map(parse_number).transpose()?;
                d.config.timeout = us.map(Duration::from_micros);
                Ok(())
            }),
        )
    },
    FlagDef {
        short_aliases: &['0'],
        family: Family::Delimiter,
        help: "Records end with NUL instead of newline",
        ..flag(
            "null",
            Some('z'),
            "null",
            Apply::Config(|d, v| {
                if v.on() {
                    d.config.delimiter = 0;
                }
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("C"),
        family: Family::Delimiter,
        help: "Records end with byte C ('' = NUL; escapes like \\t, \\x1f, \\0 accepted)",
        ..flag(
            "delimiter",
            Some('d'),
            "delimiter",
            Apply::Config(|d, v| {
                // Any single byte is a delimiter, even one that is not UTF-8.
                if let Some(os) = v.os() {
                    d.config.delimiter = match os.to_str() {
                        Some(s) => parse_delimiter(s)?,
                        None if os.len() == 1 => os.as_bytes()[0],
                        None => return Err("not one byte".into()),
                    };
                }
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("FILE"),
        help: "Read records from FILE instead of stdin (commands then keep frun's stdin)",
        ..flag(
            "arg-file",
            Some('a'),
            "arg-file",
            Apply::Config(|d, v| {
                if let Some(p) = v.os() {
                    d.config.input = match p {
                        p if p == "-" => InputSpec::Stdin,
                        p if p.is_empty() => return Err("empty file name".into()),
                        p => InputSpec::File(PathBuf::from(p)),
                    };
                }
                Ok(())
            }),
        )
    },
    FlagDef {
        help: "Word-split and glob-expand records (runs each batch through bash)",
        ..flag(
            "unsafe",
            Some('U'),
            "unsafe",
            Apply::Config(|d, v| {
                d.config.unsafe_words = v.on();
                Ok(())
            }),
        )
    },
    FlagDef {
        help: "Prefer a binary on disk over a same-named shell function or builtin",
        long_help: "The frun binary always runs binaries from disk; this matters for frun.bash.",
        ..flag(
            "external",
            Some('X'),
            "external",
            Apply::Config(|d, v| {
                d.config.external = v.on();
                Ok(())
            }),
        )
    },
    FlagDef {
        long_aliases: &["retry-nonzero-exit"],
        help: "Retry a batch whose command exits non-zero (as one killed by a signal is)",
        long_help: "Without it, only batches whose command dies by a signal or exits 137, 139, \
                    200 or 254 are retried. A batch is retried FRUN_RETRY_LIMIT times \
                    (default 3; 0 = never; negative = forever), then given up: skipped, named \
                    on stderr, exit status 3. Partial output of a failed attempt is discarded.",
        ..flag(
            "retry-failed",
            Some('E'),
            "retry-failed",
            Apply::Config(|d, v| {
                d.config.retry_failed = v.on();
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("SO:FN"),
        help: "Call the C function FN of the library SO for each batch instead of running a \
               command",
        long_help: "FN is called as int FN(int argc, char **argv) with the words after -C SO:FN \
                    and then the batch's records in argv (no program name), or with a third \
                    argument, a const struct frun_ctx * (when SO defines int frun_use_ctx = 1) \
                    or forkrun's const struct forkrun_ctx * (int forkrun_use_ctx = 1). With -s \
                    the batch is on its stdin instead. It runs in a plugin host process per \
                    worker that loads SO once; its stdout is captured per batch like a \
                    command's, its return value is the batch's exit status, and a crash or \
                    exit() in it fails the attempt like a killed command. SO is taken \
                    literally (a name without / is in the current directory), never searched \
                    for. The fully static binary runs plugins through the frun-plugin-host \
                    shipped beside it.",
        ..flag(
            "plugin",
            Some('C'),
            "plugin",
            Apply::Config(|d, v| {
                d.config.plugin = v.os().map(plugin_spec).transpose()?;
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("MAP"),
        // A site or a test run sets the default once.
        env: Some("FRUN_NODES"),
        help: "NUMA placement: auto, @N (N logical nodes), N (the first N nodes), a node list \
               like 0,1 or 0-3, or none",
        long_help: "With more than one node, workers are split across nodes in proportion to \
                    their CPUs and pinned there; the input is cut into chunks dealt to the nodes \
                    (a streamed input's chunks are bound to their node's memory) and each \
                    chunk's batches run on its node. An idle node takes another's work only when \
                    that node is far behind or has all its workers busy, or at the end of the \
                    input. auto uses every node with \
                    usable CPUs (HWLOC_XMLFILE and HWLOC_SYNTHETIC simulate another machine); \
                    @N cuts the usable CPUs into N logical nodes, also on a one-node machine. \
                    A single number N takes the machine's first N nodes (fewer when it has \
                    fewer; 0 is none), as forkrun does; a list names nodes (2-2 is node 2 \
                    alone), and nodes it names that the machine lacks are skipped (none left: \
                    no placement). Output, order, batches and resume are the same in every mode. The \
                    default is FRUN_NODES when set, else auto.",
        ..flag(
            "nodes",
            None,
            "nodes",
            Apply::Config(|d, v| {
                if let Some(s) = v.text()? {
                    d.config.nodes = parse_nodes(s)?;
                }
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("I/N"),
        // A sharded frun sets it to none for its commands, so a frun they run does the whole of
        // its own input.
        env: Some("FRUN_SHARD"),
        check: 2,
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
        ..flag(
            "shard",
            None,
            "shard",
            Apply::Config(|d, v| {
                if let Some(s) = v.text()? {
                    d.config.shard = parse_shard(s)?;
                }
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("DIR"),
        check: 1,
        help: "Write this task's output and journal under DIR; a rerun continues the run there",
        long_help: "For a run split over tasks (--shard, Slurm): DIR is shared storage; each \
                    task writes task-I-of-N.A.out and .journal files there. Running the same \
                    command again on DIR skips every record any task of any earlier run \
                    completed, whatever the number of tasks now, so a stopped, preempted or \
                    requeued job just runs again. frun merge DIR then writes the whole output: \
                    in input order with -k, whole batches otherwise. Not with -u, -N, --resume \
                    or --checkpoint-file.",
        ..flag(
            "results",
            None,
            "results",
            Apply::Config(|d, v| {
                d.config.results = v.path()?;
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("MODE"),
        possible_values: &["auto", "claims", "fixed"],
        help: "How the tasks of a run split the input: claims (work sharing), fixed, auto",
        long_help: "claims: the tasks take the input a range of chunks at a time through the \
                    --results directory (DIR/share), so fast tasks do more, a task that is lost \
                    (killed, its node gone) has its unfinished ranges run by the others, and a \
                    task started later with the same command and directory joins the run; any \
                    number of tasks, started by Slurm, ssh or by hand. Each range's results are \
                    committed once: frun merge is exact even when a range ran twice (see \
                    --at-most-once). The input must be a regular file. fixed: chunk k is task \
                    k mod N's (--shard I/N). auto (the default): claims for the tasks of a Slurm \
                    step writing to --results from a file, fixed otherwise.",
        ..flag(
            "share",
            None,
            "share",
            Apply::Config(|d, v| {
                use frun_engine::plan::config::ShareSpec;
                d.config.share = match v.text()? {
                    Some("claims") => ShareSpec::Claims,
                    Some("fixed") => ShareSpec::Fixed,
                    _ => ShareSpec::Auto,
                };
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("DUR"),
        help: "With --share claims: a task silent this long is taken for lost (default 120s)",
        long_help: "Each task renews its lease four times per DUR; one whose lease has not \
                    moved for DUR (by the clock of the task that looks) has its unfinished \
                    ranges taken over. On one host a task whose process is gone, and anywhere \
                    a task that stopped (a signal, the job's end), is taken over at once. The \
                    default rides out an NFS server's failover; DUR as for --job-timeout.",
        ..flag(
            "lease",
            None,
            "lease",
            Apply::Config(|d, v| {
                if let Some(t) = v.text()? {
                    let dur = parse_duration(t)?;
                    if dur.is_zero() {
                        return Err("must be more than 0".into());
                    }
                    d.config.share_settings.lease = dur;
                }
                Ok(())
            }),
        )
    },
    FlagDef {
        help: "With --share claims: never run a lost task's unfinished ranges again",
        long_help: "A command then runs at most once per record (a lost task may have started \
                    it): the ranges of lost tasks stay open, frun status DIR lists them, and \
                    frun merge reports the run incomplete. Without it, execution is \
                    at-least-once (a range of a task that was only slow may run twice) and the \
                    results are exactly-once.",
        ..flag(
            "at-most-once",
            None,
            "at-most-once",
            Apply::Config(|d, v| {
                d.config.share_settings.at_most_once = v.on();
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("SPEC"),
        help: "Stop once batches fail, succeed or are done: [now,|soon,]fail|success|done=N|N%",
        long_help: "A failed batch is one whose command exited non-zero (and was not retried), \
                    was killed, ran past --job-timeout, or was given up after its retries. now \
                    ends running commands at once; soon (the default) lets them finish but \
                    starts no more. now,N and soon,N mean fail=N; never is no halt. fail=N% and \
                    success=N% count from the third finished batch on, as a share of the \
                    finished ones; done=N% is a share of all the input's batches. On fail frun \
                    exits 1; on success or done it exits as a finished run would (0, or 123 when \
                    a batch failed). Either way the checkpoint is kept.",
        ..flag(
            "halt",
            None,
            "halt",
            Apply::Config(|d, v| {
                d.config.halt = v.text()?.map(parse_halt).transpose()?.flatten();
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("FILE"),
        help: "Write a GNU Parallel joblog to FILE (- = stdout): one line per finished batch",
        long_help: "A header, then per batch as it finishes: Seq (its number in input order, \
                    from 1), Host (:), Starttime (seconds since the epoch), JobRuntime \
                    (seconds), Send (bytes on its stdin), Receive (bytes of its stdout; 0 with \
                    -u), Exitval (-1: killed by --job-timeout, or it could not start), Signal \
                    and Command (its words, shell-quoted where needed). A regular FILE is \
                    truncated; a symlink is followed; a directory, a FIFO nobody reads, the input file or \
                    an unwritable location is an error at start. Nothing is logged with -N.",
        ..flag(
            "joblog",
            None,
            "joblog",
            Apply::Config(|d, v| {
                d.config.joblog = v.path()?;
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("DUR"),
        help: "Kill a batch that runs longer than DUR seconds, or N% of the median runtime",
        long_help: "DUR is seconds (fractions allowed) with an optional unit ms, s, m, h or d, \
                    and may be compound (1m30s). N% is N percent of the median runtime of the \
                    batches that succeeded so far, from the third on (GNU Parallel's --timeout \
                    N%). The command gets TERM, again after 200 ms and 100 ms, then KILL after \
                    50 ms more. Such a batch counts as failed and is not retried (it would most \
                    likely run out of time again). -t is another flag: the input-stall flush.",
        ..flag(
            "job-timeout",
            None,
            "job-timeout",
            Apply::Config(|d, v| {
                d.config.job_timeout = v.text()?.map(parse_job_timeout).transpose()?;
                Ok(())
            }),
        )
    },
    FlagDef {
        value: Some("DUR"),
        help: "Start batches at least DUR seconds apart, across all workers",
        long_help: "DUR as for --job-timeout (e.g. 0.5, 200ms, 1m). Retries wait their turn too.",
        ..flag(
            "delay",
            None,
            "delay",
            Apply::Config(|d, v| {
                d.config.delay = v.text()?.map(parse_duration).transpose()?;
                Ok(())
            }),
        )
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
        ..flag(
            "checkpoint-file",
            None,
            "checkpoint-file",
            Apply::Config(|d, v| {
                d.config.checkpoint_file = v.path()?;
                Ok(())
            }),
        )
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
        ..flag(
            "resume",
            None,
            "resume",
            Apply::Config(|d, v| {
                d.config.resume = v.path()?;
                Ok(())
            }),
        )
    },
    FlagDef {
        help: "Print each invocation, shell-quoted, instead of running it",
        ..flag(
            "dry-run",
            Some('N'),
            "dry-run",
            Apply::Config(|d, v| {
                d.config.dry_run = v.on();
                Ok(())
            }),
        )
    },
    FlagDef {
        help: "Print a summary on stderr at the end: batches, records, workers, CPU use, and \
               per NUMA node chunks placed and stolen, cross-node share and worker busy share",
        ..flag(
            "stats",
            Some('v'),
            "stats",
            Apply::Config(|d, v| {
                d.config.stats = v.on();
                Ok(())
            }),
        )
    },
    FlagDef {
        long_aliases: &["tui"],
        value: Some("WHEN"),
        optional_value: true,
        family: Family::Progress,
        help: "Live progress: frun: DONE/TOTAL records (P%), W workers, RATE/s, ETA M:SS",
        long_help: PROGRESS_HELP,
        ..flag(
            "progress",
            None,
            "progress",
            Apply::Config(|d, v| progress(d, v, ProgressStyle::Summary)),
        )
    },
    FlagDef {
        value: Some("WHEN"),
        optional_value: true,
        family: Family::Progress,
        help: "Live progress bar: [###>---] P% DONE/TOTAL records RATE/s ETA M:SS",
        long_help: PROGRESS_HELP,
        ..flag(
            "bar",
            None,
            "bar",
            Apply::Config(|d, v| progress(d, v, ProgressStyle::Bar)),
        )
    },
    FlagDef {
        value: Some("WHEN"),
        optional_value: true,
        family: Family::Progress,
        help: "Live ETA: ETA: M:SS left: N records avg: RATE/s done: DONE/TOTAL (P%)",
        long_help: PROGRESS_HELP,
        ..flag(
            "eta",
            None,
            "eta",
            Apply::Config(|d, v| progress(d, v, ProgressStyle::Eta)),
        )
    },
    FlagDef {
        negatable: false,
        help: "Print version information and exit",
        ..flag("version", Some('V'), "version", Apply::Version)
    },
    FlagDef {
        negatable: false,
        help: "Print this help and exit",
        ..flag("help", Some('h'), "help", Apply::Help)
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

/// The rows in the order their values are checked (see [`FlagDef::check`]).
pub fn in_check_order() -> Vec<&'static FlagDef> {
    let mut rows: Vec<&FlagDef> = FLAGS.iter().collect();
    rows.sort_by_key(|f| f.check);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_references_exist() {
        let ids: Vec<String> = FLAGS
            .iter()
            .flat_map(|f| [Some(f.id.to_string()), f.negatable.then(|| f.negation_id())])
            .flatten()
            .chain([super::super::GENERATE.into(), super::super::COMMAND.into()])
            .collect();
        let unique: HashSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "an id (or its no- form) repeats");
        let longs: Vec<&str> = FLAGS
            .iter()
            .flat_map(|f| std::iter::once(f.long).chain(f.long_aliases.iter().copied()))
            .collect();
        assert_eq!(longs.iter().collect::<HashSet<_>>().len(), longs.len());
        let shorts: Vec<char> = FLAGS
            .iter()
            .flat_map(|f| f.short.into_iter().chain(f.short_aliases.iter().copied()))
            .collect();
        assert_eq!(shorts.iter().collect::<HashSet<_>>().len(), shorts.len());
        for f in FLAGS {
            for c in f.conflicts {
                assert!(FLAGS.iter().any(|g| g.id == *c), "{}: no flag {c}", f.id);
            }
            // Lists of words and environment defaults are for values, the printers for switches.
            let value_only = !f.possible_values.is_empty() || f.env.is_some() || f.optional_value;
            assert!(!value_only || f.takes_value(), "{}", f.id);
            let printer = !matches!(f.apply, Apply::Config(_));
            assert!(!printer || (!f.takes_value() && !f.negatable), "{}", f.id);
        }
    }

    #[test]
    fn check_order_keeps_table_order_within_a_rank() {
        let order: Vec<&str> = in_check_order().iter().map(|f| f.id).collect();
        assert_eq!(order.len(), FLAGS.len());
        assert_eq!(order[0], FLAGS[0].id);
        assert_eq!(order[order.len() - 2..], ["results", "shard"]);
    }
}
