//! Turns the command line into a validated [`Config`]: what the user asked for, nothing derived.
//!
//! Flags are defined once in [`flags`], each with the `apply` that sets its part of the config;
//! the clap command, `--help`, the man page and the shell completions are generated from those
//! definitions, and parsing hands each flag given to its own `apply` (no flag is read here by
//! name). This module opens no file and spawns nothing: resolving the command, counting CPUs and
//! sizing batches is `plan`'s job.

pub mod flags;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::invocation::{Invocation, UsageError};
use crate::units;
use flags::{Apply, Draft, FLAGS, Family, FlagDef, Value};

use frun_engine::input::shard::Shard;
pub use frun_engine::output::emit::OrderMode;
pub use frun_engine::plan::config::{BatchSpec, Config, DEFAULT_BYTES, InputSpec, ShardSpec};
use frun_engine::sys::numa::MAX_NODES;
pub use frun_engine::sys::numa::NodeSpec;

/// Parses `--nodes`: `auto`, `none`, `@N`, or a list of kernel node numbers (`0,1`, `0-3`).
fn parse_nodes(s: &str) -> Result<NodeSpec, String> {
    match s {
        "auto" => return Ok(NodeSpec::Auto),
        "none" => return Ok(NodeSpec::None),
        _ => {}
    }
    if let Some(n) = s.strip_prefix('@') {
        return match n.parse::<u32>() {
            Ok(n @ 1..) if n as usize <= MAX_NODES => Ok(NodeSpec::Logical(n)),
            _ => Err(format!(
                "'@{n}' is not a node count from @1 to @{MAX_NODES}"
            )),
        };
    }
    // A single number is a count of nodes, as in forkrun: the machine's first N (0: none).
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return match s.parse::<u32>() {
            Ok(0) => Ok(NodeSpec::None),
            Ok(n) => Ok(NodeSpec::Count(n.min(MAX_NODES as u32))),
            Err(_) => Err(format!("'{s}' is too many nodes")),
        };
    }
    match frun_engine::sys::numa::topology::parse_list(s) {
        Some(ids) if !ids.is_empty() && ids.len() <= MAX_NODES && ids.iter().all(|&i| i < 1024) => {
            Ok(NodeSpec::List(ids.into_iter().map(|i| i as u32).collect()))
        }
        _ => Err(format!(
            "'{s}' is not auto, none, @N, a node count or a node list like 0,1 or 0-3"
        )),
    }
}

/// Parses `--shard`: `auto`, `none` or `I/N`.
fn parse_shard(s: &str) -> Result<ShardSpec, String> {
    Ok(match s {
        "auto" => ShardSpec::Auto,
        "none" => ShardSpec::None,
        _ => ShardSpec::Given(Shard::parse(s)?),
    })
}

/// The clap id of the hidden `--generate KIND`.
const GENERATE: &str = "generate";
/// The clap id of the command words.
const COMMAND: &str = "command";

const GENERATE_KINDS: &[&str] = &["man", "complete-bash", "complete-zsh", "complete-fish"];

fn long_version() -> String {
    format!(
        "{} (commit {}, target {})",
        env!("CARGO_PKG_VERSION"),
        env!("FRUN_GIT_COMMIT"),
        env!("FRUN_TARGET")
    )
}

/// Builds the clap command from [`FLAGS`].
pub fn command() -> Command {
    let mut cmd = Command::new("frun")
        .version(env!("CARGO_PKG_VERSION"))
        .long_version(long_version())
        .about("Run a command over every record of its input, in parallel")
        .long_about(
            "Run a command over every record of its input, in parallel.\n\n\
             Records (lines by default) are grouped into batches; each batch is one invocation \
             CMD ARGS rec1 ... recN, spawned directly (no shell). stdout of each batch is \
             emitted whole; stderr passes straight through.",
        )
        .override_usage("<input> | frun [FLAGS] [--] [CMD [ARGS...]]\n       frun [FLAGS] -a FILE [--] [CMD [ARGS...]]\n       frun [FLAGS] CMD [ARGS...] ::: VALUES... [::: VALUES...] [:::: FILE...]\n       frun parallel GNU-PARALLEL-ARGS...\n       frun xargs XARGS-ARGS...\n       frun sem GNU-SEM-ARGS...\n       frun merge DIR\n       frun status DIR")
        .after_help(
            "Exit status: 0 all ran and succeeded; 123 some invocation exited non-zero; \
             3 some records given up after their retries; 126/127 CMD not executable/not found; \
             2 usage error; 1 frun stopped (--halt, stdout cannot be written, a --resume \
             file not found); \
             128+N stopped by signal N (once it has cleaned up, frun dies of INT, TERM and \
             HUP itself, which a shell shows as 128+N).\n\
             frun merge DIR writes the output of a --results DIR (see frun merge --help), and \
             frun status DIR shows how far its run is; a command named merge or status is run \
             with frun -- merge, frun -- status.\n\
             frun parallel … and frun xargs … (or frun started through a link named parallel \
             or xargs) take GNU Parallel's and xargs' own command lines (see frun parallel \
             --help, frun xargs --help), and frun sem … (or a link named sem) is frun parallel \
             --semaphore …; a command named parallel, sem or xargs is run with \
             frun -- parallel.\n\
             Numbers take units: 1k = 1000, 1Ki = 1024. +X undoes -X (e.g. +k).",
        )
        .disable_help_flag(true)
        .disable_version_flag(true)
        .args_override_self(true)
        .dont_collapse_args_in_usage(true);
    for f in FLAGS {
        cmd = cmd.arg(flag_arg(f));
        if f.negatable {
            cmd = cmd.arg(negation_arg(f));
        }
    }
    cmd.arg(
        Arg::new(GENERATE)
            .long(GENERATE)
            .value_name("KIND")
            .hide(true)
            .value_parser(GENERATE_KINDS.to_vec()),
    )
    .arg(
        Arg::new(COMMAND)
            .value_name("CMD")
            .help("Command to run, with fixed arguments (default: echo)")
            .num_args(1..)
            .trailing_var_arg(true)
            .value_parser(clap::value_parser!(OsString)),
    )
}

/// The ids a flag (or its undo form) overrides: its family's other flags and their undo forms.
fn family_overrides(f: &FlagDef) -> Vec<String> {
    let mut overrides = Vec::new();
    if f.family != Family::None {
        for g in FLAGS
            .iter()
            .filter(|g| g.family == f.family && g.id != f.id)
        {
            overrides.push(g.id.to_string());
            if g.negatable {
                overrides.push(g.negation_id());
            }
        }
    }
    overrides
}

/// The clap argument of one flag.
fn flag_arg(f: &FlagDef) -> Arg {
    let mut arg = Arg::new(f.id).long(f.long).help(f.help);
    if !f.long_help.is_empty() {
        arg = arg.long_help(format!("{}. {}", f.help, f.long_help));
    }
    if let Some(s) = f.short {
        arg = arg.short(s);
    }
    for &a in f.short_aliases {
        arg = arg.visible_short_alias(a);
    }
    for &a in f.long_aliases {
        arg = arg.visible_alias(a);
    }
    arg = match (f.apply, f.value) {
        (Apply::Help, _) => arg.action(ArgAction::Help),
        (Apply::Version, _) => arg.action(ArgAction::Version),
        (Apply::Config(_), Some(v)) => arg
            .value_name(v)
            .action(ArgAction::Set)
            .allow_hyphen_values(true)
            .value_parser(clap::value_parser!(OsString)),
        (Apply::Config(_), None) => arg.action(ArgAction::SetTrue),
    };
    if !f.possible_values.is_empty() {
        arg = arg.value_parser(f.possible_values.to_vec());
    }
    let mut overrides = family_overrides(f);
    if f.negatable {
        overrides.insert(0, f.negation_id());
    }
    arg.conflicts_with_all(f.conflicts)
        .overrides_with_all(overrides)
}

/// The hidden `--no-LONG` that `+X` turns into: it overrides the flag and its family.
fn negation_arg(f: &FlagDef) -> Arg {
    let mut overrides = family_overrides(f);
    overrides.push(f.id.to_string());
    Arg::new(f.negation_id())
        .long(f.negation_id())
        .action(ArgAction::SetTrue)
        .hide(true)
        .overrides_with_all(overrides)
}

/// Rewrites `+X` undo forms (before the command) into the hidden `--no-…` flags.
fn expand_undo_forms(args: &[OsString]) -> Result<Vec<OsString>, UsageError> {
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_bytes();
        i += 1;
        if a == b"--" {
            out.push(args[i - 1].clone());
            out.extend_from_slice(&args[i..]);
            return Ok(out);
        }
        // An optional value is taken from the next word only when that word is a number, or a
        // negative one (`-b -1`: no flag is a digit but -0, so such a word is no flag cluster),
        // which the value's parser then refuses by name.
        let next_is_value = |f: &FlagDef, i: usize| {
            i < args.len()
                && (!f.optional_value
                    || args[i].to_str().is_some_and(|v| {
                        units::parse_number(v).is_ok()
                            || v.strip_prefix('-').is_some_and(|d| {
                                d.starts_with(|c: char| c.is_ascii_digit())
                                    && !d.starts_with(|c| flags::by_short(c).is_some())
                            })
                    }))
        };
        if let Some(long) = a.strip_prefix(b"--") {
            let name = long.split(|&b| b == b'=').next().unwrap_or(long);
            let flag = std::str::from_utf8(name).ok().and_then(flags::by_long);
            if let Some(f) = flag.filter(|f| !f.takes_value() && long.contains(&b'=')) {
                return Err(takes_no_value(&format!("--{}", f.long), &args[i - 1]));
            }
            let takes = flag.is_some_and(FlagDef::takes_value) || name == GENERATE.as_bytes();
            if takes && !long.contains(&b'=') {
                match flag {
                    Some(f) if !next_is_value(f, i) && f.optional_value => {
                        out.push(format!("--{}=", f.long).into());
                    }
                    _ => {
                        out.push(args[i - 1].clone());
                        if i < args.len() {
                            out.push(args[i].clone());
                            i += 1;
                        }
                    }
                }
            } else {
                out.push(args[i - 1].clone());
            }
            continue;
        }
        if a.len() > 1 && a[0] == b'-' {
            // A cluster of short flags; a value flag takes the rest or the next word.
            let s = String::from_utf8_lossy(&a[1..]);
            let mut word = args[i - 1].clone();
            let mut value = None;
            let mut previous = None;
            for (pos, c) in s.char_indices() {
                if c == '=' {
                    if let Some(p) = previous {
                        return Err(takes_no_value(&format!("-{p}"), &args[i - 1]));
                    }
                }
                previous = Some(c).filter(|&c| flags::by_short(c).is_some());
                let Some(f) = flags::by_short(c).filter(|f| f.takes_value()) else {
                    continue;
                };
                if pos + c.len_utf8() == s.len() {
                    if next_is_value(f, i) {
                        value = Some(args[i].clone());
                        i += 1;
                    } else if f.optional_value {
                        word = format!("-{}", &s[..pos]).into();
                        value = Some(format!("--{}=", f.long).into());
                    }
                }
                break;
            }
            if word.len() > 1 {
                out.push(word);
            }
            out.extend(value);
            continue;
        }
        if a.len() > 1 && a[0] == b'+' {
            for c in String::from_utf8_lossy(&a[1..]).chars() {
                match flags::by_short(c) {
                    Some(f) if f.negatable => {
                        out.push(format!("--{}", f.negation_id()).into());
                    }
                    _ => return Err(UsageError(format!("unknown flag '+{c}'"))),
                }
            }
            continue;
        }
        // The command: everything from here on is its words.
        out.extend_from_slice(&args[i - 1..]);
        return Ok(out);
    }
    Ok(out)
}

/// `-k=1`: a switch given a value.
fn takes_no_value(flag: &str, word: &OsStr) -> UsageError {
    UsageError(format!(
        "'{flag}' takes no value (in '{}')",
        word.to_string_lossy()
    ))
}

fn clap_error_line(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let first = rendered
        .lines()
        .next()
        .unwrap_or("invalid arguments")
        .trim();
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

/// Parses `frun merge …` (the words after `merge`).
fn parse_merge(args: &[OsString]) -> Result<Invocation, UsageError> {
    match args {
        [h] if h == "-h" || h == "--help" => Ok(Invocation::Print(MERGE_HELP.as_bytes().to_vec())),
        [dir] if !dir.is_empty() && !dir.as_bytes().starts_with(b"-") => {
            Ok(Invocation::Merge(PathBuf::from(dir)))
        }
        [dir] if dir.is_empty() => Err(UsageError("merge: the directory name is empty".into())),
        [flag] => Err(UsageError(format!(
            "merge: unknown flag '{}' (usage: frun merge DIR)",
            flag.to_string_lossy()
        ))),
        _ => Err(UsageError(
            "merge takes one directory (usage: frun merge DIR)".into(),
        )),
    }
}

/// Parses `frun status …` (the words after `status`).
fn parse_status(args: &[OsString]) -> Result<Invocation, UsageError> {
    match args {
        [h] if h == "-h" || h == "--help" => Ok(Invocation::Print(STATUS_HELP.as_bytes().to_vec())),
        [dir] if !dir.is_empty() && !dir.as_bytes().starts_with(b"-") => {
            let dir = PathBuf::from(dir);
            Ok(Invocation::Act(Box::new(
                move || match frun_engine::output::results::status(&dir) {
                    Ok(text) => {
                        use std::io::Write;
                        let _ = std::io::stdout().lock().write_all(text.as_bytes());
                        frun_engine::ExitCode::Success
                    }
                    Err(e) => {
                        eprintln!("frun status: {e}");
                        frun_engine::ExitCode::Usage
                    }
                },
            )))
        }
        _ => Err(UsageError(
            "status takes one directory (usage: frun status DIR)".into(),
        )),
    }
}

const STATUS_HELP: &str = "\
Show how far the run writing to a results directory (--results DIR) is

Usage: frun status DIR

Input done, and for a run shared by claims (--share claims): each task's lease (working, left
or silent for how long), rate and claims, the claims still open and whose, and those whose
owner's lease is older than the lease time. Exit status: 0, or 2 when DIR is not a results
directory.
";

const MERGE_HELP: &str = "\
Write the combined output of a results directory (--results DIR) to stdout

Usage: frun merge DIR

In input order when the run kept order (-k); otherwise each task's batches whole, task after
task. Exit status: 0 every record of the input was done; 1 some were not (what was done is
written; run the same command again to finish); 2 DIR cannot be merged.
";

/// Parses the whole command line (including `argv[0]`).
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Invocation, UsageError> {
    let args: Vec<OsString> = args.into_iter().collect();
    // `frun merge DIR`; a command named merge is `frun -- merge`.
    if args.get(1).is_some_and(|a| a == "merge") {
        return parse_merge(&args[2..]);
    }
    // `frun status DIR`; a command named status is `frun -- status`.
    if args.get(1).is_some_and(|a| a == "status") {
        return parse_status(&args[2..]);
    }
    let expanded = expand_undo_forms(args.get(1..).unwrap_or(&[]))?;
    let matches =
        command().try_get_matches_from(std::iter::once(OsString::from("frun")).chain(expanded));
    let m = match matches {
        Ok(m) => m,
        Err(e) => {
            use clap::error::ErrorKind;
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    Ok(Invocation::Print(e.render().to_string().into_bytes()))
                }
                _ => Err(UsageError(clap_error_line(&e))),
            };
        }
    };
    if let Some(kind) = m.get_one::<String>(GENERATE) {
        return Ok(Invocation::Print(generate(kind)));
    }
    let draft = apply_flags(&m)?;
    let mut command: Vec<OsString> = m
        .get_many::<OsString>(COMMAND)
        .map(|v| v.cloned().collect())
        .unwrap_or_default();
    if let Some(p) = &draft.config.plugin {
        // The plugin stands where a command would: its `SO:FN` word, then the fixed words.
        let mut spec = p.library.clone().into_os_string();
        spec.push(":");
        spec.push(&p.function);
        command.insert(0, spec);
    }
    if command.is_empty() {
        command.push("echo".into());
    }
    if command[0].is_empty() {
        return Err(UsageError("the command name is empty".into()));
    }
    let mut cfg = draft.finish(command);
    placeholders(&mut cfg)?;
    Ok(Invocation::Run(Box::new(cfg)))
}

/// A sweep (`CMD ::: a b ::: 1 2`, `:::: FILE`) takes its records from the sources after the
/// command; `{}` and `{1}`..`{9}` (and, with `-i`, GNU Parallel's other replacement strings)
/// are filled in by a job line of literal words. `:::` is never passed to a command.
fn placeholders(cfg: &mut Config) -> Result<(), UsageError> {
    use frun_engine::plan::config::{
        Columns, JobSpec, ReplacementNames, Source, SourceValues, Spread, Sweep, Trim,
    };
    let marker = |w: &OsString| matches!(w.as_bytes(), b":::" | b"::::" | b":::+" | b"::::+");
    let split = cfg.command.iter().position(marker);
    if split == Some(0) {
        return Err(UsageError(
            "::: needs a command before it (e.g. frun echo ::: a b)".into(),
        ));
    }
    if let Some(at) = split {
        if cfg.input != InputSpec::Stdin {
            return Err(UsageError(
                "-a FILE and ::: / :::: both give the input; use one (:::: FILE reads a file)"
                    .into(),
            ));
        }
        if cfg.stdin || cfg.unsafe_words || cfg.insert_id {
            return Err(UsageError(
                "a sweep (::: / ::::) puts its values into arguments: it cannot be combined with -s, -b, --block, -U or -I"
                    .into(),
            ));
        }
        let words = cfg.command.split_off(at);
        let mut sources = Vec::new();
        let mut i = 0;
        while i < words.len() {
            let m = words[i].as_bytes();
            let (files, linked) = (m.starts_with(b"::::"), m.ends_with(b"+"));
            i += 1;
            let start = i;
            while i < words.len() && !marker(&words[i]) {
                i += 1;
            }
            if files {
                if start == i {
                    return Err(UsageError(":::: needs at least one file".into()));
                }
                for (k, f) in words[start..i].iter().enumerate() {
                    if f.is_empty() {
                        return Err(UsageError(":::: an empty file name".into()));
                    }
                    sources.push(Source {
                        values: SourceValues::File(PathBuf::from(f)),
                        linked: linked && k == 0,
                    });
                }
            } else {
                sources.push(Source {
                    values: SourceValues::Words(words[start..i].to_vec()),
                    linked,
                });
            }
        }
        cfg.input = InputSpec::Sweep(Sweep {
            sources,
            link: cfg.link,
            wrap: false,
            header: false,
            names: Vec::new(),
            delimiter: cfg.delimiter,
            separator: Vec::new(),
            eof: None,
            skip_empty: false,
            shuffle: false,
            continued: false,
            csv: None,
            empty_is_blank: false,
        });
        cfg.delimiter = 0;
        // One invocation per tuple unless -l / -L say otherwise (as forkrun's sweeps).
        let default = frun_engine::plan::config::Range {
            init: frun_engine::plan::config::Bound::Default,
            max: frun_engine::plan::config::Bound::Default,
        };
        if cfg.batch == BatchSpec::Lines(default) {
            cfg.batch = BatchSpec::Exact(1);
        }
    } else if !cfg.insert || cfg.insert_id || cfg.unsafe_words || cfg.stdin {
        return Ok(());
    }
    let swept = split.is_some();
    cfg.job = Some(JobSpec {
        words: cfg.command.iter().map(|w| w.as_bytes().to_vec()).collect(),
        quote: false,
        literal: true,
        shell: PathBuf::from("/bin/sh"),
        columns: if swept {
            Columns::Tuple
        } else {
            Columns::Whole
        },
        spread: Spread::Context,
        names: ReplacementNames::default(),
        trim: Trim::default(),
        header: Vec::new(),
        bare: false,
        fed: false,
        numbered: false,
        rpl: Vec::new(),
    });
    Ok(())
}

/// Hands every flag that was given (or has an environment default) to its `apply`, in check
/// order; the first value refused is the error.
fn apply_flags(m: &ArgMatches) -> Result<Draft, UsageError> {
    let mut draft = Draft::default();
    let given = |id: &str| m.value_source(id) == Some(ValueSource::CommandLine);
    // The environment gives a default (a site or a test run sets it once); unset, empty or not
    // UTF-8, it gives none.
    let env =
        |name: &'static str| Some((name, std::env::var(name).ok()?)).filter(|(_, v)| !v.is_empty());
    for f in flags::in_check_order() {
        let Apply::Config(apply) = f.apply else {
            continue;
        };
        let from_env;
        let (value, source) = if given(f.id) && f.takes_value() {
            let v = m.get_raw(f.id).and_then(|mut v| v.next());
            (
                Value::Text(v.unwrap_or_default()),
                format!("'--{}'", f.long),
            )
        } else if given(f.id) {
            (Value::On, format!("'--{}'", f.long))
        } else if let Some((name, v)) = f.env.and_then(env) {
            from_env = v;
            (Value::Text(OsStr::new(&from_env)), name.to_string())
        } else if f.negatable && given(&f.negation_id()) {
            (Value::Off, format!("'--{}'", f.long))
        } else {
            continue;
        };
        apply(&mut draft, value)
            .map_err(|e| UsageError(format!("invalid value for {source}: {e}")))?;
    }
    Ok(draft)
}

/// Renders the man page or a shell completion script from the same definitions.
fn generate(kind: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut cmd = command();
    match kind {
        "man" => clap_mangen::Man::new(cmd)
            .render(&mut out)
            .expect("rendering to memory cannot fail"),
        "complete-bash" => {
            clap_complete::generate(clap_complete::Shell::Bash, &mut cmd, "frun", &mut out)
        }
        "complete-zsh" => {
            clap_complete::generate(clap_complete::Shell::Zsh, &mut cmd, "frun", &mut out)
        }
        _ => clap_complete::generate(clap_complete::Shell::Fish, &mut cmd, "frun", &mut out),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::time::Duration;
    use units::Range;

    fn cfg(args: &[&str]) -> Config {
        let argv = std::iter::once("frun")
            .chain(args.iter().copied())
            .map(OsString::from);
        match parse(argv) {
            Ok(Invocation::Run(c)) => *c,
            Ok(Invocation::RunWith(..)) => panic!("frun's own flags make no sidecar"),
            Ok(Invocation::Print(_)) => panic!("printed instead of running"),
            Ok(Invocation::Merge(_)) => panic!("merge instead of running"),
            Ok(Invocation::Act(_)) => panic!("acted instead of running"),
            Ok(Invocation::Refuse { message, .. }) => panic!("refused: {message}"),
            Ok(Invocation::Fail { text, .. }) => panic!("failed: {text}"),
            Err(e) => panic!("usage error: {}", e.0),
        }
    }

    #[test]
    fn shard_and_merge_words() {
        assert_eq!(cfg(&[]).shard, ShardSpec::Auto);
        assert_eq!(cfg(&["--shard", "none"]).shard, ShardSpec::None);
        assert_eq!(
            cfg(&["--shard", "2/3"]).shard,
            ShardSpec::Given(Shard { index: 2, count: 3 })
        );
        assert!(err(&["--shard", "3/3"]).contains("--shard"));
        // A command named merge after flags, or after --, is a command.
        assert_eq!(cfg(&["-k", "merge"]).command, [OsString::from("merge")]);
        assert_eq!(cfg(&["--", "merge", "x"]).command.len(), 2);
        let merge = |a: &[&str]| {
            parse(
                std::iter::once("frun")
                    .chain(a.iter().copied())
                    .map(OsString::from),
            )
        };
        assert!(matches!(merge(&["merge", "d"]), Ok(Invocation::Merge(p)) if p == Path::new("d")));
        assert!(matches!(
            merge(&["merge", "--help"]),
            Ok(Invocation::Print(_))
        ));
        for bad in [
            &["merge"][..],
            &["merge", "a", "b"],
            &["merge", "-k"],
            &["merge", ""],
        ] {
            assert!(merge(bad).is_err(), "{bad:?}");
        }
    }

    fn err(args: &[&str]) -> String {
        let argv = std::iter::once("frun")
            .chain(args.iter().copied())
            .map(OsString::from);
        match parse(argv) {
            Err(e) => e.0,
            Ok(_) => panic!("accepted {args:?}"),
        }
    }

    #[test]
    fn value_forms_agree() {
        for form in [
            &["-l5"][..],
            &["-l", "5"],
            &["-l=5"],
            &["--lines", "5"],
            &["--lines=5"],
        ] {
            let c = cfg(form);
            assert_eq!(
                c.batch,
                BatchSpec::Lines(Range {
                    init: units::Bound::Value(5),
                    max: units::Bound::Value(5)
                }),
                "{form:?}"
            );
        }
    }

    #[test]
    fn node_counts_and_lists() {
        assert_eq!(parse_nodes("2"), Ok(NodeSpec::Count(2)));
        assert_eq!(parse_nodes("0"), Ok(NodeSpec::None));
        assert_eq!(parse_nodes("999"), Ok(NodeSpec::Count(MAX_NODES as u32)));
        assert_eq!(parse_nodes("2-2"), Ok(NodeSpec::List(vec![2])));
        assert_eq!(parse_nodes("0,7"), Ok(NodeSpec::List(vec![0, 7])));
        for bad in ["99999999999", "", "x", "1-0"] {
            assert!(parse_nodes(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn last_setting_wins_and_plus_undoes() {
        assert_eq!(cfg(&["-k", "-u"]).order, OrderMode::Unbuffered);
        assert_eq!(cfg(&["-u", "-k"]).order, OrderMode::Ordered);
        assert_eq!(cfg(&["-k", "+k"]).order, OrderMode::Buffered);
        assert_eq!(cfg(&["-k", "--buffered"]).order, OrderMode::Buffered);
        assert_eq!(cfg(&["-k", "-o", "realtime"]).order, OrderMode::Unbuffered);
        assert_eq!(cfg(&["-z", "-d", ","]).delimiter, b',');
        assert_eq!(cfg(&["-d", ",", "-0"]).delimiter, 0);
        assert_eq!(cfg(&["-z", "+z"]).delimiter, b'\n');
        assert_eq!(cfg(&["-L", "3", "-l", "2"]).batch, cfg(&["-l2"]).batch);
        assert_eq!(cfg(&["-l", "2", "-L", "3"]).batch, BatchSpec::Exact(3));
        assert_eq!(cfg(&["-n", "5", "+n"]).limit, None);
        assert!(cfg(&["-kv"]).stats);
        assert!(!cfg(&["-v", "+kv"]).stats);
    }

    #[test]
    fn command_words_are_literal() {
        let c = cfg(&["-k", "grep", "-v", "+x", "--", "-l"]);
        let words: Vec<_> = c.command.iter().map(|s| s.to_str().unwrap()).collect();
        assert_eq!(words, ["grep", "-v", "+x", "--", "-l"]);
        assert_eq!(cfg(&[]).command, [OsString::from("echo")]);
        assert_eq!(cfg(&["-d", "+", "cat"]).delimiter, b'+');
        assert_eq!(cfg(&["--", "-weird"]).command, [OsString::from("-weird")]);
    }

    #[test]
    fn bad_flags_name_themselves() {
        assert!(err(&["--frobnicate"]).contains("--frobnicate"));
        assert!(err(&["-x"]).contains("-x"));
        assert!(err(&["+q"]).contains("+q"));
        assert!(err(&["-l", "abc"]).contains("--lines"));
        assert!(err(&["-n", "-3"]).contains("--limit"));
        assert!(err(&["-d", "ab"]).contains("--delimiter"));
        assert!(err(&["-o", "sideways"]).contains("sideways"));
        assert!(err(&["-L", "0"]).contains("--exact-lines"));
        for e in [err(&["--frobnicate"]), err(&["-l"])] {
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }

    /// The config `args` give, shown, or None when they are refused.
    fn shown<S: AsRef<str>>(args: &[S]) -> Option<String> {
        let argv = std::iter::once("frun")
            .chain(args.iter().map(AsRef::as_ref))
            .map(OsString::from);
        match parse(argv) {
            Ok(Invocation::Run(c)) => Some(format!("{c:?}")),
            _ => None,
        }
    }

    #[test]
    fn every_row_reaches_the_config() {
        for f in FLAGS {
            let long = format!("--{}", f.long);
            if !matches!(f.apply, Apply::Config(_)) {
                let printed = parse(["frun", &long].map(OsString::from));
                assert!(matches!(printed, Ok(Invocation::Print(_))), "{long}");
                continue;
            }
            // The flag alone, or after -u (for --buffered, which is the default), with the first
            // of these values it accepts; its undo form then gives the
            // config without it.
            let values = match f.takes_value() {
                true => &[
                    "2",
                    "ordered",
                    "none",
                    "fail=1",
                    "always",
                    "./lib.so:f",
                    "claims",
                ][..],
                false => &[""],
            };
            let mut changed = false;
            for base in [&[][..], &["-u"]] {
                let (mut args, c) = values
                    .iter()
                    .find_map(|v| {
                        let mut args: Vec<String> = base.iter().map(|b| b.to_string()).collect();
                        // An optional value that is no number is given as --flag=VALUE.
                        if f.optional_value {
                            args.push(format!("{long}={v}"));
                        } else {
                            args.push(long.clone());
                            args.extend(Some(v.to_string()).filter(|v| !v.is_empty()));
                        }
                        shown(&args).map(|c| (args, c))
                    })
                    .unwrap_or_else(|| panic!("{long} refused"));
                changed |= Some(c) != shown(base);
                // (Undoing one of a family undoes the family, -u included.)
                if f.negatable && base.is_empty() {
                    args.push(format!("--{}", f.negation_id()));
                    assert_eq!(shown(&args), shown(base), "{args:?}");
                }
            }
            assert!(changed, "{long} changes nothing");
        }
    }

    #[test]
    fn units_reach_the_config() {
        assert_eq!(cfg(&["-n", "1k"]).limit, Some(1000));
        assert_eq!(cfg(&["-n", "1Ki"]).limit, Some(1024));
        assert_eq!(cfg(&["-t", "2k"]).timeout, Some(Duration::from_millis(2)));
    }
}
