//! A sweep's input: reads every source (`::: words`, `:::: FILE`), combines them into tuples
//! (every combination, or linked) and writes one record per tuple to an in-memory file the
//! engine reads like any input file.
//!
//! A tuple is one record ending in NUL: each value as `LEN:BYTES` (LEN in decimal), so values
//! may hold any byte but NUL, which no argument can hold anyway. [`crate::exec::job`] reads them
//! back. Nothing here runs anything.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::os::unix::ffi::OsStrExt;

use super::config::{Source, SourceValues, Sweep};

/// The tuples of `sweep`, written to a new in-memory file (read from its start), the column
/// names when the sweep has a header, and how many tuples there are. `delimiter` ends the records of `::::` files; `colsep`
/// (`--colsep REGEX`) splits every value into columns, each a value of the tuple.
pub(super) fn materialize(
    sweep: &Sweep,
    delimiter: u8,
    colsep: Option<&str>,
) -> Result<(File, Vec<Vec<u8>>, u64), String> {
    let colsep = colsep
        .map(|re| {
            regex::bytes::Regex::new(re)
                .map_err(|e| format!("--colsep '{re}' is not a regular expression: {e}"))
        })
        .transpose()?;
    let mut sources: Vec<Vec<Vec<Vec<u8>>>> = Vec::with_capacity(sweep.sources.len());
    for s in &sweep.sources {
        let split = |v: Vec<u8>| match &colsep {
            Some(re) => re.split(&v).map(<[u8]>::to_vec).collect(),
            None => vec![v],
        };
        let mut vals = values(s, delimiter)?;
        if let Some(eof) = &sweep.eof
            && let Some(end) = vals.iter().position(|v| v == eof)
        {
            vals.truncate(end);
        }
        if sweep.skip_empty {
            vals.retain(|v| !v.iter().all(|&b| b == b' ' || b == b'\t'));
        }
        sources.push(vals.into_iter().map(split).collect());
    }
    let mut header = Vec::new();
    if sweep.header {
        for v in &mut sources {
            if v.is_empty() {
                return Err("--header: an input source is empty (no column name)".into());
            }
            header.extend(v.remove(0));
        }
    }
    if sweep.link && !sweep.wrap {
        let lens: Vec<usize> = sources.iter().map(Vec::len).collect();
        let shortest = lens.iter().copied().min().unwrap_or(0);
        if lens.iter().any(|&l| l != shortest) {
            let shown: Vec<String> = lens.iter().map(usize::to_string).collect();
            eprintln!(
                "frun: --link: the sources hold {} values; truncating combinations to the shortest \
                 length ({shortest})",
                shown.join(", ")
            );
        }
    }
    let groups = groups(&sweep.sources, sources, sweep.link, sweep.wrap);
    let fd = nix::sys::memfd::memfd_create(c"frun-sweep", nix::sys::memfd::MFdFlags::MFD_CLOEXEC)
        .map_err(|e| format!("cannot create the sweep's tuples in memory: {e}"))?;
    let file = File::from(fd);
    let mut out = BufWriter::with_capacity(1 << 16, &file);
    let written = if sweep.shuffle {
        let mut all = Vec::new();
        write_product(&groups, &mut all).and_then(|()| out.write_all(&shuffled(&all)))
    } else {
        write_product(&groups, &mut out)
    };
    written
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write the sweep's tuples: {e}"))?;
    drop(out);
    std::io::Seek::rewind(&mut &file)
        .map_err(|e| format!("cannot read the sweep's tuples: {e}"))?;
    let tuples = groups
        .iter()
        .map(|g| g.len() as u64)
        .fold(1u64, u64::saturating_mul);
    Ok((file, header, tuples))
}

/// One source's values.
fn values(source: &Source, delimiter: u8) -> Result<Vec<Vec<u8>>, String> {
    match &source.values {
        SourceValues::Words(w) => Ok(w.iter().map(|v| v.as_bytes().to_vec()).collect()),
        SourceValues::File(p) => {
            let mut bytes = Vec::new();
            let name = p.display().to_string();
            let read = if p.as_os_str() == "-" {
                std::io::stdin().lock().read_to_end(&mut bytes)
            } else {
                let f = File::open(p).map_err(|e| {
                    format!("cannot open {name}: {}", crate::errors::os_message(&e))
                })?;
                if f.metadata().is_ok_and(|m| m.is_dir()) {
                    return Err(format!("{name} is a directory"));
                }
                (&f).read_to_end(&mut bytes)
            };
            read.map_err(|e| format!("cannot read {name}: {}", crate::errors::os_message(&e)))?;
            let mut v: Vec<Vec<u8>> = bytes
                .split(|&b| b == delimiter)
                .map(<[u8]>::to_vec)
                .collect();
            // The last record's delimiter ends it; it does not start an empty one.
            if bytes.is_empty() || bytes.last() == Some(&delimiter) {
                v.pop();
            }
            if delimiter != 0 && v.iter().any(|r| r.contains(&0)) {
                return Err(format!(
                    "{name} holds a NUL byte, which no argument can hold (use -0 for NUL-separated values)"
                ));
            }
            Ok(v)
        }
    }
}

/// Rows of linked sources: each group is a list of rows, a row the values of one tuple.
type Group = Vec<Vec<Vec<u8>>>;

/// One source's values, each as its columns (one without `--colsep`).
type Values = Vec<Vec<Vec<u8>>>;

/// Sources linked together form one group; the combinations are taken over groups.
fn groups(specs: &[Source], sources: Vec<Values>, link_all: bool, wrap: bool) -> Vec<Group> {
    let mut groups: Vec<(Vec<Values>, bool)> = Vec::new();
    for (spec, values) in specs.iter().zip(sources) {
        match groups.last_mut() {
            Some(g) if link_all || spec.linked => g.0.push(values),
            _ => groups.push((vec![values], link_all && wrap)),
        }
    }
    groups
        .into_iter()
        .map(|(cols, wrap)| {
            // --link wraps shorter sources around; `:::+` stops at the shortest.
            let len = if wrap {
                cols.iter().map(Vec::len).max().unwrap_or(0)
            } else {
                cols.iter().map(Vec::len).min().unwrap_or(0)
            };
            (0..len)
                .map(|i| {
                    cols.iter()
                        .flat_map(|c| {
                            if c.is_empty() {
                                vec![Vec::new()]
                            } else {
                                c[i % c.len()].clone()
                            }
                        })
                        .collect()
                })
                .collect()
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

/// Every combination of one row per group, the last group varying fastest.
fn write_product(groups: &[Group], out: &mut impl Write) -> std::io::Result<()> {
    if groups.iter().any(Vec::is_empty) {
        return Ok(());
    }
    let mut index = vec![0usize; groups.len()];
    loop {
        for (g, &i) in groups.iter().zip(&index) {
            for v in &g[i] {
                write!(out, "{}:", v.len())?;
                out.write_all(v)?;
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
            if index[k] < groups[k].len() {
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
        let (mut f, _, _) = materialize(sweep, b'\n', None).unwrap();
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
    fn an_empty_source_gives_no_tuples() {
        let s = Sweep::of(vec![src(&["a"], false), src(&[], false)], false);
        assert!(tuples(&s).is_empty());
    }
}
