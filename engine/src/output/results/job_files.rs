//! `frun parallel --results NAME`: each job's stdout, stderr and sequence number saved in files
//! the way GNU Parallel lays them out — `NAME/1/VALUE/…/{stdout,stderr,seq}` (a header's column
//! names instead of the numbers), or, when NAME holds replacement strings, the file NAME names
//! (`.err` and `.seq` beside it; `stdout`, `stderr`, `seq` in it when it ends in `/`).
//!
//! It writes below the directory it was given and nowhere else: a value is one path component
//! (`/` escaped), `..` never climbs, and nothing below that directory is followed through a
//! symbolic link. It does not run jobs, and it has nothing to do with frun's own `--results`
//! (task outputs for `frun merge`, in `super`).

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat};
use nix::sys::stat::{Mode, fstatat, mkdirat};

use crate::exec::command::job::{JobLine, JobSpec};

/// The longest path component Linux takes (NAME_MAX); GNU Parallel cuts values there too.
const NAME_MAX: usize = 255;

/// Where a job's files go.
enum Layout {
    /// `NAME/<source>/<value>/…/`: one directory level per value.
    Tree,
    /// NAME holds replacement strings: the rendered path is the stdout file.
    File(JobLine),
    /// NAME holds replacement strings and ends in `/`: the rendered path is a directory.
    Dir(JobLine),
}

/// `--results NAME` of one run.
pub struct JobFiles {
    /// The directory everything goes below (NAME itself, or a template's fixed leading
    /// directories), opened once.
    root: OwnedFd,
    /// How the root is named in messages.
    shown: PathBuf,
    /// A template's text before the root's part is cut off its rendered path.
    prefix_len: usize,
    layout: Layout,
    /// Reads the job's values.
    values: JobLine,
    /// Column names (`--header :`); empty: source numbers.
    names: Vec<Vec<u8>>,
    delimiter: u8,
    /// `--compress`: the program stdout and stderr go through.
    compress: Option<Vec<u8>>,
}

/// Appends `v` as GNU Parallel spells a value in a path component: `\` as `\\`, `/` as `\_`,
/// a tab as `\t`; and, unlike GNU Parallel, `..` as `\..` (it would climb out of the tree).
pub fn escape(v: &[u8], out: &mut Vec<u8>) {
    if v == b".." {
        out.extend_from_slice(b"\\..");
        return;
    }
    for &b in v {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\_"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b => out.push(b),
        }
    }
}

/// The column names as GNU Parallel reads a header line: empty names at its end are no
/// names (those columns are numbered).
fn header_names(header: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let named = header
        .iter()
        .rposition(|n| !n.is_empty())
        .map_or(0, |i| i + 1);
    header[..named].to_vec()
}

/// The number a column name starts with (`12ab`: 12, `-1.5`: -1.5), 0 when none: the first
/// key GNU Parallel orders named columns by.
fn leading_number(name: &[u8]) -> f64 {
    let text = String::from_utf8_lossy(name);
    let text = text.trim_start();
    let mut end = 0;
    let mut dot = false;
    for (i, c) in text.char_indices() {
        match c {
            '-' | '+' if i == 0 => {}
            '.' if !dot => dot = true,
            '0'..='9' => {}
            _ => break,
        }
        end = i + c.len_utf8();
    }
    text[..end].parse().unwrap_or(0.0)
}

fn os(e: impl Into<io::Error>) -> String {
    crate::sys::errors::os_message(&e.into())
}

/// Creates `path` and its parents as needed (following symbolic links: the user named it) and
/// opens it as a directory.
fn open_root(path: &Path) -> Result<OwnedFd, String> {
    let shown = path.display();
    match std::fs::metadata(path) {
        Ok(m) if !m.is_dir() => return Err(format!("--results {shown}: not a directory")),
        Ok(_) => {}
        Err(_) => std::fs::create_dir_all(path)
            .map_err(|e| format!("--results {shown}: cannot create it: {}", os(e)))?,
    }
    let dir = File::open(path).map_err(|e| format!("--results {shown}: {}", os(e)))?;
    Ok(OwnedFd::from(dir))
}

impl JobFiles {
    /// A NUL byte in a value is `\0` in the names, as in the job line
    /// ([`JobLine::escaping_nul`]).
    #[must_use]
    pub fn escaping_nul(mut self) -> JobFiles {
        self.values = self.values.escaping_nul();
        self.layout = match self.layout {
            Layout::Tree => Layout::Tree,
            Layout::File(t) => Layout::File(t.escaping_nul()),
            Layout::Dir(t) => Layout::Dir(t.escaping_nul()),
        };
        self
    }

    /// Sets up `--results NAME` for the jobs of `job` (its header's names filled in), records
    /// ending in `delimiter`: creates the directory files go below. Refused (one line): a NAME
    /// that names a file, or that cannot be created.
    pub fn open(name: &[u8], job: &JobSpec, delimiter: u8) -> Result<JobFiles, String> {
        let values = JobLine::tag(&JobSpec {
            words: vec![b"{}".to_vec()],
            ..job.clone()
        })?;
        let template = JobLine::tag(&JobSpec {
            words: vec![name.to_vec()],
            ..job.clone()
        })?;
        if name.is_empty() {
            return Err("--results: empty name".into());
        }
        let (root, prefix_len, layout) = if template.has_replacement() {
            // The fixed text before the first replacement string, up to its last `/`.
            let mut fixed = Vec::new();
            template.render(b"", b'\n', 0, 0, &mut fixed);
            let lead = name.iter().zip(&fixed).take_while(|(a, b)| a == b).count();
            let cut = name[..lead]
                .iter()
                .rposition(|&b| b == b'/')
                .map_or(0, |i| i + 1);
            let root = if cut == 0 { &b"."[..] } else { &name[..cut] };
            let layout = if name.ends_with(b"/") {
                Layout::Dir(template)
            } else {
                Layout::File(template)
            };
            (root.to_vec(), cut, layout)
        } else {
            (name.to_vec(), 0, Layout::Tree)
        };
        let shown = PathBuf::from(std::ffi::OsStr::from_bytes(&root));
        Ok(JobFiles {
            root: open_root(&shown)?,
            shown,
            prefix_len,
            layout,
            values,
            names: header_names(&job.header),
            delimiter,
            compress: None,
        })
    }

    /// `--compress`: the stdout and stderr files hold what `program` makes of them.
    #[must_use]
    pub fn compressing(mut self, program: Option<Vec<u8>>) -> JobFiles {
        self.compress = program;
        self
    }

    /// The path components below the root for the job of `batch` (number `seq`, from 1), and
    /// whether the last one is the stdout file itself (a template without a trailing `/`).
    /// Err: a template's path would leave the root (a `..` in it).
    fn components(&self, batch: &[u8], seq: u64) -> Result<(Vec<Vec<u8>>, bool), String> {
        let mut parts = Vec::new();
        let push = |c: Vec<u8>, parts: &mut Vec<Vec<u8>>| {
            // An empty value, or `.`, adds no level (as in GNU Parallel's paths).
            if !c.is_empty() && c != b"." {
                let mut c = c;
                c.truncate(NAME_MAX);
                parts.push(c);
            }
        };
        let (template, file) = match &self.layout {
            Layout::Tree => {
                let mut levels = Vec::new();
                self.values.each_value(batch, self.delimiter, |k, v| {
                    let number = (k + 1).to_string().into_bytes();
                    let shown = self.names.get(k).unwrap_or(&number);
                    let mut name = Vec::new();
                    escape(shown, &mut name);
                    let mut value = Vec::new();
                    escape(v, &mut value);
                    levels.push(((leading_number(shown), shown.clone()), name, value));
                });
                // With `--header :`, columns nest in the order of their names (an unnamed
                // column's name is its number) as GNU Parallel nests them: by the number a
                // name starts with (0 for none), then by the name; numbered ones in the order
                // of their sources.
                if !self.names.is_empty() {
                    levels.sort_by(|a, b| {
                        (a.0)
                            .0
                            .total_cmp(&(b.0).0)
                            .then_with(|| (a.0).1.cmp(&(b.0).1))
                    });
                }
                for (_, name, value) in levels {
                    push(name, &mut parts);
                    push(value, &mut parts);
                }
                return Ok((parts, false));
            }
            Layout::File(t) => (t, true),
            Layout::Dir(t) => (t, false),
        };
        let mut path = Vec::new();
        template.render(batch, self.delimiter, seq, 1, &mut path);
        let rest = path.get(self.prefix_len..).unwrap_or_default();
        for c in rest.split(|&b| b == b'/') {
            if c == b".." {
                return Err(format!(
                    "--results: job {seq}'s path {} would leave {}; its output is not saved",
                    String::from_utf8_lossy(&path),
                    self.shown.display()
                ));
            }
            push(c.to_vec(), &mut parts);
        }
        if parts.is_empty() && file {
            return Err(format!(
                "--results: job {seq}'s file name is empty; its output is not saved"
            ));
        }
        Ok((parts, file))
    }

    /// Opens (creating it when `create`) the directory `parts` names below the root, never
    /// through a symbolic link.
    fn directory(&self, parts: &[Vec<u8>], create: bool) -> io::Result<OwnedFd> {
        let mut dir: Option<OwnedFd> = None;
        for c in parts {
            let at = dir.as_ref().map_or(self.root.as_fd(), |d| d.as_fd());
            let name = std::ffi::OsStr::from_bytes(c);
            if create {
                match mkdirat(at, name, Mode::from_bits_truncate(0o777)) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            let next = openat(
                at,
                name,
                OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_RDONLY,
                Mode::empty(),
            )?;
            dir = Some(next);
        }
        match dir {
            Some(d) => Ok(d),
            None => self.root.try_clone(),
        }
    }

    /// The three file names in the job's directory.
    fn file_names(parts: &mut Vec<Vec<u8>>, file: bool) -> [Vec<u8>; 3] {
        if file {
            let out = parts.pop().unwrap_or_default();
            let with = |ext: &[u8]| [&out[..], ext].concat();
            [with(b""), with(b".err"), with(b".seq")]
        } else {
            [b"stdout".to_vec(), b"stderr".to_vec(), b"seq".to_vec()]
        }
    }

    /// Saves the job of `batch` (number `seq`, from 1): its `stdout`, `stderr` and `seq`,
    /// replacing what an earlier run left there. The error is one line for stderr.
    pub fn save(&self, batch: &[u8], seq: u64, stdout: &[u8], stderr: &[u8]) -> Result<(), String> {
        let (mut parts, file) = self.components(batch, seq)?;
        let names = Self::file_names(&mut parts, file);
        let failed = |e: io::Error| {
            format!(
                "--results: cannot save job {seq} in {}: {}",
                self.shown.display(),
                os(e)
            )
        };
        let dir = self.directory(&parts, true).map_err(failed)?;
        let seq_text = seq.to_string();
        let packed;
        let (stdout, stderr) = match &self.compress {
            Some(program) => {
                packed = (
                    super::compress::compressed(program, stdout)?,
                    super::compress::compressed(program, stderr)?,
                );
                (&packed.0[..], &packed.1[..])
            }
            None => (stdout, stderr),
        };
        let contents: [&[u8]; 3] = [stdout, stderr, seq_text.as_bytes()];
        for (name, bytes) in names.iter().zip(contents) {
            let fd = openat(
                dir.as_fd(),
                std::ffi::OsStr::from_bytes(name),
                OFlag::O_WRONLY
                    | OFlag::O_CREAT
                    | OFlag::O_TRUNC
                    | OFlag::O_NOFOLLOW
                    | OFlag::O_CLOEXEC,
                Mode::from_bits_truncate(0o666),
            )
            .map_err(|e| failed(e.into()))?;
            File::from(fd).write_all(bytes).map_err(failed)?;
        }
        Ok(())
    }

    /// Whether an earlier run saved the job of `batch` (its `seq` file is there): `--resume`
    /// skips it.
    pub fn saved(&self, batch: &[u8], seq: u64) -> bool {
        let Ok((mut parts, file)) = self.components(batch, seq) else {
            return false;
        };
        let names = Self::file_names(&mut parts, file);
        let Ok(dir) = self.directory(&parts, false) else {
            return false;
        };
        fstatat(
            dir.as_fd(),
            std::ffi::OsStr::from_bytes(&names[2]),
            AtFlags::AT_SYMLINK_NOFOLLOW,
        )
        .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFREG)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_one_component_and_never_climb() {
        let mut out = Vec::new();
        for v in [&b"a/b"[..], b"..", b"x\\_y", b"t\tu", b"..."] {
            out.clear();
            escape(v, &mut out);
            assert!(!out.contains(&b'/'));
            assert_ne!(out, b"..");
        }
        out.clear();
        escape(b"x\\_y", &mut out);
        assert_eq!(out, b"x\\\\_y");
    }

    #[test]
    fn names_order_by_their_leading_number_first() {
        assert_eq!(leading_number(b"10"), 10.0);
        assert_eq!(leading_number(b"Col"), 0.0);
        assert_eq!(leading_number(b"-2x"), -2.0);
        assert_eq!(leading_number(b""), 0.0);
        assert_eq!(
            header_names(&[b"a".to_vec(), b"".to_vec()]),
            vec![b"a".to_vec()]
        );
    }
}
