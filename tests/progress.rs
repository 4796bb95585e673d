//! Live progress (`--bar`, `--eta`, `--progress`): drawn in a real terminal (a tmux pane of a
//! fixed size), showing figures mid-run, reaching the total, and leaving the shell's prompt on a
//! clean line at the end and after Ctrl-C; nothing drawn when stderr is no terminal.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{BIN, frun, run_prog};

/// The shell's prompt in the pane.
const PROMPT: &str = "PROMPT$";
/// Records per run: with `-l 100` and a 1 ms sleep per batch, a few seconds on 2 workers.
const RECORDS: u64 = 200_000;
/// The pane's size.
const COLUMNS: u32 = 200;

/// A shell in a tmux pane of its own server (its own socket), logging everything the pane
/// shows to a file; the server ends with it.
struct Pane {
    socket: String,
    log: PathBuf,
    dir: tempfile::TempDir,
}

impl Pane {
    /// None (said on stderr) when tmux is not installed.
    fn open(name: &str) -> Option<Pane> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("SKIP: tmux is not installed (tests/run.sh installs it)");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let pane = Pane {
            socket: format!("frun-test-{}-{name}", std::process::id()),
            log: dir.path().join("pane.log"),
            dir,
        };
        let shell = format!(
            "env -i PATH=/usr/bin:/bin TERM=screen PS1='{PROMPT} ' bash --norc --noprofile"
        );
        let cwd = pane.dir.path().to_str().unwrap().to_string();
        let size = [COLUMNS.to_string(), "30".to_string()];
        pane.tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            &size[0],
            "-y",
            &size[1],
            "-c",
            &cwd,
            &shell,
        ]);
        pane.wait_for("the first prompt", |lines| {
            lines.last().is_some_and(|l| l == PROMPT)
        });
        let log = format!("cat >> '{}'", pane.log.display());
        pane.tmux(&["pipe-pane", "-t", "t", "-o", &log]);
        Some(pane)
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux");
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Types `line` and Enter.
    fn type_line(&self, line: &str) {
        self.tmux(&["send-keys", "-t", "t", "-l", line]);
        self.tmux(&["send-keys", "-t", "t", "Enter"]);
    }

    /// The screen's lines, trailing blanks and empty lines left out.
    fn screen(&self) -> Vec<String> {
        self.tmux(&["capture-pane", "-p", "-t", "t"])
            .lines()
            .map(|l| l.trim_end().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    }

    /// Polls the screen until `ready` holds (the test fails after 60 s); returns that screen.
    fn wait_for(&self, what: &str, ready: impl Fn(&[String]) -> bool) -> Vec<String> {
        let start = Instant::now();
        loop {
            let lines = self.screen();
            if ready(&lines) {
                return lines;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "waiting for {what}; the screen: {lines:#?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the prompt to come back after the command typed last.
    fn wait_for_prompt(&self) -> Vec<String> {
        self.wait_for("the prompt after the run", |lines| {
            lines.iter().filter(|l| l.starts_with(PROMPT)).count() >= 2
                && lines.last().is_some_and(|l| l == PROMPT)
        })
    }

    /// What the pane was sent, escape sequences and all.
    fn log(&self) -> String {
        // The log is written by tmux asynchronously: give it a moment.
        std::thread::sleep(Duration::from_millis(300));
        String::from_utf8_lossy(&std::fs::read(&self.log).unwrap()).into_owned()
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

/// The command line typed: frun with `flags` over `input`, 100 records a batch, each batch a
/// 1 ms sleep; then its exit status.
fn job(flags: &str, input: &str) -> String {
    format!("{input} {BIN} {flags} -l 100 sh -c 'sleep 0.001'; echo rc=$?")
}

/// The frames of the progress line in the pane's log, in order (what is between the line's
/// clears).
fn frames(log: &str) -> Vec<&str> {
    log.split("\x1b[2K")
        .map(|f| f.trim_end_matches([' ', '\r']))
        .collect()
}

/// The number just before `marker` in `line` ("123/200000" → 123 for marker "/200000").
fn number_before(line: &str, marker: &str) -> Option<u64> {
    let head = &line[..line.find(marker)?];
    let digits: String = head
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.chars().rev().collect::<String>().parse().ok()
}

/// The screen once the run is over: the command line, its exit status, the prompt; nothing
/// else (no fragment of the line is left).
fn assert_clean_end(screen: &[String], rc: &str) {
    assert_eq!(screen.len(), 3, "{screen:#?}");
    assert!(screen[0].starts_with(PROMPT) && screen[0].ends_with("echo rc=$?"));
    assert_eq!(screen[1], format!("rc={rc}"));
    assert_eq!(screen[2], PROMPT);
}

fn write_input(dir: &Path) -> String {
    let out = run_prog("seq", &[RECORDS.to_string()], b"");
    std::fs::write(dir.join("in.txt"), &out.stdout).unwrap();
    "<in.txt".into()
}

#[test]
fn bar_shows_progress_reaches_the_total_and_leaves_a_clean_prompt() {
    let Some(pane) = Pane::open("bar") else {
        return;
    };
    // A regular file: its total is known from the start.
    let input = write_input(pane.dir());
    pane.type_line(&job("--bar", &input));
    let total = format!("/{RECORDS} records");
    let mid = pane.wait_for("the bar mid-run", |lines| {
        lines.iter().any(|l| {
            l.starts_with('[')
                && l.contains('%')
                && number_before(l, &total).is_some_and(|n| n > 0 && n < RECORDS)
        })
    });
    assert!(mid.iter().any(|l| l.contains("ETA ")), "{mid:#?}");
    assert_clean_end(&pane.wait_for_prompt(), "0");
    let log = pane.log();
    let last = frames(&log)
        .into_iter()
        .rfind(|f| f.contains(&total))
        .expect("a frame");
    assert!(
        last.contains(&format!("100% {RECORDS}/{RECORDS} records")),
        "{last:?}"
    );
}

#[test]
fn eta_over_a_pipe_reaches_the_total_and_leaves_a_clean_prompt() {
    let Some(pane) = Pane::open("eta") else {
        return;
    };
    // A pipe: the total is known once the input is all read.
    pane.type_line(&job("--eta", &format!("seq {RECORDS} |")));
    pane.wait_for("the ETA line mid-run", |lines| {
        lines
            .iter()
            .any(|l| l.starts_with("ETA: ") && number_before(l, " records").is_some_and(|n| n > 0))
    });
    assert_clean_end(&pane.wait_for_prompt(), "0");
    let log = pane.log();
    let last = frames(&log)
        .into_iter()
        .rfind(|f| f.contains("ETA: "))
        .expect("a frame");
    assert!(last.contains(" left: 0 records "), "{last:?}");
    assert!(
        last.contains(&format!("done: {RECORDS}/{RECORDS} (100%)")),
        "{last:?}"
    );
}

#[test]
fn ctrl_c_mid_run_leaves_a_clean_line() {
    let Some(pane) = Pane::open("interrupt") else {
        return;
    };
    let input = write_input(pane.dir());
    pane.type_line(&job("--tui", &input));
    pane.wait_for("the summary mid-run", |lines| {
        lines.iter().any(|l| {
            l.starts_with("frun: ")
                && number_before(l, &format!("/{RECORDS} records")).is_some_and(|n| n > 0)
        })
    });
    pane.tmux(&["send-keys", "-t", "t", "C-c"]);
    let mut end = pane.wait_for("the prompt after the run", |lines| {
        lines.iter().filter(|l| l.starts_with(PROMPT)).count() >= 2
            && lines.last().is_some_and(|l| l == PROMPT)
    });
    // Killed by SIGINT once it has cleaned up, frun takes the rest of the command line with it
    // (`; echo rc=$?` does not run), as any program Ctrl-C ends does.
    assert!(!end.iter().any(|l| l.starts_with("rc=")), "{end:#?}");
    // The stopped run says what stopped it, where its checkpoint is and what of the output to
    // keep: messages of their own, each on its own line (the terminal echoes the ^C).
    let notes: Vec<String> = end
        .drain(1..end.len() - 1)
        .filter(|l| {
            ![
                "frun: Caught SIGINT",
                "frun: checkpoint ",
                "frun: the done batches' output",
            ]
            .iter()
            .any(|p| l.trim_start_matches("^C").starts_with(p))
                && l != "^C"
        })
        .collect();
    assert!(notes.is_empty(), "{notes:#?}");
    assert_eq!(end.len(), 2, "{end:#?}");
    assert!(end[0].starts_with(PROMPT) && end[0].ends_with("echo rc=$?"));
    assert_eq!(end[1], PROMPT);
    // The shell saw a death by SIGINT: 128 + 2.
    pane.type_line("echo rc=$?");
    pane.wait_for("the status of the stopped run", |lines| {
        lines.iter().any(|l| l == "rc=130") && lines.last().is_some_and(|l| l == PROMPT)
    });
}

/// Whether two outputs are the same bytes (without printing them whole when not).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a == b
}

#[test]
fn nothing_is_drawn_when_stderr_is_no_terminal() {
    let input = run_prog("seq", &[RECORDS.to_string()], b"").stdout;
    let plain = frun(&["-k", "-l", "1000", "echo"], &input);
    for flag in ["--bar", "--eta", "--progress", "--tui", "--bar=auto"] {
        // Records on stdin: what comes out is the input.
        let out = frun(&[flag, "-k", "-s", "cat"], &input);
        assert!(out.status.success(), "{flag}: {:?}", out.status);
        assert!(
            same(&out.stdout, &input),
            "{flag}: stdout differs from seq's"
        );
        assert!(out.stderr.is_empty(), "{flag}: {:?}", out.stderr);
        // Records as arguments: the same as without the flag.
        let out = frun(&[flag, "-k", "-l", "1000", "echo"], &input);
        assert!(same(&out.stdout, &plain.stdout), "{flag}: stdout differs");
        assert!(out.stderr.is_empty(), "{flag}: {:?}", out.stderr);
    }
    // From a file too (the total is counted in the background).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.txt");
    std::fs::write(&file, &input).unwrap();
    let out = frun(
        &["--bar", "-k", "-s", "-a", file.to_str().unwrap(), "cat"],
        b"",
    );
    assert!(same(&out.stdout, &input) && out.stderr.is_empty());
}

#[test]
fn always_draws_on_a_pipe_and_leaves_stdout_alone() {
    let input = run_prog("seq", &["20000"], b"").stdout;
    let out = frun(&["--bar=always", "-k", "-l", "100", "-s", "cat"], &input);
    assert!(out.status.success(), "{:?}", out.status);
    assert!(same(&out.stdout, &input), "stdout differs from seq's");
    let err = String::from_utf8_lossy(&out.stderr);
    // The final figures, then the clear that ends the line.
    assert!(err.contains("100% 20000/20000 records"), "{err:?}");
    assert!(err.ends_with("\r\x1b[2K"), "{err:?}");
    // never: nothing, even forced before.
    let out = frun(&["--bar=always", "--eta=never", "-k", "-s", "cat"], &input);
    assert!(same(&out.stdout, &input) && out.stderr.is_empty());
}

#[test]
fn the_total_is_capped_by_the_limit_and_chunks_are_counted_with_b() {
    let input = run_prog("seq", &["300000"], b"").stdout;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.txt");
    std::fs::write(&file, &input).unwrap();
    let file = file.to_str().unwrap();
    let head = run_prog("head", &["-n", "5000"], &input).stdout;
    for source in [&["-a", file][..], &[]] {
        let mut args = vec!["--eta=always", "-n", "5000", "-k", "-s"];
        args.extend_from_slice(source);
        args.push("cat");
        let out = frun(&args, if source.is_empty() { &input } else { b"" });
        assert!(
            same(&out.stdout, &head),
            "{args:?}: stdout differs from head's"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("done: 5000/5000 (100%)"), "{args:?}: {err:?}");
    }
    // -b: chunks of the file, its size over N.
    let chunks = (input.len() as u64).div_ceil(65536);
    let out = frun(
        &["--bar=always", "-b", "64Ki", "-k", "-a", file, "cat"],
        b"",
    );
    assert!(same(&out.stdout, &input), "-b: stdout differs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("100% {chunks}/{chunks} chunks")),
        "{err:?}"
    );
}

#[test]
fn bad_values_are_refused_in_one_line() {
    for args in [
        &["--progress=bogus", "echo"][..],
        &["--bar=yes", "echo"],
        &["--tui=sometimes", "echo"],
        &["--eta=1", "echo"],
    ] {
        let out = frun(args, b"1\n");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("frun: ") && err.ends_with('\n') && err.lines().count() == 1,
            "{args:?}: {err:?}"
        );
        assert!(err.contains("auto, always or never"), "{args:?}: {err:?}");
    }
}
