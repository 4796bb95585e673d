//! Checkpoints and `--resume`: the journal (`./.frun_resume`, or `--checkpoint-file FILE`)
//! exists while frun runs, starts with `frun-checkpoint 1`, is removed after a run that exits 0
//! or 123 and kept after a stop by signal, `--halt` or given-up batches. `--resume FILE` skips
//! what was done, truncates an appended stdout file to the recorded size and appends, so the
//! result equals one uninterrupted run; it refuses another command, another input, or an
//! output file shorter than recorded. A randomized property test kills frun (SIGTERM or
//! SIGKILL) at random moments and resumes until done. Preemption signals (SIGUSR1/SIGUSR2
//! under Slurm or `FRUN_PREEMPT=1`) stop with a checkpoint too. Every frun runs in its own
//! temporary directory.

use crate::common::*;
use std::fs::{File, OpenOptions};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Extra environment variables for frun.
type Env = &'static [(&'static str, &'static str)];

/// The two output modes every case is checked in.
const MODES: [&[&str]; 2] = [&[], &["-k"]];

/// The journal's first line.
const HEADER: &str = "frun-checkpoint 1";

/// A slow command: logs its records to `$LOG`, prints them, sleeps 10 ms.
const SLOW_SCRIPT: &str = r#"printf '%s\n' "$@" >> "$LOG"; printf '%s\n' "$@"; sleep 0.01"#;

/// A frun running with stdin from a file and stdout appended to a file.
struct Job {
    child: Child,
    stderr: thread::JoinHandle<Vec<u8>>,
}

impl Job {
    fn start(dir: &Path, args: &[&str], envs: &[(&str, &str)], input: &Path, out: &Path) -> Job {
        let stdout = OpenOptions::new()
            .create(true)
            .append(true)
            .open(out)
            .unwrap();
        Job::start_with(dir, args, envs, input, stdout)
    }

    fn start_with(
        dir: &Path,
        args: &[&str],
        envs: &[(&str, &str)],
        input: &Path,
        stdout: File,
    ) -> Job {
        let stdin = File::open(input).unwrap();
        let mut child = spawn_frun_in(dir, args, envs, Stdio::from(stdin), Stdio::from(stdout));
        let stderr = drain(child.stderr.take().unwrap());
        Job { child, stderr }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the end (at most [`LIMIT`]); returns the status and stderr.
    fn finish(mut self) -> (ExitStatus, String) {
        let st = wait_limit(&mut self.child, LIMIT);
        (st, text(&self.stderr.join().unwrap()))
    }
}

/// A temporary directory with `input` (`seq n`) and an output file `out`; frun runs there.
struct Setup {
    dir: tempfile::TempDir,
    input: PathBuf,
    out: PathBuf,
    n: u64,
}

impl Setup {
    fn new(n: u64) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("input");
        std::fs::write(&input, seq_n(n)).unwrap();
        let out = dir.path().join("out");
        File::create(&out).unwrap();
        Setup { dir, input, out, n }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn checkpoint(&self) -> PathBuf {
        self.path(".frun_resume")
    }

    fn output(&self) -> Vec<u8> {
        std::fs::read(&self.out).unwrap()
    }

    /// Starts `frun [--resume .frun_resume] MODE -j 2 -l 1 sh -c SLOW_SCRIPT sh`, logging to
    /// `log`.
    fn start_slow(&self, mode: &[&str], resume: bool, log: &str, envs: &[(&str, &str)]) -> Job {
        let ck = self.checkpoint();
        let mut args: Vec<&str> = Vec::new();
        if resume {
            args.extend_from_slice(&["--resume", ck.to_str().unwrap()]);
        }
        args.extend_from_slice(mode);
        args.extend_from_slice(&["-j", "2", "-l", "1", "sh", "-c", SLOW_SCRIPT, "sh"]);
        let log = self.path(log);
        let mut all_env = vec![("LOG", log.to_str().unwrap())];
        all_env.extend_from_slice(envs);
        Job::start(self.dir.path(), &args, &all_env, &self.input, &self.out)
    }

    /// Waits until the output holds at least `lines` lines; returns how many it holds.
    fn wait_output(&self, lines: usize) -> usize {
        wait_until(
            &format!("{lines} lines of output"),
            Duration::from_secs(20),
            || file_lines(&self.out) >= lines,
        );
        file_lines(&self.out)
    }
}

/// Asserts the checkpoint exists and starts with [`HEADER`].
#[track_caller]
fn assert_checkpoint(path: &Path, ctx: &str) {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{ctx}: no checkpoint: {e}"));
    let first = text(&data).lines().next().unwrap_or("").to_owned();
    assert_eq!(first, HEADER, "{ctx}: first line of the checkpoint");
}

/// Asserts a refusal: exit 2 and one stderr line starting with `frun: `.
#[track_caller]
fn assert_refused(st: ExitStatus, e: &str, ctx: &str) {
    assert_eq!(st.code(), Some(2), "{ctx}: status {st:?}, stderr {e}");
    assert!(
        e.starts_with("frun: ") && e.ends_with('\n') && e.matches('\n').count() == 1,
        "{ctx}: one stderr line starting with 'frun: ' expected: {e:?}"
    );
}

/// Interrupts a slow run of `setup` with `sig` once `lines` lines are out; asserts the status,
/// that the checkpoint is kept and that stderr says how to resume. Returns the number of lines
/// that were out before the signal.
fn interrupt(
    setup: &Setup,
    mode: &[&str],
    sig: &str,
    code: i32,
    lines: usize,
    envs: &[(&str, &str)],
) -> usize {
    let job = setup.start_slow(mode, false, "log1", envs);
    let before = setup.wait_output(lines);
    send_signal(job.pid(), sig);
    let (st, e) = job.finish();
    let ctx = format!("SIG{sig} {mode:?} {envs:?}");
    assert_stopped_by(&st, code - 128, &format!("{ctx}: stderr {e}"));
    assert_checkpoint(&setup.checkpoint(), &ctx);
    assert!(
        e.contains("--resume"),
        "{ctx}: stderr must say how to resume: {e}"
    );
    // forkrun's words, which its users' scripts look for.
    assert!(
        e.contains(&format!("Caught SIG{sig}")),
        "{ctx}: stderr must name the signal: {e}"
    );
    before
}

/// Resumes a slow run to its end and checks: exit 0, the output equals `seq n` (exactly under
/// `-k`), the checkpoint is gone, and the resumed run did not run again any of the `before`
/// records that were out before the interruption.
fn resume_to_end(setup: &Setup, mode: &[&str], before: usize, envs: &[(&str, &str)], ctx: &str) {
    let (st, e) = setup.start_slow(mode, true, "log2", envs).finish();
    assert_eq!(
        st.code(),
        Some(0),
        "{ctx} {mode:?}: resume: {st:?}, stderr {e}"
    );
    assert_output(mode, &setup.output(), &seq_n(setup.n), ctx);
    assert!(
        !setup.checkpoint().exists(),
        "{ctx} {mode:?}: checkpoint left after a successful resume"
    );
    let rerun = file_lines(&setup.path("log2"));
    assert!(
        rerun + before <= setup.n as usize,
        "{ctx} {mode:?}: the resumed run ran {rerun} records although {before} of {} were \
         done before",
        setup.n
    );
}

/// The journal exists while frun runs, starts with `frun-checkpoint 1`, and is removed when the
/// run exits 0, and also when it exits 123.
#[test]
fn checkpoint_exists_while_running_and_is_removed_at_the_end() {
    for mode in MODES {
        for (script, code) in [
            (r#"echo "$1"; sleep 0.01"#, 0),
            (r#"echo "$1"; sleep 0.01; [ "$1" != 150 ]"#, 123),
        ] {
            let s = Setup::new(200);
            let mut args = mode.to_vec();
            args.extend_from_slice(&["-j", "2", "-l", "1", "sh", "-c", script, "sh"]);
            let job = Job::start(s.dir.path(), &args, &[], &s.input, &s.out);
            let ck = s.checkpoint();
            wait_until("the checkpoint", Duration::from_secs(10), || {
                std::fs::read(&ck).is_ok_and(|d| d.contains(&b'\n'))
            });
            assert_checkpoint(&ck, "while running");
            let (st, e) = job.finish();
            assert_eq!(st.code(), Some(code), "{mode:?}: {st:?}, stderr {e}");
            assert!(!ck.exists(), "{mode:?}: checkpoint kept after exit {code}");
            assert_output(mode, &s.output(), &seq_n(200), "uninterrupted");
        }
    }
}

/// When the reader of stdout goes away (`| head -1`) frun exits 0 and removes the journal,
/// which existed while it ran.
#[test]
fn checkpoint_is_removed_when_the_reader_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        r#"cd '{}' || exit 99
seq 100000 | "$FRUN" -l 1 sh -c 'echo "$1"; sleep 0.01' sh | {{
  head -1 >/dev/null; i=0
  while [ ! -e .frun_resume ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
  [ -e .frun_resume ] && echo seen
}}
echo "status ${{PIPESTATUS[1]}}"
[ -e .frun_resume ] && echo kept || echo removed"#,
        dir.path().display()
    );
    let o = bash(&script);
    assert_eq!(out(&o), "seen\nstatus 0\nremoved\n", "stderr: {}", err(&o));
}

/// SIGINT, SIGTERM, SIGHUP and SIGQUIT stop frun (dead of the first three once it has cleaned
/// up, 128+n for SIGQUIT) and keep the checkpoint (stderr
/// says how to resume); `--resume` then skips the records already done, completes the output
/// (exactly one uninterrupted run's bytes under `-k`) and removes the checkpoint.
#[test]
fn stop_signals_keep_the_checkpoint_and_resume_completes() {
    for (sig, code) in [("INT", 130), ("TERM", 143), ("HUP", 129), ("QUIT", 131)] {
        for mode in MODES {
            let s = Setup::new(200);
            let before = interrupt(&s, mode, sig, code, 40, &[]);
            resume_to_end(&s, mode, before, &[], &format!("SIG{sig}"));
        }
    }
}

/// After SIGKILL (no chance to clean up) the journal is still there and resumable, and it was
/// up to date: records that were out 300 ms before the kill are not run again.
#[test]
fn sigkill_leaves_an_up_to_date_resumable_checkpoint() {
    for mode in MODES {
        let s = Setup::new(300);
        let job = s.start_slow(mode, false, "log1", &[]);
        let before = s.wait_output(60);
        thread::sleep(Duration::from_millis(300));
        send_signal(job.pid(), "KILL");
        let (st, _) = job.finish();
        assert_eq!(st.code(), None, "{mode:?}: {st:?}");
        assert_checkpoint(&s.checkpoint(), "after SIGKILL");
        resume_to_end(&s, mode, before, &[], "SIGKILL");
    }
}

/// Bytes appended to the output file after the recorded size (here: junk added by hand) are cut
/// off by `--resume` before it appends: the result is exactly one run's output.
#[test]
fn resume_truncates_the_output_to_the_recorded_size() {
    for mode in MODES {
        let s = Setup::new(200);
        let before = interrupt(&s, mode, "TERM", 143, 40, &[]);
        let mut f = OpenOptions::new().append(true).open(&s.out).unwrap();
        std::io::Write::write_all(&mut f, b"junk 1\njunk 2\npartial").unwrap();
        drop(f);
        resume_to_end(&s, mode, before, &[], "junk appended");
    }
}

/// `--resume` refuses a checkpoint made for another command (other command words) or another
/// input (other bytes at the start): exit 2, one `frun: ` line, no command run. The right
/// command and input then resume to the end.
#[test]
fn resume_refuses_another_command_or_input() {
    for mode in MODES {
        let s = Setup::new(200);
        let before = interrupt(&s, mode, "TERM", 143, 40, &[]);
        let ck = s.checkpoint();
        let ck = ck.to_str().unwrap();
        let marker = s.path("wrong-ran");
        let wrong_script = format!(": > '{}'; {SLOW_SCRIPT}", marker.display());
        let log = s.path("log-wrong");
        let env = [("LOG", log.to_str().unwrap())];

        let mut args = vec!["--resume", ck];
        args.extend_from_slice(mode);
        args.extend_from_slice(&[
            "-j",
            "2",
            "-l",
            "1",
            "sh",
            "-c",
            wrong_script.as_str(),
            "sh",
        ]);
        let (st, e) = Job::start(s.dir.path(), &args, &env, &s.input, &s.out).finish();
        assert_refused(st, &e, &format!("{mode:?} another command"));
        assert!(!marker.exists(), "{mode:?}: the other command ran");

        let other_input = s.path("other-input");
        std::fs::write(&other_input, seq(0, 199)).unwrap();
        let mut args = vec!["--resume", ck];
        args.extend_from_slice(mode);
        args.extend_from_slice(&["-j", "2", "-l", "1", "sh", "-c", SLOW_SCRIPT, "sh"]);
        let (st, e) = Job::start(s.dir.path(), &args, &env, &other_input, &s.out).finish();
        assert_refused(st, &e, &format!("{mode:?} another input"));
        assert!(!log.exists(), "{mode:?}: the command ran on another input");

        assert_checkpoint(&s.checkpoint(), "after refusals");
        resume_to_end(&s, mode, before, &[], "after refusals");
    }
}

/// An output file shorter than the recorded size but not empty (cut by hand too far) is
/// refused: exit 2, a message mentioning `>>`, no command run.
#[test]
fn resume_refuses_a_truncated_output_file() {
    for mode in MODES {
        let s = Setup::new(200);
        interrupt(&s, mode, "TERM", 143, 40, &[]);
        let ck = s.checkpoint();
        let mut args = vec!["--resume", ck.to_str().unwrap()];
        args.extend_from_slice(mode);
        args.extend_from_slice(&["-j", "2", "-l", "1", "sh", "-c", SLOW_SCRIPT, "sh"]);
        let log = s.path("log2");
        let truncated = OpenOptions::new().append(true).open(&s.out).unwrap();
        truncated.set_len(1).unwrap();
        let env = [("LOG", log.to_str().unwrap())];
        let (st, e) = Job::start_with(s.dir.path(), &args, &env, &s.input, truncated).finish();
        assert_eq!(st.code(), Some(2), "{mode:?}: {st:?}, stderr {e}");
        assert!(
            e.starts_with("frun: ") && e.contains(">>"),
            "{mode:?}: stderr must start with 'frun: ' and mention '>>': {e:?}"
        );
        assert!(!log.exists(), "{mode:?}: a command ran");
    }
}

/// forkrun's way of resuming: the stop message says "truncate your output file to exactly N
/// bytes"; the file cut there, followed by what a resume writes into a new, empty file, is one
/// uninterrupted run's output (exactly, under `-k`), and the resume runs nothing done before.
#[test]
fn resume_into_a_new_empty_file_continues_the_output() {
    for mode in MODES {
        let s = Setup::new(200);
        let job = s.start_slow(mode, false, "log1", &[]);
        let before = s.wait_output(40);
        send_signal(job.pid(), "TERM");
        let (st, e) = job.finish();
        assert_stopped_by(&st, libc::SIGTERM, &format!("{mode:?}: stderr {e}"));
        let keep: u64 = e
            .split("truncate your output file to exactly ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{mode:?}: no byte count on stderr: {e}"));
        let mut first = s.output();
        assert!(
            keep as usize <= first.len(),
            "{mode:?}: {keep} > {}",
            first.len()
        );
        first.truncate(keep as usize);

        let second = s.path("out2");
        let log2 = s.path("log2");
        let ck = s.checkpoint();
        let mut args = vec!["--resume", ck.to_str().unwrap()];
        args.extend_from_slice(mode);
        args.extend_from_slice(&["-j", "2", "-l", "1", "sh", "-c", SLOW_SCRIPT, "sh"]);
        let env = [("LOG", log2.to_str().unwrap())];
        let fresh = File::create(&second).unwrap();
        let (st, e) = Job::start_with(s.dir.path(), &args, &env, &s.input, fresh).finish();
        assert_eq!(st.code(), Some(0), "{mode:?}: resume: {st:?}, stderr {e}");
        first.extend(std::fs::read(&second).unwrap());
        assert_output(
            mode,
            &first,
            &seq_n(200),
            "first output cut, then a new file",
        );
        let rerun = file_lines(&log2);
        assert!(rerun + before <= 200, "{mode:?}: {rerun} records ran again");
        assert!(!ck.exists(), "{mode:?}: checkpoint kept after the resume");
    }
}

/// A `--resume` file that does not exist: status 1 (as forkrun), one line saying it was not
/// found, nothing run.
#[test]
fn a_missing_resume_file_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let m = marker.to_str().unwrap();
    let o = frun_in(
        dir.path(),
        &[
            "--resume",
            "no-such-checkpoint",
            "sh",
            "-c",
            r#": > "$M""#,
            "sh",
        ],
        &[("M", m)],
        b"1\n",
    );
    assert_code(&o, 1);
    let e = err(&o);
    assert!(
        e.starts_with("frun: ") && e.contains("not found") && e.matches('\n').count() == 1,
        "{e:?}"
    );
    assert!(!marker.exists(), "the command ran");
}

/// `--checkpoint-file FILE` puts the journal in FILE (none in the current directory); `--resume
/// FILE` continues it there and removes it at the end.
#[test]
fn checkpoint_file_chooses_the_journal() {
    for mode in MODES {
        let s = Setup::new(200);
        std::fs::create_dir(s.path("ck")).unwrap();
        let journal = s.path("ck/journal");
        let j = journal.to_str().unwrap();
        let log1 = s.path("log1");
        let mut args = vec!["--checkpoint-file", j];
        args.extend_from_slice(mode);
        args.extend_from_slice(&["-j", "2", "-l", "1", "sh", "-c", SLOW_SCRIPT, "sh"]);
        let env = [("LOG", log1.to_str().unwrap())];
        let job = Job::start(s.dir.path(), &args, &env, &s.input, &s.out);
        let before = s.wait_output(40);
        send_signal(job.pid(), "TERM");
        let (st, e) = job.finish();
        assert_stopped_by(&st, libc::SIGTERM, &format!("{mode:?}: stderr {e}"));
        assert_checkpoint(&journal, "--checkpoint-file");
        assert!(e.contains("--resume"), "{mode:?}: {e}");
        assert!(
            !s.checkpoint().exists(),
            "{mode:?}: .frun_resume written too"
        );

        let log2 = s.path("log2");
        let mut args = vec!["--resume", j];
        args.extend_from_slice(mode);
        args.extend_from_slice(&["-j", "2", "-l", "1", "sh", "-c", SLOW_SCRIPT, "sh"]);
        let env = [("LOG", log2.to_str().unwrap())];
        let (st, e) = Job::start(s.dir.path(), &args, &env, &s.input, &s.out).finish();
        assert_eq!(st.code(), Some(0), "{mode:?}: resume: {st:?}, stderr {e}");
        assert_output(mode, &s.output(), &seq_n(200), "--checkpoint-file");
        assert!(!journal.exists(), "{mode:?}: journal kept after success");
        assert!(!s.checkpoint().exists(), "{mode:?}: .frun_resume written");
        let rerun = file_lines(&log2);
        assert!(rerun + before <= 200, "{mode:?}: {rerun} records ran again");
    }
}

/// An unwritable checkpoint location is an error before any work: exit 2, `frun: ` on stderr,
/// the command never ran.
#[test]
fn unwritable_checkpoint_location_is_an_error_at_start() {
    for mode in MODES {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let script = format!(": > '{}'", marker.display());
        let mut args = vec!["--checkpoint-file", "/nonexistent-dir/x"];
        args.extend_from_slice(mode);
        args.extend_from_slice(&["sh", "-c", script.as_str(), "sh"]);
        let o = frun_in(dir.path(), &args, &[], &seq_n(20));
        assert_code(&o, 2);
        assert!(err(&o).starts_with("frun: "), "{mode:?}: {}", err(&o));
        assert!(!marker.exists(), "{mode:?}: the command ran");
    }
}

/// A run whose batch was given up (exit 3) keeps its checkpoint (stderr says how to resume).
/// The given-up batch was not completed, so once its cause is gone (here: a file the command
/// checks) `--resume` runs it: every record then appears exactly once.
#[test]
fn given_up_batches_keep_the_checkpoint_and_resume_runs_them() {
    let script = r#"if [ "$1" = 50 ] && [ -e "$D/broken" ]; then kill -KILL $$; fi; echo "$1""#;
    for mode in MODES {
        let s = Setup::new(100);
        std::fs::write(s.path("broken"), "").unwrap();
        let d = s.dir.path().to_str().unwrap().to_owned();
        let env = [("D", d.as_str()), ("FRUN_RETRY_LIMIT", "1")];
        let mut args = mode.to_vec();
        args.extend_from_slice(&["-l", "1", "sh", "-c", script, "sh"]);
        let (st, e) = Job::start(s.dir.path(), &args, &env, &s.input, &s.out).finish();
        assert_eq!(st.code(), Some(3), "{mode:?}: {st:?}, stderr {e}");
        assert!(e.contains("given up"), "{mode:?}: {e}");
        assert!(e.contains("--resume"), "{mode:?}: {e}");
        assert_checkpoint(&s.checkpoint(), "given up");

        std::fs::remove_file(s.path("broken")).unwrap();
        let ck = s.checkpoint();
        let mut args = vec!["--resume", ck.to_str().unwrap()];
        args.extend_from_slice(mode);
        args.extend_from_slice(&["-l", "1", "sh", "-c", script, "sh"]);
        let (st, e) = Job::start(s.dir.path(), &args, &env, &s.input, &s.out).finish();
        assert_eq!(st.code(), Some(0), "{mode:?}: resume: {st:?}, stderr {e}");
        assert_eq!(
            sorted_lines(&s.output()),
            sorted_lines(&seq_n(100)),
            "{mode:?}: every record once after the resume"
        );
        assert!(!s.checkpoint().exists(), "{mode:?}: checkpoint kept");
    }
}

/// Preemption: under Slurm (`SLURM_JOB_ID` set, `FRUN_PREEMPT` unset) SIGUSR1 stops frun with
/// 138; with `FRUN_PREEMPT=1` SIGUSR2 gives 140; `FORKRUN_PREEMPT_MODE=1` works too. The
/// checkpoint is kept and resuming completes the output exactly once.
#[test]
fn preemption_signals_checkpoint_and_resume() {
    let cases: [(Env, &str, i32); 3] = [
        (&[("SLURM_JOB_ID", "1")], "USR1", 138),
        (&[("FRUN_PREEMPT", "1")], "USR2", 140),
        (&[("FORKRUN_PREEMPT_MODE", "1")], "USR1", 138),
    ];
    for (env, sig, code) in cases {
        for mode in MODES {
            let s = Setup::new(200);
            let before = interrupt(&s, mode, sig, code, 40, env);
            resume_to_end(&s, mode, before, env, &format!("SIG{sig} {env:?}"));
        }
    }
}

// ---- The resume property test ----

/// Records in the property test's input.
const PROP_N: u64 = 200_000;
/// Iterations per output mode.
const PROP_ITERATIONS: u64 = 50;
/// Interruptions per iteration at most; then the run goes to its end.
const PROP_MAX_KILLS: u32 = 10;
/// The property test's command (after the mode flags); its uninterrupted output is `seq N`.
/// Batches grow to 256 records (about 800 commands a run, ~0.7 s on 2 cores): with `1:64` one
/// run took ~2 s here, too slow for 100 iterations of several runs each.
const PROP_CMD: &[&str] = &["-l", "1:256", "sh", "-c", r#"printf '%s\n' "$@""#, "sh"];

/// True when `got` is one complete run's output: `want` exactly under `-k`, otherwise every
/// number 1..=N exactly once (in any order).
fn complete(ordered: bool, got: &[u8], want: &[u8]) -> Result<(), String> {
    if ordered {
        if got == want {
            return Ok(());
        }
        let at = got.iter().zip(want).position(|(a, b)| a != b);
        let at = at.unwrap_or(got.len().min(want.len()));
        let from = at.saturating_sub(40);
        return Err(format!(
            "{} bytes, want {}; first difference at byte {at}: got {:?}, want {:?}",
            got.len(),
            want.len(),
            text(&got[from..(at + 40).min(got.len())]),
            text(&want[from..(at + 40).min(want.len())])
        ));
    }
    let mut seen = vec![0u32; PROP_N as usize + 1];
    for l in text(got).split_terminator('\n') {
        match l.parse::<usize>() {
            Ok(v) if (1..=PROP_N as usize).contains(&v) => seen[v] += 1,
            _ => return Err(format!("unexpected line {l:?}")),
        }
    }
    if !got.is_empty() && !got.ends_with(b"\n") {
        return Err("output does not end with a newline".into());
    }
    if let Some(v) = (1..seen.len()).find(|&v| seen[v] > 1) {
        return Err(format!("{v} appears {} times", seen[v]));
    }
    let missing = seen[1..].iter().filter(|&&c| c == 0).count();
    if missing > 0 {
        let first = (1..seen.len()).find(|&v| seen[v] == 0).unwrap();
        return Err(format!("{missing} records missing, the first {first}"));
    }
    Ok(())
}

/// Starts frun on `seq 200000` (a regular file) with stdout appended to an output file, kills
/// it (SIGTERM or SIGKILL, at random times) and resumes it, up to [`PROP_MAX_KILLS`] times,
/// then lets it finish; the output must be one uninterrupted run's. Repeated
/// [`PROP_ITERATIONS`] times from a fixed seed.
fn resume_property(mode: &[&str], seed: u64) {
    let ordered = mode.contains(&"-k");
    let data_dir = tempfile::tempdir().unwrap();
    let input = data_dir.path().join("input");
    let want = seq_n(PROP_N);
    std::fs::write(&input, &want).unwrap();
    let mut rng = SeedRng::new(seed);
    let started = Instant::now();
    let mut kills_total = 0;
    for it in 0..PROP_ITERATIONS {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let ck = dir.path().join(".frun_resume");
        let ck_s = ck.to_str().unwrap().to_owned();
        File::create(&out).unwrap();
        let mut history: Vec<String> = Vec::new();
        let mut resuming = false;
        let mut kills = 0;
        loop {
            let ctx = |history: &[String]| {
                format!(
                    "seed {seed:#x}, mode {mode:?}, iteration {it}; runs so far:\n  {}",
                    history.join("\n  ")
                )
            };
            let mut args: Vec<&str> = Vec::new();
            if resuming {
                args.extend_from_slice(&["--resume", &ck_s]);
            }
            args.extend_from_slice(mode);
            args.extend_from_slice(PROP_CMD);
            let size_before = std::fs::metadata(&out).unwrap().len();
            let mut job = Job::start(dir.path(), &args, &[], &input, &out);
            let plan = (kills < PROP_MAX_KILLS).then(|| {
                // Mostly anywhere in a run; one in five early, while frun starts up.
                let delay = if rng.below(5) == 0 {
                    rng.below(50)
                } else {
                    rng.below(400)
                };
                let sig = if rng.below(2) == 0 { "TERM" } else { "KILL" };
                (Duration::from_millis(delay), sig)
            });
            let mut sent = None;
            if let Some((delay, sig)) = plan {
                let t = Instant::now();
                let mut exited = false;
                while t.elapsed() < delay {
                    if job.child.try_wait().unwrap().is_some() {
                        exited = true;
                        break;
                    }
                    thread::sleep(Duration::from_millis(2));
                }
                // Not reaped yet, so the pid is still frun's (maybe a zombie's).
                if !exited {
                    send_signal(job.pid(), sig);
                    sent = Some((delay, sig));
                }
            }
            let (st, e) = job.finish();
            let size_after = std::fs::metadata(&out).unwrap().len();
            history.push(format!(
                "{} kill {sent:?} -> {st:?}; output {size_before} -> {size_after} bytes; \
                 checkpoint {}; stderr {e:?}",
                if resuming { "resume" } else { "fresh" },
                if ck.exists() { "kept" } else { "absent" },
            ));
            if st.code() == Some(0) {
                assert!(
                    !ck.exists(),
                    "checkpoint kept after exit 0; {}",
                    ctx(&history)
                );
                break;
            }
            let expected = match sent {
                Some((_, "TERM")) => st.code() == Some(143) || st.signal() == Some(15),
                Some((_, _)) => st.signal() == Some(9),
                None => false,
            };
            assert!(expected, "unexpected status; {}", ctx(&history));
            kills += 1;
            kills_total += 1;
            if ck.exists() {
                resuming = true;
                continue;
            }
            // No checkpoint: acceptable only if frun had finished (killed while exiting), or
            // if a fresh run was stopped before it wrote one (then start from scratch).
            if complete(ordered, &std::fs::read(&out).unwrap(), &want).is_ok() {
                break;
            }
            assert!(!resuming, "the checkpoint vanished; {}", ctx(&history));
            File::create(&out).unwrap();
        }
        if let Err(why) = complete(ordered, &std::fs::read(&out).unwrap(), &want) {
            panic!(
                "seed {seed:#x}, mode {mode:?}, iteration {it}: output is not one run's: \
                 {why}\nruns:\n  {}",
                history.join("\n  ")
            );
        }
    }
    eprintln!(
        "resume property {mode:?}: {PROP_ITERATIONS} iterations, {kills_total} interruptions, \
         {:?}",
        started.elapsed()
    );
}

/// THE RESUME PROPERTY, ordered output: however often frun is killed (SIGTERM or SIGKILL, at
/// random moments) and resumed with its stdout file opened for appending, the final file is
/// byte for byte `seq 200000`.
#[test]
fn resume_property_ordered() {
    resume_property(&["-k"], 0xC0FF_EE01);
}

/// THE RESUME PROPERTY, buffered output: the final file holds every record of `seq 200000`
/// exactly once.
#[test]
fn resume_property_buffered() {
    resume_property(&[], 0xC0FF_EE02);
}

/// Stops a slow `-k` run of `setup` (resuming its checkpoint when `resume`) with SIGINT once
/// `more` lines beyond those already there are out; asserts the checkpoint is kept.
fn stop_midway(setup: &Setup, resume: bool, log: &str, more: usize) {
    let had = file_lines(&setup.out);
    let job = setup.start_slow(&["-k"], resume, log, &[]);
    setup.wait_output(had + more);
    send_signal(job.pid(), "INT");
    let (st, e) = job.finish();
    assert_stopped_by(&st, libc::SIGINT, &format!("stop: stderr {e}"));
    assert_checkpoint(&setup.checkpoint(), "stopped midway");
}

/// The checkpoint's text.
fn journal_text(setup: &Setup) -> String {
    text(&std::fs::read(setup.checkpoint()).unwrap())
}

/// A checkpoint whose last line was torn (a crash, or a full disk, in the middle of a write)
/// is cut back to its last whole line before a resumed run appends to it: whether the torn
/// line was the `stopped` line or a `done` entry, resuming, stopping again and resuming to the
/// end gives exactly `seq N` (no record doubled, none lost) and exit 0.
#[test]
fn a_torn_last_line_is_cut_before_a_resume_appends() {
    // How much of the checkpoint's end is torn off: the `stopped` line's last bytes, or the
    // `stopped` line and half of the last `done` entry.
    type Tear = (&'static str, fn(&str) -> usize);
    let tears: [Tear; 2] = [
        ("the stopped line", |t: &str| t.len() - 3),
        ("a done entry", |t: &str| {
            let body = &t[..t.trim_end_matches('\n').rfind('\n').unwrap()];
            let last = body.rfind('\n').unwrap() + 1;
            assert!(body[last..].starts_with("done "), "{t}");
            last + (body.len() - last) / 2
        }),
    ];
    for (torn, keep) in tears {
        let s = Setup::new(300);
        stop_midway(&s, false, "log1", 40);
        let t = journal_text(&s);
        let f = OpenOptions::new().write(true).open(s.checkpoint()).unwrap();
        f.set_len(keep(&t) as u64).unwrap();
        drop(f);
        stop_midway(&s, true, "log2", 40);
        let t = journal_text(&s);
        resume_to_end(&s, &["-k"], 0, &[], &format!("torn {torn}"));
        assert!(
            t.lines()
                .all(|l| !l.contains("done ") || l.starts_with("done ")),
            "{torn}: an entry was glued onto the torn line:\n{t}"
        );
    }
}

/// A checkpoint that is not self-consistent is refused, never resumed: a `done` entry deleted
/// from the middle (the resumed run would run that batch again and print its output a second
/// time), an entry doubled, or two entries run together on one line. Exit 2, one line naming
/// the file and the line, and the output file is left as it was.
#[test]
fn a_checkpoint_with_a_missing_doubled_or_glued_entry_is_refused() {
    type Edit = fn(&mut Vec<String>) -> usize;
    let edits: [(&str, Edit); 3] = [
        ("a done entry deleted", |l| {
            let at = l.iter().position(|x| x.starts_with("done ")).unwrap() + 3;
            l.remove(at);
            at + 1
        }),
        ("a done entry doubled", |l| {
            let at = l.iter().position(|x| x.starts_with("done ")).unwrap() + 3;
            l.insert(at, l[at].clone());
            at + 2
        }),
        ("two entries on one line", |l| {
            let at = l.iter().position(|x| x.starts_with("done ")).unwrap() + 3;
            let next = l.remove(at + 1);
            l[at].push_str(&next);
            at + 1
        }),
    ];
    for (what, edit) in edits {
        let s = Setup::new(200);
        stop_midway(&s, false, "log1", 40);
        let mut lines: Vec<String> = journal_text(&s).lines().map(str::to_string).collect();
        let line = edit(&mut lines);
        std::fs::write(s.checkpoint(), lines.join("\n") + "\n").unwrap();
        let out_before = s.output();
        let (st, e) = s.start_slow(&["-k"], true, "log2", &[]).finish();
        assert_refused(st, &e, what);
        let ck = s.checkpoint();
        assert!(
            e.contains(ck.to_str().unwrap()) && e.contains(&format!("line {line}:")),
            "{what}: the message must name the file and line {line}: {e}"
        );
        assert_eq!(s.output(), out_before, "{what}: the output was changed");
        assert_eq!(file_lines(&s.path("log2")), 0, "{what}: a command ran");
    }
}
