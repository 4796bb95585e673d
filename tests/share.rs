//! Work shared by claims through a results directory (`--share claims`), on one machine: tasks
//! started together, late or again, killed with SIGKILL, stopped with SIGSTOP past their lease
//! or with SIGTERM, and 64 of them at random times: every time `frun merge` gives every record
//! exactly once (against `seq`), whatever ran twice. The same on a real Slurm cluster is in
//! `tests/slurm/`.

use crate::common::*;
use std::process::Output;
use std::time::Duration;

/// Runs a bash script in a fresh directory (`$FRUN` the binary, no Slurm variables), killed
/// after `limit`. The script checks what it runs and exits non-zero with a message when
/// something is wrong.
fn script(limit: Duration, text: &str) -> Output {
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut c = assert_cmd::Command::new("bash");
    c.arg("-c")
        .arg(format!(
            "set -u\nfail() {{ echo \"FAIL: $*\" >&2; exit 1; }}\n\
             # merged DIR WANT: DIR merged (sorted) is WANT's lines (sorted), exactly.\n\
             merged() {{ \"$FRUN\" merge \"$1\" | sort > merged.txt; sort \"$2\" > want.sorted; \
             cmp -s merged.txt want.sorted || fail \"merge of $1: $(wc -l < merged.txt) lines, \
             want $(wc -l < want.sorted)\"; }}\n{text}"
        ))
        .env("FRUN", BIN)
        .current_dir(dir.path())
        .write_stdin(Vec::new())
        .timeout(limit);
    for v in [
        "SLURM_STEP_ID",
        "SLURM_PROCID",
        "SLURM_NTASKS",
        "SLURM_STEP_NUM_TASKS",
        "SLURM_JOB_ID",
        "FRUN_SHARD",
    ] {
        c.env_remove(v);
    }
    let out = c.output().expect("spawn bash");
    assert!(
        out.status.success(),
        "script failed ({:?}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text_of(&out.stdout),
        text_of(&out.stderr)
    );
    out
}

fn text_of(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The input (seq 60000) and what every record gives (`r` before it).
const SETUP: &str = "seq 60000 > in; sed 's/^/r/' in > want\n\
                     slow=(-L 500 sh -c 'sleep 0.1; printf \"r%s\\n\" \"$@\"' x)\n";

#[test]
fn three_tasks_share_a_file_and_the_merge_is_exact_in_order() {
    script(
        Duration::from_secs(120),
        &format!(
            "{SETUP}
for i in 1 2 3; do \"$FRUN\" --share claims --stats --results r -k -a in \"${{slow[@]}}\" 2> err.$i & done
wait
\"$FRUN\" merge r > merged.txt || fail merge
cmp -s merged.txt want || fail 'merged output is not seq in order'
# Each of the three did some of the work.
for i in 1 2 3; do grep -q 'share: task=.* claims=[1-9]' err.$i || fail \"task $i claimed nothing: $(cat err.$i)\"; done
\"$FRUN\" status r > status.txt || fail status
grep -q 'input: 348894 of 348894 bytes done (100.0%)' status.txt || fail \"status: $(cat status.txt)\"
grep -q 'open claims: 0' status.txt || fail \"status: $(cat status.txt)\"
"
        ),
    );
}

#[test]
fn a_task_killed_mid_run_is_covered_and_nothing_is_twice() {
    // The commands print their records at once and then take a while: when the victim is
    // killed, its output file holds batches it never committed.
    script(
        Duration::from_secs(120),
        &format!(
            "{SETUP}
late=(-L 500 sh -c 'printf \"r%s\\n\" \"$@\"; sleep 0.3' x)
\"$FRUN\" --share claims --results r -a in \"${{late[@]}}\" 2> err.v & victim=$!
for i in 1 2; do \"$FRUN\" --share claims --stats --results r -a in \"${{late[@]}}\" 2> err.$i & done
sleep 1.5
kill -9 $victim
wait
merged r want
# Its output file does hold records that are not in the merge a second time.
[ -s \"$(ls r/task-*.out | head -1)\" ] || fail 'no output file'
grep -q 'taking over the open claims' err.1 err.2 || fail 'nobody took the killed task over'
"
        ),
    );
}

#[test]
fn a_task_started_later_joins_the_run() {
    script(
        Duration::from_secs(120),
        &format!(
            "{SETUP}
\"$FRUN\" --share claims --stats --results r -a in \"${{slow[@]}}\" 2> err.1 & first=$!
sleep 1
\"$FRUN\" --share claims --stats --results r -a in \"${{slow[@]}}\" 2> err.2 || fail \"the late task: $(cat err.2)\"
wait $first || fail \"the first task: $(cat err.1)\"
merged r want
grep -q 'share: task=.* claims=[1-9]' err.2 || fail \"the late task did nothing: $(cat err.2)\"
"
        ),
    );
}

#[test]
fn a_task_that_slows_down_has_the_unstarted_part_of_its_claims_split_off() {
    // The same command in both tasks; in the first it turns slow past record 1000, after its
    // claims were sized at its earlier pace (it ran alone for 1.5 s, so it holds the claims
    // there). The other, out of work, splits them (again and again, as the owner keeps a
    // share), and the merge is still exact.
    script(
        Duration::from_secs(120),
        "seq 4000 | awk '{printf \"%s %095d\\n\", $1, 0}' > in; sed 's/^/r/' in > want
cmd=(-L 10 sh -c 'if [ -n \"${SLOW:-}\" ] && [ \"${1%% *}\" -gt 1000 ]; then sleep 1; fi; sleep 0.02; printf \"r%s\\n\" \"$@\"' x)
SLOW=1 \"$FRUN\" --share claims --stats --results r -a in \"${cmd[@]}\" 2> err.s & slow=$!
sleep 1.5
\"$FRUN\" --share claims --stats --results r -a in \"${cmd[@]}\" 2> err.f || fail \"the fast task: $(cat err.f)\"
wait $slow || fail \"the slow task: $(cat err.s)\"
merged r want
grep -q 'share: task=.* split_off=[1-9]' err.f || fail \"nothing was split off: $(cat err.f)\"
ls r/share/s-* > /dev/null || fail 'no split is indexed'
\"$FRUN\" status r | grep -q 'split off [1-9]' || fail \"status: $(\"$FRUN\" status r)\"
",
    );
}

#[test]
fn a_task_silent_past_its_lease_is_taken_over_and_its_late_commit_discarded() {
    script(
        Duration::from_secs(120),
        &format!(
            "{SETUP}
\"$FRUN\" --share claims --lease 1 --stats --results r -a in \"${{slow[@]}}\" 2> err.s & silent=$!
\"$FRUN\" --share claims --lease 1 --stats --results r -a in \"${{slow[@]}}\" 2> err.w & worker=$!
sleep 1
kill -STOP $silent
wait $worker || fail \"the other task: $(cat err.w)\"
kill -CONT $silent
wait $silent || fail \"the silent task: $(cat err.s)\"
merged r want
grep -q 'taking over the open claims' err.w || fail \"no takeover: $(cat err.w)\"
grep -q 'duplicates=[1-9]' err.s || fail \"no duplicate counted: $(cat err.s)\"
"
        ),
    );
}

#[test]
fn a_task_stopped_by_a_signal_leaves_and_the_run_resumes() {
    script(
        Duration::from_secs(120),
        &format!(
            "{SETUP}
\"$FRUN\" --share claims --results r -a in \"${{slow[@]}}\" 2> err.1 & t=$!
sleep 1
kill -TERM $t
wait $t; st=$?
[ $st = 143 ] || fail \"TERM: status $st\"
\"$FRUN\" status r | grep -q ': left,' || fail \"the stopped task's lease does not say left: $(\"$FRUN\" status r)\"
\"$FRUN\" merge r > /dev/null 2>&1 && fail 'merge says a stopped run is complete'
# Nothing is live: the next task starts at once on what is left.
\"$FRUN\" --share claims --results r -a in \"${{slow[@]}}\" 2> err.2 || fail \"the rerun: $(cat err.2)\"
merged r want
"
        ),
    );
}

#[test]
fn at_most_once_leaves_a_lost_tasks_claims_open_until_asked() {
    script(
        Duration::from_secs(120),
        &format!(
            "{SETUP}
\"$FRUN\" --share claims --at-most-once --results r -a in \"${{slow[@]}}\" 2> err.v & victim=$!
\"$FRUN\" --share claims --at-most-once --results r -a in \"${{slow[@]}}\" 2> err.1 & other=$!
sleep 1
kill -9 $victim
wait $other || fail \"the other task: $(cat err.1)\"
\"$FRUN\" merge r > /dev/null 2> merge.err; st=$?
[ $st = 1 ] || fail \"merge of a run with open claims: status $st\"
\"$FRUN\" status r > status.txt
grep -q 'open claims: [1-9]' status.txt || fail \"status lists no open claim: $(cat status.txt)\"
grep -q \"working (its process is gone)\" status.txt || fail \"status: the killed task: $(cat status.txt)\"
# Without --at-most-once, a new task runs them.
\"$FRUN\" --share claims --results r -a in \"${{slow[@]}}\" 2> err.2 || fail \"the rerun: $(cat err.2)\"
merged r want
"
        ),
    );
}

#[test]
fn another_command_or_no_file_is_refused() {
    script(
        Duration::from_secs(60),
        "seq 1000 > in
\"$FRUN\" --share claims --results r -a in printf 'r%s\\n' || fail 'first run'
\"$FRUN\" --share claims --results r -a in printf 's%s\\n' 2> err; st=$?
[ $st = 2 ] || fail \"another command: status $st\"
grep -q 'another command' err || fail \"another command: $(cat err)\"
\"$FRUN\" --share fixed --shard 0/2 --results r -a in printf 'r%s\\n' 2> err; st=$?
[ $st = 2 ] || fail \"fixed shares on a shared directory: status $st\"
grep -q 'shared by claims' err || fail \"fixed shares on a shared directory: $(cat err)\"
\"$FRUN\" --shard 0/2 --results f -a in printf 'r%s\\n' || fail 'a fixed share'
\"$FRUN\" --share claims --results f -a in printf 'r%s\\n' 2> err; st=$?
[ $st = 2 ] || fail \"claims on fixed shares: status $st\"
grep -q 'fixed shares' err || fail \"claims on fixed shares: $(cat err)\"
# A task started later without --share joins a directory shared by claims (a later srun).
seq 1000 | sed 's/^/r/' > want
\"$FRUN\" --results r -a in printf 'r%s\\n' || fail 'a plain rerun on a shared directory'
merged r want
seq 10 | \"$FRUN\" --share claims --results p printf x 2> err; st=$?
[ $st = 2 ] || fail \"a pipe: status $st\"
grep -q 'needs the input in a regular file' err || fail \"a pipe: $(cat err)\"
\"$FRUN\" --share claims -a in true 2> err; st=$?
[ $st = 2 ] || fail \"no --results: status $st\"
grep -q 'needs --results' err || fail \"no --results: $(cat err)\"
\"$FRUN\" --share sometimes -a in true 2> err; st=$?
[ $st = 2 ] || fail \"a bad mode: status $st\"
",
    );
}

#[test]
fn sixty_four_tasks_at_random_times_a_third_killed_then_one_more_every_record_once() {
    // A fixed seed: the same starts and kills every time.
    script(
        Duration::from_secs(300),
        "seq 30000 > in; sed 's/^/r/' in > want
RANDOM=36
pids=()
for i in $(seq 64); do
  sleep 0.0$((RANDOM % 10))
  \"$FRUN\" --share claims -j 1 --results r -a in -L 200 sh -c 'printf \"r%s\\n\" \"$@\"' x 2> err.$i &
  pids+=($!)
done
for i in $(seq 21); do
  sleep 0.0$((RANDOM % 10))
  kill -9 ${pids[$((RANDOM % 64))]} 2>/dev/null
done
wait
\"$FRUN\" --share claims --results r -a in -L 200 sh -c 'printf \"r%s\\n\" \"$@\"' x 2> err.last || fail \"the last run: $(cat err.last)\"
merged r want
",
    );
}
