//! Command-line surface: flags, aliases, value forms, units, undo forms, help/version, usage
//! errors and `-N` quoting.

use crate::common::*;

const SEQ10_BY3: &str = "1 2 3\n4 5 6\n7 8 9\n10\n";

#[test]
fn help_short_and_long_mention_every_flag() {
    for h in ["-h", "--help"] {
        let o = frun(&[h], b"");
        assert_clean(&o);
        let s = out(&o);
        for flag in [
            "-j",
            "--workers",
            "-P",
            "-l",
            "--lines",
            "-L",
            "--exact-lines",
            "-k",
            "--keep-order",
            "--ordered",
            "--buffered",
            "--atomic",
            "-u",
            "--unbuffered",
            "--realtime",
            "-o",
            "--order",
            "-i",
            "--insert",
            "-I",
            "--insert-id",
            "-n",
            "--limit",
            "-t",
            "--timeout",
            "-z",
            "--null",
            "-0",
            "-d",
            "--delimiter",
            "-a",
            "--arg-file",
            "-U",
            "--unsafe",
            "-X",
            "--external",
            "-N",
            "--dry-run",
            "-v",
            "--stats",
            "-V",
            "--version",
            "-h",
            "--help",
        ] {
            // A flag must appear as a word of its own (followed by a separator, not more letters).
            let found = s.match_indices(flag).any(|(i, _)| {
                let after = s[i + flag.len()..].chars().next();
                let before = s[..i].chars().last();
                !matches!(after, Some(c) if c.is_ascii_alphanumeric() || c == '-')
                    && !matches!(before, Some(c) if c.is_ascii_alphanumeric() || c == '-')
            });
            assert!(found, "{h} output does not mention {flag}:\n{s}");
        }
    }
}

#[test]
fn short_version_is_exact() {
    let o = frun(&["-V"], b"");
    assert_clean(&o);
    assert_eq!(out(&o), "frun 0.1.0\n");
}

#[test]
fn long_version_has_commit_and_target() {
    let o = frun(&["--version"], b"");
    assert_clean(&o);
    let s = out(&o);
    let rest = s
        .strip_prefix("frun 0.1.0 (commit ")
        .unwrap_or_else(|| panic!("bad --version: {s:?}"));
    let rest = rest.strip_suffix(")\n").expect("ends with )\\n");
    let (commit, target) = rest.split_once(", target ").expect("has ', target '");
    assert!(
        commit == "unknown"
            || (!commit.is_empty() && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "commit must be a hash or unknown: {commit:?}"
    );
    assert!(
        target.starts_with(std::env::consts::ARCH) && target.contains(std::env::consts::OS),
        "target {target:?} does not describe this {} {} machine",
        std::env::consts::ARCH,
        std::env::consts::OS
    );
}

#[test]
fn default_command_is_echo() {
    let input = b"a b\n-x\nc\n";
    let o = frun(&["-k", "-l", "1"], input);
    assert_clean(&o);
    let reference = run_prog("xargs", &["-d", "\\n", "-n", "1", "echo"], input);
    assert_eq!(out(&o), out(&reference));
    assert_eq!(out(&o), "a b\n-x\nc\n");
}

#[test]
fn words_after_cmd_are_literal_not_flags() {
    // `-n` after CMD belongs to echo (suppresses the newline), not to frun's --limit.
    let o = frun(&["echo", "-n", "x"], b"y\n");
    assert_clean(&o);
    assert_eq!(out(&o), "x y");
    // No shell parsing of fixed arguments.
    let o = frun(&["printf", "[%s]", "$HOME", "*", "a b", "'q'"], b"r\n");
    assert_clean(&o);
    assert_eq!(out(&o), "[$HOME][*][a b]['q'][r]");
}

#[test]
fn double_dash_ends_flags() {
    let o = frun(&["-k", "-l", "2", "--", "printf", "<%s>"], b"1\n2\n3\n");
    assert_clean(&o);
    assert_eq!(out(&o), "<1><2><3>");
    // A command whose name looks like a flag is only reachable after `--`.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("-k");
    std::fs::write(&script, "#!/bin/sh\necho \"dash-k $*\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = frun_cmd()
        .current_dir(dir.path())
        .args(["-l", "5", "--", "./-k", "arg"])
        .write_stdin("z\n")
        .output()
        .unwrap();
    assert_clean(&o);
    assert_eq!(out(&o), "dash-k arg z\n");
}

#[test]
fn lines_and_exact_lines_value_forms() {
    for (short, long) in [("-l", "--lines"), ("-L", "--exact-lines")] {
        let forms: [Vec<String>; 5] = [
            vec![format!("{short}3")],
            vec![short.into(), "3".into()],
            vec![format!("{short}=3")],
            vec![long.into(), "3".into()],
            vec![format!("{long}=3")],
        ];
        for args in forms {
            let mut a: Vec<String> = vec!["-k".into()];
            a.extend(args.iter().cloned());
            a.push("echo".into());
            let o = frun(&a, &seq_n(10));
            assert_clean(&o);
            assert_eq!(out(&o), SEQ10_BY3, "args {args:?}");
        }
    }
}

/// Parses the `-v` line into key/value pairs.
fn stats_fields(stderr: &str) -> Vec<(String, String)> {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("frun: stats: "))
        .unwrap_or_else(|| panic!("no stats line in {stderr:?}"));
    line["frun: stats: ".len()..]
        .split_whitespace()
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .unwrap_or_else(|| panic!("bad field {kv:?}"));
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

fn is_decimal(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_digit() || c == '.')
        && s.chars().filter(|&c| c == '.').count() <= 1
        && s.chars().next().unwrap().is_ascii_digit()
}

#[test]
fn stats_line_format_and_exact_counts() {
    for flag in ["-v", "--stats"] {
        // One node: exactly one line (per-node lines are tests/numa.rs's).
        let o = frun(&[flag, "--nodes", "none", "-l", "3", "true"], &seq_n(10));
        assert_code(&o, 0);
        assert_eq!(out(&o), "");
        let e = err(&o);
        assert_eq!(e.lines().count(), 1, "exactly one stats line: {e:?}");
        let f = stats_fields(&e);
        let keys: Vec<&str> = f.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "batches",
                "records",
                "workers",
                "wall",
                "cpu",
                "utilisation",
                "cpus",
                "records_per_s"
            ]
        );
        assert_eq!(field(&f, "batches"), "4");
        assert_eq!(field(&f, "records"), "10");
        let (n, m) = field(&f, "workers").split_once('/').expect("workers=N/M");
        let (n, m): (u32, u32) = (n.parse().unwrap(), m.parse().unwrap());
        assert!(n >= 1 && n <= m, "workers={n}/{m}");
        let wall = field(&f, "wall");
        assert!(
            wall.ends_with('s') && is_decimal(&wall[..wall.len() - 1]),
            "{wall}"
        );
        let cpu = field(&f, "cpu");
        assert!(
            cpu.ends_with('s') && is_decimal(&cpu[..cpu.len() - 1]),
            "{cpu}"
        );
        let u = field(&f, "utilisation");
        assert!(u.ends_with('%') && is_decimal(&u[..u.len() - 1]), "{u}");
        let cpus: usize = field(&f, "cpus").parse().unwrap();
        assert!(cpus >= 1);
        assert!(is_decimal(field(&f, "records_per_s")));
    }
}

fn nproc() -> u32 {
    let o = std::process::Command::new("nproc").output().unwrap();
    text(&o.stdout).trim().parse().unwrap()
}

fn stats_workers_max(args: &[&str]) -> u32 {
    let mut a = vec!["-v", "-k", "-l", "1"];
    a.extend_from_slice(args);
    a.push("echo");
    let o = frun(&a, &seq_n(20));
    assert_code(&o, 0);
    assert_eq!(out(&o), text(&seq_n(20)), "args {args:?}");
    let f = stats_fields(&err(&o));
    assert_eq!(field(&f, "records"), "20");
    assert_eq!(field(&f, "batches"), "20");
    field(&f, "workers")
        .split_once('/')
        .unwrap()
        .1
        .parse()
        .unwrap()
}

#[test]
fn workers_value_forms_and_aliases() {
    for args in [
        &["-j3"][..],
        &["-j", "3"],
        &["-j=3"],
        &["-P", "3"],
        &["-P3"],
        &["--workers", "3"],
        &["--workers=3"],
        &["-j", "1:3"],
        &["-j", "2:3"],
        &["-j", "3:3"],
    ] {
        assert_eq!(stats_workers_max(args), 3, "args {args:?}");
    }
    assert_eq!(stats_workers_max(&["-j", "1"]), 1);
}

#[test]
fn workers_zero_and_auto_mean_usable_cpus() {
    let cpus = nproc();
    for args in [&["-j", "0"][..], &["-j", "auto"], &["--workers=auto"], &[]] {
        assert_eq!(stats_workers_max(args), cpus, "args {args:?}");
    }
    let o = frun(&["-v", "true"], b"x\n");
    let f = stats_fields(&err(&o));
    assert_eq!(field(&f, "cpus"), cpus.to_string());
}

#[test]
fn workers_init_above_max_is_usage_error() {
    let o = frun(&["-j", "3:1", "echo"], b"a\n");
    assert_usage_error(&o, &["-j", "--workers", "-P"]);
}

/// Records "1" (slow) then several "0" (instant) with two workers, one record per batch: in
/// completion order the slow one comes last, in input order first.
const SLOW_FIRST: &[u8] = b"1\n0\n0\n0\n0\n";
const SLEEPER: [&str; 4] = ["sh", "-c", "sleep \"$1\"; echo \"$1\"", "sh"];

fn mode_run(mode_args: &[&str]) -> Vec<String> {
    let mut a = vec!["-j", "2", "-l", "1"];
    a.extend_from_slice(mode_args);
    a.extend_from_slice(&SLEEPER);
    let o = frun(&a, SLOW_FIRST);
    assert_clean(&o);
    let l = lines(&o.stdout);
    let mut s = l.clone();
    s.sort();
    assert_eq!(s, ["0", "0", "0", "0", "1"], "mode {mode_args:?}");
    l
}

/// Runs [`mode_run`] for every mode at once (each run mostly sleeps).
fn run_modes(modes: &[&[&str]]) -> Vec<Vec<String>> {
    std::thread::scope(|sc| {
        let hs: Vec<_> = modes
            .iter()
            .map(|m| sc.spawn(move || mode_run(m)))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn ordered_mode_aliases() {
    let modes: &[&[&str]] = &[
        &["-k"][..],
        &["--keep-order"],
        &["--ordered"],
        &["-o", "ordered"],
        &["-oordered"],
        &["-o=ordered"],
        &["--order", "ordered"],
        &["--order=ordered"],
        &["-u", "-k"],
        &["-o", "unbuffered", "--keep-order"],
    ];
    for (m, l) in modes.iter().zip(run_modes(modes)) {
        assert_eq!(l[0], "1", "mode {m:?} is not in input order");
    }
}

#[test]
fn buffered_mode_aliases_are_completion_order() {
    let modes: &[&[&str]] = &[
        &[][..],
        &["--buffered"],
        &["--atomic"],
        &["-o", "buffered"],
        &["-o", "atomic"],
        &["--order=buffered"],
        &["-k", "+k"],
        &["-k", "--buffered"],
        &["-k", "-o", "atomic"],
        &["-u", "+u"],
        &["-o", "ordered", "+o"],
        &["-kv", "+kv"],
    ];
    for (m, l) in modes.iter().zip(run_modes(modes)) {
        assert_eq!(l.last().unwrap(), "1", "mode {m:?} is not completion order");
    }
}

#[test]
fn unbuffered_mode_aliases_stream_child_output() {
    // Each batch prints a line, sleeps, prints another; unbuffered output shows both batches'
    // first lines before either second line.
    let script = "echo \"$1-1\"; sleep 1.5; echo \"$1-2\"";
    let modes: &[&[&str]] = &[
        &["-u"],
        &["--unbuffered"],
        &["--realtime"],
        &["-o", "unbuffered"],
        &["--order=realtime"],
        &["-k", "-u"],
        &["--ordered", "--realtime"],
    ];
    std::thread::scope(|sc| {
        for m in modes {
            sc.spawn(move || {
                let mut a = vec!["-j", "2", "-l", "1"];
                a.extend_from_slice(m);
                a.extend_from_slice(&["sh", "-c", script, "sh"]);
                let o = frun(&a, b"A\nB\n");
                assert_clean(&o);
                let l = lines(&o.stdout);
                assert_eq!(l.len(), 4, "mode {m:?}: {l:?}");
                assert!(
                    l[0].ends_with("-1") && l[1].ends_with("-1"),
                    "mode {m:?}: batches' output did not interleave: {l:?}"
                );
            });
        }
    });
}

#[test]
fn bad_order_mode_is_usage_error() {
    for v in ["foo", "", "ORDERED", "keep"] {
        let o = frun(&["-o", v, "echo"], b"a\n");
        assert_usage_error(&o, &["-o", "--order"]);
    }
}

#[test]
fn null_delimiter_spellings() {
    let input = b"a b\0\0c\nd\0e";
    let expected = "[a b][][c\nd][e]";
    for args in [
        &["-z"][..],
        &["-0"],
        &["--null"],
        &["-d", ""],
        &["-d="],
        &["-d", "\\0"],
        &["-d", "\\x00"],
        &["-d", "\\000"],
        &["--delimiter", "\\0"],
        &["--delimiter="],
    ] {
        let mut a: Vec<&str> = vec!["-k", "-l", "10"];
        a.extend_from_slice(args);
        a.extend_from_slice(&["printf", "[%s]"]);
        let o = frun(&a, input);
        assert_clean(&o);
        assert_eq!(out(&o), expected, "args {args:?}");
    }
}

#[test]
fn null_undo_returns_to_newline() {
    for undo in [["-z", "+z"], ["-0", "+0"], ["--null", "+z"]] {
        let mut a = undo.to_vec();
        a.extend_from_slice(&["-k", "-l", "10", "printf", "[%s]"]);
        let o = frun(&a, b"a b\nc\n");
        assert_clean(&o);
        assert_eq!(out(&o), "[a b][c]", "{undo:?}");
    }
}

#[test]
fn limit_value_forms_and_units() {
    let cases: &[(&[&str], u64)] = &[
        (&["-n", "5"], 5),
        (&["-n5"], 5),
        (&["-n=5"], 5),
        (&["--limit", "5"], 5),
        (&["--limit=5"], 5),
        (&["-n", "1k"], 1000),
        (&["-n", "1Ki"], 1024),
        (&["-n", "2k"], 2000),
        (&["-n", "5", "+n"], 3000),
        (&["-n", "1g"], 3000),
        (&["-n", "1Gi"], 3000),
        (&["-n", "2t"], 3000),
        (&["-n", "1Ti"], 3000),
        (&["-n", "1p"], 3000),
        (&["-n", "1Pi"], 3000),
        (&["-n", "1e"], 3000),
        (&["-n", "1Ei"], 3000),
        (&["-n", "100000"], 3000),
    ];
    for (args, n) in cases {
        let mut a: Vec<&str> = args.to_vec();
        a.extend_from_slice(&["-k", "-l", "1:-1", "printf", "%s\\n"]);
        let o = frun(&a, &seq_n(3000));
        assert_clean(&o);
        assert_eq!(o.stdout, seq_n(*n), "args {args:?}");
    }
}

#[test]
fn limit_large_units() {
    // 1m = 1000000 and 1Mi = 1048576 records.
    let input = seq_n(1_100_000);
    for (u, n) in [("1m", 1_000_000u64), ("1Mi", 1_048_576)] {
        let o = frun(
            &["-n", u, "-k", "-l", "65536", "sh", "-c", "echo $#", "sh"],
            &input,
        );
        assert_clean(&o);
        let c = counts(&o.stdout);
        assert_eq!(c.iter().sum::<usize>() as u64, n, "-n {u}");
    }
}

#[test]
fn lines_and_exact_lines_take_units() {
    let o = frun_from_file(
        &["-k", "-l", "2Ki", "sh", "-c", "echo $#", "sh"],
        &seq_n(5000),
    );
    assert_clean(&o);
    assert_eq!(counts(&o.stdout), [2048, 2048, 904]);
    let o = frun_from_file(
        &["-k", "-L", "1k", "sh", "-c", "echo $#", "sh"],
        &seq_n(2500),
    );
    assert_clean(&o);
    assert_eq!(counts(&o.stdout), [1000, 1000, 500]);
}

#[test]
fn timeout_value_forms_are_accepted() {
    for args in [
        &["-t", "100000"][..],
        &["-t100000"],
        &["-t=100000"],
        &["--timeout", "100k"],
        &["--timeout=100k"],
    ] {
        let mut a: Vec<&str> = args.to_vec();
        a.extend_from_slice(&["-k", "-l", "4", "echo"]);
        let o = frun(&a, &seq_n(10));
        assert_clean(&o);
        assert_eq!(out(&o), "1 2 3 4\n5 6 7 8\n9 10\n", "args {args:?}");
    }
}

#[test]
fn arg_file_value_forms() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("recs");
    std::fs::write(&f, "x\ny y\n").unwrap();
    let p = f.to_str().unwrap();
    let eq = format!("--arg-file={p}");
    let short_joined = format!("-a{p}");
    let short_eq = format!("-a={p}");
    for args in [
        vec!["-a", p],
        vec![short_joined.as_str()],
        vec![short_eq.as_str()],
        vec!["--arg-file", p],
        vec![eq.as_str()],
    ] {
        let mut a = args.clone();
        a.extend_from_slice(&["-k", "-l", "1", "printf", "[%s]"]);
        // stdin carries different data that must not be read as records.
        let o = frun(&a, b"NOT-A-RECORD\n");
        assert_clean(&o);
        assert_eq!(out(&o), "[x][y y]", "args {args:?}");
    }
}

#[test]
fn missing_arg_file_is_usage_error() {
    let o = frun(&["-a", "/nonexistent/frun-test-file", "echo"], b"");
    assert_usage_error(&o, &[]);
}

#[test]
fn insert_and_insert_id_long_forms() {
    let o = frun(&["--insert", "-k", "-l", "2", "echo", "x{}y"], b"a\nb\n");
    assert_clean(&o);
    assert_eq!(out(&o), "xay xby\n");
    let o = frun(&["--insert-id", "-l", "5", "echo", "id={ID}"], b"a\nb\n");
    assert_clean(&o);
    let s = out(&o);
    let rest = s.strip_prefix("id=").unwrap_or_else(|| panic!("{s:?}"));
    let (id, recs) = rest.split_once(' ').unwrap();
    assert_eq!(recs, "a b\n");
    let parts: Vec<&str> = id.split('.').collect();
    assert_eq!(parts.len(), 3, "{id}");
    assert!(parts.iter().all(|p| p.parse::<u64>().is_ok()), "{id}");
}

#[test]
fn unsafe_long_form_and_external_is_a_no_op() {
    let o = frun(&["--unsafe", "printf", "[%s]\\n"], b"a b\n");
    assert_clean(&o);
    assert_eq!(out(&o), "[a]\n[b]\n");
    let o = frun(&["-U", "printf", "[%s]\\n"], b"a b\n");
    assert_clean(&o);
    assert_eq!(out(&o), "[a]\n[b]\n");
    let o = frun(&["-U", "+U", "printf", "[%s]\\n"], b"a b\n");
    assert_clean(&o);
    assert_eq!(out(&o), "[a b]\n");
    for x in ["-X", "--external"] {
        let o = frun(&[x, "-k", "-l", "2", "printf", "[%s]"], b"a b\n*\n$HOME\n");
        assert_clean(&o);
        assert_eq!(out(&o), "[a b][*][$HOME]", "{x}");
    }
}

#[test]
fn clustered_short_flags() {
    let o = frun(
        &[
            "-kv",
            "-l",
            "1",
            "-j",
            "2",
            "sh",
            "-c",
            "sleep \"$1\"; echo \"$1\"",
            "sh",
        ],
        SLOW_FIRST,
    );
    assert_code(&o, 0);
    assert_eq!(lines(&o.stdout)[0], "1", "-kv must keep order");
    assert!(err(&o).starts_with("frun: stats: "), "-kv must print stats");
    let o = frun(&["-zk", "-l", "5", "printf", "[%s]"], b"a\0b\0");
    assert_clean(&o);
    assert_eq!(out(&o), "[a][b]");
}

#[test]
fn dry_run_prints_batches() {
    for f in ["-N", "--dry-run"] {
        let o = frun(&[f, "-k", "-l", "2", "echo"], &seq_n(5));
        assert_clean(&o);
        assert_eq!(out(&o), "echo 1 2\necho 3 4\necho 5\n", "{f}");
    }
    let o = frun(&["-N", "echo"], b"a b\n");
    assert_clean(&o);
    assert_eq!(out(&o), "echo 'a b'\n");
}

#[test]
fn dry_run_does_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("made");
    let m = marker.to_str().unwrap();
    let o = frun(&["-N", "touch"], format!("{m}\n").as_bytes());
    assert_clean(&o);
    assert_eq!(out(&o), format!("touch {m}\n"));
    assert!(!marker.exists(), "-N must not run the command");
}

#[test]
fn dry_run_quoting_rules() {
    let cases: &[(&[u8], &str)] = &[
        (b"plain", "plain"),
        (b"A-Za-z0-9@%_+=:,./-", "A-Za-z0-9@%_+=:,./-"),
        (b"", "''"),
        (b"a b", "'a b'"),
        (b"it's", "'it'\\''s'"),
        (b"'", "''\\'''"),
        (b"$HOME", "'$HOME'"),
        (b"*", "'*'"),
        (b"a\tb", "'a\tb'"),
        (b"~", "'~'"),
        (b"x;y", "'x;y'"),
        (b"\"", "'\"'"),
        (b"back\\slash", "'back\\slash'"),
        ("é".as_bytes(), "'é'"),
    ];
    for (rec, want) in cases {
        let mut input = rec.to_vec();
        input.push(b'\n');
        let o = frun(&["-N", "-l", "1", "printf", "%s\\n"], &input);
        assert_clean(&o);
        assert_eq!(
            out(&o),
            format!("printf '%s\\n' {want}\n"),
            "record {:?}",
            text(rec)
        );
    }
}

#[test]
fn dry_run_keeps_command_as_typed_and_applies_insert() {
    let o = frun(&["-N", "/bin/echo", "x y"], b"r\n");
    assert_clean(&o);
    assert_eq!(out(&o), "/bin/echo 'x y' r\n");
    let o = frun(
        &["-N", "-k", "-l", "2", "-i", "cp", "{}", "{}.bak"],
        b"a\nb\n",
    );
    assert_clean(&o);
    assert_eq!(out(&o), "cp a b a.bak b.bak\n");
}

#[test]
fn unknown_flags_are_usage_errors() {
    for (args, name) in [
        (&["--frobnicate"][..], "--frobnicate"),
        (&["-x"], "-x"),
        (&["+q"], "+q"),
        (&["--frobnicate=3"], "--frobnicate"),
    ] {
        let mut a = args.to_vec();
        a.push("echo");
        let o = frun(&a, b"a\n");
        assert_usage_error(&o, &[name]);
    }
}

#[test]
fn bad_values_are_usage_errors() {
    let cases: &[(&[&str], &[&str])] = &[
        (&["-l", "abc"], &["-l", "--lines"]),
        (&["-l", "1:2:3"], &["-l", "--lines"]),
        (&["--lines=x"], &["-l", "--lines"]),
        (&["-n", "-3"], &["-n", "--limit"]),
        (&["-n", "abc"], &["-n", "--limit"]),
        (&["-n", "1q"], &["-n", "--limit"]),
        (&["-d", "ab"], &["-d", "--delimiter"]),
        (&["-L", "0"], &["-L", "--exact-lines"]),
        (&["-L", "x"], &["-L", "--exact-lines"]),
        (&["-j", "3:1"], &["-j", "-P", "--workers"]),
        (&["-j", "many"], &["-j", "-P", "--workers"]),
        (&["-t", "soon"], &["-t", "--timeout"]),
        (&["-o", "sideways"], &["-o", "--order"]),
    ];
    for (args, names) in cases {
        let mut a = args.to_vec();
        a.push("echo");
        let o = frun(&a, b"a\n");
        assert_usage_error(&o, names);
    }
}

#[test]
fn missing_value_is_usage_error() {
    for (f, names) in [
        ("-l", &["-l", "--lines"][..]),
        ("--limit", &["-n", "--limit"]),
        ("-a", &["-a", "--arg-file"]),
    ] {
        let o = frun(&[f], b"a\n");
        assert_usage_error(&o, names);
    }
}

#[test]
fn normal_run_is_silent_on_stderr() {
    let o = frun(&["-k", "-l", "7", "-j", "2", "echo"], &seq_n(100));
    assert_clean(&o);
    let reference = xargs(&["-d", "\\n", "-n", "7", "echo"], &seq_n(100));
    assert_eq!(o.stdout, reference.stdout);
}

/// Runs 12 batches that each hold a token in a directory for 0.4 s, with `-j W`; returns the
/// most tokens ever seen at once.
fn peak_concurrency(w: &str) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let script = format!(
        "touch {d}/run.$1; ls {d} | grep -c '^run' >> {d}/peaks; sleep 0.4; \\
         ls {d} | grep -c '^run' >> {d}/peaks; rm {d}/run.$1"
    );
    let o = frun(&["-l", "1", "-j", w, "sh", "-c", &script, "sh"], &seq_n(12));
    assert_clean(&o);
    let peaks = std::fs::read_to_string(dir.path().join("peaks")).unwrap();
    peaks
        .lines()
        .map(|l| l.trim().parse::<usize>().unwrap())
        .max()
        .unwrap()
}

#[test]
fn workers_bound_concurrency() {
    assert_eq!(peak_concurrency("1"), 1);
    let p = peak_concurrency("3");
    assert!(p <= 3, "-j 3 ran {p} commands at once");
    assert!(p >= 2, "-j 3 never ran commands in parallel");
    let p = peak_concurrency("1:2");
    assert!(p <= 2, "-j 1:2 ran {p} commands at once");
}

#[test]
fn plus_undoes_value_flags() {
    // +l and +L: back to the adaptive default, which starts with a one-record batch.
    for undo in [["-l", "5", "+l"], ["-L", "2", "+L"]] {
        let mut a = vec!["-k"];
        a.extend_from_slice(&undo);
        a.extend_from_slice(&["sh", "-c", "echo $#", "sh"]);
        let o = frun(&a, &seq_n(5));
        assert_clean(&o);
        let c = counts(&o.stdout);
        assert_eq!(c.iter().sum::<usize>(), 5, "{undo:?}");
        assert_eq!(c[0], 1, "{undo:?}: {c:?}");
    }
    // +d: back to newline.
    let o = frun(
        &["-k", "-d", ",", "+d", "-l", "9", "printf", "[%s]"],
        b"a,b\nc\n",
    );
    assert_clean(&o);
    assert_eq!(out(&o), "[a,b][c]");
    // +a: back to stdin.
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), "from-file\n").unwrap();
    let o = frun(
        &["-a", f.path().to_str().unwrap(), "+a", "echo"],
        b"from-stdin\n",
    );
    assert_clean(&o);
    assert_eq!(out(&o), "from-stdin\n");
    // +j: back to the default worker count.
    let o = frun(&["-v", "-j", "1", "+j", "-l", "1", "true"], &seq_n(3));
    let f = stats_fields(&err(&o));
    assert_eq!(
        field(&f, "workers").split_once('/').unwrap().1,
        nproc().to_string()
    );
    // +t: no timeout; the batch still holds all records.
    let o = frun(&["-t", "5", "+t", "-k", "-l", "9", "echo"], &seq_n(3));
    assert_clean(&o);
    assert_eq!(out(&o), "1 2 3\n");
    // +n with a value flag given as a cluster.
    let o = frun(&["-n3", "+n", "-k", "-l", "9", "echo"], &seq_n(5));
    assert_clean(&o);
    assert_eq!(out(&o), "1 2 3 4 5\n");
}

#[test]
fn plus_undoes_switches() {
    // +N: runs for real.
    let o = frun(&["-N", "+N", "echo", "hi"], b"x\n");
    assert_clean(&o);
    assert_eq!(out(&o), "hi x\n");
    // +v: no stats.
    let o = frun(&["-v", "+v", "true"], b"x\n");
    assert_clean(&o);
    // +I: {ID} stays literal.
    let o = frun(&["-I", "+I", "echo", "{ID}"], b"x\n");
    assert_clean(&o);
    assert_eq!(out(&o), "{ID} x\n");
    // +X is accepted.
    let o = frun(&["-X", "+X", "echo"], b"x\n");
    assert_clean(&o);
    assert_eq!(out(&o), "x\n");
}
