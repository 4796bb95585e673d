//! Retries and poisoning: a batch whose command is killed by a signal or exits 137, 139, 200 or
//! 254 (with `-E`: any non-zero status) runs again, up to `FRUN_RETRY_LIMIT` retries (default
//! 3; `FORKRUN_RETRY_LIMIT` too); a failed attempt's output never appears; a batch still failing
//! is given up (exit 3). `--halt` stops a run after N (or N%) failed batches (exit 1). Every case
//! runs with buffered output and with `-k`, each frun in a fresh temporary directory (a
//! checkpoint may be left there).

use crate::common::*;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// Extra environment variables for frun.
type Env = &'static [(&'static str, &'static str)];

/// The two output modes every case is checked in.
const MODES: [&[&str]; 2] = [&[], &["-k"]];

/// Prints its records, then fails (by running `$HOW` with `eval`) if one of them is `$R` and
/// this is one of the first `$N` attempts at `$R`. Every attempt at `$R` appends a line to
/// `$D/attempts`.
const FAIL_SCRIPT: &str = r#"printf '%s\n' "$@"
for a; do
  if [ "$a" = "$R" ]; then
    echo x >> "$D/attempts"
    if [ "$(wc -l < "$D/attempts")" -le "$N" ]; then eval "$HOW"; fi
  fi
done"#;

/// `$N` for a record that fails on every attempt.
const ALWAYS: u64 = 1_000_000;

/// The result of one run of [`FAIL_SCRIPT`].
struct Run {
    out: Output,
    /// How many times the failing record's batch was attempted.
    attempts: usize,
}

/// Runs `frun MODE FLAGS sh -c FAIL_SCRIPT sh` on `seq n` in a fresh temporary directory, the
/// batch holding `record` failing its first `fails` attempts with `how`.
fn run_failing(
    mode: &[&str],
    flags: &[&str],
    envs: &[(&str, &str)],
    n: u64,
    record: u64,
    fails: u64,
    how: &str,
) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_owned();
    let (r, f) = (record.to_string(), fails.to_string());
    let mut all_env = vec![("D", d.as_str()), ("R", r.as_str()), ("N", f.as_str())];
    all_env.push(("HOW", how));
    all_env.extend_from_slice(envs);
    let mut args: Vec<&str> = mode.to_vec();
    args.extend_from_slice(flags);
    args.extend_from_slice(&["sh", "-c", FAIL_SCRIPT, "sh"]);
    let out = frun_in(dir.path(), &args, &all_env, &seq_n(n));
    let attempts = file_lines(&dir.path().join("attempts"));
    Run { out, attempts }
}

/// `seq 1 n` without the line `skip`.
fn seq_without(n: u64, skip: u64) -> Vec<u8> {
    (1..=n)
        .filter(|&i| i != skip)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect()
}

/// Number of files in `dir` whose name starts with `prefix`.
fn count_files(dir: &Path, prefix: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            let e = e.as_ref().unwrap();
            e.file_name().to_string_lossy().starts_with(prefix)
        })
        .count()
}

/// Asserts the outcome of a run whose failing batch was given up: exit 3, stderr says
/// "given up", every other record's output once, none of the given-up record's.
#[track_caller]
fn assert_given_up(mode: &[&str], run: &Run, n: u64, record: u64, ctx: &str) {
    assert_code(&run.out, 3);
    assert!(
        err(&run.out).contains("given up"),
        "{ctx} {mode:?}: stderr must name the batch given up: {}",
        err(&run.out)
    );
    assert_output(mode, &run.out.stdout, &seq_without(n, record), ctx);
}

/// (a) A command killed by SIGSEGV or SIGKILL once, on one record, is run again: every record's
/// output appears exactly once and frun exits 0.
#[test]
fn a_command_crashing_once_heals() {
    for how in ["kill -SEGV $$", "kill -KILL $$"] {
        for mode in MODES {
            let run = run_failing(mode, &["-l", "3"], &[], 300, 137, 1, how);
            assert_code(&run.out, 0);
            assert_output(mode, &run.out.stdout, &seq_n(300), how);
            assert_eq!(run.attempts, 2, "{how} {mode:?}: one crash, one retry");
        }
    }
}

/// (b) A record that crashes on every attempt is given up after the default 3 retries (4
/// attempts): it is missing from the output, every other record of `seq 2000` appears exactly
/// once (in order under `-k`), stderr says "given up", and frun exits 3.
#[test]
fn a_command_always_crashing_on_one_record_is_given_up() {
    for mode in MODES {
        let run = run_failing(mode, &["-l", "1"], &[], 2000, 777, ALWAYS, "kill -SEGV $$");
        assert_given_up(mode, &run, 2000, 777, "SEGV on 777");
        assert_eq!(run.attempts, 4, "{mode:?}: default limit = 3 retries");
    }
}

/// (c) Output printed by an attempt that then fails never appears: every batch prints its
/// records and then fails on its first attempt, yet the output holds every record exactly
/// once.
#[test]
fn output_of_a_failed_attempt_is_discarded() {
    let script = r#"printf '%s\n' "$@"
m="$D/first-$1"
if [ ! -e "$m" ]; then : > "$m"; eval "$HOW"; fi"#;
    for how in ["kill -KILL $$", "kill -SEGV $$", "exit 254"] {
        for mode in MODES {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path().to_str().unwrap();
            let mut args = mode.to_vec();
            args.extend_from_slice(&["-l", "50", "sh", "-c", script, "sh"]);
            let o = frun_in(dir.path(), &args, &[("D", d), ("HOW", how)], &seq_n(3000));
            assert_code(&o, 0);
            assert_output(mode, &o.stdout, &seq_n(3000), how);
            let failed = count_files(dir.path(), "first-");
            assert!(
                failed >= 60,
                "{how} {mode:?}: only {failed} batches failed once"
            );
        }
    }
}

/// A retried batch runs again under a new `{ID}`: every batch fails its first attempt, and
/// the ids seen by all attempts are all different.
#[test]
fn ids_never_repeat_across_attempts() {
    let script = r#"id=$1; shift
echo "$id" >> "$D/ids"
printf '%s\n' "$@"
m="$D/first-$1"
if [ ! -e "$m" ]; then : > "$m"; kill -KILL $$; fi"#;
    for mode in MODES {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let mut args = mode.to_vec();
        args.extend_from_slice(&["-I", "-l", "10", "sh", "-c", script, "sh", "{ID}"]);
        let o = frun_in(dir.path(), &args, &[("D", d)], &seq_n(300));
        assert_code(&o, 0);
        assert_output(mode, &o.stdout, &seq_n(300), "-I");
        let batches = count_files(dir.path(), "first-");
        assert!(batches >= 30, "{mode:?}: only {batches} batches");
        let ids = lines(&std::fs::read(dir.path().join("ids")).unwrap());
        assert_eq!(ids.len(), 2 * batches, "{mode:?}: two attempts per batch");
        let mut uniq = ids.clone();
        uniq.sort();
        uniq.dedup();
        assert_eq!(uniq.len(), ids.len(), "{mode:?}: an id repeated: {ids:?}");
        assert!(
            ids.iter().all(|i| !i.contains("{ID}")),
            "{mode:?}: {{ID}} not replaced: {ids:?}"
        );
    }
}

/// (e) Exit statuses 137, 139, 200 and 254 are retried without `-E`: failing once heals.
#[test]
fn special_exit_statuses_are_retried_without_e() {
    for code in [137, 139, 200, 254] {
        let how = format!("exit {code}");
        for mode in MODES {
            let run = run_failing(mode, &["-l", "2"], &[], 100, 41, 1, &how);
            assert_code(&run.out, 0);
            assert_output(mode, &run.out.stdout, &seq_n(100), &how);
            assert_eq!(run.attempts, 2, "{how} {mode:?}");
        }
    }
}

/// (d, 3) Without `-E`, any other non-zero status is not retried: the batch's output is kept
/// and frun exits 123.
#[test]
fn other_exit_statuses_keep_their_output_and_give_123() {
    for code in [1, 2, 136, 138, 201, 255] {
        let how = format!("exit {code}");
        for mode in MODES {
            let run = run_failing(mode, &["-l", "2"], &[], 100, 41, ALWAYS, &how);
            assert_code(&run.out, 123);
            assert_output(mode, &run.out.stdout, &seq_n(100), &how);
            assert_eq!(run.attempts, 1, "{how} {mode:?}: must not be retried");
        }
    }
}

/// (d) `-E` (and its aliases `--retry-failed`, `--retry-nonzero-exit`) retries any non-zero
/// exit: exiting 1 once heals (exit 0, all output once).
#[test]
fn retry_failed_heals_a_command_that_exits_1_once() {
    for flag in ["-E", "--retry-failed", "--retry-nonzero-exit"] {
        for mode in MODES {
            let run = run_failing(mode, &[flag, "-l", "1"], &[], 60, 23, 1, "exit 1");
            assert_code(&run.out, 0);
            assert_output(mode, &run.out.stdout, &seq_n(60), flag);
            assert_eq!(run.attempts, 2, "{flag} {mode:?}");
        }
    }
}

/// (d) With `-E`, a command that always exits 1 on one record is given up after 4 attempts:
/// exit 3, "given up", that record's output missing, all others once.
#[test]
fn retry_failed_gives_up_a_command_that_always_exits_1() {
    for mode in MODES {
        let run = run_failing(mode, &["-E", "-l", "1"], &[], 60, 23, ALWAYS, "exit 1");
        assert_given_up(mode, &run, 60, 23, "-E exit 1");
        assert_eq!(run.attempts, 4, "{mode:?}");
    }
}

/// (f) `FRUN_RETRY_LIMIT` counts retries after the first attempt: 0 never retries, 1 allows
/// exactly one retry, the default allows three, a negative value retries until it works.
#[test]
fn retry_limit_counts_retries_after_the_first_attempt() {
    let kill = "kill -KILL $$";
    // (limit, failing attempts, expected exit, expected attempts)
    let cases: [(Option<&str>, u64, i32, usize); 7] = [
        (Some("0"), 1, 3, 1),
        (Some("1"), 2, 3, 2),
        (Some("1"), 1, 0, 2),
        (None, 3, 0, 4),
        (None, 4, 3, 4),
        (Some("2"), 3, 3, 3),
        (Some("-1"), 6, 0, 7),
    ];
    for (limit, fails, code, attempts) in cases {
        let env: Vec<(&str, &str)> = limit.map(|l| ("FRUN_RETRY_LIMIT", l)).into_iter().collect();
        let ctx = format!("FRUN_RETRY_LIMIT={limit:?}, {fails} crashes");
        check_retry_limit(&env, fails, kill, code, attempts, &ctx);
    }
}

/// Runs record 17 of `seq 40` (one record per batch) failing its first `fails` attempts with
/// `how`, in both output modes; checks the exit status (0 healed, else given up) and the count
/// of attempts.
fn check_retry_limit(
    env: &[(&str, &str)],
    fails: u64,
    how: &str,
    code: i32,
    attempts: usize,
    ctx: &str,
) {
    for mode in MODES {
        let run = run_failing(mode, &["-l", "1"], env, 40, 17, fails, how);
        if code == 0 {
            assert_code(&run.out, 0);
            assert_output(mode, &run.out.stdout, &seq_n(40), ctx);
        } else {
            assert_given_up(mode, &run, 40, 17, ctx);
        }
        assert_eq!(run.attempts, attempts, "{ctx} {mode:?}");
    }
}

/// (f) `FORKRUN_RETRY_LIMIT` is read too, and `FRUN_RETRY_LIMIT` wins when both are set.
#[test]
fn forkrun_retry_limit_is_read_and_frun_retry_limit_wins() {
    let kill = "kill -KILL $$";
    let cases: [(Env, i32, usize); 3] = [
        (&[("FORKRUN_RETRY_LIMIT", "0")], 3, 1),
        (
            &[("FRUN_RETRY_LIMIT", "1"), ("FORKRUN_RETRY_LIMIT", "0")],
            0,
            2,
        ),
        (
            &[("FRUN_RETRY_LIMIT", "0"), ("FORKRUN_RETRY_LIMIT", "5")],
            3,
            1,
        ),
    ];
    for (env, code, attempts) in cases {
        check_retry_limit(env, 1, kill, code, attempts, &format!("{env:?}"));
    }
}

/// (g) A command killed from outside with SIGKILL is retried: the first attempt at record 7
/// writes its pid and sleeps 30 s; the test kills it; the retry does not sleep, so the run ends
/// well before 30 s with every record once and exit 0.
#[test]
fn a_command_killed_from_outside_is_retried() {
    let script = r#"if [ "$1" = 7 ] && [ ! -e "$D/m" ]; then
  : > "$D/m"; echo "$1"; echo $$ > "$D/pid.tmp"; mv "$D/pid.tmp" "$D/pid"; exec sleep 30
fi
echo "$1""#;
    for mode in MODES {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let mut args = mode.to_vec();
        args.extend_from_slice(&["-l", "1", "sh", "-c", script, "sh"]);
        let start = Instant::now();
        let mut child = spawn_frun_in(
            dir.path(),
            &args,
            &[("D", d)],
            Stdio::piped(),
            Stdio::piped(),
        );
        let stdin = feed(child.stdin.take().unwrap(), seq_n(20));
        let stdout = drain(child.stdout.take().unwrap());
        let stderr = drain(child.stderr.take().unwrap());
        let pid_file = dir.path().join("pid");
        wait_until("the pid file", Duration::from_secs(10), || {
            pid_file.exists()
        });
        let pid: u32 = text(&std::fs::read(&pid_file).unwrap())
            .trim()
            .parse()
            .unwrap();
        send_signal(pid, "KILL");
        let st = wait_limit(&mut child, Duration::from_secs(40));
        let took = start.elapsed();
        let _ = stdin.join();
        let out = stdout.join().unwrap();
        let e = text(&stderr.join().unwrap());
        assert_eq!(st.code(), Some(0), "{mode:?}: {st:?}, stderr {e}");
        assert!(
            took < Duration::from_secs(15),
            "{mode:?}: took {took:?}: the killed batch was not retried at once"
        );
        assert_output(mode, &out, &seq_n(20), "killed from outside");
    }
}

/// Runs `frun MODE -l 1 [FLAGS] --halt SPEC sh -c SCRIPT sh` on `seq n` in a fresh temporary
/// directory (`$D` = that directory); returns the output, the time taken and the directory.
fn run_halt(
    mode: &[&str],
    flags: &[&str],
    spec: &str,
    script: &str,
    n: u64,
) -> (Output, Duration, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_owned();
    let mut args = mode.to_vec();
    args.extend_from_slice(&["-l", "1"]);
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--halt", spec, "sh", "-c", script, "sh"]);
    let start = Instant::now();
    let o = frun_in(dir.path(), &args, &[("D", d.as_str())], &seq_n(n));
    (o, start.elapsed(), dir)
}

/// Asserts a halted run: exit 1, a checkpoint left in frun's directory, and stderr saying how
/// to resume.
#[track_caller]
fn assert_halted(o: &Output, dir: &Path, ctx: &str) {
    assert_code(o, 1);
    assert!(
        dir.join(".frun_resume").exists(),
        "{ctx}: --halt must leave a checkpoint; stderr {}",
        err(o)
    );
    assert!(
        err(o).contains("--resume"),
        "{ctx}: stderr must say how to resume: {}",
        err(o)
    );
}

/// `--halt now,fail=1`: the first failing command (record 5 of 1000) stops the run with exit 1
/// after far fewer than 1000 commands, leaving `.frun_resume` in frun's directory.
#[test]
fn halt_now_stops_after_the_first_failure() {
    let script = r#"echo "$1" >> "$D/ran"; if [ "$1" = 5 ]; then exit 1; fi; sleep 0.01"#;
    for mode in MODES {
        let (o, _, dir) = run_halt(mode, &[], "now,fail=1", script, 1000);
        assert_halted(&o, dir.path(), "now,fail=1");
        let ran = file_lines(&dir.path().join("ran"));
        assert!((5..100).contains(&ran), "{mode:?}: {ran} commands ran");
    }
}

/// `--halt now,...` ends the commands still running: record 3 sleeps 30 s, record 5 fails, and
/// frun exits 1 in well under 30 s without record 3's command finishing.
#[test]
fn halt_now_kills_running_commands() {
    let script = r#"echo "$1" >> "$D/ran"
case $1 in 3) sleep 30; : > "$D/done3";; 5) exit 1;; esac
sleep 0.01"#;
    for mode in MODES {
        let (o, took, dir) = run_halt(mode, &["-j", "3"], "now,fail=1", script, 1000);
        assert_halted(&o, dir.path(), "now,fail=1");
        assert!(took < Duration::from_secs(20), "{mode:?}: took {took:?}");
        assert!(
            !dir.path().join("done3").exists(),
            "{mode:?}: the running command was not ended"
        );
        let ran = file_lines(&dir.path().join("ran"));
        assert!(ran < 100, "{mode:?}: {ran} commands ran");
    }
}

/// `--halt soon,fail=1` and `--halt fail=1` (soon by default) let the running command (record
/// 3, sleeping 1.5 s) finish but start no new ones: exit 1, record 3's command completed, few
/// commands ran.
#[test]
fn halt_soon_lets_running_commands_finish() {
    let script = r#"echo "$1" >> "$D/ran"
case $1 in 3) sleep 1.5; : > "$D/done3";; 5) exit 1;; esac
sleep 0.01"#;
    for spec in ["soon,fail=1", "fail=1"] {
        for mode in MODES {
            let (o, took, dir) = run_halt(mode, &["-j", "3"], spec, script, 1000);
            assert_halted(&o, dir.path(), spec);
            assert!(
                dir.path().join("done3").exists(),
                "{spec} {mode:?}: the running command was not allowed to finish"
            );
            assert!(
                took >= Duration::from_millis(1400),
                "{spec} {mode:?}: {took:?}"
            );
            let ran = file_lines(&dir.path().join("ran"));
            assert!(ran < 50, "{spec} {mode:?}: {ran} commands ran");
        }
    }
}

/// `fail=N` counts failed batches: two failures do not reach `fail=3` (every command runs, exit
/// 123, all output kept) but do reach `fail=2` (exit 1).
#[test]
fn halt_waits_for_n_failures() {
    let script = r#"echo "$1"; case $1 in 5|10) exit 1;; esac"#;
    for mode in MODES {
        let (o, _, dir) = run_halt(mode, &[], "now,fail=3", script, 200);
        assert_code(&o, 123);
        assert_output(mode, &o.stdout, &seq_n(200), "fail=3");
        assert!(!dir.path().join(".frun_resume").exists());
        let (o, _, dir) = run_halt(mode, &[], "soon,fail=2", script, 200);
        assert_halted(&o, dir.path(), "fail=2");
    }
}

/// `fail=50%` halts a run where every command fails, but not one where 1 batch in 100 (late in
/// the run) fails.
#[test]
fn halt_on_a_percentage_of_failures() {
    for mode in MODES {
        let (o, _, dir) = run_halt(mode, &[], "fail=50%", "exit 1", 200);
        assert_halted(&o, dir.path(), "fail=50%, all failing");
        let script = r#"echo "$1"; [ "$1" != 90 ]"#;
        let (o, _, _dir) = run_halt(mode, &[], "fail=50%", script, 100);
        assert_code(&o, 123);
        assert_output(mode, &o.stdout, &seq_n(100), "fail=50%, one failing");
    }
}

/// Retried attempts are not failures for `--halt`: a crash that heals leaves the run complete
/// (exit 0), while a batch given up counts (exit 1).
#[test]
fn halt_counts_given_up_batches_not_retried_attempts() {
    for mode in MODES {
        let run = run_failing(
            mode,
            &["-l", "1", "--halt", "now,fail=1"],
            &[],
            100,
            5,
            1,
            "kill -KILL $$",
        );
        assert_code(&run.out, 0);
        assert_output(mode, &run.out.stdout, &seq_n(100), "healed under --halt");
        let run = run_failing(
            mode,
            &["-l", "1", "--halt", "now,fail=1"],
            &[("FRUN_RETRY_LIMIT", "1")],
            100,
            5,
            ALWAYS,
            "kill -KILL $$",
        );
        assert_code(&run.out, 1);
        assert_eq!(run.attempts, 2, "{mode:?}");
    }
}

/// Malformed `--halt` specs are usage errors (exit 2, one `frun: ` line) and run nothing.
#[test]
fn malformed_halt_specs_are_usage_errors() {
    for spec in ["fail=", "bogus", "now,fail=x"] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let o = frun_in(
            dir.path(),
            &["--halt", spec, "sh", "-c", ": > \"$D/ran\"", "sh"],
            &[("D", d)],
            &seq_n(5),
        );
        assert_usage_error(&o, &[]);
        assert!(
            !dir.path().join("ran").exists(),
            "--halt {spec}: a command ran"
        );
    }
}

/// `--halt` says which condition was met in forkrun's words ("Halt condition met (2 failed
/// batches)"), for `fail=N`, forkrun's `now,N` and `fail=N%`, and stops with status 1 before
/// the input's end: records 3 and 7 (or every one not divisible by 3) fail.
#[test]
fn halt_names_the_condition_met() {
    let script = r#"echo "$1"; [ "$1" != 3 ] && [ "$1" != 7 ]"#;
    let thirds = r#"echo "$1"; [ $(($1 % 3)) = 0 ]"#;
    for (spec, cmd, n, said) in [
        (
            "fail=2",
            script,
            100,
            "Halt condition met (2 failed batches)",
        ),
        ("now,2", script, 10, "Halt condition met (2 failed batches)"),
        (
            "fail=50%",
            thirds,
            1000,
            "Halt condition met (50% failed batches)",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let o = frun_in(
            dir.path(),
            &["-j", "1", "-l", "1", "--halt", spec, "sh", "-c", cmd, "sh"],
            &[],
            &seq_n(n),
        );
        assert_code(&o, 1);
        assert!(err(&o).contains(said), "--halt {spec}: {}", err(&o));
        let ran = o.stdout.iter().filter(|&&b| b == b'\n').count() as u64;
        assert!(ran < n, "--halt {spec}: the run went on to the end");
    }
}
