//! `frun parallel --results` against what an adversary can put in its way: values that are
//! `..` or hold `/`, symbolic links inside the results directory, a name that is a file. Each
//! case checks that nothing is written outside the directory, and that a refusal is one line
//! `frun: …` with a non-zero status. (Agreement with GNU Parallel's layout is checked by the
//! differential corpus in `parallel.rs`.)

use crate::common::BIN;
use std::path::Path;
use std::process::Output;

/// Runs `frun parallel ARGS` in `dir`.
fn parallel(dir: &Path, args: &[&str]) -> Output {
    assert_cmd::Command::new(BIN)
        .arg("parallel")
        .args(args)
        .current_dir(dir)
        .env("PARALLEL_SHELL", "/bin/bash")
        .timeout(crate::common::LIMIT)
        .output()
        .unwrap()
}

fn fresh() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("parallel-results-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// Every file below `dir`, as paths relative to it, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.symlink_metadata().unwrap().is_dir() {
                todo.push(p);
            }
        }
    }
    out.sort();
    out
}

#[track_caller]
fn one_line_refusal(o: &Output, names: &str) {
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.code().is_some_and(|c| c != 0),
        "must fail: {:?}",
        o.status
    );
    assert!(
        e.starts_with("frun: ") && e.lines().count() == 1 && e.contains(names),
        "one line naming {names}: {e:?}"
    );
}

#[test]
fn dot_dot_and_slashes_in_values_stay_inside_the_directory() {
    let d = fresh();
    let o = parallel(
        d.path(),
        &[
            "--results",
            "out",
            "echo",
            ":::",
            "..",
            "../../x",
            "/etc/y",
            ".",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    // Only `out` was created next to the run, and nothing above it.
    assert_eq!(tree(d.path()).first().map(String::as_str), Some("out"));
    let all = tree(d.path());
    assert!(all.iter().all(|p| p.starts_with("out")), "{all:?}");
    let dotdot = d.path().join("out/1/\\../stdout");
    assert_eq!(std::fs::read(dotdot).unwrap(), b"..\n");
    let climbing = d.path().join("out/1/..\\_..\\_x/stdout");
    assert_eq!(std::fs::read(climbing).unwrap(), b"../../x\n");
    let rooted = d.path().join("out/1/\\_etc\\_y/stdout");
    assert_eq!(std::fs::read(rooted).unwrap(), b"/etc/y\n");
}

#[test]
fn a_template_path_that_climbs_is_refused_and_nothing_is_written_outside() {
    let d = fresh();
    std::fs::create_dir(d.path().join("run")).unwrap();
    let run = d.path().join("run");
    let o = parallel(&run, &["--results", "o/{}.txt", "echo", ":::", "../../esc"]);
    one_line_refusal(&o, "would leave");
    assert!(!d.path().join("esc.txt").exists());
    assert!(!run.join("esc.txt").exists());
    // A value with `/` that stays inside makes directories there, as GNU Parallel's does.
    let o = parallel(&run, &["--results", "o/{}.txt", "echo", ":::", "a/b"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(std::fs::read(run.join("o/a/b.txt")).unwrap(), b"a/b\n");
    assert_eq!(std::fs::read(run.join("o/a/b.txt.seq")).unwrap(), b"1");
}

#[test]
fn symbolic_links_below_the_directory_are_never_followed() {
    let d = fresh();
    let outside = d.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("stdout"), b"keep").unwrap();
    std::fs::create_dir_all(d.path().join("out/1")).unwrap();
    // A value's directory planted as a link to somewhere else.
    std::os::unix::fs::symlink(&outside, d.path().join("out/1/a")).unwrap();
    let o = parallel(d.path(), &["--results", "out", "echo", ":::", "a"]);
    one_line_refusal(&o, "cannot save job 1");
    assert_eq!(std::fs::read(outside.join("stdout")).unwrap(), b"keep");
    assert_eq!(tree(&outside), ["stdout"]);
    // A result file planted as a link.
    std::fs::create_dir_all(d.path().join("out/1/b")).unwrap();
    let target = d.path().join("target");
    std::fs::write(&target, b"keep").unwrap();
    std::os::unix::fs::symlink(&target, d.path().join("out/1/b/stdout")).unwrap();
    let o = parallel(d.path(), &["--results", "out", "echo", ":::", "b"]);
    one_line_refusal(&o, "cannot save job 1");
    assert_eq!(std::fs::read(&target).unwrap(), b"keep");
}

#[test]
fn the_directory_itself_may_be_a_link_the_user_made() {
    let d = fresh();
    std::fs::create_dir(d.path().join("real")).unwrap();
    std::os::unix::fs::symlink("real", d.path().join("out")).unwrap();
    let o = parallel(d.path(), &["--results", "out", "echo", ":::", "a"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(
        std::fs::read(d.path().join("real/1/a/stdout")).unwrap(),
        b"a\n"
    );
}

#[test]
fn names_frun_parallel_cannot_use_are_refused_in_one_line() {
    let d = fresh();
    std::fs::write(d.path().join("afile"), b"x").unwrap();
    for (args, names) in [
        (&["--results", "afile"][..], "not a directory"),
        (&["--results", ""], "empty"),
        (&["--results", "out", "--pipe"], "--pipe"),
        (&["--resume"], "--joblog"),
        (&["--resume-failed"], "--joblog"),
    ] {
        let mut all = args.to_vec();
        all.extend(["touch", "ran", ":::", "1"]);
        let o = parallel(d.path(), &all);
        one_line_refusal(&o, names);
        assert_eq!(o.status.code(), Some(255), "{args:?}");
        assert!(o.stdout.is_empty());
        assert!(!d.path().join("ran").exists(), "{args:?} ran a job");
    }
    assert_eq!(std::fs::read(d.path().join("afile")).unwrap(), b"x");
}

#[test]
fn a_joblog_that_cannot_be_read_is_refused() {
    let d = fresh();
    std::fs::create_dir(d.path().join("jl")).unwrap();
    let o = parallel(
        d.path(),
        &["--resume", "--joblog", "jl", "touch", "ran", ":::", "1"],
    );
    one_line_refusal(&o, "jl");
    assert!(!d.path().join("ran").exists());
}
