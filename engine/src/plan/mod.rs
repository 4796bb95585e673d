//! The run plan: everything derived from a [`Config`] once, before any work — worker counts,
//! batch sizing, the resolved command and its argument-space budget, the input file, the
//! journal — handed to the engine as each stage's own settings ([`Settings`]).
//!
//! Errors here are the user's (exit 2) or a missing command (126/127). Nothing is spawned and no
//! thread is started.

pub mod builder;
pub mod config;
pub mod error;
mod fill;
mod jobs_resume;
mod plugin;
mod share;
mod sweep;

use std::ffi::OsString;
use std::fs::File;
use std::path::PathBuf;

use crate::dispatch::batch::ArgSpace;
use crate::dispatch::ledger::RetryPolicy;
use crate::exec::command::argv::{ArgvTemplate, MAX_ARG_STRLEN};
use crate::exec::resolve::resolve;
use crate::exec::spawn::environment_with;
use crate::input::scan::{HARD_MAX_RECORDS, HARD_MAX_STDIN_BYTES, HARD_MAX_STDIN_RECORDS, Sizing};
use crate::input::shard::{Shard, ShardMap};
use crate::journal::Prepared;
use crate::output::results::Destination;
use crate::run::{Backend, Input, Settings, Work, Workers};
use crate::sys::numa::Layout;
use config::{BatchSpec, Bound, Config, InputSpec, Range, ShardSpec};

pub use error::{ConfigError, RunError, Subject};

/// The input could not be used.
fn unusable_input(cfg: &Config, msg: impl Into<String>) -> RunError {
    let path = match &cfg.input {
        InputSpec::File(p) => Some(p.clone()),
        _ => None,
    };
    RunError::unusable(Subject::Input(path), msg)
}

fn resolve_range(
    r: Range,
    default_init: u64,
    default_max: u64,
    hard_max: u64,
    what: &str,
) -> Result<(u64, u64), RunError> {
    let pick = |b: Bound, default: u64| match b {
        Bound::Default => default,
        Bound::HardMax => hard_max,
        Bound::Value(v) => v,
    };
    let init = pick(r.init, default_init);
    let max = pick(r.max, default_max).max(if r.max == Bound::Default { init } else { 0 });
    if init > max {
        let option = if what == "--workers" {
            "workers"
        } else {
            "batch"
        };
        return Err(RunError::config(
            option,
            format!("{what}: the initial value {init} is larger than the maximum {max}"),
        ));
    }
    Ok((init, max))
}

/// What a checkpoint must match to be resumed: the command and every option that shapes what a
/// batch's command does or what the output looks like (not worker counts or batch sizes:
/// resuming works at record granularity).
fn run_identity(cfg: &Config) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut id = Vec::new();
    for w in &cfg.command {
        id.extend_from_slice(w.as_bytes());
        id.push(0);
    }
    let chunks = match cfg.batch {
        BatchSpec::Bytes(n) => format!("bytes {n}"),
        BatchSpec::Block(n) => format!("block {n}"),
        BatchSpec::BlockLines { bytes, lines } => format!("block {bytes} of {lines}-line records"),
        BatchSpec::Groups { bytes, per_job, .. } => format!("groups: {per_job} (block {bytes})"),
        BatchSpec::BlockPast(n) => format!("block past {n}"),
        BatchSpec::BlocksPerWorker(n) => format!("blocks per worker {n}"),
        _ => "records".into(),
    };
    id.extend_from_slice(
        format!(
            "|{chunks}|delim {}|stdin {}|insert {}|id {}|unsafe {}|order {:?}",
            cfg.delimiter, cfg.stdin, cfg.insert, cfg.insert_id, cfg.unsafe_words, cfg.order
        )
        .as_bytes(),
    );
    crate::journal::digest(&id)
}

/// The command, shell-quoted, for people reading a checkpoint.
fn shown_command(cfg: &Config) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = Vec::new();
    for (i, w) in cfg.command.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        crate::exec::command::argv::shell_quote(w.as_bytes(), &mut out);
    }
    // One line, whatever the words hold.
    String::from_utf8_lossy(&out).replace('\n', "\\n")
}

/// What is retried: frun's own flags retry crashes (and with `-E` any failure) up to the
/// environment's limit; xargs and GNU Parallel retry nothing, unless `--retries N` asks for N
/// attempts of any failure.
fn retry_policy(cfg: &Config) -> Result<RetryPolicy, RunError> {
    Ok(match (cfg.conduct.retries_unasked, cfg.retries) {
        (true, None) => RetryPolicy {
            limit: retry_limit()?,
            nonzero: cfg.retry_failed,
            crashes: true,
            last_stands: false,
        },
        (true, Some(n)) => RetryPolicy {
            limit: Some(n),
            nonzero: cfg.retry_failed,
            crashes: true,
            last_stands: false,
        },
        (_, None | Some(0)) => RetryPolicy {
            limit: Some(0),
            nonzero: false,
            crashes: false,
            last_stands: false,
        },
        (_, Some(n)) => RetryPolicy {
            limit: Some(n),
            nonzero: true,
            crashes: true,
            // Retries a GNU Parallel-style line asked for: its last attempt is the job's.
            last_stands: true,
        },
    })
}

/// `FRUN_RETRY_LIMIT` (or `FORKRUN_RETRY_LIMIT`): retries per batch; None = forever.
fn retry_limit() -> Result<Option<u64>, RunError> {
    for name in ["FRUN_RETRY_LIMIT", "FORKRUN_RETRY_LIMIT"] {
        let Some(v) = std::env::var_os(name) else {
            continue;
        };
        let text = v.to_string_lossy();
        return match text.trim().parse::<i64>() {
            Ok(n) if n < 0 => Ok(None),
            Ok(n) => Ok(Some(n as u64)),
            Err(_) => Err(RunError::unusable(
                Subject::Environment(name),
                format!(
                    "{name}='{text}' is not a whole number (retries per batch; negative = forever)"
                ),
            )),
        };
    }
    Ok(Some(3))
}

/// `FRUN_PREEMPT` (or `FORKRUN_PREEMPT_MODE`): auto (on under Slurm), 1/true/on, 0/false/off.
pub fn preempt() -> Result<bool, RunError> {
    for name in ["FRUN_PREEMPT", "FORKRUN_PREEMPT_MODE"] {
        let Some(v) = std::env::var_os(name) else {
            continue;
        };
        let text = v.to_string_lossy().trim().to_ascii_lowercase();
        return match text.as_str() {
            "" | "auto" => Ok(std::env::var_os("SLURM_JOB_ID").is_some()),
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err(RunError::unusable(
                Subject::Environment(name),
                format!("{name}='{text}' is not auto, 1, 0, true or false"),
            )),
        };
    }
    Ok(std::env::var_os("SLURM_JOB_ID").is_some())
}

/// The script that word-splits and glob-expands everything after the literal words (`-U`):
/// `$1` is how many leading words stay literal.
const UNSAFE_SCRIPT: &str = r#"n=$1; shift; exec "${@:1:n}" ${@:n+1}"#;

/// Plans the run `cfg` asks for.
pub fn plan(cfg: &Config) -> Result<Settings, RunError> {
    plan_pass(cfg, None)
}

/// Plans a pass of a task sharing its run by claims, `book` being its part from the passes
/// before (None: the first pass, or no sharing).
pub fn plan_pass(
    cfg: &Config,
    book: Option<std::sync::Arc<crate::input::shard::claims::Book>>,
) -> Result<Settings, RunError> {
    // `frun parallel --retry-failed`: the joblog's command lines are the run's jobs.
    let retry = jobs_resume::retry_config(cfg)?;
    plan_run(retry.as_ref().unwrap_or(cfg), book)
}

/// The workers to start with and at most. `--round-robin` on stdin: each lane's command
/// starts with one of the first batches, so every worker starts as soon as there is a batch
/// for it (none waits for the pool to grow).
fn workers_range(cfg: &Config, cpus: u64) -> Result<(u64, u64), RunError> {
    let (init, max) = resolve_range(cfg.workers, 1, cpus, cpus, "--workers")?;
    let round_robin = cfg.round_robin && cfg.stdin;
    Ok((if round_robin { max } else { init }, max))
}

/// Plans the run `cfg` asks for, once `--retry-failed` has made its jobs.
fn plan_run(
    cfg: &Config,
    book: Option<std::sync::Arc<crate::input::shard::claims::Book>>,
) -> Result<Settings, RunError> {
    let cpus = crate::sys::usable_cpus();
    let (wi, wm) = workers_range(cfg, cpus as u64)?;
    builder::check(cfg)?;
    let mut input = open_input(cfg)?;
    let (stdin_header, head_feeder) = pipe_head(cfg, &mut input)?;
    let (sizing, cuts, end) = input_sizing(cfg, sizing(cfg)?, &mut input, wm)?;
    // Perl's `$Global::max_jobs_running`: the job slots asked for (`-j FILE`: at the start).
    let slots = cfg.jobs_file.as_ref().map_or(wm, |f| f.now.min(wm));
    let input_size = input
        .file
        .metadata()
        .ok()
        .filter(|m| m.is_file() && m.len() > 0)
        .map(|m| m.len());
    // A file of known size has at most one record per byte: more workers would never get
    // work (each is a thread, its stack and its descriptors).
    let wm = input_size.map_or(wm, |n| wm.min(n.max(1)));
    // Nor more than a sweep has tuples (so `{%}` of a lone job is 1).
    let wm = input.records.map_or(wm, |n| wm.min(n.max(1)));
    let wi = wi.min(wm);
    let (first_total, total) = total_jobs(cfg, input.records, cuts.as_deref());
    crate::exec::command::perl::set_totals(total, slots);
    crate::exec::command::perl::set_first_total(first_total);
    let layout = Layout::plan(&cfg.nodes, wm as usize, input_size)
        .map_err(|m| RunError::config("nodes", m))?;
    let shard = shard(cfg, &input.file)?;
    let book = share::book(cfg, shard, &input.file, book)?;
    let split = shard.filter(|s| s.count > 1 && book.is_none());
    // A task's commands are not tasks: a frun they run must do all of its own input.
    let children_env = (split.is_some() || book.is_some())
        .then(|| environment_with(None, "FRUN_SHARD".as_ref(), "none".as_ref()));
    let shard_map = split.map(|s| shard_map(cfg, s, input_size));
    let env_bytes = crate::exec::spawn::environment_bytes_of(children_env.as_deref());
    let templates = templates(cfg, &input.header)?;
    let command = command(cfg, &input.header, env_bytes)?;
    let joblog = open_joblog(cfg, &input.file)?;
    let resumed = jobs_resume::Resumed::of(cfg, &input.header)?;
    let (file, feeder, used) = match head_feeder {
        Some(f) => (input.file, Some(f), None),
        None => argument_feed(cfg, input.file)?,
    };
    let input = Input {
        file,
        name: input.name,
        children_keep_stdin: input.children_keep_stdin,
        feeder,
        used,
    };
    // Last, once everything else is known to be valid: the journal is a file frun creates.
    let (checkpoint, results) =
        checkpoint(cfg, shard, split, shard_map, book.as_ref(), &input.file)?;
    let template = id_prefixed(
        command.template,
        shard,
        split,
        book.as_ref(),
        results.as_ref(),
    );
    let head_first = match &checkpoint.resume {
        // Resuming, the input is checked (and stdout restored) before anything else; a task of
        // a sharded run records its input first too (skipping other tasks' chunks may free the
        // head).
        Some(cp) => Some(
            cp.input
                .as_ref()
                .map_or(crate::journal::HEAD_BYTES as u64, |i| i.head_len),
        ),
        None => {
            (shard_map.is_some() || book.is_some()).then_some(crate::journal::HEAD_BYTES as u64)
        }
    };
    let scan = scan_settings(
        cfg,
        sizing,
        cuts,
        end,
        command.arg_space,
        shard_map,
        head_first,
    );
    let scan = crate::input::scan::Settings {
        claims: book.clone(),
        ..scan
    };
    Ok(Settings {
        input,
        scan,
        work: {
            let mut w = work(cfg, template, command.literal, sizing, command.extra)?;
            w.stdin_header = stdin_header;
            w.templates = templates;
            resumed.apply(w)
        },
        workers: Workers {
            init: if layout.is_single() {
                wi as usize
            } else {
                layout.first_workers(wi as usize)
            },
            max: wm as usize,
            layout: std::sync::Arc::new(layout),
            usable_cpus: cpus,
        },
        order: cfg.order,
        checkpoint,
        results,
        stats: cfg.stats,
        preempt: preempt()?,
        statuses: cfg.conduct.statuses,
        joblog,
        progress: cfg.progress,
        exits_after: false,
        children_env,
        share: book,
    })
}

/// The fixed chunks of task `s` (-b cuts records anyway: its chunks are raw bytes, like its
/// batches).
fn shard_map(cfg: &Config, s: Shard, input_size: Option<u64>) -> ShardMap {
    let m = ShardMap::new(s, input_size);
    if matches!(cfg.batch, BatchSpec::Bytes(_)) {
        m.raw()
    } else {
        m
    }
}

/// {ID} never repeats across the tasks of a run, nor across runs on one results directory:
/// the task's name (and its files' number) goes first.
fn id_prefixed(
    template: crate::exec::command::argv::ArgvTemplate,
    shard: Option<Shard>,
    split: Option<Shard>,
    book: Option<&std::sync::Arc<crate::input::shard::claims::Book>>,
    results: Option<&Destination>,
) -> crate::exec::command::argv::ArgvTemplate {
    let task = match book {
        Some(b) => b.task().to_string(),
        None => shard.map_or_else(|| "0-of-1".to_string(), |s| s.name()),
    };
    if let Some(r) = results {
        template.with_id_prefix(format!("{task}.{}.", r.run))
    } else if split.is_some() || book.is_some() {
        template.with_id_prefix(format!("{task}."))
    } else {
        template
    }
}

/// What the scanner is told: how records end and are grouped into batches, and which of them
/// this run takes.
fn scan_settings(
    cfg: &Config,
    sizing: Sizing,
    cuts: Option<std::sync::Arc<[u64]>>,
    end: Option<u64>,
    arg_space: ArgSpace,
    shard_map: Option<ShardMap>,
    head_first: Option<u64>,
) -> crate::input::scan::Settings {
    crate::input::scan::Settings {
        delimiter: cfg.delimiter,
        sizing,
        cuts,
        limit: match (cfg.limit, end) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        },
        timeout: cfg.timeout,
        arg_space: Some(arg_space),
        // A plugin host splits records itself, with no ARG_MAX: batches are bytes as for -s.
        byte_guided: cfg.stdin || cfg.plugin.is_some(),
        count_records: !((cfg.stdin || cfg.plugin.is_some())
            && !cfg.dry_run
            && !cfg.stats
            && cfg.progress.is_none()
            && cfg.limit.is_none()
            && sizing
                == Sizing::Adaptive {
                    init: 1,
                    max: HARD_MAX_STDIN_RECORDS,
                }),
        shard: shard_map,
        claims: None,
        head_first,
        // Records become arguments (a `-b` chunk is one whole), where a NUL byte ends them.
        nul: nul_in_argument(cfg, sizing),
        bounds: cfg.record_bounds.clone(),
        grow_blocks: cfg.grow_blocks,
    }
}

/// `--tmpl`: each template's text (read now) and its file's name, to be filled in with each
/// job's values (`header`: a sweep's column names).
type Templates = Vec<(
    crate::exec::command::job::JobLine,
    crate::exec::command::job::JobLine,
)>;

fn templates(cfg: &Config, header: &[Vec<u8>]) -> Result<Templates, RunError> {
    use crate::exec::command::job::JobLine;
    let mut out = Vec::new();
    for (path, dest) in &cfg.templates {
        let text = std::fs::read(path).map_err(|e| {
            RunError::unusable(
                Subject::Input(Some(path.clone())),
                format!(
                    "--tmpl: cannot read {}: {}",
                    path.display(),
                    crate::sys::errors::os_message(&e)
                ),
            )
        })?;
        let mut name = dest.clone();
        if !header.is_empty() {
            name.header = header.to_vec();
        }
        let body = crate::exec::command::job::JobSpec {
            words: vec![text],
            ..name.clone()
        };
        let bad = |m| RunError::config("tmpl", m);
        out.push((
            JobLine::text(&body).map_err(bad)?,
            JobLine::text(&name).map_err(bad)?,
        ));
    }
    Ok(out)
}

/// The run's number of jobs when it is known before they start (a sweep's tuples, `-X`'s
/// cuts), else 0: what job 1 sees (0: the same as the others) and what the others see. Lines
/// filled by length (`-X`, `-m`) count as GNU Parallel counts them: job 1 sees one job per
/// record (its line is built before the records are grouped), the later ones job 1 and one
/// job per record job 1 did not take.
fn total_jobs(cfg: &Config, records: Option<u64>, cuts: Option<&[u64]>) -> (u64, u64) {
    match (&cfg.batch, records, cuts) {
        (BatchSpec::Fill { .. }, _, Some(c)) => {
            let all: u64 = c.iter().sum();
            let first = c.first().copied().unwrap_or(0);
            (all, 1 + all - first)
        }
        (_, _, Some(c)) => (0, c.len() as u64),
        (BatchSpec::Exact(n), Some(r), _) => (0, r.div_ceil((*n).max(1))),
        _ => (0, 0),
    }
}

/// `--pipe`'s head ([`crate::input::head`]): the header every batch gets first, and the feeder
/// of the rest when it comes through a pipe.
fn pipe_head(
    cfg: &Config,
    input: &mut Opened,
) -> Result<(Vec<u8>, Option<crate::input::Feeder>), RunError> {
    let Some(head) = &cfg.pipe_head else {
        return Ok((Vec::new(), None));
    };
    let file = input.file.try_clone().map_err(|e| {
        RunError::unusable(Subject::Input(None), format!("cannot read the input: {e}"))
    })?;
    let rest = crate::input::head::split(file, head)
        .map_err(|m| RunError::unusable(Subject::Input(None), m))?;
    input.file = rest.file;
    Ok((rest.header, rest.feeder))
}

/// What the run reads (the feeder's pipe, or the input itself), the feeder, and what the run
/// and the feeder share about the input the commands used.
type ArgumentFeed = (
    File,
    Option<crate::input::Feeder>,
    Option<std::sync::Arc<crate::input::used::Used>>,
);

/// `frun xargs`: the input goes through xargs' rules on a thread of the run (the feeder),
/// into a pipe the run reads: one packed record per command. The run learns from what it
/// shares with the feeder how much input its commands used ([`crate::input::used`]).
fn argument_feed(cfg: &Config, source: File) -> Result<ArgumentFeed, RunError> {
    let Some(x) = &cfg.argument_lists else {
        return Ok((source, None, None));
    };
    let rules = &x.rules;
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| RunError::unusable(Subject::System, format!("cannot make a pipe: {e}")))?;
    // A larger pipe lets the feeder run ahead of the reader (fewer wake-ups); the default
    // size works too.
    let _ = nix::fcntl::fcntl(&write, nix::fcntl::FcntlArg::F_SETPIPE_SZ(1 << 20));
    let rules = rules.clone();
    let writer = File::from(write);
    let used = std::sync::Arc::new(crate::input::used::Used::new(source));
    let reader = std::sync::Arc::clone(&used);
    let feed: crate::input::Feeder =
        Box::new(move || crate::input::arguments::translate_file(&reader, writer, &rules));
    Ok((File::from(read), Some(feed), Some(used)))
}

/// Records become arguments (a `-b` chunk is one whole), where a NUL byte ends them (xargs'
/// packed records end with one): frun's own flags warn and cut, as xargs does; a GNU
/// Parallel-style line refuses the value (255), as SECURITY.md promises for its values.
fn nul_in_argument(cfg: &Config, sizing: Sizing) -> crate::input::scan::NulInArgument {
    use crate::input::scan::NulInArgument;
    let arguments = !cfg.stdin
        && cfg.argument_lists.is_none()
        && (cfg.delimiter != 0 || matches!(sizing, Sizing::Bytes(_)));
    use crate::plan::config::NulInValue;
    match (arguments, cfg.conduct.nul_in_value) {
        (false, _) => NulInArgument::Pass,
        (true, NulInValue::Refuse(status)) => NulInArgument::Refuse(status),
        (true, NulInValue::Cut) => NulInArgument::Warn,
        // Only a job line can put something else in the NUL's place.
        (true, NulInValue::Escape) if cfg.job.is_some() => NulInArgument::Escape,
        (true, NulInValue::Escape) => NulInArgument::Warn,
    }
}

/// What workers do the xargs way (nothing for other command lines).
/// `shell_words`: the words a job line puts before its line (`frun parallel -t` shows the line).
fn interaction(cfg: &Config, shell_words: usize) -> crate::run::Interaction {
    match &cfg.argument_lists {
        Some(x) => crate::run::Interaction {
            trace: x.trace,
            prompt: x.prompt,
            slot_var: x.slot_var.clone(),
            abort: true,
            trace_shell_line: None,
            cannot_run: None,
            trace_output: false,
        },
        None if cfg.trace || cfg.trace_output || cfg.prompt => crate::run::Interaction {
            trace: cfg.trace,
            prompt: cfg.prompt,
            trace_output: cfg.trace_output,
            trace_shell_line: Some(shell_words),
            slot_var: cfg.slot_var.clone(),
            ..crate::run::Interaction::default()
        },
        None => crate::run::Interaction {
            slot_var: cfg.slot_var.clone(),
            ..crate::run::Interaction::default()
        },
    }
}

/// The bytes of arguments and environment an `execve` takes: `getconf ARG_MAX` (a quarter of
/// the stack limit), but never more than Linux allows whatever the stack limit (three quarters
/// of its 8 MiB default stack, 6 MiB), so a large `ulimit -s` cannot make batches the kernel
/// refuses.
fn arg_max() -> u64 {
    const KERNEL_MAX: u64 = 6 << 20;
    nix::unistd::sysconf(nix::unistd::SysconfVar::ARG_MAX)
        .ok()
        .flatten()
        .filter(|&n| n > 0)
        .map_or(128 << 10, |n| n as u64)
        .min(KERNEL_MAX)
}

/// The records of each batch, when the plan decided them all ([`crate::input::scan::Settings::cuts`]).
type Cuts = Option<std::sync::Arc<[u64]>>;

/// The records the run reads at most, when the plan found where its input must end.
type InputEnd = Option<u64>;

/// `-X` / `-m`: the records each job takes, from the whole input (read into memory first
/// when it is a pipe) and the job's line. A record whose line alone is too long is refused
/// before anything runs; with [`Config::line_limit`] (GNU Parallel's way) the jobs before it
/// run, it is a job of its own whose line the worker refuses, and the input ends there.
fn fill(
    cfg: &Config,
    input: &mut Opened,
    workers: u64,
    chars: u64,
    cap: u64,
) -> Result<(Sizing, Cuts, InputEnd), RunError> {
    let bytes = read_whole(input)?;
    let Some(spec) = &cfg.job else {
        return Err(RunError::config(
            "batch",
            "lines filled by length need a job line",
        ));
    };
    let mut spec = spec.clone();
    if !input.header.is_empty() {
        spec.header = input.header.clone();
    }
    let line = crate::exec::command::job::JobLine::new(&spec, |_| false)
        .map_err(|m| RunError::config("command", m))?;
    let tag = match &cfg.tag {
        Some(t) => crate::exec::command::job::JobLine::tag_cost(&spec, t)
            .map_err(|m| RunError::config("tagstring", m))?,
        None => None,
    };
    // Lines are measured as job 1's is built: every record a job (see `total_jobs`).
    let records = memchr::memchr_iter(cfg.delimiter, &bytes).count() as u64
        + u64::from(bytes.last().is_some_and(|&b| b != cfg.delimiter));
    crate::exec::command::perl::set_totals(records, 0);
    let (cuts, end) = match fill::cuts(
        (&line, tag.as_ref()),
        &bytes,
        cfg.delimiter,
        chars,
        cap.max(1),
        workers,
    ) {
        Ok(cuts) => (cuts, None),
        Err(mut t) if cfg.line_limit.is_some() => {
            t.before.push(1);
            (t.before, Some(t.record + 1))
        }
        Err(t) => {
            return Err(RunError::config(
                "max-chars",
                format!(
                    "command line too long ({} >= {chars}) at record {}: nothing ran",
                    t.length, t.record
                ),
            ));
        }
    };
    let first = cuts.first().copied().unwrap_or(1);
    Ok((
        Sizing::Adaptive {
            init: first,
            max: first,
        },
        Some(cuts.into()),
        end,
    ))
}

/// Reads the whole input, leaving it to be read again from its start (a pipe's bytes are kept
/// in a memfd, which becomes the input).
fn read_whole(input: &mut Opened) -> Result<Vec<u8>, RunError> {
    use std::io::{Read, Seek, Write};
    let name = input.name.clone();
    let read_err = |e: std::io::Error| {
        RunError::unusable(
            Subject::Input(None),
            format!("cannot read {name}: {}", crate::sys::errors::os_message(&e)),
        )
    };
    let mut bytes = Vec::new();
    (&input.file).read_to_end(&mut bytes).map_err(read_err)?;
    if input.file.metadata().is_ok_and(|m| m.is_file()) {
        input.file.rewind().map_err(read_err)?;
    } else {
        // A pipe cannot be read again: the engine reads the copy.
        let fd =
            nix::sys::memfd::memfd_create(c"frun-input", nix::sys::memfd::MFdFlags::MFD_CLOEXEC)
                .map_err(|e| {
                    RunError::unusable(
                        Subject::System,
                        format!("cannot hold the input in memory: {e}"),
                    )
                })?;
        let mut copy = File::from(fd);
        copy.write_all(&bytes)
            .and_then(|()| copy.rewind())
            .map_err(read_err)?;
        input.file = copy;
    }
    Ok(bytes)
}

/// The batch sizes that depend on the input (`-X`/`-m`, `--pipepart --block -N`), else
/// `sizing` as it is; with the records each batch takes when the plan decided them all.
fn input_sizing(
    cfg: &Config,
    sizing: Sizing,
    input: &mut Opened,
    workers: u64,
) -> Result<(Sizing, Cuts, InputEnd), RunError> {
    match cfg.batch {
        BatchSpec::Fill { chars, records } => fill(cfg, input, workers, chars, records),
        BatchSpec::BlocksPerWorker(n) => Ok((blocks_per_worker(input, n, workers)?, None, None)),
        _ => Ok((sizing, None, None)),
    }
}

/// `--pipepart --block -N`: chunks of at least 1 + the input file's size over `per` chunks for
/// each of `workers` workers, each ending at the first record boundary past that.
fn blocks_per_worker(input: &Opened, per: u64, workers: u64) -> Result<Sizing, RunError> {
    let meta = input.file.metadata().ok().filter(|m| m.is_file());
    let Some(meta) = meta else {
        return Err(RunError::unusable(
            Subject::Input(None),
            format!(
                "{} is not a regular file: --pipepart reads a file in place",
                input.name
            ),
        ));
    };
    let chunks = per.saturating_mul(workers).max(1);
    Ok(Sizing::BlockPast(meta.len() / chunks + 1))
}

/// Leading words of the command line the joblog does not show: -U runs the command as
/// `bash -c SCRIPT frun N COMMAND…`, and the log shows COMMAND….
fn joblog_skip_words(cfg: &Config) -> usize {
    cfg.joblog_skip_words + if cfg.unsafe_words { 5 } else { 0 }
}

/// Opens `--joblog` (not with `-N`: nothing runs, so nothing is logged, as GNU Parallel does).
fn open_joblog(
    cfg: &Config,
    input: &File,
) -> Result<Option<crate::output::joblog::Joblog>, RunError> {
    use std::os::unix::fs::MetadataExt;
    let Some(path) = cfg.joblog.as_deref().filter(|_| !cfg.dry_run) else {
        return Ok(None);
    };
    let input_id = input
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| (m.dev(), m.ino()));
    let opened = if cfg.job_resume.is_some() || cfg.joblog_append {
        crate::output::joblog::Joblog::append(path, input_id, !cfg.joblog_append)
    } else {
        crate::output::joblog::Joblog::open(path, input_id)
    };
    opened
        .map(Some)
        .map_err(|m| RunError::unusable(Subject::Joblog(path.to_path_buf()), m))
}

/// How every worker runs a batch.
fn work(
    cfg: &Config,
    template: ArgvTemplate,
    literal: usize,
    sizing: Sizing,
    extra: WorkExtra,
) -> Result<Work, RunError> {
    let shell_words = template.job_shell_words();
    Ok(Work {
        backend: match (
            cfg.dry_run && cfg.job.as_ref().is_none_or(|j| j.literal),
            cfg.stdin,
        ) {
            (true, _) => Backend::DryRun {
                split_from: cfg.unsafe_words.then_some(literal),
                quote: cfg.dry_run_quotes,
            },
            (false, true) => Backend::Stdin,
            (false, false) => Backend::Argv,
        },
        template,
        records_on_stdin: cfg.stdin,
        retry: retry_policy(cfg)?,
        halt: cfg.halt,
        halt_names_jobs: cfg.conduct.statuses != crate::run::Statuses::Summarised,
        // A batch of the size asked for (`-l N`) is the unit, as in forkrun: a record that
        // keeps failing takes its batch down. Where frun chose the size, it splits.
        // A batch whose stderr is grouped with its stdout is one job: it never splits.
        splittable: matches!(sizing, Sizing::Adaptive { init, max } if init != max)
            && cfg.conduct.retries_unasked
            && !cfg.conduct.stderr_grouped,
        job_timeout: cfg.job_timeout,
        delay: cfg.delay,
        memfree: match cfg.memfree {
            Some(bytes) => Some((
                bytes,
                crate::sys::memory::MemorySource::open(
                    cfg.meminfo
                        .as_deref()
                        .unwrap_or(std::path::Path::new(crate::sys::memory::MEMINFO)),
                )
                .map_err(|e| RunError::config("--memfree", e))?,
            )),
            None => None,
        },
        jobs_file: cfg
            .jobs_file
            .as_ref()
            .map(|f| (f.path.clone(), f.cpus, f.now)),
        termseq: cfg.termseq.clone(),
        line_limit: cfg.line_limit.filter(|_| cfg.job.is_some()),
        joblog_skip_words: joblog_skip_words(cfg) + shell_words,
        joblog_raw_first: cfg.joblog_skip_words + shell_words > 0,
        interaction: crate::run::Interaction {
            cannot_run: extra.cannot_run,
            ..interaction(cfg, shell_words)
        },
        job_files: None,
        results_table: None,
        skip_jobs: Vec::new(),
        skip_saved: false,
        drop_blank: cfg.stdin && cfg.drop_blank_lines,
        strip_separators: cfg
            .record_bounds
            .clone()
            .filter(|_| cfg.stdin && cfg.strip_separators),
        tag: extra.tag,
        colour: cfg.colour,
        retries_from: extra.retries_from,
        stdin_header: Vec::new(),
        templates: Vec::new(),
        templates_cleanup: cfg.templates_cleanup,
        line_buffer: cfg.line_buffer || cfg.latest_line,
        stderr_grouped: cfg.conduct.stderr_grouped
            && cfg.order != crate::output::emit::OrderMode::Unbuffered
            && !(cfg.line_buffer || cfg.latest_line),
        stderr_relayed: cfg.conduct.stderr_grouped
            && cfg.order != crate::output::emit::OrderMode::Unbuffered
            && cfg.line_buffer
            && !cfg.latest_line,
        line_room: if cfg.line_buffer || cfg.latest_line {
            crate::output::linebuf::room_of(cfg.meminfo.as_deref())
                .map_err(|e| RunError::config("--line-buffer", e))?
        } else {
            0
        },
        latest_line: cfg.latest_line,
        output_files_in: cfg.output_files_in.clone(),
        output_files_compress: cfg
            .results_compress
            .clone()
            .filter(|_| cfg.output_files_in.is_some()),
        plugin: extra.plugin,
        round_robin: cfg.round_robin && cfg.stdin,
    })
}

/// The hard maximum batch of a bash function, in records.
const SHELL_MAX_RECORDS: u64 = 65_536;

/// Batch sizes from `-l`, `-L`, `-b`, `--block`.
fn sizing(cfg: &Config) -> Result<Sizing, RunError> {
    // Without ARG_MAX in the way, stdin mode grows batches further (bytes bound them too).
    let hard_max = if cfg.stdin || cfg.plugin.is_some() {
        HARD_MAX_STDIN_RECORDS
    } else if cfg.shell_command {
        // A bash function's batch costs no exec: past this size, larger batches only balance
        // worse at the end of the input.
        SHELL_MAX_RECORDS
    } else {
        HARD_MAX_RECORDS
    };
    Ok(match cfg.batch {
        BatchSpec::Bytes(n) => {
            if !cfg.stdin && n > MAX_ARG_STRLEN - 1 {
                return Err(RunError::config(
                    "batch",
                    format!(
                        "-b {n} with +s passes each chunk as one argument: at most {} bytes",
                        MAX_ARG_STRLEN - 1
                    ),
                ));
            }
            Sizing::Bytes(n)
        }
        BatchSpec::Block(n) => Sizing::Block(n),
        BatchSpec::BlockLines { bytes, lines } => Sizing::BlockLines { size: bytes, lines },
        BatchSpec::Groups {
            bytes,
            per_job,
            key,
        } => Sizing::Groups {
            size: bytes,
            per_chunk: per_job,
            key,
        },
        BatchSpec::BlockPast(n) => Sizing::BlockPast(n),
        // Settled once the input file's size is known (`blocks_per_worker`).
        BatchSpec::BlocksPerWorker(_) => Sizing::Block(1),
        BatchSpec::Exact(n) if cfg.record_bounds.is_some() => Sizing::BoundedRecords(n),
        BatchSpec::Exact(n) => Sizing::Exact(n),
        // Settled once the input is read (`fill`).
        BatchSpec::Fill { .. } => Sizing::Adaptive { init: 1, max: 1 },
        BatchSpec::Lines(r) => {
            let (init, max) = resolve_range(r, 1, hard_max, hard_max, "--lines")?;
            Sizing::Adaptive { init, max }
        }
    })
}

/// The input, opened, and a sweep's column names.
struct Opened {
    file: File,
    name: String,
    children_keep_stdin: bool,
    header: Vec<Vec<u8>>,
    /// How many records the input holds, when known before reading it (a sweep's tuples).
    records: Option<u64>,
}

/// Opens the input: a descriptor of its own for stdin (close-on-exec), or the `-a` file.
fn open_input(cfg: &Config) -> Result<Opened, RunError> {
    let (file, children_keep_stdin) = match &cfg.input {
        InputSpec::Stdin => {
            let stdin = std::io::stdin();
            let dup = std::os::fd::AsFd::as_fd(&stdin)
                .try_clone_to_owned()
                .map_err(|_| {
                    RunError::unusable(Subject::Input(None), "cannot read standard input")
                })?;
            (File::from(dup), false)
        }
        InputSpec::File(p) => match File::open(p) {
            Ok(f) => (f, cfg.conduct.children_read_stdin),
            Err(e) => {
                return Err(RunError::unusable(
                    Subject::Input(Some(p.clone())),
                    format!(
                        "cannot open {}: {}",
                        p.display(),
                        crate::sys::errors::os_message(&e)
                    ),
                ));
            }
        },
        InputSpec::Sweep(s) => {
            let colsep = match cfg.job.as_ref().map(|j| &j.columns) {
                Some(crate::exec::command::job::Columns::SplitTuple(re)) => Some(re.as_str()),
                _ => None,
            };
            let escape_nul = cfg.conduct.escapes_nul();
            let (f, header, tuples) = sweep::materialize(s, s.delimiter, colsep, escape_nul)
                .map_err(|m| RunError::unusable(Subject::Input(None), m))?;
            let reads_stdin = s.sources.iter().any(
                |s| matches!(&s.values, config::SourceValues::File(p) if p.as_os_str() == "-"),
            );
            return Ok(Opened {
                file: f,
                name: "the input sources".to_string(),
                // GNU Parallel's jobs never read its standard input.
                children_keep_stdin: !reads_stdin && cfg.conduct.children_read_stdin,
                header,
                records: Some(tuples),
            });
        }
    };
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(unusable_input(cfg, "the input is a directory"));
    }
    Ok(Opened {
        file,
        name: match &cfg.input {
            InputSpec::Stdin => "standard input".to_string(),
            InputSpec::File(p) => p.display().to_string(),
            InputSpec::Sweep(_) => unreachable!("returned above"),
        },
        children_keep_stdin,
        header: Vec::new(),
        records: None,
    })
}

/// This task's share of the input (`--shard`, or Slurm's task), checked against what a task
/// of a split run cannot do; and `--results`' own conflicts.
fn shard(cfg: &Config, input: &File) -> Result<Option<Shard>, RunError> {
    let shard = match cfg.shard {
        ShardSpec::Given(s) => Some(s),
        ShardSpec::None => None,
        ShardSpec::Auto => Shard::from_slurm(|k| std::env::var(k).ok())
            .map_err(|m| RunError::unusable(Subject::Environment("SLURM_PROCID"), m))?,
    };
    if let Some(s) = shard.filter(|s| s.count > 1) {
        if cfg.limit.is_some() {
            return Err(RunError::config(
                "limit",
                "-n counts the records of the whole input, which no task sees alone; it \
                 cannot be combined with --shard (--shard none: every task does all of its \
                 input)",
            ));
        }
        use std::os::unix::fs::FileTypeExt;
        if matches!(cfg.input, InputSpec::Stdin)
            && input
                .metadata()
                .is_ok_and(|m| m.file_type().is_char_device())
        {
            return Err(RunError::unusable(
                Subject::Input(None),
                format!(
                    "task {}/{} gets no input: its stdin is /dev/null or a terminal; give every \
                 task the whole input: -a FILE on shared storage, < FILE, or srun \
                 --input=all",
                    s.index, s.count
                ),
            ));
        }
    }
    Ok(shard)
}

/// The resolved command: its argv template and the argument space a batch may fill.
struct Command {
    template: ArgvTemplate,
    arg_space: ArgSpace,
    /// How many leading words stay literal with `-U`.
    literal: usize,
    extra: WorkExtra,
}

/// What the command's resolution tells the workers besides the argv template.
struct WorkExtra {
    /// `--tag` / `--tagstring`, compiled (with the header's column names).
    tag: Option<crate::exec::command::job::JobLine>,
    /// `--retries STR`, compiled as the tag is.
    retries_from: Option<crate::exec::command::job::JobLine>,
    /// `frun xargs`: the command was not found, which is only an error once a command would
    /// run (GNU xargs looks for it then: `-r` on empty input runs nothing and succeeds).
    cannot_run: Option<crate::exec::resolve::ResolveError>,
    /// `-C SO:FN`: what the plugin hosts are started with.
    plugin: Option<crate::exec::plugin::PluginWork>,
}

/// A GNU Parallel-style line: exec'd directly when it has no shell syntax and its program is
/// found, else through the shell.
fn job_command(
    cfg: &Config,
    spec: &crate::exec::command::job::JobSpec,
    header: &[Vec<u8>],
    path_env: Option<&std::ffi::OsStr>,
    env_bytes: u64,
) -> Result<Command, RunError> {
    use std::os::unix::ffi::OsStrExt;
    let mut spec = spec.clone();
    if !header.is_empty() {
        spec.header = header.to_vec();
    }
    // A bash function exported under the command's name is what the shell would run.
    let exported = |w: &[u8]| {
        let mut name = b"BASH_FUNC_".to_vec();
        name.extend_from_slice(w);
        name.extend_from_slice(b"%%");
        std::env::var_os(std::ffi::OsStr::from_bytes(&name)).is_some()
    };
    let found = |w: &[u8]| {
        (!exported(w))
            .then(|| resolve(std::ffi::OsStr::from_bytes(w), path_env).ok())
            .flatten()
    };
    // A bash function (the bash front end) runs in the worker shells, found or not; in a worker
    // shell a GNU Parallel-style line is always `eval`ed, so the user's functions work
    // anywhere in it. frun's own words (-i, sweeps) are exec'd directly, or reported missing.
    let in_worker = cfg.shell_command && !cfg.dry_run;
    let mut line =
        crate::exec::command::job::JobLine::new(&spec, |w| !in_worker && found(w).is_some())
            .map_err(|m| RunError::config("command", m))?;
    if let Some(code) = cfg.shell_prologue.as_ref().filter(|_| !spec.literal) {
        line = line.with_prologue(code, spec.shell.as_os_str().as_bytes());
    }
    if cfg.conduct.escapes_nul() {
        line = line.escaping_nul();
    }
    if in_worker {
        line = line.eval_in_worker();
    } else if cfg.dry_run && !spec.literal {
        line = line.printing(cfg.dry_run_quotes);
    } else if !spec.literal
        && (cfg.trace
            || cfg.trace_output
            || cfg.joblog.is_some()
            || cfg.results_table.is_some()
            || cfg.halt.is_some())
    {
        // Where a job's line is shown (-v, -t, the joblog, a halting job's message), it shows
        // as written, blanks and all, as GNU Parallel's lines do.
        line = line.showing();
    }
    let p = |w: &[u8]| PathBuf::from(std::ffi::OsStr::from_bytes(w));
    let path = match (line.shell(), line.program()) {
        (None, Some(w)) if in_worker || cfg.dry_run => p(w),
        (None, Some(w)) => {
            resolve(std::ffi::OsStr::from_bytes(w), path_env).map_err(RunError::Command)?
        }
        (Some(_), _) if in_worker => PathBuf::from("eval"),
        (Some(sh), _) => {
            resolve(std::ffi::OsStr::from_bytes(sh), path_env).map_err(RunError::Command)?
        }
        (None, None) => resolve(spec.shell.as_os_str(), path_env).map_err(RunError::Command)?,
    };
    let template = ArgvTemplate::for_job(&path, line, cfg.delimiter);
    let arg_max = arg_max();
    let mut arg_space = template.arg_space(arg_max, env_bytes);
    // Each job's line is measured instead (it is shorter than an argument can be).
    if cfg.line_limit.is_some() {
        arg_space.max_record_len = u64::MAX;
    }
    Ok(Command {
        template,
        arg_space,
        literal: 0,
        extra: WorkExtra {
            tag: tag_line(cfg, header)?,
            retries_from: line_like_tag(cfg.retries_from.as_ref(), cfg, header)?,
            cannot_run: None,
            plugin: None,
        },
    })
}

/// Resolves the command (once, so "not found" is said once) and sizes the argument space.
fn command(cfg: &Config, header: &[Vec<u8>], env_bytes: u64) -> Result<Command, RunError> {
    let dry_run = cfg.dry_run;
    let path_env = std::env::var_os("PATH");
    if let Some(spec) = &cfg.plugin {
        return plugin::command(cfg, spec, header);
    }
    if let Some(spec) = &cfg.job {
        return job_command(cfg, spec, header, path_env.as_deref(), env_bytes);
    }
    let in_shell = cfg.shell_command && !dry_run;
    // With -U, the words from the first one holding {} (-i), else the records, are split (in
    // a worker shell the bash front end does it).
    let literal = cfg.literal_words();
    let mut cannot_run = None;
    let (path, words): (PathBuf, Vec<OsString>) = if dry_run || in_shell {
        (PathBuf::from(&cfg.command[0]), cfg.command.clone())
    } else {
        let path = match resolve(&cfg.command[0], path_env.as_deref()) {
            Ok(p) => p,
            // xargs looks for its command only when it is about to run it.
            Err(e) if cfg.argument_lists.is_some() => {
                cannot_run = Some(e);
                PathBuf::from(&cfg.command[0])
            }
            Err(e) => return Err(RunError::Command(e)),
        };
        if cfg.unsafe_words {
            let bash = resolve("bash".as_ref(), path_env.as_deref()).map_err(RunError::Command)?;
            let mut words: Vec<OsString> = vec![
                "bash".into(),
                "-c".into(),
                UNSAFE_SCRIPT.into(),
                "frun".into(),
                literal.to_string().into(),
                path.clone().into_os_string(),
            ];
            words.extend(cfg.command[1..].iter().cloned());
            (bash, words)
        } else {
            (path, cfg.command.clone())
        }
    };
    let mut template = match &cfg.argument_lists {
        Some(x) => ArgvTemplate::packed(&path, &words, x.replace.as_deref()),
        None => ArgvTemplate::new(&path, &words, cfg.insert, cfg.insert_id, cfg.delimiter),
    };
    if matches!(cfg.batch, BatchSpec::Bytes(_)) && !cfg.stdin {
        template = template.whole_batch();
    }
    let arg_max = arg_max();
    let space = template.arg_space(arg_max, env_bytes);
    if !in_shell && space.budget < space.per_record + space.per_byte {
        return Err(RunError::config(
            "command",
            "the command and environment leave no room for arguments (ARG_MAX)",
        ));
    }
    // In stdin mode the same budget bounds a batch's bytes instead of its arguments; a shell
    // function's arguments never pass through exec, so ARG_MAX does not apply to them either
    // (a record of any length is one argument).
    let arg_space = if cfg.stdin || in_shell {
        ArgSpace {
            per_byte: 1,
            per_record: 1,
            budget: HARD_MAX_STDIN_BYTES,
            max_record_len: u64::MAX,
        }
    } else {
        space
    };
    Ok(Command {
        template,
        arg_space,
        literal,
        extra: WorkExtra {
            tag: tag_line(cfg, header)?,
            retries_from: line_like_tag(cfg.retries_from.as_ref(), cfg, header)?,
            cannot_run,
            plugin: None,
        },
    })
}

/// `--tag` / `--tagstring`: read the job's values the way its line does, `{name}` included.
fn tag_line(
    cfg: &Config,
    header: &[Vec<u8>],
) -> Result<Option<crate::exec::command::job::JobLine>, RunError> {
    line_like_tag(cfg.tag.as_ref(), cfg, header)
}

/// A text filled in with each job's values as the tag is (`--tag`, `--retries STR`).
fn line_like_tag(
    spec: Option<&crate::exec::command::job::JobSpec>,
    cfg: &Config,
    header: &[Vec<u8>],
) -> Result<Option<crate::exec::command::job::JobLine>, RunError> {
    let Some(spec) = spec else {
        return Ok(None);
    };
    let mut spec = spec.clone();
    if !header.is_empty() {
        spec.header = header.to_vec();
    }
    let line = crate::exec::command::job::JobLine::tag_text(&spec)
        .map_err(|m| RunError::config("tag", m))?;
    Ok(Some(if cfg.conduct.escapes_nul() {
        line.escaping_nul()
    } else {
        line
    }))
}

/// The journal this run keeps (and the one it resumes), or this task's results files.
fn checkpoint(
    cfg: &Config,
    shard: Option<Shard>,
    split: Option<Shard>,
    shard_map: Option<ShardMap>,
    book: Option<&std::sync::Arc<crate::input::shard::claims::Book>>,
    input: &File,
) -> Result<(Prepared, Option<Destination>), RunError> {
    if let Some(dir) = &cfg.results {
        use crate::output::results::TaskOf;
        let of = match book {
            Some(b) => TaskOf::Claims(b),
            None => TaskOf::Fixed(shard.unwrap_or(Shard { index: 0, count: 1 })),
        };
        let chunk = match book {
            Some(b) => b.map().chunk,
            None => shard_map.map_or(0, |m| m.chunk),
        };
        let files = crate::output::results::prepare(
            dir,
            of,
            chunk,
            &run_identity(cfg),
            &shown_command(cfg),
            cfg.order,
        )
        .map_err(|m| RunError::unusable(Subject::Results(dir.clone()), m))?;
        if let Some(cp) = &files.resume {
            say!(
                "{}: continuing the run in {} ({} done before)",
                files.dest.task,
                dir.display(),
                crate::sys::errors::count(cp.batches, "batch", "batches")
            );
        }
        let prepared = Prepared {
            journal: Some(files.journal),
            resume: files.resume,
            stdout_base: 0,
            restore: None,
            missing: None,
        };
        return Ok((prepared, Some(files.dest)));
    }
    // xargs and GNU Parallel leave no files behind: a personality keeps a checkpoint only
    // when asked (--checkpoint-file, --resume).
    let unasked = cfg.conduct.checkpoint_unasked && !cfg.no_default_journal;
    if cfg.dry_run || (!unasked && cfg.checkpoint_file.is_none() && cfg.resume.is_none()) {
        let none = Prepared {
            journal: None,
            resume: None,
            stdout_base: 0,
            restore: None,
            missing: None,
        };
        return Ok((none, None));
    }
    // Tasks sharing a directory keep a checkpoint each.
    let default_path = match split {
        Some(s) => PathBuf::from(format!("{}.{}", crate::journal::DEFAULT_PATH, s.name())),
        None => PathBuf::from(crate::journal::DEFAULT_PATH),
    };
    if let Some(p) = cfg.resume.as_deref() {
        if std::fs::symlink_metadata(p).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
            return Err(RunError::Missing {
                path: p.to_path_buf(),
                message: format!("--resume: resume file {} not found", p.display()),
            });
        }
    }
    let mut prepared = crate::journal::prepare(
        &run_identity(cfg),
        &shown_command(cfg),
        cfg.checkpoint_file.as_deref(),
        cfg.resume.as_deref(),
        &default_path,
        input,
    )
    .map_err(|m| {
        let path = cfg.resume.clone().or_else(|| cfg.checkpoint_file.clone());
        RunError::unusable(Subject::Checkpoint(path), m)
    })?;
    if cfg.output_to_caller {
        prepared.restore = prepared.restore.map(crate::journal::Restore::to_caller);
    }
    Ok((prepared, None))
}
