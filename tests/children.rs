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
