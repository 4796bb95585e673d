//! Crash and corrupt: runs killed at random moments (SIGKILL or SIGTERM), and runs whose output,
//! checkpoint or joblog fill a nearly full filesystem (a small tmpfs, so a write is cut short
//! in the middle), each followed by resumes until one ends. The end must be one uninterrupted
//! run's result — nothing lost, nothing doubled — or a resume that refuses with one clear line.
//! The checkpoint (`--resume`) and the joblog (`frun parallel --joblog FILE --resume`) are
//! both checked. Needs root to mount the tmpfs: skipped, saying why, where it cannot.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::common::*;

/// The tmpfs's size: a few output files and checkpoints of the runs below, no more.
const TMPFS_KIB: u64 = 256;

/// A small tmpfs mounted on a directory of its own, unmounted and removed when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts one; None (having said why) where that is not possible (not root, no tmpfs).
    fn mount(name: &str) -> Option<Tmpfs> {
        let dir = std::env::temp_dir().join(format!("frun-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let size = format!("size={TMPFS_KIB}k,mode=0700");
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &size, "tmpfs"])
            .arg(&dir)
            .stderr(Stdio::piped())
            .output();
        match st {
            Ok(o) if o.status.success() => Some(Tmpfs(dir)),
            other => {
                let why = match other {
                    Ok(o) => text(&o.stderr).trim().to_string(),
                    Err(e) => e.to_string(),
                };
                eprintln!(
                    "SKIPPED {name}: cannot mount a {TMPFS_KIB} KiB tmpfs (needs root): {why}"
                );
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Removes everything in it.
    fn clear(&self) {
        for e in std::fs::read_dir(&self.0).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
    }

    /// Leaves about `free` bytes free, with a filler file (replacing the last one).
    fn fill_to(&self, free: u64) {
        let filler = self.path("filler");
        let _ = std::fs::remove_file(&filler);
        let mut f = File::create(&filler).unwrap();
        let block = [b'x'; 4096];
        while f.write_all(&block).is_ok() {}
        let len = f.metadata().unwrap().len();
        f.set_len(len.saturating_sub(free)).unwrap();
    }

    /// Frees the space the filler holds.
    fn free(&self) {
        let _ = std::fs::remove_file(self.path("filler"));
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// One run: frun started in `dir` with `args` (stdin from `input`, stdout appended to `out`),
/// killed with SIGKILL or SIGTERM after a random delay unless `calm`. Returns the status,
/// stderr and the signal sent.
fn one_run(
    rng: &mut SeedRng,
    dir: &Path,
    args: &[&str],
    input: &Path,
    out: &Path,
    calm: bool,
) -> (ExitStatus, String, Option<&'static str>) {
    let stdout = OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)
        .unwrap();
    let stdin = File::open(input).unwrap();
    let mut child = spawn_frun_in(dir, args, &[], Stdio::from(stdin), Stdio::from(stdout));
    let stderr = drain(child.stderr.take().unwrap());
    let mut sent = None;
    if !calm {
        let delay = Duration::from_millis(rng.below(250));
        let sig = if rng.below(2) == 0 { "KILL" } else { "TERM" };
        let t = Instant::now();
        while t.elapsed() < delay && child.try_wait().unwrap().is_none() {
            thread::sleep(Duration::from_millis(2));
        }
        // Not reaped yet, so the pid is still frun's.
        if child.try_wait().unwrap().is_none() {
            send_signal(child.id(), sig);
            sent = Some(sig);
        }
    }
    let st = wait_limit(&mut child, LIMIT);
    (st, text(&stderr.join().unwrap()), sent)
}

/// A refusal: exit `code` and one line on stderr, starting with `frun: `.
fn is_refusal(st: ExitStatus, e: &str, code: i32) -> bool {
    st.code() == Some(code) && e.starts_with("frun: ") && e.matches('\n').count() == 1
}

/// THE CHECKPOINT UNDER CRASHES AND A FULL DISK: frun (`-k` or buffered) writes its output and
/// its checkpoint on a nearly full tmpfs, is killed at random moments or runs out of space, and
/// is resumed (more space, sometimes) until a run ends with 0; the output is then exactly one
/// run's (`-k`: `seq N` byte for byte; buffered: every number once). A resume may refuse, with
/// one line naming the checkpoint and the line it fails at, but never resume what it cannot.
#[test]
fn checkpoint_survives_kills_and_a_full_disk() {
    let Some(fs) = Tmpfs::mount("crash-checkpoint") else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let input = data.path().join("input");
    const N: u64 = 3000;
    let want = seq_n(N);
    std::fs::write(&input, &want).unwrap();
    let out = fs.path("out");
    let ck = fs.path(".frun_resume");
    let ck_s = ck.to_str().unwrap().to_owned();
    let mut rng = SeedRng::new(0x0C0A_5E32);
    let started = Instant::now();
    let (mut iterations, mut interruptions, mut full, mut refusals) = (0, 0, 0, 0);
    while iterations < 4 || started.elapsed() < Duration::from_secs(20) {
        iterations += 1;
        fs.clear();
        File::create(&out).unwrap();
        let ordered = rng.below(2) == 0;
        let mode: &[&str] = if ordered { &["-k"] } else { &[] };
        // 0 to 40 KiB free: the output (14 KB) and the checkpoint may or may not fit.
        fs.fill_to(rng.below(11) * 4096);
        let mut history = Vec::new();
        let mut resuming = false;
        let mut refused = false;
        for attempt in 0.. {
            let mut args: Vec<&str> = Vec::new();
            if resuming {
                args.extend_from_slice(&["--resume", &ck_s]);
            }
            args.extend_from_slice(mode);
            args.extend_from_slice(&["-l", "1:16", "sh", "-c", r#"printf '%s\n' "$@""#, "sh"]);
            let calm = attempt >= 6;
            if calm {
                fs.free();
            }
            let (st, e, sent) = one_run(&mut rng, &fs.0, &args, &input, &out, calm);
            history.push(format!(
                "{} kill {sent:?} -> {st:?}; output {} bytes; checkpoint {}; stderr {e:?}",
                if resuming { "resume" } else { "fresh" },
                std::fs::metadata(&out).map_or(0, |m| m.len()),
                if ck.exists() { "kept" } else { "absent" },
            ));
            let ctx = || {
                format!(
                    "mode {mode:?}, iteration {iterations}:\n  {}",
                    history.join("\n  ")
                )
            };
            if st.code() == Some(0) {
                assert!(!ck.exists(), "checkpoint kept after exit 0; {}", ctx());
                break;
            }
            // A refusal names the checkpoint and the line it fails at.
            if resuming && is_refusal(st, &e, 2) && e.contains(&ck_s) && e.contains(": line ") {
                refusals += 1;
                refused = true;
                eprintln!("crash-checkpoint: a resume refused: {e}");
                break;
            }
            match sent {
                Some("KILL") if st.signal() == Some(9) => interruptions += 1,
                // (Before frun's handler is in place, SIGTERM ends it as a signal.)
                Some("TERM") if st.code() == Some(143) || st.signal() == Some(15) => {
                    interruptions += 1
                }
                // Out of space: frun stops with an error, saying so.
                _ if st.code() == Some(1) && e.contains("No space left") => full += 1,
                _ => panic!("unexpected status; {}", ctx()),
            }
            // More room, sometimes.
            if rng.below(2) == 0 {
                fs.fill_to((2 + rng.below(30)) * 4096);
            }
            if ck.exists() {
                resuming = true;
                continue;
            }
            // No checkpoint: frun finished as it was stopped, or a fresh run had none yet.
            let got = std::fs::read(&out).unwrap();
            if complete(ordered, &got, &want) {
                break;
            }
            assert!(!resuming, "the checkpoint vanished; {}", ctx());
            File::create(&out).unwrap();
        }
        if !refused {
            let got = std::fs::read(&out).unwrap();
            assert!(
                complete(ordered, &got, &want),
                "output is not one run's ({} bytes); mode {mode:?}, iteration {iterations}:\n  {}",
                got.len(),
                history.join("\n  ")
            );
        }
    }
    eprintln!(
        "crash-checkpoint: {iterations} runs to the end, {interruptions} kills, {full} stops on \
         a full disk, {refusals} refusals, {:?}",
        started.elapsed()
    );
}

/// True when `got` is one run's output of `seq N`: exactly it when `ordered`, otherwise its
/// lines in any order, each once.
fn complete(ordered: bool, got: &[u8], want: &[u8]) -> bool {
    if ordered {
        return got == want;
    }
    got.ends_with(b"\n") && sorted_lines(got) == sorted_lines(want)
}

/// THE JOBLOG UNDER CRASHES AND A FULL DISK: `frun parallel --joblog LOG` on a nearly full
/// tmpfs, killed at random moments or out of space, then `--resume` until a run ends with 0:
/// the log then holds every job exactly once, each in a whole line, and no resume ran a job
/// that the log held when it started. A resume may refuse a damaged log, with one line.
#[test]
fn joblog_survives_kills_and_a_full_disk() {
    let Some(fs) = Tmpfs::mount("crash-joblog") else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let starts = data.path().join("starts");
    let script = data.path().join("job.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$1\" >> '{}'\nsleep 0.00$(($1 % 7))\necho \"$1\"\n",
            starts.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    const JOBS: u64 = 120;
    let numbers: Vec<String> = (1..=JOBS).map(|n| n.to_string()).collect();
    let log = fs.path("log");
    let empty = data.path().join("empty");
    File::create(&empty).unwrap();
    let mut rng = SeedRng::new(0x0C0A_5E33);
    let started = Instant::now();
    let (mut iterations, mut full, mut refusals) = (0, 0, 0);
    while iterations < 4 || started.elapsed() < Duration::from_secs(12) {
        iterations += 1;
        fs.clear();
        let _ = std::fs::remove_file(&starts);
        // The log of 120 jobs takes about 6 KB: 0 to 8 KiB free, then more later.
        fs.fill_to(rng.below(3) * 4096);
        let mut history = Vec::new();
        for attempt in 0.. {
            let logged = logged_jobs(&log);
            let before = started_jobs(&starts);
            let mut args = vec!["parallel", "-j2", "--joblog", log.to_str().unwrap()];
            if attempt > 0 {
                args.push("--resume");
            }
            args.push(script.to_str().unwrap());
            args.push(":::");
            args.extend(numbers.iter().map(String::as_str));
            let calm = attempt >= 6;
            if calm {
                fs.free();
            }
            let (st, e, sent) = one_run(&mut rng, &fs.0, &args, &empty, &fs.path("out"), calm);
            let _ = std::fs::remove_file(fs.path("out"));
            history.push(format!("kill {sent:?} -> {st:?}; stderr {e:?}"));
            let ctx = || format!("iteration {iterations}:\n  {}", history.join("\n  "));
            if attempt > 0 && is_refusal(st, &e, 255) && e.contains(": line ") {
                refusals += 1;
                eprintln!("crash-joblog: a resume refused: {e}");
                break;
            }
            // No resume runs a job the log held when it started.
            let after = started_jobs(&starts);
            let ran: Vec<u64> = after[before.len()..].to_vec();
            if let Some(j) = ran.iter().find(|j| logged.contains(j)) {
                panic!("job {j} was logged, and run again; {}", ctx());
            }
            if st.code() == Some(0) {
                let text = std::fs::read_to_string(&log).unwrap();
                let mut seqs: Vec<u64> = Vec::new();
                for (i, l) in text.lines().enumerate().skip(1) {
                    let f: Vec<&str> = l.split('\t').collect();
                    assert_eq!(f.len(), 9, "line {} is not whole: {l:?}; {}", i + 1, ctx());
                    seqs.push(f[0].parse().unwrap());
                }
                seqs.sort_unstable();
                let want: Vec<u64> = (1..=JOBS).collect();
                assert_eq!(seqs, want, "each job once in the log; {}", ctx());
                break;
            }
            if st.code() != Some(0) && e.contains("No space left") {
                full += 1;
            } else {
                assert!(sent.is_some(), "unexpected status; {}", ctx());
            }
            if rng.below(2) == 0 {
                fs.fill_to((1 + rng.below(4)) * 4096);
            }
        }
    }
    eprintln!(
        "crash-joblog: {iterations} runs to the end, {full} stops on a full disk, {refusals} \
         refusals, {:?}",
        started.elapsed()
    );
}

/// The job numbers a joblog holds in whole lines (empty when there is none).
fn logged_jobs(log: &Path) -> Vec<u64> {
    let text = std::fs::read(log).unwrap_or_default();
    let whole = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    String::from_utf8_lossy(&text[..whole])
        .lines()
        .filter(|l| l.split('\t').count() == 9)
        .filter_map(|l| l.split('\t').next()?.parse().ok())
        .collect()
}

/// The jobs started so far, in the order they started.
fn started_jobs(starts: &Path) -> Vec<u64> {
    std::fs::read_to_string(starts)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.parse().ok())
        .collect()
}
