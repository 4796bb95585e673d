//! Helpers shared by the integration tests: running frun and reference tools, and reading their
//! output.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Path of the binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_frun");

/// How long any single process in a test may run before it is killed and the test fails.
pub const LIMIT: Duration = Duration::from_secs(30);

/// The directory the plain helpers ([`frun`], [`frun_cmd`], [`spawn_frun`], [`bash`]) run in:
/// one per suite (the file that calls them) and test process under cargo's target tmp dir, so
/// the checkpoints that stopped runs keep (`./.frun_resume`, `.frun_resume.N`) never land in the
/// source tree, and a suite never meets another suite's (the suites share one process).
#[track_caller]
pub fn scratch() -> &'static std::path::Path {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static DIRS: OnceLock<Mutex<HashMap<&'static str, &'static std::path::Path>>> = OnceLock::new();
    let file = std::panic::Location::caller().file();
    assert!(
        !file.contains("common"),
        "a helper that calls scratch() must be #[track_caller] ({file})"
    );
    let suite = std::path::Path::new(file)
        .file_stem()
        .and_then(OsStr::to_str)
        .expect("a suite's file name");
    let mut dirs = DIRS.get_or_init(Default::default).lock().unwrap();
    dirs.entry(suite).or_insert_with(|| {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("cwd-{}-{suite}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the scratch directory");
        Box::leak(dir.into_boxed_path())
    })
}

/// An assert_cmd command for frun with a safety timeout, run in [`scratch`].
#[track_caller]
pub fn frun_cmd() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(BIN);
    c.timeout(LIMIT).current_dir(scratch());
    c
}

/// Runs `program args` with `input` on stdin; returns its output (killed after [`LIMIT`]).
pub fn run_prog<S: AsRef<OsStr>>(program: &str, args: &[S], input: &[u8]) -> Output {
    let mut c = assert_cmd::Command::new(program);
    c.args(args).write_stdin(input.to_vec()).timeout(LIMIT);
    c.output().expect("spawn")
}

/// Runs frun with `args` and `input` on stdin, in [`scratch`].
#[track_caller]
pub fn frun<S: AsRef<OsStr>>(args: &[S], input: &[u8]) -> Output {
    let mut c = assert_cmd::Command::new(BIN);
    c.args(args)
        .current_dir(scratch())
        .write_stdin(input.to_vec())
        .timeout(LIMIT);
    c.output().expect("spawn")
}

/// Runs frun with `args` and `input` on stdin, a regular file (not a pipe fed by a thread,
/// as assert_cmd's `pipe_stdin` makes it): all of it is there from the start, so no stall of a
/// feeding thread on a loaded machine makes a worker starve and flush a short batch. For tests
/// that assert exact batch sizes. Killed after [`LIMIT`] (by `timeout`: status 124).
#[track_caller]
pub fn frun_from_file<S: AsRef<OsStr>>(args: &[S], input: &[u8]) -> Output {
    let mut file = tempfile::NamedTempFile::new().expect("a temporary file");
    std::io::Write::write_all(&mut file, input).expect("write the input");
    std::process::Command::new("timeout")
        .arg(LIMIT.as_secs().to_string())
        .arg(BIN)
        .args(args)
        .current_dir(scratch())
        .stdin(std::fs::File::open(file.path()).expect("open the input"))
        .output()
        .expect("spawn")
}

/// Runs `xargs args` with `input` on stdin.
pub fn xargs<S: AsRef<OsStr>>(args: &[S], input: &[u8]) -> Output {
    run_prog("xargs", args, input)
}

/// Runs a bash script; `$FRUN` is the binary under test.
#[track_caller]
pub fn bash(script: &str) -> Output {
    let mut c = assert_cmd::Command::new("bash");
    c.arg("-c")
        .arg(script)
        .env("FRUN", BIN)
        .current_dir(scratch())
        .write_stdin(Vec::new())
        .timeout(LIMIT);
    c.output().expect("spawn bash")
}

/// `seq a b` as produced by the real `seq`.
pub fn seq(a: u64, b: u64) -> Vec<u8> {
    let out = Command::new("seq")
        .arg(a.to_string())
        .arg(b.to_string())
        .output()
        .expect("seq");
    assert!(out.status.success());
    out.stdout
}

/// `seq 1 n`.
pub fn seq_n(n: u64) -> Vec<u8> {
    seq(1, n)
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub fn out(o: &Output) -> String {
    text(&o.stdout)
}

pub fn err(o: &Output) -> String {
    text(&o.stderr)
}

/// Lines of a byte string (without their terminators).
pub fn lines(b: &[u8]) -> Vec<String> {
    text(b).lines().map(str::to_owned).collect()
}

/// Sorted copy of the lines of `b`.
pub fn sorted_lines(b: &[u8]) -> Vec<String> {
    let mut v = lines(b);
    v.sort();
    v
}

/// Panics with a readable message unless frun exited with `code`.
#[track_caller]
pub fn assert_code(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "unexpected exit status {:?}\nstdout: {}\nstderr: {}",
        o.status,
        truncate(&out(o)),
        truncate(&err(o))
    );
}

/// Panics unless frun exited 0 with empty stderr.
#[track_caller]
pub fn assert_clean(o: &Output) {
    assert_code(o, 0);
    assert_eq!(err(o), "", "stderr should be empty on a normal run");
}

fn truncate(s: &str) -> String {
    if s.len() > 2000 {
        let mut end = 2000;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}... ({} bytes)", &s[..end], s.len())
    } else {
        s.to_owned()
    }
}

/// Asserts a usage error: exit 2, nothing on stdout, exactly one line on stderr starting with
/// `frun: ` that mentions one of `names`.
#[track_caller]
pub fn assert_usage_error(o: &Output, names: &[&str]) {
    assert_code(o, 2);
    assert_eq!(out(o), "", "usage error must print nothing on stdout");
    let e = err(o);
    assert!(
        e.ends_with('\n') && e.matches('\n').count() == 1,
        "usage error must be exactly one line on stderr, got {e:?}"
    );
    assert!(
        e.starts_with("frun: "),
        "stderr must start with 'frun: ': {e:?}"
    );
    if !names.is_empty() {
        assert!(
            names.iter().any(|n| e.contains(n)),
            "stderr must name the flag (one of {names:?}): {e:?}"
        );
    }
}

/// Joins records with a terminator after each.
pub fn join_terminated(recs: &[Vec<u8>], term: u8) -> Vec<u8> {
    let mut v = Vec::new();
    for r in recs {
        v.extend_from_slice(r);
        v.push(term);
    }
    v
}

/// Output of a `sh -c 'echo $#' sh` run parsed as per-batch record counts.
pub fn counts(b: &[u8]) -> Vec<usize> {
    lines(b)
        .iter()
        .map(|l| {
            l.trim()
                .parse()
                .unwrap_or_else(|_| panic!("not a count: {l:?}"))
        })
        .collect()
}

/// A spawned frun with piped stdout/stderr and stdin from `stdin`.
#[track_caller]
pub fn spawn_frun<S: AsRef<OsStr>>(args: &[S], stdin: Stdio) -> Child {
    Command::new(BIN)
        .args(args)
        .current_dir(scratch())
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn frun")
}

/// Spawns `bash -c script` (with `$FRUN` set) with piped stdout and stderr.
#[track_caller]
pub fn spawn_bash(script: &str) -> Child {
    Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("FRUN", BIN)
        .current_dir(scratch())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn bash")
}

/// Reads a child's stdout, recording when each line arrived (relative to `start`), until EOF.
/// If EOF does not come within `limit`, kills the child and panics with what was read so far.
pub fn timed_lines(child: &mut Child, start: Instant, limit: Duration) -> Vec<(String, Duration)> {
    let mut stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        let mut pending = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = match stdout.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let now = start.elapsed();
            pending.extend_from_slice(&buf[..n]);
            while let Some(pos) = pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = pending.drain(..=pos).collect();
                let _ = tx.send(Some((text(&line[..line.len() - 1]), now)));
            }
        }
        if !pending.is_empty() {
            let _ = tx.send(Some((text(&pending), start.elapsed())));
        }
        let _ = tx.send(None);
    });
    let mut res = Vec::new();
    loop {
        let left = limit.saturating_sub(start.elapsed());
        match rx.recv_timeout(left) {
            Ok(Some(l)) => res.push(l),
            Ok(None) => return res,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("output did not end within {limit:?}; got so far: {res:?}");
            }
        }
    }
}

/// Spawns frun and feeds its stdin from a thread: each chunk is written after its delay.
#[track_caller]
pub fn spawn_frun_fed(args: &[&str], chunks: Vec<(Duration, Vec<u8>)>) -> Child {
    let mut child = spawn_frun(args, Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    thread::spawn(move || {
        for (delay, data) in chunks {
            thread::sleep(delay);
            if stdin.write_all(&data).is_err() {
                return;
            }
            let _ = stdin.flush();
        }
    });
    child
}

/// Waits for a child at most `limit`; kills it and panics if it takes longer.
pub fn wait_limit(child: &mut Child, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            return st;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("process did not finish within {limit:?}");
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Reads all of a pipe in a background thread.
pub fn drain<R: Read + Send + 'static>(mut r: R) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        v
    })
}

/// Writes `data` to a pipe in a background thread, then closes it.
pub fn feed<W: Write + Send + 'static>(mut w: W, data: Vec<u8>) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let _ = w.write_all(&data);
    })
}

/// Pids of processes whose full command line contains `pattern` (pgrep -f).
pub fn pgrep(pattern: &str) -> Vec<u32> {
    let o = Command::new("pgrep")
        .arg("-f")
        .arg(pattern)
        .output()
        .expect("pgrep");
    text(&o.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .filter(|&p| p != std::process::id())
        .collect()
}

/// Kills the given pids (cleanup after a failed test).
pub fn kill_pids(pids: &[u32]) {
    for p in pids {
        let _ = Command::new("kill")
            .arg("-KILL")
            .arg(p.to_string())
            .status();
    }
}

/// Sends a signal (by name, e.g. "TERM") to a pid.
pub fn send_signal(pid: u32, sig: &str) {
    let st = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .expect("kill");
    assert!(st.success(), "kill -{sig} {pid} failed");
}

/// Shell-quotes a word the way the contract describes for `-N`: bare if non-empty and made only
/// of `[A-Za-z0-9@%_+=:,./-]`, otherwise in single quotes with `'` written as `'\''`.
pub fn quote_word(w: &[u8]) -> Vec<u8> {
    let safe = |b: u8| b.is_ascii_alphanumeric() || b"@%_+=:,./-".contains(&b);
    if !w.is_empty() && w.iter().all(|&b| safe(b)) {
        return w.to_vec();
    }
    let mut v = vec![b'\''];
    for &b in w {
        if b == b'\'' {
            v.extend_from_slice(b"'\\''");
        } else {
            v.push(b);
        }
    }
    v.push(b'\'');
    v
}

/// A small deterministic pseudo-random generator (xorshift64*), for seeded inputs.
pub struct SeedRng(u64);

impl SeedRng {
    pub fn new(seed: u64) -> Self {
        SeedRng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Tokens that tend to break naive argument handling.
pub const NASTY: &[&[u8]] = &[
    b"",
    b" ",
    b"  ",
    b"a",
    b"word",
    b"'",
    b"\"",
    b"\\",
    b"\\n",
    b"*",
    b"?",
    b"[ab]",
    b"$HOME",
    b"${x}",
    b"`id`",
    b"$(true)",
    b"\t",
    b";",
    b"&",
    b"|",
    b"#",
    b"~",
    b"%s",
    b"%%",
    b"-n",
    b"--",
    b"{}",
    b"\xc3\xa9",
    b"\xe2\x82\xac",
    b"\xf0\x9f\x98\x80",
    b"\xff",
    b"\xfe\x80",
    b"\xc3",
    b"\x01",
    b"\x1b[0m",
    b"\r",
];

/// A random record made of [`NASTY`] tokens (never containing `forbidden`).
pub fn nasty_record(rng: &mut SeedRng, forbidden: u8) -> Vec<u8> {
    let n = rng.below(5);
    let mut v = Vec::new();
    for _ in 0..n {
        v.extend_from_slice(NASTY[rng.below(NASTY.len() as u64) as usize]);
    }
    v.retain(|&b| b != forbidden && b != 0);
    v
}

/// Environment variables that change how frun retries and reacts to preemption signals. Tests
/// that depend on them start frun without them (then set what they need), so the caller's
/// environment cannot change a result.
pub const RETRY_ENV: &[&str] = &[
    "FRUN_RETRY_LIMIT",
    "FORKRUN_RETRY_LIMIT",
    "FRUN_PREEMPT",
    "FORKRUN_PREEMPT_MODE",
    "SLURM_JOB_ID",
];

/// A std `Command` for frun with its current directory set to `dir`, [`RETRY_ENV`] removed and
/// then `envs` set.
pub fn frun_command_in<S: AsRef<OsStr>>(
    dir: &std::path::Path,
    args: &[S],
    envs: &[(&str, &str)],
) -> Command {
    let mut c = Command::new(BIN);
    c.args(args).current_dir(dir);
    for v in RETRY_ENV {
        c.env_remove(v);
    }
    c.envs(envs.iter().copied());
    c
}

/// Runs frun in `dir` (see [`frun_command_in`]) with `input` on stdin; killed after [`LIMIT`].
pub fn frun_in<S: AsRef<OsStr>>(
    dir: &std::path::Path,
    args: &[S],
    envs: &[(&str, &str)],
    input: &[u8],
) -> Output {
    let mut c = assert_cmd::Command::from_std(frun_command_in(dir, args, envs));
    c.write_stdin(input.to_vec()).timeout(LIMIT);
    c.output().expect("spawn frun")
}

/// Spawns frun in `dir` (see [`frun_command_in`]) with the given stdin and stdout; stderr piped.
pub fn spawn_frun_in<S: AsRef<OsStr>>(
    dir: &std::path::Path,
    args: &[S],
    envs: &[(&str, &str)],
    stdin: Stdio,
    stdout: Stdio,
) -> Child {
    frun_command_in(dir, args, envs)
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn frun")
}

/// Number of lines in a file (0 if it does not exist).
pub fn file_lines(path: &std::path::Path) -> usize {
    std::fs::read(path)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count())
        .unwrap_or(0)
}

/// Polls `cond` every 20 ms until it holds; panics with `what` after `limit`.
pub fn wait_until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        if start.elapsed() > limit {
            panic!("timed out after {limit:?} waiting for {what}");
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Exact bytes under `-k`; otherwise the same lines, each as often as in `want`.
#[track_caller]
pub fn assert_output(mode: &[&str], got: &[u8], want: &[u8], ctx: &str) {
    if mode.contains(&"-k") {
        assert!(
            got == want,
            "{ctx} {mode:?}: output differs from the expected bytes\ngot: {}",
            text(got)
        );
    } else {
        assert_eq!(
            sorted_lines(got),
            sorted_lines(want),
            "{ctx} {mode:?}: output lines differ"
        );
    }
}

/// The value of `k` among `key=value` fields (of a `--stats` line).
pub fn field<'a>(f: &'a [(String, String)], k: &str) -> &'a str {
    &f.iter()
        .find(|(key, _)| key == k)
        .unwrap_or_else(|| panic!("no {k} in {f:?}"))
        .1
}

/// Runs a bash script with `$FRUN` set and the working directory `dir`.
pub fn bash_in(dir: &std::path::Path, script: &str) -> Output {
    let mut c = assert_cmd::Command::new("bash");
    c.arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("FRUN", BIN)
        .write_stdin(Vec::new())
        .timeout(LIMIT);
    c.output().expect("spawn bash")
}

/// Exit `code`, nothing on stdout, one `frun: ` line on stderr containing `what`.
#[track_caller]
pub fn assert_one_line_error(o: &Output, code: i32, what: &str) {
    assert_code(o, code);
    assert_eq!(out(o), "", "nothing ran");
    let e = err(o);
    assert!(
        e.starts_with("frun: ") && e.matches('\n').count() == 1,
        "{e:?}"
    );
    assert!(e.contains(what), "{e:?} should say {what:?}");
}

/// A pipe as two files: (reader, writer), both close-on-exec.
pub fn pipe_files() -> (std::fs::File, std::fs::File) {
    let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).expect("pipe");
    (std::fs::File::from(r), std::fs::File::from(w))
}

/// Asserts how the frun binary ended after a stop by a signal: dead of that signal for SIGINT,
/// SIGTERM and SIGHUP (it re-raises them once it has cleaned up, so a shell loop around it
/// stops and a parent's waitpid sees WIFSIGNALED); exit status 128+N for the others (SIGQUIT,
/// the preemption signals).
pub fn assert_stopped_by(st: &ExitStatus, signal: i32, context: &str) {
    use std::os::unix::process::ExitStatusExt;
    if [libc::SIGINT, libc::SIGTERM, libc::SIGHUP].contains(&signal) {
        assert_eq!(
            (st.signal(), st.code()),
            (Some(signal), None),
            "{context}: {st:?}, expected death by signal {signal}"
        );
    } else {
        assert_eq!(st.code(), Some(128 + signal), "{context}: {st:?}");
    }
}
