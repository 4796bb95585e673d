//! Failures: failing and killed commands (123), commands that cannot run (126/127), frun itself
//! stopped by a signal (128+N) leaving no children behind, stderr pass-through.

use crate::common::*;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::thread;
use std::time::{Duration, Instant};

/// Parses `frun: N of M batches failed` from stderr.
fn failed_summary(e: &str) -> (u64, u64) {
    let line = e
        .lines()
        .find(|l| l.starts_with("frun: ") && l.contains(" batches failed"))
        .unwrap_or_else(|| panic!("no failure summary in {e:?}"));
    let words: Vec<&str> = line["frun: ".len()..].split(' ').collect();
    assert_eq!(words[1], "of", "{line}");
    assert_eq!(words[3], "batches", "{line}");
    assert!(words[4].starts_with("failed"), "{line}");
    (words[0].parse().unwrap(), words[2].parse().unwrap())
}

#[test]
fn failing_batches_give_123_and_the_rest_still_run() {
    let o = frun(
        &[
            "-l",
            "1",
            "-j",
            "3",
            "sh",
            "-c",
            "echo \"$1\"; [ \"$1\" -ne 7 ] && [ \"$1\" -ne 13 ]",
            "sh",
        ],
        &seq_n(20),
    );
    assert_code(&o, 123);
    assert_eq!(sorted_lines(&o.stdout), sorted_lines(&seq_n(20)));
    let e = err(&o);
    assert_eq!(e.lines().count(), 1, "one summary line: {e:?}");
    assert_eq!(failed_summary(&e), (2, 20));
}

#[test]
fn failing_batch_under_keep_order_keeps_complete_output() {
    let o = frun(
        &[
            "-k",
            "-l",
            "3",
            "sh",
            "-c",
            "printf '%s\\n' \"$@\"; for a; do [ \"$a\" = 10 ] && exit 3; done; exit 0",
            "sh",
        ],
        &seq_n(30),
    );
    assert_code(&o, 123);
    assert_eq!(o.stdout, seq_n(30));
    assert_eq!(failed_summary(&err(&o)), (1, 10));
}

#[test]
fn every_batch_failing() {
    let o = frun(&["-l", "2", "false"], &seq_n(9));
    assert_code(&o, 123);
    assert_eq!(out(&o), "");
    assert_eq!(failed_summary(&err(&o)), (5, 5));
}

/// A command killed by a signal every time is retried (SPEC §5), then given up: its record is
/// skipped, every other record is processed once, and frun exits 3 naming it.
#[test]
fn killed_command_is_given_up_after_retries() {
    let o = frun(
        &[
            "-l",
            "1",
            "-j",
            "2",
            "sh",
            "-c",
            "if [ \"$1\" = 3 ]; then kill -9 $$; fi; echo \"$1\"",
            "sh",
        ],
        &seq_n(6),
    );
    assert_code(&o, 3);
    assert_eq!(sorted_lines(&o.stdout), ["1", "2", "4", "5", "6"]);
    let e = err(&o);
    assert!(e.contains("given up after 4 attempts"), "{e}");
    assert!(e.contains("killed by signal 9"), "{e}");
}

/// Under `-k` a batch of the size asked for (`-l 2`) that keeps failing is given up whole, as
/// forkrun does; the others run, in order.
#[test]
fn killed_command_under_keep_order() {
    let o = frun(
        &[
            "-k",
            "-l",
            "2",
            "sh",
            "-c",
            "for r; do [ \"$r\" = 5 ] && kill -TERM $$; done; echo \"$@\"",
            "sh",
        ],
        &seq_n(8),
    );
    assert_code(&o, 3);
    assert_eq!(out(&o), "1 2\n3 4\n7 8\n");
    assert!(err(&o).contains("2 records) given up"), "{}", err(&o));
}

#[test]
fn success_has_no_summary() {
    let o = frun(&["-l", "2", "true"], &seq_n(9));
    assert_clean(&o);
}

/// Asserts an early failure: the given status, no stdout, exactly one line on stderr.
#[track_caller]
fn assert_early(o: &std::process::Output, code: i32) {
    assert_code(o, code);
    assert_eq!(out(o), "", "no work may be done");
    let e = err(o);
    assert!(
        e.starts_with("frun: ") && e.ends_with('\n') && e.matches('\n').count() == 1,
        "exactly one stderr line expected: {e:?}"
    );
}

#[test]
fn command_not_found_is_127() {
    let o = frun(&["frun-no-such-command-xyz"], &seq_n(50));
    assert_early(&o, 127);
    assert!(err(&o).contains("frun-no-such-command-xyz"));
    let o = frun(&["/nonexistent/dir/cmd"], &seq_n(5));
    assert_early(&o, 127);
    // Reported even though the command would have run many batches.
    let o = frun(
        &["-l", "1", "-j", "4", "frun-no-such-command-xyz"],
        &seq_n(200),
    );
    assert_early(&o, 127);
}

#[test]
fn command_not_found_via_path() {
    let dir = tempfile::tempdir().unwrap();
    let o = frun_cmd()
        .env("PATH", dir.path())
        .args(["echo"])
        .write_stdin("a\n")
        .output()
        .unwrap();
    assert_early(&o, 127);
}

#[test]
fn command_not_executable_is_126() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("noexec.sh");
    std::fs::write(&script, "#!/bin/sh\necho ran\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = frun(&[script.to_str().unwrap()], &seq_n(20));
    assert_early(&o, 126);
    let o = frun(&[dir.path().to_str().unwrap()], &seq_n(20));
    assert_early(&o, 126);
    // The same file with the x bit set runs.
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = frun(&["-l", "20", script.to_str().unwrap()], &seq_n(20));
    assert_clean(&o);
    assert_eq!(out(&o), "ran\n");
}

#[test]
fn command_stderr_passes_through() {
    for mode in [&["-k"][..], &[], &["-u"]] {
        let mut a = vec!["-l", "1", "-j", "3"];
        a.extend_from_slice(mode);
        a.extend_from_slice(&["sh", "-c", "echo \"err-$1\" >&2; echo \"out-$1\"", "sh"]);
        let o = frun(&a, &seq_n(30));
        assert_code(&o, 0);
        let want_err: Vec<String> = (1..=30).map(|i| format!("err-{i}")).collect();
        let mut want_err_sorted = want_err.clone();
        want_err_sorted.sort();
        assert_eq!(sorted_lines(&o.stderr), want_err_sorted, "{mode:?}");
        let mut want_out: Vec<String> = (1..=30).map(|i| format!("out-{i}")).collect();
        want_out.sort();
        assert_eq!(sorted_lines(&o.stdout), want_out, "{mode:?}");
    }
}

#[test]
fn command_stderr_is_not_held_back() {
    // stderr of a running command shows up while it runs, even under -k.
    let start = Instant::now();
    let mut child = spawn_frun(
        &["-k", "sh", "-c", "echo early >&2; sleep 4"],
        Stdio::piped(),
    );
    child.stdin.take().unwrap().write_all(b"x\n").unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut buf = [0u8; 64];
    let n = std::io::Read::read(&mut stderr, &mut buf).unwrap();
    let took = start.elapsed();
    assert_eq!(&buf[..n], b"early\n");
    assert!(
        took < Duration::from_secs(2),
        "stderr held back for {took:?}"
    );
    let st = wait_limit(&mut child, Duration::from_secs(30));
    assert_eq!(st.code(), Some(0));
}

/// A unique sleep duration used as a marker to find our children with pgrep: `1000.<pid>2<tag>`.
/// Every part has a fixed width (the pid in 7 digits, `tag` in 2; children.rs uses 1 where this
/// has 2), so no marker is part of another, also one of another suite in the same test process.
fn marker(tag: u32) -> String {
    assert!(tag < 100);
    format!("1000.{:07}2{:02}", std::process::id(), tag)
}

/// Waits until `count` processes match `pattern` (at most 10 s).
fn wait_for_procs(pattern: &str, count: usize) {
    let start = Instant::now();
    loop {
        let n = pgrep(pattern).len();
        if n >= count {
            return;
        }
        if start.elapsed() > Duration::from_secs(10) {
            panic!("only {n} of {count} commands matching {pattern} started");
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// Starts frun on two sleeping records (stdin kept open), signals it, and checks the status and
/// that no command is left behind.
fn signal_case(sig: &str, expect: i32, tag: u32, extra: &[&str]) {
    let m1 = marker(tag);
    let m2 = marker(tag + 50);
    let mut a = vec!["-l", "1", "-j", "2"];
    a.extend_from_slice(extra);
    a.push("sleep");
    let mut child = spawn_frun(&a, Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("{m1}\n{m2}\n").as_bytes()).unwrap();
    stdin.flush().unwrap();
    let stderr = drain(child.stderr.take().unwrap());
    let stdout = drain(child.stdout.take().unwrap());
    wait_for_procs(&format!("sleep {m1}"), 1);
    wait_for_procs(&format!("sleep {m2}"), 1);
    let start = Instant::now();
    send_signal(child.id(), sig);
    let st = wait_limit(&mut child, Duration::from_secs(15));
    let took = start.elapsed();
    let left: Vec<u32> = [pgrep(&format!("sleep {m1}")), pgrep(&format!("sleep {m2}"))].concat();
    kill_pids(&left);
    drop(stdin);
    let _ = stdout.join();
    let e = text(&stderr.join().unwrap());
    assert!(left.is_empty(), "SIG{sig}: commands left behind: {left:?}");
    assert_stopped_by(&st, expect - 128, &format!("SIG{sig}: stderr {e}"));
    assert!(
        took < Duration::from_secs(5),
        "SIG{sig}: frun took {took:?} to stop"
    );
}

#[test]
fn sigterm_ends_frun_by_sigterm_and_leaves_nothing() {
    signal_case("TERM", 143, 1, &[]);
}

#[test]
fn sigint_gives_130_and_no_leftovers() {
    signal_case("INT", 130, 2, &[]);
}

#[test]
fn sighup_gives_129_and_no_leftovers() {
    signal_case("HUP", 129, 3, &[]);
}

#[test]
fn sigterm_in_every_output_mode() {
    signal_case("TERM", 143, 4, &["-k"]);
    signal_case("TERM", 143, 5, &["-u"]);
}

#[test]
fn sigterm_with_arg_file() {
    let m = marker(6);
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), format!("{m}\n")).unwrap();
    let mut child = spawn_frun(&["-a", f.path().to_str().unwrap(), "sleep"], Stdio::null());
    let stderr = drain(child.stderr.take().unwrap());
    wait_for_procs(&format!("sleep {m}"), 1);
    send_signal(child.id(), "TERM");
    let st = wait_limit(&mut child, Duration::from_secs(15));
    let left = pgrep(&format!("sleep {m}"));
    kill_pids(&left);
    let _ = stderr.join();
    assert!(left.is_empty(), "commands left behind: {left:?}");
    assert_stopped_by(&st, libc::SIGTERM, "SIGTERM");
}

#[test]
fn sigterm_stops_grandchildren_too() {
    // The command is a shell that runs sleep as its own child.
    let m = marker(7);
    let mut child = spawn_frun(&["sh", "-c", "sleep \"$1\"; :", "sh"], Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("{m}\n").as_bytes()).unwrap();
    stdin.flush().unwrap();
    let stderr = drain(child.stderr.take().unwrap());
    wait_for_procs(&m, 2);
    send_signal(child.id(), "TERM");
    let st = wait_limit(&mut child, Duration::from_secs(15));
    let left = pgrep(&m);
    kill_pids(&left);
    drop(stdin);
    let _ = stderr.join();
    assert!(left.is_empty(), "processes left behind: {left:?}");
    assert_stopped_by(&st, libc::SIGTERM, "SIGTERM");
}

#[test]
fn sigterm_while_idle_on_input() {
    // No command running: frun waits for input and still ends by the signal.
    let mut child = spawn_frun(&["echo"], Stdio::piped());
    let stdin = child.stdin.take().unwrap();
    let stderr = drain(child.stderr.take().unwrap());
    thread::sleep(Duration::from_millis(300));
    send_signal(child.id(), "TERM");
    let st = wait_limit(&mut child, Duration::from_secs(10));
    drop(stdin);
    let _ = stderr.join();
    assert_stopped_by(&st, libc::SIGTERM, "SIGTERM");
}

/// Sends SIGINT to the process group led by `leader`, as Ctrl-C in a terminal does.
fn interrupt_group(leader: u32) {
    let st = std::process::Command::new("kill")
        .args(["-INT", "--", &format!("-{leader}")])
        .status()
        .unwrap();
    assert!(st.success(), "kill -INT -{leader}");
}

/// One Ctrl-C stops a shell loop around frun: bash (waiting for a foreground child) goes on
/// after a child that exited 130, but stops itself when the child died of SIGINT, which frun now
/// does once it has cleaned up. The loop's process group gets the SIGINT, as from a terminal.
#[test]
fn one_ctrl_c_stops_a_bash_loop_around_frun() {
    use std::os::unix::process::CommandExt;
    let m = marker(9);
    let script =
        format!("while :; do seq 100 | {BIN} -l 1 sleep {m}; echo looped; done; echo after-loop");
    // A non-interactive bash keeps a SIGINT it was started with ignored (as under `cmd &` or
    // nohup) and then never stops its loop: the test runs it with SIGINT at its default, so it
    // checks frun, not how the test binary was started.
    let mut child = std::process::Command::new("env")
        .args(["--default-signal=INT", "bash", "-c", &script])
        .current_dir(scratch())
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    wait_for_procs(&format!("sleep {m}"), 1);
    interrupt_group(child.id());
    let st = wait_limit(&mut child, Duration::from_secs(15));
    let left = pgrep(&format!("sleep {m}"));
    kill_pids(&left);
    let out = text(&stdout.join().unwrap());
    let e = text(&stderr.join().unwrap());
    assert!(left.is_empty(), "commands left behind: {left:?}");
    assert_eq!(out, "", "the loop went on after Ctrl-C; stderr {e}");
    assert_stopped_by(&st, libc::SIGINT, &format!("bash around frun, stderr {e}"));
}

#[test]
fn ctrl_c_to_the_process_group_ends_frun_by_sigint() {
    // Like Ctrl-C in a terminal: SIGINT reaches frun and its commands at once.
    use std::os::unix::process::CommandExt;
    let m = marker(8);
    let mut child = std::process::Command::new(BIN)
        .args(["-l", "1", "sleep"])
        .current_dir(scratch())
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("{m}\n").as_bytes()).unwrap();
    stdin.flush().unwrap();
    let stderr = drain(child.stderr.take().unwrap());
    wait_for_procs(&format!("sleep {m}"), 1);
    interrupt_group(child.id());
    let st = wait_limit(&mut child, Duration::from_secs(15));
    let left = pgrep(&format!("sleep {m}"));
    kill_pids(&left);
    drop(stdin);
    let _ = stderr.join();
    assert!(left.is_empty(), "commands left behind: {left:?}");
    assert_stopped_by(&st, libc::SIGINT, "Ctrl-C to the process group");
}
