//! What frun refuses to use as a checkpoint journal, and what a run may delete.
//!
//! `--checkpoint-file FILE` names a file frun creates: an existing FILE (the input, the output
//! file, a device node, a FIFO, another run's checkpoint, anything) is refused at start with
//! exit 2 and left as it was. The default `./.frun_resume` is created without following a
//! symbolic link: when the name is taken (a planted link, a stopped run's checkpoint) the run
//! takes `./.frun_resume.1` and leaves the other alone. New journals are mode 0600; `--resume`
//! takes only a regular file (not a symbolic link, FIFO or device) that this user owns and
//! nobody else can write, no larger than a journal of the input could be. A batch whose
//! command failed is not done: `--resume` after `--halt` runs it again, so the concatenated
//! outputs equal one clean run. Results directories refuse planted symbolic links too. Every
//! frun runs in its own temporary directory.

use crate::common::*;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// A temporary directory with an input file `in` holding `seq n`; frun runs there.
struct Dir {
    dir: tempfile::TempDir,
    n: u64,
}

impl Dir {
    fn new(n: u64) -> Dir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("in"), seq_n(n)).unwrap();
        Dir { dir, n }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn input(&self) -> PathBuf {
        self.path("in")
    }

    /// Runs frun here with `args`, stdin from /dev/null, stdout appended to `out` (created).
    fn run_to(&self, args: &[&str], envs: &[(&str, &str)], out: &str) -> (ExitStatus, String) {
        let stdout = append(&self.path(out));
        let mut child = spawn_frun_in(self.dir.path(), args, envs, Stdio::null(), stdout.into());
        let stderr = drain(child.stderr.take().unwrap());
        let st = wait_limit(&mut child, LIMIT);
        (st, text(&stderr.join().unwrap()))
    }

    /// Starts frun here with stdout appended to `out`; stderr is piped.
    fn spawn_to(&self, args: &[&str], envs: &[(&str, &str)], out: &str) -> Child {
        let stdout = append(&self.path(out));
        spawn_frun_in(self.dir.path(), args, envs, Stdio::null(), stdout.into())
    }
}

fn append(path: &Path) -> File {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
}

/// Asserts a refusal at start: exit 2, one stderr line starting with `frun: ` that contains
/// `what`.
#[track_caller]
fn assert_refused(st: ExitStatus, e: &str, what: &str, ctx: &str) {
    assert_eq!(st.code(), Some(2), "{ctx}: status {st:?}, stderr {e:?}");
    assert!(
        e.starts_with("frun: ") && e.ends_with('\n') && e.matches('\n').count() == 1,
        "{ctx}: one stderr line starting with 'frun: ' expected: {e:?}"
    );
    assert!(e.contains(what), "{ctx}: stderr should say {what:?}: {e:?}");
}

#[track_caller]
fn assert_refused_output(o: &Output, what: &str, ctx: &str) {
    assert_refused(o.status, &err(o), what, ctx);
    assert_eq!(out(o), "", "{ctx}: nothing may run");
}

/// A slow command: prints its record, sleeps 20 ms.
const SLOW: &str = r#"echo "$1"; sleep 0.02"#;

/// Resumes [`stopped_run`]'s run from `.frun_resume`.
const RESUME_SLOW: &[&str] = &[
    "--resume",
    ".frun_resume",
    "-l",
    "1",
    "-a",
    "in",
    "sh",
    "-c",
    SLOW,
    "sh",
];

/// Stops a slow run (buffered, `-l 1`) over the file `input` with SIGTERM once `lines` lines
/// are in `out`; checks its status (143) and returns its stderr.
fn stop_slow_run(d: &Dir, input: &str, out: &str, lines: usize) -> String {
    let args = ["-l", "1", "-a", input, "sh", "-c", SLOW, "sh"];
    let mut child = d.spawn_to(&args, &[], out);
    let stderr = drain(child.stderr.take().unwrap());
    let out = d.path(out);
    wait_until("output of the run to stop", Duration::from_secs(20), || {
        file_lines(&out) >= lines
    });
    send_signal(child.id(), "TERM");
    let st = wait_limit(&mut child, LIMIT);
    let e = text(&stderr.join().unwrap());
    assert_stopped_by(&st, libc::SIGTERM, &format!("stopped run, stderr {e}"));
    e
}

/// Stops a slow run of `seq n` (see [`stop_slow_run`]), leaving its checkpoint in
/// `.frun_resume`; returns its stderr.
fn stopped_run(d: &Dir, lines: usize) -> String {
    let e = stop_slow_run(d, "in", "out1", lines);
    assert!(
        e.contains("--resume .frun_resume "),
        "the stop message names .frun_resume: {e}"
    );
    e
}

/// Item 1: `--checkpoint-file` naming the input, the output file, a device node, a FIFO, a
/// symbolic link, another run's checkpoint or any other existing file is refused at start
/// (exit 2, one line, no command run), and the file is left exactly as it was.
#[test]
fn an_existing_checkpoint_file_is_refused_and_left_alone() {
    let d = Dir::new(100);
    let want_in = seq_n(100);

    // The input (also named differently: identity, not name).
    for name in ["in", "./in"] {
        let o = frun_in(
            d.dir.path(),
            &["--checkpoint-file", name, "-a", "in", "echo"],
            &[],
            b"",
        );
        assert_refused_output(&o, "input", name);
        assert_eq!(
            std::fs::read(d.input()).unwrap(),
            want_in,
            "{name}: input changed"
        );
    }
    // The input as stdin.
    let stdin = File::open(d.input()).unwrap();
    let child = spawn_frun_in(
        d.dir.path(),
        &["--checkpoint-file", "in", "echo"],
        &[],
        stdin.into(),
        Stdio::piped(),
    );
    let o = child.wait_with_output().unwrap();
    assert_refused_output(&o, "input", "input on stdin");
    assert_eq!(
        std::fs::read(d.input()).unwrap(),
        want_in,
        "stdin input changed"
    );

    // The file stdout goes to (appended to, with earlier content).
    std::fs::write(d.path("out"), b"earlier\n").unwrap();
    let (st, e) = d.run_to(
        &["--checkpoint-file", "out", "-a", "in", "echo"],
        &[],
        "out",
    );
    assert_refused(st, &e, "standard output", "stdout's file");
    assert_eq!(std::fs::read(d.path("out")).unwrap(), b"earlier\n");

    // A device node (root can make one), a FIFO, a symbolic link, a directory.
    let dev = d.path("null-device");
    let made = std::process::Command::new("mknod")
        .args([dev.to_str().unwrap(), "c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    let fifo = d.path("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    std::fs::write(d.path("target"), b"keep me\n").unwrap();
    std::os::unix::fs::symlink(d.path("target"), d.path("link")).unwrap();
    std::fs::create_dir(d.path("subdir")).unwrap();
    let mut specials = vec![
        ("fifo", "regular file"),
        ("link", "symbolic link"),
        ("subdir", "regular file"),
    ];
    if made {
        specials.push(("null-device", "regular file"));
    }
    for (name, what) in specials {
        let o = frun_in(
            d.dir.path(),
            &["--checkpoint-file", name, "-a", "in", "echo"],
            &[],
            b"",
        );
        assert_refused_output(&o, what, name);
        assert!(
            std::fs::symlink_metadata(d.path(name)).is_ok(),
            "{name} was removed"
        );
    }
    assert_eq!(std::fs::read(d.path("target")).unwrap(), b"keep me\n");
    if made {
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::metadata(&dev)
                .unwrap()
                .file_type()
                .is_char_device()
        );
    }

    // Any other existing file.
    std::fs::write(d.path("notes"), b"my notes\n").unwrap();
    let o = frun_in(
        d.dir.path(),
        &["--checkpoint-file", "notes", "-a", "in", "echo"],
        &[],
        b"",
    );
    assert_refused_output(&o, "not a frun checkpoint", "a plain file");
    assert_eq!(std::fs::read(d.path("notes")).unwrap(), b"my notes\n");

    // Another run's (stopped) checkpoint: refused, and the message says how to resume it.
    stopped_run(&d, 20);
    std::fs::rename(d.path(".frun_resume"), d.path("ck")).unwrap();
    let before = std::fs::read(d.path("ck")).unwrap();
    let o = frun_in(
        d.dir.path(),
        &["--checkpoint-file", "ck", "-a", "in", "echo"],
        &[],
        b"",
    );
    assert_refused_output(&o, "--resume ck", "a stopped run's checkpoint");
    assert_eq!(std::fs::read(d.path("ck")).unwrap(), before);
}

/// Item 1: a new `--checkpoint-file FILE` is created with mode 0600 (whatever the umask
/// allows more), exists while the run goes, and is removed at its end.
#[test]
fn a_new_checkpoint_file_is_private_and_removed_at_the_end() {
    let d = Dir::new(60);
    let args = [
        "--checkpoint-file",
        "ck",
        "-l",
        "1",
        "-a",
        "in",
        "sh",
        "-c",
        SLOW,
        "sh",
    ];
    let script = format!(
        "cd '{}' && umask 000 && exec \"$FRUN\" {} > out",
        d.dir.path().display(),
        args.map(|a| format!("'{a}'")).join(" ")
    );
    let mut child = spawn_bash(&script);
    let ck = d.path("ck");
    wait_until("the checkpoint file", Duration::from_secs(10), || {
        ck.exists()
    });
    let mode = std::fs::metadata(&ck).unwrap().permissions().mode() & 0o7777;
    wait_until(
        "the checkpoint's first line",
        Duration::from_secs(10),
        || std::fs::read(&ck).is_ok_and(|t| t.contains(&b'\n')),
    );
    let first = lines(&std::fs::read(&ck).unwrap())[0].clone();
    assert_eq!(first, "frun-checkpoint 1");
    let st = wait_limit(&mut child, LIMIT);
    assert_eq!(st.code(), Some(0));
    assert_eq!(mode, 0o600, "journal mode {mode:o}");
    assert!(!ck.exists(), "journal kept after success");
    assert_eq!(std::fs::read(d.path("out")).unwrap().len(), seq_n(60).len());
}

/// Item 2: a symbolic link planted as `./.frun_resume` is never followed: its target stays as
/// it was, the link is not removed, and the run keeps its journal under another name.
#[test]
fn a_planted_symlink_journal_is_not_followed() {
    let d = Dir::new(40);
    std::fs::write(d.path("victim"), b"precious\n").unwrap();
    std::os::unix::fs::symlink(d.path("victim"), d.path(".frun_resume")).unwrap();
    // Long enough for the journal to be written (it is synced every 200 ms).
    let (st, e) = d.run_to(&["-l", "1", "-a", "in", "sh", "-c", SLOW, "sh"], &[], "out");
    assert_eq!(st.code(), Some(0), "{e}");
    assert_eq!(
        sorted_lines(&std::fs::read(d.path("out")).unwrap()),
        sorted_lines(&seq_n(40))
    );
    assert_eq!(std::fs::read(d.path("victim")).unwrap(), b"precious\n");
    assert!(
        std::fs::symlink_metadata(d.path(".frun_resume"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was removed"
    );
    // Stopped, the run names where its checkpoint went, which is private.
    let e = stop_slow_run(&d, "in", "out2", 10);
    assert!(e.contains("--resume .frun_resume.1 "), "{e}");
    let m = std::fs::symlink_metadata(d.path(".frun_resume.1")).unwrap();
    assert!(m.file_type().is_file());
    assert_eq!(m.permissions().mode() & 0o7777, 0o600);
    assert_eq!(std::fs::read(d.path("victim")).unwrap(), b"precious\n");
}

/// Item 2: `--resume` refuses a checkpoint others can write (mode 0666) or that another user
/// owns (chown'ed to uid 65534): exit 2, no command run, the file unchanged. Made private
/// again, the same file resumes.
#[test]
fn resume_refuses_a_checkpoint_others_can_write_or_own() {
    let d = Dir::new(100);
    stopped_run(&d, 20);
    let ck = d.path(".frun_resume");
    let before = std::fs::read(&ck).unwrap();
    let args = RESUME_SLOW;

    std::fs::set_permissions(&ck, std::fs::Permissions::from_mode(0o666)).unwrap();
    let (st, e) = d.run_to(args, &[], "out1");
    assert_refused(st, &e, "other users", "mode 0666");
    std::fs::set_permissions(&ck, std::fs::Permissions::from_mode(0o620)).unwrap();
    let (st, e) = d.run_to(args, &[], "out1");
    assert_refused(st, &e, "other users", "mode 0620");
    std::fs::set_permissions(&ck, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::chown(&ck, Some(65534), None).unwrap();
    let (st, e) = d.run_to(args, &[], "out1");
    assert_refused(st, &e, "another user", "owned by uid 65534");
    assert_eq!(
        std::fs::read(&ck).unwrap(),
        before,
        "the checkpoint changed"
    );
    assert_eq!(std::fs::metadata(&ck).unwrap().uid(), 65534);

    std::os::unix::fs::chown(&ck, Some(my_uid()), None).unwrap();
    let (st, e) = d.run_to(args, &[], "out1");
    assert_eq!(st.code(), Some(0), "{e}");
    assert_eq!(
        sorted_lines(&std::fs::read(d.path("out1")).unwrap()),
        sorted_lines(&seq_n(d.n))
    );
    assert!(!ck.exists());
}

fn my_uid() -> u32 {
    std::fs::metadata("/proc/self").map_or(0, |m| m.uid())
}

/// Items 1 and 2 for results directories: a planted symbolic link named like a task's journal
/// is refused (exit 2) and its target is left as it was.
#[test]
fn a_results_directory_refuses_a_planted_symlink() {
    let d = Dir::new(50);
    std::fs::create_dir(d.path("rd")).unwrap();
    std::fs::write(d.path("victim"), b"precious\n").unwrap();
    std::os::unix::fs::symlink(d.path("victim"), d.path("rd/task-0-of-1.0.journal")).unwrap();
    let (st, e) = d.run_to(&["--results", "rd", "-a", "in", "echo"], &[], "out");
    assert_refused(st, &e, "symbolic link", "planted link in DIR");
    assert_eq!(std::fs::read(d.path("victim")).unwrap(), b"precious\n");

    // A FIFO there is refused without blocking.
    std::fs::remove_file(d.path("rd/task-0-of-1.0.journal")).unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(d.path("rd/task-0-of-1.0.journal"))
            .status()
            .unwrap()
            .success()
    );
    let start = Instant::now();
    let (st, e) = d.run_to(&["--results", "rd", "-a", "in", "echo"], &[], "out");
    assert_refused(st, &e, "regular file", "FIFO in DIR");
    assert!(start.elapsed() < Duration::from_secs(10));

    // A clean directory works, and its journal is private.
    std::fs::remove_file(d.path("rd/task-0-of-1.0.journal")).unwrap();
    let (st, e) = d.run_to(&["--results", "rd", "-a", "in", "echo"], &[], "out");
    assert_eq!(st.code(), Some(0), "{e}");
    let journal = std::fs::read_dir(d.path("rd"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".journal"))
        .expect("a journal");
    assert_eq!(
        std::fs::metadata(journal).unwrap().permissions().mode() & 0o7777,
        0o600
    );
}

/// Results directories, read back by `frun merge DIR`: a task's output file replaced by a
/// symbolic link (to a file of the right size or more) or a FIFO is refused in one line (exit
/// 2) without blocking, instead of merging bytes frun never wrote or hanging; the intact
/// directory merges to exactly the input's `echo` output.
#[test]
fn merge_reads_only_the_output_files_the_run_wrote() {
    let d = Dir::new(200);
    let (st, e) = d.run_to(
        &["--results", "rd", "-k", "-L", "1", "-a", "in", "echo"],
        &[],
        "out",
    );
    assert_eq!(st.code(), Some(0), "{e}");
    let merge = || {
        let mut c = assert_cmd::Command::new(BIN);
        c.args(["merge", "rd"])
            .current_dir(d.path(""))
            .timeout(LIMIT);
        c.output().expect("spawn frun merge")
    };
    let o = merge();
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        o.stdout,
        seq_n(200),
        "the intact directory merges to the input"
    );

    let output = std::fs::read_dir(d.path("rd"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".out"))
        .expect("a task output file");
    let kept = d.path("kept.out");
    std::fs::rename(&output, &kept).unwrap();
    // Another file at least as long, seen through a link.
    std::fs::write(d.path("other"), vec![b'x'; 4096]).unwrap();
    std::os::unix::fs::symlink(d.path("other"), &output).unwrap();
    let refused = |o: &Output, what: &str, ctx: &str| {
        let e = err(o);
        assert_eq!(o.status.code(), Some(2), "{ctx}: {e}");
        assert!(
            e.starts_with("frun merge: ") && e.matches('\n').count() == 1,
            "{ctx}: {e:?}"
        );
        assert!(e.contains(what), "{ctx}: stderr should say {what:?}: {e:?}");
        assert_eq!(out(o), "", "{ctx}: nothing may be merged");
    };
    let o = merge();
    refused(&o, "symbolic link", "linked output file");

    std::fs::remove_file(&output).unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&output)
            .status()
            .unwrap()
            .success()
    );
    let start = Instant::now();
    let o = merge();
    refused(&o, "regular file", "FIFO as output file");
    assert!(start.elapsed() < Duration::from_secs(10));

    std::fs::remove_file(&output).unwrap();
    std::fs::rename(&kept, &output).unwrap();
    std::fs::set_permissions(&output, std::fs::Permissions::from_mode(0o666)).unwrap();
    let o = merge();
    refused(&o, "other users", "output file others can write");
}

/// Item 3: `--resume` after `--halt` (now and soon, buffered and `-k`) runs the failed record
/// again: with a command that now succeeds, the outputs together equal one clean run (exactly
/// under `-k`) and the resume exits 0.
#[test]
fn resume_after_halt_reruns_the_failed_records() {
    let script = r#"if [ "$1" = 50 ] && [ -e broken ]; then echo "bad $1"; exit 1; fi; echo "$1"; sleep 0.005"#;
    for halt in ["now,fail=1", "soon,fail=1"] {
        for mode in [&[][..], &["-k"][..]] {
            let ctx = format!("--halt {halt} {mode:?}");
            let d = Dir::new(100);
            std::fs::write(d.path("broken"), b"").unwrap();
            let mut args = mode.to_vec();
            args.extend_from_slice(&[
                "-j", "2", "-l", "1", "--halt", halt, "-a", "in", "sh", "-c", script, "sh",
            ]);
            let (st, e) = d.run_to(&args, &[], "out");
            assert_eq!(st.code(), Some(1), "{ctx}: {e}");
            assert!(d.path(".frun_resume").exists(), "{ctx}: no checkpoint");

            std::fs::remove_file(d.path("broken")).unwrap();
            let mut args = vec!["--resume", ".frun_resume"];
            args.extend_from_slice(mode);
            args.extend_from_slice(&[
                "-j", "2", "-l", "1", "--halt", halt, "-a", "in", "sh", "-c", script, "sh",
            ]);
            let (st, e) = d.run_to(&args, &[], "out");
            assert_eq!(st.code(), Some(0), "{ctx}: resume: {e}");
            assert_output(
                mode,
                &std::fs::read(d.path("out")).unwrap(),
                &seq_n(100),
                &ctx,
            );
            assert!(!d.path(".frun_resume").exists(), "{ctx}: checkpoint kept");
        }
    }
}

/// Item 3, without `--halt`: a record fails (exit 1, not retried) early, and the run is then
/// stopped by a signal. Its records were not done, so `--resume` runs it again: still failing,
/// the resumed run ends 123 with the failure in its summary (as one whole run would); fixed,
/// it ends 0 and the outputs equal one clean run (exactly under `-k`). A run that ends 123
/// keeps no checkpoint: nothing is left to resume.
#[test]
fn a_failed_record_is_not_done_for_a_resume() {
    let script = r#"if [ "$1" = 5 ] && [ -e broken ]; then echo "bad $1"; exit 1; fi; echo "$1"; sleep 0.02"#;
    for mode in [&[][..], &["-k"][..]] {
        let ctx = format!("{mode:?}");
        let d = Dir::new(150);
        std::fs::write(d.path("broken"), b"").unwrap();
        let mut args = mode.to_vec();
        args.extend_from_slice(&["-j", "2", "-l", "1", "-a", "in", "sh", "-c", script, "sh"]);
        let mut child = d.spawn_to(&args, &[], "out");
        let stderr = drain(child.stderr.take().unwrap());
        let out = d.path("out");
        wait_until("output", Duration::from_secs(20), || file_lines(&out) >= 40);
        send_signal(child.id(), "TERM");
        let st = wait_limit(&mut child, LIMIT);
        let e = text(&stderr.join().unwrap());
        assert_stopped_by(&st, libc::SIGTERM, &format!("{ctx}: {e}"));

        let mut args = vec!["--resume", ".frun_resume"];
        args.extend_from_slice(mode);
        args.extend_from_slice(&["-j", "2", "-l", "1", "-a", "in", "sh", "-c", script, "sh"]);
        // Still broken: the failure is reported again, as in one whole run.
        let saved = std::fs::read(d.path(".frun_resume")).unwrap();
        let saved_out = std::fs::read(&out).unwrap();
        let (st, e) = d.run_to(&args, &[], "out");
        assert_eq!(
            st.code(),
            Some(123),
            "{ctx}: resume of a failing record: {e}"
        );
        assert!(e.contains("exit status 1"), "{ctx}: {e}");
        let mut want = seq_n(150);
        let at = want.windows(3).position(|w| w == b"\n5\n").unwrap() + 1;
        want.splice(at..at + 1, b"bad 5".iter().copied());
        assert_output(mode, &std::fs::read(&out).unwrap(), &want, &ctx);
        assert!(
            !d.path(".frun_resume").exists(),
            "{ctx}: checkpoint kept after 123"
        );

        // Fixed: from the same checkpoint and output, one clean run.
        std::fs::write(d.path(".frun_resume"), &saved).unwrap();
        std::fs::set_permissions(
            d.path(".frun_resume"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        std::fs::write(&out, &saved_out).unwrap();
        std::fs::remove_file(d.path("broken")).unwrap();
        let (st, e) = d.run_to(&args, &[], "out");
        assert_eq!(st.code(), Some(0), "{ctx}: resume: {e}");
        assert_output(mode, &std::fs::read(&out).unwrap(), &seq_n(150), &ctx);
    }
}

/// Item 4: a stopped run's `./.frun_resume` survives the next, unrelated run in the same
/// directory (which completes, and also when it is stopped itself: its checkpoint is then
/// `./.frun_resume.1`), and can still be resumed to a complete output afterwards.
#[test]
fn a_stopped_runs_checkpoint_survives_the_next_run() {
    let d = Dir::new(100);
    stopped_run(&d, 20);
    let ck = d.path(".frun_resume");
    let before = std::fs::read(&ck).unwrap();

    // An unrelated run, long enough to write its journal, that completes.
    std::fs::write(d.path("other-in"), seq(1000, 1039)).unwrap();
    let (st, e) = d.run_to(
        &["-l", "1", "-a", "other-in", "sh", "-c", SLOW, "sh"],
        &[],
        "other-out",
    );
    assert_eq!(st.code(), Some(0), "{e}");
    assert_eq!(
        std::fs::read(&ck).unwrap(),
        before,
        "the checkpoint changed"
    );

    // An unrelated run that is stopped: its checkpoint goes elsewhere, named on stderr.
    let e = stop_slow_run(&d, "other-in", "other-out2", 10);
    assert!(e.contains("--resume .frun_resume.1 "), "{e}");
    assert_eq!(
        std::fs::read(&ck).unwrap(),
        before,
        "the checkpoint changed"
    );

    // Both resume.
    let (st, e) = d.run_to(RESUME_SLOW, &[], "out1");
    assert_eq!(st.code(), Some(0), "{e}");
    assert_eq!(
        sorted_lines(&std::fs::read(d.path("out1")).unwrap()),
        sorted_lines(&seq_n(100))
    );
    let (st, e) = d.run_to(
        &[
            "--resume",
            ".frun_resume.1",
            "-l",
            "1",
            "-a",
            "other-in",
            "sh",
            "-c",
            SLOW,
            "sh",
        ],
        &[],
        "other-out2",
    );
    assert_eq!(st.code(), Some(0), "{e}");
    assert_eq!(
        sorted_lines(&std::fs::read(d.path("other-out2")).unwrap()),
        sorted_lines(&seq(1000, 1039))
    );
    assert!(!ck.exists() && !d.path(".frun_resume.1").exists());
}

/// Item 10: `--resume` refuses, at once and without reading it, a FIFO (which would block), a
/// device (`/dev/zero` would be read forever) and a symbolic link; and a regular file larger
/// than any journal of this input could be (here: a valid journal padded with comment lines
/// to 17 MiB, for a 292-byte input).
#[test]
fn resume_reads_only_a_bounded_regular_file() {
    let d = Dir::new(100);
    assert!(
        std::process::Command::new("mkfifo")
            .arg(d.path("fifo"))
            .status()
            .unwrap()
            .success()
    );
    stopped_run(&d, 20);
    std::os::unix::fs::symlink(d.path(".frun_resume"), d.path("link")).unwrap();
    let args = |ck: &'static str| {
        vec![
            "--resume", ck, "-l", "1", "-a", "in", "sh", "-c", SLOW, "sh",
        ]
    };
    for (ck, what) in [
        ("fifo", "regular file"),
        ("/dev/zero", "regular file"),
        ("link", "symbolic link"),
    ] {
        let start = Instant::now();
        let mut child = d.spawn_to(&args(ck), &[], "out-refused");
        let stderr = drain(child.stderr.take().unwrap());
        let st = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if start.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("--resume {ck}: still running after 10 s");
            }
            thread::sleep(Duration::from_millis(20));
        };
        assert_refused(st, &text(&stderr.join().unwrap()), what, ck);
    }
    assert_eq!(file_lines(&d.path("out-refused")), 0);

    // The checkpoint as the file stdout goes to.
    let before = std::fs::read(d.path(".frun_resume")).unwrap();
    let (st, e) = d.run_to(&args(".frun_resume"), &[], ".frun_resume");
    assert_refused(st, &e, "standard output", "the checkpoint as stdout");
    assert_eq!(std::fs::read(d.path(".frun_resume")).unwrap(), before);

    let mut big = std::fs::read(d.path(".frun_resume")).unwrap();
    let at = big.iter().position(|&b| b == b'\n').unwrap() + 1;
    let pad = format!("# {}\n", "x".repeat(1000));
    let padding: Vec<u8> = pad.as_bytes().repeat(17 * 1024);
    big.splice(at..at, padding);
    std::fs::write(d.path("big"), &big).unwrap();
    std::fs::set_permissions(d.path("big"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let (st, e) = d.run_to(&args("big"), &[], "out-refused");
    assert_refused(st, &e, "larger than", "a 17 MiB checkpoint");
    assert_eq!(file_lines(&d.path("out-refused")), 0);
}

/// A run whose stdout is a pipe (its journal's `stdout` line is `-`) can be resumed: the
/// resume says how many bytes of the earlier output to keep, and those bytes followed by the
/// resumed output equal one clean run (`-k`).
#[test]
fn a_run_writing_to_a_pipe_can_be_resumed() {
    let d = Dir::new(100);
    let args = ["-k", "-l", "1", "-a", "in", "sh", "-c", SLOW, "sh"];
    let mut child = spawn_frun_in(d.dir.path(), &args, &[], Stdio::null(), Stdio::piped());
    let stderr = drain(child.stderr.take().unwrap());
    let out1 = d.path("out1");
    let mut cat = std::process::Command::new("cat")
        .stdin(Stdio::from(child.stdout.take().unwrap()))
        .stdout(append(&out1))
        .spawn()
        .unwrap();
    wait_until("output", Duration::from_secs(20), || {
        file_lines(&out1) >= 20
    });
    send_signal(child.id(), "TERM");
    assert_stopped_by(&wait_limit(&mut child, LIMIT), libc::SIGTERM, "stopped run");
    assert!(wait_limit(&mut cat, LIMIT).success());
    let _ = stderr.join();

    let mut resume = vec!["--resume", ".frun_resume"];
    resume.extend_from_slice(&args);
    let o = frun_in(d.dir.path(), &resume, &[], b"");
    assert_code(&o, 0);
    let e = err(&o);
    let keep: usize = e
        .split("keep only the first ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the resume says what to keep: {e}"));
    let mut whole = std::fs::read(&out1).unwrap();
    assert!(whole.len() >= keep, "{e}");
    whole.truncate(keep);
    whole.extend_from_slice(&o.stdout);
    assert_eq!(text(&whole), text(&seq_n(100)));
}
