//! Output modes: input order under -k, whole batches in buffered mode, pass-through under -u,
//! a closed stdout, and streaming from a slow pipe.

use crate::common::*;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A command whose duration depends on its record (0 to 40 ms), printing its records.
const UNEVEN: [&str; 4] = [
    "sh",
    "-c",
    "sleep 0.0$(( $1 * 7 % 5 )); printf '%s\\n' \"$@\"",
    "sh",
];

#[test]
fn keep_order_with_uneven_durations() {
    for extra in [&["-l", "1"][..], &["-l", "3"], &["-l", "1:4"]] {
        let mut a = vec!["-k", "-j", "4"];
        a.extend_from_slice(extra);
        a.extend_from_slice(&UNEVEN);
        let o = frun(&a, &seq_n(40));
        assert_clean(&o);
        assert_eq!(out(&o), text(&seq_n(40)), "{extra:?}");
    }
}

#[test]
fn keep_order_on_many_records() {
    for flag in ["-k", "--keep-order", "--ordered"] {
        let o = frun(&[flag, "-j", "4", "printf", "%s\\n"], &seq_n(20000));
        assert_clean(&o);
        assert!(o.stdout == seq_n(20000), "{flag}: output differs from seq");
    }
}

#[test]
fn unordered_modes_still_print_every_record() {
    for mode in [&[][..], &["-u"], &["--atomic"]] {
        let mut a = vec!["-j", "4", "-l", "1"];
        a.extend_from_slice(mode);
        a.extend_from_slice(&UNEVEN);
        let o = frun(&a, &seq_n(40));
        assert_clean(&o);
        let mut got: Vec<u64> = lines(&o.stdout)
            .iter()
            .map(|l| l.parse().unwrap())
            .collect();
        got.sort();
        assert_eq!(got, (1..=40).collect::<Vec<_>>(), "{mode:?}");
    }
}

/// Asserts that the lines of each batch (tagged with the batch's key before the first space)
/// are contiguous in `output` and appear in their own order `0..per`.
fn assert_contiguous(output: &[u8], keys: usize, per: usize) {
    let ls = lines(output);
    assert_eq!(ls.len(), keys * per, "line count");
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut i = 0;
    while i < ls.len() {
        let key = ls[i].split(' ').next().unwrap().to_owned();
        assert!(
            !seen.contains_key(&key),
            "batch {key} printed in two pieces (line {i})"
        );
        for j in 0..per {
            let l = &ls[i + j];
            let (k, n) = l.split_once(' ').unwrap_or_else(|| panic!("{l:?}"));
            assert_eq!(k, key, "line {} interrupts batch {key}", i + j);
            assert_eq!(n, j.to_string(), "batch {key} lines out of order");
        }
        seen.insert(key, i);
        i += per;
    }
    assert_eq!(seen.len(), keys);
}

#[test]
fn buffered_batches_never_interleave() {
    let script = "for i in 0 1 2 3; do echo \"$1 $i\"; sleep 0.02; done";
    for mode in [&[][..], &["--buffered"], &["-o", "atomic"]] {
        let mut a = vec!["-l", "1", "-j", "4"];
        a.extend_from_slice(mode);
        a.extend_from_slice(&["sh", "-c", script, "sh"]);
        let o = frun(&a, &seq_n(16));
        assert_clean(&o);
        assert_contiguous(&o.stdout, 16, 4);
    }
}

#[test]
fn large_batch_outputs_never_interleave() {
    // Each batch prints ~240 KB, far more than a pipe buffer, in many writes.
    let script = "seq 0 29999 | sed \"s/^/$1 /\"";
    let o = frun(
        &["-l", "1", "-j", "3", "sh", "-c", script, "sh"],
        b"a\nb\nc\nd\ne\nf\n",
    );
    assert_clean(&o);
    assert_contiguous(&o.stdout, 6, 30000);
    let o = frun(
        &["-k", "-l", "1", "-j", "3", "sh", "-c", script, "sh"],
        b"a\nb\nc\nd\ne\nf\n",
    );
    assert_clean(&o);
    let mut expect = String::new();
    for k in ["a", "b", "c", "d", "e", "f"] {
        for i in 0..30000 {
            expect.push_str(&format!("{k} {i}\n"));
        }
    }
    assert!(out(&o) == expect, "ordered large output differs");
}

/// Runs `frun args` on one record with a command printing "start", sleeping 4 s, printing "end";
/// returns the arrival times of the lines.
fn start_sleep_end(args: &[&str]) -> Vec<(String, Duration)> {
    let mut a = args.to_vec();
    a.extend_from_slice(&["sh", "-c", "echo start; sleep 4; echo end"]);
    let start = Instant::now();
    let mut child = spawn_frun(&a, Stdio::piped());
    child.stdin.take().unwrap().write_all(b"x\n").unwrap();
    let stderr = drain(child.stderr.take().unwrap());
    let got = timed_lines(&mut child, start, Duration::from_secs(30));
    let st = wait_limit(&mut child, Duration::from_secs(30));
    assert_eq!(st.code(), Some(0));
    assert_eq!(stderr.join().unwrap(), b"");
    let names: Vec<&str> = got.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(names, ["start", "end"]);
    got
}

#[test]
fn unbuffered_output_reaches_stdout_while_command_runs() {
    let got = start_sleep_end(&["-u"]);
    assert!(
        got[0].1 < Duration::from_secs(2),
        "-u: first line took {:?}",
        got[0].1
    );
}

#[test]
fn buffered_output_is_emitted_whole_after_the_batch() {
    let got = start_sleep_end(&[]);
    assert!(
        got[0].1 >= Duration::from_millis(3500),
        "buffered: 'start' was emitted before the batch finished ({:?})",
        got[0].1
    );
}

/// `seq 1000000000 | frun ARGS | head -1` must end quickly with frun's status 0; returns the
/// first record of the line.
fn pipeline_head(frun_args: &str) -> u64 {
    let start = Instant::now();
    let o = bash(&format!(
        "set -o pipefail; seq 1000000000 | timeout 20 \"$FRUN\" {frun_args} | head -1; \
         echo \"status=${{PIPESTATUS[1]}}\""
    ));
    let took = start.elapsed();
    let s = out(&o);
    let first = s
        .strip_suffix("\nstatus=0\n")
        .unwrap_or_else(|| panic!("frun {frun_args}: {s:?}; stderr {}", err(&o)));
    assert_eq!(err(&o), "", "frun {frun_args} must exit quietly");
    assert!(
        took < Duration::from_secs(15),
        "frun {frun_args}: took {took:?}"
    );
    // One batch's echo: one or more consecutive records.
    let nums: Vec<u64> = first
        .split(' ')
        .map(|w| {
            w.parse()
                .unwrap_or_else(|_| panic!("not a record: {first:?}"))
        })
        .collect();
    assert!(
        nums[0] >= 1 && nums.windows(2).all(|w| w[1] == w[0] + 1),
        "{first:?}"
    );
    nums[0]
}

#[test]
fn closed_stdout_ordered() {
    assert_eq!(pipeline_head("-k echo"), 1);
}

#[test]
fn closed_stdout_buffered() {
    pipeline_head("-l 1 echo");
    pipeline_head("echo");
}

#[test]
fn closed_stdout_unbuffered() {
    pipeline_head("-u -l 1 echo");
}

#[test]
fn closed_stdout_with_own_pipe() {
    let mut yes = Command::new("yes")
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let yes_out = yes.stdout.take().unwrap();
    let mut child = spawn_frun(&["-k", "echo"], Stdio::from(yes_out));
    let stderr = drain(child.stderr.take().unwrap());
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    drop(reader);
    let st = wait_limit(&mut child, Duration::from_secs(15));
    let _ = yes.kill();
    let _ = yes.wait();
    assert_eq!(first, "y\n");
    assert_eq!(
        st.code(),
        Some(0),
        "frun status after reader closed: {st:?}"
    );
    assert_eq!(text(&stderr.join().unwrap()), "");
}

/// Feeds `a`, then after 4 s `b`, to `frun ARGS`; returns lines with arrival times, checking a
/// clean exit.
fn slow_pipe(args: &[&str]) -> Vec<(String, Duration)> {
    let start = Instant::now();
    let mut child = spawn_frun_fed(
        args,
        vec![
            (Duration::ZERO, b"a\n".to_vec()),
            (Duration::from_secs(4), b"b\n".to_vec()),
        ],
    );
    let stderr = drain(child.stderr.take().unwrap());
    let got = timed_lines(&mut child, start, Duration::from_secs(20));
    let st = wait_limit(&mut child, Duration::from_secs(10));
    assert_eq!(text(&stderr.join().unwrap()), "");
    assert_eq!(st.code(), Some(0));
    got
}

#[test]
fn streaming_starts_on_first_records() {
    let got = slow_pipe(&["-k", "echo"]);
    let names: Vec<&str> = got.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert!(
        got[0].1 < Duration::from_secs(2),
        "first record took {:?}",
        got[0].1
    );
}

#[test]
fn timeout_flushes_partial_batch() {
    let got = slow_pipe(&["-l", "100", "-t", "200000", "-k", "echo"]);
    let names: Vec<&str> = got.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert!(
        got[0].1 < Duration::from_secs(2),
        "-t: 'a' took {:?}",
        got[0].1
    );
}

#[test]
fn without_timeout_fixed_batch_waits_for_input() {
    let got = slow_pipe(&["-l", "100", "-k", "echo"]);
    let names: Vec<&str> = got.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(names, ["a b"]);
}

/// Regression: a gap in piped input used to leave frun spinning after EOF.
#[test]
fn streaming_with_gaps_always_finishes() {
    // Several runs at once, each with a 1 s gap in its input, all must end.
    let runs: Vec<_> = (0..6)
        .map(|_| {
            let start = Instant::now();
            let child = spawn_frun_fed(
                &["-k", "echo"],
                vec![
                    (Duration::ZERO, b"a\n".to_vec()),
                    (Duration::from_secs(1), b"b\n".to_vec()),
                ],
            );
            (start, child)
        })
        .collect();
    let mut outputs = Vec::new();
    for (start, mut child) in runs {
        let got = timed_lines(&mut child, start, Duration::from_secs(10));
        wait_limit(&mut child, Duration::from_secs(5));
        outputs.push(got.into_iter().map(|(l, _)| l).collect::<Vec<_>>());
    }
    for o in outputs {
        assert_eq!(o, ["a", "b"]);
    }
}

/// Every message frun writes to stderr goes out in one `write` (strace shows each), so that a
/// job's output on the same pipe (`2>&1`) can never land inside it: GNU Parallel's own suite
/// once saw a line of output inside a warning, between its text and its newline. The commands
/// here write nothing to stderr themselves, so every `write(2, …)` traced is frun's.
#[test]
fn every_message_is_written_whole() {
    assert!(
        Command::new("strace").arg("-V").output().is_ok(),
        "strace is needed (tests/run.sh installs it)"
    );
    let cases: &[(&str, &str)] = &[
        // The plan's warning (two lines, GNU's words), under a low descriptor limit.
        (
            "ulimit -n 30; exec \"$@\" parallel -j20 true ::: 1 2 3 4 5 6 7 8 9 10",
            "",
        ),
        // A timeout's warning, printed by a worker while the run goes on.
        ("exec \"$@\" parallel --timeout 0.2 sleep ::: 5", ""),
        // xargs' abort, with the name it was invoked as.
        ("exec \"$@\" xargs sh -c 'exit 255'", "a b\n"),
        // The native summary of failures, and a NUL warning.
        ("exec \"$@\" false", "1\n2\n3\n"),
        ("exec \"$@\" true", "a\0b\n"),
        // A usage error.
        ("exec \"$@\" --bogus", ""),
    ];
    for (script, input) in cases {
        let log = scratch().join(format!("strace-{}.log", std::process::id()));
        let o = run_prog(
            "bash",
            &[
                "-c",
                script,
                "bash",
                "strace",
                "-f",
                "-qq",
                "-s",
                "8192",
                "-e",
                "trace=write,writev",
                "-e",
                "signal=none",
                "-o",
                log.to_str().unwrap(),
                BIN,
            ],
            input.as_bytes(),
        );
        assert!(!o.stderr.is_empty(), "{script}: no message at all: {o:?}");
        let trace = std::fs::read_to_string(&log).expect("strace log");
        let _ = std::fs::remove_file(&log);
        let writes: Vec<&str> = trace
            .lines()
            .filter(|l| l.contains("write(2, ") || l.contains("writev(2, "))
            .collect();
        assert!(!writes.is_empty(), "{script}: no write to stderr traced");
        // Each case makes one message (of one or two lines): one write, ending its line.
        assert_eq!(
            writes.len(),
            1,
            "{script}: stderr {:?} from writes {writes:#?}",
            err(&o)
        );
        assert!(
            writes[0].contains("write(2, ") && writes[0].contains("\\n\", "),
            "{script}: a message written in pieces: {writes:?}"
        );
    }
}
