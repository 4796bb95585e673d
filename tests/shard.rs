//! Sharding and results directories, without a cluster: `--shard I/N` tasks (and Slurm's task
//! variables) each take a disjoint share of a file or a broadcast stream, together exactly the
//! input; `--results DIR` plus `frun merge DIR` equals one single-machine run byte for byte
//! (`-k`) or as sorted lines; a stopped run continues on another number of tasks; and what
//! cannot work is refused with one line. The real-cluster tests are in `tests/slurm/`.

use crate::common::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Prints each record on a line of its own, so the output does not depend on batch sizes.
const EACH: &[&str] = &["printf", "r%s\\n"];

/// A frun command with no Slurm variables (the test may itself run inside a Slurm step).
fn task(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args);
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
    c
}

fn output(mut c: Command) -> Output {
    c.stdin(Stdio::null()).output().expect("spawn frun")
}

/// Starts `n` tasks of `args` at once (each with `--shard I/N` added first).
fn spawn_tasks(n: u64, args: &[&str]) -> Vec<std::process::Child> {
    (0..n)
        .map(|i| {
            let shard = format!("{i}/{n}");
            let mut all = vec!["--shard", &shard];
            all.extend_from_slice(args);
            task(&all)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn frun")
        })
        .collect()
}

/// Runs `n` tasks of `args` at once; returns each output.
fn run_tasks(n: u64, args: &[&str]) -> Vec<Output> {
    spawn_tasks(n, args)
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait"))
        .collect()
}

/// Runs `n` tasks of `args` and stops them with SIGTERM after `ms` milliseconds.
fn stopped_tasks(n: u64, args: &[&str], ms: u64) -> Vec<Output> {
    let children = spawn_tasks(n, args);
    std::thread::sleep(Duration::from_millis(ms));
    for c in &children {
        send_signal(c.id(), "TERM");
    }
    children
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait"))
        .collect()
}

/// `r1 … rN`, one per line: what [`EACH`] prints for `seq N`.
fn expected(n: u64) -> Vec<u8> {
    let mut v = Vec::new();
    for i in 1..=n {
        v.extend_from_slice(format!("r{i}\n").as_bytes());
    }
    v
}

fn write_seq(dir: &Path, n: u64) -> String {
    let p = dir.join("in");
    std::fs::write(&p, seq(1, n)).unwrap();
    p.to_str().unwrap().to_string()
}

fn merge(dir: &Path) -> Output {
    output(task(&["merge", dir.to_str().unwrap()]))
}

#[test]
fn file_shards_are_disjoint_and_complete() {
    let d = tempfile::tempdir().unwrap();
    let input = write_seq(d.path(), 200_000);
    let mut args = vec!["-k", "-a", &input];
    args.extend_from_slice(EACH);
    let outs = run_tasks(3, &args);
    let mut all = Vec::new();
    for (i, o) in outs.iter().enumerate() {
        assert_clean(o);
        // Each task's share is a real share, in input order within the task.
        let lines = lines(&o.stdout);
        assert!(lines.len() > 40_000, "task {i} did {} records", lines.len());
        let nums: Vec<u64> = lines.iter().map(|l| l[1..].parse().unwrap()).collect();
        assert!(
            nums.windows(2).all(|w| w[0] < w[1]),
            "task {i} out of order"
        );
        all.extend_from_slice(&o.stdout);
    }
    assert_eq!(sorted_lines(&all), sorted_lines(&expected(200_000)));
}

#[test]
fn a_broadcast_stream_is_shared_out_too() {
    // Every task reads the whole stream (as srun --input=all gives it) and counts its share;
    // 6.9 MB make 7 chunks of 1 MiB, so each of 3 tasks has some.
    let data = seq(1, 1_000_000);
    let mut total = 0u64;
    for i in 0..3 {
        let shard = format!("{i}/3");
        let mut c = task(&["--shard", &shard, "-s", "wc", "-l"]);
        let o = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map(|mut ch| {
                let w = feed(ch.stdin.take().unwrap(), data.clone());
                let o = ch.wait_with_output().unwrap();
                w.join().unwrap();
                o
            })
            .unwrap();
        assert_clean(&o);
        let share: u64 = lines(&o.stdout)
            .iter()
            .map(|l| l.trim().parse::<u64>().unwrap())
            .sum();
        assert!(share > 0, "task {i} got nothing");
        total += share;
    }
    assert_eq!(total, 1_000_000);
}

#[test]
fn slurm_task_variables_shard_only_inside_a_step() {
    let d = tempfile::tempdir().unwrap();
    let input = write_seq(d.path(), 50_000);
    let slurm = |i: &str, step: Option<&str>, extra: &[&str]| {
        let mut args = vec!["-k", "-a", &input];
        args.extend_from_slice(extra);
        args.extend_from_slice(EACH);
        let mut c = task(&args);
        c.env("SLURM_PROCID", i).env("SLURM_NTASKS", "2");
        if let Some(s) = step {
            c.env("SLURM_STEP_ID", s).env("SLURM_STEP_NUM_TASKS", "2");
        }
        c.current_dir(d.path());
        output(c)
    };
    let a = slurm("0", Some("0"), &[]);
    let b = slurm("1", Some("0"), &[]);
    assert_clean(&a);
    assert_clean(&b);
    let by_flag = run_tasks(2, &["-k", "-a", &input, EACH[0], EACH[1]]);
    assert_eq!(a.stdout, by_flag[0].stdout, "SLURM_PROCID 0 is --shard 0/2");
    assert_eq!(b.stdout, by_flag[1].stdout, "SLURM_PROCID 1 is --shard 1/2");
    let mut both = a.stdout.clone();
    both.extend_from_slice(&b.stdout);
    assert_eq!(sorted_lines(&both), sorted_lines(&expected(50_000)));
    // A frun run by a task's command does all of its own input (FRUN_SHARD=none reaches it).
    let nested = {
        let mut c = task(&["-L", "100000", "-a", &input, "sh", "-c"]);
        c.arg("seq 1000 | \"$0\" -s -L 1000 wc -l").arg(BIN);
        c.env("SLURM_PROCID", "0")
            .env("SLURM_NTASKS", "2")
            .env("SLURM_STEP_ID", "0")
            .env("SLURM_STEP_NUM_TASKS", "2")
            .current_dir(d.path());
        output(c)
    };
    assert_clean(&nested);
    assert!(!nested.stdout.is_empty());
    for l in lines(&nested.stdout) {
        assert_eq!(l.trim(), "1000", "a nested frun did only a share");
    }
    // A batch script (no step) is one process: it does everything; so does --shard none.
    assert_eq!(slurm("0", None, &[]).stdout, expected(50_000));
    assert_eq!(
        slurm("1", Some("0"), &["--shard", "none"]).stdout,
        expected(50_000)
    );
}

#[test]
fn results_merge_equals_one_run() {
    let d = tempfile::tempdir().unwrap();
    let input = write_seq(d.path(), 300_000);
    let single = output({
        let mut c = task(&["-k", "-a", &input]);
        c.args(EACH);
        c
    });
    assert_clean(&single);
    assert_eq!(single.stdout, expected(300_000));
    for (name, order) in [("ordered", "-k"), ("buffered", "--buffered")] {
        let res = d.path().join(name);
        let res = res.to_str().unwrap();
        let mut args = vec!["--results", res, order, "-a", &input];
        args.extend_from_slice(EACH);
        for o in run_tasks(3, &args) {
            assert_clean(&o);
            assert!(o.stdout.is_empty(), "output went to stdout, not to {res}");
        }
        let m = merge(Path::new(res));
        assert_clean(&m);
        if order == "-k" {
            assert!(m.stdout == single.stdout, "merged -k output differs");
        } else {
            assert_eq!(sorted_lines(&m.stdout), sorted_lines(&single.stdout));
        }
    }
}

#[test]
fn a_stopped_run_continues_on_another_number_of_tasks() {
    let d = tempfile::tempdir().unwrap();
    let input = write_seq(d.path(), 100_000);
    let res = d.path().join("r");
    let res = res.to_str().unwrap();
    // Each task's share takes about 2 s on an idle machine: the SIGTERM at 0.8 s always finds
    // it running (at 20 ms a batch a quiet machine could finish a share first).
    let script = "sleep 0.05; printf 'r%s\\n' \"$@\"";
    let args = [
        "--results",
        res,
        "-k",
        "-L",
        "500",
        "-a",
        &input,
        "bash",
        "-c",
        script,
        "x",
    ];
    // Three tasks, stopped by SIGTERM part way.
    for o in stopped_tasks(3, &args, 800) {
        assert_stopped_by(&o.status, libc::SIGTERM, &err(&o));
        assert!(
            err(&o).contains("run the same command again"),
            "{}",
            err(&o)
        );
    }
    // Merging now says what is missing, and writes what is done, in order.
    let part = merge(Path::new(res));
    assert_code(&part, 1);
    assert!(err(&part).contains("is incomplete"), "{}", err(&part));
    let done = lines(&part.stdout);
    assert!(
        !done.is_empty() && done.len() < 100_000,
        "{} done",
        done.len()
    );
    // Two tasks finish it.
    for o in run_tasks(2, &args) {
        assert_code(&o, 0);
        assert!(err(&o).contains("continuing the run in"), "{}", err(&o));
    }
    let m = merge(Path::new(res));
    assert_clean(&m);
    assert!(m.stdout == expected(100_000), "merged output is not exact");
    // A third run finds nothing left to do and changes nothing.
    for o in run_tasks(3, &args) {
        assert_code(&o, 0);
    }
    assert!(merge(Path::new(res)).stdout == expected(100_000));
}

#[test]
fn what_cannot_work_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let input = write_seq(d.path(), 10);
    let res = d.path().join("r");
    let res = res.to_str().unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        // No input reaches a task whose stdin is /dev/null.
        (&["--shard", "1/3", "echo"], &["srun --input=all"]),
        (&["--shard", "0/2", "-n", "5", "-a", &input], &["-n"]),
        (&["--shard", "2/2", "-a", &input], &["--shard"]),
        (&["--results", res, "-u", "-a", &input], &["-u"]),
        (&["--results", res, "-N", "-a", &input], &["-N"]),
        (
            &["--results", res, "--resume", "x", "-a", &input],
            &["--resume"],
        ),
        (&["merge"], &["merge"]),
        (&["merge", "a", "b"], &["merge"]),
    ];
    for (args, names) in cases {
        let o = output(task(args));
        assert_usage_error(&o, names);
    }
    // Another command on the same directory.
    let o = output(task(&["--results", res, "-a", &input, "echo"]));
    assert_clean(&o);
    let o = output(task(&["--results", res, "-a", &input, "printf", "%s\\n"]));
    assert_usage_error(&o, &["another command"]);
    // Another input on the same directory.
    let other = d.path().join("other");
    std::fs::write(&other, "x\ny\n").unwrap();
    let o = output(task(&[
        "--results",
        res,
        "-a",
        other.to_str().unwrap(),
        "echo",
    ]));
    assert_code(&o, 2);
    assert!(err(&o).contains("not the one"), "{}", err(&o));
    // Merging a directory without results.
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let m = merge(&empty);
    assert_code(&m, 2);
    assert!(err(&m).starts_with("frun merge: ") && err(&m).contains("no results"));
    let m = merge(&d.path().join("missing"));
    assert_code(&m, 2);
}

#[test]
fn batch_ids_never_repeat_across_tasks_or_reruns() {
    let d = tempfile::tempdir().unwrap();
    let input = write_seq(d.path(), 100_000);
    let res = d.path().join("r");
    let res = res.to_str().unwrap();
    // Each batch prints its id, then its records.
    let each = ["bash", "-c", "sleep 0.01; echo \"$@\"", "x", "{ID}"];
    let check = |out: &[u8]| {
        let mut ids = Vec::new();
        let mut records = Vec::new();
        for l in lines(out) {
            let mut words = l.split(' ');
            ids.push(words.next().unwrap().to_string());
            records.extend(words.map(|w| w.parse::<u64>().unwrap()));
        }
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n, "an id repeated");
        records.sort_unstable();
        assert!(
            records == (1..=100_000).collect::<Vec<_>>(),
            "records lost or repeated"
        );
    };
    let mut args = vec!["-I", "-L", "500", "-a", &input];
    args.extend_from_slice(&each);
    let mut all = Vec::new();
    for o in run_tasks(3, &args) {
        assert_clean(&o);
        all.extend_from_slice(&o.stdout);
    }
    check(&all);
    // A results directory: three tasks stopped part way, then two finish.
    let mut args = vec!["--results", res];
    args.extend_from_slice(&["-I", "-L", "500", "-a", &input]);
    args.extend_from_slice(&each);
    stopped_tasks(3, &args, 500);
    for o in run_tasks(2, &args) {
        assert_code(&o, 0);
    }
    let m = merge(Path::new(res));
    assert_clean(&m);
    check(&m.stdout);
}

/// Runs 3 tasks writing to a new results directory and returns the merged output.
fn merged_run(d: &Path, name: &str, args: &[&str], codes: &[i32]) -> Output {
    let res = d.join(format!("res-{name}"));
    let mut all = vec!["--results", res.to_str().unwrap()];
    all.extend_from_slice(args);
    for o in run_tasks(3, &all) {
        assert!(
            codes.contains(&o.status.code().unwrap_or(-1)),
            "{}",
            err(&o)
        );
    }
    merge(&res)
}

/// [`merged_run`] over `data` written to a file: `flags -a FILE command`.
fn merged_file_run(
    d: &Path,
    name: &str,
    data: &[u8],
    flags: &[&str],
    command: &[&str],
    codes: &[i32],
) -> Output {
    let file = d.join(name);
    std::fs::write(&file, data).unwrap();
    let mut args = flags.to_vec();
    args.extend_from_slice(&["-a", file.to_str().unwrap()]);
    args.extend_from_slice(command);
    merged_run(d, name, &args, codes)
}

#[test]
fn huge_binary_and_empty_inputs_merge_exactly() {
    let d = tempfile::tempdir().unwrap();
    // A 3 MiB record among short ones (chunks are 64 KiB: it spans many), NUL-delimited
    // records holding newlines and every byte value.
    let mut data = seq(1, 20_000);
    data.extend(std::iter::repeat_n(b'x', 3 << 20));
    data.push(b'\n');
    data.extend_from_slice(&seq(1, 20_000));
    let m = merged_file_run(d.path(), "huge", &data, &["-k", "-s"], &["cat"], &[0]);
    assert_clean(&m);
    assert!(
        m.stdout == data,
        "the huge line did not come through whole, once"
    );

    let mut bin = Vec::new();
    for i in 0..60_000u32 {
        bin.extend_from_slice(&[(i % 255) as u8 + 1, b'\n', (i >> 8) as u8 | 1]);
        bin.push(0);
    }
    let m = merged_file_run(d.path(), "bin", &bin, &["-0", "-k", "-s"], &["cat"], &[0]);
    assert_clean(&m);
    assert!(m.stdout == bin, "binary records differ");

    // A record too long to be an argument is reported and skipped, once: the directory is
    // complete without it.
    let mut long = seq(1, 3000);
    long.extend(std::iter::repeat_n(b'x', 200_000));
    long.push(b'\n');
    long.extend_from_slice(&seq(3001, 6000));
    let m = merged_file_run(d.path(), "long", &long, &["-k"], &["echo"], &[0, 123]);
    assert_clean(&m);
    let words: Vec<u64> = text(&m.stdout)
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    assert!(
        words == (1..=6000).collect::<Vec<_>>(),
        "records around the long one"
    );

    let m = merged_file_run(d.path(), "empty", b"", &["-k"], &["echo"], &[0]);
    assert_clean(&m);
    assert!(m.stdout.is_empty());
}

#[test]
fn failing_commands_and_a_closed_reader() {
    let d = tempfile::tempdir().unwrap();
    let input = write_seq(d.path(), 3000);
    // Records holding a 7 fail (exit 1): those tasks exit 123, the rest 0; every record is done.
    let script = "case $1 in *7*) exit 1;; esac; echo $1";
    let m = merged_run(
        d.path(),
        "fail",
        &["-k", "-L", "1", "-a", &input, "sh", "-c", script, "x"],
        &[0, 123],
    );
    assert_clean(&m);
    let want: Vec<String> = (1..=3000)
        .map(|i| i.to_string())
        .filter(|s| !s.contains('7'))
        .collect();
    assert_eq!(lines(&m.stdout), want);
    // A command that does not exist: every task says so before any work.
    for o in run_tasks(2, &["-a", &input, "no-such-command-here"]) {
        assert_code(&o, 127);
    }
    // A reader that goes away: merge stops quietly.
    let mut args = vec!["-k", "-a", &input];
    args.extend_from_slice(EACH);
    let res = d.path().join("res-r");
    let m = merged_run(d.path(), "r", &args, &[0]);
    assert_clean(&m);
    let o = bash(&format!(
        "\"$FRUN\" merge {} | head -c 10 >/dev/null; echo ${{PIPESTATUS[0]}}",
        res.display()
    ));
    assert_eq!(out(&o).trim(), "0", "{}", err(&o));
}
