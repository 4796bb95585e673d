//! The run plan: everything derived from a [`Config`] once, before any work — worker counts,
//! batch sizing, the resolved command and its argument-space budget, the input file.
//!
//! Errors here are the user's (exit 2) or a missing command (126/127). Nothing is spawned and no
//! thread is started.

pub mod config;

use std::ffi::OsString;
use std::fs::File;
use std::path::PathBuf;
use std::time::Duration;

use crate::batch::ArgSpace;
use crate::exec::argv::{ArgvTemplate, MAX_ARG_STRLEN};
use crate::exec::resolve::{ResolveError, resolve};
use crate::exec::spawn::environment_bytes;
use crate::journal::{Checkpoint, Journal};
use crate::ledger::Halt;
use crate::ledger::RetryPolicy;
use crate::numa::Layout;
use crate::output::OrderMode;
use crate::scan::{HARD_MAX_RECORDS, HARD_MAX_STDIN_BYTES, HARD_MAX_STDIN_RECORDS, Sizing};
use crate::shard::{Shard, ShardMap};
use config::{BatchSpec, Bound, Config, InputSpec, Range, ShardSpec};

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
    },
}

/// The resolved run.
pub struct Plan {
    pub workers_init: usize,
    /// NUMA placement: nodes, their workers and CPUs, and the chunk-to-node map.
    pub layout: std::sync::Arc<Layout>,
    pub workers_max: usize,
    pub sizing: Sizing,
    pub order: OrderMode,
    pub limit: Option<u64>,
    pub timeout: Option<Duration>,
    pub delimiter: u8,
    pub input: File,
    /// The input as messages name it: its path, or "standard input".
    pub input_name: String,
    /// Children keep frun's stdin (input came from `-a FILE`); otherwise they get /dev/null.
    pub children_keep_stdin: bool,
    pub backend: Backend,
    /// Batches go to stdin, not into arguments (also for `--dry-run`).
    pub records_on_stdin: bool,
    pub template: ArgvTemplate,
    /// The argument budget, when records become arguments.
    pub arg_space: Option<ArgSpace>,
    pub stats: bool,
    /// The scanner must count records. Only stdin mode with default sizing, no `--limit` and no
    /// `--stats` can do without: batches are then cut by bytes and never read through.
    pub count_records: bool,
    pub usable_cpus: usize,
    pub retry: RetryPolicy,
    pub halt: Option<Halt>,
    /// USR1, USR2, XCPU and XFSZ stop the run too (`FRUN_PREEMPT`).
    pub preempt: bool,
    /// The checkpoint journal this run keeps.
    pub journal: Option<std::sync::Arc<Journal>>,
    /// Why there is no journal, when there could have been one.
    pub journal_missing: Option<String>,
    /// The checkpoint being resumed (`--resume`).
    pub resume: Option<Checkpoint>,
    /// Stdout's byte count when this run's output starts.
    pub stdout_base: u64,
    /// What resuming does to stdout once the input is checked.
    pub restore: Option<crate::journal::Restore>,
    /// This task's share of the input, when the run is split over several tasks.
    pub shard: Option<ShardMap>,
    /// `--results`: this task's output file, instead of stdout.
    pub results: Option<crate::results::Destination>,
}

/// Why a plan could not be made.
pub enum PlanError {
    /// A usage error (exit 2).
    Usage(String),
    /// The command cannot be run (126/127).
    Command(ResolveError),
}

fn resolve_range(
    r: Range,
    default_init: u64,
    default_max: u64,
    hard_max: u64,
    what: &str,
) -> Result<(u64, u64), PlanError> {
    let pick = |b: Bound, default: u64| match b {
        Bound::Default => default,
        Bound::HardMax => hard_max,
        Bound::Value(v) => v,
    };
    let init = pick(r.init, default_init);
    let max = pick(r.max, default_max).max(if r.max == Bound::Default { init } else { 0 });
    if init > max {
        return Err(PlanError::Usage(format!(
            "{what}: the initial value {init} is larger than the maximum {max}"
        )));
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
        crate::exec::argv::shell_quote(w.as_bytes(), &mut out);
    }
    // One line, whatever the words hold.
    String::from_utf8_lossy(&out).replace('\n', "\\n")
}

/// `FRUN_RETRY_LIMIT` (or `FORKRUN_RETRY_LIMIT`): retries per batch; None = forever.
fn retry_limit() -> Result<Option<u64>, PlanError> {
    for name in ["FRUN_RETRY_LIMIT", "FORKRUN_RETRY_LIMIT"] {
        let Some(v) = std::env::var_os(name) else {
            continue;
        };
        let text = v.to_string_lossy();
        return match text.trim().parse::<i64>() {
            Ok(n) if n < 0 => Ok(None),
            Ok(n) => Ok(Some(n as u64)),
            Err(_) => Err(PlanError::Usage(format!(
                "{name}='{text}' is not a whole number (retries per batch; negative = forever)"
            ))),
        };
    }
    Ok(Some(3))
}

/// `FRUN_PREEMPT` (or `FORKRUN_PREEMPT_MODE`): auto (on under Slurm), 1/true/on, 0/false/off.
pub fn preempt() -> Result<bool, PlanError> {
    for name in ["FRUN_PREEMPT", "FORKRUN_PREEMPT_MODE"] {
        let Some(v) = std::env::var_os(name) else {
            continue;
        };
        let text = v.to_string_lossy().trim().to_ascii_lowercase();
        return match text.as_str() {
            "" | "auto" => Ok(std::env::var_os("SLURM_JOB_ID").is_some()),
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err(PlanError::Usage(format!(
                "{name}='{text}' is not auto, 1, 0, true or false"
            ))),
        };
    }
    Ok(std::env::var_os("SLURM_JOB_ID").is_some())
}

/// The script that word-splits and glob-expands everything after the literal words (`-U`):
/// `$1` is how many leading words stay literal.
const UNSAFE_SCRIPT: &str = r#"n=$1; shift; exec "${@:1:n}" ${@:n+1}"#;

impl Plan {
    pub fn new(cfg: &Config) -> Result<Plan, PlanError> {
        let cpus = crate::sys::usable_cpus();
        let (wi, wm) = resolve_range(cfg.workers, 1, cpus as u64, cpus as u64, "--workers")?;
        let chunked = matches!(cfg.batch, BatchSpec::Bytes(_) | BatchSpec::Block(_));
        if chunked && cfg.limit.is_some() {
            return Err(PlanError::Usage(
                "-n counts records; it cannot be combined with -b or --block".into(),
            ));
        }
        if cfg.stdin && cfg.insert {
            return Err(PlanError::Usage(
                "-i puts records into arguments; it cannot be combined with -s, -b or --block"
                    .into(),
            ));
        }
        // Without ARG_MAX in the way, stdin mode grows batches further (bytes bound them too).
        let hard_max = if cfg.stdin {
            HARD_MAX_STDIN_RECORDS
        } else {
            HARD_MAX_RECORDS
        };
        let sizing = match cfg.batch {
            BatchSpec::Bytes(n) => {
                if !cfg.stdin && n > MAX_ARG_STRLEN - 1 {
                    return Err(PlanError::Usage(format!(
                        "-b {n} with +s passes each chunk as one argument: at most {} bytes",
                        MAX_ARG_STRLEN - 1
                    )));
                }
                Sizing::Bytes(n)
            }
            BatchSpec::Block(n) => Sizing::Block(n),
            BatchSpec::Exact(n) => Sizing::Exact(n),
            BatchSpec::Lines(r) => {
                let (init, max) = resolve_range(r, 1, hard_max, hard_max, "--lines")?;
                Sizing::Adaptive { init, max }
            }
        };
        let (input, children_keep_stdin) = match &cfg.input {
            InputSpec::Stdin => {
                // SAFETY: dup of fd 0 gives a descriptor we own; failure is checked.
                let dup = unsafe { libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3) };
                if dup < 0 {
                    return Err(PlanError::Usage("cannot read standard input".into()));
                }
                // SAFETY: dup is a fresh descriptor owned by nobody else.
                (
                    unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(dup) },
                    false,
                )
            }
            InputSpec::File(p) => match File::open(p) {
                Ok(f) => (f, true),
                Err(e) => {
                    return Err(PlanError::Usage(format!(
                        "cannot open {}: {}",
                        p.display(),
                        crate::errors::os_message(&e)
                    )));
                }
            },
        };
        if input.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(PlanError::Usage("the input is a directory".into()));
        }
        let input_size = input
            .metadata()
            .ok()
            .filter(|m| m.is_file() && m.len() > 0)
            .map(|m| m.len());
        // A file of known size has at most one record per byte: more workers would never get
        // work (each is a thread, its stack and its descriptors).
        let wm = input_size.map_or(wm, |n| wm.min(n.max(1)));
        let wi = wi.min(wm);
        let layout = Layout::plan(&cfg.nodes, wm as usize, input_size).map_err(PlanError::Usage)?;
        let shard = match cfg.shard {
            ShardSpec::Given(s) => Some(s),
            ShardSpec::None => None,
            ShardSpec::Auto => {
                Shard::from_slurm(|k| std::env::var(k).ok()).map_err(PlanError::Usage)?
            }
        };
        let split = shard.filter(|s| s.count > 1);
        if let Some(s) = split {
            if cfg.limit.is_some() {
                return Err(PlanError::Usage(
                    "-n counts the records of the whole input, which no task sees alone; it \
                     cannot be combined with --shard (--shard none: every task does all of its \
                     input)"
                        .into(),
                ));
            }
            use std::os::unix::fs::FileTypeExt;
            if matches!(cfg.input, InputSpec::Stdin)
                && input
                    .metadata()
                    .is_ok_and(|m| m.file_type().is_char_device())
            {
                return Err(PlanError::Usage(format!(
                    "task {}/{} gets no input: its stdin is /dev/null or a terminal; give every \
                     task the whole input: -a FILE on shared storage, < FILE, or srun \
                     --input=all",
                    s.index, s.count
                )));
            }
        }
        // -b cuts records anyway: its chunks are raw bytes, like its batches.
        if split.is_some() {
            // The commands of a task are not tasks themselves: a frun they run (seeing the same
            // Slurm variables) must do all of its own input.
            // SAFETY: no other thread exists yet (the engine starts them after the plan; the
            // bash front end makes the plan in its forked, single-threaded engine process), so
            // nothing reads the environment while it changes.
            unsafe { std::env::set_var("FRUN_SHARD", "none") };
        }
        let shard_map = split.map(|s| {
            let m = ShardMap::new(s, input_size);
            if matches!(cfg.batch, BatchSpec::Bytes(_)) {
                m.raw()
            } else {
                m
            }
        });
        if cfg.results.is_some() {
            let clash = if cfg.order == OrderMode::Unbuffered {
                Some("-u (its output is not recorded)")
            } else if cfg.dry_run {
                Some("-N")
            } else if cfg.resume.is_some() || cfg.checkpoint_file.is_some() {
                Some("--resume or --checkpoint-file (the journals are kept in DIR)")
            } else {
                None
            };
            if let Some(c) = clash {
                return Err(PlanError::Usage(format!(
                    "--results cannot be combined with {c}"
                )));
            }
        }

        let dry_run = cfg.dry_run;
        let path_env = std::env::var_os("PATH");
        let in_shell = cfg.shell_command && !dry_run;
        if in_shell && cfg.unsafe_words {
            return Err(PlanError::Usage(
                "-U word-splits records for an external command; a bash function can split \
                 \"$@\" itself"
                    .into(),
            ));
        }
        // With -U, the words from the first one holding {} (-i), else the records, are split.
        let literal = if cfg.insert {
            1 + cfg.command[1..]
                .iter()
                .take_while(|w| !w.as_encoded_bytes().windows(2).any(|p| p == b"{}"))
                .count()
        } else {
            cfg.command.len()
        };
        let (path, words): (PathBuf, Vec<OsString>) = if dry_run || in_shell {
            (PathBuf::from(&cfg.command[0]), cfg.command.clone())
        } else {
            let path = resolve(&cfg.command[0], path_env.as_deref()).map_err(PlanError::Command)?;
            if cfg.unsafe_words {
                let bash =
                    resolve("bash".as_ref(), path_env.as_deref()).map_err(PlanError::Command)?;
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
        let mut template =
            ArgvTemplate::new(&path, &words, cfg.insert, cfg.insert_id, cfg.delimiter);
        if matches!(cfg.batch, BatchSpec::Bytes(_)) && !cfg.stdin {
            template = template.whole_batch();
        }
        // SAFETY: sysconf has no memory effects.
        let arg_max = unsafe { libc::sysconf(libc::_SC_ARG_MAX) };
        let arg_max = if arg_max > 0 {
            arg_max as u64
        } else {
            128 << 10
        };
        let space = template.arg_space(arg_max, environment_bytes());
        if !in_shell && space.budget < space.per_record + space.per_byte {
            return Err(PlanError::Usage(
                "the command and environment leave no room for arguments (ARG_MAX)".into(),
            ));
        }
        // In stdin mode the same budget bounds a batch's bytes instead of its arguments; a
        // shell function's arguments never pass through exec, so ARG_MAX does not apply to them
        // either (a record of any length is one argument).
        let arg_space = Some(if cfg.stdin || in_shell {
            ArgSpace {
                per_byte: 1,
                per_record: 1,
                budget: HARD_MAX_STDIN_BYTES,
                max_record_len: u64::MAX,
            }
        } else {
            space
        });
        // Last, once everything else is known to be valid: the journal is a file frun creates.
        let mut results = None;
        let checkpoint = if let Some(dir) = &cfg.results {
            let files = crate::results::prepare(
                dir,
                shard.unwrap_or(Shard { index: 0, count: 1 }),
                shard_map.map_or(0, |m| m.chunk),
                &run_identity(cfg),
                &shown_command(cfg),
                cfg.order,
            )
            .map_err(PlanError::Usage)?;
            if let Some(cp) = &files.resume {
                eprintln!(
                    "frun: {}: continuing the run in {} ({} done before)",
                    files.dest.task,
                    dir.display(),
                    crate::errors::count(cp.batches, "batch", "batches")
                );
            }
            results = Some(files.dest);
            crate::journal::Prepared {
                journal: Some(files.journal),
                resume: files.resume,
                stdout_base: 0,
                restore: None,
                missing: None,
            }
        } else if dry_run {
            crate::journal::Prepared {
                journal: None,
                resume: None,
                stdout_base: 0,
                restore: None,
                missing: None,
            }
        } else {
            crate::journal::prepare(
                &run_identity(cfg),
                &shown_command(cfg),
                cfg.checkpoint_file.as_deref(),
                cfg.resume.as_deref(),
                // Tasks sharing a directory keep a checkpoint each.
                &match split {
                    Some(s) => {
                        PathBuf::from(format!("{}.{}", crate::journal::DEFAULT_PATH, s.name()))
                    }
                    None => PathBuf::from(crate::journal::DEFAULT_PATH),
                },
                &input,
            )
            .map_err(PlanError::Usage)?
        };
        // {ID} never repeats across the tasks of a run, nor across runs on one results directory.
        let task = shard.map_or_else(|| "0-of-1".to_string(), |s| s.name());
        if let Some(r) = &results {
            template = template.with_id_prefix(format!("{task}.{}.", r.run));
        } else if split.is_some() {
            template = template.with_id_prefix(format!("{task}."));
        }
        Ok(Plan {
            workers_init: if layout.is_single() {
                wi as usize
            } else {
                layout.first_workers(wi as usize)
            },
            layout: std::sync::Arc::new(layout),
            workers_max: wm as usize,
            sizing,
            order: cfg.order,
            limit: cfg.limit,
            timeout: cfg.timeout,
            delimiter: cfg.delimiter,
            input,
            input_name: match &cfg.input {
                InputSpec::Stdin => "standard input".to_string(),
                InputSpec::File(p) => p.display().to_string(),
            },
            children_keep_stdin,
            backend: match (dry_run, cfg.stdin) {
                (true, _) => Backend::DryRun {
                    split_from: cfg.unsafe_words.then_some(literal),
                },
                (false, true) => Backend::Stdin,
                (false, false) => Backend::Argv,
            },
            records_on_stdin: cfg.stdin,
            template,
            arg_space,
            stats: cfg.stats,
            count_records: !(cfg.stdin
                && !dry_run
                && !cfg.stats
                && cfg.limit.is_none()
                && sizing
                    == Sizing::Adaptive {
                        init: 1,
                        max: HARD_MAX_STDIN_RECORDS,
                    }),
            usable_cpus: cpus,
            retry: RetryPolicy {
                limit: retry_limit()?,
                nonzero: cfg.retry_failed,
            },
            halt: cfg.halt,
            preempt: preempt()?,
            journal: checkpoint.journal,
            journal_missing: checkpoint.missing,
            resume: checkpoint.resume,
            stdout_base: checkpoint.stdout_base,
            restore: checkpoint.restore,
            shard: shard_map,
            results,
        })
    }
}
