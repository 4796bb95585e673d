//! GNU Parallel 20221122's own local test suite (tests/gnu-parallel: its `par_*` functions and
//! wanted results, run by tests/gnu-parallel/run.py), once with GNU Parallel and once with
//! `frun parallel`, as a ratchet: GNU Parallel's own count of agreeing functions is what this
//! machine gives it, frun agrees on at least `FRUN_AGREES`, and every function where GNU
//! Parallel agrees with the wanted results but frun silently gives something else is listed in
//! `KNOWN_DIFFERENCES` with its reason. The list may only shrink: a function that newly differs
//! fails the test. Refusals (frun says in a `frun: ` line that it does not do something) are
//! counted, not listed. A function where GNU Parallel agrees and frun does not is run a second
//! time, alone (run.py), so that a sleep race lost on a busy machine is not taken for a
//! difference. It does not test anything the differential corpus (parallel.rs) does not also
//! cover case by case. `FRUN_GNU_SUITE_JSON` names GNU Parallel's half when tests/run.sh ran it
//! earlier on this machine (run.py `--gnu-from`); else the test runs both.

use crate::common::BIN;
use std::collections::BTreeMap;
use std::process::Command;

/// GNU Parallel's agreeing functions (of 228) on a 2-core machine without a tty, fish, csh,
/// pv, ash/dash-named shells, sudo, sshd or DBD::CSV: 184 on a quiet machine; a few are
/// timing-dependent (180 seen on a heavily loaded one), so this is a floor under that.
const GNU_AGREES: usize = 175;

/// Functions where frun agrees with the wanted results: only ever raised. 180 measured (179
/// before `--lb` held a long line whole as GNU Parallel does; 178 before `{##}` under `-X` counted as GNU Parallel counts it; 177
/// before --files --compress; 176 before a job's --process-slot-var became the lowest free
/// slot, -t lines came in start order and --halt N% counted all the jobs before the first
/// started; 140
/// before --regexp, --rrs, --tee, --pipe -L, --round-robin --pipe, --group-by, --tmpl, --sem,
/// {##}, skip(), GNU's --timeout seconds and --version's lines; 134 before --results tables,
/// --csv and --pipe's growing block; 113 before GNU's line measure and wordings; 66 before perl
/// strings, -X/-m filling and -L; 54 before that); a few (sleeps racing each other) agree or
/// not with the machine's load even when run a second time alone, so the floor is two below.
const FRUN_AGREES: usize = 178;

/// Where GNU Parallel agrees with its wanted results and frun, without refusing, does not.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    (
        "par_k",
        "under ulimit -n 50 frun runs more jobs than GNU Parallel (fewer descriptors each) and \
         prints GNU's five lines about the limit it finds at the start, not GNU's four more \
         about running out of descriptors later, which frun does not",
    ),
    (
        "par_tee_with_premature_close",
        "its second half puts a `tee` without --output-error=warn-nopipe first on PATH and wants \
         the output broken by it; frun copies the input itself, so every job gets all of it \
         both times (the first half, the same check with the real tee, agrees)",
    ),
];

/// Runs both suites; returns (function, file) -> (GNU's verdict, frun's verdict).
fn run_suites() -> BTreeMap<(String, String), (String, String)> {
    let dir = tempfile::tempdir().expect("temporary directory");
    let table = dir.path().join("table.tsv");
    let here = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/gnu-parallel/run.py");
    let mut run = Command::new("python3");
    run.args([here, "--impl", "both", "--frun", BIN, "--table"])
        .arg(&table);
    // GNU Parallel's half, run earlier on this machine by tests/run.sh (beside the image test).
    if let Some(gnu) = std::env::var_os("FRUN_GNU_SUITE_JSON")
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 0))
    {
        run.arg("--gnu-from").arg(gnu);
    }
    let out = run.output().expect("python3 runs");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    println!("{}", String::from_utf8_lossy(&out.stdout));
    assert!(out.status.success(), "run.py failed");
    let text = std::fs::read_to_string(&table).expect("table written");
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 4, "table line {l:?}");
            ((f[0].into(), f[1].into()), (f[2].into(), f[3].into()))
        })
        .collect()
}

#[test]
fn gnu_parallels_own_local_suite_ratchet() {
    if !std::path::Path::new("/usr/bin/parallel").exists() {
        panic!("GNU Parallel (/usr/bin/parallel) is needed for this suite");
    }
    let rows = run_suites();
    let considered: Vec<_> = rows.iter().filter(|(_, r)| r.0 != "set aside").collect();
    assert_eq!(
        considered.len(),
        228,
        "228 functions once the set-aside ones are out"
    );
    let count = |who: usize, what: &str| {
        considered
            .iter()
            .filter(|(_, r)| if who == 0 { r.0 == what } else { r.1 == what })
            .count()
    };
    let (gnu, frun) = (count(0, "agrees"), count(1, "agrees"));
    let refuses = count(1, "refuses");
    let silent: Vec<&str> = considered
        .iter()
        .filter(|(_, r)| r.0 == "agrees" && r.1 != "agrees" && r.1 != "refuses")
        .map(|((n, _), _)| n.as_str())
        .collect();
    println!(
        "GNU agrees {gnu}; frun agrees {frun}, refuses {refuses}, differs {} ({} where GNU agrees)",
        228 - frun - refuses,
        silent.len()
    );
    for (n, why) in KNOWN_DIFFERENCES {
        let now = rows
            .iter()
            .find(|((name, _), _)| name == n)
            .map_or("missing", |(_, r)| r.1.as_str());
        println!("known difference {n} ({now}): {why}");
    }
    assert!(
        gnu >= GNU_AGREES,
        "GNU Parallel agrees on {gnu} < {GNU_AGREES}"
    );
    assert!(frun >= FRUN_AGREES, "frun agrees on {frun} < {FRUN_AGREES}");
    let new: Vec<&&str> = silent
        .iter()
        .filter(|n| !KNOWN_DIFFERENCES.iter().any(|(k, _)| k == *n))
        .collect();
    assert!(
        new.is_empty(),
        "frun now silently differs where GNU Parallel agrees: {new:?}"
    );
}
