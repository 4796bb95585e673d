//! Command-line hardening: closed standard descriptors at start, batch mode independent of flag
//! order, messages (help's exit statuses, switches given a value, `-b` with a negative size,
//! `-U -N`, singular counts) and the xargs migration notes for `-n`.

use crate::common::*;
use std::process::Output;

/// The `rc=N` line a script printed on stderr after running frun.
fn reported_status(o: &Output) -> i32 {
    let e = err(o);
    let line = e
        .lines()
        .find_map(|l| l.strip_prefix("rc="))
        .unwrap_or_else(|| panic!("no rc= line in {e:?}"));
    line.parse().expect("a status")
}

// ---- item: closed standard descriptors -------------------------------------------------------

#[test]
fn closed_stdout_is_refused_not_discarded() {
    // The reference tool does not report success either.
    let x = bash("xargs echo hi </dev/null >&-; echo rc=$? >&2");
    assert_ne!(reported_status(&x), 0, "xargs with a closed stdout");
    for script in [
        r#"echo a | "$FRUN" echo >&-; echo rc=$? >&2"#,
        r#"echo a | "$FRUN" -N echo >&-; echo rc=$? >&2"#,
        r#""$FRUN" --help >&-; echo rc=$? >&2"#,
        r#"echo a | "$FRUN" true >&- 2>/dev/stderr; echo rc=$? >&2"#,
    ] {
        let o = bash(script);
        assert_eq!(reported_status(&o), 1, "{script}: {}", err(&o));
        let e = err(&o);
        let msg: Vec<&str> = e.lines().filter(|l| l.starts_with("frun: ")).collect();
        assert_eq!(msg.len(), 1, "{script}: one line from frun: {e:?}");
        assert!(
            msg[0].contains("standard output is closed"),
            "{script}: {e:?}"
        );
    }
    // Stdout open on /dev/null is not closed.
    let o = bash(r#"echo a | "$FRUN" echo >/dev/null; echo rc=$? >&2"#);
    assert_eq!(reported_status(&o), 0, "{}", err(&o));
}

#[test]
fn closed_stdin_is_refused_when_records_come_from_it() {
    let o = bash(r#""$FRUN" echo <&-; echo rc=$? >&2"#);
    assert_eq!(reported_status(&o), 2, "{}", err(&o));
    assert_eq!(out(&o), "", "nothing may run");
    assert!(
        err(&o).starts_with("frun: standard input is closed"),
        "{}",
        err(&o)
    );
    // Records from a file: a closed stdin does not matter (commands get /dev/null).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in"), "a\nb\n").unwrap();
    let o = bash_in(
        dir.path(),
        r#""$FRUN" -k -l 1 -a in sh -c 'echo "$1"; cat' sh <&-; echo rc=$? >&2"#,
    );
    assert_eq!(reported_status(&o), 0, "{}", err(&o));
    assert_eq!(out(&o), "a\nb\n");
}

#[test]
fn closed_stderr_changes_no_status_and_no_output() {
    let o = bash(r#"seq 3 | "$FRUN" -k -l 1 echo 2>&-; echo rc=$? >&2"#);
    assert_eq!(reported_status(&o), 0);
    assert_eq!(out(&o), text(&seq(1, 3)));
    // Messages go nowhere, statuses stay (101 would be a panic).
    for (script, want) in [
        (r#""$FRUN" -x 2>&-; echo rc=$? >&2"#, 2),
        (r#"seq 3 | "$FRUN" false 2>&-; echo rc=$? >&2"#, 123),
        (
            r#"echo a | "$FRUN" no-such-command-frun 2>&-; echo rc=$? >&2"#,
            127,
        ),
        (r#"echo a | "$FRUN" echo >&- 2>&-; echo rc=$? >&2"#, 1),
    ] {
        let o = bash(script);
        assert_eq!(reported_status(&o), want, "{script}");
        assert_eq!(err(&o).lines().count(), 1, "{script}: {}", err(&o));
    }
}

// ---- item: the batch mode does not depend on flag order --------------------------------------

/// Shows how a batch arrived: its arguments, then the byte count of its stdin. (A loop, not
/// `printf '[%s]' "$@"`, which prints `[]` for no arguments: a batch count would then show in
/// the arguments of an unsized stdin run, whose batches follow timing.)
const SHOW: &[&str] = &[
    "sh",
    "-c",
    r#"for a; do printf '[%s]' "$a"; done; printf ' stdin='; wc -c"#,
    "sh",
];

fn run_with(flags: &[&[&str]]) -> Output {
    let mut args: Vec<&str> = vec!["-k", "-j", "1"];
    for f in flags {
        args.extend_from_slice(f);
    }
    args.extend_from_slice(SHOW);
    frun(&args, &seq_n(5))
}

#[test]
fn batch_mode_is_the_same_in_either_flag_order() {
    let flags: &[&[&str]] = &[
        &["-b", "4"],
        &["-b"],
        &["--block", "4"],
        &["-s"],
        &["+s"],
        &["-l", "2"],
        &["-L", "2"],
        &["-n", "3"],
        &["-i"],
    ];
    for (i, a) in flags.iter().enumerate() {
        for b in &flags[i + 1..] {
            // A flag given twice, +s undoing -s, and the last of -l and -L counting are
            // documented orderings.
            let pair = [a[0], b[0]];
            if a[0] == b[0] || pair == ["-s", "+s"] || pair == ["-l", "-L"] {
                continue;
            }
            let ab = run_with(&[a, b]);
            let ba = run_with(&[b, a]);
            // The default batch size adapts to timing: then only what reached the command
            // (every argument, every stdin byte) is compared, not where batches were cut.
            let fixed = [a[0], b[0]]
                .iter()
                .any(|f| ["-b", "--block", "-l", "-L"].contains(f));
            let seen = |o: &Output| {
                if fixed {
                    return out(o);
                }
                let (mut args, mut bytes) = (String::new(), 0);
                for l in lines(&o.stdout) {
                    let (a, n) = l.rsplit_once(" stdin=").expect("a SHOW line");
                    args += a;
                    bytes += n.trim().parse::<usize>().unwrap();
                }
                format!("{args} stdin={bytes}")
            };
            assert_eq!(
                (ab.status.code(), seen(&ab)),
                (ba.status.code(), seen(&ba)),
                "{a:?} {b:?} against {b:?} {a:?}\nstderr: {}\nstderr: {}",
                err(&ab),
                err(&ba)
            );
            if ab.status.code() == Some(2) {
                assert_usage_error(&ab, &[]);
                assert_usage_error(&ba, &[]);
            }
        }
    }
}

#[test]
fn records_per_batch_and_byte_chunks_do_not_combine() {
    for args in [
        &["--block", "4", "-l", "2"][..],
        &["-l", "2", "--block", "4"],
        &["-b", "4", "-L", "2"],
        &["-L", "2", "-b", "4"],
        &["-b", "-L", "2"],
        &["-b", "4", "--block", "4"],
        &["--block", "4", "-b", "4"],
    ] {
        let mut a = args.to_vec();
        a.extend_from_slice(&["wc", "-c"]);
        let o = frun(&a, &seq_n(5));
        assert_usage_error(&o, &[]);
        let e = err(&o);
        assert!(
            (e.contains("--block") || e.contains("--bytes"))
                && (e.contains("--lines")
                    || e.contains("--exact-lines")
                    || e.matches("--b").count() == 2),
            "{args:?}: must name both flags: {e}"
        );
    }
    // Each alone keeps its documented meaning: byte counts on wc's stdin summing to the input.
    for args in [
        &["--block", "4"][..],
        &["-b", "4"],
        &["-s", "-l", "2"],
        &["-s", "-L", "2"],
        &["-b"],
    ] {
        let mut a = vec!["-k"];
        a.extend_from_slice(args);
        a.extend_from_slice(&["wc", "-c"]);
        let o = frun(&a, &seq_n(5));
        assert_clean(&o);
        let total: usize = lines(&o.stdout)
            .iter()
            .map(|l| l.trim().parse::<usize>().unwrap())
            .sum();
        assert_eq!(total, seq_n(5).len(), "{args:?}");
    }
    // An undone chunk flag is no longer there to clash.
    let o = frun(&["-k", "-b", "4", "+b", "-l", "2", "echo"], &seq_n(5));
    assert_clean(&o);
    assert_eq!(out(&o), "1 2\n3 4\n5\n");
}

// ---- item: messages ---------------------------------------------------------------------------

/// The statuses in the README's exit-status table, as written in its first column.
fn readme_statuses() -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let table: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("| status | meaning |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(table.len() >= 6, "README status table: {table:?}");
    table
        .iter()
        .flat_map(|row| {
            row.split('|')
                .nth(1)
                .unwrap()
                .split('/')
                .map(|s| s.trim().to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn help_lists_every_exit_status_of_the_readme() {
    let statuses = readme_statuses();
    for s in ["0", "123", "3", "126", "127", "1", "2", "128+N"] {
        assert!(statuses.iter().any(|t| t == s), "README lacks {s}");
    }
    for h in ["-h", "--help"] {
        let o = frun(&[h], b"");
        assert_clean(&o);
        let help = out(&o).replace('\n', " ");
        let para = help
            .split("Exit status:")
            .nth(1)
            .unwrap_or_else(|| panic!("{h}: no exit status paragraph"));
        let para = &para[..para.find('.').expect("the paragraph ends with '.'")];
        let mentioned: Vec<&str> = para
            .split([';', ':'])
            .flat_map(|part| part.split_whitespace().next())
            .flat_map(|w| w.split('/'))
            .collect();
        for s in &statuses {
            assert!(
                mentioned.contains(&s.as_str()),
                "{h}: exit status {s} missing from {para:?}"
            );
        }
    }
}

#[test]
fn a_switch_given_a_value_is_named() {
    for (args, name) in [
        (&["-k=1"][..], "'-k'"),
        (&["-kv=1"], "'-v'"),
        (&["-N=yes"], "'-N'"),
        (&["--keep-order=1"], "'--keep-order'"),
        (&["--stdin=x"], "'--stdin'"),
    ] {
        let o = frun(args, b"a\n");
        assert_usage_error(&o, &[name]);
        assert!(err(&o).contains("takes no value"), "{args:?}: {}", err(&o));
    }
}

#[test]
fn bytes_with_a_negative_size_is_a_clear_error() {
    for args in [
        &["-b", "-1"][..],
        &["--bytes", "-1"],
        &["-b", "-5k", "wc", "-c"],
        &["-kb", "-1"],
    ] {
        let o = frun(args, b"a\n");
        assert_usage_error(&o, &["--bytes"]);
        let e = err(&o);
        assert!(
            e.contains("'-") && !e.contains("unexpected argument"),
            "{args:?}: {e}"
        );
    }
    // -b alone still means the default size, and -0 after it is still the NUL flag.
    let o = frun(&["-b", "-0", "wc", "-c"], b"a\0b\0");
    assert_clean(&o);
    assert_eq!(out(&o).trim(), "4");
}

#[test]
fn unsafe_dry_run_shows_the_words_that_would_run() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["x1.txt", "x2.txt", "y.dat"] {
        std::fs::write(dir.path().join(f), "").unwrap();
    }
    let records = "a b\nx*.txt  c\n  spaced\tout  \n\nq'uote\n[nomatch]*\n$HOME\n";
    std::fs::write(dir.path().join("in"), records).unwrap();
    let o = bash_in(dir.path(), r#""$FRUN" -N -k -l 1 -U echo < in"#);
    assert_code(&o, 0);
    assert_eq!(
        out(&o),
        "echo a b\necho x1.txt x2.txt c\necho spaced out\necho\necho 'q'\\''uote'\n\
         echo '[nomatch]*'\necho '$HOME'\n"
    );
    // Independently: each printed line, run by bash, gives what the real -U run gives.
    for words in [r"printf '[%s]'", r"-i printf '[%s]' '{}' 'pre-{}' tail"] {
        let real = bash_in(
            dir.path(),
            &format!(r#""$FRUN" -k -l 2 -U {words} < in; echo"#),
        );
        assert_code(&real, 0);
        let dry = bash_in(
            dir.path(),
            &format!(
                r#""$FRUN" -N -k -l 2 -U {words} < in > lines &&
                   while IFS= read -r l; do eval "$l"; done < lines; echo"#
            ),
        );
        assert_code(&dry, 0);
        assert_eq!(out(&dry), out(&real), "{words}");
        assert!(out(&real).contains("x1.txt][x2.txt]"), "{}", out(&real));
    }
}

#[test]
fn counts_of_one_are_singular() {
    let singular_violations = |e: &str| -> Vec<String> {
        let words: Vec<&str> = e.split([' ', '(', ')', ',', ';']).collect();
        words
            .windows(2)
            .filter(|w| {
                w[0] == "1"
                    && [
                        "batches", "records", "bytes", "workers", "attempts", "tasks", "chunks",
                    ]
                    .contains(&w[1])
            })
            .map(|w| w.join(" "))
            .collect()
    };
    assert_eq!(
        singular_violations("x (1 records), 2 batches"),
        ["1 records"]
    );
    let dir = tempfile::tempdir().unwrap();
    let cp = dir.path().join("cp");
    let cp = cp.to_str().unwrap();
    let scripts = [
        // One batch that fails: the summary.
        r#"echo 1 | "$FRUN" false"#.to_string(),
        // A given-up batch of one record.
        r#"echo 1 | FRUN_RETRY_LIMIT=1 "$FRUN" sh -c 'kill -9 $$'"#.to_string(),
        // One batch done before --halt stops the run: the checkpoint note, then the resume.
        format!(
            r#"seq 3 | "$FRUN" -j 1 -l 1 --halt fail=1 --checkpoint-file {cp} sh -c '[ "$1" != 2 ]' sh;
               seq 3 | "$FRUN" -j 1 -l 1 --resume {cp} --checkpoint-file {cp} true"#
        ),
        // A batch counted in bytes (stdin mode, not read through): its whereabouts.
        r#"printf x | "$FRUN" -s false"#.to_string(),
    ];
    for s in &scripts {
        let o = bash_in(dir.path(), s);
        let e = err(&o);
        assert!(e.contains("frun: "), "{s}: expected messages, got {e:?}");
        assert_eq!(singular_violations(&e), Vec::<String>::new(), "{s}: {e}");
    }
}

// ---- item: -n is not xargs -n ----------------------------------------------------------------

#[test]
fn limit_help_tells_xargs_users_about_dash_l() {
    let o = frun(&["--help"], b"");
    assert_clean(&o);
    let help = out(&o);
    let entry: String = help
        .split("\n  -")
        .find(|e| e.starts_with("n, --limit"))
        .expect("-n in --help")
        .to_string();
    assert!(
        entry.contains("xargs -n") && entry.contains("-L"),
        "-n help must point xargs users to -L: {entry}"
    );
    let o = frun(&["-h"], b"");
    let short = out(&o);
    let line = short
        .lines()
        .find(|l| l.trim_start().starts_with("-n, --limit"))
        .unwrap();
    assert!(line.contains("xargs") && line.contains("-L"), "{line}");
}

/// The README's xargs migration rows (`| xargs | frun |` table), as (xargs, frun) cells.
fn readme_migration() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let section = &readme[readme
        .find("Differences from xargs")
        .expect("the README's xargs section")..];
    section
        .lines()
        .skip_while(|l| !l.starts_with("| xargs | frun |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            (cells[1].to_string(), cells[2].to_string())
        })
        .collect()
}

#[test]
fn readme_maps_xargs_flags_and_the_mapping_holds() {
    let rows = readme_migration();
    let row = |x: &str| {
        rows.iter()
            .find(|(a, _)| a.starts_with(x))
            .unwrap_or_else(|| panic!("README migration table lacks {x}: {rows:?}"))
            .1
            .clone()
    };
    assert!(row("`-n N`").contains("`-L N`"), "{rows:?}");
    assert!(row("`-P N`").contains("`-j N`"), "{rows:?}");
    assert!(row("`-I {}").contains("-i"), "{rows:?}");
    // What the table says, checked against the real xargs.
    let input = seq_n(7);
    let x = xargs(&["-n", "3", "-P", "2", "echo"], &input);
    let f = frun(&["-L", "3", "-j", "2", "echo"], &input);
    assert_clean(&f);
    assert_eq!(sorted_lines(&f.stdout), sorted_lines(&x.stdout));
    let x = xargs(&["-I", "{}", "echo", "x{}y", "{}"], &input);
    let f = frun(&["-k", "-L", "1", "-i", "echo", "x{}y", "{}"], &input);
    assert_clean(&f);
    assert_eq!(out(&f), out(&x));
    // And the trap the table warns about: frun's -n is a record limit.
    let f = frun(&["-k", "-n", "3", "echo"], &input);
    assert_clean(&f);
    assert_eq!(
        out(&f).split_whitespace().collect::<Vec<_>>(),
        ["1", "2", "3"]
    );
}

/// Runs frun with stderr on a pipe whose reader has already gone (every write fails, EPIPE).
fn with_broken_stderr(args: &[&str], input: &[u8]) -> Output {
    let (reader, writer) = pipe_files();
    drop(reader);
    let mut child = std::process::Command::new(BIN)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(writer)
        .spawn()
        .expect("spawn frun");
    let fed = feed(child.stdin.take().unwrap(), input.to_vec());
    let stdout = drain(child.stdout.take().unwrap());
    let status = wait_limit(&mut child, LIMIT);
    fed.join().unwrap();
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: Vec::new(),
    }
}

#[test]
fn stderr_with_no_reader_changes_no_status() {
    // 101 would be a panic on writing a message.
    for (args, want) in [
        (&["-x"][..], 2),
        (&["false"], 123),
        (&["no-such-command-frun"], 127),
        (&["-k", "-l", "1", "echo"], 0),
    ] {
        let o = with_broken_stderr(args, &seq_n(3));
        assert_code(&o, want);
        if want == 0 {
            assert_eq!(out(&o), text(&seq(1, 3)));
        }
    }
}

/// A root or container without /dev (so without /dev/null, which commands get as stdin) is
/// said in one line naming /dev/null, not as a bare "No such file or directory". Needs a mount
/// namespace (root and unshare); skipped where there is none.
#[test]
fn a_missing_dev_null_is_named_in_one_line() {
    let probe = std::process::Command::new("unshare")
        .args(["-m", "true"])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("skipped: no mount namespace here (unshare -m)");
        return;
    }
    let frun = env!("CARGO_BIN_EXE_frun");
    let o = bash(&format!(
        "unshare -m sh -c 'mount -t tmpfs none /dev && seq 3 | {frun} echo'"
    ));
    assert_one_line_error(&o, 1, "cannot open /dev/null");
    assert!(err(&o).contains("mount /dev"), "{:?}", err(&o));
}
