//! `frun parallel --results NAME.json`, `NAME.csv`, `NAME.tsv` (`-.json` etc.: stdout): one
//! record per job in GNU Parallel's table formats — its sequence number, host, start time,
//! runtime, bytes sent and received, exit value, signal, command line, values, stdout and
//! stderr — in place of the job's output.
//!
//! It opens the file and formats records; the emitter writes them (in order with `-k`), so a
//! record never lands inside another. It does not run jobs and knows nothing of the
//! `--results DIR` tree (`job_files`).

use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use crate::exec::command::job::{JobLine, JobSpec};

/// The format of a results table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableFormat {
    /// One JSON object a line.
    Json,
    /// Comma-separated values, a header line first.
    Csv,
    /// Tab-separated values, a header line first.
    Tsv,
}

impl TableFormat {
    /// The format a `--results` name's extension asks for.
    #[must_use]
    pub fn of_name(name: &[u8]) -> Option<TableFormat> {
        if name.ends_with(b".json") {
            Some(TableFormat::Json)
        } else if name.ends_with(b".csv") {
            Some(TableFormat::Csv)
        } else if name.ends_with(b".tsv") {
            Some(TableFormat::Tsv)
        } else {
            None
        }
    }
}

/// What the front end asks for: the format, and the file (None: stdout).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSpec {
    /// JSON, CSV or TSV.
    pub format: TableFormat,
    /// The file (None: stdout).
    pub file: Option<PathBuf>,
}

impl TableSpec {
    /// The table a `--results NAME` names (`-.json`, `-.csv`, `-.tsv`: stdout), or None when
    /// NAME is no table.
    #[must_use]
    pub fn of_name(name: &[u8]) -> Option<TableSpec> {
        use std::os::unix::ffi::OsStrExt;
        let format = TableFormat::of_name(name)?;
        let stem = &name[..name.iter().rposition(|&b| b == b'.').unwrap_or(0)];
        let file = (stem != b"-").then(|| PathBuf::from(std::ffi::OsStr::from_bytes(name)));
        Some(TableSpec { format, file })
    }
}

/// One finished job, as its record shows it.
pub struct Row<'a> {
    /// What the joblog says of it too (1-based `seq`, start, runtime, bytes, status).
    pub facts: crate::output::joblog::JobFacts,
    /// The command line as the joblog shows it.
    pub command: &'a [u8],
    /// The job's records (its values are read from them).
    pub batch: &'a [u8],
    /// Its output (tagged, or a `--files` name, as it would be printed).
    pub stdout: &'a [u8],
    /// What it wrote to stderr.
    pub stderr: &'a [u8],
}

/// A results table of one run.
pub struct Table {
    format: TableFormat,
    /// The file records go to (None: stdout), opened and emptied.
    file: Option<OwnedFd>,
    /// Reads the job's values.
    values: JobLine,
    /// The header line's names of the value columns.
    columns: Vec<Vec<u8>>,
    delimiter: u8,
}

impl Table {
    /// Sets up the table for the jobs of `job` (its header's names filled in; without them,
    /// `sources` value columns), records ending in `delimiter`: opens (emptying) the file.
    /// The error is one line for the user.
    pub fn open(
        spec: &TableSpec,
        job: &JobSpec,
        delimiter: u8,
        sources: usize,
    ) -> Result<Table, String> {
        let values = JobLine::tag(&JobSpec {
            words: vec![b"{}".to_vec()],
            ..job.clone()
        })?;
        let file = match &spec.file {
            None => None,
            Some(path) => Some(OwnedFd::from(
                std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(0o666)
                    .custom_flags(libc::O_CLOEXEC)
                    .open(path)
                    .map_err(|e| {
                        format!(
                            "--results {}: {}",
                            path.display(),
                            crate::sys::errors::os_message(&e)
                        )
                    })?,
            )),
        };
        let columns = if job.header.is_empty() {
            (1..=sources.max(1))
                .map(|k| format!("V{k}").into_bytes())
                .collect()
        } else {
            job.header.clone()
        };
        Ok(Table {
            format: spec.format,
            file,
            values,
            columns,
            delimiter,
        })
    }

    /// A NUL byte in a value is `\0`, as in the job line ([`JobLine::escaping_nul`]).
    #[must_use]
    pub fn escaping_nul(mut self) -> Table {
        self.values = self.values.escaping_nul();
        self
    }

    /// The file records go to; None: stdout.
    #[must_use]
    pub fn file(&self) -> Option<&OwnedFd> {
        self.file.as_ref()
    }

    /// The line that comes before every record (CSV and TSV name their columns).
    #[must_use]
    pub fn header(&self) -> Vec<u8> {
        let sep = match self.format {
            TableFormat::Json => return Vec::new(),
            TableFormat::Csv => b',',
            TableFormat::Tsv => b'\t',
        };
        let fixed: [&[u8]; 9] = [
            b"Seq",
            b"Host",
            b"Starttime",
            b"JobRuntime",
            b"Send",
            b"Receive",
            b"Exitval",
            b"Signal",
            b"Command",
        ];
        let mut out = Vec::new();
        let names = fixed
            .iter()
            .copied()
            .chain(self.columns.iter().map(Vec::as_slice))
            .chain([&b"Stdout"[..], b"Stderr"]);
        for (i, name) in names.enumerate() {
            if i > 0 {
                out.push(sep);
            }
            separated_field(name, sep, &mut out);
        }
        out.push(b'\n');
        out
    }

    /// Appends the record of `row` to `out`.
    pub fn record(&self, row: &Row<'_>, out: &mut Vec<u8>) {
        let f = &row.facts;
        let start = f.start_secs();
        let runtime = f.runtime.as_secs_f64();
        let mut values = Vec::new();
        self.values
            .each_value(row.batch, self.delimiter, |_, v| values.push(v.to_vec()));
        let sep = match self.format {
            TableFormat::Json => {
                let _ = write!(
                    out,
                    "{{ \"Seq\": {}, \"Host\": \":\", \"Starttime\": {start:.3}, \
                     \"JobRuntime\": {runtime:.3}, \"Send\": {}, \"Receive\": {}, \
                     \"Exitval\": {}, \"Signal\": {}, \"Command\": ",
                    f.seq, f.send, f.receive, f.exitval, f.signal
                );
                json_string(row.command, out);
                out.extend_from_slice(b", \"V\": [ ");
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    json_string(v, out);
                }
                out.extend_from_slice(b" ], \"Stdout\": ");
                json_string(row.stdout, out);
                out.extend_from_slice(b", \"Stderr\": ");
                json_string(row.stderr, out);
                out.extend_from_slice(b" }\n");
                return;
            }
            TableFormat::Csv => b',',
            TableFormat::Tsv => b'\t',
        };
        let s = sep as char;
        let _ = write!(
            out,
            "{}{s}:{s}{start:.3}{s}{runtime:.3}{s}{}{s}{}{s}{}{s}{}{s}",
            f.seq, f.send, f.receive, f.exitval, f.signal
        );
        separated_field(row.command, sep, out);
        for v in &values {
            out.push(sep);
            separated_field(v, sep, out);
        }
        out.push(sep);
        separated_field(row.stdout, sep, out);
        out.push(sep);
        separated_field(row.stderr, sep, out);
        out.push(b'\n');
    }
}

/// Appends `v` as a JSON string: `"` and `\` escaped, control bytes as `\u00XX`; other bytes
/// as they are (GNU Parallel's records hold the output's bytes, UTF-8 or not).
pub fn json_string(v: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in v {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0..=0x1f => {
                let _ = write!(out, "\\u{:04x}", b);
            }
            b => out.push(b),
        }
    }
    out.push(b'"');
}

/// Appends `v` as a field of a table separated by `sep`: in double quotes (a quote doubled)
/// when it holds the separator, a quote or white space, else as it is.
pub fn separated_field(v: &[u8], sep: u8, out: &mut Vec<u8>) {
    let quoted = v
        .iter()
        .any(|&b| b == sep || matches!(b, b'"' | b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c));
    if !quoted {
        out.extend_from_slice(v);
        return;
    }
    out.push(b'"');
    for &b in v {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_quotes_backslashes_and_control_bytes() {
        let mut out = Vec::new();
        json_string(b"\"\t\\\"\n\x7f", &mut out);
        assert_eq!(out, b"\"\\\"\\u0009\\\\\\\"\\u000a\x7f\"");
    }

    #[test]
    fn fields_are_quoted_only_when_they_must_be() {
        let mut out = Vec::new();
        for v in [&b"a,b"[..], b"a\"b", b"x y", b"e'f", b"", b"c,d"] {
            separated_field(v, b',', &mut out);
            out.push(b'|');
        }
        assert_eq!(out, b"\"a,b\"|\"a\"\"b\"|\"x y\"|e'f||\"c,d\"|");
        out.clear();
        separated_field(b"c,d", b'\t', &mut out);
        assert_eq!(out, b"c,d");
    }

    #[test]
    fn names_say_the_format_and_the_file() {
        let s = TableSpec::of_name(b"-.json").unwrap();
        assert_eq!((s.format, s.file), (TableFormat::Json, None));
        let s = TableSpec::of_name(b"out/x.tsv").unwrap();
        assert_eq!(s.file, Some(PathBuf::from("out/x.tsv")));
        assert!(TableSpec::of_name(b"dir").is_none());
    }
}
