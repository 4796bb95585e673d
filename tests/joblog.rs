//! `--joblog`, `--job-timeout`, `--delay` and every `--halt` form, checked against GNU Parallel
//! running the same jobs (fields that are times are checked for plausibility instead).

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::common::*;

const PARALLEL: &str = "/usr/bin/parallel";

/// A fresh directory holding `job.sh`: it prints its argument and a newline, except that
/// `eN` exits N after printing and `kN` kills itself with signal N before printing anything;
/// `sN` sleeps N seconds first. Every start appends the argument to `starts`.
fn jobs_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("job.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"$1\" >> \"${0%/*}/starts\"\ncase $1 in k*) kill -${1#k} $$;; \
         s*) sleep ${1#s};; esac\nprintf '%s\\n' \"$1\"\ncase $1 in e*) exit ${1#e};; esac\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    (dir, script)
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// A joblog's lines: the header, then each line's fields, sorted by Seq.
fn read_log(text: &str) -> (String, Vec<Vec<String>>) {
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default().to_string();
    let mut rows: Vec<Vec<String>> = lines
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect();
    for r in &rows {
        assert_eq!(r.len(), 9, "nine fields: {r:?}");
    }
    rows.sort_by_key(|r| r[0].parse::<u64>().unwrap());
    (header, rows)
}

fn parallel(args: &[&str], dir: &Path, input: &[u8]) -> std::process::Output {
    let mut c = assert_cmd::Command::new(PARALLEL);
    c.args(["--will-cite"])
        .args(args)
        .current_dir(dir)
        .write_stdin(input.to_vec())
        .timeout(LIMIT);
    c.output().expect("run GNU Parallel")
}

/// The fields that are not times (Seq, Host, Send, Receive, Exitval, Signal, Command).
fn untimed(rows: &[Vec<String>]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| {
            r.iter()
                .enumerate()
                .filter(|(i, _)| *i != 2 && *i != 3)
                .map(|(_, f)| f.clone())
                .collect()
        })
        .collect()
}

/// Checks the time fields: Starttime within `[from, to]`, JobRuntime at most the run's length,
/// both with three decimals and JobRuntime padded to ten characters as GNU Parallel does.
fn assert_times_plausible(rows: &[Vec<String>], from: f64, to: f64) {
    for r in rows {
        let (start, runtime) = (&r[2], &r[3]);
        assert_eq!(start.split('.').nth(1).map(str::len), Some(3), "{r:?}");
        assert_eq!(runtime.len(), 10, "padded to 10: {r:?}");
        let s: f64 = start.parse().unwrap();
        let t: f64 = runtime.trim().parse().unwrap();
        assert!(
            s >= from - 0.002 && s <= to + 0.002,
            "{s} not in {from}..{to}"
        );
        assert!(t >= 0.0 && t <= to - from + 0.002, "runtime {t}");
    }
}

#[test]
fn the_fields_are_gnu_parallels_for_the_same_jobs() {
    let (dir, _) = jobs_dir();
    let recs = ["ok", "e3", "k9", "hello world", "e255", "k15", "last"];
    let input: Vec<u8> = recs
        .iter()
        .flat_map(|r| format!("{r}\n").into_bytes())
        .collect();
    let gnu_log = dir.path().join("gnu.log");
    let mut gnu = Command::new(PARALLEL);
    gnu.args([
        "--will-cite",
        "-j1",
        "--joblog",
        gnu_log.to_str().unwrap(),
        "./job.sh",
        ":::",
    ])
    .args(recs)
    .current_dir(dir.path());
    let g2 = gnu.output().unwrap();
    let frun_log = dir.path().join("frun.log");
    let from = now();
    let f = frun_in(
        dir.path(),
        &[
            "-j1",
            "-l1",
            "--joblog",
            frun_log.to_str().unwrap(),
            "./job.sh",
        ],
        &[("FRUN_RETRY_LIMIT", "0")],
        &input,
    );
    let to = now();
    assert_eq!(sorted_lines(&f.stdout), sorted_lines(&g2.stdout));
    let (gh, grows) = read_log(&std::fs::read_to_string(&gnu_log).unwrap());
    let (fh, frows) = read_log(&std::fs::read_to_string(&frun_log).unwrap());
    assert_eq!(fh, gh, "header");
    assert_eq!(untimed(&frows), untimed(&grows));
    assert_times_plausible(&frows, from, to);
}

#[test]
fn send_and_receive_count_stdin_and_stdout_bytes_as_gnu_pipe_does() {
    let dir = tempfile::tempdir().unwrap();
    let input = seq(1, 7);
    let gnu_log = dir.path().join("gnu.log");
    parallel(
        &[
            "-j1",
            "--pipe",
            "-N2",
            "--joblog",
            gnu_log.to_str().unwrap(),
            "wc",
            "-c",
        ],
        dir.path(),
        &input,
    );
    let frun_log = dir.path().join("frun.log");
    let f = frun(
        &[
            "-j1",
            "-s",
            "-L2",
            "--joblog",
            frun_log.to_str().unwrap(),
            "wc",
            "-c",
        ],
        &input,
    );
    assert_clean(&f);
    let (_, grows) = read_log(&std::fs::read_to_string(&gnu_log).unwrap());
    let (_, frows) = read_log(&std::fs::read_to_string(&frun_log).unwrap());
    assert_eq!(untimed(&frows), untimed(&grows));
}

#[test]
fn joblog_dash_writes_each_line_after_its_jobs_output_on_stdout() {
    let g = Command::new(PARALLEL)
        .args([
            "--will-cite",
            "-j1",
            "--joblog",
            "-",
            "echo",
            ":::",
            "a",
            "b",
        ])
        .output()
        .unwrap();
    let f = frun(&["-j1", "-l1", "--joblog", "-", "echo"], b"a\nb\n");
    assert_clean(&f);
    let shape = |o: &[u8]| -> Vec<String> {
        lines(o)
            .iter()
            .map(|l| {
                let v: Vec<&str> = l.split('\t').collect();
                if v.len() == 9 && v[0] != "Seq" {
                    format!("{} {} {}", v[0], v[6], v[8])
                } else {
                    l.clone()
                }
            })
            .collect()
    };
    assert_eq!(shape(&f.stdout), shape(&g.stdout));
}

#[test]
fn a_job_over_its_time_is_killed_not_retried_and_the_run_goes_on() {
    let (dir, _) = jobs_dir();
    let log = dir.path().join("log");
    let t = Instant::now();
    let f = frun_in(
        dir.path(),
        &[
            "-j2",
            "-l1",
            "--job-timeout",
            "0.5",
            "--joblog",
            log.to_str().unwrap(),
            "./job.sh",
        ],
        &[],
        b"one\ns30\ntwo\nthree\n",
    );
    // Killed after 0.5 s, not waited for: far below the job's 30 s, however busy the machine.
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert_code(&f, 123);
    assert_eq!(sorted_lines(&f.stdout), ["one", "three", "two"]);
    assert!(err(&f).contains("--job-timeout"), "{}", err(&f));
    let starts = std::fs::read_to_string(dir.path().join("starts")).unwrap();
    assert_eq!(starts.matches("s30").count(), 1, "not retried: {starts}");
    let (_, rows) = read_log(&std::fs::read_to_string(&log).unwrap());
    let killed = rows.iter().find(|r| r[8] == "./job.sh s30").unwrap();
    // GNU Parallel's fields for a job it killed for its time, from a run of it.
    let gnu_log = dir.path().join("gnu.log");
    Command::new(PARALLEL)
        .args([
            "--will-cite",
            "--timeout",
            "0.5",
            "--joblog",
            gnu_log.to_str().unwrap(),
        ])
        .args(["./job.sh", ":::", "s30"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let (_, grows) = read_log(&std::fs::read_to_string(&gnu_log).unwrap());
    assert_eq!(
        untimed(std::slice::from_ref(killed))[0][2..],
        untimed(&grows)[0][2..]
    );
    let runtime: f64 = killed[3].trim().parse().unwrap();
    assert!((0.5..20.0).contains(&runtime), "{runtime}");
}

#[test]
fn a_job_that_ignores_term_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let f = frun_in(
        dir.path(),
        &[
            "-l1",
            "--job-timeout",
            "200ms",
            "--joblog",
            "-",
            "sh",
            "-c",
            "trap '' TERM; sleep $0",
        ],
        &[],
        b"30\n",
    );
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert_code(&f, 123);
    let (_, rows) = read_log(&out(&f));
    assert_eq!((rows[0][6].as_str(), rows[0][7].as_str()), ("-1", "9"));
}

#[test]
fn a_percent_timeout_is_a_share_of_the_median_runtime() {
    let (dir, _) = jobs_dir();
    let t = Instant::now();
    let f = frun_in(
        dir.path(),
        &[
            "-j1",
            "-l1",
            "--job-timeout",
            "300%",
            "--joblog",
            "-",
            "./job.sh",
        ],
        &[],
        b"s0.1\ns0.1\ns0.1\ns30\ns0.1\n",
    );
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert_code(&f, 123);
    let (_, rows) = read_log(
        &out(&f)
            .lines()
            .filter(|l| l.contains('\t'))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    let exits: Vec<&str> = rows.iter().map(|r| r[6].as_str()).collect();
    assert_eq!(exits, ["0", "0", "0", "-1", "0"]);
    // Killed at three times the median of the runtimes before it (as the joblog shows them,
    // so a busy machine's slower jobs move the limit with them), not after its 30 s.
    let runtime = |r: &Vec<String>| r[3].trim().parse::<f64>().unwrap();
    let mut before: Vec<f64> = rows[..3].iter().map(runtime).collect();
    before.sort_by(f64::total_cmp);
    let limit = 3.0 * before[1];
    let killed = runtime(&rows[3]);
    assert!(
        killed >= limit - 0.01 && killed < limit + 1.7,
        "killed after {killed}s, limit {limit}s"
    );
}

#[test]
fn delay_spaces_starts_across_workers() {
    let f = frun(
        &["-j4", "-l1", "--delay", "0.3", "--joblog", "-", "true"],
        &seq(1, 5),
    );
    assert_clean(&f);
    let (_, rows) = read_log(&out(&f));
    let mut starts: Vec<f64> = rows.iter().map(|r| r[2].parse().unwrap()).collect();
    starts.sort_by(f64::total_cmp);
    assert_eq!(starts.len(), 5);
    for w in starts.windows(2) {
        // (Start times are shown to the millisecond.)
        assert!(w[1] - w[0] >= 0.299, "{starts:?}");
    }
}

#[test]
fn every_halt_form_runs_what_gnu_parallel_runs() {
    let (dir, _) = jobs_dir();
    let recs = ["1", "2", "e3", "4", "5", "e6", "7", "8", "e9"];
    let input: Vec<u8> = recs
        .iter()
        .flat_map(|r| format!("{r}\n").into_bytes())
        .collect();
    // (frun's form, GNU Parallel's, frun's exit status)
    let cases = [
        ("now,fail=1", "now,fail=1", 1),
        ("soon,fail=2", "soon,fail=2", 1),
        ("now,2", "now,fail=2", 1),
        ("soon,1", "soon,fail=1", 1),
        ("now,success=2", "now,success=2", 0),
        ("soon,success=4", "soon,success=4", 123),
        ("now,done=2", "now,done=2", 0),
        ("soon,done=4", "soon,done=4", 123),
        ("now,done=50%", "now,done=50%", 123),
        ("never", "never", 123),
    ];
    for (mine, theirs, code) in cases {
        let mut gnu = Command::new(PARALLEL);
        gnu.args([
            "--will-cite",
            "-j1",
            "-k",
            "--halt",
            theirs,
            "./job.sh",
            ":::",
        ])
        .args(recs)
        .current_dir(dir.path());
        let g = gnu.output().unwrap();
        let f = frun_in(
            dir.path(),
            &["-j1", "-l1", "-k", "--halt", mine, "./job.sh"],
            &[],
            &input,
        );
        assert_eq!(out(&f), text(&g.stdout), "--halt {mine}: what ran");
        assert_code(&f, code);
    }
}

#[test]
fn bad_values_are_one_line_and_exit_2_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let file = dir.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let under_file = file.join("log");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--job-timeout".into(), "0".into()], "--job-timeout"),
        (vec!["--job-timeout".into(), "-1".into()], "--job-timeout"),
        (vec!["--job-timeout".into(), "abc".into()], "--job-timeout"),
        (vec!["--job-timeout".into(), "5x".into()], "--job-timeout"),
        (vec!["--job-timeout".into(), "0%".into()], "--job-timeout"),
        (vec!["--delay".into(), "soon".into()], "--delay"),
        (vec!["--delay".into(), "-1".into()], "--delay"),
        (vec!["--halt".into(), "x=1".into()], "--halt"),
        (vec!["--halt".into(), "now,0".into()], "--halt"),
        (vec!["--halt".into(), "done=0".into()], "--halt"),
        (vec!["--halt".into(), "success=101%".into()], "--halt"),
        (vec!["--joblog".into(), "".into()], "--joblog"),
        (
            vec!["--joblog".into(), dir.path().display().to_string()],
            "directory",
        ),
        (
            vec!["--joblog".into(), under_file.display().to_string()],
            "--joblog",
        ),
        (
            vec!["--joblog".into(), "/nonexistent/dir/log".into()],
            "--joblog",
        ),
        (vec!["--joblog".into(), fifo.display().to_string()], "FIFO"),
        (
            vec![
                "--joblog".into(),
                file.display().to_string(),
                "-a".into(),
                file.display().to_string(),
            ],
            "input",
        ),
    ];
    for (args, name) in cases {
        let mut all = args.clone();
        all.extend(["-l1".into(), "touch".into(), marker.display().to_string()]);
        let f = frun(&all, b"1\n");
        assert_usage_error(&f, &[name]);
        assert!(!marker.exists(), "{args:?} ran the command");
    }
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "x",
        "the input was not touched"
    );
}

#[test]
fn a_symlink_is_followed_and_a_read_fifo_gets_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let f = frun(&["-l1", "--joblog", link.to_str().unwrap(), "true"], b"a\n");
    assert_clean(&f);
    let (_, rows) = read_log(&std::fs::read_to_string(&target).unwrap());
    assert_eq!(rows.len(), 1);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );

    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    // A reader that never blocks: the FIFO has a reader from now on.
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let f = frun(
        &["-l1", "--joblog", fifo.to_str().unwrap(), "true"],
        b"a\nb\n",
    );
    assert_clean(&f);
    let mut got = Vec::new();
    std::io::Read::read_to_end(&mut reader, &mut got).unwrap();
    let (header, rows) = read_log(&text(&got));
    assert!(header.starts_with("Seq\tHost"), "{header}");
    assert_eq!(rows.len(), 2);
}

/// A way to tear a log: what is torn, how many of the log's bytes are kept, and which jobs
/// run twice.
type Tear = (&'static str, fn(&str) -> usize, &'static [&'static str]);

/// Runs `frun parallel -j1 --joblog log FLAGS ./job.sh ::: a b c d` in `dir`.
fn parallel_jobs(dir: &Path, flags: &[&str]) -> std::process::Output {
    let mut args = vec!["parallel", "-j1", "--joblog", "log"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["./job.sh", ":::", "a", "b", "c", "d"]);
    frun_in(dir, &args, &[], b"")
}

/// A joblog whose last line was torn (a crash or a full disk in the middle of a write, even
/// of the header) is cut back to its last whole line before `--resume` or `--resume-failed`
/// appends: the torn job runs once more, its new line starts a line of its own, and a second
/// resume runs nothing. The log ends with every job exactly once, in whole lines.
#[test]
fn a_torn_joblog_line_is_cut_before_a_resume_appends() {
    for flag in ["--resume", "--resume-failed"] {
        // (what is torn, how many bytes of the log are kept, the jobs run twice)
        let tears: [Tear; 2] = [
            ("the last job's line", |t: &str| t.len() - 30, &["d"]),
            ("the header", |_: &str| 12, &[]),
        ];
        for (torn, keep, again) in tears {
            let (dir, _) = jobs_dir();
            let log = dir.path().join("log");
            let first = parallel_jobs(dir.path(), &[]);
            assert_code(&first, 0);
            let t = std::fs::read_to_string(&log).unwrap();
            std::fs::write(&log, &t[..keep(&t)]).unwrap();
            let starts = || std::fs::read_to_string(dir.path().join("starts")).unwrap();
            if again.is_empty() {
                // As if the first run had died while writing the header: nothing ran.
                std::fs::remove_file(dir.path().join("starts")).unwrap();
            }
            for _ in 0..2 {
                let o = parallel_jobs(dir.path(), &[flag]);
                assert_code(&o, 0);
            }
            let ctx = format!("{flag}, torn {torn}");
            let starts = starts();
            let mut ran: Vec<&str> = starts.lines().collect();
            ran.sort_unstable();
            let mut want = vec!["a", "b", "c", "d"];
            want.extend_from_slice(again);
            want.sort_unstable();
            assert_eq!(ran, want, "{ctx}: the jobs that ran");
            let (header, rows) = read_log(&std::fs::read_to_string(&log).unwrap());
            assert_eq!(header.as_bytes(), HEADER_LINE, "{ctx}");
            let seqs: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
            assert_eq!(
                seqs,
                ["1", "2", "3", "4"],
                "{ctx}: each job once in the log"
            );
        }
    }
}

/// The header line frun and GNU Parallel write, without its newline.
const HEADER_LINE: &[u8] =
    b"Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand";

/// A joblog with a line that is not a whole job's (two lines run together, a line cut short
/// in the middle of the file) is refused by `--resume` and `--resume-failed`: one line
/// naming the log and the line (status 255, as GNU Parallel's usage errors), nothing run and
/// nothing appended.
#[test]
fn a_damaged_joblog_line_is_refused_naming_it() {
    for flag in ["--resume", "--resume-failed"] {
        let (dir, _) = jobs_dir();
        let log = dir.path().join("log");
        assert_code(&parallel_jobs(dir.path(), &[]), 0);
        std::fs::remove_file(dir.path().join("starts")).unwrap();
        let t = std::fs::read_to_string(&log).unwrap();
        let mut lines: Vec<String> = t.lines().map(str::to_string).collect();
        // Line 3 (job 2) loses its end, and job 3's line runs on after it.
        let next = lines.remove(3);
        lines[2].truncate(8);
        lines[2].push_str(&next);
        let damaged = lines.join("\n") + "\n";
        std::fs::write(&log, &damaged).unwrap();
        let o = parallel_jobs(dir.path(), &[flag]);
        // `frun parallel`'s usage error, as GNU Parallel's: 255.
        assert_code(&o, 255);
        let e = err(&o);
        assert!(
            e.starts_with("frun: --joblog log: line 3 ") && e.matches('\n').count() == 1,
            "{flag}: one line naming the log and the line: {e:?}"
        );
        assert!(!dir.path().join("starts").exists(), "{flag}: a job ran");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), damaged, "{flag}");
    }
}

/// `--joblog +FILE` appends to FILE with no header, as GNU Parallel does (the same lines, but
/// for times, after two runs); a torn last line in FILE is cut off before frun appends, so
/// each job's line is whole.
#[test]
fn a_plus_joblog_appends_as_gnu_parallel_and_never_onto_a_torn_line() {
    let (dir, _) = jobs_dir();
    for (tool, log) in [("gnu", "gnu.log"), ("frun", "frun.log")] {
        for args in [["a", "b"], ["c", "e3"]] {
            let plus = format!("+{log}");
            let mut words = vec!["-j1", "--joblog", plus.as_str(), "./job.sh", ":::"];
            words.extend_from_slice(&args);
            let o = if tool == "gnu" {
                parallel(&words, dir.path(), b"")
            } else {
                let mut w = vec!["parallel"];
                w.extend_from_slice(&words);
                frun_in(dir.path(), &w, &[], b"")
            };
            assert!(o.status.code().is_some(), "{tool}: {o:?}");
        }
    }
    let rows = |name: &str| -> Vec<Vec<String>> {
        std::fs::read_to_string(dir.path().join(name))
            .unwrap()
            .lines()
            .map(|l| l.split('\t').map(str::to_string).collect())
            .collect()
    };
    let (g, f) = (rows("gnu.log"), rows("frun.log"));
    assert!(g.iter().all(|r| r.len() == 9), "{g:?}");
    assert_eq!(untimed(&f), untimed(&g), "the lines, but for times");
    assert!(!dir.path().join("+frun.log").exists());

    // Torn: the next run's line starts a line of its own.
    let log = dir.path().join("frun.log");
    let t = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, &t[..t.len() - 20]).unwrap();
    let o = frun_in(
        dir.path(),
        &[
            "parallel",
            "-j1",
            "--joblog",
            "+frun.log",
            "./job.sh",
            ":::",
            "x",
        ],
        &[],
        b"",
    );
    assert_code(&o, 0);
    let f = rows("frun.log");
    assert_eq!(f.len(), 4, "{f:?}");
    assert!(f.iter().all(|r| r.len() == 9), "whole lines: {f:?}");
    assert_eq!(f[3][8], "./job.sh x");
}

/// A `/proc/meminfo` stand-in saying `kib` kB are available (written whole, then renamed in).
fn set_available(file: &Path, kib: u64) {
    let tmp = file.with_extension("new");
    std::fs::write(
        &tmp,
        format!("MemTotal: 99999999 kB\nMemAvailable: {kib} kB\n"),
    )
    .unwrap();
    std::fs::rename(&tmp, file).unwrap();
}

/// The pids a job wrote to `file`, one per attempt.
fn attempt_pids(file: &Path) -> Vec<i32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// `frun parallel --memfree 2G -j2 --joblog log ARGS…` in `meminfo`'s directory, reading it.
fn spawn_memfree(meminfo: &Path, args: &[&str]) -> std::process::Child {
    let head = ["parallel", "--memfree", "2G", "-j2", "--joblog", "log"];
    spawn_frun_in(
        meminfo.parent().unwrap(),
        &[&head[..], args].concat(),
        &[("FRUN_MEMINFO", meminfo.to_str().unwrap())],
        Stdio::null(),
        Stdio::piped(),
    )
}

fn gone(pid: i32) -> bool {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err()
}

#[test]
fn memfree_holds_starts_back_and_ends_the_youngest_job_which_retries_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let mi = dir.path().join("meminfo");
    // Under 2G but over its half: nothing starts, nothing is ended.
    set_available(&mi, 1_500_000);
    let child = spawn_memfree(
        &mi,
        &[
            "-k",
            "--retries",
            "2",
            "echo $$ >>pids.{}; sleep 2; echo {}",
            ":::",
            "1",
            "2",
        ],
    );
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        !dir.path().join("pids.1").exists(),
        "a job started under the floor"
    );
    let opened = Instant::now();
    set_available(&mi, 4_000_000);
    wait_until("both jobs to start", Duration::from_secs(10), || {
        attempt_pids(&dir.path().join("pids.1")).len() == 1
            && attempt_pids(&dir.path().join("pids.2")).len() == 1
    });
    // Under half of 2G: the youngest job (2) is ended, and only it; its retry waits for room.
    set_available(&mi, 500_000);
    let first = attempt_pids(&dir.path().join("pids.2"))[0];
    wait_until("job 2 to be ended", Duration::from_secs(5), || gone(first));
    set_available(&mi, 4_000_000);
    let out = child.wait_with_output().unwrap();
    assert_clean(&out);
    assert_eq!(text(&out.stdout), "1\n2\n");
    assert!(opened.elapsed() >= Duration::from_secs(2));
    assert_eq!(
        attempt_pids(&dir.path().join("pids.1")).len(),
        1,
        "job 1 ran once"
    );
    let again = attempt_pids(&dir.path().join("pids.2"));
    assert_eq!(again.len(), 2, "job 2 ran again: {again:?}");
    let (_, rows) = read_log(&std::fs::read_to_string(dir.path().join("log")).unwrap());
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows.iter().all(|r| r[6] == "0" && r[7] == "0"), "{rows:?}");
}

#[test]
fn memfree_ends_jobs_one_at_a_time_as_failures_without_retries() {
    let dir = tempfile::tempdir().unwrap();
    let mi = dir.path().join("meminfo");
    set_available(&mi, 4_000_000);
    let job = "echo $$ >>pids.{}; [ {} = 3 ] || sleep 10; echo {}";
    let child = spawn_memfree(&mi, &[job, ":::", "1", "2", "3"]);
    wait_until("two jobs to start", Duration::from_secs(10), || {
        attempt_pids(&dir.path().join("pids.2")).len() == 1
            && attempt_pids(&dir.path().join("pids.1")).len() == 1
    });
    set_available(&mi, 100_000);
    let (one, two) = (
        attempt_pids(&dir.path().join("pids.1"))[0],
        attempt_pids(&dir.path().join("pids.2"))[0],
    );
    wait_until("job 2 to be ended", Duration::from_secs(5), || gone(two));
    let ended_two = Instant::now();
    assert!(
        !gone(one),
        "the older job is left while the younger one's memory shows up"
    );
    wait_until("job 1 to be ended", Duration::from_secs(5), || gone(one));
    assert!(
        ended_two.elapsed() >= Duration::from_millis(900),
        "the next job was ended {:?} after the last",
        ended_two.elapsed()
    );
    assert!(
        !dir.path().join("pids.3").exists(),
        "job 3 started under the floor"
    );
    set_available(&mi, 4_000_000);
    let out = child.wait_with_output().unwrap();
    // Two failed jobs; GNU Parallel says nothing about them, and neither does frun parallel.
    assert_code(&out, 2);
    assert_eq!(err(&out), "");
    assert_eq!(text(&out.stdout), "3\n");
    let (_, rows) = read_log(&std::fs::read_to_string(dir.path().join("log")).unwrap());
    let fields: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[6].as_str(), r[7].as_str()))
        .collect();
    assert_eq!(
        fields,
        [("1", "-1", "15"), ("2", "-1", "15"), ("3", "0", "0")]
    );
}

#[test]
fn memfree_reads_only_a_regular_file_and_says_so_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let nothing = dir.path().join("nothing");
    std::fs::write(&nothing, "Hello\n").unwrap();
    for (file, why) in [
        (&fifo, "not a regular file"),
        (&dir.path().to_path_buf(), "not a regular file"),
        (&nothing, "no MemAvailable: or MemFree: line"),
    ] {
        let f = frun_in(
            dir.path(),
            &["parallel", "--memfree", "1G", "touch", "ran.{}", ":::", "a"],
            &[("FRUN_MEMINFO", file.to_str().unwrap())],
            b"",
        );
        assert_code(&f, 255);
        let e = err(&f);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.starts_with("frun: cannot read the memory available from "),
            "{e}"
        );
        assert!(e.contains(why), "{e}");
        assert!(!dir.path().join("ran.a").exists());
    }
    // The real one: 1 kB is always available.
    let f = frun(&["parallel", "--memfree", "1k", "echo", ":::", "a"], b"");
    assert_clean(&f);
    assert_eq!(out(&f), "a\n");
}

#[test]
fn a_jobs_file_is_read_again_as_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let (procs, started) = (dir.path().join("procs"), dir.path().join("started"));
    std::fs::write(&procs, "1\n").unwrap();
    let child = spawn_frun_in(
        dir.path(),
        &[
            "parallel",
            "-j",
            "procs",
            "--joblog",
            "log",
            "echo {} >>started; sleep 2",
            ":::",
            "1",
            "2",
            "3",
            "4",
            "5",
        ],
        &[],
        Stdio::null(),
        Stdio::piped(),
    );
    let lines = || file_lines(&started);
    wait_until("job 1 to start", Duration::from_secs(10), || lines() == 1);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(lines(), 1, "one job at a time while the file says 1");
    // More: jobs start at once, not when job 1 ends (2 s after it started).
    std::fs::write(&procs, "3\n").unwrap();
    let raised = Instant::now();
    wait_until("three jobs to run", Duration::from_secs(10), || {
        lines() == 3
    });
    assert!(
        raised.elapsed() < Duration::from_millis(1200),
        "{:?}",
        raised.elapsed()
    );
    // Fewer: the running jobs finish, and then one job at a time runs again.
    std::fs::write(&procs, "1\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_clean(&out);
    let (_, rows) = read_log(&std::fs::read_to_string(dir.path().join("log")).unwrap());
    let start = |seq: &str| -> f64 {
        rows.iter().find(|r| r[0] == seq).unwrap()[2]
            .parse()
            .unwrap()
    };
    assert!(start("4") - start("3") >= 1.9, "{rows:?}");
    assert!(start("5") - start("4") >= 1.9, "{rows:?}");
}
