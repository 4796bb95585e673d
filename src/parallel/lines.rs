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
