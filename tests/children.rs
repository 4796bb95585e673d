//! What frun's commands leave behind and how they start: every descendant ends with the run
//! (normal end, a stop signal, `kill -9` of frun), scripts without `#!` run under /bin/sh, a
//! command that cannot be started at all is reported once with 126/127, and a huge `-j` works.

mod common;

use common::*;
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

/// Asserts `frun args` over `seq n` prints exactly seq's numbers, exits 0, and never panics.
#[track_caller]
fn assert_echoes_seq(args: &[&str], n: u64, shell_prefix: &str) {
    let mut cmd = format!("{shell_prefix} seq {n} | \"$FRUN\"");
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
    for mode in [&["-L", "1", "echo"][..], &["-s", "-L", "1", "cat"][..]] {
        let mut args = vec!["-j", "1000"];
        args.extend_from_slice(mode);
        assert_echoes_seq(&args, 2000, "ulimit -n 100;");
        let mut cmd = "ulimit -n 100; seq 2000 | \"$FRUN\" -j 1000".to_string();
        for a in mode {
            cmd.push(' ');
            cmd.push_str(a);
        }
        let o = bash(&cmd);
        let notes: Vec<String> = lines(&o.stderr);
        assert!(notes.len() <= 1, "at most one note: {notes:?}");
        assert!(notes.iter().all(|l| l.starts_with("frun: ")), "{notes:?}");
    }
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
