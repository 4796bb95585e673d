//! `frun parallel …`: GNU Parallel's command line (as Debian's 20221122 reads it) turned into a
//! [`Config`] for frun's engine.
//!
//! Options come before the command (the first word that is not an option ends them, as GNU
//! Parallel's option parser does); input sources (`:::`, `::::`, `:::+`, `::::+`) follow the
//! command. A flag frun does not understand is never passed on or ignored: it is an error
//! (status 255, as GNU Parallel's), and what frun deliberately does not do is refused with the
//! frun way where there is one. This module reads no file and starts nothing.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

mod completion;
mod csv;
mod host;
mod lines;
mod output;
mod pipe;
mod plus;
mod profiles;

use host::{cpus, place, semaphore};
use output::{storage, table};
pub use pipe::tee;
use pipe::{group_by, pipe_lines, regexp};
use profiles::{env, profile};

use crate::invocation::Invocation;
use crate::units::parse_delimiter;
use frun_engine::dispatch::pace::JobTimeout;
use frun_engine::exec::command::job::{
    Columns, JobSpec, ReplacementNames, Spread, Trim, perl_expression, perl_refusal,
};
use frun_engine::input::bounds::{MAX_PATTERN, RecordBounds};
use frun_engine::output::emit::OrderMode;
use frun_engine::plan::config::{
    BatchSpec, Bound, Conduct, Config, InputSpec, JobResume, Range, Source, SourceValues, Sweep,
};
use frun_engine::run::Statuses;
use frun_engine::sys::exit::ExitCode;

/// A refusal: one line, GNU Parallel's status for errors.
fn refuse(msg: impl Into<String>) -> Invocation {
    Invocation::Refuse {
        message: msg.into(),
        status: ExitCode::Passed(255),
    }
}

/// Flags frun deliberately does not have, and what to use instead.
const REFUSED: &[(&str, &str)] = &[
    (
        "--sshloginfile",
        "frun runs on this machine; spread a run over machines with Slurm shards (frun --shard, or srun frun)",
    ),
    (
        "--slf",
        "frun runs on this machine; spread a run over machines with Slurm shards (frun --shard, or srun frun)",
    ),
    (
        "--transferfile",
        "frun runs on this machine: nothing is transferred",
    ),
    (
        "--transfer",
        "frun runs on this machine: nothing is transferred",
    ),
    (
        "--return",
        "frun runs on this machine: nothing is transferred",
    ),
    ("--trc", "frun runs on this machine: nothing is transferred"),
    (
        "--basefile",
        "frun runs on this machine: nothing is transferred",
    ),
    ("--bf", "frun runs on this machine: nothing is transferred"),
    ("--onall", "frun runs on this machine"),
    ("--controlmaster", "frun runs on this machine"),
    (
        "--tmux",
        "frun does not start terminal multiplexers; use --progress or --bar",
    ),
    (
        "--tmuxpane",
        "frun does not start terminal multiplexers; use --progress or --bar",
    ),
    (
        "--sql",
        "frun keeps no SQL job tables; use --results DIR or --joblog FILE",
    ),
    (
        "--sqlmaster",
        "frun keeps no SQL job tables; use --results DIR or --joblog FILE",
    ),
    (
        "--sqlandworker",
        "frun keeps no SQL job tables; use --results DIR or --joblog FILE",
    ),
    (
        "--sqlworker",
        "frun keeps no SQL job tables; use --results DIR or --joblog FILE",
    ),
    (
        "--semaphoretimeout",
        "frun's semaphore waits as long as it takes",
    ),
    ("--st", "frun's semaphore waits as long as it takes"),
    (
        "--memsuspend",
        "frun does not throttle on free memory; use -j",
    ),
    ("--noswap", "frun does not throttle on swapping; use -j"),
    ("--limit", "frun does not run a limit script; use -j"),
    ("--embed", "frun does not embed itself in scripts"),
    ("--filter", "frun does not evaluate perl filters"),
    ("--parens", "frun has no perl replacement strings"),
    (
        "--record-env",
        "frun passes the whole environment to every command",
    ),
    ("--ssh", "frun runs on this machine"),
    (
        "--shebang",
        "run the script's lines through frun parallel -a SCRIPT instead",
    ),
    (
        "--shebang-wrap",
        "run the script through frun parallel instead",
    ),
    ("--xargs", "use frun xargs"),
    ("--max-line-length-allowed", "getconf ARG_MAX"),
    ("--ungroup-stderr", "use -u (or --line-buffer)"),
    ("--keep-order-on-interrupt", "use -k"),
    ("--ssh-delay", "frun runs on this machine"),
    ("--sshdelay", "frun runs on this machine"),
    ("--header-", "use --header :"),
];

/// What the options said, before the config is built.
struct Options {
    cfg: Config,
    /// `--tag` (`{}`) / `--tagstring STR`.
    tag: Option<Vec<u8>>,
    names: ReplacementNames,
    spread: Spread,
    per_job: Option<u64>,
    /// `-N`: {1}..{N} are the job's records.
    positional: bool,
    quote: bool,
    /// `--trim`; without it, columns of `--colsep` are trimmed on both sides (as GNU's are).
    trim: Option<Trim>,
    /// The tag is the job's values (`--tag`, `--ctag`), whatever `-I` names them.
    tag_values: bool,
    /// `-N0`: one record per job, put nowhere.
    bare: bool,
    colsep: Option<String>,
    header: bool,
    /// `--header 0`: each `::::` source's column is named by its file.
    header_files: bool,
    /// `--header`'s value as given (with `--pipe`: lines or a pattern every job gets first).
    header_text: Option<String>,
    /// `--skip-first-line` (with `--pipe`).
    skip_first_line: bool,
    /// `-a FILE`, in order.
    arg_files: Vec<PathBuf>,
    /// What separates input sources: `:::` and `::::` unless `--arg-sep`/`--arg-file-sep`.
    markers: Markers,
    link: bool,
    eof: Option<Vec<u8>>,
    skip_empty: bool,
    shuffle: bool,
    /// `--group-by VALUE` (with `--pipe`).
    group_by: Option<String>,
    pipe: bool,
    block: Option<u64>,
    /// `--pipepart`: the one input file is cut in place.
    pipepart: bool,
    /// `--block -N` (with `--pipepart`): N blocks per job slot.
    blocks_per_slot: Option<u64>,
    /// `--round-robin`: with `--pipepart`, one block per job slot; with `--pipe`, one command
    /// per job slot, fed the blocks in turn.
    round_robin: bool,
    /// `--tee`: with `--pipe`/`--pipepart`, all of the input to every job (see tee.rs).
    tee: bool,
    /// `--recend`/`--recstart` as given (escapes are read once `--regexp` is known).
    recend: Option<Vec<u8>>,
    recstart: Option<Vec<u8>>,
    /// `--regexp`: those two are regular expressions.
    regexp: bool,
    /// `--rrs`: the separators are left out of each block.
    strip_separators: bool,
    delimiter_given: bool,
    /// `-d` of several bytes (`-d '\n\n'`): the values are read whole, then cut at it.
    separator: Vec<u8>,
    /// `--group` / `-g` was given (GNU Parallel refuses it with `--line-buffer`).
    group: bool,
    /// How the output is ordered, as GNU Parallel settles it whatever the options' order:
    /// `-u` over `-k` over grouping, and `--no-keep-order` undoes `-k`.
    output: OutputFlags,
    /// `-s`, `--show-limits`.
    lines: lines::Lines,
    /// `--files`: each job's output is kept in a file; its name is printed.
    files: bool,
    /// `--tmpdir DIR`.
    tmpdir: Option<PathBuf>,
    /// `--compress`.
    compress: bool,
    /// `--csv`: input records are CSV rows, their fields the values.
    csv: bool,
    /// `--compress-program PROG` (it implies `--compress`).
    compress_program: Option<String>,
    /// `--tollef` and `--gnu` were given.
    tollef: bool,
    gnu: bool,
    /// `--plus`.
    plus: bool,
    /// `--tmpl FILE=NAME`, in order.
    tmpl: Vec<(PathBuf, Vec<u8>)>,
    /// `--retries STR` with replacement strings: each job's attempts come from its values.
    retries_text: Option<Vec<u8>>,
    /// The line needs the number of all the jobs: the input is read whole first.
    whole_input: bool,
    /// `--nonall`: the command runs once, here, with no value.
    nonall: bool,
    /// `--semaphore`, `--id`, `--fg`, `--wait`.
    sem: semaphore::Request,
    /// `--rpl 'TAG PERL'`, in order.
    rpl: Vec<frun_engine::exec::command::perl::Rpl>,
    /// `-J NAME` / `--profile NAME`, in order (read before the other options).
    profiles: Vec<String>,
    /// `--plain`: no profile and no `$PARALLEL`.
    plain: bool,
    /// `-j`'s value, read once all options are known (`--use-*-instead-of-threads`).
    jobs: Option<String>,
    /// `--use-sockets/cores-instead-of-threads`: what `-j N%`, `+N`, `-N` count.
    cpu_base: Option<&'static str>,
    /// `--wd DIR`, `--nice N`.
    place: place::Place,
}

/// Parses the words after `parallel`.
/// Takes the words after the tool's name; the values of `:::` sources are moved, not copied.
/// `$PARALLEL`'s options come first, as GNU Parallel reads them (the command line's own may
/// then override them), and its other words go before the command line's command.
pub fn parse(args: Vec<OsString>) -> Invocation {
    match parse_inner(args, std::env::var_os("PARALLEL")) {
        Ok(i) => i,
        Err(i) => i,
    }
}

/// How GNU Parallel behaves where frun differs: its exit status counts failed jobs, nothing
/// is retried unless `--retries` asks, a NUL in a value is refused (255), jobs never read its
/// standard input, no checkpoint is kept unless asked, and a job's stderr is printed after its
/// stdout.
const CONDUCT: Conduct = Conduct {
    statuses: Statuses::JobCount,
    retries_unasked: false,
    nul_in_value: frun_engine::plan::config::NulInValue::Escape,
    children_read_stdin: false,
    checkpoint_unasked: false,
    stderr_grouped: true,
};

fn parse_inner(
    mut args: Vec<OsString>,
    from_env: Option<OsString>,
) -> Result<Invocation, Invocation> {
    let mut o = fresh_options();
    // GNU Parallel uses every core by default.
    o.cfg.workers = fixed(frun_engine::sys::usable_cpus() as u64);
    let (mut env_words, prologue) = profile_and_env(&args, from_env)?;
    // Each list's options end at its first other word; those words go before the command.
    let mut rest = Vec::new();
    for words in env_words.iter_mut() {
        let n = options(&mut o, words)?;
        rest.extend(words.drain(n..));
    }
    let env_words = rest;
    let i = options(&mut o, &args)?;
    args.splice(..i, env_words);
    o.cfg.shell_prologue = o.place.prologue(prologue);
    let split = args
        .iter()
        .position(|w| o.markers.is(w.as_bytes()))
        .unwrap_or(args.len());
    // A first marker that is the last word (`parallel echo :::`) is dropped, and the values
    // come from the input as without one: GNU Parallel reads its command line so.
    if split + 1 == args.len() {
        args.pop();
    }
    let mut sources = sources(args.split_off(split), &o.markers)?;
    let tee = tee::prepare(&mut o, &args, &mut sources)?;
    tee::finish(tee, build(o, &args, sources)?)
}

/// The options before any word is read.
fn fresh_options() -> Options {
    Options {
        cfg: Config {
            conduct: CONDUCT,
            meminfo: place::Place::meminfo(),
            ..Config::default()
        },
        tag: None,
        names: ReplacementNames::default(),
        spread: Spread::One,
        per_job: None,
        positional: false,
        quote: false,
        trim: None,
        tag_values: false,
        bare: false,
        colsep: None,
        header: false,
        header_files: false,
        header_text: None,
        skip_first_line: false,
        arg_files: Vec::new(),
        markers: Markers::default(),
        link: false,
        eof: None,
        skip_empty: false,
        shuffle: false,
        group_by: None,
        pipe: false,
        block: None,
        pipepart: false,
        tee: false,
        blocks_per_slot: None,
        round_robin: false,
        recend: None,
        recstart: None,
        regexp: false,
        strip_separators: false,
        delimiter_given: false,
        separator: Vec::new(),
        group: false,
        output: OutputFlags::default(),
        lines: lines::Lines::default(),
        files: false,
        tmpdir: None,
        compress: false,
        csv: false,
        compress_program: None,
        tollef: false,
        gnu: false,
        plus: false,
        tmpl: Vec::new(),
        retries_text: None,
        whole_input: false,
        nonall: false,
        sem: semaphore::Request::default(),
        rpl: Vec::new(),
        profiles: Vec::new(),
        plain: false,
        jobs: None,
        cpu_base: None,
        place: place::Place::default(),
    }
}

/// The profiles' words and `$PARALLEL`'s (each list parsed on its own), and `$PARALLEL_ENV`'s
/// code.
type Before = ([Vec<OsString>; 2], Option<Vec<u8>>);

/// The words that come before the command line's, as GNU Parallel reads them: the profiles'
/// (`-J`, among the command line's options only, else the default `config`), then
/// `$PARALLEL`'s; none with `--plain`. Also `$PARALLEL_ENV`'s code, which no job inherits.
fn profile_and_env(args: &[OsString], from_env: Option<OsString>) -> Result<Before, Invocation> {
    let mut first = fresh_options();
    // A pass over the command line's options finds -J and --plain where they are options
    // (its errors are the second pass's too).
    options(&mut first, args)?;
    let home = profile::home(&mut |w| eprintln!("parallel: Warning: {w}"));
    let mut words = [Vec::new(), Vec::new()];
    if !first.plain {
        words[0] = profile::profile_words(&first.profiles, &home).map_err(refuse)?;
        if let Some(e) = from_env.filter(|e| !e.is_empty()) {
            words[1] = env::shell_words(e.as_bytes())
                .map_err(|why| refuse(format!("$PARALLEL holds {why}")))?;
        }
    }
    let code = profile::parallel_env(std::env::var_os("PARALLEL_ENV")).map_err(refuse)?;
    Ok((words, code))
}

/// Reads the options at the start of `args`; returns how many words they took (with a `--`
/// that ends them).
fn options(o: &mut Options, args: &[OsString]) -> Result<usize, Invocation> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_bytes();
        if a == b"--" {
            return Ok(i + 1);
        }
        if o.markers.is(a) || !a.starts_with(b"-") || a == b"-" {
            break;
        }
        i += option(o, args, i)?;
    }
    Ok(i)
}

fn fixed(n: u64) -> Range {
    Range {
        init: Bound::Value(n),
        max: Bound::Value(n),
    }
}

/// The words that start an input source: values (`:::`, `--arg-sep`) or files (`::::`,
/// `--arg-file-sep`), each also with a `+` (linked to the source before).
struct Markers {
    values: Vec<u8>,
    files: Vec<u8>,
}

impl Default for Markers {
    fn default() -> Markers {
        Markers {
            values: b":::".to_vec(),
            files: b"::::".to_vec(),
        }
    }
}

impl Markers {
    /// What `a` starts, when it is a marker: (a source of files, linked).
    fn kind(&self, a: &[u8]) -> Option<(bool, bool)> {
        let (bare, linked) = match a.strip_suffix(b"+") {
            Some(b) if b == self.values || b == self.files => (b, true),
            _ => (a, false),
        };
        if bare == self.files {
            Some((true, linked))
        } else if bare == self.values {
            Some((false, linked))
        } else {
            None
        }
    }

    fn is(&self, a: &[u8]) -> bool {
        self.kind(a).is_some()
    }
}

/// Reads the option at `args[i]`; returns how many words it took.
fn option(o: &mut Options, args: &[OsString], i: usize) -> Result<usize, Invocation> {
    let a = args[i].to_string_lossy().into_owned();
    if let Some(long) = a.strip_prefix("--") {
        let (name, inline) = match long.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (long.to_string(), None),
        };
        return long_option(o, &name, inline, args.get(i + 1));
    }
    // Short options, bundled: -kj4, -j 4, -0k.
    let shorts: Vec<char> = a[1..].chars().collect();
    let mut k = 0;
    while k < shorts.len() {
        let c = shorts[k];
        let takes = "jPNnIaEdCSsLlieJ".contains(c);
        if !takes {
            short_switch(o, c)?;
            k += 1;
            continue;
        }
        let attached: String = shorts[k + 1..].iter().collect();
        // -l takes an optional number: attached, or the next word when it is one.
        if c == 'l' {
            let next = args.get(i + 1).map(|w| w.to_string_lossy().into_owned());
            let (v, took) = match next.filter(|w| attached.is_empty() && lines::is_count(w)) {
                Some(w) => (w, 2),
                None => (attached, 1),
            };
            lines::max_lines(&mut o.lines, 'l', &v).map_err(refuse)?;
            o.per_job = Some(o.lines.per_job());
            o.positional = true;
            o.bare = false;
            return Ok(took);
        }
        // -i and -e take an optional value: attached, or the next word unless it looks like
        // an option (GNU Parallel's option parser reads `-i echo {}` as the value "echo").
        if c == 'i' || c == 'e' {
            if !attached.is_empty() {
                short_value(o, c, Some(attached))?;
                return Ok(1);
            }
            let next = optional_value(args.get(i + 1));
            let took = 1 + usize::from(next.is_some());
            short_value(o, c, next)?;
            return Ok(took);
        }
        if !attached.is_empty() {
            short_value(o, c, Some(attached))?;
            return Ok(1);
        }
        let Some(v) = args.get(i + 1) else {
            return Err(refuse(format!("option -{c} requires an argument")));
        };
        short_value(o, c, Some(v.to_string_lossy().into_owned()))?;
        return Ok(2);
    }
    Ok(1)
}

/// The value of an option whose value is optional (`-i`, `-e`, `--replace`, `--eof`), when it
/// is not attached: the next word, unless there is none or it starts with `-` (a lone `-` is a
/// value), as GNU Parallel's option parser takes it.
fn optional_value(next: Option<&OsString>) -> Option<String> {
    let w = next?.to_string_lossy();
    (!w.starts_with('-') || w == "-").then(|| w.into_owned())
}

/// `-k`, `--no-keep-order` and `-u` as given ([`Options::output`]).
#[derive(Clone, Copy, Debug, Default)]
struct OutputFlags {
    keep: bool,
    no_keep: bool,
    ungroup: bool,
}

fn short_switch(o: &mut Options, c: char) -> Result<(), Invocation> {
    match c {
        'k' => o.output.keep = true,
        'u' => o.output.ungroup = true,
        'g' => o.group = true,
        'X' => o.spread = Spread::Context,
        'm' => o.spread = Spread::Words,
        'q' => o.quote = true,
        '0' => {
            o.cfg.delimiter = 0;
            o.delimiter_given = true;
        }
        'r' => o.skip_empty = true,
        't' => o.cfg.trace = true,
        'p' => o.cfg.prompt = true,
        // GNU Parallel's -v shows the line on stdout, with the job's output; -t (--verbose)
        // on stderr.
        'v' => o.cfg.trace_output = true,
        'x' => {}
        'o' => o.place.tty = true,
        'h' => return Ok(()),
        'V' => {}
        _ => {
            return Err(refuse(format!(
                "unknown option: -{c} (see frun parallel --help)"
            )));
        }
    }
    Ok(())
}

fn short_value(o: &mut Options, c: char, v: Option<String>) -> Result<(), Invocation> {
    let name = match c {
        'j' | 'P' => "jobs",
        'N' => "max-replace-args",
        'n' => "max-args",
        'I' => "replace",
        'i' => "replace-i",
        'a' => "arg-file",
        'E' => "eof",
        'e' => "eof-e",
        'd' => "delimiter",
        'C' => "colsep",
        'S' => "sshlogin",
        's' => "max-chars",
        'L' => "max-lines-L",
        'l' => "max-lines",
        'J' => "profile",
        _ => unreachable!("listed in option()"),
    };
    set_value(o, name, v)
}

fn refused(flag: &str) -> Invocation {
    let why = REFUSED
        .iter()
        .find(|(f, _)| *f == flag)
        .map_or("", |(_, w)| w);
    refuse(format!("{flag} is not supported by frun parallel: {why}"))
}

/// Options that take no value.
const SWITCHES: &[&str] = &[
    "plain",
    "tag",
    "ctag",
    "color",
    "colour",
    "color-failed",
    "colour-failed",
    "cf",
    "verbose",
    "bar",
    "progress",
    "eta",
    "keep-order",
    "group",
    "ungroup",
    "quote",
    "null",
    "no-run-if-empty",
    "link",
    "shuf",
    "dry-run",
    "dryrun",
    "shellquote",
    "interactive",
    "pipe",
    "spreadstdin",
    "pipepart",
    "pipe-part",
    "tee",
    "cat",
    "fifo",
    "round-robin",
    "roundrobin",
    "regexp",
    "regex",
    "rrs",
    "remove-rec-sep",
    "removerecsep",
    "line-buffer",
    "linebuffer",
    "lb",
    "latest-line",
    "latestline",
    "ll",
    "will-cite",
    "citation",
    "bibtex",
    "no-notice",
    "silent",
    "version",
    "help",
    "trim-default",
    "xargs-compat",
    "exit",
    "no-keep-order",
    "resume",
    "resume-failed",
    "retry-failed",
    "xapply",
    "show-limits",
    "files",
    "compress",
    "csv",
    "plus",
    "nonall",
    "skip-first-line",
    "cleanup",
    "semaphore",
    "sem",
    "fg",
    "bg",
    "wait",
    "gnu",
    "tollef",
    "number-of-sockets",
    "number-of-cores",
    "number-of-threads",
    "number-of-cpus",
    "use-sockets-instead-of-threads",
    "use-cores-instead-of-threads",
    "open-tty",
    "tty",
];

fn long_option(
    o: &mut Options,
    name: &str,
    inline: Option<String>,
    next: Option<&OsString>,
) -> Result<usize, Invocation> {
    let flag = format!("--{name}");
    if REFUSED.iter().any(|(f, _)| *f == flag) {
        return Err(refused(&flag));
    }
    if SWITCHES.contains(&name) {
        if inline.is_some() {
            return Err(refuse(format!("{flag} takes no value")));
        }
        long_switch(o, name)?;
        return Ok(1);
    }
    let canonical = match name {
        "jobs" | "max-procs" | "j" => "jobs",
        "max-replace-args" => "max-replace-args",
        "max-args" => "max-args",
        "replace" => "replace",
        "extensionreplace" | "er" => "er",
        "basenamereplace" | "bnr" => "bnr",
        "dirnamereplace" | "dnr" => "dnr",
        "basenameextensionreplace" | "bner" => "bner",
        "seqreplace" => "seqreplace",
        "slotreplace" => "slotreplace",
        "arg-file" => "arg-file",
        "eof" => "eof",
        "delimiter" => "delimiter",
        "colsep" => "colsep",
        "sshlogin" => "sshlogin",
        "termseq" => "termseq",
        "shellcompletion" => "shellcompletion",
        "arg-sep" | "argsep" => "arg-sep",
        "arg-file-sep" | "argfilesep" => "arg-file-sep",
        "group-by" => "group-by",
        "header" => "header",
        "trim" => "trim",
        "block" | "block-size" => "block",
        "recend" => "recend",
        "recstart" => "recstart",
        "retries" => "retries",
        "joblog" | "jl" => "joblog",
        "tagstring" => "tagstring",
        "ctagstring" => "ctagstring",
        "timeout" => "timeout",
        "halt" | "halt-on-error" => "halt",
        "delay" => "delay",
        "shell" => "shell",
        "results" | "res" | "result" => "results",
        "max-chars" => "max-chars",
        "max-lines" => "max-lines",
        "tmpdir" | "tempdir" => "tmpdir",
        "rpl" => "rpl",
        "profile" => "profile",
        "process-slot-var" => "process-slot-var",
        "compress-program" => "compress-program",
        "decompress-program" => "decompress-program",
        "wd" | "workdir" => "wd",
        "nice" => "nice",
        "load" => "load",
        "memfree" => "memfree",
        "env" => "env",
        "id" | "semaphorename" => "id",
        "tmpl" | "template" => "tmpl",
        _ => {
            return Err(refuse(format!(
                "unknown option: {flag} (frun parallel runs only lines it understands)"
            )));
        }
    };
    if let Some(v) = inline {
        set_value(o, canonical, Some(v))?;
        return Ok(1);
    }
    if canonical == "max-lines" {
        let v = next
            .map(|w| w.to_string_lossy().into_owned())
            .filter(|w| lines::is_count(w));
        let took = 1 + usize::from(v.is_some());
        set_value(o, canonical, v)?;
        return Ok(took);
    }
    if canonical == "replace" || canonical == "eof" {
        let v = optional_value(next);
        let took = 1 + usize::from(v.is_some());
        let canonical = if canonical == "replace" {
            "replace-i"
        } else {
            "eof-e"
        };
        set_value(o, canonical, v)?;
        return Ok(took);
    }
    let Some(v) = next else {
        return Err(refuse(format!("option {flag} requires an argument")));
    };
    set_value(o, canonical, Some(v.to_string_lossy().into_owned()))?;
    Ok(2)
}

fn long_switch(o: &mut Options, name: &str) -> Result<(), Invocation> {
    match name {
        "plain" => o.plain = true,
        "keep-order" => o.output.keep = true,
        "no-keep-order" => o.output.no_keep = true,
        "group" => o.group = true,
        "ungroup" => o.output.ungroup = true,
        "line-buffer" | "linebuffer" | "lb" => o.cfg.line_buffer = true,
        "latest-line" | "latestline" | "ll" => o.cfg.latest_line = true,
        "quote" => o.quote = true,
        "plus" => o.plus = true,
        "nonall" => o.nonall = true,
        "skip-first-line" => o.skip_first_line = true,
        "cleanup" => o.cfg.templates_cleanup = true,
        "semaphore" | "sem" => o.sem.wanted = true,
        "fg" => o.sem.fg = true,
        "bg" => o.sem.fg = false,
        "wait" => {
            o.sem.wanted = true;
            o.sem.wait = true;
        }
        "null" => {
            o.cfg.delimiter = 0;
            o.delimiter_given = true;
        }
        "no-run-if-empty" => o.skip_empty = true,
        "link" | "xapply" => o.link = true,
        "show-limits" => o.lines.show_limits = true,
        "shuf" => o.shuffle = true,
        "dry-run" | "dryrun" => o.cfg.dry_run = true,
        // Each job's line is printed, not run, shell-quoted once per --shellquote.
        "interactive" => o.cfg.prompt = true,
        "shellquote" => {
            o.cfg.dry_run = true;
            o.cfg.dry_run_quotes += 1;
        }
        "verbose" => o.cfg.trace = true,
        "tag" | "ctag" => {
            o.tag = Some(b"{}".to_vec());
            o.tag_values = true;
            if name == "ctag" {
                colour(o, true);
            }
        }
        "color" | "colour" => colour(o, true),
        "color-failed" | "colour-failed" | "cf" => colour(o, false),
        "bar" | "progress" | "eta" => {
            use frun_engine::plan::config::{ProgressSpec, ProgressStyle};
            o.cfg.progress = Some(ProgressSpec {
                style: match name {
                    "bar" => ProgressStyle::Bar,
                    "eta" => ProgressStyle::Eta,
                    _ => ProgressStyle::Summary,
                },
                forced: false,
            });
        }
        "pipe" | "spreadstdin" => o.pipe = true,
        "resume" => o.cfg.job_resume = Some(JobResume::Resume),
        "resume-failed" => o.cfg.job_resume = Some(JobResume::ResumeFailed),
        "retry-failed" => o.cfg.job_resume = Some(JobResume::RetryFailed),
        "files" => o.files = true,
        "compress" => o.compress = true,
        "csv" => o.csv = true,
        // GNU Parallel's retired `--tollef` is an error unless `--gnu` overrides it; `--gnu`
        // alone changes nothing.
        "tollef" => o.tollef = true,
        "gnu" => o.gnu = true,
        "pipepart" | "pipe-part" => {
            o.pipe = true;
            o.pipepart = true;
        }
        "round-robin" | "roundrobin" => o.round_robin = true,
        "tee" => o.tee = true,
        "cat" => o.place.pipe_file = Some(place::PipeFile::Cat),
        "fifo" => o.place.pipe_file = Some(place::PipeFile::Fifo),
        "regexp" | "regex" => o.regexp = true,
        "rrs" | "remove-rec-sep" | "removerecsep" => o.strip_separators = true,
        "version" => {
            return Err(Invocation::Print(
                format!(
                    "frun parallel {} (GNU Parallel's command line, on frun's engine)\n\
                     License: {}\n\
                     Source and releases: {}\n\
                     \n\
                     frun parallel runs GNU Parallel command lines on this machine; what it\n\
                     does differently, and what it refuses, is in its documentation\n\
                     (docs/from-parallel.md).\n\
                     \n\
                     GNU Parallel's own --version text has 11 lines, and scripts (its own test\n\
                     suite among them) count them: so does this one.\n\
                     frun never asks to be cited.\n",
                    env!("CARGO_PKG_VERSION"),
                    env!("CARGO_PKG_LICENSE"),
                    env!("CARGO_PKG_REPOSITORY"),
                )
                .into_bytes(),
            ));
        }
        "help" => return Err(Invocation::Print(HELP.as_bytes().to_vec())),
        _ if name.starts_with("number-of-") => {
            let n = cpus::number_of(&name["number-of-".len()..]).unwrap_or(1);
            return Err(Invocation::Print(format!("{n}\n").into_bytes()));
        }
        "use-sockets-instead-of-threads" => o.cpu_base = Some("sockets"),
        "use-cores-instead-of-threads" => o.cpu_base = Some("cores"),
        "open-tty" => o.place.tty = true,
        // --tty: one job at a time, reading the terminal.
        "tty" => {
            o.place.tty = true;
            o.jobs = Some("1".to_string());
        }
        // Accepted silently: frun never asks for citations.
        _ => {}
    }
    Ok(())
}

/// A count or size as GNU Parallel reads it (`1K` is 1024, `1k` 1000).
fn number(flag: &str, v: &str) -> Result<u64, Invocation> {
    crate::units::parse_binary_prefix(v).map_err(|e| refuse(format!("{flag} '{v}': {e}")))
}

/// `-S`/`--sshlogin LOGIN[,LOGIN…]`: only this machine, `:` (GNU Parallel's name for it), with
/// `N/` its number of job slots (as `-j N`); a remote login is refused.
fn sshlogin(o: &mut Options, v: &str) -> Result<(), Invocation> {
    for login in v.split(',').map(str::trim).filter(|l| !l.is_empty()) {
        let (slots, host) = match login.split_once('/') {
            Some((n, h)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => (Some(n), h),
            _ => (None, login),
        };
        if host != ":" {
            return Err(refuse(format!(
                "-S/--sshlogin {login}: frun runs on this machine (`:`); spread a run over \
                 machines with Slurm shards (frun --shard, or srun frun)"
            )));
        }
        if let Some(n) = slots {
            jobs(n, 1)?;
            o.jobs = Some(n.to_string());
        }
    }
    Ok(())
}

/// `--color` (`jobs`: every job in its colour) or `--color-failed` (failed jobs white on red),
/// added to what was asked before.
fn colour(o: &mut Options, jobs: bool) {
    use frun_engine::output::colour::Colouring;
    o.cfg.colour = Some(match (o.cfg.colour, jobs) {
        (None | Some(Colouring::Jobs), true) => Colouring::Jobs,
        (None | Some(Colouring::Failed), false) => Colouring::Failed,
        _ => Colouring::JobsAndFailed,
    });
}

/// `--joblog FILE`; `+FILE` appends to FILE, as GNU Parallel's.
fn set_joblog(o: &mut Options, v: &str) -> Result<(), Invocation> {
    if v.is_empty() {
        return Err(refuse("--joblog: empty file name"));
    }
    match v.strip_prefix('+').filter(|f| !f.is_empty()) {
        Some(file) => {
            o.cfg.joblog = Some(PathBuf::from(file));
            o.cfg.joblog_append = true;
        }
        None => o.cfg.joblog = Some(PathBuf::from(v)),
    }
    Ok(())
}

fn set_value(o: &mut Options, name: &str, v: Option<String>) -> Result<(), Invocation> {
    let v = v.unwrap_or_default();
    match name {
        "jobs" => {
            jobs(&v, 1)?;
            o.jobs = Some(v);
        }
        "profile" => o.profiles.push(v),
        "wd" | "nice" | "env" | "load" | "memfree" | "process-slot-var" | "id" | "tmpl" => {
            set_job_place(o, name, v)?
        }
        // What compresses GNU Parallel's temporary files (and `--results` files): frun keeps
        // output in memory, so elsewhere it changes nothing that is printed (see storage.rs).
        "compress-program" => o.compress_program = Some(v),
        "decompress-program" => {}
        "max-replace-args" | "max-args" => {
            let n = number(&format!("--{name}"), &v)?;
            // -N0 (and -n0): each record is a job of its own that gets no value.
            o.bare = n == 0;
            o.per_job = Some(n.max(1));
            o.lines.records = o.per_job;
            o.positional = name == "max-replace-args";
        }
        "max-lines" | "max-lines-L" => {
            let flag = if name == "max-lines" { 'l' } else { 'L' };
            lines::max_lines(&mut o.lines, flag, &v).map_err(refuse)?;
            // -L 0: each line is a job of its own that gets no value (as -N0).
            o.bare = o.lines.bare();
            o.per_job = Some(o.lines.per_job());
            o.positional = true;
        }
        "replace" => o.names.whole = v.into_bytes(),
        "replace-i" => {
            o.names.whole = if v.is_empty() {
                b"{}".to_vec()
            } else {
                v.into_bytes()
            }
        }
        "er" => o.names.no_ext = v.into_bytes(),
        "bnr" => o.names.basename = v.into_bytes(),
        "dnr" => o.names.dirname = v.into_bytes(),
        "bner" => o.names.basename_no_ext = v.into_bytes(),
        "seqreplace" => o.names.seq = v.into_bytes(),
        "slotreplace" => o.names.slot = v.into_bytes(),
        "arg-file" => {
            if v.is_empty() {
                return Err(refuse("-a: empty file name"));
            }
            o.arg_files.push(PathBuf::from(v));
        }
        // GNU Parallel keeps the string only when perl finds it true: "" and "0" are none.
        "eof" | "eof-e" => {
            o.eof = Some(v)
                .filter(|v| !v.is_empty() && v != "0")
                .map(String::into_bytes)
        }
        "delimiter" => {
            o.separator.clear();
            match parse_delimiter(&v) {
                Ok(d) => o.cfg.delimiter = d,
                // Several bytes, escapes read as --recend's are.
                Err(_) if unescape(&v).len() > 1 => o.separator = unescape(&v),
                Err(e) => return Err(refuse(format!("--delimiter: {e}"))),
            }
            o.delimiter_given = true;
        }
        "colsep" => o.colsep = Some(v),
        "sshlogin" => sshlogin(o, &v)?,
        "shellcompletion" => return Err(completion::script(&v)),
        "arg-sep" | "arg-file-sep" if v.is_empty() => {
            return Err(refuse(format!("--{name} needs a word")));
        }
        "arg-sep" => o.markers.values = v.into_bytes(),
        "arg-file-sep" => o.markers.files = v.into_bytes(),
        "group-by" => o.group_by = Some(v),
        "header" => {
            o.header_files = v == "0";
            o.header = v == ":" || v == "1" || v.is_empty();
            o.header_text = Some(v);
        }
        "trim" => o.trim = Some(trim_value(&v)?),
        "block" => set_block(o, &v)?,
        "recend" => o.recend = Some(v.as_bytes().to_vec()),
        "recstart" => o.recstart = Some(v.as_bytes().to_vec()),
        "retries" if v.contains('{') => {
            o.retries_text = Some(v.into_bytes());
            o.cfg.retries = Some(u64::MAX);
        }
        "retries" => {
            // N attempts in all; 0: as many as it takes (GNU Parallel's "0 = inf").
            let n = number("--retries", &v)?;
            o.cfg.retries = Some(if n == 0 { u64::MAX } else { n - 1 });
        }
        "shell" => {
            return Err(refuse("--shell: set PARALLEL_SHELL to choose the shell"));
        }
        "tagstring" => {
            o.tag = Some(crate::units::unquote_printf(v.as_bytes()));
            o.tag_values = false;
        }
        "ctagstring" => {
            o.tag = Some(crate::units::unquote_printf(v.as_bytes()));
            o.tag_values = false;
            colour(o, true);
        }
        "rpl" => o.rpl.push(plus::rpl(&v).map_err(refuse)?),
        "joblog" => set_joblog(o, &v)?,
        "timeout" | "delay" | "termseq" => set_timing(o, name, &v)?,
        "halt" => o.cfg.halt = halt(&v)?,
        "results" => table::set_results(o, &v)?,
        "max-chars" => o.lines.max_chars = Some(number("--max-chars", &v)?),
        "tmpdir" => storage::set_tmpdir(o, &v)?,
        _ => return Err(refuse(format!("--{name}: not read by frun parallel"))),
    }
    Ok(())
}

/// `--timeout`, `--delay` and `--termseq`: when jobs start and how long they may run.
fn set_timing(o: &mut Options, name: &str, v: &str) -> Result<(), Invocation> {
    let bad = |e: String| refuse(format!("--{name} '{v}': {e}"));
    match name {
        // GNU Parallel ends a job at a whole second of the clock past its time.
        "timeout" => {
            o.cfg.job_timeout = Some(match crate::units::parse_job_timeout(v).map_err(bad)? {
                JobTimeout::Fixed(d) => JobTimeout::WholeSeconds(d),
                t => t,
            })
        }
        "delay" => o.cfg.delay = Some(crate::units::parse_duration(v).map_err(bad)?),
        _ => o.cfg.termseq = Some(crate::units::parse_termseq(v).map_err(bad)?),
    }
    Ok(())
}

/// The options with values that say where and how each job runs: `--wd`, `--nice`, `--env`,
/// `--load`, `--process-slot-var`, `--id` (a semaphore's) and `--tmpl`.
fn set_job_place(o: &mut Options, name: &str, v: String) -> Result<(), Invocation> {
    match name {
        "wd" if v.is_empty() => return Err(refuse("--wd: empty directory name")),
        "wd" => o.place.wd = Some(v.into_bytes()),
        "nice" => o.place.nice = Some(place::niceness(&v).map_err(refuse)?),
        // Jobs here inherit the whole environment: --env NAME only matters for remote jobs.
        "env" => {}
        "load" => {
            let cpus = frun_engine::sys::usable_cpus() as u64;
            o.place.load = Some(place::load_limit(&v, cpus).map_err(refuse)?);
        }
        "memfree" => o.cfg.memfree = Some(number("--memfree", &v)?),
        "process-slot-var" => o.cfg.slot_var = Some(OsString::from(v)),
        "id" => o.sem.id = Some(v),
        _ => match v.split_once('=') {
            Some((file, name)) if !file.is_empty() && !name.is_empty() => {
                o.tmpl.push((PathBuf::from(file), name.as_bytes().to_vec()));
            }
            _ => return Err(refuse(format!("--tmpl '{v}': expected FILE=NAME"))),
        },
    }
    Ok(())
}

/// `--trim n|l|r|lr`.
fn trim_value(v: &str) -> Result<Trim, Invocation> {
    Ok(match v {
        "n" => Trim::default(),
        "l" => Trim {
            left: true,
            right: false,
        },
        "r" => Trim {
            left: false,
            right: true,
        },
        "lr" | "rl" => Trim {
            left: true,
            right: true,
        },
        // GNU Parallel's own words and status.
        _ => {
            return Err(Invocation::Fail {
                text: "parallel: Error: --trim must be one of: r l rl lr.\n".into(),
                status: ExitCode::Passed(255),
            });
        }
    })
}

/// `--block N` (bytes, a fraction rounded down) or `--block -N` (blocks per job slot).
fn set_block(o: &mut Options, v: &str) -> Result<(), Invocation> {
    match v.strip_prefix('-') {
        Some(per) => {
            let n = number("--block", per)?;
            if n == 0 {
                return Err(refuse("--block -N: N must be at least 1"));
            }
            o.blocks_per_slot = Some(n);
            o.block = None;
        }
        None => {
            let bytes = number("--block", v)?;
            if bytes == 0 {
                return Err(refuse(format!(
                    "--block '{v}': a block holds at least 1 byte"
                )));
            }
            o.block = Some(bytes);
            o.blocks_per_slot = None;
        }
    }
    Ok(())
}
/// `--results NAME`: a directory tree, or a file name with replacement strings (tables are
/// table.rs's).
fn results_name(v: &str) -> Result<Vec<u8>, Invocation> {
    if v.is_empty() {
        return Err(refuse("--results: empty name"));
    }
    Ok(v.as_bytes().to_vec())
}

/// A `--recend`/`--recstart` string with its backslash escapes (`\n`, `\t`, `\r`, `\0`,
/// `\\`, `\xHH`, …) turned into bytes, as GNU Parallel reads them; a backslash before any
/// other character stands for that character.
fn unescape(v: &str) -> Vec<u8> {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 == b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        i += 2;
        out.push(match c {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'0' => 0,
            b'a' => 7,
            b'e' => 27,
            b'f' => 12,
            b'x' => {
                let hex = b[i..].iter().take(2).take_while(|h| h.is_ascii_hexdigit());
                let digits: Vec<u8> = hex.copied().collect();
                i += digits.len();
                u8::from_str_radix(std::str::from_utf8(&digits).unwrap_or("0"), 16).unwrap_or(0)
            }
            other => other,
        });
    }
    out
}

/// `--halt`: GNU Parallel's forms, its old numbers (0, 1, 2, -1, -2, 1-99%) too; a
/// percentage counts against all the jobs, as GNU Parallel's does.
fn halt(v: &str) -> Result<Option<frun_engine::dispatch::ledger::Halt>, Invocation> {
    use frun_engine::dispatch::ledger::{Halt, HaltCount, HaltOn};
    let old = |now, on| {
        Ok(Some(Halt {
            now,
            on,
            count: HaltCount::Batches(1),
        }))
    };
    match v {
        "0" | "never" => return Ok(None),
        "1" => return old(false, HaltOn::Fail),
        "2" => return old(true, HaltOn::Fail),
        "-1" => return old(false, HaltOn::Success),
        "-2" => return old(true, HaltOn::Success),
        _ => {}
    }
    let spec = if v.ends_with('%') && !v.contains('=') {
        format!("soon,fail={v}")
    } else {
        v.to_string()
    };
    let h = crate::units::parse_halt(&spec).map_err(|_| halt_error(v))?;
    Ok(h.map(|mut h| {
        if let HaltCount::Percent(p) = h.count {
            h.count = HaltCount::PercentOfAll(p);
        }
        h
    }))
}

/// GNU Parallel's error for a `--halt` value it cannot read, naming the first part that is
/// wrong.
fn halt_error(v: &str) -> Invocation {
    let mut parts = v.split(',');
    let when = parts.next().unwrap_or_default();
    let what = parts.next().unwrap_or_default();
    let key = what.split('=').next().unwrap_or_default();
    let message = if !["never", "soon", "now"].contains(&when) {
        "--halt must have 'never', 'soon', or 'now'.".to_string()
    } else if !["success", "fail", "done"].contains(&key) {
        format!("--halt {when} must be followed by ,success or ,fail.")
    } else {
        format!("--halt {when},{key} must be followed by ,number or ,percent%.")
    };
    Invocation::Fail {
        text: format!("parallel: Error: {message}\n"),
        status: ExitCode::Passed(255),
    }
}

/// `-j 0`: as many as can run at once, frun's ceiling on workers.
const JOBS_CEILING: u64 = 256;

/// Whether a `-j` value is a number's form (`N`, `N%`, `+N`, `-N`), not a file's name.
fn jobs_numeric(v: &str) -> bool {
    let t = v.trim_start_matches(['+', '-']).trim_end_matches('%');
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

/// `-j N`, `N%`, `+N`, `-N`, `0` (as many as can run), or `-j FILE`: one of those read from a
/// regular file (as the run starts, and again whenever its text changes).
fn jobs(v: &str, cpus: u64) -> Result<u64, Invocation> {
    if !jobs_numeric(v) {
        let text = frun_engine::run::read_jobs_file(Path::new(v));
        return match text.as_deref().map(str::trim).filter(|t| jobs_numeric(t)) {
            Some(t) => jobs(t, cpus),
            None => Err(Invocation::Fail {
                text: format!(
                    "parallel: Error: Parsing of --jobs/-j/--max-procs/-P failed.\n\
                     frun: -j '{v}': expected N, N%, +N, -N, 0, or a regular file holding one\n"
                ),
                status: ExitCode::Passed(255),
            }),
        };
    }
    frun_engine::run::jobs_value(v, cpus, JOBS_CEILING)
        .ok_or_else(|| refuse(format!("-j '{v}': expected N, N%, +N, -N or 0")))
}

/// The input sources after the command.
fn sources(words: Vec<OsString>, markers: &Markers) -> Result<Vec<Source>, Invocation> {
    let mut out: Vec<Source> = Vec::new();
    let mut words = words.into_iter().peekable();
    while let Some(marker) = words.next() {
        let (files, linked) = markers.kind(marker.as_bytes()).unwrap_or((false, false));
        let mut values = Vec::new();
        while let Some(w) = words.next_if(|w| !markers.is(w.as_bytes())) {
            values.push(w);
        }
        if files {
            // `::::` without files adds no source.
            for f in values {
                out.push(Source {
                    values: SourceValues::File(PathBuf::from(f)),
                    // `::::+ F G`: every file of the group is linked.
                    linked,
                });
            }
        } else {
            out.push(Source {
                values: SourceValues::Words(values),
                linked,
            });
        }
    }
    Ok(out)
}

/// What the other options' meaning depends on: `--tollef` (retired: an error unless `--gnu`
/// overrides it), and `-j` (its CPUs counted as the `--use-*-instead-of-threads` say).
fn settle_first(o: &mut Options) -> Result<(), Invocation> {
    if o.group && o.output.ungroup {
        return Err(Invocation::Fail {
            text: "parallel: Error: --group cannot be combined with --ungroup.\n".into(),
            status: ExitCode::Passed(255),
        });
    }
    o.cfg.order = match o.output {
        OutputFlags { ungroup: true, .. } => OrderMode::Unbuffered,
        OutputFlags {
            keep: true,
            no_keep: false,
            ..
        } => OrderMode::Ordered,
        _ => OrderMode::Buffered,
    };
    if o.tag_values {
        o.tag = Some(o.names.whole.clone());
    }
    if o.tollef && !o.gnu {
        return Err(Invocation::Fail {
            text: "parallel: Error: --tollef has been retired.\n\
                   parallel: Error: Remove --tollef or use --gnu to override --tollef.\n"
                .into(),
            status: ExitCode::Passed(255),
        });
    }
    if o.jobs.is_some() || o.cpu_base.is_some() || cpus::described() {
        let v = o.jobs.take().unwrap_or_else(|| "100%".to_string());
        let cpus = cpus::base(o.cpu_base);
        let now = jobs(&v, cpus)?;
        o.cfg.workers = fixed(now);
        if !jobs_numeric(&v) {
            // `-j FILE`: read again as it changes; the run may grow to `-j 0`'s ceiling.
            o.cfg.workers.max = Bound::Value(now.max(JOBS_CEILING));
            o.cfg.jobs_file = Some(frun_engine::plan::config::JobsFile {
                path: v.into(),
                cpus,
                now,
            });
        }
    }
    Ok(())
}

/// `--progress`: GNU Parallel's table of the machines it runs on (here the one, with its
/// CPUs and the jobs at once), on stderr before the run, terminal or not, as GNU prints it
/// (scripts grep its `1:local` line). frun's own progress line follows on a terminal.
fn progress_header(o: &Options) {
    use frun_engine::plan::config::ProgressStyle;
    if o.cfg.progress.as_ref().map(|p| p.style) != Some(ProgressStyle::Summary) {
        return;
    }
    let cpus = frun_engine::sys::usable_cpus() as u64;
    let jobs = match o.cfg.workers.max {
        Bound::Value(n) => n,
        _ => cpus,
    };
    eprint!(
        "\nComputers / CPU cores / Max jobs to run\n1:local / {cpus} / {jobs}\n\n\
         Computer:jobs running/jobs completed/%of started jobs/Average seconds to complete\n"
    );
}

/// GNU Parallel reads each `:::` value as it reads input: a value holding the record
/// delimiter (a newline, or the byte `-d` gives) is several values, split at each one (`a,b`
/// with `-d ,` is `a` and `b`; `a,` is `a` and an empty value).
fn split_values(sources: &mut [Source], delimiter: u8) {
    for s in sources {
        if let SourceValues::Words(words) = &mut s.values {
            if words.iter().any(|w| w.as_bytes().contains(&delimiter)) {
                *words = words
                    .iter()
                    .flat_map(|w| w.as_bytes().split(move |&b| b == delimiter))
                    .map(|v| std::os::unix::ffi::OsStringExt::from_vec(v.to_vec()))
                    .collect();
            }
        }
    }
}

/// The shell that runs command lines: `PARALLEL_SHELL`, else the nearest shell frun runs
/// under ([`ancestor_shell`]), else `SHELL`, else /bin/sh.
fn shell() -> PathBuf {
    if let Some(s) = std::env::var_os("PARALLEL_SHELL").filter(|s| !s.is_empty()) {
        return PathBuf::from(s);
    }
    if let Some(p) = ancestor_shell() {
        return p;
    }
    match std::env::var_os("SHELL").filter(|s| !s.is_empty()) {
        Some(s) => PathBuf::from(s),
        None => PathBuf::from("/bin/sh"),
    }
}

/// The shell GNU Parallel would choose from the processes it runs under: the nearest
/// ancestor whose name (its `argv[0]`, without a login shell's `-` or a directory) is a
/// POSIX shell's, found on PATH by that name (so a script run by `sh` gets `sh`, not what it
/// links to). frun takes only shells that read POSIX `sh` lines.
fn ancestor_shell() -> Option<PathBuf> {
    const SHELLS: [&[u8]; 10] = [
        b"bash", b"sh", b"dash", b"zsh", b"ksh", b"ksh93", b"mksh", b"lksh", b"ash", b"posh",
    ];
    let mut pid = std::os::unix::process::parent_id();
    // Far enough for any real chain of processes; a loop in /proc cannot hold it up.
    for _ in 0..64 {
        if pid <= 1 {
            return None;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let argv0 = cmdline.split(|&b| b == 0).next().unwrap_or_default();
        let argv0 = argv0.strip_prefix(b"busybox ").unwrap_or(argv0);
        let name = argv0.rsplit(|&b| b == b'/').next().unwrap_or_default();
        let name = name.strip_prefix(b"-").unwrap_or(name);
        if SHELLS.contains(&name) {
            let path = std::env::var_os("PATH");
            return frun_engine::exec::resolve::resolve(
                std::ffi::OsStr::from_bytes(name),
                path.as_deref(),
            )
            .ok();
        }
        let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
        // The parent's pid is the second field after the command's name, which ends at the
        // last `)` (the name may hold anything).
        let after = stat.iter().rposition(|&b| b == b')')?;
        let fields = std::str::from_utf8(&stat[after + 1..]).ok()?;
        pid = fields.split_whitespace().nth(1)?.parse().ok()?;
    }
    None
}

/// `--line-buffer` goes with neither `--ungroup` nor `--group` (as GNU Parallel says);
/// `--latest-line` overrides both (as GNU Parallel's does); neither goes with output that goes
/// to files.
fn check_line_buffer(o: &mut Options) -> Result<(), Invocation> {
    let flag = if o.cfg.latest_line {
        if o.cfg.order == OrderMode::Unbuffered {
            o.cfg.order = OrderMode::Buffered;
        }
        "--latest-line"
    } else if o.cfg.line_buffer {
        "--line-buffer"
    } else {
        return Ok(());
    };
    if o.cfg.order == OrderMode::Unbuffered {
        return Err(refuse(format!("--ungroup cannot be combined with {flag}")));
    }
    if o.group && !o.cfg.latest_line {
        return Err(refuse(format!("--group cannot be combined with {flag}")));
    }
    if o.cfg.job_files.is_some() || (o.cfg.latest_line && o.cfg.output_files_in.is_some()) {
        return Err(refuse(format!(
            "{flag} cannot be combined with --results or --files in frun parallel (a job's \
             output goes to its files, not to stdout)"
        )));
    }
    Ok(())
}

/// Refuses a perl expression (`{= … =}`) where frun evaluates none: in the tag and results
/// templates, and in a `--pipe` command (whose `{}` has no value). GNU Parallel joins the
/// command's words into one line before it looks for replacement strings; so does this check.
/// With `--plus`, refuses the strings it does not have, and puts its strings after the
/// user's own (`--rpl`).
fn refuse_perl(o: &mut Options, command: &[OsString]) -> Result<(), Invocation> {
    let line = command
        .iter()
        .map(|w| w.as_bytes())
        .collect::<Vec<_>>()
        .join(&b' ');
    let piped = o.pipe.then_some(line.as_slice());
    for text in [piped, o.cfg.job_files.as_deref()] {
        if let Some(e) = text.and_then(perl_expression) {
            return Err(refuse(perl_refusal(e)));
        }
    }
    if o.plus {
        o.rpl.extend(plus::plus());
    }
    // Only where a text names one (each costs every run a pattern to compile); --pipe jobs
    // have no values, so their lines get none of these.
    let texts = [Some(&line[..]), o.tag.as_deref(), o.retries_text.as_deref()]
        .into_iter()
        .flatten()
        .chain(o.cfg.job_files.as_deref())
        .chain(o.tmpl.iter().map(|(_, name)| &name[..]));
    if !o.pipe && plus::any_always(texts) {
        o.rpl.extend(plus::always());
    }
    o.whole_input = plus::needs_total(&line, o.plus);
    if o.pipe && !o.rpl.is_empty() {
        return Err(refuse(
            "--plus and --rpl strings need a job's values; --pipe jobs have none",
        ));
    }
    Ok(())
}

/// One source that is a file (or stdin), without --header, is read as it is: streamed, one
/// record per value. Anything else becomes tuples (the plan writes them): None.
fn streamed_source(o: &Options, sources: &[Source]) -> Option<PathBuf> {
    match sources {
        [] => Some(PathBuf::from("-")),
        [
            Source {
                values: SourceValues::File(p),
                ..
            },
        ] => Some(p.clone()),
        _ => None,
    }
    // -E, -r and --shuf look at every value first: the sources are read whole.
    .filter(|_| {
        !o.header
            && !o.header_files
            && o.eof.is_none()
            && !o.skip_empty
            && !o.shuffle
            && !o.lines.max_lines
            && o.separator.is_empty()
            && !o.csv
            && !o.whole_input
    })
}

fn build(
    mut o: Options,
    command: &[OsString],
    mut sources: Vec<Source>,
) -> Result<Invocation, Invocation> {
    if o.place.pipe_file.is_some() && !o.pipe {
        return Err(refuse("--cat and --fifo need --pipe or --pipepart"));
    }
    if o.sem.wanted {
        return semaphore(o, command, &sources);
    }
    settle_first(&mut o)?;
    refuse_perl(&mut o, command)?;
    results_and_resume(&mut o)?;
    table::settle(&mut o)?;
    storage::settle(&mut o)?;
    check_line_buffer(&mut o)?;
    progress_header(&o);
    all_sources(&mut o, &mut sources)?;
    if o.pipe {
        o.cfg.pipe_head = pipe_head(&o);
        return pipe(o, command, sources);
    }
    header_without_pipe(&o)?;
    if o.group_by.is_some() {
        return Err(refuse("--group-by needs --pipe"));
    }
    let csv = csv::separator(&mut o)?;
    // Columns of a --colsep the user gave are trimmed (not those of --header's own tab).
    let colsep_given = o.colsep.is_some();
    // `--header :` names tab-separated columns unless --colsep says otherwise (GNU Parallel's
    // default column separator).
    if o.header && o.colsep.is_none() && csv.is_none() {
        o.colsep = Some("\t".to_string());
    }
    let numbered = sources.len() <= 1 && o.colsep.is_none() && !o.header && !o.csv; // {N} with -X/-m
    let single = streamed_source(&o, &sources);
    // With several sources (or a header), the plan splits each value into its columns.
    let columns = match (&o.colsep, &single) {
        (Some(c), Some(_)) => Columns::Separator(c.clone()),
        (Some(c), None) => Columns::SplitTuple(c.clone()),
        (None, Some(_)) => Columns::Whole,
        (None, None) => Columns::Tuple,
    };
    let both = Trim {
        left: true,
        right: true,
    };
    let trim = o
        .trim
        .unwrap_or(if colsep_given { both } else { Trim::default() });
    o.cfg.input = match single {
        Some(p) if p.as_os_str() == "-" => InputSpec::Stdin,
        Some(p) => InputSpec::File(p),
        None => {
            if sources.is_empty() {
                sources.push(Source {
                    values: SourceValues::File(PathBuf::from("-")),
                    linked: false,
                });
            }
            let names = match o.header_files {
                true => file_names(&sources),
                false => Vec::new(),
            };
            let sweep = Sweep {
                sources,
                names,
                link: o.link,
                wrap: true,
                header: o.header,
                delimiter: o.cfg.delimiter,
                separator: std::mem::take(&mut o.separator),
                eof: o.eof.clone(),
                skip_empty: o.skip_empty,
                shuffle: o.shuffle,
                continued: o.lines.max_lines,
                csv,
                empty_is_blank: true,
            };
            // Tuples end in NUL (their values hold LEN:BYTES).
            o.cfg.delimiter = 0;
            InputSpec::Sweep(sweep)
        }
    };
    let chars = o.lines.chars();
    o.cfg.batch = match (o.spread, o.per_job) {
        (Spread::One, n) => BatchSpec::Exact(n.unwrap_or(1)),
        (_, n) => BatchSpec::Fill {
            chars,
            records: n.unwrap_or(u64::MAX),
        },
    };
    // Every job's line is held to the same length, as GNU Parallel holds it.
    o.cfg.line_limit = Some(chars);
    o.lines.show();
    let words: Vec<Vec<u8>> = command.iter().map(|w| w.as_bytes().to_vec()).collect();
    o.cfg.command = if command.is_empty() {
        vec![OsString::from("sh")]
    } else {
        command.to_vec()
    };
    o.cfg.job = Some(JobSpec {
        words,
        quote: o.quote,
        literal: false,
        shell: shell(),
        columns,
        spread: lines::job_spread(o.spread, o.positional, o.bare),
        names: std::mem::take(&mut o.names),
        trim,
        header: Vec::new(),
        bare: o.bare,
        fed: o.pipe,
        numbered,
        rpl: std::mem::take(&mut o.rpl),
    });
    job_texts(&mut o);
    Ok(Invocation::Run(Box::new(o.cfg)))
}

/// The tag's replacement strings read the job's values the way the line does (with `--pipe`,
/// `{}` is empty and `{#}`, `{%}` are the job's, as in GNU Parallel).
fn set_tag(tag: Option<Vec<u8>>, cfg: &mut Config) {
    cfg.tag = set_tag_like(tag, cfg);
}

/// The texts filled in with each job's values besides its line: the tag, `--retries STR`,
/// `--tmpl`'s names.
fn job_texts(o: &mut Options) {
    set_tag(o.tag.take(), &mut o.cfg);
    o.cfg.retries_from = set_tag_like(o.retries_text.take(), &o.cfg);
    for (file, name) in std::mem::take(&mut o.tmpl) {
        let name = set_tag_like(Some(name), &o.cfg);
        o.cfg.templates.extend(name.map(|n| (file, n)));
    }
}

/// A text read with each job's values as the tag reads them (`--retries {//}`).
fn set_tag_like(text: Option<Vec<u8>>, cfg: &Config) -> Option<JobSpec> {
    match (text, &cfg.job) {
        (Some(t), Some(job)) => Some(JobSpec {
            words: vec![t],
            quote: false,
            ..job.clone()
        }),
        _ => None,
    }
}

/// `--skip-first-line` and `--header` other than `:` and `0` need `--pipe`.
fn header_without_pipe(o: &Options) -> Result<(), Invocation> {
    if o.skip_first_line {
        return Err(refuse("--skip-first-line is supported with --pipe only"));
    }
    let other_header = !o.header && !o.header_files;
    if let Some(v) = o.header_text.as_ref().filter(|_| other_header) {
        return Err(refuse(format!(
            "--header '{v}': without --pipe, only --header : (the first value names the \
             column) and --header 0 (a file names its column) are supported"
        )));
    }
    Ok(())
}

/// `--pipe`'s head: `--skip-first-line`, then `--header` (`:` one line, N lines, else a
/// pattern matched at the start).
fn pipe_head(o: &Options) -> Option<frun_engine::input::head::PipeHead> {
    use frun_engine::input::head::{HeadSpec, PipeHead};
    let header = o.header_text.as_ref().map(|v| match v.as_str() {
        ":" | "" => HeadSpec::Lines(1),
        n if n.bytes().all(|b| b.is_ascii_digit()) => HeadSpec::Lines(n.parse().unwrap_or(0)),
        p => HeadSpec::Pattern(p.to_string()),
    });
    (o.skip_first_line || header.is_some()).then_some(PipeHead {
        skip_first_line: o.skip_first_line,
        header,
    })
}

/// `--header 0`: the column names are the sources' file names (a `:::` source's is its
/// number).
fn file_names(sources: &[Source]) -> Vec<Vec<u8>> {
    let name = |(i, s): (usize, &Source)| match &s.values {
        SourceValues::File(p) => p.as_os_str().as_bytes().to_vec(),
        SourceValues::Words(_) => (i + 1).to_string().into_bytes(),
    };
    sources.iter().enumerate().map(name).collect()
}

/// The input sources in order (`-a` files first), each `:::` value split at the delimiter;
/// `--nonall`'s lone empty value.
fn all_sources(o: &mut Options, sources: &mut Vec<Source>) -> Result<(), Invocation> {
    if o.separator.is_empty() {
        split_values(sources, o.cfg.delimiter);
    } else if o.pipe {
        return Err(refuse(
            "--pipe with a -d of several bytes: use --recend STR",
        ));
    }
    for f in o.arg_files.drain(..).rev() {
        sources.insert(
            0,
            Source {
                values: SourceValues::File(f),
                linked: false,
            },
        );
    }
    if o.nonall {
        nonall(o, sources)?;
    }
    Ok(())
}

/// `--semaphore`: the command line runs under the semaphore `--id` names, at most `-j` (1
/// unless given) at once.
fn semaphore(
    mut o: Options,
    command: &[OsString],
    sources: &[Source],
) -> Result<Invocation, Invocation> {
    if !sources.is_empty() {
        return Err(refuse(
            "--semaphore runs one command line: give it no input source",
        ));
    }
    let slots = match o.jobs.take() {
        Some(j) => jobs(&j, cpus::base(o.cpu_base))?,
        None => 1,
    };
    let line = (!command.is_empty()).then(|| {
        let words = command.iter().map(|w| {
            let mut q = Vec::new();
            match o.quote {
                true => frun_engine::exec::command::job::quote(w.as_bytes(), &mut q),
                false => q.extend_from_slice(w.as_bytes()),
            }
            q
        });
        words.collect::<Vec<_>>().join(&b' ')
    });
    let sem = std::mem::take(&mut o.sem);
    sem.runner(slots, line, shell())
        .map(Invocation::Act)
        .map_err(refuse)
}

/// `--nonall` without `--sshlogin`: the command runs once on this machine (GNU Parallel's
/// only one, named `:` in a tag), with no value and nothing read.
fn nonall(o: &mut Options, sources: &mut Vec<Source>) -> Result<(), Invocation> {
    if !sources.is_empty() || o.pipe {
        return Err(refuse(
            "--nonall runs the command once with no value: give it no input source and no --pipe",
        ));
    }
    sources.push(Source {
        values: SourceValues::Words(vec![OsString::new()]),
        linked: false,
    });
    o.bare = true;
    o.per_job = Some(1);
    o.spread = Spread::One;
    if o.tag_values {
        o.tag = Some(b":".to_vec());
    }
    Ok(())
}

/// `--results` and the `--resume` family, checked as GNU Parallel checks them. With
/// `--results`, nothing is printed: the tag and `-u` have nothing to do.
fn results_and_resume(o: &mut Options) -> Result<(), Invocation> {
    let needs_log = matches!(
        o.cfg.job_resume,
        Some(JobResume::Resume | JobResume::ResumeFailed)
    );
    if needs_log && o.cfg.joblog.is_none() && o.cfg.job_files.is_none() {
        return Err(refuse(
            "--resume and --resume-failed require --joblog or --results",
        ));
    }
    if o.cfg.job_files.is_some() {
        if o.pipe {
            return Err(refuse(
                "--results cannot be combined with --pipe in frun parallel (a job's input is \
                 a block, not values to name its files)",
            ));
        }
        if o.cfg.dry_run {
            return Err(refuse(
                "--results cannot be combined with --dry-run in frun parallel",
            ));
        }
        o.tag = None;
        if o.cfg.order == OrderMode::Unbuffered {
            o.cfg.order = OrderMode::Buffered;
        }
    }
    Ok(())
}

/// `--pipe`: blocks of records on each job's stdin (frun's `--block`).
fn pipe(
    mut o: Options,
    command: &[OsString],
    sources: Vec<Source>,
) -> Result<Invocation, Invocation> {
    if command.is_empty() {
        return Err(Invocation::Fail {
            text: "parallel: Error: --pipe/--pipepart must have a command to pipe into (e.g. 'cat').\n"
                .to_string(),
            status: ExitCode::Passed(255),
        });
    }
    let mut sources = sources;
    if o.pipepart {
        // GNU Parallel's --pipepart cuts its file and ignores `:::` values.
        sources.retain(|s| matches!(s.values, SourceValues::File(_)));
    }
    match sources.as_slice() {
        [] => {}
        [
            Source {
                values: SourceValues::File(p),
                ..
            },
        ] => {
            o.cfg.input = if p.as_os_str() == "-" {
                InputSpec::Stdin
            } else {
                InputSpec::File(p.clone())
            }
        }
        _ if o.pipepart => return Err(refuse("--pipepart reads one file (-a FILE or :::: FILE)")),
        _ => return Err(refuse("--pipe reads one input (stdin or one -a FILE)")),
    }
    o.cfg.strip_separators = o.strip_separators;
    o.cfg.batch = pipe_batches(&mut o)?;
    o.cfg.stdin = true;
    // GNU Parallel's -r drops blank lines from --pipe's blocks (not from --pipepart's).
    o.cfg.drop_blank_lines = o.skip_empty && !o.pipepart;
    let mut words: Vec<Vec<u8>> = command.iter().map(|w| w.as_bytes().to_vec()).collect();
    if o.place.pipe_file.is_some() {
        if o.quote {
            return Err(refuse(
                "--cat and --fifo cannot be combined with -q in frun parallel (the file's name \
                 is put in the line as a shell variable)",
            ));
        }
        // {} is the file's name (the job's shell holds it in a variable).
        for w in &mut words {
            *w = place::with_pipe_file(w, &o.names.whole);
        }
    }
    o.cfg.command = command.to_vec();
    o.cfg.job = Some(JobSpec {
        words,
        quote: o.quote,
        literal: false,
        shell: shell(),
        columns: Columns::Whole,
        spread: Spread::One,
        names: std::mem::take(&mut o.names),
        trim: o.trim.unwrap_or_default(),
        header: Vec::new(),
        bare: false,
        fed: true,
        numbered: false,
        rpl: Vec::new(),
    });
    job_texts(&mut o);
    Ok(Invocation::Run(Box::new(o.cfg)))
}

/// How `--pipe`/`--pipepart` cut the input into jobs: `-N` records, or blocks of about
/// `--block` bytes ending at a record boundary (the `--recend` byte, or the `--recend` and
/// `--recstart` strings), or raw blocks when both strings are empty.
fn pipe_batches(o: &mut Options) -> Result<BatchSpec, Invocation> {
    if o.pipepart && matches!(o.cfg.input, InputSpec::Stdin) {
        return Err(refuse("--pipepart needs a file: -a FILE or :::: FILE"));
    }
    if o.pipepart && o.group_by.is_some() {
        return Err(refuse("--group-by is supported with --pipe only"));
    }
    if o.pipepart && o.per_job.is_some() {
        return Err(refuse(
            "--pipepart is incompatible with --max-replace-args, --max-lines, and -L",
        ));
    }
    // --round-robin --pipe: one command per job slot, fed the blocks in turn.
    o.cfg.round_robin = o.round_robin && !o.pipepart;
    if o.blocks_per_slot.is_some() && !o.pipepart {
        return Err(refuse("--block -N (blocks per job slot) needs --pipepart"));
    }
    if o.regexp && (o.recstart.is_some() || o.recend.is_some()) {
        return regexp_batches(o);
    }
    if o.csv {
        return csv::pipe_batches(o);
    }
    let text = |b: Vec<u8>| unescape(&String::from_utf8_lossy(&b));
    // Without --recstart, records end with the delimiter (a newline unless -0/-d); with it,
    // the end string defaults to nothing.
    let start = o.recstart.take().map(text).unwrap_or_default();
    let end = o.recend.take().map(text).unwrap_or_else(|| {
        if start.is_empty() {
            vec![o.cfg.delimiter]
        } else {
            Vec::new()
        }
    });
    let one_byte = start.is_empty() && end.len() == 1 && !o.strip_separators;
    if one_byte {
        o.cfg.delimiter = end[0];
    } else if !start.is_empty() || !end.is_empty() {
        o.cfg.record_bounds = Some(RecordBounds::new(&end, &start).ok_or_else(|| {
            refuse(format!(
                "--recend and --recstart: at most {MAX_PATTERN} bytes together"
            ))
        })?);
    }
    // GNU Parallel's --pipepart cuts a file into 10 blocks per job slot unless told.
    // --round-robin --pipepart: each job slot gets one block, whatever --block says.
    if o.round_robin && o.pipepart {
        return Ok(BatchSpec::BlocksPerWorker(1));
    }
    let block = match (o.block, o.blocks_per_slot) {
        (Some(0) | None, None) if o.pipepart => return Ok(BatchSpec::BlocksPerWorker(10)),
        (_, Some(per)) => return Ok(BatchSpec::BlocksPerWorker(per)),
        (b, None) => b.filter(|&b| b > 0).unwrap_or(1 << 20),
    };
    if let Some(g) = &o.group_by {
        if !one_byte || o.lines.max_lines || o.header {
            return Err(refuse(
                "--group-by: only with lines ended by one byte, and no -L or --header",
            ));
        }
        return group_by::batches(g, o.colsep.as_deref(), o.per_job, block).map_err(refuse);
    }
    if o.lines.max_lines {
        if !one_byte {
            return Err(refuse(
                "-L counts lines ended by one byte: with --recstart or a longer --recend, use --block",
            ));
        }
        return Ok(pipe_lines::batches(o.lines.lines, o.lines.records, block));
    }
    Ok(match o.per_job {
        // -N with neither string: every byte is a record (as GNU Parallel counts them).
        Some(n) if start.is_empty() && end.is_empty() => BatchSpec::Bytes(n),
        // -N: that many records per job.
        Some(n) => BatchSpec::Exact(n),
        // Neither string: raw blocks.
        None if start.is_empty() && end.is_empty() => BatchSpec::Bytes(block),
        // --pipepart cuts at the first record boundary past each block's size.
        None if o.pipepart => BatchSpec::BlockPast(block),
        None => {
            o.cfg.grow_blocks = true;
            BatchSpec::Block(block)
        }
    })
}

/// `--pipe --regexp`: records bounded by GNU Parallel's regular expressions ([`regexp`]),
/// `-N` of them per job or blocks of about `--block` bytes cut at the last boundary.
fn regexp_batches(o: &mut Options) -> Result<BatchSpec, Invocation> {
    let text = |b: Option<Vec<u8>>| String::from_utf8_lossy(&b.unwrap_or_default()).into_owned();
    let (start, end) = (text(o.recstart.take()), text(o.recend.take()));
    let n = o.per_job.unwrap_or(1);
    let finder = regexp::RegexBounds::new(&start, &end, n).map_err(refuse)?;
    o.cfg.record_bounds = Some(RecordBounds::Found(std::sync::Arc::new(finder)));
    let block = o.block.filter(|&b| b > 0).unwrap_or(1 << 20);
    Ok(match o.per_job {
        Some(n) => BatchSpec::Exact(n),
        None if o.pipepart => BatchSpec::BlockPast(block),
        None => {
            o.cfg.grow_blocks = true;
            BatchSpec::Block(block)
        }
    })
}

/// Whether `w` is `parallel` (how the personality is named on the command line or as a link).
pub fn is_name(w: &OsStr) -> bool {
    w == "parallel"
}

const HELP: &str = "\
Run GNU Parallel command lines on frun's engine

Usage: frun parallel [OPTIONS] [COMMAND [ARGS]] [::: VALUES | :::: FILES]...

Options are GNU Parallel's (Debian 20221122) with their meaning: -j N|N%|+N|-N|0|FILE
(FILE holds one of those, read again whenever it changes: fewer lets running jobs finish), -k, -u,
--group (the default: each job's stdout whole, then its stderr), -X, -m (lines filled to 63664
bytes or -s/--max-chars N), -N N, -n N, -L N, -l [N],
--max-lines[=N], --xapply, --show-limits, -I STR, --er/--bnr/--dnr/--bner STR, -q, -0,
-d C|STR, -a FILE, --arg-sep/--arg-file-sep STR (markers in place of ::: and ::::),
--colsep REGEX, --csv (CSV records, fields as values; with --pipe, blocks
of whole records), --header : (0: a :::: source named by its file; with
--pipe, :, N lines or a REGEX matched at the start, given to every job first),
--skip-first-line (--pipe), --cat/--fifo (with --pipe: {} is a file holding the block, or a
named pipe it comes through), --trim n|l|r|lr, --link, :::, ::::, :::+, ::::+, --pipe (-L N: records
of N lines; --group-by COLUMN: runs of lines with one value in that column, split at a plain
--colsep string, a tab unless given; --round-robin: one command per job slot, fed the blocks
in turn), --pipepart (-a FILE, cut in place; --round-robin: one block per job slot), --block N
(-N: N blocks per job slot), --recend STR, --recstart STR, --regexp, --rrs, --tee (with
--pipe/--pipepart: all of the input to every job, one job per combination of the ::: values,
all at once), --retries N|STR (STR: replacement strings, per job), --joblog/--jl [+]FILE,
--resume, --resume-failed, --retry-failed, --results
DIR|NAME{}|NAME{}/ (GNU Parallel's layout; nothing is printed), --results NAME.json|.csv|.tsv
(a record per job with its output, in NAME or, for -.json etc., on stdout), --timeout N|N%,
--delay N,
--termseq SIG,MS,… (how a job over its time, or all jobs as the run stops, are ended: each
signal to the job's process group, then MS milliseconds before the next; default for a
timeout TERM,200,TERM,100,TERM,50,KILL,25), --halt now|soon,fail|success|done=N|N%, -E STR, -r, --shuf, -t/-v/--verbose, --bar, --eta,
--shellcompletion bash|zsh|auto (a completion function to eval), -p/--interactive (each
job's line shown on stderr with ` ?...`, run only when the answer read from /dev/tty starts
with y), --progress, --tag,
--tagstring STR (\\t, \\n, \\r and \\NNN read as GNU Parallel reads them),
--color/--ctag/--ctagstring STR (each job's lines in its own colour), --color-failed (a failed
job's lines white on red; live lines are not: a job's end is not known yet), --dry-run,
--shellquote (each job's line printed shell-quoted, once per --shellquote, not run),
--line-buffer/--lb (whole lines as they come, a line held until its end within a quarter of
the memory available; with -k the oldest job's live, the others' in
order after), --latest-line/--ll (each job's latest line, stdout and stderr together, on a
terminal row of its own, redrawn in place), --files (each job's output in a
new file, mode 0600, in --tmpdir DIR, else $TMPDIR, else /tmp; its name printed; the files are
yours to remove), --compress and --compress-program/--decompress-program PROG (output is
buffered in memory, so nothing printed changes; --results DIR files and --files files are
compressed, with PROG or the first of pzstd, zstd, lz4, pigz, gzip).
Replacement strings: {} {.} {/}
{//} {/.} {#} {%} {N} {N.} {N/} {N//} {N/.} {-N}, and with --header : {name} {name.} {name/}
{name//} {name/.} (in --tagstring too); perl ones: {=perl=} {=N perl=} {=name perl=}, --rpl
'TAG perl' (TAG may hold (groups), $$1 in perl), --plus (its strings; {##} {0#}
and total_jobs() read the input whole first; {uniq} and {choose_k} skip jobs), evaluated in one perl process per run. A line without
shell syntax is run directly; a line
with shell syntax runs in PARALLEL_SHELL (else the calling shell, else $SHELL, else /bin/sh),
values shell-quoted. Output is grouped per job unless --line-buffer or -u. Exit status: the
number of failed jobs (101 for more than 100), 255 for an error on the command line.
--process-slot-var NAME puts the job's slot (from 0) in NAME. Options are read from the
profiles (-J NAME, else config; in $PARALLEL_HOME, $XDG_CONFIG_HOME/parallel, ~/.parallel;
none with --plain), then $PARALLEL, then the command line; $PARALLEL_ENV (code, or a file
of it) runs in each job's shell before its line. --number-of-sockets/cores/threads/cpus print
this machine's counts (from $PARALLEL_LSCPU or $PARALLEL_CPUINFO when set, else /proc/cpuinfo);
--use-sockets-instead-of-threads / --use-cores-instead-of-threads make -j N% +N -N count those.
--wd DIR runs each job in DIR (made when missing; ... a new directory under ~/.parallel/tmp,
removed when the job ends); --nice N runs each job at niceness N; --memfree SIZE starts a
job only while SIZE bytes are available (MemAvailable in $FRUN_MEMINFO, else /proc/meminfo)
and, while under half of SIZE is, ends the youngest running job (one at a time, as --termseq
says): it fails, and --retries runs it again; --load N|N% starts a job's
command only once at most N processes (N% of the CPUs) are running, as GNU Parallel counts load; --open-tty/-o give each job
the terminal as stdin (/dev/null when there is none), --tty also runs one job at a time; --env
NAME is accepted and changes nothing (every job inherits the whole environment); --nonall
runs the command once, here, with no value. --semaphore [--id ID] [-j N] [--fg] CMD runs CMD
under a counting semaphore (N at once per ID; in the background unless --fg); --wait waits
for ID's commands to end. --tmpl FILE=NAME writes FILE, its replacement strings filled in,
to NAME before each job; --cleanup removes it when the job ends.

What frun parallel does not do is refused with one line (status 255), naming frun's way
where there is one: --sshlogin other than `:` (this machine; `N/:` is -j N) (Slurm shards), {= perl =} in --tagstring, --results and
--pipe, --tmux, --sql, --semaphoretimeout.
--will-cite and --citation are accepted and do nothing.
";

/// GNU Parallel's warning, with its hints, when the open-file limit allows only `n` jobs at once.
pub fn few_file_handles(n: impl std::fmt::Display) -> String {
    format!(
        "parallel: Warning: Only enough file handles to run {n} jobs in parallel.\n\
         parallel: Warning: Try running 'parallel -j0 -N {n} --pipe parallel -j0'\n\
         parallel: Warning: or increasing 'ulimit -n' (try: ulimit -n `ulimit -Hn`)\n\
         parallel: Warning: or increasing 'nofile' in /etc/security/limits.conf\n\
         parallel: Warning: or increasing /proc/sys/fs/file-max"
    )
}

/// The engine's message as GNU Parallel words it, where a script may filter GNU's words (its
/// own suite drops its "Only enough file handles" warnings with grep); None for the others,
/// which keep frun's words.
pub fn gnu_words(n: &frun_engine::Notice<'_>) -> Option<String> {
    use frun_engine::{Fact, WorkerLimit};
    match n.fact? {
        Fact::FewerWorkers {
            workers,
            limit: WorkerLimit::OpenFiles,
            ..
        } => Some(few_file_handles(workers)),
        Fact::LineTooLong => {
            let mut t = n.text.to_string();
            t[..1].make_ascii_uppercase();
            Some(format!("parallel: Error: {t}"))
        }
        Fact::Halted { failed, done } => Some(format!(
            "parallel: This job {}:\n{}",
            match (done, failed) {
                (true, _) => "finished",
                (false, true) => "failed",
                (false, false) => "succeeded",
            },
            n.detail
        )),
        // GNU Parallel puts its prefix before the line's first line only.
        Fact::TimedOut => Some(format!(
            "parallel: Warning: This job was killed because it timed out:\n\
             parallel: Warning: {}",
            n.detail
        )),
        Fact::BlockGrown { from, to } => Some(format!(
            "parallel: Warning: A record was longer than {from}. Increasing to --blocksize {to}."
        )),
        // A job that failed its last retry is a failed job, as any other; GNU Parallel ends a
        // job for memory without a word.
        Fact::GivenUp | Fact::Evicted => Some(String::new()),
        Fact::LoggedNewlines => {
            Some("parallel: Warning: Command lines contain newline. Forcing --null.".into())
        }
        Fact::NulEscaped => Some(
            "parallel: Warning: A NUL character in the input was replaced with \\0.\n\
             parallel: Warning: NUL cannot be passed through in the argument list.\n\
             parallel: Warning: Did you mean to use the --null option?"
                .into(),
        ),
        _ => None,
    }
}

/// GNU Parallel's exit status for a run that could not start: 255 for every error that is not
/// a job's (a command that cannot run keeps 126/127).
pub fn refusal_status(e: &frun_engine::RunError) -> ExitCode {
    match e {
        frun_engine::RunError::Command(r) => r.status(),
        _ => ExitCode::Passed(255),
    }
}
