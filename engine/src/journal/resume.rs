//! A journal read back for `--resume` (or by a results directory): a bounded read of a file
//! that passes the rules of `file`, parsed by `format`; and [`Restore`], which brings stdout
//! back to the output the checkpoint recorded. It must not write a journal, nor choose which
//! file a run journals to.

use std::io::{self, Read};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::stat::{SFlag, fstat};
use nix::unistd::{Whence, ftruncate, lseek};

use super::Checkpoint;
use super::file::{FileId, open_owned};
use super::format::parse;
use crate::sys::errors::count;

/// The largest journal read when nothing bounds it better (the input's size is not known).
pub const READ_CAP: u64 = 1 << 30;
/// The most a journal can hold besides its `done` entries: its header, and the few lines each
/// run that continued it added.
const JOURNAL_SLACK: u64 = 16 << 20;
/// The longest `done` entry: four 20-digit numbers, three spaces, `done ` and a newline.
const LONGEST_ENTRY: u64 = 89;

/// The largest journal an input of `input_size` bytes can have: every `done` entry covers at
/// least one input byte that no other entry covers (a resumed run skips what is done).
pub fn read_cap(input_size: Option<u64>) -> u64 {
    input_size.map_or(READ_CAP, |n| {
        JOURNAL_SLACK.saturating_add(n.saturating_mul(LONGEST_ENTRY))
    })
}

/// A journal read back, with the file it was read from.
pub struct Loaded {
    /// What the journal holds.
    pub checkpoint: Checkpoint,
    /// The journal file's identity, so the run can refuse one that is also its input or output.
    pub id: FileId,
    /// The journal's bytes, as read.
    pub text: Vec<u8>,
}

/// Reads a journal: a regular file (never through a symbolic link, never a FIFO or a device),
/// owned by this user and writable by nobody else, of at most `cap` bytes. The error is a
/// one-line explanation.
pub fn load(path: &Path, cap: u64) -> Result<Loaded, String> {
    let cannot = |e: io::Error| {
        format!(
            "cannot read {}: {}",
            path.display(),
            crate::sys::errors::os_message(&e)
        )
    };
    let file = open_owned(path)?;
    let m = file.metadata().map_err(cannot)?;
    let too_large = || {
        format!(
            "{} is larger than a checkpoint of this input can be ({cap} bytes)",
            path.display()
        )
    };
    if m.len() > cap {
        return Err(too_large());
    }
    let mut text = Vec::with_capacity(m.len() as usize);
    (&file)
        .take(cap.saturating_add(1))
        .read_to_end(&mut text)
        .map_err(cannot)?;
    if text.len() as u64 > cap {
        return Err(too_large());
    }
    let checkpoint =
        parse(&text).map_err(|e| format!("{} is not a usable checkpoint: {e}", path.display()))?;
    Ok(Loaded {
        checkpoint,
        id: FileId::of(&m),
        text,
    })
}

/// Reads a journal (see [`load`], bounded by [`READ_CAP`]).
pub fn read(path: &Path) -> Result<Checkpoint, String> {
    load(path, READ_CAP).map(|l| l.checkpoint)
}

/// Stdout's identity for resuming: its byte count when it is a regular file.
pub fn stdout_size(fd: impl AsFd) -> Option<u64> {
    let st = fstat(fd).ok()?;
    (st.st_mode & SFlag::S_IFMT.bits() == SFlag::S_IFREG.bits()).then_some(st.st_size as u64)
}

/// Bringing stdout back to the output a checkpoint recorded: checked at start, done once the
/// input is known to be the one the checkpoint was written for.
pub struct Restore {
    from: PathBuf,
    batches: u64,
    /// The recorded byte count (None: the output went straight to stdout, `-u`).
    want: Option<u64>,
    /// Stdout goes to the program that started the run, which collects it: there is no
    /// earlier output there to cut, nor a file to tell the user about.
    to_caller: bool,
}

impl Restore {
    /// Refuses at start what cannot work: a regular stdout shorter than the recorded output,
    /// unless it is empty (a new file for the rest, as forkrun's resume writes it).
    pub(super) fn check(from: &Path, cp: &Checkpoint) -> Result<Restore, String> {
        if let (Some(want), Some(size)) = (cp.stdout, stdout_size(io::stdout())) {
            if size < want && size > 0 {
                return Err(format!(
                    "--resume: stdout holds {}, fewer than the {} of output {} recorded; \
                     append to the same output file (>>) when resuming",
                    count(size, "byte", "bytes"),
                    count(want, "byte", "bytes"),
                    from.display()
                ));
            }
        }
        Ok(Restore {
            from: from.to_path_buf(),
            batches: cp.batches,
            want: cp.stdout,
            to_caller: false,
        })
    }

    /// The same, for a run whose stdout goes to the program that started it (the Python
    /// module): resuming only says how much was done.
    pub fn to_caller(self) -> Restore {
        Restore {
            to_caller: true,
            ..self
        }
    }

    /// Cuts stdout back to the recorded output (a regular file), or says what to cut; one line
    /// on stderr either way.
    pub fn apply(&self) -> Result<(), String> {
        let from = self.from.display();
        let done = count(self.batches, "batch", "batches");
        if self.to_caller {
            say!("resuming {from}: {done} already done; their results are not produced again");
            return Ok(());
        }
        let Some(want) = self.want else {
            say!(
                "resuming {from}: {done} already done; their output went straight to \
                 stdout (-u), so it cannot be matched up"
            );
            return Ok(());
        };
        let bytes = count(want, "byte", "bytes");
        let stdout = io::stdout();
        // An empty stdout is a new file for the rest of the output: the earlier output stays
        // where it is, and this run's goes after it when the two are concatenated.
        let Some(size) = stdout_size(&stdout).filter(|&n| n > 0 || want == 0) else {
            say!(
                "resuming {from}: {done} already done; keep only the first {bytes} of the \
                 earlier output (truncate -s {want} FILE)"
            );
            return Ok(());
        };
        if size > want {
            if let Err(e) = ftruncate(&stdout, want as libc::off_t) {
                return Err(format!(
                    "--resume: cannot truncate stdout to {bytes}: {}",
                    crate::sys::errors::os_message(&e.into())
                ));
            }
        }
        // Where stdout does not append, the next write goes where the recorded output ends.
        if fcntl(&stdout, FcntlArg::F_GETFL)
            .is_ok_and(|flags| !OFlag::from_bits_truncate(flags).contains(OFlag::O_APPEND))
        {
            let _ = lseek(&stdout, want as libc::off_t, Whence::SeekSet);
        }
        if size > want {
            say!(
                "resuming {from}: {done} already done; truncated stdout from {size} to the \
                 {bytes} they wrote"
            );
        } else {
            say!("resuming {from}: {done} already done ({bytes} of output)");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_read_limit_grows_with_the_input() {
        assert_eq!(read_cap(None), READ_CAP);
        assert_eq!(read_cap(Some(0)), JOURNAL_SLACK);
        assert_eq!(read_cap(Some(10)), JOURNAL_SLACK + 890);
        assert_eq!(read_cap(Some(u64::MAX)), u64::MAX);
    }
}
