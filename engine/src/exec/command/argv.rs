//! Builds a batch's argument vector: `CMD FIXED… rec1 … recN`, or the `{}` / `{ID}` templates of
//! `-i` / `-I`, into buffers the worker reuses (no allocation per record once warm).
//!
//! It also says how much argument space a record costs, so the scanner can keep every batch
//! under ARG_MAX. It does not spawn anything.

use std::ffi::{CString, OsString};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;

use crate::dispatch::batch::ArgSpace;
use crate::exec::command::job::JobLine;
pub use crate::exec::command::words::Argv;

/// The kernel's limit on one argument string, including its NUL (MAX_ARG_STRLEN).
pub const MAX_ARG_STRLEN: u64 = 32 * 4096;
/// Bytes of ARG_MAX kept free for the kernel's own bookkeeping (argv[0] path copy, alignment).
const ARG_HEADROOM: u64 = 4096;
const PTR: u64 = std::mem::size_of::<usize>() as u64;
/// The shell a script without `#!` runs under, as `execvp` and xargs do.
pub const SH: &std::ffi::CStr = c"/bin/sh";

#[derive(Clone, Debug, PartialEq, Eq)]
enum Seg {
    Lit(Vec<u8>),
    Record,
    Id,
}

/// One argument word, split around its placeholders.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Word {
    segs: Vec<Seg>,
}

impl Word {
    fn parse(word: &[u8], insert: bool, insert_id: bool) -> Word {
        Word::parse_with(word, insert.then_some(b"{}"), insert_id)
    }

    /// `needle`: the string records replace (None: records replace nothing).
    fn parse_with(word: &[u8], needle: Option<&[u8]>, insert_id: bool) -> Word {
        let mut segs = Vec::new();
        let mut lit = Vec::new();
        let mut i = 0;
        while i < word.len() {
            if insert_id && word[i..].starts_with(b"{ID}") {
                segs.extend((!lit.is_empty()).then(|| Seg::Lit(std::mem::take(&mut lit))));
                segs.push(Seg::Id);
                i += 4;
            } else if let Some(n) = needle.filter(|n| !n.is_empty() && word[i..].starts_with(n)) {
                segs.extend((!lit.is_empty()).then(|| Seg::Lit(std::mem::take(&mut lit))));
                segs.push(Seg::Record);
                i += n.len();
            } else {
                lit.push(word[i]);
                i += 1;
            }
        }
        if !lit.is_empty() || segs.is_empty() {
            segs.push(Seg::Lit(lit));
        }
        Word { segs }
    }

    fn record_slots(&self) -> u64 {
        self.segs.iter().filter(|s| **s == Seg::Record).count() as u64
    }

    fn literal_len(&self) -> u64 {
        self.segs
            .iter()
            .map(|s| match s {
                Seg::Lit(l) => l.len() as u64,
                Seg::Record => 0,
                // [I-of-N.[RUN.]]NODE.WORKER.BATCH: at most 6 u64, four dots and "-of-".
                Seg::Id => 130,
            })
            .sum()
    }
}

/// A batch's identity for `{ID}`: `NODE.WORKER.BATCH`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchId {
    /// NUMA node of the worker (0 without NUMA).
    pub node: u32,
    /// Worker number within the run.
    pub worker: u32,
    /// The batch's place in input order.
    pub batch: u64,
    /// The batch's place in input order (0, 1, …): a job line's `{#}` is one more.
    pub seq: u64,
    /// A job line's `{%}`: the job slot it runs in, from 1.
    pub slot: u64,
}

/// The command template, resolved once per run.
#[derive(Clone, Debug)]
pub struct ArgvTemplate {
    path: CString,
    argv0: Vec<u8>,
    words: Vec<Word>,
    /// No word holds `{}`: records are appended after the words.
    append: bool,
    /// The whole batch is one argument (`-b N +s`), whatever delimiters it holds.
    whole: bool,
    delimiter: u8,
    /// What `{ID}` starts with: `I-of-N.` or `I-of-N.RUN.` when the run is one task of several,
    /// so ids never repeat across tasks (or across runs on one results directory).
    id_prefix: Vec<u8>,
    /// A GNU Parallel-style line builds the argv instead of the words above.
    job: Option<JobLine>,
    /// Each record is one command's packed arguments ([`pack_arg`]), not one argument.
    packed: bool,
}

impl ArgvTemplate {
    /// `path`: the resolved program; `words[0]` is the command as the user wrote it (`argv[0]`),
    /// the rest its fixed arguments.
    pub fn new(
        path: &std::path::Path,
        words: &[OsString],
        insert: bool,
        insert_id: bool,
        delimiter: u8,
    ) -> ArgvTemplate {
        let parsed: Vec<Word> = words[1..]
            .iter()
            .map(|w| Word::parse(w.as_bytes(), insert, insert_id))
            .collect();
        let append = !parsed.iter().any(|w| w.record_slots() > 0);
        ArgvTemplate {
            path: CString::new(path.as_os_str().as_bytes()).expect("paths hold no NUL"),
            argv0: words[0].as_bytes().to_vec(),
            words: parsed,
            append,
            whole: false,
            delimiter,
            id_prefix: Vec::new(),
            job: None,
            packed: false,
        }
    }

    /// A template whose argv a job line builds: `path` is the shell or the line's program.
    pub fn for_job(path: &std::path::Path, job: JobLine, delimiter: u8) -> ArgvTemplate {
        let argv0 = match job.shell() {
            Some(sh) => sh.to_vec(),
            None => job.program().unwrap_or_default().to_vec(),
        };
        ArgvTemplate {
            path: CString::new(path.as_os_str().as_bytes()).expect("paths hold no NUL"),
            argv0,
            words: Vec::new(),
            append: false,
            whole: false,
            delimiter,
            id_prefix: Vec::new(),
            job: Some(job),
            packed: false,
        }
    }

    /// A template whose records are packed argument lists (one command each, as `frun xargs`
    /// cuts them): appended after the words, or with `replace`, each word's occurrences of it
    /// replaced by the record's one argument (and nothing appended).
    pub fn packed(
        path: &std::path::Path,
        words: &[OsString],
        replace: Option<&[u8]>,
    ) -> ArgvTemplate {
        let parsed: Vec<Word> = words[1..]
            .iter()
            .map(|w| Word::parse_with(w.as_bytes(), replace, false))
            .collect();
        ArgvTemplate {
            path: CString::new(path.as_os_str().as_bytes()).expect("paths hold no NUL"),
            argv0: words[0].as_bytes().to_vec(),
            words: parsed,
            append: replace.is_none(),
            whole: false,
            delimiter: 0,
            id_prefix: Vec::new(),
            job: None,
            packed: true,
        }
    }

    /// Starts every `{ID}` with `prefix` (`I-of-N.` or `I-of-N.RUN.`).
    pub fn with_id_prefix(mut self, prefix: String) -> ArgvTemplate {
        self.id_prefix = prefix.into_bytes();
        self
    }

    /// Passes each batch as one argument instead of one per record.
    pub fn whole_batch(mut self) -> ArgvTemplate {
        self.whole = true;
        self
    }

    /// Whether the command is a job line (GNU Parallel's replacement strings).
    pub fn is_job(&self) -> bool {
        self.job.is_some()
    }

    /// The job line, when the command is one.
    pub fn job(&self) -> Option<&JobLine> {
        self.job.as_ref()
    }

    /// Words the job line puts before the command line itself (see `JobLine::shell_words`); 0
    /// without a job line.
    pub fn job_shell_words(&self) -> usize {
        self.job.as_ref().map_or(0, JobLine::shell_words)
    }

    /// What ends the records it is built from.
    pub fn delimiter(&self) -> u8 {
        self.delimiter
    }

    /// The program to run, as `execve` takes it.
    pub fn path(&self) -> &CString {
        &self.path
    }

    /// The command as the user named it (`argv[0]`).
    pub fn argv0(&self) -> &[u8] {
        &self.argv0
    }

    /// The argument space a batch may use and what each record costs, for an ARG_MAX of
    /// `arg_max` and an environment of `env_bytes` (strings and pointers).
    pub fn arg_space(&self, arg_max: u64, env_bytes: u64) -> ArgSpace {
        if self.packed {
            // Whoever packed the records sized them; the scanner cuts one per batch.
            return ArgSpace {
                per_byte: 1,
                per_record: 1,
                budget: arg_max,
                max_record_len: u64::MAX,
            };
        }
        if let Some(job) = &self.job {
            return job_arg_space(job, arg_max, env_bytes);
        }
        // A script without `#!` runs as `/bin/sh PATH ARGS…` (see worker.rs): room for both.
        let mut fixed = self.argv0.len() as u64 + 1 + PTR * 2;
        fixed +=
            SH.to_bytes_with_nul().len() as u64 + self.path.as_bytes_with_nul().len() as u64 + PTR;
        let mut per_byte = 0;
        let mut per_record = 0;
        let mut max_record_len = MAX_ARG_STRLEN - 1;
        for w in &self.words {
            let k = w.record_slots();
            let lit = w.literal_len();
            if k == 0 {
                fixed += lit + 1 + PTR;
            } else {
                per_byte += k;
                per_record += lit + 1 + PTR;
                max_record_len = max_record_len.min((MAX_ARG_STRLEN - 1).saturating_sub(lit) / k);
            }
        }
        if self.append {
            per_byte += 1;
            per_record += 1 + PTR;
        }
        ArgSpace {
            per_byte,
            per_record,
            budget: arg_max.saturating_sub(fixed + env_bytes + ARG_HEADROOM),
            max_record_len,
        }
    }

    /// Fills `argv` for the records in `batch` (records end with the delimiter; the last may
    /// lack it).
    pub fn build(&self, batch: &[u8], id: BatchId, argv: &mut Argv) {
        if let Some(job) = &self.job {
            job.build(batch, self.delimiter, id.seq + 1, id.slot, argv);
            return;
        }
        if self.packed {
            self.build_packed(batch, argv);
            return;
        }
        argv.bytes.clear();
        argv.offsets.clear();
        argv.records.clear();
        if !self.append {
            let mut start = 0;
            for i in memchr::memchr_iter(self.delimiter, batch) {
                argv.records.push((start, i));
                start = i + 1;
            }
            if start < batch.len() {
                argv.records.push((start, batch.len()));
            }
        }

        argv.offsets.push(0);
        argv.bytes.extend_from_slice(&self.argv0);
        argv.bytes.push(0);
        for w in &self.words {
            if w.record_slots() == 0 {
                argv.offsets.push(argv.bytes.len());
                push_word(&mut argv.bytes, w, b"", &self.id_prefix, id);
            } else {
                for r in 0..argv.records.len() {
                    let (s, e) = argv.records[r];
                    argv.offsets.push(argv.bytes.len());
                    push_word(&mut argv.bytes, w, &batch[s..e], &self.id_prefix, id);
                }
            }
        }
        if self.whole {
            argv.offsets.push(argv.bytes.len());
            argv.bytes.extend_from_slice(batch);
            argv.bytes.push(0);
        } else if self.append && !batch.is_empty() {
            // One copy of the whole batch, then each delimiter becomes the NUL ending a word.
            let base = argv.bytes.len();
            argv.bytes.extend_from_slice(batch);
            if batch.last() != Some(&self.delimiter) {
                argv.bytes.push(self.delimiter);
            }
            let first = argv.offsets.len();
            let mut start = base;
            for i in memchr::memchr_iter(self.delimiter, &argv.bytes[base..]) {
                argv.offsets.push(start);
                start = base + i + 1;
            }
            // Each record's delimiter is the byte before the next record; the last ends `bytes`.
            for k in first + 1..argv.offsets.len() {
                let o = argv.offsets[k];
                argv.bytes[o - 1] = 0;
            }
            if let Some(b) = argv.bytes.last_mut() {
                *b = 0;
            }
        }
        argv.finish();
    }
}

impl ArgvTemplate {
    /// Fills `argv` for a batch of packed records: the words, each record's arguments after
    /// them (or into their replacement slots).
    fn build_packed(&self, batch: &[u8], argv: &mut Argv) {
        argv.bytes.clear();
        argv.offsets.clear();
        argv.records.clear();
        argv.scratch.clear();
        unpack_into(batch, &mut argv.scratch, &mut argv.records);
        argv.offsets.push(0);
        argv.bytes.extend_from_slice(&self.argv0);
        argv.bytes.push(0);
        let id = BatchId {
            node: 0,
            worker: 0,
            batch: 0,
            seq: 0,
            slot: 1,
        };
        for w in &self.words {
            if w.record_slots() == 0 {
                argv.offsets.push(argv.bytes.len());
                push_word(&mut argv.bytes, w, b"", b"", id);
            } else {
                for &(s, e) in &argv.records {
                    argv.offsets.push(argv.bytes.len());
                    push_word(&mut argv.bytes, w, &argv.scratch[s..e], b"", id);
                }
            }
        }
        if self.append {
            for &(s, e) in &argv.records {
                argv.offsets.push(argv.bytes.len());
                argv.bytes.extend_from_slice(&argv.scratch[s..e]);
                argv.bytes.push(0);
            }
        }
        argv.finish();
    }
}

/// Ends each argument of a packed record; a record ends with a NUL (the record delimiter).
const PACKED_END: u8 = 1;
/// Escapes a data byte equal to [`PACKED_END`] (as `ESC 3`) or to itself (as `ESC 4`).
const PACKED_ESC: u8 = 2;

/// Appends `arg` (holding no NUL) to a packed record.
pub fn pack_arg(arg: &[u8], out: &mut Vec<u8>) {
    let mut start = 0;
    for i in memchr::memchr2_iter(PACKED_END, PACKED_ESC, arg) {
        out.extend_from_slice(&arg[start..i]);
        out.push(PACKED_ESC);
        out.push(if arg[i] == PACKED_END { 3 } else { 4 });
        start = i + 1;
    }
    out.extend_from_slice(&arg[start..]);
    out.push(PACKED_END);
}

/// Ends a packed record.
pub fn pack_end(out: &mut Vec<u8>) {
    out.push(0);
}

/// The arguments of the packed records in `batch`, decoded into `bytes` at `ranges`.
fn unpack_into(batch: &[u8], bytes: &mut Vec<u8>, ranges: &mut Vec<(usize, usize)>) {
    let mut start = bytes.len();
    let mut from = 0;
    for i in memchr::memchr3_iter(PACKED_END, PACKED_ESC, 0, batch) {
        if i < from {
            continue;
        }
        bytes.extend_from_slice(&batch[from..i]);
        match batch[i] {
            PACKED_END => {
                ranges.push((start, bytes.len()));
                start = bytes.len();
            }
            PACKED_ESC => {
                let b = match batch.get(i + 1) {
                    Some(3) => PACKED_END,
                    _ => PACKED_ESC,
                };
                bytes.push(b);
                from = i + 2;
                continue;
            }
            // A record's end.
            _ => {}
        }
        from = i + 1;
    }
}

/// Every command of a stream of packed records, as its arguments (for tests).
pub fn unpack_commands(stream: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut rest = stream;
    while let Some(end) = memchr::memchr(0, rest) {
        let (mut bytes, mut ranges) = (Vec::new(), Vec::new());
        unpack_into(&rest[..=end], &mut bytes, &mut ranges);
        out.push(ranges.iter().map(|&(s, e)| bytes[s..e].to_vec()).collect());
        rest = &rest[end + 1..];
    }
    out
}

/// A job line's argument space: through the shell the whole line is one argument, so it is
/// bounded by MAX_ARG_STRLEN; quoting may triple a value's bytes (and add two quotes).
fn job_arg_space(job: &JobLine, arg_max: u64, env_bytes: u64) -> ArgSpace {
    let (values, lits, repeated) = job.cost();
    let fixed = lits + 64 + env_bytes + ARG_HEADROOM;
    if job.shell().is_some() {
        let line_room = (MAX_ARG_STRLEN - 1).saturating_sub(lits + 64);
        ArgSpace {
            per_byte: 3 * values,
            per_record: 3 * values + 1,
            budget: line_room.min(arg_max.saturating_sub(fixed)),
            max_record_len: line_room / (3 * values).max(1),
        }
    } else {
        ArgSpace {
            per_byte: values,
            per_record: values * (1 + PTR) + repeated,
            budget: arg_max.saturating_sub(fixed),
            max_record_len: MAX_ARG_STRLEN - 1 - lits.min(MAX_ARG_STRLEN / 2),
        }
    }
}

fn push_word(out: &mut Vec<u8>, w: &Word, record: &[u8], prefix: &[u8], id: BatchId) {
    for s in &w.segs {
        match s {
            Seg::Lit(l) => out.extend_from_slice(l),
            Seg::Record => out.extend_from_slice(record),
            Seg::Id => {
                out.extend_from_slice(prefix);
                let _ = write!(out, "{}.{}.{}", id.node, id.worker, id.batch);
            }
        }
    }
    out.push(0);
}

/// Appends `word` shell-quoted (single quotes unless every byte is safe as is).
pub fn shell_quote(word: &[u8], out: &mut Vec<u8>) {
    let safe = |b: u8| b.is_ascii_alphanumeric() || b"@%_+=:,./-".contains(&b);
    if !word.is_empty() && word.iter().all(|&b| safe(b)) {
        out.extend_from_slice(word);
        return;
    }
    out.push(b'\'');
    for &b in word {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
}

/// Appends `word` as `xargs -t` shows it: as it is when every byte is safe for a shell,
/// otherwise quoted (single quotes, or double quotes around a single quote, and `$'\t'` for
/// control bytes).
pub fn trace_quote(word: &[u8], out: &mut Vec<u8>) {
    let safe = |i: usize, b: u8| {
        b.is_ascii_alphanumeric()
            || b >= 0x80
            || b"%+,-./:@_{}".contains(&b)
            || (i > 0 && b"~#=".contains(&b))
    };
    let control = |b: u8| b < 0x20 || b == 0x7f;
    if word.is_empty() {
        out.extend_from_slice(b"''");
        return;
    }
    if word.iter().enumerate().all(|(i, &b)| safe(i, b)) {
        out.extend_from_slice(word);
        return;
    }
    if !word.iter().any(|&b| control(b))
        && word.contains(&b'\'')
        && !word.iter().any(|b| b"\"$`\\!".contains(b))
    {
        out.push(b'"');
        out.extend_from_slice(word);
        out.push(b'"');
        return;
    }
    // Single-quoted runs; a quote or control byte closes the run (reopened lazily). A run of
    // control bytes shares one `$'…'` (`$'\f\r'`), as xargs prints it.
    out.push(b'\'');
    let mut open = true;
    let mut dollar = false;
    for &b in word {
        if b == b'\'' || control(b) {
            if open {
                out.push(b'\'');
                open = false;
            }
            if dollar && control(b) {
                out.pop();
            } else if control(b) {
                out.extend_from_slice(b"$'");
            }
            dollar = control(b);
            if b == b'\'' {
                out.extend_from_slice(b"\\'");
            } else {
                let named = match b {
                    b'\t' => Some('t'),
                    b'\n' => Some('n'),
                    b'\r' => Some('r'),
                    0x07 => Some('a'),
                    0x08 => Some('b'),
                    0x0b => Some('v'),
                    0x0c => Some('f'),
                    0x1b => Some('E'),
                    _ => None,
                };
                match named {
                    Some(c) => out.extend_from_slice(format!("\\{c}'").as_bytes()),
                    None => out.extend_from_slice(format!("\\{b:03o}'").as_bytes()),
                }
            }
        } else {
            dollar = false;
            if !open {
                out.push(b'\'');
                open = true;
            }
            out.push(b);
        }
    }
    if open {
        out.push(b'\'');
    }
}

/// Calls `each` with the words bash makes of `word` when it expands it unquoted with its default
/// IFS, as `-U` has it do: split at spaces, tabs and newlines (an empty word makes none), then
/// each word holding `*`, `?` or `[` replaced by the paths it matches, in order, or kept as it is
/// when it matches none. For `-N -U`, which prints what would run.
pub fn split_and_glob(word: &[u8], mut each: impl FnMut(&[u8])) {
    for field in word
        .split(|b| b" \t\n".contains(b))
        .filter(|f| !f.is_empty())
    {
        let pattern = match CString::new(field) {
            Ok(p) if field.iter().any(|b| b"*?[".contains(b)) => p,
            _ => {
                each(field);
                continue;
            }
        };
        // SAFETY: glob_t is plain data that glob fills in; glob reads a NUL-terminated pattern;
        // on success gl_pathv holds gl_pathc NUL-terminated paths, read before globfree.
        unsafe {
            let mut found: libc::glob_t = std::mem::zeroed();
            if libc::glob(pattern.as_ptr(), 0, None, &mut found) == 0 {
                for k in 0..found.gl_pathc {
                    each(std::ffi::CStr::from_ptr(*found.gl_pathv.add(k)).to_bytes());
                }
            } else {
                each(field);
            }
            libc::globfree(&mut found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(t: &ArgvTemplate, batch: &[u8]) -> Vec<String> {
        let mut a = Argv::default();
        t.build(
            batch,
            BatchId {
                seq: 0,
                node: 0,
                worker: 3,
                batch: 9,
                slot: 4,
            },
            &mut a,
        );
        a.words()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect()
    }

    fn tmpl(ws: &[&str], i: bool, id: bool) -> ArgvTemplate {
        let ws: Vec<OsString> = ws.iter().map(OsString::from).collect();
        ArgvTemplate::new(std::path::Path::new("/bin/x"), &ws, i, id, b'\n')
    }

    #[test]
    fn appends_records_keeping_empty_ones() {
        let t = tmpl(&["echo", "-n"], false, false);
        assert_eq!(
            words(&t, b"a\n\nb c\nlast"),
            ["echo", "-n", "a", "", "b c", "last"]
        );
        assert_eq!(words(&t, b"a\n"), ["echo", "-n", "a"]);
    }

    #[test]
    fn insert_repeats_each_templated_word() {
        let t = tmpl(&["cp", "{}", "x{}.{}.bak"], true, false);
        assert_eq!(
            words(&t, b"a\nb\n"),
            ["cp", "a", "b", "xa.a.bak", "xb.b.bak"]
        );
        let none = tmpl(&["echo", "lit"], true, false);
        assert_eq!(words(&none, b"a\nb\n"), ["echo", "lit", "a", "b"]);
        let id = tmpl(&["echo", "<{ID}>", "{}"], false, true);
        assert_eq!(words(&id, b"r\n"), ["echo", "<0.3.9>", "{}", "r"]);
    }

    #[test]
    fn arg_space_counts_templates() {
        let t = tmpl(&["echo"], false, false);
        let s = t.arg_space(2 << 20, 1000);
        assert_eq!((s.per_byte, s.per_record), (1, 9));
        assert_eq!(s.max_record_len, MAX_ARG_STRLEN - 1);
        let t = tmpl(&["cp", "{}", "{}{}.bak"], true, false);
        let s = t.arg_space(2 << 20, 1000);
        assert_eq!((s.per_byte, s.per_record), (3, 1 + 8 + 4 + 1 + 8));
        assert_eq!(s.max_record_len, (MAX_ARG_STRLEN - 1 - 4) / 2);
    }

    #[test]
    fn quoting() {
        let q = |w: &[u8]| {
            let mut o = Vec::new();
            shell_quote(w, &mut o);
            String::from_utf8(o).unwrap()
        };
        assert_eq!(q(b"plain/path-1.txt"), "plain/path-1.txt");
        assert_eq!(q(b""), "''");
        assert_eq!(q(b"a b"), "'a b'");
        assert_eq!(q(b"it's"), "'it'\\''s'");
        assert_eq!(q(b"$HOME*"), "'$HOME*'");
    }

    #[test]
    fn unsafe_words_split_at_default_ifs_and_keep_unmatched_patterns() {
        let split = |w: &[u8]| {
            let mut v = Vec::new();
            split_and_glob(w, |f| v.push(String::from_utf8_lossy(f).into_owned()));
            v
        };
        assert_eq!(split(b"  a b\tc\nd  "), ["a", "b", "c", "d"]);
        assert!(split(b"").is_empty());
        assert!(split(b" \t ").is_empty());
        assert_eq!(split(b"$x 'q' \\n"), ["$x", "'q'", "\\n"]);
        assert_eq!(
            split(b"/nonexistent-frun-dir/*.none [z"),
            ["/nonexistent-frun-dir/*.none", "[z"]
        );
    }
}
