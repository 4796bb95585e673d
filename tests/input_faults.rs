//! Input that misbehaves under frun: a regular input file (read in place, mapped) that shrinks
//! while frun runs (logrotate's copytruncate) ends the run with one clear error, exit 1 and a
//! resumable checkpoint instead of a SIGBUS; a NUL byte inside a newline-delimited record (which
//! cuts that argument, as in xargs) is warned about once, with the record's byte offset; a
//! stream whose read fails (a connection reset by its peer) is an error, not a short input.

use crate::common::*;
use std::fs::{File, OpenOptions};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// Records in the shrinking input: `seq 1 N`, about 21 MB.
const SHRINK_RECORDS: u64 = 3_000_000;

/// Prints its records (arguments, or stdin under `-s`) one per line; sleeps 50 ms first while the
/// file `$SLOW` exists (so the run is still going when the test truncates its input; the rest
/// of the run, and the resumed one, are quick).
const SLOW_PRINT: &str = r#"if [ -e "$SLOW" ]; then sleep 0.05; fi
if [ $# -gt 0 ]; then printf '%s\n' "$@"; else cat; fi"#;

/// A temporary directory holding the input file, the output file and the checkpoint.
struct Shrink {
    dir: tempfile::TempDir,
    input: PathBuf,
    out: PathBuf,
    slow: PathBuf,
    content: Vec<u8>,
}

impl Shrink {
    /// Asserts that frun's output file holds exactly the input's content (as at the start).
    #[track_caller]
    fn assert_output_is_input(&self, ctx: &str) {
        let got = std::fs::read(&self.out).unwrap();
        assert!(
            got == self.content,
            "{ctx}: the output differs from the input ({} vs {} bytes)",
            got.len(),
            self.content.len()
        );
    }

    fn new() -> Shrink {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("input.log");
        let content = seq_n(SHRINK_RECORDS);
        std::fs::write(&input, &content).unwrap();
        let out = dir.path().join("out");
        File::create(&out).unwrap();
        let slow = dir.path().join("slow");
        File::create(&slow).unwrap();
        Shrink {
            dir,
            input,
            out,
            slow,
            content,
        }
    }

    fn checkpoint(&self) -> PathBuf {
        self.dir.path().join(".frun_resume")
    }

    fn envs(&self) -> Vec<(&str, &str)> {
        vec![("SLOW", self.slow.to_str().unwrap())]
    }

    /// The arguments of both runs: `[--resume CK] MODE -k -j 2 -l 1000 sh -c SLOW_PRINT sh`,
    /// with the input given by `-a` (or as stdin, `how` = "stdin").
    fn args(&self, how: &str, mode: &[&str], resume: bool) -> Vec<String> {
        let mut a: Vec<String> = Vec::new();
        if resume {
            a.extend(["--resume".into(), self.checkpoint().display().to_string()]);
        }
        if how == "-a" {
            a.extend(["-a".into(), self.input.display().to_string()]);
        }
        a.extend(mode.iter().map(|s| s.to_string()));
        a.extend(
            ["-k", "-j", "2", "-l", "1000", "sh", "-c", SLOW_PRINT, "sh"]
                .iter()
                .map(|s| s.to_string()),
        );
        a
    }

    /// Runs frun with stdout appended to `out`; `shrink_to`: once some output is there, the
    /// input is truncated to this size. Returns the status and stderr.
    fn run(
        &self,
        how: &str,
        mode: &[&str],
        resume: bool,
        shrink_to: Option<u64>,
    ) -> (std::process::ExitStatus, String) {
        let stdout = OpenOptions::new().append(true).open(&self.out).unwrap();
        let stdin = if how == "stdin" {
            Stdio::from(File::open(&self.input).unwrap())
        } else {
            Stdio::null()
        };
        let args = self.args(how, mode, resume);
        let mut child = spawn_frun_in(
            self.dir.path(),
            &args,
            &self.envs(),
            stdin,
            Stdio::from(stdout),
        );
        let stderr = drain(child.stderr.take().unwrap());
        if let Some(size) = shrink_to {
            // Some batches are done (and journaled) before the input shrinks.
            wait_until("output before the truncation", LIMIT, || {
                file_lines(&self.out) >= 5000
            });
            truncate(&self.input, size);
            std::fs::remove_file(&self.slow).unwrap();
        }
        let st = wait_limit(&mut child, Duration::from_secs(120));
        (st, text(&stderr.join().unwrap()))
    }
}

fn truncate(path: &Path, size: u64) {
    OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(size)
        .unwrap();
}

/// The input shrinks in the middle of a run: frun stops with exit 1, one line naming the input
/// and both sizes, and the checkpoint; it is not killed by SIGBUS. Once the content is back,
/// `--resume` completes the run and the concatenated output is the input, exactly once.
fn shrinking_input_stops_cleanly_and_resumes(how: &str, mode: &[&str], shrink_to: fn(u64) -> u64) {
    let s = Shrink::new();
    let size = s.content.len() as u64;
    let to = shrink_to(size);
    let (st, e) = s.run(how, mode, false, Some(to));
    assert_eq!(
        st.signal(),
        None,
        "{how} {mode:?}: frun died by a signal: {st:?}; stderr: {e}"
    );
    assert_eq!(
        st.code(),
        Some(1),
        "{how} {mode:?}: exit status; stderr: {e}"
    );
    assert!(!e.contains("Bus error"), "{how} {mode:?}: {e}");
    let name = match how {
        "-a" => s.input.display().to_string(),
        _ => "standard input".to_string(),
    };
    let want = format!("frun: {name} shrank while being read (was {size} bytes, now {to})");
    let shrank: Vec<&str> = e.lines().filter(|l| l.contains("shrank")).collect();
    assert_eq!(shrank.len(), 1, "{how} {mode:?}: one line says so: {e:?}");
    assert!(
        shrank[0].starts_with(&want),
        "{how} {mode:?}: {:?} should start with {want:?}",
        shrank[0]
    );
    for l in e.lines() {
        assert!(
            l.starts_with("frun: "),
            "{how} {mode:?}: stray stderr line {l:?}"
        );
    }
    assert!(
        e.lines().any(|l| l.contains("--resume")),
        "{how} {mode:?}: says how to resume: {e}"
    );
    assert!(s.checkpoint().exists(), "{how} {mode:?}: checkpoint kept");
    let before = std::fs::read(&s.out).unwrap();
    assert!(
        s.content.starts_with(&before),
        "{how} {mode:?}: the output so far is a prefix of the input ({} bytes)",
        before.len()
    );

    // The file is restored (the same bytes); the rest runs quickly.
    std::fs::write(&s.input, &s.content).unwrap();
    let (st, e) = s.run(how, mode, true, None);
    assert_eq!(
        st.code(),
        Some(0),
        "{how} {mode:?}: resumed run; stderr: {e}"
    );
    assert!(
        e.lines().all(|l| l.starts_with("frun: resuming ")),
        "{how} {mode:?}: resumed run says only that it resumes: {e:?}"
    );
    s.assert_output_is_input(&format!("{how} {mode:?}: resumed, concatenated"));
    assert!(
        !s.checkpoint().exists(),
        "{how} {mode:?}: checkpoint removed"
    );
}

#[test]
fn input_file_truncated_to_zero_while_mapped() {
    shrinking_input_stops_cleanly_and_resumes("-a", &[], |_| 0);
}

/// Half, not on a page boundary: the page holding the new end reads as zeros past it, without
/// a fault.
#[test]
fn input_file_truncated_to_half_while_mapped() {
    shrinking_input_stops_cleanly_and_resumes("-a", &[], |n| n / 2 + 3);
}

/// Only the last few records go: no page of the mapping faults at all.
#[test]
fn input_file_loses_its_tail_within_the_last_page() {
    shrinking_input_stops_cleanly_and_resumes("-a", &[], |n| n - 20);
}

#[test]
fn stdin_file_truncated_while_mapped() {
    shrinking_input_stops_cleanly_and_resumes("stdin", &[], |n| n / 3);
}

/// `-s`: the bytes go to the command's stdin from the file itself.
#[test]
fn input_file_truncated_under_stdin_mode() {
    shrinking_input_stops_cleanly_and_resumes("-a", &["-s"], |n| n / 2 + 3);
}

/// A file appended to while frun runs: the run's input is what the file held at the start.
#[test]
fn input_file_growing_while_mapped_is_read_to_its_size_at_start() {
    let s = Shrink::new();
    let stdout = OpenOptions::new().append(true).open(&s.out).unwrap();
    let args = s.args("-a", &[], false);
    let mut child = spawn_frun_in(s.dir.path(), &args, &s.envs(), Stdio::null(), stdout.into());
    let stderr = drain(child.stderr.take().unwrap());
    wait_until("output before the file grows", LIMIT, || {
        file_lines(&s.out) >= 5000
    });
    let mut f = OpenOptions::new().append(true).open(&s.input).unwrap();
    std::io::Write::write_all(&mut f, b"appended 1\nappended 2\n").unwrap();
    drop(f);
    std::fs::remove_file(&s.slow).unwrap();
    let st = wait_limit(&mut child, Duration::from_secs(120));
    let e = text(&stderr.join().unwrap());
    assert_eq!(st.code(), Some(0), "stderr: {e}");
    assert_eq!(e, "");
    s.assert_output_is_input("a file growing while mapped is read to its size at the start");
}

/// `seq 1 100000` with a NUL byte inside records 1000 and 90000 (`1000` becomes `10\0x`);
/// returns the input and the byte offset of record 1000.
fn input_with_nuls() -> (Vec<u8>, u64) {
    let mut input = Vec::new();
    let mut first = 0;
    for (i, line) in seq_n(100_000).split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        match i + 1 {
            1000 => {
                first = input.len() as u64;
                input.extend_from_slice(b"10\0x");
            }
            90_000 => input.extend_from_slice(b"90\0y"),
            _ => input.extend_from_slice(line),
        }
        input.push(b'\n');
    }
    (input, first)
}

/// Arguments are cut at a NUL, as xargs cuts them, and frun says so once, naming the first
/// such record's byte offset.
#[test]
fn a_nul_inside_a_record_is_warned_about_once_with_its_offset() {
    let (input, first) = input_with_nuls();
    let print = ["sh", "-c", r#"printf '%s\n' "$@""#, "sh"];
    let want = run_prog("xargs", &[&["-d", "\\n"][..], &print[..]].concat(), &input);
    assert!(want.status.success());
    assert!(want.stdout.starts_with(b"1\n2\n"));
    assert!(
        text(&want.stdout).contains("\n10\n")
            && !text(&want.stdout).contains("10x")
            && !want.stdout.contains(&0),
        "xargs cuts the argument at the NUL"
    );
    for how in [&["-k", "-j", "2"][..], &["-k", "-j", "2", "-l", "100"][..]] {
        let o = frun(&[how, &print[..]].concat(), &input);
        assert_code(&o, 0);
        assert!(
            o.stdout == want.stdout,
            "{how:?}: output differs from xargs'"
        );
        let e = err(&o);
        assert_eq!(e.lines().count(), 1, "{how:?}: one warning line: {e:?}");
        assert!(
            e.starts_with(&format!(
                "frun: warning: the record at byte {first} contains a NUL byte"
            )),
            "{how:?}: {e:?}"
        );
        assert!(e.contains("cut"), "{how:?}: {e:?}");
    }
    // Dry run: the words shown are the ones a run would pass.
    let o = frun(&["-N", "-l", "5000", "echo"], &input);
    assert_code(&o, 0);
    assert_eq!(err(&o).lines().count(), 1, "{}", err(&o));
    assert!(err(&o).contains(&format!("at byte {first} ")));
}

/// A `-b` chunk passed whole as one argument (`+s`) is cut at a NUL too, whatever the delimiter.
#[test]
fn a_nul_inside_a_chunk_passed_as_an_argument_is_warned_about() {
    for delim in [&[][..], &["-z"][..]] {
        let o = frun(
            &[delim, &["-k", "-b", "3", "+s", "echo"][..]].concat(),
            b"abcd\0efgh\0i",
        );
        assert_code(&o, 0);
        assert_eq!(out(&o), "abc\nd\nfgh\n\n", "{delim:?}");
        let e = err(&o);
        assert_eq!(e.lines().count(), 1, "{delim:?}: one warning line: {e:?}");
        assert!(
            e.starts_with("frun: warning: the chunk at byte 3 contains a NUL byte"),
            "{delim:?}: {e:?}"
        );
    }
}

/// Where records are not arguments, a NUL is data: no warning.
#[test]
fn a_nul_is_data_on_stdin_and_a_delimiter_with_minus_zero() {
    let (input, _) = input_with_nuls();
    let o = frun(&["-s", "-k", "-j", "2", "cat"], &input);
    assert_clean(&o);
    assert!(o.stdout == input, "-s passes bytes verbatim");
    let small = b"a\nb\0c\nd\0e\n";
    let o = frun(&["-0", "-k", "printf", "%s|"], small);
    assert_clean(&o);
    let want = run_prog("xargs", &["-0", "printf", "%s|"], small);
    assert_eq!(out(&o), "a\nb|c\nd|e\n|");
    assert_eq!(out(&o), out(&want));
}

/// A connection reset by its peer fails one read (ECONNRESET) and then reads as ended. frun
/// reads a stream that is all there at the start before its workers start; the reset met there
/// must still be reported: the records before it run, then one error line, exit 1, and a
/// checkpoint to resume from.
#[test]
fn a_connection_reset_under_the_input_is_an_error() {
    use nix::sys::socket::{setsockopt, sockopt::Linger};
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut peer = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (ours, _) = listener.accept().unwrap();
    peer.write_all(b"a\nb\n").unwrap();
    // Linger 0: closing sends a reset instead of an orderly end.
    let reset = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    setsockopt(&peer, Linger, &reset).unwrap();
    drop(peer);
    std::thread::sleep(Duration::from_millis(50));
    let dir = tempfile::tempdir().unwrap();
    let mut child = frun_command_in(dir.path(), &["-k", "-l", "1", "echo"], &[])
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(ours)))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let status = wait_limit(&mut child, LIMIT);
    let o = std::process::Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    assert_code(&o, 1);
    assert_eq!(out(&o), "a\nb\n");
    assert!(
        err(&o).contains("frun: cannot read input: Connection reset by peer"),
        "{}",
        err(&o)
    );
    assert!(dir.path().join(".frun_resume").exists(), "{}", err(&o));
}
