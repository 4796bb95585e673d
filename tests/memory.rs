//! Bounded memory on long streams: 4 GiB of lines from a pipe through `-s wc -l`, `/bin/true`,
//! `-k -s cat`, and `-k -s cat` behind a deliberately slow first batch. Each run's peak memory —
//! frun's peak RSS (which includes the mapped spool) plus the peak of the pages its memory files
//! hold (memfds: spool and captured output) plus its peak page tables (`VmPTE`: 4 GiB of
//! spool would need 8 MiB of them if the consumed part kept its) — must stay within 256 MiB, and
//! the output
//! must be complete. `frun parallel --lb` with a job printing one line of 1 GiB is held to the
//! same bound where a quarter of the memory available (`$FRUN_MEMINFO`) is less than that, and
//! so is one of 1 GiB of stderr.
//! One test, so the cases run one after another (each alone on the machine's memory).

// Test binaries export nothing: `pub` in their modules only shares helpers between them.
#![allow(unreachable_pub)]

mod common;

use common::*;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::Duration;

const GIB4: u64 = 4 << 30;
const BOUND: u64 = 256 << 20;

/// The shared memory frun's own memory files hold (`memfd`: the spool, captured output), in
/// KiB: the allocated blocks of each distinct memfd among `pid`'s descriptors. Not the machine's
/// `Shmem`: parts of the suite running beside this one fill `/dev/shm` (GNU Parallel's suite puts
/// 100 MB files there), which would be counted as frun's.
fn memfd_kib(pid: u32) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return 0;
    };
    let mut seen = std::collections::HashSet::new();
    let mut blocks = 0;
    for fd in fds.flatten() {
        // A descriptor closed since the listing is skipped.
        let Ok(target) = std::fs::read_link(fd.path()) else {
            continue;
        };
        if !target.to_string_lossy().starts_with("/memfd:") {
            continue;
        }
        if let Ok(m) = std::fs::metadata(fd.path())
            && seen.insert((m.dev(), m.ino()))
        {
            blocks += m.blocks();
        }
    }
    blocks / 2
}

/// The page tables of process `pid` (`VmPTE`), in KiB; 0 once it is gone.
fn page_tables_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("VmPTE:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

struct Run {
    stdout_bytes: u64,
    stdout_head: Vec<u8>,
    stderr: String,
    code: i32,
    peak: u64,
}

/// Runs `frun args` with stdin from `bash -c generator`; returns output size and peak memory.
fn run(generator: &str, args: &[&str]) -> Run {
    run_env(generator, &[], args)
}

/// [`run`], with `env` added to frun's environment.
fn run_env(generator: &str, env: &[(&str, &std::ffi::OsStr)], args: &[&str]) -> Run {
    run_with(generator, env, false, args)
}

/// [`run_env`]; with `merged`, frun's stderr goes where its stdout goes (counted, not kept):
/// frun is started by `bash -c 'exec … 2>&1'`, so it is still the process waited for.
/// frun is reaped with `wait4` (for its rusage), not `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run_with(generator: &str, env: &[(&str, &std::ffi::OsStr)], merged: bool, args: &[&str]) -> Run {
    let mut gen_child = Command::new("bash")
        .arg("-c")
        .arg(generator)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut command = if merged {
        let mut c = Command::new("bash");
        c.args(["-c", r#"exec "$0" "$@" 2>&1"#, BIN]);
        c
    } else {
        Command::new(BIN)
    };
    let mut child = command
        .args(args)
        .envs(env.iter().copied())
        .stdin(gen_child.stdout.take().unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let peak_memfd = Arc::new(AtomicU64::new(0));
    let peak_pte = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, pte, done) = (peak_memfd.clone(), peak_pte.clone(), done.clone());
        let pid = child.id();
        thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(memfd_kib(pid), Ordering::Relaxed);
                pte.fetch_max(page_tables_kib(pid), Ordering::Relaxed);
                thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let mut out = child.stdout.take().unwrap();
    let reader = thread::spawn(move || {
        let mut head = Vec::new();
        let mut total = 0u64;
        let mut buf = vec![0u8; 1 << 20];
        loop {
            match out.read(&mut buf) {
                Ok(0) | Err(_) => return (total, head),
                Ok(n) => {
                    if head.len() < 65536 {
                        head.extend_from_slice(&buf[..n.min(65536)]);
                    }
                    total += n as u64;
                }
            }
        }
    });
    let stderr = drain(child.stderr.take().unwrap());
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: zeroed rusage is valid storage for wait4 to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child with valid out-pointers; std does not reap it elsewhere.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid);
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let _ = gen_child.wait();
    let (stdout_bytes, stdout_head) = reader.join().unwrap();
    let memfd_peak = peak_memfd.load(Ordering::Relaxed) * 1024;
    let page_tables = peak_pte.load(Ordering::Relaxed) * 1024;
    eprintln!(
        "frun {args:?}: peak RSS {} MiB + memory files {} MiB + page tables {} KiB",
        ru.ru_maxrss >> 10,
        memfd_peak >> 20,
        page_tables >> 10
    );
    Run {
        stdout_bytes,
        stdout_head,
        stderr: text(&stderr.join().unwrap()),
        code: if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        },
        peak: ru.ru_maxrss as u64 * 1024 + memfd_peak + page_tables,
    }
}

#[test]
fn four_gib_streams_run_in_bounded_memory() {
    let short_lines = format!("yes abcdefghij | head -c {GIB4}");
    let long_lines = format!("yes \"$(printf 'x%.0s' $(seq 1000))\" | head -c {GIB4}");

    // -s wc -l: the counts add up to the number of newlines.
    let r = run(&short_lines, &["-s", "wc", "-l"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let counted: u64 = text(&r.stdout_head)
        .lines()
        .map(|l| l.trim().parse::<u64>().unwrap())
        .sum();
    assert!(r.stdout_bytes < 65536, "one small count per batch");
    assert_eq!(counted, GIB4 / 11);
    assert!(r.peak <= BOUND, "-s wc -l peaked at {} MiB", r.peak >> 20);

    // /bin/true over argv batches: every record was passed (the stats count them).
    let r = run(&long_lines, &["-v", "true"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let records = GIB4 / 1001 + u64::from(!GIB4.is_multiple_of(1001));
    assert!(
        r.stderr.contains(&format!(" records={records} ")),
        "{}",
        r.stderr
    );
    assert!(r.peak <= BOUND, "/bin/true peaked at {} MiB", r.peak >> 20);

    // Ordered output of everything: byte count exact.
    let r = run(&short_lines, &["-k", "-s", "cat"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout_bytes, GIB4);
    assert!(r.stdout_head.starts_with(b"abcdefghij\nabcdefghij\n"));
    assert!(r.peak <= BOUND, "-k -s cat peaked at {} MiB", r.peak >> 20);

    // The same with a first batch that takes 3 s: everything after it is held back, bounded.
    let r = run(
        &short_lines,
        &[
            "-k",
            "-s",
            "-I",
            "sh",
            "-c",
            "case $1 in 0.0.0) sleep 3;; esac; exec cat",
            "sh",
            "{ID}",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout_bytes, GIB4);
    assert!(
        r.peak <= BOUND,
        "slow first batch: peaked at {} MiB",
        r.peak >> 20
    );

    // --line-buffer, a job printing one line of 1 GiB (with --tag, beside a job of short
    // lines) where 256 MiB are available (`FRUN_MEMINFO`, a container's view): a quarter of
    // that may be held, so past it the line is passed on as it comes, not held whole; each
    // job's lines stay whole.
    let meminfo = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(meminfo.path(), "MemAvailable: 262144 kB\n").unwrap();
    let r = run_env(
        "true",
        &[("FRUN_MEMINFO", meminfo.path().as_os_str())],
        &[
            "parallel",
            "--lb",
            "--tag",
            "sh -c {}",
            ":::",
            "head -c 1073741824 /dev/zero | tr '\\0' x; echo",
            "seq 3",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let tag_bytes = "head -c 1073741824 /dev/zero | tr '\\0' x; echo\t".len() as u64;
    let short = b"seq 3\t1\nseq 3\t2\nseq 3\t3\n".len() as u64;
    assert_eq!(r.stdout_bytes, (1 << 30) + 1 + tag_bytes + short);
    assert!(
        r.peak <= BOUND,
        "--lb, a 1 GiB line: peaked at {} MiB",
        r.peak >> 20
    );

    // --line-buffer, a job writing 1 GiB to stderr without a newline: frun parallel's relay
    // holds at most 1 MiB of it and passes the rest in pieces, each after the job's tag.
    let r = run_with(
        "true",
        &[],
        true,
        &[
            "parallel",
            "--lb",
            "--tagstring",
            "T",
            "head -c 1073741824 /dev/zero | tr '\\0' x >&2; true",
            ":::",
            "1",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout_head.starts_with(b"T\txxxx"),
        "{:?}",
        &r.stdout_head[..16]
    );
    let pieces = (r.stdout_bytes - (1 << 30)) / 2;
    assert!(
        (1..=1024).contains(&pieces) && r.stdout_bytes == (1 << 30) + 2 * pieces,
        "{} bytes",
        r.stdout_bytes
    );
    assert!(
        r.peak <= BOUND,
        "--lb, 1 GiB of stderr in one line: peaked at {} MiB",
        r.peak >> 20
    );
}
