//! The lines at the start of a `--pipe` input that are no records: a first line dropped
//! (`--skip-first-line`) and a header (`--header N` lines, or what a pattern matches there) that
//! every job gets before its block. Splits them off and hands back the rest as the input.
//!
//! It only reads the start of the input and passes the rest on; it cuts no block and starts
//! no command.

use std::fs::File;
use std::io::{Read, Write};

/// What the start of a piped input holds before its records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipeHead {
    /// The first line is dropped (`--skip-first-line`).
    pub skip_first_line: bool,
    /// Then the header, given to every job before its block.
    pub header: Option<HeadSpec>,
}

/// How the header ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadSpec {
    /// This many lines.
    Lines(u64),
    /// What this regular expression matches at the start (GNU Parallel's `--header REGEX`).
    Pattern(String),
}

/// The most a header pattern is matched against.
const PATTERN_WINDOW: usize = 1 << 20;

/// The rest of the input after its head: an in-memory copy for a regular file (it stays a file
/// to cut in place), else a pipe a feeder fills.
pub struct Rest {
    /// The input after its head.
    pub file: File,
    /// The header's bytes.
    pub header: Vec<u8>,
    /// What fills the pipe `file` is (None: `file` is a copy).
    pub feeder: Option<crate::input::Feeder>,
}

/// Reads `input`'s head as `head` says and gives the rest.
pub fn split(mut input: File, head: &PipeHead) -> Result<Rest, String> {
    let pattern = match &head.header {
        Some(HeadSpec::Pattern(p)) => Some(
            regex::bytes::RegexBuilder::new(&format!("^(?:{p})"))
                .unicode(false)
                .build()
                .map_err(|e| {
                    // The library's message spans lines: its last one says what is wrong.
                    let e = e.to_string();
                    let why = e.lines().last().unwrap_or_default();
                    let why = why.trim().trim_start_matches("error: ");
                    format!("--header '{p}' is not a regular expression: {why}")
                })?,
        ),
        _ => None,
    };
    let lines = match &head.header {
        Some(HeadSpec::Lines(n)) => *n,
        _ => 0,
    } + u64::from(head.skip_first_line);
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    // Enough lines (or, for a pattern, the window or the end) are read first.
    loop {
        let newlines = memchr::memchr_iter(b'\n', &buf).count() as u64;
        let enough = match &pattern {
            Some(_) => buf.len() >= PATTERN_WINDOW && newlines >= lines,
            None => newlines >= lines,
        };
        if enough {
            break;
        }
        let n = read_some(&mut input, &mut chunk)?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let mut at = 0;
    if head.skip_first_line {
        at = memchr::memchr(b'\n', &buf).map_or(buf.len(), |i| i + 1);
    }
    let header_end = match (&head.header, &pattern) {
        (Some(HeadSpec::Lines(n)), _) => memchr::memchr_iter(b'\n', &buf[at..])
            .nth((*n as usize).saturating_sub(1))
            .filter(|_| *n > 0)
            .map_or(if *n == 0 { at } else { buf.len() }, |i| at + i + 1),
        (_, Some(re)) => re.find(&buf[at..]).map_or(at, |m| at + m.end()),
        _ => at,
    };
    let header = buf[at..header_end].to_vec();
    let left = buf.split_off(header_end);
    let regular = input.metadata().is_ok_and(|m| m.is_file());
    if regular {
        let fd =
            nix::sys::memfd::memfd_create(c"frun-input", nix::sys::memfd::MFdFlags::MFD_CLOEXEC)
                .map_err(|e| format!("cannot copy the input in memory: {e}"))?;
        let mut copy = File::from(fd);
        copy.write_all(&left)
            .and_then(|()| std::io::copy(&mut input, &mut copy).map(|_| ()))
            .and_then(|()| std::io::Seek::rewind(&mut copy))
            .map_err(|e| format!("cannot copy the input in memory: {e}"))?;
        return Ok(Rest {
            file: copy,
            header,
            feeder: None,
        });
    }
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| format!("cannot make a pipe: {e}"))?;
    let mut writer = File::from(write);
    let feed: crate::input::Feeder = Box::new(move || {
        let copied = writer
            .write_all(&left)
            .and_then(|()| std::io::copy(&mut input, &mut writer).map(|_| ()));
        match copied {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(format!("cannot read the input: {e}"))
            }
            _ => Ok(()),
        }
    });
    Ok(Rest {
        file: File::from(read),
        header,
        feeder: Some(feed),
    })
}

fn read_some(input: &mut File, chunk: &mut [u8]) -> Result<usize, String> {
    loop {
        match input.read(chunk) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("cannot read the input: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &[u8], head: PipeHead) -> (Vec<u8>, Vec<u8>) {
        let fd =
            nix::sys::memfd::memfd_create(c"t", nix::sys::memfd::MFdFlags::MFD_CLOEXEC).unwrap();
        let mut f = File::from(fd);
        f.write_all(input).unwrap();
        std::io::Seek::rewind(&mut f).unwrap();
        let mut rest = split(f, &head).unwrap();
        let mut out = Vec::new();
        rest.file.read_to_end(&mut out).unwrap();
        (rest.header, out)
    }

    #[test]
    fn a_skipped_line_then_a_header_of_lines_or_a_pattern() {
        let h = |skip, header| PipeHead {
            skip_first_line: skip,
            header,
        };
        assert_eq!(
            run(b"s\nh\n1\n2\n", h(true, Some(HeadSpec::Lines(1)))),
            (b"h\n".to_vec(), b"1\n2\n".to_vec())
        );
        assert_eq!(
            run(
                b"h1\nh2\n1\n",
                h(false, Some(HeadSpec::Pattern(r".*\n.*\n".into())))
            ),
            (b"h1\nh2\n".to_vec(), b"1\n".to_vec())
        );
        assert_eq!(
            run(b"a\nb\n", h(false, Some(HeadSpec::Lines(0)))),
            (Vec::new(), b"a\nb\n".to_vec())
        );
        assert_eq!(run(b"a", h(true, None)), (Vec::new(), Vec::new()));
    }
}
