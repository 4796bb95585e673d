//! findutils 4.9.0's own xargs tests (vendored in tests/findutils/, run by its
//! `run_xargs_suite.py` without DejaGnu): GNU xargs passes every case, and frun's xargs passes
//! the same ones, both as a link named `xargs` and as `frun xargs`. A case frun may fail is
//! listed in [`KNOWN_DIFFERENCES`] with its reason; none is today.

use std::path::Path;
use std::process::Command;

use crate::common::{BIN, scratch};

/// Cases GNU passes and frun does not, each with why: (name, reason). Empty: frun passes all.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[];

/// Every DejaGnu case (xargs.gnu, xargs.posix, xargs.sysv) and both shell scripts.
const CASES: usize = 98;

/// Runs the suite against `xargs…`; returns the names of the failed cases and the count run.
fn run_suite(xargs: &[&str]) -> (Vec<String>, usize) {
    let runner = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/findutils/run_xargs_suite.py");
    let out = Command::new("python3")
        .arg(runner)
        .args(xargs)
        .output()
        .expect("python3 runs the findutils suite");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "runner failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let failed: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("FAIL "))
        .map(|l| l.split(':').next().unwrap_or(l).to_string())
        .collect();
    let total = text
        .lines()
        .find_map(|l| l.strip_prefix("passed "))
        .and_then(|l| l.split(" of ").nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in: {text}"));
    for l in text.lines().filter(|l| l.starts_with("FAIL ")) {
        eprintln!("{xargs:?}: {l}");
    }
    (failed, total)
}

#[test]
fn gnu_xargs_passes_all_of_findutils_suite() {
    let (failed, total) = run_suite(&["/usr/bin/xargs"]);
    assert_eq!(total, CASES);
    assert!(failed.is_empty(), "GNU xargs fails {failed:?}");
}

#[test]
fn frun_passes_findutils_suite_as_gnu_does() {
    let link_dir = scratch().join("findutils-xargs-link");
    let _ = std::fs::create_dir(&link_dir);
    let link = link_dir.join("xargs");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(BIN, &link).expect("link named xargs");
    let allowed: Vec<&str> = KNOWN_DIFFERENCES.iter().map(|(n, _)| *n).collect();
    for xargs in [&[link.to_str().expect("utf-8 path")][..], &[BIN, "xargs"]] {
        let (failed, total) = run_suite(xargs);
        assert_eq!(total, CASES, "{xargs:?}");
        assert_eq!(failed, allowed, "{xargs:?}: cases frun fails");
    }
}
