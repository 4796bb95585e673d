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
//! stdout <byte count of stdout when the run began, or ->
//! input <head length> <sha256 of the input's first head-length bytes, hex> <size or ->
//! task <index> <count> <chunk> <order>                (one task of a sharded run, --results)
//! done <start> <end> <stdout> <number>
//! failed <start> <end>                               (a failed batch: not done)
//! stopped <reason>
//! stdout <byte count of stdout when a resumed run began, or ->
//! end <input length>
//! ```
//!
//! `done` says the input bytes `[start, end)` (whole records) were processed and their output
//! written, after which stdout held `<stdout>` bytes (`-` with `-u`, where frun does not see the
//! output); `<number>` counts the file's `done` entries from 1 (an older frun wrote none).
//! Entries are buffered and written in groups: stdout is synced first, then the entries are
//! appended and the journal synced, so an entry never claims output that a crash could lose.
//! A write cut short (a full disk) is taken back, and its entries are written again by the next
//! flush. A resumed run appends to the same file: first a `stdout` line (where its output count
//! starts: the recorded count, or 0 in a new output file), then its entries.
//!
//! `failed` names a batch whose command exited non-zero (not retried): its output was written,
//! but it is not done. Where output is counted, nothing after it in the same run is recorded as
//! done, so a resume cuts stdout back to before that output and runs the failed batch and
//! everything after it again (exactly one run's output, and its exit status, in the end).
//!
//! # Framing and the checks on reading
//!
//! Writer and reader agree on framing: an entry is a whole line. A last line without its
//! newline was torn by a crash or a full disk: the reader leaves it out, and a run that
//! continues the journal cuts it off the file before it appends anything, so an entry is never
//! glued onto a fragment. Every other line must be a whole entry of the list above, with its
//! numbers, and the entries must fit together; otherwise the journal is refused, naming the
//! file and the line, and nothing is resumed. The checks, for every order mode:
//!
//! - the `<number>`s count up by one from 1 (the `done` entries before count too): a `done`
//!   deleted from the middle or doubled is caught, whatever the order mode. (One deleted from
//!   the end is not, and needs not be: the journal then says what it said before that entry
//!   was written, and a resume cuts stdout back to the count before it and runs that input
//!   again.)
//! - no two `done` intervals overlap: a resumed run skips what is done, so no input is done
//!   twice.
//! - where output is counted, the counts never go down between one `stdout` line (a run's
//!   start) and the next, and none is below that line's count. (Order mode is not recorded, so
//!   nothing checks that `-k` entries follow input order: a batch given up, or a record too long
//!   to run, legitimately leaves them out of order or with a gap.)
//! - a `stopped` line's reason is words of lowercase letters or `signal N`: anything else
//!   there is another entry run into it.
//!
//! A journal an older frun continued into a new output file (its count starting again at 0
//! with no `stdout` line) fails the count check: it is refused (run afresh without it).

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

/// `done`: input `[start, end)` is done, stdout at `stdout` bytes after it; the journal's
/// `number`-th `done` entry (from 1).
pub(super) fn done(out: &mut Vec<u8>, start: u64, end: u64, stdout: Option<u64>, number: u64) {
    let _ = match stdout {
        Some(n) => writeln!(out, "done {start} {end} {n} {number}"),
        None => writeln!(out, "done {start} {end} - {number}"),
    };
}

/// `stdout`, written by a run that continues a journal: where its output count starts.
pub(super) fn run_start(out: &mut Vec<u8>, stdout_base: Option<u64>) {
    let _ = writeln!(out, "stdout {}", count_or_dash(stdout_base));
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

/// The complete lines of `text` with their line numbers (from 1), the version line checked: a
/// last line without its newline was torn by a crash or a full disk and is left out (a run
/// that continues the journal cuts it off first), and so are empty lines.
fn body(text: &[u8]) -> Result<impl Iterator<Item = (usize, &[u8])>, String> {
    let complete = &text[..complete_len(text)];
    let mut lines = complete
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.is_empty());
    match lines.next() {
        Some((1, l)) if l == MAGIC.as_bytes() => Ok(lines),
        Some((_, l)) if l.starts_with(b"frun-checkpoint ") => Err(format!(
            "written by another version ({})",
            String::from_utf8_lossy(l)
        )),
        _ => Err(format!("it does not start with '{MAGIC}'")),
    }
}

/// How many of `text`'s bytes are whole lines: up to and with its last newline. What follows
/// is a torn last line.
pub(super) fn complete_len(text: &[u8]) -> usize {
    text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

/// A `stopped` line's reason as frun writes it: `signal N`, or words of lowercase letters. A
/// line that has anything else (a digit, a sign) had another entry glued onto it, where a run
/// appended to a torn line.
fn plausible_reason(reason: &[&str]) -> bool {
    match reason {
        ["signal", n] => n.parse::<u32>().is_ok(),
        words => {
            !words.is_empty()
                && words
                    .iter()
                    .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase()))
        }
    }
}

/// The checks a journal's entries must pass, as it is read (see the module's rules).
#[derive(Default)]
struct Checks {
    /// The stdout count of the last `done` entry since the last `stdout` line (a run's start).
    last_count: Option<u64>,
    /// That `stdout` line's count.
    run_base: Option<u64>,
    /// Every `done` entry's interval, with its line number.
    spans: Vec<(u64, u64, usize)>,
    /// The line being read.
    line: usize,
}

impl Checks {
    /// A `stdout` line: a run (the first, or one that continued the journal) starts here.
    fn run_starts(&mut self, base: Option<u64>) {
        self.run_base = base;
        self.last_count = None;
    }

    /// A `done` entry of input `[s, e)`, with output count `out` and number `n` (None: not
    /// numbered), the `batches`-th entry.
    fn done(
        &mut self,
        (s, e): (u64, u64),
        out: Option<u64>,
        n: Option<u64>,
        batches: u64,
    ) -> Result<(), String> {
        if e < s {
            return Err("its interval ends before it starts".into());
        }
        if let Some(n) = n.filter(|&n| n != batches) {
            return Err(format!(
                "it is done entry {n}, but entry {batches} of the file (an entry is missing or \
                 doubled)"
            ));
        }
        if let Some(out) = out {
            if let Some(base) = self.run_base.filter(|&base| out < base) {
                return Err(format!(
                    "its output count {out} is below the {base} the run started at"
                ));
            }
            if let Some(last) = self.last_count.filter(|&last| out < last) {
                return Err(format!(
                    "its output count {out} is below the {last} of the entry before it"
                ));
            }
            self.last_count = Some(out);
        }
        self.spans.push((s, e, self.line));
        Ok(())
    }

    /// After the last line: no two `done` intervals may overlap (a resumed run skips what is
    /// done, so no input is done twice). The error names the later line.
    fn no_overlap(mut self) -> Result<(), String> {
        self.spans.retain(|&(s, e, _)| e > s);
        self.spans.sort_unstable();
        for w in self.spans.windows(2) {
            let ((_, e0, l0), (s1, e1, l1)) = (w[0], w[1]);
            if s1 < e0 {
                return Err(format!(
                    "line {}: input {s1}-{e1} is done twice (also at line {})",
                    l0.max(l1),
                    l0.min(l1)
                ));
            }
        }
        Ok(())
    }
}

/// A journal's text read back. The error says why it is not a usable journal, naming the line
/// it fails at.
pub(super) fn parse(text: &[u8]) -> Result<Checkpoint, String> {
    let mut cp = Checkpoint::default();
    let mut base = None;
    let mut checks = Checks::default();
    for (at, line) in body(text)? {
        checks.line = at;
        entry(line, &mut cp, &mut base, &mut checks).map_err(|e| format!("line {at}: {e}"))?;
    }
    if cp.run.is_empty() {
        return Err("it names no command".into());
    }
    checks.no_overlap()?;
    cp.base = base.flatten();
    if cp.batches == 0 {
        cp.stdout = cp.base;
    }
    cp.intervals = merge_intervals(cp.entries.iter().map(|&(s, e, _)| (s, e)).collect());
    Ok(cp)
}

/// One line of a journal, read into `cp` (`base`: the first `stdout` line's count, once read).
fn entry(
    line: &[u8],
    cp: &mut Checkpoint,
    base: &mut Option<Option<u64>>,
    checks: &mut Checks,
) -> Result<(), String> {
    let line = std::str::from_utf8(line).map_err(|_| "it is not text".to_string())?;
    if line.starts_with('#') {
        return Ok(());
    }
    let f: Vec<&str> = line.split(' ').collect();
    let num = |s: &str| {
        s.parse::<u64>()
            .map_err(|_| format!("bad number in '{line}'"))
    };
    let count = |s: &str| if s == "-" { Ok(None) } else { num(s).map(Some) };
    match f.as_slice() {
        ["run", hash] if !hash.is_empty() => {
            if !cp.run.is_empty() && cp.run != *hash {
                return Err("a second 'run' line names another command".into());
            }
            cp.run = hash.to_string()
        }
        // The first one is the output's count when the journal began; each run that continued
        // the journal wrote its own.
        ["stdout", n] => {
            let n = count(n)?;
            base.get_or_insert(n);
            checks.run_starts(n);
        }
        ["input", len, hash, size] => {
            cp.input = Some(InputId {
                head_len: num(len)?,
                head_hash: hash.to_string(),
                size: count(size)?,
            })
        }
        ["done", start, end, out, number @ ..] if number.len() <= 1 => {
            let (s, e) = (num(start)?, num(end)?);
            let out = count(out)?;
            let n = number.first().map(|n| num(n)).transpose()?;
            checks
                .done((s, e), out, n, cp.batches + 1)
                .map_err(|why| format!("'{line}': {why}"))?;
            cp.batches += 1;
            cp.stdout = out;
            cp.entries.push((s, e, out));
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
        ["failed", start, end] => {
            if num(end)? < num(start)? {
                return Err(format!("bad interval in '{line}'"));
            }
        }
        ["stopped", reason @ ..] if plausible_reason(reason) => {}
        _ => return Err(format!("unknown entry '{line}'")),
    }
    Ok(())
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

    /// A journal's text: the version, a `run` line, then `lines`.
    fn journal(lines: &str) -> Vec<u8> {
        format!("{MAGIC}\n# c\nrun r\nstdout 0\n{lines}").into_bytes()
    }

    #[test]
    fn entries_that_do_not_fit_together_are_refused_naming_the_line() {
        for (lines, at) in [
            // Entry 2 deleted.
            ("done 0 2 5 1\ndone 4 6 9 3\n", "line 6:"),
            // Entry 1 doubled.
            ("done 0 2 5 1\ndone 0 2 5 1\n", "line 6:"),
            // Overlapping input (unnumbered, as an older frun wrote them).
            ("done 0 4 5\ndone 2 6 9\n", "line 6:"),
            // The output count goes back within one run.
            ("done 0 2 5\ndone 2 4 3\n", "line 6:"),
            // Below the run's start.
            ("stdout 10\ndone 0 2 5\n", "line 6:"),
            // Two entries run together: after a `done`, after a `stopped` line.
            ("done 0 2 5 1done 2 4 7 2\n", "line 5:"),
            ("done 0 2 5 1\nstopped signal 2done 2 4 7 2\n", "line 6:"),
            ("done 0 2 5 1\nstopped signaldone 2 4 7 2\n", "line 6:"),
            ("failed 0 2done 2 4 7 1\n", "line 5:"),
            ("done 4 2 5\n", "line 5:"),
        ] {
            let e = parse(&journal(lines)).err().unwrap_or_default();
            assert!(e.starts_with(at), "{lines:?}: {e}");
        }
    }

    #[test]
    fn runs_that_continued_a_journal_and_older_entries_are_read() {
        // An older frun's unnumbered entries, a stopped run, one that went on into a new
        // output file (its count starts again at 0), and a torn last line.
        let cp = parse(&journal(
            "done 0 2 5\nfailed 2 4\nstopped signal 15\nstdout 0\ndone 2 4 3 2\n\
             stopped batches given up\nstdout 3\ndone 6 8 9 3\ndone 4 6 9 4\ndone 8",
        ))
        .unwrap();
        assert_eq!(cp.intervals, [(0, 8)]);
        assert_eq!((cp.batches, cp.stdout, cp.base), (4, Some(9), Some(0)));
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
