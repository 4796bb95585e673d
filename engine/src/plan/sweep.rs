//! A sweep's input: reads every source (`::: words`, `:::: FILE`), combines them into tuples
//! (every combination, or linked) and writes one record per tuple to an in-memory file the
//! engine reads like any input file.
//!
//! A tuple is one record ending in NUL: each value as `LEN:BYTES` (LEN in decimal), so values
//! may hold any byte but NUL, which no argument can hold anyway. [`crate::exec::command::job`] reads them
//! back. Nothing here runs anything.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::os::unix::ffi::OsStrExt;

use super::config::{Source, SourceValues, Sweep};

/// The tuples of `sweep`, written to a new in-memory file (read from its start), the column
/// names when the sweep has a header, and how many tuples there are. `delimiter` ends the
/// records of `::::` files; `colsep` (`--colsep REGEX`) splits every value into columns, each a
/// value of the tuple. `escape_nul`: a NUL byte in a file's record is the two characters `\0`
/// (GNU Parallel's way, said once); else it is refused.
///
/// Values are never copied: they are slices of the command line's words or of the files' bytes
/// (read once each), so a sweep of a hundred thousand values costs a few allocations, not one
/// per value.
pub(super) fn materialize(
    sweep: &Sweep,
    delimiter: u8,
    colsep: Option<&str>,
    escape_nul: bool,
) -> Result<(File, Vec<Vec<u8>>, u64), String> {
    let colsep = colsep
        .map(crate::exec::command::job::column_separator)
        .transpose()?;
    let mut contents = sweep
        .sources
        .iter()
        .map(file_bytes)
        .collect::<Result<Vec<_>, _>>()?;
    if delimiter != 0 {
        nul_in_files(&sweep.sources, &mut contents, escape_nul)?;
    }
    let mut kept = Vec::with_capacity(sweep.sources.len());
    for (s, bytes) in sweep.sources.iter().zip(&contents) {
        let mut vals = match (sweep.csv, &s.values, bytes.as_deref()) {
            // A `::: word` is one record; a file's records may hold newlines.
            (Some(_), SourceValues::File(_), Some(b)) => crate::input::csv::records(b),
            (Some(_), _, _) => values(s, None, delimiter),
            (None, SourceValues::File(_), Some(b)) if !sweep.separator.is_empty() => {
                separated(b, &sweep.separator)
            }
            (None, _, _) => values(s, bytes.as_deref(), delimiter),
        };
        if let Some(eof) = &sweep.eof {
            if let Some(end) = vals.iter().position(|v| *v == eof.as_slice()) {
                vals.truncate(end);
            }
        }
        if sweep.skip_empty {
            vals.retain(|v| {
                !v.iter()
                    .copied()
                    .all(crate::input::records::blank::is_space)
            });
        }
        kept.push(vals);
    }
    // With `--header`, the first value is the column's name and a source needs one more.
    let least = 1 + usize::from(sweep.header);
    if sweep.empty_is_blank && kept.iter().any(|v| v.len() >= least) {
        for v in kept.iter_mut() {
            while v.len() < least {
                v.push(&[]);
            }
        }
    }
    // Continued values are joined into one arena per source, then sliced from it.
    let joins: Vec<Option<(Vec<u8>, Vec<usize>)>> = kept
        .iter()
        .map(|vals| sweep.continued.then(|| continued(vals)))
        .collect();
    // `--csv`: each record's fields, unquoted, in one arena per source.
    let cells: Vec<Cells> = match sweep.csv {
        Some(sep) => kept.iter().map(|vals| Cells::of(vals, sep)).collect(),
        None => Vec::new(),
    };
    let mut tables = Vec::with_capacity(sweep.sources.len());
    for (i, (vals, join)) in kept.into_iter().zip(&joins).enumerate() {
        if let Some(c) = cells.get(i) {
            tables.push(c.table());
            continue;
        }
        let vals = match join {
            Some((arena, ends)) => {
                let mut start = 0;
                ends.iter()
                    .map(|&end| {
                        let v = &arena[start..end];
                        start = end;
                        v
                    })
                    .collect()
            }
            None => vals,
        };
        tables.push(Table::new(vals, colsep.as_ref()));
    }
    let header = header_of(sweep, &mut tables)?;
    if sweep.link && !sweep.wrap {
        let lens: Vec<usize> = tables.iter().map(Table::len).collect();
        let shortest = lens.iter().copied().min().unwrap_or(0);
        if lens.iter().any(|&l| l != shortest) {
            let shown: Vec<String> = lens.iter().map(usize::to_string).collect();
            say!(
                "--link: the sources hold {} values; truncating combinations to the shortest \
                 length ({shortest})",
                shown.join(", ")
            );
        }
    }
    let groups = groups(&sweep.sources, &tables, sweep.link, sweep.wrap);
    let fd = nix::sys::memfd::memfd_create(c"frun-sweep", nix::sys::memfd::MFdFlags::MFD_CLOEXEC)
        .map_err(|e| format!("cannot create the sweep's tuples in memory: {e}"))?;
    let file = File::from(fd);
    let mut out = BufWriter::with_capacity(1 << 16, &file);
    let written = if sweep.shuffle {
        let mut all = Vec::new();
        write_product(&groups, &tables, &mut all).and_then(|()| out.write_all(&shuffled(&all)))
    } else {
        write_product(&groups, &tables, &mut out)
    };
    written
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write the sweep's tuples: {e}"))?;
    drop(out);
    std::io::Seek::rewind(&mut &file)
        .map_err(|e| format!("cannot read the sweep's tuples: {e}"))?;
    let tuples = groups
        .iter()
        .map(|g| g.len as u64)
        .fold(1u64, u64::saturating_mul);
    Ok((file, header, tuples))
}

/// The column names: each source's first row with `--header`, then the names given to
/// whole sources (`--header 0`); the first rows are then no values.
fn header_of(sweep: &Sweep, tables: &mut [Table<'_>]) -> Result<Vec<Vec<u8>>, String> {
    let mut header = Vec::new();
    if sweep.header {
        for t in tables.iter_mut() {
            if t.len() == 0 {
                // Nothing runs then (another source would have made this one a blank).
                if sweep.empty_is_blank {
                    header.push(Vec::new());
                    continue;
                }
                return Err("--header: an input source is empty (no column name)".into());
            }
            // A name ends before a CR (a header line ending in CRLF), as GNU Parallel's does.
            header.extend(
                t.row(0)
                    .iter()
                    .map(|c| c.strip_suffix(b"\r").unwrap_or(c).to_vec()),
            );
            t.first += 1;
        }
    }
    if !sweep.names.is_empty() {
        for (t, name) in tables.iter().zip(&sweep.names) {
            let n = if t.len() == 0 { 1 } else { t.row(0).len() };
            header.extend(std::iter::repeat_n(name.clone(), n));
        }
    }
    Ok(header)
}

/// `vals` with every value that ends in a blank joined to the one after it: the joined values
/// one after another, and where each ends.
fn continued(vals: &[&[u8]]) -> (Vec<u8>, Vec<usize>) {
    let mut arena = Vec::with_capacity(vals.iter().map(|v| v.len()).sum());
    let mut ends = Vec::new();
    let mut open = false;
    for v in vals {
        arena.extend_from_slice(v);
        open = matches!(v.last(), Some(b' ' | b'\t'));
        if !open {
            ends.push(arena.len());
        }
    }
    if open {
        ends.push(arena.len());
    }
    (arena, ends)
}

/// The bytes of a `::::` source, read whole (None for `::: words`).
fn file_bytes(source: &Source) -> Result<Option<Vec<u8>>, String> {
    let SourceValues::File(p) = &source.values else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    let name = p.display().to_string();
    let read = if p.as_os_str() == "-" {
        std::io::stdin().lock().read_to_end(&mut bytes)
    } else {
        let f = File::open(p)
            .map_err(|e| format!("cannot open {name}: {}", crate::sys::errors::os_message(&e)))?;
        if f.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(format!("{name} is a directory"));
        }
        (&f).read_to_end(&mut bytes)
    };
    read.map_err(|e| format!("cannot read {name}: {}", crate::sys::errors::os_message(&e)))?;
    Ok(Some(bytes))
}

/// The sources' files (`contents`, read with a delimiter that is not NUL) must not hold a NUL
/// byte, which no argument can hold: refused, or with `escape` each NUL is the two characters
/// `\0` (GNU Parallel's way), said once for the first file that held one.
fn nul_in_files(
    sources: &[Source],
    contents: &mut [Option<Vec<u8>>],
    escape: bool,
) -> Result<(), String> {
    let mut said = false;
    for (s, bytes) in sources.iter().zip(contents) {
        let (SourceValues::File(p), Some(bytes)) = (&s.values, bytes) else {
            continue;
        };
        let Some(at) = memchr::memchr(0, bytes) else {
            continue;
        };
        let name = p.display();
        if !escape {
            return Err(format!(
                "{name} holds a NUL byte, which no argument can hold (use -0 for NUL-separated \
                 values)"
            ));
        }
        if !std::mem::replace(&mut said, true) {
            crate::sys::notice::say_fact(
                crate::sys::notice::NoticeKind::Problem,
                Some(crate::sys::notice::Fact::NulEscaped),
                format_args!(
                    "warning: {name} holds a NUL byte (at byte {at}), which no argument can \
                     hold: its value gets the two characters \\0 in its place (use -0 for \
                     NUL-separated values; later ones are not reported)"
                ),
            );
        }
        *bytes = crate::exec::command::job::nul_escaped(bytes);
    }
    Ok(())
}

/// One source's values: its words, or its file's records (`bytes`).
fn values<'a>(source: &'a Source, bytes: Option<&'a [u8]>, delimiter: u8) -> Vec<&'a [u8]> {
    match (&source.values, bytes) {
        (SourceValues::Words(w), _) => w.iter().map(|v| v.as_bytes()).collect(),
        (SourceValues::File(_), Some(bytes)) => {
            let mut v: Vec<&[u8]> = bytes.split(|&b| b == delimiter).collect();
            // The last record's delimiter ends it; it does not start an empty one.
            if bytes.is_empty() || bytes.last() == Some(&delimiter) {
                v.pop();
            }
            v
        }
        (SourceValues::File(_), None) => Vec::new(),
    }
}

/// A file's records ended by `sep` (several bytes); the last one's `sep` ends it, it does not
/// start an empty one.
fn separated<'a>(bytes: &'a [u8], sep: &[u8]) -> Vec<&'a [u8]> {
    let mut v = Vec::new();
    let mut start = 0;
    for at in memchr::memmem::find_iter(bytes, sep) {
        if at < start {
            continue;
        }
        v.push(&bytes[start..at]);
        start = at + sep.len();
    }
    if start < bytes.len() {
        v.push(&bytes[start..]);
    }
    v
}

/// `--csv`: one source's records' fields, unquoted.
struct Cells {
    arena: Vec<u8>,
    /// Where each field ends in `arena`.
    ends: Vec<usize>,
    /// Where each record's fields start in `ends`, and one more entry: the end.
    starts: Vec<usize>,
}

impl Cells {
    fn of(records: &[&[u8]], sep: u8) -> Cells {
        let mut c = Cells {
            arena: Vec::with_capacity(records.iter().map(|r| r.len()).sum()),
            ends: Vec::new(),
            starts: Vec::with_capacity(records.len() + 1),
        };
        for r in records {
            c.starts.push(c.ends.len());
            crate::input::csv::fields(r, sep, &mut c.arena, &mut c.ends);
        }
        c.starts.push(c.ends.len());
        c
    }

    fn table(&self) -> Table<'_> {
        let mut start = 0;
        let columns = self
            .ends
            .iter()
            .map(|&e| {
                let f = &self.arena[start..e];
                start = e;
                f
            })
            .collect();
        Table {
            columns,
            starts: self.starts.clone(),
            first: 0,
        }
    }
}

/// One source's values, each as its columns (one without `--colsep`), all in one list.
struct Table<'a> {
    columns: Vec<&'a [u8]>,
    /// Where each value's columns start in `columns`, and one more entry: the end.
    starts: Vec<usize>,
    /// The first value that is not the header.
    first: usize,
}

impl<'a> Table<'a> {
    fn new(values: Vec<&'a [u8]>, colsep: Option<&regex::bytes::Regex>) -> Table<'a> {
        let mut starts = Vec::with_capacity(values.len() + 1);
        let columns = match colsep {
            None => {
                starts.extend(0..=values.len());
                values
            }
            Some(re) => {
                let mut columns = Vec::with_capacity(values.len());
                for v in &values {
                    starts.push(columns.len());
                    columns.extend(crate::exec::command::job::split_columns(re, v));
                }
                starts.push(columns.len());
                columns
            }
        };
        Table {
            columns,
            starts,
            first: 0,
        }
    }

    /// How many values (rows) it holds, the header aside.
    fn len(&self) -> usize {
        self.starts.len() - 1 - self.first
    }

    /// The columns of value `i` (the header aside).
    fn row(&self, i: usize) -> &[&'a [u8]] {
        let i = i + self.first;
        &self.columns[self.starts[i]..self.starts[i + 1]]
    }
}

/// Sources linked together: they give one row per tuple, together.
struct Group {
    /// The indexes of its sources' tables.
    sources: Vec<usize>,
    /// Its rows: a linked source shorter than this starts again from its first value.
    len: usize,
}

/// Sources linked together form one group; the combinations are taken over groups.
fn groups(specs: &[Source], tables: &[Table<'_>], link_all: bool, wrap: bool) -> Vec<Group> {
    let mut groups: Vec<(Vec<usize>, bool)> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        match groups.last_mut() {
            Some(g) if link_all || spec.linked => g.0.push(i),
            _ => groups.push((vec![i], link_all && wrap)),
        }
    }
    groups
        .into_iter()
        .map(|(sources, wrap)| {
            // --link wraps shorter sources around; `:::+` stops at the shortest.
            let lens = sources.iter().map(|&s| tables[s].len());
            let len = if wrap { lens.max() } else { lens.min() };
            Group {
                sources,
                len: len.unwrap_or(0),
            }
        })
        .collect()
}

/// The NUL-ended records of `tuples` in a random order (`--shuf`): a Fisher-Yates shuffle
/// seeded from the clock and the process id (not for anything secret).
fn shuffled(tuples: &[u8]) -> Vec<u8> {
    let mut records: Vec<&[u8]> = tuples.split_inclusive(|&b| b == 0).collect();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut x = nanos ^ (u64::from(std::process::id()) << 32) | 1;
    for i in (1..records.len()).rev() {
        // xorshift64
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        records.swap(i, (x % (i as u64 + 1)) as usize);
    }
    records.concat()
}

/// Writes one value as `LEN:BYTES`.
fn write_value(v: &[u8], out: &mut impl Write) -> std::io::Result<()> {
    let mut digits = [0u8; 21];
    let mut at = digits.len() - 1;
    digits[at] = b':';
    let mut n = v.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.write_all(&digits[at..])?;
    out.write_all(v)
}

/// Every combination of one row per group, the last group varying fastest.
fn write_product(
    groups: &[Group],
    tables: &[Table<'_>],
    out: &mut impl Write,
) -> std::io::Result<()> {
    if groups.iter().any(|g| g.len == 0) {
        return Ok(());
    }
    let mut index = vec![0usize; groups.len()];
    loop {
        for (g, &i) in groups.iter().zip(&index) {
            for &s in &g.sources {
                let t = &tables[s];
                if t.len() == 0 {
                    // A wrapped source with no values gives an empty one.
                    write_value(b"", out)?;
                } else {
                    for c in t.row(i % t.len()) {
                        write_value(c, out)?;
                    }
                }
            }
        }
        out.write_all(&[0])?;
        // The next combination: like counting, the last digit first.
        let mut k = groups.len();
        loop {
            if k == 0 {
                return Ok(());
            }
            k -= 1;
            index[k] += 1;
            if index[k] < groups[k].len {
                break;
            }
            index[k] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::config::SourceValues;
    use std::ffi::OsString;

    fn src(v: &[&str], linked: bool) -> Source {
        Source {
            values: SourceValues::Words(v.iter().map(OsString::from).collect()),
            linked,
        }
    }

    fn tuples(sweep: &Sweep) -> Vec<String> {
        let (mut f, _, _) = materialize(sweep, b'\n', None, false).unwrap();
        let mut s = Vec::new();
        f.read_to_end(&mut s).unwrap();
        s.split(|&b| b == 0)
            .filter(|r| !r.is_empty())
            .map(|r| String::from_utf8_lossy(r).into_owned())
            .collect()
    }

    #[test]
    fn product_varies_the_last_source_fastest() {
        let s = Sweep::of(
            vec![src(&["a", "b"], false), src(&["1", "22"], false)],
            false,
        );
        assert_eq!(tuples(&s), ["1:a1:1", "1:a2:22", "1:b1:1", "1:b2:22"]);
    }

    #[test]
    fn link_wraps_and_linked_sources_stop_at_the_shortest() {
        let s = Sweep::of(vec![src(&["a", "b", "c"], false), src(&["1"], false)], true);
        assert_eq!(tuples(&s), ["1:a1:1", "1:b1:1", "1:c1:1"]);
        let s = Sweep::of(
            vec![src(&["a", "b", "c"], false), src(&["1", "2"], true)],
            false,
        );
        assert_eq!(tuples(&s), ["1:a1:1", "1:b1:2"]);
    }

    #[test]
    fn a_separator_of_several_bytes_ends_records() {
        let got = separated(b"1\n2\n\n\n\n3\n", b"\n\n");
        assert_eq!(got, vec![&b"1\n2"[..], b"", b"3\n"]);
        assert!(separated(b"", b"ab").is_empty());
        assert_eq!(separated(b"xab", b"ab"), vec![&b"x"[..]]);
    }

    #[test]
    fn an_empty_source_gives_no_tuples() {
        let s = Sweep::of(vec![src(&["a"], false), src(&[], false)], false);
        assert!(tuples(&s).is_empty());
    }
}
