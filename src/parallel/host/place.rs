//! `--wd DIR`, `--nice N`, `--load N`, `--cat`/`--fifo` and `--open-tty`: shell code put before
//! each job's line so that the job's command starts only once the load is at most N, finds its
//! `--pipe` block in a file or named pipe called `{}`, runs in that
//! directory (made when missing; `...` a fresh one under `~/.parallel/tmp`, removed when the job
//! ends), at that niceness, reading the terminal (or nothing when there is none). It writes the
//! code only; it runs nothing itself. (`--memfree SIZE` is the engine's: only where it reads the
//! memory is chosen here.)

use frun_engine::exec::command::argv::shell_quote;

/// Where and how nicely jobs run.
#[derive(Default)]
pub(in crate::parallel) struct Place {
    pub(in crate::parallel) wd: Option<Vec<u8>>,
    pub(in crate::parallel) nice: Option<i32>,
    /// `--load`: the load average (times 100) above which a job waits to start.
    pub(in crate::parallel) load: Option<u64>,
    /// `--open-tty`, `-o`, `--tty`: the job's stdin is the terminal (else /dev/null).
    pub(in crate::parallel) tty: bool,
    /// `--cat`, `--fifo` (with `--pipe`): the job's block is in a file, or comes through a
    /// named pipe, whose name is `{}`.
    pub(in crate::parallel) pipe_file: Option<PipeFile>,
}

/// How `--pipe`'s block reaches a job whose `{}` is a file name.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(in crate::parallel) enum PipeFile {
    /// `--cat`: a temporary file holding the block, removed when the job ends.
    Cat,
    /// `--fifo`: a named pipe the block is written into as the job reads it.
    Fifo,
}

/// The shell variable that holds the `--cat`/`--fifo` file's name in a job's shell.
const PIPE_FILE_VAR: &[u8] = b"\"$_frun_pipe_file\"";

/// A `--pipe` command word with each `whole` replacement string (`{}`) made the `--cat`/
/// `--fifo` file's name (a quoted shell variable of the job's shell).
pub(in crate::parallel) fn with_pipe_file(word: &[u8], whole: &[u8]) -> Vec<u8> {
    if whole.is_empty() {
        return word.to_vec();
    }
    let mut out = Vec::with_capacity(word.len() + 16);
    let mut rest = word;
    while let Some(i) = memchr::memmem::find(rest, whole) {
        out.extend_from_slice(&rest[..i]);
        out.extend_from_slice(PIPE_FILE_VAR);
        rest = &rest[i + whole.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// `--load N` or `N%` (of the CPUs frun may use): the limit, times 100.
pub(in crate::parallel) fn load_limit(v: &str, cpus: u64) -> Result<u64, String> {
    let bad = || format!("--load '{v}': expected a number or a percentage");
    let (n, per_cent) = match v.strip_suffix('%') {
        Some(p) => (p, true),
        None => (v, false),
    };
    let n: f64 = n.trim().parse().map_err(|_| bad())?;
    if !n.is_finite() || n <= 0.0 {
        return Err(bad());
    }
    let load = if per_cent { n * cpus as f64 } else { n * 100.0 };
    Ok(load.round() as u64)
}

/// `--nice N`: a niceness from -20 to 19.
pub(in crate::parallel) fn niceness(v: &str) -> Result<i32, String> {
    match v.trim().parse::<i32>() {
        Ok(n) if (-20..=19).contains(&n) => Ok(n),
        _ => Err(format!("--nice '{v}': expected a niceness from -20 to 19")),
    }
}

impl Place {
    /// `$FRUN_MEMINFO`, when set: a file of `/proc/meminfo`'s shape (a container's view of its
    /// own limit; tests) where the engine reads the memory available (`--memfree`, and the
    /// room `--line-buffer` has for long lines, a quarter of it).
    pub(in crate::parallel) fn meminfo() -> Option<std::path::PathBuf> {
        std::env::var_os("FRUN_MEMINFO")
            .filter(|p| !p.is_empty())
            .map(std::path::PathBuf::from)
    }

    /// The code to run before each job's line (then `before`, `$PARALLEL_ENV`'s), or None
    /// when neither option was given. `...`'s directory is named by this machine, frun's
    /// process id and the job shell's, and the job's shell removes it on exit.
    pub(in crate::parallel) fn prologue(&self, before: Option<Vec<u8>>) -> Option<Vec<u8>> {
        if self.wd.is_none()
            && self.nice.is_none()
            && self.load.is_none()
            && self.pipe_file.is_none()
            && !self.tty
        {
            return before;
        }
        let mut code = Vec::new();
        if let Some(limit) = self.load {
            // GNU Parallel's load is the number of processes running right now, not an
            // average over minutes: /proc/loadavg's fourth field is `RUNNING/ALL`, the job's
            // own shell (reading it) one of the running. Times 100, as the limit.
            code.extend_from_slice(
                format!(
                    "while read _frun_a _frun_b _frun_c _frun_r _frun_x </proc/loadavg; do \
                     _frun_r=$(( (${{_frun_r%/*}} - 1) * 100 )); [ \"$_frun_r\" -le {limit} ] && \
                     break; sleep 1; done 2>/dev/null; \
                     unset _frun_a _frun_b _frun_c _frun_r _frun_x\n"
                )
                .as_bytes(),
            );
        }
        if let Some(n) = self.nice {
            code.extend_from_slice(format!("renice -n {n} -p $$ >/dev/null 2>&1\n").as_bytes());
        }
        // The block (the job's stdin) goes into a new file or named pipe, mode 0600, in
        // $TMPDIR (else /tmp); it is removed when the job's shell exits.
        match self.pipe_file {
            Some(PipeFile::Cat) => code.extend_from_slice(
                b"_frun_pipe_file=$(mktemp \"${TMPDIR:-/tmp}/parXXXXXX\") || exit 255\n\
                  trap 'rm -f \"$_frun_pipe_file\"' EXIT\n\
                  cat >\"$_frun_pipe_file\" || exit 255\n\
                  exec </dev/null\n",
            ),
            Some(PipeFile::Fifo) => code.extend_from_slice(
                b"_frun_pipe_file=$(mktemp -u \"${TMPDIR:-/tmp}/parXXXXXX\") && \
                  mkfifo -m 600 \"$_frun_pipe_file\" || exit 255\n\
                  trap 'rm -f \"$_frun_pipe_file\"' EXIT\n\
                  exec 3<&0\n\
                  cat <&3 >\"$_frun_pipe_file\" &\n\
                  exec 3<&- </dev/null\n",
            ),
            None => {}
        }
        if self.tty {
            code.extend_from_slice(
                b"if (: </dev/tty) 2>/dev/null; then exec </dev/tty; else exec </dev/null; fi\n",
            );
        }
        match self.wd.as_deref() {
            Some(b"...") => {
                let mut dir = b"${HOME}/.parallel/tmp/".to_vec();
                shell_quote(hostname().as_bytes(), &mut dir);
                dir.extend_from_slice(format!("-{}-$$", std::process::id()).as_bytes());
                code.extend_from_slice(b"_frun_wd=");
                code.extend_from_slice(&dir);
                code.extend_from_slice(
                    b"\nmkdir -p \"$_frun_wd\" && cd \"$_frun_wd\" || exit 255\n\
                      trap 'cd / && rm -rf \"$_frun_wd\"' EXIT\n",
                );
            }
            Some(dir) => {
                let mut q = Vec::new();
                shell_quote(dir, &mut q);
                code.extend_from_slice(b"{ [ -d ");
                code.extend_from_slice(&q);
                code.extend_from_slice(b" ] || mkdir -p -- ");
                code.extend_from_slice(&q);
                code.extend_from_slice(b"; } 2>/dev/null; cd -- ");
                code.extend_from_slice(&q);
                code.extend_from_slice(b" || exit 255\n");
            }
            None => {}
        }
        if let Some(b) = before {
            code.extend_from_slice(&b);
        }
        Some(code)
    }
}

/// This machine's name, as `hostname` prints it ("localhost" when it cannot be read).
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_asked_keeps_the_code_before() {
        assert_eq!(Place::default().prologue(None), None);
        assert_eq!(
            Place::default().prologue(Some(b"x=1\n".to_vec())),
            Some(b"x=1\n".to_vec())
        );
    }

    #[test]
    fn load_is_a_number_or_a_share_of_the_cpus() {
        assert_eq!(load_limit("8", 2), Ok(800));
        assert_eq!(load_limit("300%", 2), Ok(600));
        assert_eq!(load_limit("0.5", 4), Ok(50));
        assert!(load_limit("x", 2).is_err());
        assert!(load_limit("0", 2).is_err());
    }

    #[test]
    fn niceness_range() {
        assert_eq!(niceness("18"), Ok(18));
        assert!(niceness("20").is_err());
        assert!(niceness("x").is_err());
    }
}
