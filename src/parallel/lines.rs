//! How `frun parallel` groups values into command lines, as GNU Parallel does: the line
//! length `-X`/`-m` fill to (`-s`/`--max-chars`), and `--show-limits`.
//!
//! It only turns these options into typed settings for the engine (and prints what
//! `--show-limits` and an over-long `-s` say); it reads no input.

/// The longest command GNU Parallel measures on Linux: it searches for the longest single
/// argument `exec` takes (the kernel's 128 KiB per argument) and stops within 1% of it, which
/// lands here whatever the environment.
pub(super) const COMMAND_MAX: u64 = 130_329;

/// The line length `-X`/`-m` fill to by default: GNU Parallel's usable length, half of
/// [`COMMAND_MAX`] less 3000 bytes.
pub(super) const USABLE_MAX: u64 = (COMMAND_MAX - 3000) / 2;

/// What the line-grouping options said.
#[derive(Default)]
pub(super) struct Lines {
    /// `-s N` / `--max-chars N`.
    pub(super) max_chars: Option<u64>,
    /// `--show-limits`.
    pub(super) show_limits: bool,
    /// `-L`/`-l`/`--max-lines` was given: lines ending in a blank go on with the next one.
    pub(super) max_lines: bool,
    /// Lines per job (`-L 0`: 0).
    pub(super) lines: u64,
    /// `-N`/`-n`: with `--pipe -L`, records (of `lines` lines) per job.
    pub(super) records: Option<u64>,
}

impl Lines {
    /// The line length `-X`/`-m` fill to: `-s` when it is within the usable length, else the
    /// usable length (with GNU Parallel's warning).
    pub(super) fn chars(&self) -> u64 {
        match self.max_chars {
            Some(n) if n <= USABLE_MAX => n,
            Some(_) => {
                eprintln!("parallel: Warning: Value for option -s should be < {USABLE_MAX}.");
                USABLE_MAX
            }
            None => USABLE_MAX,
        }
    }

    /// `--show-limits`: GNU Parallel's report of the line lengths, on stdout, before the run.
    pub(super) fn show(&self) {
        if !self.show_limits {
            return;
        }
        use std::io::Write;
        let usable = self
            .max_chars
            .filter(|&n| n <= USABLE_MAX)
            .unwrap_or(USABLE_MAX);
        let text = format!(
            "Maximal size of command: {COMMAND_MAX}\n\
             Maximal usable size of command: {usable}\n\
             \n\
             Execution will continue now, and it will try to read its input\n\
             and run commands; if this is not what you wanted to happen, please\n\
             press CTRL-D or CTRL-C\n"
        );
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    }
}

/// Whether `w` is a count an option with an optional number takes (`-l 2`, `--max-lines 0`).
pub(super) fn is_count(w: &str) -> bool {
    !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit())
}

/// `-L N`, `-l [N]`, `--max-lines[=N]` (`flag` is `L` for `-L`): N lines per job; `-l` and
/// `--max-lines` without N, and `-l 0`, are 1; `-L 0` (also written `-L -0`) gives each line a
/// job that gets no value.
pub(super) fn max_lines(l: &mut Lines, flag: char, v: &str) -> Result<(), String> {
    let digits = if flag == 'L' {
        v.strip_prefix('-').unwrap_or(v)
    } else {
        v
    };
    let n = if digits.is_empty() && flag != 'L' {
        1
    } else {
        crate::units::parse_binary_prefix(digits).map_err(|e| format!("-{flag} '{v}': {e}"))?
    };
    l.max_lines = true;
    l.lines = match (flag, n) {
        ('L', 0) => 0,
        (_, 0) => 1,
        (_, n) => n,
    };
    Ok(())
}

/// How a job's values fill a word that holds `{}`: with `-N` and `-L` (`positional`) the word
/// is repeated for each value as with `-X` (each value of each input source's or column's, as
/// GNU Parallel repeats it); else as asked. `-N0` and `-L 0` (`bare`) put no value anywhere.
pub(super) fn job_spread(
    asked: frun_engine::exec::command::job::Spread,
    positional: bool,
    bare: bool,
) -> frun_engine::exec::command::job::Spread {
    use frun_engine::exec::command::job::Spread;
    match (asked, positional) {
        (Spread::One, true) if !bare => Spread::Context,
        (a, _) => a,
    }
}

impl Lines {
    /// Records per job for `-L`/`-l` (at least 1: `-L 0` runs one line per job).
    pub(super) fn per_job(&self) -> u64 {
        self.lines.max(1)
    }

    /// `-L 0`: the job gets no value.
    pub(super) fn bare(&self) -> bool {
        self.max_lines && self.lines == 0
    }
}
