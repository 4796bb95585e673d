//! `--joblog FILE`: one line per finished batch in GNU Parallel's joblog format (sequence
//! number, host, start time, runtime, bytes sent and received, exit value, signal, command),
//! after a header line, written as batches finish.
//!
//! It opens the file (refusing what cannot hold a log), formats lines and writes each with one
//! call. It does not decide what a batch's exit value means, and it never writes to stdout:
//! `--joblog -` lines go through the emitter, which owns stdout.

use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The header line, as GNU Parallel writes it.
pub const HEADER: &[u8] =
    b"Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n";

/// Where joblog lines go.
pub enum Joblog {
    /// A file (or FIFO, or device) of its own.
    File {
        /// The open file, shared by the workers.
        file: Mutex<File>,
        /// Its name, for messages.
        name: String,
    },
    /// `-`: stdout, through the emitter, so a line never lands inside a batch's output.
    Stdout,
}

/// What the joblog (and a results table, `results::table`) says of one finished batch besides
/// its command line and output.
#[derive(Clone, Copy, Debug)]
pub struct JobFacts {
    /// 1-based, in input order.
    pub seq: u64,
    /// When the batch's command started.
    pub start: SystemTime,
    /// How long it ran.
    pub runtime: Duration,
    /// Bytes written to the command's stdin.
    pub send: u64,
    /// Bytes of its stdout.
    pub receive: u64,
    /// The exit status; -1 when frun killed it (`--job-timeout`) or it could not start.
    pub exitval: i32,
    /// The signal that ended it, 0 if none.
    pub signal: i32,
}

impl JobFacts {
    /// The start, in seconds since the epoch (as both show it, to the millisecond).
    pub fn start_secs(&self) -> f64 {
        self.start
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64()
    }
}

/// One finished batch, as its joblog line shows it.
pub struct Entry<'a, I: Iterator<Item = &'a [u8]>> {
    /// What the line says of it besides the command.
    pub facts: JobFacts,
    /// The command line's words, as run: each shell-quoted where it needs it (as GNU Parallel
    /// shows values), except the first when `raw_first` (a shell line, shown as it is).
    pub command: I,
    /// The first word is a shell line, shown unquoted.
    pub raw_first: bool,
}

impl<'a, I: Iterator<Item = &'a [u8]>> Entry<'a, I> {
    /// Appends the entry's line to `out`.
    pub fn format(self, out: &mut Vec<u8>) {
        use std::io::Write;
        let f = self.facts;
        let _ = write!(
            out,
            "{}\t:\t{:.3}\t{:10.3}\t{}\t{}\t{}\t{}\t",
            f.seq,
            f.start_secs(),
            f.runtime.as_secs_f64(),
            f.send,
            f.receive,
            f.exitval,
            f.signal
        );
        let at = out.len();
        command_line(self.command, self.raw_first, out);
        // One line per batch, whatever the words hold: a newline is written as a NUL byte,
        // as GNU Parallel writes it (the command is the last field: tabs stay).
        for b in &mut out[at..] {
            if *b == b'\n' {
                *b = 0;
            }
        }
        out.push(b'\n');
    }
}

/// Appends the command line of `words` as the joblog (and GNU Parallel's messages) show it:
/// each word shell-quoted where it needs it, except the first when `raw_first` (a shell line,
/// shown as it is), separated by spaces.
pub fn command_line<'a>(words: impl Iterator<Item = &'a [u8]>, raw_first: bool, out: &mut Vec<u8>) {
    for (i, w) in words.enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        if i == 0 && raw_first {
            out.extend_from_slice(w);
        } else {
            crate::exec::command::argv::shell_quote(w, out);
        }
    }
}

/// Why a joblog cannot be opened: one line, for a usage error.
fn refuse(path: &Path, why: &str) -> String {
    format!("--joblog {}: {why}", path.display())
}

impl Joblog {
    /// Opens `path` for the run (`-`: stdout), truncating a regular file and writing the header
    /// there. Refused: a directory, a FIFO nobody reads, a location that cannot be written, and
    /// the input file itself (`input`: its device and inode).
    pub fn open(path: &Path, input: Option<(u64, u64)>) -> Result<Joblog, String> {
        Joblog::open_as(path, input, true)
    }

    /// [`Joblog::open`], writing the header only when `header`.
    fn open_as(path: &Path, input: Option<(u64, u64)>, header: bool) -> Result<Joblog, String> {
        if path.as_os_str().as_bytes() == b"-" {
            return Ok(Joblog::Stdout);
        }
        // Checked before anything is truncated.
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => return Err(refuse(path, "is a directory")),
            Ok(m) if m.is_file() && input == Some((m.dev(), m.ino())) => {
                return Err(refuse(path, "is the input file"));
            }
            _ => {}
        }
        let fifo = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).mode(0o666);
        if fifo {
            // Not blocking until a reader comes: a FIFO nobody reads is refused now.
            opts.custom_flags(libc::O_NONBLOCK);
        } else {
            // Appending (emptied once open): a write cut short is taken back (see `write`)
            // without leaving a hole.
            opts.append(true);
        }
        let file = opts.open(path).map_err(|e| {
            let why = match e.raw_os_error() {
                Some(libc::ENXIO) => "is a FIFO nobody reads".to_string(),
                _ => format!("cannot open: {}", crate::sys::errors::os_message(&e)),
            };
            refuse(path, &why)
        })?;
        if fifo {
            set_blocking(&file).map_err(|e| refuse(path, &crate::sys::errors::os_message(&e)))?;
        } else if file.metadata().is_ok_and(|m| m.is_file()) {
            file.set_len(0).map_err(|e| {
                refuse(
                    path,
                    &format!("cannot empty it: {}", crate::sys::errors::os_message(&e)),
                )
            })?;
        }
        let log = Joblog::File {
            file: Mutex::new(file),
            name: path.display().to_string(),
        };
        if header {
            log.write(HEADER)
                .map_err(|e| refuse(path, &format!("cannot write: {}", log.error(&e))))?;
        }
        Ok(log)
    }

    /// Opens `path` to go on with it (`frun parallel --resume…`, `--joblog +FILE`): lines are
    /// appended after its last whole line, and the header (when `header`) is written only to an
    /// empty or new file. Refused as [`Joblog::open`] refuses.
    pub fn append(path: &Path, input: Option<(u64, u64)>, header: bool) -> Result<Joblog, String> {
        let meta = std::fs::metadata(path);
        let new = meta
            .as_ref()
            .is_err_and(|e| e.kind() == io::ErrorKind::NotFound);
        if path.as_os_str().as_bytes() == b"-" || !(new || meta.is_ok_and(|m| m.is_file())) {
            return Joblog::open_as(path, input, header);
        }
        match std::fs::metadata(path) {
            Ok(m) if input == Some((m.dev(), m.ino())) => {
                return Err(refuse(path, "is the input file"));
            }
            _ => {}
        }
        let file = std::fs::OpenOptions::new()
            .append(true)
            .read(true)
            .create(true)
            .mode(0o666)
            .open(path)
            .map_err(|e| {
                refuse(
                    path,
                    &format!("cannot open: {}", crate::sys::errors::os_message(&e)),
                )
            })?;
        cut_torn_line(&file, path)?;
        let empty = file.metadata().is_ok_and(|m| m.len() == 0);
        let log = Joblog::File {
            file: Mutex::new(file),
            name: path.display().to_string(),
        };
        if empty && header {
            log.write(HEADER)
                .map_err(|e| refuse(path, &format!("cannot write: {}", log.error(&e))))?;
        }
        Ok(log)
    }

    /// Writes one or more whole lines to the file (one call, under the log's own lock, taken
    /// once per batch). Not for [`Joblog::Stdout`].
    pub fn write(&self, lines: &[u8]) -> io::Result<()> {
        match self {
            Joblog::File { file, .. } => {
                use std::io::Write;
                let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
                // A regular file's write cut short (a full disk) is taken back, so the log
                // ends with a whole line and the next one never lands on a torn one.
                let before = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
                let r = f.write_all(lines);
                if let (Err(_), Some(len)) = (&r, before) {
                    let _ = f.set_len(len);
                }
                r
            }
            Joblog::Stdout => Ok(()),
        }
    }

    /// The message for a write error.
    pub fn error(&self, e: &io::Error) -> String {
        let name = match self {
            Joblog::File { name, .. } => name.as_str(),
            Joblog::Stdout => "-",
        };
        format!(
            "cannot write the joblog {name}: {}",
            crate::sys::errors::os_message(e)
        )
    }
}

/// One job as a joblog line recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logged {
    /// Its number, from 1.
    pub seq: u64,
    /// It exited 0 and no signal ended it.
    pub succeeded: bool,
    /// Its command line, as the log shows it.
    pub command: Vec<u8>,
}

/// Cuts off a log's last line when it has no newline (a crash or a full disk cut a write
/// short), before anything is appended: a line glued onto it would be lost, or misread.
fn cut_torn_line(file: &File, path: &Path) -> Result<(), String> {
    use std::io::Read;
    use std::os::unix::fs::FileExt;
    let cannot = |what: &str, e: io::Error| {
        refuse(
            path,
            &format!("cannot {what}: {}", crate::sys::errors::os_message(&e)),
        )
    };
    let len = file.metadata().map_err(|e| cannot("read", e))?.len();
    let mut last = [0u8];
    if len == 0 {
        return Ok(());
    }
    file.read_exact_at(&mut last, len - 1)
        .map_err(|e| cannot("read", e))?;
    if last[0] == b'\n' {
        return Ok(());
    }
    let mut text = Vec::new();
    let reader = file;
    reader
        .take(len)
        .read_to_end(&mut text)
        .map_err(|e| cannot("read", e))?;
    let whole = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    file.set_len(whole as u64)
        .and_then(|()| file.sync_data())
        .map_err(|e| cannot("cut its torn last line", e))?;
    say!(
        "--joblog {}: its last line was cut short (a crash or a full disk); dropped it",
        path.display()
    );
    Ok(())
}

/// A job's line: `seq host start runtime send receive exitval signal command`, every number
/// where GNU Parallel writes one. None for anything else.
fn job_line(line: &[u8]) -> Option<Logged> {
    let f: Vec<&[u8]> = line.splitn(9, |&b| b == b'\t').collect();
    let [
        seq,
        host,
        start,
        runtime,
        send,
        receive,
        exitval,
        signal,
        command,
    ] = f.as_slice()
    else {
        return None;
    };
    let text = |f: &[u8]| std::str::from_utf8(f).ok().map(|s| s.trim().to_owned());
    let int = |f: &[u8]| text(f)?.parse::<i64>().ok();
    let real = |f: &[u8]| text(f)?.parse::<f64>().ok().filter(|x| x.is_finite());
    let seq = int(seq).filter(|&n| n > 0)?;
    if host.is_empty() || real(start).is_none() || real(runtime).is_none() {
        return None;
    }
    int(send).filter(|&n| n >= 0)?;
    int(receive).filter(|&n| n >= 0)?;
    let (exitval, signal) = (int(exitval)?, int(signal)?);
    Some(Logged {
        seq: seq as u64,
        succeeded: exitval == 0 && signal == 0,
        command: command.to_vec(),
    })
}

/// The jobs a joblog recorded, in the file's order (a job run again appears again); None when
/// there is no such file. Header lines, empty lines and a last line without its newline (cut
/// short by a crash or a full disk; appending cuts it off) are passed over; any other line
/// must be a whole job's line, or the log is refused, naming the line: a line that two
/// writes ran into would lose a job, or misread one. The error is one line.
pub fn read(path: &Path) -> Result<Option<Vec<Logged>>, String> {
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(refuse(
                path,
                &format!("cannot read: {}", crate::sys::errors::os_message(&e)),
            ));
        }
    };
    let whole = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut jobs = Vec::new();
    for (i, line) in text[..whole].split(|&b| b == b'\n').enumerate() {
        if line.is_empty() || line == &HEADER[..HEADER.len() - 1] {
            continue;
        }
        match job_line(line) {
            Some(job) => jobs.push(job),
            None => {
                return Err(refuse(
                    path,
                    &format!(
                        "line {} is not a joblog entry ({:?}); frun does not resume from a \
                         damaged log (mend or remove that line)",
                        i + 1,
                        String::from_utf8_lossy(&line[..line.len().min(60)])
                    ),
                ));
            }
        }
    }
    Ok(Some(jobs))
}

fn set_blocking(file: &File) -> io::Result<()> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let flags = OFlag::from_bits_truncate(fcntl(file, FcntlArg::F_GETFL)?);
    fcntl(file, FcntlArg::F_SETFL(flags - OFlag::O_NONBLOCK))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_has_gnu_parallels_fields_and_widths() {
        let mut out = Vec::new();
        let words: [&[u8]; 3] = [b"echo", b"a b", b"c\nd"];
        let mut raw = Vec::new();
        Entry {
            facts: JobFacts {
                seq: 1,
                start: UNIX_EPOCH,
                runtime: Duration::ZERO,
                send: 0,
                receive: 0,
                exitval: 0,
                signal: 0,
            },
            command: [&b"echo 'x'; exit\t1"[..], b"a b"].into_iter(),
            raw_first: true,
        }
        .format(&mut raw);
        assert!(
            raw.ends_with(b"\techo 'x'; exit\t1 'a b'\n"),
            "{}",
            String::from_utf8_lossy(&raw)
        );
        Entry {
            facts: JobFacts {
                seq: 7,
                start: UNIX_EPOCH + Duration::from_millis(1_700_000_000_123),
                runtime: Duration::from_millis(2_500),
                send: 3,
                receive: 4,
                exitval: -1,
                signal: 15,
            },
            command: words.iter().copied(),
            raw_first: false,
        }
        .format(&mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "7\t:\t1700000000.123\t     2.500\t3\t4\t-1\t15\techo 'a b' 'c\0d'\n"
        );
    }
}
