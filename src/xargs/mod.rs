//! `frun xargs …`: GNU findutils xargs' command line (4.9) turned into a [`Config`] for frun's
//! engine: options up to the first word that is not one, then the command and its initial
//! arguments. A bad option is xargs' usage error (status 1). It reads no file and starts
//! nothing.

use frun_engine::sys::errors::PROG;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::invocation::Invocation;
use frun_engine::input::arguments::{Grouping, Rules, Separator};
use frun_engine::plan::config::{
    ArgumentLists, BatchSpec, Bound, Conduct, Config, InputSpec, Range,
};
use frun_engine::run::Statuses;
use frun_engine::sys::exit::ExitCode;

/// xargs' usage error: one line, status 1.
fn refuse(msg: impl Into<String>) -> Invocation {
    Invocation::Refuse {
        message: msg.into(),
        status: ExitCode::Passed(1),
    }
}

/// GNU xargs' default command buffer.
const DEFAULT_MAX_CHARS: u64 = 128 << 10;

/// What the options said.
#[derive(Default)]
struct Options {
    delimiter: Option<u8>,
    arg_file: Option<PathBuf>,
    eof: Option<Vec<u8>>,
    grouping: Option<Grouping>,
    replace: Option<Vec<u8>>,
    max_chars: Option<u64>,
    procs: Option<u64>,
    exit_if_too_long: bool,
    no_run_if_empty: bool,
    trace: bool,
    prompt: bool,
    slot_var: Option<OsString>,
    show_limits: bool,
}

impl Options {
    /// `option` replaces an earlier -I, -L or -n of another kind: xargs warns, and the last
    /// one given counts.
    fn overrides(&self, option: &str) {
        let previous = match self.grouping {
            _ if self.replace.is_some() => "--replace",
            Some(Grouping::Lines(_)) => "--max-lines",
            Some(Grouping::Args(Some(_))) => "--max-args",
            _ => return,
        };
        let same = match option {
            "-L" | "--max-lines/-l" => previous == "--max-lines",
            "--max-args/-n" => previous == "--max-args",
            _ => previous == "--replace",
        };
        if same {
            return;
        }
        eprintln!(
            "{PROG}: warning: options {previous} and {option} are mutually exclusive, ignoring \
             previous {previous} value"
        );
    }
}

/// Long options: name, whether it takes a value (`Some(true)` required, `Some(false)`
/// optional, `None` none), and the short option it is.
const LONG: &[(&str, Option<bool>, char)] = &[
    ("null", None, '0'),
    ("arg-file", Some(true), 'a'),
    ("delimiter", Some(true), 'd'),
    ("eof", Some(false), 'e'),
    ("replace", Some(false), 'i'),
    ("max-lines", Some(false), 'l'),
    ("max-args", Some(true), 'n'),
    ("open-tty", None, 'o'),
    ("interactive", None, 'p'),
    ("no-run-if-empty", None, 'r'),
    ("max-chars", Some(true), 's'),
    ("verbose", None, 't'),
    ("show-limits", None, 'S'),
    ("exit", None, 'x'),
    ("max-procs", Some(true), 'P'),
    ("process-slot-var", Some(true), 'V'),
    ("version", None, 'v'),
    ("help", None, 'h'),
];

/// Parses the words after `xargs`.
pub fn parse(args: &[OsString]) -> Invocation {
    match parse_inner(args) {
        Ok(i) | Err(i) => i,
    }
}

fn parse_inner(args: &[OsString]) -> Result<Invocation, Invocation> {
    let mut o = Options::default();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_bytes();
        if a == b"--" {
            i += 1;
            break;
        }
        if !a.starts_with(b"-") || a == b"-" {
            break;
        }
        i += option(&mut o, args, i)?;
    }
    build(o, &args[i..])
}

/// Reads the option at `args[i]`; returns how many words it took.
fn option(o: &mut Options, args: &[OsString], i: usize) -> Result<usize, Invocation> {
    let a = args[i].as_bytes();
    if let Some(long) = a.strip_prefix(b"--") {
        let (name, inline) = match long.iter().position(|&b| b == b'=') {
            Some(k) => (&long[..k], Some(&long[k + 1..])),
            None => (long, None),
        };
        let name = String::from_utf8_lossy(name).into_owned();
        let exact = LONG.iter().find(|(n, _, _)| *n == name);
        let matches: Vec<_> = LONG
            .iter()
            .filter(|(n, _, _)| n.starts_with(&name))
            .collect();
        let &(full, takes, c) = match (exact, matches.as_slice()) {
            (Some(e), _) => e,
            (None, [one]) => one,
            (None, []) => return Err(usage(format!("unrecognized option '--{name}'"))),
            (None, _) => return Err(usage(format!("option '--{name}' is ambiguous"))),
        };
        return match (takes, inline) {
            (None, Some(_)) => Err(usage(format!(
                "option '--{full}' doesn't allow an argument"
            ))),
            (None, None) => {
                apply(o, c, None)?;
                Ok(1)
            }
            (Some(_), Some(v)) => {
                apply(o, c, Some(v))?;
                Ok(1)
            }
            (Some(false), None) => {
                apply(o, c, None)?;
                Ok(1)
            }
            (Some(true), None) => match args.get(i + 1) {
                Some(v) => {
                    apply(o, c, Some(v.as_bytes()))?;
                    Ok(2)
                }
                None => Err(usage(format!("option '--{full}' requires an argument"))),
            },
        };
    }
    // Short options, bundled: -0rt, -n1, -n 1, -e and -i and -l take an attached value only.
    let mut k = 1;
    while k < a.len() {
        let c = a[k] as char;
        let attached = &a[k + 1..];
        match c {
            '0' | 'o' | 'p' | 'r' | 't' | 'x' => {
                apply(o, c, None)?;
                k += 1;
            }
            'e' | 'i' | 'l' => {
                apply(o, c, (!attached.is_empty()).then_some(attached))?;
                return Ok(1);
            }
            'a' | 'd' | 'E' | 'I' | 'L' | 'n' | 's' | 'P' => {
                if !attached.is_empty() {
                    apply(o, c, Some(attached))?;
                    return Ok(1);
                }
                let Some(v) = args.get(i + 1) else {
                    return Err(usage(format!("option requires an argument -- '{c}'")));
                };
                apply(o, c, Some(v.as_bytes()))?;
                return Ok(2);
            }
            _ => return Err(usage(format!("invalid option -- '{c}'"))),
        }
    }
    Ok(1)
}

/// A usage error as xargs words it (it adds where to find help).
fn usage(msg: String) -> Invocation {
    refuse(format!("{msg} (see frun xargs --help)"))
}

/// A number for option `-c`, at least `min`.
fn number(c: char, v: &[u8], min: u64) -> Result<u64, Invocation> {
    let text = String::from_utf8_lossy(v);
    let n: i64 = text
        .trim()
        .parse()
        .map_err(|_| usage(format!("invalid number \"{text}\" for -{c} option")))?;
    if n < min as i64 {
        return Err(usage(format!(
            "value {n} for -{c} option should be >= {min}"
        )));
    }
    Ok(n as u64)
}

fn apply(o: &mut Options, c: char, v: Option<&[u8]>) -> Result<(), Invocation> {
    let value = || v.unwrap_or_default().to_vec();
    match c {
        '0' => o.delimiter = Some(0),
        'a' => o.arg_file = Some(PathBuf::from(OsStr::from_bytes(v.unwrap_or_default()))),
        'd' => o.delimiter = Some(delimiter(v.unwrap_or_default())?),
        'E' | 'e' => o.eof = v.filter(|s| !s.is_empty()).map(<[u8]>::to_vec),
        'I' => {
            o.overrides("--replace/-I/-i");
            o.replace = Some(value());
            o.grouping = Some(Grouping::Replace);
        }
        'i' => {
            o.overrides("--replace/-I/-i");
            o.replace = Some(
                v.filter(|s| !s.is_empty())
                    .map_or(b"{}".to_vec(), <[u8]>::to_vec),
            );
            o.grouping = Some(Grouping::Replace);
        }
        'L' => {
            let n = number('L', v.unwrap_or_default(), 1)?;
            o.overrides("-L");
            o.grouping = Some(Grouping::Lines(n));
            o.replace = None;
        }
        'l' => {
            let n = match v {
                Some(v) => number('l', v, 1)?,
                None => 1,
            };
            o.overrides("--max-lines/-l");
            o.grouping = Some(Grouping::Lines(n));
            o.replace = None;
        }
        'n' => {
            let n = number('n', v.unwrap_or_default(), 1)?;
            // -n1 after -I changes nothing (a line per command already); any other -n ends
            // -I, as in xargs.
            if o.replace.is_none() || n != 1 {
                o.overrides("--max-args/-n");
                o.grouping = Some(Grouping::Args(Some(n)));
                o.replace = None;
            }
        }
        's' => o.max_chars = Some(number('s', v.unwrap_or_default(), 1)?),
        'P' => o.procs = Some(number('P', v.unwrap_or_default(), 0)?),
        'V' => {
            let name = v.unwrap_or_default();
            if name.is_empty() || name.contains(&b'=') {
                return Err(usage(format!(
                    "--process-slot-var '{}': not a variable name",
                    String::from_utf8_lossy(name)
                )));
            }
            o.slot_var = Some(OsStr::from_bytes(name).to_os_string());
        }
        'o' => {
            return Err(refuse(
                "-o/--open-tty is not supported by frun xargs: give the command its terminal \
                 yourself (sh -c 'cmd \"$@\" </dev/tty' sh)",
            ));
        }
        'p' => o.prompt = true,
        'r' => o.no_run_if_empty = true,
        't' => o.trace = true,
        'x' => o.exit_if_too_long = true,
        'S' => o.show_limits = true,
        'v' => {
            return Err(Invocation::Print(
                format!(
                    "frun xargs {} (GNU findutils xargs' command line, on frun's engine)\n",
                    env!("CARGO_PKG_VERSION")
                )
                .into_bytes(),
            ));
        }
        'h' => return Err(Invocation::Print(HELP.as_bytes().to_vec())),
        _ => unreachable!("listed in option()"),
    }
    Ok(())
}

/// `-d C`: one byte, or an escape (`\n`, `\t`, `\\`, `\xHH`, `\NNN` octal, …).
fn delimiter(v: &[u8]) -> Result<u8, Invocation> {
    let bad = || {
        refuse(format!(
            "Invalid input delimiter specification {}: the delimiter must be either a single \
             character or an escape sequence starting with \\.",
            String::from_utf8_lossy(v)
        ))
    };
    match v {
        [c] => Ok(*c),
        [b'\\', rest @ ..] => {
            let named = match rest {
                b"a" => Some(7),
                b"b" => Some(8),
                b"f" => Some(12),
                b"n" => Some(b'\n'),
                b"r" => Some(b'\r'),
                b"t" => Some(b'\t'),
                b"v" => Some(11),
                b"\\" => Some(b'\\'),
                _ => None,
            };
            if let Some(b) = named {
                return Ok(b);
            }
            let text = std::str::from_utf8(rest).map_err(|_| bad())?;
            let n = match text.strip_prefix('x') {
                Some(hex) => u32::from_str_radix(hex, 16),
                None => u32::from_str_radix(text, 8),
            }
            .map_err(|_| bad())?;
            u8::try_from(n).map_err(|_| bad())
        }
        _ => Err(bad()),
    }
}

/// The argument-length limits as xargs computes them: (the POSIX upper limit on this system,
/// the most a command may use, the environment's bytes).
fn limits() -> (u64, u64, u64) {
    let arg_max = nix::unistd::sysconf(nix::unistd::SysconfVar::ARG_MAX)
        .ok()
        .flatten()
        .filter(|&n| n > 0)
        .map_or(128 << 10, |n| n as u64);
    let env: u64 = std::env::vars_os()
        .map(|(k, v)| k.len() as u64 + v.len() as u64 + 2)
        .sum();
    let upper = arg_max.saturating_sub(2048 + env);
    (upper, upper.saturating_sub(env), env)
}

/// `-I`: the bytes the command line takes without its replace strings, and how many there are
/// (counted left to right, not overlapping, in the initial arguments only: xargs replaces none
/// in the command's name).
fn replaced_size(command: &[OsString], replace: &[u8]) -> (u64, u64) {
    let mut size = command[0].len() as u64 + 1;
    let mut count = 0;
    for word in &command[1..] {
        let mut rest = word.as_bytes();
        size += rest.len() as u64 + 1;
        while let Some(i) = (!replace.is_empty())
            .then(|| memchr::memmem::find(rest, replace))
            .flatten()
        {
            size -= replace.len() as u64;
            count += 1;
            rest = &rest[i + replace.len()..];
        }
    }
    (size, count)
}

fn build(o: Options, command: &[OsString]) -> Result<Invocation, Invocation> {
    let (upper, usable, env) = limits();
    let mut max_chars = DEFAULT_MAX_CHARS.min(usable);
    if let Some(s) = o.max_chars {
        if s > upper {
            eprintln!("{PROG}: value {s} for -s option should be <= {upper}");
        }
        max_chars = s.min(usable);
    }
    if o.show_limits {
        eprintln!(
            "Your environment variables take up {env} bytes\n\
             POSIX upper limit on argument length (this system): {upper}\n\
             POSIX smallest allowable upper limit on argument length (all systems): 4096\n\
             Maximum length of command we could actually use: {usable}\n\
             Size of command buffer we are actually using: {max_chars}\n\
             Maximum parallelism (--max-procs must be no greater): {}",
            i32::MAX
        );
    }
    let command: Vec<OsString> = if command.is_empty() {
        vec![OsString::from("echo")]
    } else {
        command.to_vec()
    };
    if command[0].is_empty() {
        return Err(refuse("the command name is empty"));
    }
    let initial: u64 = command.iter().map(|w| w.len() as u64 + 1).sum();
    // With -I, xargs fits the command's name first, the rest only filled, line by line.
    let fixed = match o
        .replace
        .as_ref()
        .filter(|_| o.grouping == Some(Grouping::Replace))
    {
        Some(_) => command[0].len() as u64 + 1,
        None => initial,
    };
    if fixed >= max_chars {
        return Err(refuse(
            "cannot fit single argument within argument list size limit",
        ));
    }
    let separator = match o.delimiter {
        Some(d) => Separator::Byte(d),
        None => Separator::Quoted,
    };
    if o.eof.is_some() && o.delimiter.is_some() {
        eprintln!("{PROG}: warning: the -E option has no effect if -0 or -d is used.");
    }
    let grouping = o.grouping.unwrap_or(Grouping::Args(None));
    let replace = o.replace.filter(|_| grouping == Grouping::Replace);
    let (initial, replaced) = match &replace {
        Some(r) => replaced_size(&command, r),
        None => (initial, 0),
    };
    let rules = Rules {
        separator,
        eof: o.eof.filter(|_| o.delimiter.is_none()),
        grouping,
        max_chars,
        initial,
        replaced,
        // -I implies -x (a line that does not fit is an error).
        exit_if_too_long: o.exit_if_too_long || replace.is_some(),
        run_if_empty: !o.no_run_if_empty,
    };
    // -P 0: as many at once as there are commands, within frun's ceiling on workers.
    let procs = match o.procs.unwrap_or(1) {
        0 => 256,
        n => n.min(4096),
    };
    let cfg = Config {
        conduct: CONDUCT,
        workers: Range {
            init: Bound::Value(procs),
            max: Bound::Value(procs),
        },
        batch: BatchSpec::Exact(1),
        delimiter: 0,
        input: match o.arg_file {
            Some(p) if p.as_os_str() != "-" => InputSpec::File(p),
            _ => InputSpec::Stdin,
        },
        command,
        argument_lists: Some(ArgumentLists {
            rules,
            replace,
            trace: o.trace || o.prompt,
            prompt: o.prompt,
            slot_var: o.slot_var,
        }),
        ..Config::default()
    };
    Ok(Invocation::Run(Box::new(cfg)))
}

/// Whether `w` is `xargs` (how the personality is named on the command line or as a link).
pub fn is_name(w: &OsStr) -> bool {
    w == "xargs"
}

const HELP: &str = "\
Run xargs command lines on frun's engine

Usage: frun xargs [OPTION]... COMMAND [INITIAL-ARGS]...

Runs COMMAND with INITIAL-ARGS and more arguments read from input, as GNU findutils xargs
4.9 does; the command runs directly, never through a shell.

  -0, --null                   items end with a NUL byte; quotes and backslashes are data
  -a, --arg-file=FILE          read the items from FILE (the commands keep stdin)
  -d, --delimiter=C            items end with C (a byte, or \\n, \\t, \\xHH, \\NNN)
  -E STR, -e[STR], --eof[=STR] an item STR ends the input (default mode only)
  -I STR, -i[STR], --replace[=STR]
                               one line per command, STR (default {}) in INITIAL-ARGS
                               replaced by it; leading blanks are dropped
  -L N, -l[N], --max-lines[=N] the items of N non-blank lines per command (a trailing blank
                               continues a line)
  -n, --max-args=N             at most N items per command
  -P, --max-procs=N            run N commands at once (default 1; 0: as many as can run)
  -p, --interactive            ask on /dev/tty before each command; only y runs it
      --process-slot-var=NAME  set NAME to the command's slot (0 .. N-1) in its environment
  -r, --no-run-if-empty        run nothing when the input has no items
  -s, --max-chars=N            at most N bytes per command line (default 131072)
      --show-limits            show the limits on command-line length
  -t, --verbose                print each command line on stderr before it runs
  -x, --exit                   stop if a command cannot take all its -n/-L items
      --help, --version

Default input: blanks and newlines separate items; single and double quotes and backslash
quote. Exit status: 0 all commands succeeded, 123 some failed, 124 one exited 255 (the run
stops), 125 one was killed by a signal (the run stops), 126 the command cannot run, 127 it
was not found, 1 any other error. Unlike xargs, the output of commands run at once (-P) is
never interleaved: each command's output comes out whole.
";

/// GNU xargs' exit status for a run that could not start: 1 (a command that cannot run keeps
/// How GNU xargs behaves where frun differs: 123 when a command failed, with no summary;
/// nothing is retried unless asked; a NUL in an argument is warned of; commands read xargs'
/// standard input when the arguments come from a file; no checkpoint unless asked.
const CONDUCT: Conduct = Conduct {
    statuses: Statuses::Plain,
    retries_unasked: false,
    nul_in_value: frun_engine::plan::config::NulInValue::Cut,
    children_read_stdin: true,
    checkpoint_unasked: false,
    stderr_grouped: false,
};

/// 126/127).
pub fn refusal_status(e: &frun_engine::RunError) -> ExitCode {
    match e {
        frun_engine::RunError::Command(r) => r.status(),
        _ => ExitCode::Passed(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    fn run(a: &[&str]) -> Config {
        match parse(&words(a)) {
            Invocation::Run(c) => *c,
            _ => panic!("not a run: {a:?}"),
        }
    }

    #[test]
    fn options_end_at_the_command() {
        let c = run(&["-n2", "-P", "3", "echo", "-n", "x"]);
        assert_eq!(c.command, words(&["echo", "-n", "x"]));
        assert_eq!(c.workers.max, Bound::Value(3));
        let x = c.argument_lists.unwrap();
        assert_eq!(x.rules.grouping, Grouping::Args(Some(2)));
        assert_eq!(x.rules.initial, 5 + 3 + 2);
    }

    #[test]
    fn delimiters() {
        assert!(matches!(delimiter(b"\\t"), Ok(b'\t')));
        assert!(matches!(delimiter(b"\\x41"), Ok(b'A')));
        assert!(matches!(delimiter(b"\\060"), Ok(b'0')));
        assert!(delimiter(b"ab").is_err());
    }

    #[test]
    fn bad_values_are_status_1() {
        for a in [
            &["-n", "0"][..],
            &["-P", "-1"],
            &["-Q"],
            &["--foo"],
            &["-n"],
            &["-L", "x"],
        ] {
            assert!(matches!(
                parse(&words(a)),
                Invocation::Refuse {
                    status: ExitCode::Passed(1),
                    ..
                }
            ));
        }
    }
}
