//! The journal's lines (version 1): the text each entry is written as, and a journal's text
//! parsed back into a [`Checkpoint`]. Pure text in and out: it must not open, lock or sync a
//! file, nor decide what is done (it only says what a journal records).
//!
//! # Format (version 1)
//!
//! Text, one entry per line, fields separated by one space:
//!
//! ```text
//! frun-checkpoint 1
//! # command: <the command words, shell-quoted>       (comment lines start with '#')
//! # resume: frun --resume FILE <the same arguments>
//! run <sha256 of the command and the options that shape its output, hex>
//! stdout <byte count of stdout when the run began>
//! input <head length> <sha256 of the input's first head-length bytes, hex> <size or ->
//! task <index> <count> <chunk> <order>                (one task of a sharded run, --results)
//! done <start> <end> <stdout>
//! failed <start> <end>                               (a failed batch: not done)
//! stopped <reason>
//! end <input length>
//! ```
//!
//! `done` says the input bytes `[start, end)` (whole records) were processed and their output
//! written, after which stdout held `<stdout>` bytes (`-` with `-u`, where frun does not see the
//! output). Entries are buffered and written in groups: stdout is synced first, then the
//! entries are appended and the journal synced, so an entry never claims output that a crash
//! could lose. A torn last line is ignored. A resumed run appends to the same file.
//!
//! `failed` names a batch whose command exited non-zero (not retried): its output was written,
//! but it is not done. Where output is counted, nothing after it in the same run is recorded as
//! done, so a resume cuts stdout back to before that output and runs the failed batch and
//! everything after it again (exactly one run's output, and its exit status, in the end).

use std::io::Write;
use std::path::Path;

use super::{Checkpoint, InputId, TaskLine, merge_intervals};

/// The first line of every version-1 journal.
pub const MAGIC: &str = "frun-checkpoint 1";

/// A count that may be unknown, as the journal writes it (`-`: not known).
fn count_or_dash(n: Option<u64>) -> String {
    n.map_or("-".to_string(), |n| n.to_string())
}

/// The lines that identify a new journal's run: the command's hash and stdout's byte count when
/// the run began.
pub(super) fn identity(run: &str, stdout_base: Option<u64>) -> String {
    format!("run {run}\nstdout {}\n", count_or_dash(stdout_base))
}

/// The first lines of a new journal: the version, the comment for humans, how to resume it
/// (when `resume_as` names the file), then `header` (whole lines).
pub(super) fn head(comment: &str, resume_as: Option<&Path>, header: &str) -> String {
    let mut head = format!("{MAGIC}\n# {comment}\n");
    if let Some(path) = resume_as {
        head.push_str(&format!(
            "# resume: frun --resume {} <the same arguments, the same input>\n",
            path.display()
        ));
    }
    head.push_str(header);
    head
}

// Each entry below is appended to `out`, a buffer in memory (writing to it cannot fail).

/// `input`: the input's identity.
pub(super) fn input(out: &mut Vec<u8>, id: &InputId) {
    let size = count_or_dash(id.size);
    let _ = writeln!(out, "input {} {} {size}", id.head_len, id.head_hash);
}

/// `done`: input `[start, end)` is done, stdout at `stdout` bytes after it.
pub(super) fn done(out: &mut Vec<u8>, start: u64, end: u64, stdout: Option<u64>) {
    let _ = match stdout {
        Some(n) => writeln!(out, "done {start} {end} {n}"),
        None => writeln!(out, "done {start} {end} -"),
    };
}

/// `failed`: the batch of input `[start, end)` failed.
pub(super) fn failed(out: &mut Vec<u8>, start: u64, end: u64) {
    let _ = writeln!(out, "failed {start} {end}");
}

/// `stopped`: the run was stopped, and why.
pub(super) fn stopped(out: &mut Vec<u8>, reason: &str) {
    let _ = writeln!(out, "stopped {reason}");
}

/// `end`: the scan reached the end of an input of `input_len` bytes.
pub(super) fn end(out: &mut Vec<u8>, input_len: u64) {
    let _ = writeln!(out, "end {input_len}");
}

/// The complete lines of `text` after its first (the version, checked): a last line without
/// its newline was torn by a crash and is ignored, and so are empty lines.
fn body(text: &[u8]) -> Result<impl Iterator<Item = &[u8]>, String> {
    let complete = match text.iter().rposition(|&b| b == b'\n') {
        Some(i) => &text[..=i],
        None => &[][..],
    };
    let mut lines = complete.split(|&b| b == b'\n').filter(|l| !l.is_empty());
    match lines.next() {
        Some(l) if l == MAGIC.as_bytes() => Ok(lines),
        Some(l) if l.starts_with(b"frun-checkpoint ") => Err(format!(
            "written by another version ({})",
            String::from_utf8_lossy(l)
        )),
        _ => Err(format!("it does not start with '{MAGIC}'")),
    }
}

/// A journal's text read back. The error says why it is not a usable journal.
pub(super) fn parse(text: &[u8]) -> Result<Checkpoint, String> {
    let mut cp = Checkpoint::default();
    let mut base = None;
    let mut intervals = Vec::new();
    for line in body(text)? {
        let line = std::str::from_utf8(line).map_err(|_| "a line is not text".to_string())?;
        if line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split(' ').collect();
        let num = |s: &str| {
            s.parse::<u64>()
                .map_err(|_| format!("bad number in '{line}'"))
        };
        match f.as_slice() {
            ["run", hash] => cp.run = hash.to_string(),
            // The first one counts (`-`: stdout was not a regular file).
            ["stdout", n] => {
                if base.is_none() {
                    base = Some(if *n == "-" { None } else { Some(num(n)?) });
                }
            }
            ["input", len, hash, size] => {
                cp.input = Some(InputId {
                    head_len: num(len)?,
                    head_hash: hash.to_string(),
                    size: if *size == "-" { None } else { Some(num(size)?) },
                })
            }
            ["done", start, end, out] => {
                let (s, e) = (num(start)?, num(end)?);
                if e < s {
                    return Err(format!("bad interval in '{line}'"));
                }
                intervals.push((s, e));
                cp.batches += 1;
                cp.stdout = if *out == "-" { None } else { Some(num(out)?) };
                cp.entries.push((s, e, cp.stdout));
            }
            ["task", index, count, chunk, order] => {
                cp.task = Some(TaskLine {
                    index: num(index)?,
                    count: num(count)?,
                    chunk: num(chunk)?,
                    order: order.to_string(),
                })
            }
            ["end", len] => cp.end = Some(num(len)?),
            ["stopped", ..] | ["failed", ..] => {}
            _ => return Err(format!("unknown entry '{line}'")),
        }
    }
    if cp.run.is_empty() {
        return Err("it names no command".into());
    }
    cp.base = base.flatten();
    if cp.batches == 0 {
        cp.stdout = cp.base;
    }
    cp.intervals = merge_intervals(intervals);
    Ok(cp)
}

#[cfg(test)]
mod tests {
    use super::*;
    // Written by a journal, read back: the format's two halves meet here.
    use crate::journal::{Journal, read};
    use std::fs::OpenOptions;

    #[test]
    fn round_trip_merges_intervals_and_ignores_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cp");
        let j = Journal::new(&path, "abc", "resume: frun x", Some(5), false, None);
        j.create_now().ok().unwrap();
        j.input(&InputId::of(b"hello", Some(10)));
        j.done(4, 8, Some(20));
        j.done(0, 4, Some(30));
        j.done(10, 12, Some(41));
        j.flush().unwrap();
        drop(j);
        // A crash in the middle of a write leaves a torn last line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"done 12 1").unwrap();
        let cp = read(&path).unwrap();
        assert_eq!(cp.run, "abc");
        assert_eq!(cp.intervals, [(0, 8), (10, 12)]);
        assert_eq!(cp.stdout, Some(41));
        assert_eq!(cp.batches, 3);
        assert_eq!(cp.input, Some(InputId::of(b"hello", Some(10))));
    }

    #[test]
    fn a_fresh_journal_resumes_at_its_stdout_base() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cp");
        let j = Journal::new(&path, "r", "h", Some(7), false, None);
        j.create_now().ok().unwrap();
        drop(j);
        let cp = read(&path).unwrap();
        assert_eq!((cp.stdout, cp.batches, cp.intervals.len()), (Some(7), 0, 0));
    }

    #[test]
    fn foreign_files_are_refused() {
        for text in [
            &b""[..],
            b"hello\n",
            b"frun-checkpoint 2\nrun x\n",
            b"frun-checkpoint 1\n",
        ] {
            assert!(parse(text).is_err(), "{:?}", String::from_utf8_lossy(text));
        }
    }
}
