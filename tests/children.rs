//! What frun's commands leave behind and how they start: every descendant ends with the run
//! (normal end, a stop signal, `kill -9` of frun), scripts without `#!` run under /bin/sh, a
//! command that cannot be started at all is reported once with 126/127, and a huge `-j` works.

use crate::common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The words of `b` (records joined on one line by a batch), sorted as numbers.
fn sorted_numbers(b: &[u8]) -> Vec<u64> {
    let mut v: Vec<u64> = text(b)
        .split_whitespace()
        .map(|w| w.parse().expect("a number"))
        .collect();
    v.sort_unstable();
    v
}

/// Asserts `frun args` over `seq n` prints exactly seq's numbers, exits 0, and never panics;
/// returns its stderr.
#[track_caller]
fn assert_echoes_seq(args: &[&str], n: u64, shell_prefix: &str) -> String {
    // In a directory of its own: a failed run would leave its checkpoint there.
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = format!(
        "cd '{}' && {shell_prefix} seq {n} | \"$FRUN\"",
        dir.path().display()
    );
    for a in args {
        cmd.push(' ');
        cmd.push_str(a);
    }
    let o = bash(&cmd);
    let e = err(&o);
    assert!(!e.contains("panicked"), "a panic: {e}");
    assert_code(&o, 0);
    let want: Vec<u64> = (1..=n).collect();
    assert_eq!(sorted_numbers(&o.stdout), want, "stderr: {e}");
    e
}

// ---- item: a huge -j ----

#[test]
fn huge_worker_count_over_little_input_works() {
    for n in [5, 1000] {
        assert_echoes_seq(&["-j", "100000", "echo"], n, "");
        assert_echoes_seq(&["-j", "100000", "-L", "1", "echo"], n, "");
    }
    // A file of known size: no more workers than records could be.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("in");
    std::fs::write(&f, seq_n(5)).unwrap();
    let o = frun(&["-j", "100000", "-a", f.to_str().unwrap(), "echo"], b"");
    assert_clean(&o);
    assert_eq!(sorted_numbers(&o.stdout), vec![1, 2, 3, 4, 5]);
}

#[test]
fn workers_past_the_open_file_limit_degrade_with_one_note() {
    // Each worker needs descriptors; with few allowed, frun runs fewer workers (one note on
    // stderr) instead of failing the run.
    // 40 workers take the path that checks only the per-user limits.
    for (j, ulimit) in [("1000", "ulimit -n 100;"), ("40", "ulimit -n 90;")] {
        for mode in [&["-L", "1", "echo"][..], &["-s", "-L", "1", "cat"][..]] {
            let mut args = vec!["-j", j];
            args.extend_from_slice(mode);
            let e = assert_echoes_seq(&args, 2000, ulimit);
            let notes: Vec<&str> = e.lines().collect();
            assert!(notes.len() <= 1, "at most one note: {notes:?}");
            assert!(notes.iter().all(|l| l.starts_with("frun: ")), "{notes:?}");
        }
    }
}

#[test]
fn frun_parallel_words_the_open_file_limit_as_gnu_parallel_and_loses_no_job() {
    // GNU Parallel's own suite filters its "Only enough file handles" warnings with grep; frun
    // parallel words the same fact with GNU Parallel's lines (its hints included), so such
    // filters still work. The number of jobs may differ (frun counts the descriptors a job
    // holds), so digits are compared as X, as that suite compares them.
    let run = |parallel: &str| {
        let o = Command::new("bash")
            .args([
                "-c",
                r#"ulimit -n 28; seq 50 | $0 -j10 -k echo {#} of 50"#,
                parallel,
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            err,
        )
    };
    let (code, out, err) = run(&format!("{BIN} parallel"));
    assert_eq!(code, Some(0), "{err}");
    let want: String = (1..=50).map(|i| format!("{i} of 50\n")).collect();
    assert_eq!(out, want);
    let n: usize = err
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("parallel: Warning: Only enough file handles to run "))
        .and_then(|r| r.strip_suffix(" jobs in parallel."))
        .unwrap_or_else(|| panic!("{err}"))
        .parse()
        .unwrap();
    assert!((1..10).contains(&n), "{err}");
    let (gnu_code, gnu_out, gnu_err) = run("parallel");
    assert_eq!((gnu_code, gnu_out), (Some(0), want));
    let digits_as_x = |t: &str| t.replace(|c: char| c.is_ascii_digit(), "X");
    // GNU Parallel's first five lines are the limit it finds at the start; on a busy machine
    // it may also run out of descriptors later and add its five-line "No more file handles"
    // warning, which frun (fewer descriptors per job) has no cause to print.
    let gnu_lines: Vec<&str> = gnu_err.lines().collect();
    let (start, later) = gnu_lines.split_at(gnu_lines.len().min(5));
    assert_eq!(digits_as_x(&err), digits_as_x(&(start.join("\n") + "\n")));
    assert!(
        later.is_empty()
            || (later.len() == 5 && later[0] == "parallel: Warning: No more file handles. "),
        "{gnu_err}"
    );
}

// ---- item: scripts and commands that cannot be started ----

/// Writes an executable file `name` with `body` in `dir`.
fn script(dir: &std::path::Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs `program args` in `dir` with `input` on stdin.
fn run_in(
    dir: &std::path::Path,
    program: &str,
    args: &[&str],
    input: &[u8],
) -> std::process::Output {
    let mut c = assert_cmd::Command::new(program);
    c.args(args)
        .current_dir(dir)
        .write_stdin(input.to_vec())
        .timeout(LIMIT);
    c.output().expect("spawn")
}

#[test]
fn a_script_without_a_shebang_runs_under_sh_like_xargs() {
    let dir = tempfile::tempdir().unwrap();
    script(dir.path(), "s.sh", "for a; do echo \"got $a\"; done\n");
    let input = seq_n(300);
    let x = run_in(dir.path(), "xargs", &["./s.sh"], &input);
    assert_eq!(x.status.code(), Some(0));
    for extra in [&[][..], &["-j", "3", "-L", "7"][..]] {
        let mut args = extra.to_vec();
        args.push("./s.sh");
        let o = run_in(dir.path(), BIN, &args, &input);
        assert_clean(&o);
        assert_eq!(sorted_lines(&o.stdout), sorted_lines(&x.stdout));
    }
    // Also with the records on stdin.
    script(dir.path(), "c.sh", "wc -l\n");
    let o = run_in(dir.path(), BIN, &["-s", "-j", "1", "./c.sh"], &input);
    assert_clean(&o);
    let counted: u64 = lines(&o.stdout)
        .iter()
        .map(|l| l.trim().parse::<u64>().unwrap())
        .sum();
    assert_eq!(counted, 300);
}

/// Asserts that frun on `cmd` over 1000 records fails once, with xargs's exit status, one line
/// `want` on stderr, nothing on stdout and no checkpoint left.
#[track_caller]
fn assert_cannot_start(dir: &std::path::Path, cmd: &str, want: &str, extra: &[&str]) {
    let input = seq_n(1000);
    let x = run_in(dir, "xargs", &[cmd], &input);
    let mut args = extra.to_vec();
    args.push(cmd);
    let o = run_in(dir, BIN, &args, &input);
    assert_eq!(o.status.code(), x.status.code(), "stderr: {}", err(&o));
    assert!(matches!(o.status.code(), Some(126 | 127)));
    assert_eq!(lines(&o.stderr), vec![want.to_string()]);
    assert_eq!(out(&o), "");
    assert!(
        !dir.join(".frun_resume").exists(),
        "a run that did nothing leaves no checkpoint"
    );
}

#[test]
fn a_missing_interpreter_is_reported_once_with_127() {
    let dir = tempfile::tempdir().unwrap();
    script(dir.path(), "b.sh", "#!/nonexistent/bin\necho hi\n");
    let want = "frun: ./b.sh: bad interpreter /nonexistent/bin: No such file or directory";
    assert_cannot_start(dir.path(), "./b.sh", want, &[]);
    assert_cannot_start(dir.path(), "./b.sh", want, &["-j", "4", "-L", "1"]);
    assert_cannot_start(dir.path(), "./b.sh", want, &["-s", "-j", "4"]);
}

#[test]
fn an_interpreter_that_is_not_executable_is_reported_once_with_126() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data"), "not a program\n").unwrap();
    let interp = dir.path().join("data");
    script(
        dir.path(),
        "c.sh",
        &format!("#!{}\necho hi\n", interp.display()),
    );
    let want = format!(
        "frun: ./c.sh: bad interpreter {}: Permission denied",
        interp.display()
    );
    assert_cannot_start(dir.path(), "./c.sh", &want, &["-j", "2"]);
}

// ---- item: nothing outlives the run ----

/// A number `sleep` accepts that no other test (or other run of this one) uses:
/// `1000.<pid>1<n>`, so `pgrep -f` finds exactly this test's processes. Every part has a fixed
/// width (the pid in 7 digits, `n` in 2; faults.rs uses 2 where this has 1), so no marker is
/// part of another, also one of another suite in the same test process.
fn marker(n: u32) -> String {
    assert!(n < 100);
    format!("1000.{:07}1{n:02}", std::process::id())
}

/// Waits until `pgrep -f pattern` finds `count` processes (or more); panics after 20 s.
fn wait_for(pattern: &str, count: usize) {
    let until = Instant::now() + Duration::from_secs(20);
    while pgrep(pattern).len() < count {
        assert!(
            Instant::now() < until,
            "{pattern}: {count} processes never appeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Asserts that within `within` no process matches any of `patterns`; kills them if some do.
#[track_caller]
fn assert_none_left(patterns: &[&str], within: Duration) {
    let until = Instant::now() + within;
    loop {
        let left: Vec<u32> = patterns.iter().flat_map(|p| pgrep(p)).collect();
        if left.is_empty() {
            return;
        }
        if Instant::now() >= until {
            kill_pids(&left);
            panic!("processes outlived frun: {left:?} ({patterns:?})");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts frun in `dir` with `args` and `input` on stdin (then closed).
fn start_frun(dir: &std::path::Path, args: &[&str], input: &[u8]) -> std::process::Child {
    use std::io::Write;
    let mut c = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn frun");
    c.stdin.take().unwrap().write_all(input).unwrap();
    c
}

#[test]
fn kill_9_of_frun_ends_its_running_commands() {
    let dir = tempfile::tempdir().unwrap();
    let m = marker(1);
    let mut f = start_frun(dir.path(), &["-j", "3", "-L", "1", "sleep", &m], &seq_n(3));
    wait_for(&m, 3);
    send_signal(f.id(), "KILL");
    let _ = f.wait();
    // Within a generous margin: the kernel delivers the parent-death signal at once.
    assert_none_left(&[&m], Duration::from_secs(5));
}

#[test]
fn a_stop_signal_ends_descendants_in_their_own_session() {
    for (i, sig) in [(2, "INT"), (3, "TERM")] {
        let dir = tempfile::tempdir().unwrap();
        let (daemon, direct) = (marker(i * 10), marker(i * 10 + 1));
        // `setsid sleep` in a subshell (not a group leader) gets its own session: the stop's
        // signal to the command's process group does not reach it; `setsid -f` forks and
        // leaves at once.
        let script =
            format!("setsid sleep {daemon} & setsid -f sleep {daemon}; exec sleep {direct}");
        let mut f = start_frun(
            dir.path(),
            &["-j", "2", "-L", "1", "sh", "-c", &script],
            &seq_n(2),
        );
        wait_for(&daemon, 4);
        wait_for(&direct, 2);
        send_signal(f.id(), sig);
        let st = f.wait().unwrap();
        let want = if sig == "INT" {
            libc::SIGINT
        } else {
            libc::SIGTERM
        };
        assert_stopped_by(&st, want, &format!("SIG{sig}"));
        // frun returns only once they are gone.
        assert_none_left(&[&daemon, &direct], Duration::from_millis(200));
    }
}

#[test]
fn a_normal_end_leaves_no_background_job_running() {
    let m = marker(5);
    let script = format!("sleep {m} & setsid -f sleep {m}; echo \"x $1\"");
    let o = frun(
        &["-j", "3", "-L", "1", "bash", "-c", &script, "bash"],
        &seq_n(6),
    );
    assert_clean(&o);
    let want: Vec<String> = (1..=6).map(|i| format!("x {i}")).collect();
    let mut want = want;
    want.sort();
    assert_eq!(sorted_lines(&o.stdout), want);
    assert_none_left(&[&m], Duration::from_millis(200));
}

#[test]
fn long_runs_reap_what_they_adopt() {
    // Background jobs that end by themselves while the run goes are reaped as it goes: no pile
    // of zombies (each holds a pid).
    let script = "sleep 0.01 & echo x";
    let dir = tempfile::tempdir().unwrap();
    let mut f = start_frun(
        dir.path(),
        &["-j", "2", "-L", "1", "sh", "-c", script],
        &seq_n(2000),
    );
    let stdout = drain(f.stdout.take().unwrap());
    let stderr = drain(f.stderr.take().unwrap());
    let pid = f.id();
    let mut most = 0;
    let until = Instant::now() + LIMIT;
    loop {
        if let Ok(Some(_)) = f.try_wait() {
            break;
        }
        let zombies = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .map_or(0, |t| t.split_whitespace().count());
        most = most.max(zombies);
        assert!(Instant::now() < until, "frun did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(f.wait().unwrap().success());
    assert_eq!(stdout.join().unwrap(), b"x\n".repeat(2000));
    assert_eq!(text(&stderr.join().unwrap()), "");
    assert!(most < 1000, "{most} adopted processes were left unreaped");
}

#[test]
fn workers_past_the_process_limit_degrade_with_one_note() {
    // RLIMIT_NPROC binds only users other than root: run frun as nobody where the tests run
    // as root (skipped elsewhere). Each worker is a thread and its command a process, both
    // counted: frun runs as many workers as fit.
    // SAFETY: geteuid has no memory effects.
    if unsafe { libc::geteuid() } != 0 || Command::new("setpriv").arg("--help").output().is_err() {
        eprintln!("skipped: needs root and setpriv");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    for mode in ["-L 1 echo", "-s -L 1 cat"] {
        let script = format!(
            "cd '{}' && seq 3000 | setpriv --reuid=65534 --regid=65534 --clear-groups \
             bash -c 'ulimit -u 60; exec \"$FRUN\" -j 1000 {mode}'",
            dir.path().display()
        );
        let o = bash(&script);
        let e = err(&o);
        assert!(!e.contains("panicked"), "{e}");
        assert_code(&o, 0);
        assert_eq!(sorted_numbers(&o.stdout), (1..=3000).collect::<Vec<u64>>());
        let notes = lines(&o.stderr);
        assert!(
            notes.len() <= 1
                && notes
                    .iter()
                    .all(|l| l.starts_with("frun: running with at most")),
            "{notes:?}"
        );
    }
}
