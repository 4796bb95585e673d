//! `frun xargs` against GNU xargs (/usr/bin/xargs, findutils 4.9): each case runs both on the
//! same input and compares stdout exactly, the exit status, and stderr where it is the
//! contract (`-t` lines); a property compares them on random quoted input.

use std::ffi::OsString;
use std::process::Output;

use proptest::prelude::*;

use crate::common::{frun, scratch, xargs};

/// Runs `frun xargs ARGS` and `xargs ARGS` on `input`.
fn both(args: &[&str], input: &[u8]) -> (Output, Output) {
    let mut f: Vec<OsString> = vec!["xargs".into()];
    f.extend(args.iter().map(OsString::from));
    (frun(&f, input), xargs(args, input))
}

/// frun's stderr lines without its `frun: ` messages (what the commands and -t wrote).
fn command_stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| {
            !l.starts_with("frun: ")
                && !l.starts_with("/usr/bin/xargs: ")
                && !l.starts_with("xargs: ")
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Same stdout and exit status; with `stderr`, the same stderr besides the tools' messages.
#[track_caller]
fn same(args: &[&str], input: &[u8], stderr: bool) {
    let (f, x) = both(args, input);
    assert_eq!(
        String::from_utf8_lossy(&f.stdout),
        String::from_utf8_lossy(&x.stdout),
        "stdout of xargs {args:?} (frun stderr: {})",
        String::from_utf8_lossy(&f.stderr)
    );
    assert_eq!(
        f.status.code(),
        x.status.code(),
        "status of xargs {args:?}: {}",
        String::from_utf8_lossy(&f.stderr)
    );
    if stderr {
        assert_eq!(
            command_stderr(&f),
            command_stderr(&x),
            "stderr of xargs {args:?}"
        );
    }
}

const PRINT: &[&str] = &["printf", "[%s]\\n"];

fn with<'a>(pre: &[&'a str], cmd: &[&'a str]) -> Vec<&'a str> {
    pre.iter().chain(cmd).copied().collect()
}

#[test]
fn default_input_parsing() {
    let inputs: &[&[u8]] = &[
        b"a b c\n",
        b"  a\t\tb  \n\n c \n",
        b"a\\ b 'c d' \"e'f\" g\\\nh\n",
        b"'' \"\" x\n",
        b"a'b c'd e",
        b"'a\\b' \"c\\d\" e\\'f",
        b"a\\",
        b"a\rb\x0bc\x0cd\te",
        b"no newline at end",
        b"\n\n\n",
        b"",
        "é ü\n".as_bytes(),
        b"a\x01b \x02c\x01\x02\n",
    ];
    for input in inputs {
        same(PRINT, input, false);
        same(&with(&["-n", "2"], PRINT), input, false);
        same(&with(&["-L", "1"], PRINT), input, false);
    }
}

#[test]
fn unmatched_quotes_are_status_1_after_what_came_before() {
    for input in [&b"a b\nc \"d\n"[..], b"x 'y", b"'a\nb'", b"p q\n\"r"] {
        same(&["echo"], input, false);
        same(&["-n1", "echo"], input, false);
    }
    let (f, _) = both(&["echo"], b"a 'b");
    assert!(String::from_utf8_lossy(&f.stderr).contains("xargs: unmatched single quote"));
}

#[test]
fn end_of_file_strings() {
    for args in [
        &["-E", "b", "echo"][..],
        &["-eb", "echo"],
        &["--eof=b", "echo"],
        &["-E", "_", "echo"],
        &["-0", "-E", "b", "echo"],
        &["-d", " ", "-E", "b", "echo"],
        &["-I{}", "-E", "b", "echo", "<{}>"],
        &["-e", "echo"],
    ] {
        same(args, b"a 'b' c\nb\nd _ e\n", false);
    }
}

#[test]
fn null_and_delimiters() {
    let input = b"a b\0'c'\0\0d\\e\n\0last";
    for args in [
        &["-0"][..],
        &["--null"],
        &["-0", "-n", "2"],
        &["-0", "-L", "2"],
        &["-0", "-I", "@", "echo", "<@>"],
    ] {
        same(&with(args, PRINT), input, false);
    }
    for (d, input) in [
        (",", &b"a,,b,c d"[..]),
        ("\\n", b"a b\n'c'\n\nd"),
        ("\\t", b"x\ty z\t"),
        ("\\x41", b"aAbAc"),
        ("\\060", b"a0b0c"),
        ("\\\\", b"a\\b"),
    ] {
        same(&with(&["-d", d], PRINT), input, false);
        same(&with(&["-d", d, "-n", "1"], PRINT), input, false);
    }
    same(&["-d", "ab", "echo"], b"x", false);
}

#[test]
fn arg_file() {
    let path = scratch().join("xargs-arg-file");
    std::fs::write(&path, b"one two\nthree\n").unwrap();
    let p = path.to_str().unwrap();
    same(&with(&["-a", p], PRINT), b"ignored stdin\n", false);
    same(&with(&["--arg-file", p, "-n1"], PRINT), b"", false);
    // The commands keep stdin with -a.
    same(
        &["-a", p, "-n3", "sh", "-c", "cat; echo \"$@\"", "sh"],
        b"from stdin\n",
        false,
    );
    // Without -a they read nothing.
    same(
        &["-n1", "sh", "-c", "cat; echo \"$@\"", "sh"],
        b"x y\n",
        false,
    );
    same(&["-a", "/nonexistent/frun-xargs", "echo"], b"", false);
}

#[test]
fn lines_and_args() {
    let input = b"a b \nc\n\n  \nd e\nf\ng h i\n";
    for args in [
        &["-L", "1"][..],
        &["-L", "2"],
        &["-l"],
        &["-l2"],
        &["--max-lines=3"],
        &["-n", "1"],
        &["-n", "3"],
        &["--max-args", "2"],
        &["-n", "2", "-L", "1"],
        &["-L", "1", "-n", "2"],
        &["-I{}", "-n", "1"],
    ] {
        same(
            &with(args, &["sh", "-c", "echo \"$#: $*\"", "sh"]),
            input,
            false,
        );
    }
}

#[test]
fn an_escaped_trailing_blank_continues_a_line_and_a_quoted_one_does_not() {
    // xargs counts a backslash-escaped blank at the end of a line as a trailing blank.
    for input in [
        &b"\\ \nb\nc\n"[..],
        b"a\\ \nb\nc\n",
        b"a\\\tb\\\t\nc\n",
        b"'a '\nb\n",
        b"\\ \n''\n'a",
        // A blank line neither counts nor ends a continued line.
        b"'' \n\n'a",
        b"a \n\n  \nb\nc\n",
    ] {
        for args in [&["-L", "1"][..], &["-L", "2"]] {
            same(
                &with(args, &["sh", "-c", "echo \"$#: $*\"", "sh"]),
                input,
                false,
            );
        }
    }
}

#[test]
fn replace_strings() {
    let input = b"  a b \n c\n\n\"q r\" s\nd\n";
    for args in [
        &["-I", "{}", "printf", "[%s]\\n", "{}"][..],
        &["-I{}", "echo", "x"],
        &["-i", "echo", "<{}>", "{}{}"],
        &["-iZZ", "echo", "<ZZ>"],
        &["--replace", "echo", "{}-{}"],
        &["--replace=@", "echo", "a@b", "{}"],
        &["-I", "X", "echo", "{}", "X"],
    ] {
        same(args, input, false);
    }
    same(&["-I{}", "echo", "{}"], b"", false);
}

#[test]
fn sizes() {
    let words = "aaaa ".repeat(10);
    for args in [
        &["-s", "20", "echo"][..],
        &["-s", "30", "-n", "2", "echo"],
        &["-x", "-s", "20", "-n", "5", "echo"],
        &["-x", "-s", "20", "echo"],
        &["-x", "-s", "20", "-L", "1", "echo"],
        &["--max-chars=25", "echo"],
    ] {
        same(args, words.as_bytes(), false);
    }
    same(
        &["-s", "20", "echo"],
        b"a aaaaaaaaaaaaaaaaaaaaaaaaaaa b\n",
        false,
    );
    same(&["-s", "0", "echo"], b"", false);
    same(&["-s", "5", "echo"], b"a\n", false);
    // The default command buffer (128 KiB) cuts a long input where xargs does.
    let many: Vec<u8> = (0..60000)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect();
    same(&["echo"], &many, false);
    same(&["-P", "1", "-n", "1000", "echo"], &many, false);
}

#[test]
fn empty_input() {
    same(&["echo", "hi"], b"", false);
    same(&["-r", "echo", "hi"], b"", false);
    same(&["--no-run-if-empty", "echo", "hi"], b"  \n\n", false);
    same(&[], b"a b\nc\n", false);
}

#[test]
fn trace_lines() {
    let input = b"a 'b c' '' \"it's\" x$y\n";
    same(&with(&["-t"], PRINT), input, true);
    same(&with(&["-t", "-n", "1"], PRINT), input, true);
    same(
        &["--verbose", "-0", "printf", "<%s>"],
        b"a\tb\0\x01\0q\"t\0~x\0x~\0#a\0=a\0a*\0",
        true,
    );
}

#[test]
fn prompts_need_a_terminal() {
    // Without one (setsid: no controlling terminal), -p cannot ask: status 1, nothing runs.
    let out = crate::common::bash(
        "printf 'a\\n' | setsid -w \"$FRUN\" xargs -p echo ran; echo \"status $?\"",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("ran"), "{text}");
    assert!(text.contains("status 1"), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("/dev/tty"));
}

#[test]
fn failing_commands() {
    let cases: &[&[&str]] = &[
        &["-n1", "sh", "-c", "echo $0; exit 1"],
        &["-n1", "sh", "-c", "echo $0; exit 255"],
        &["-n1", "sh", "-c", "echo $0; kill -9 $$"],
        &["-n1", "sh", "-c", "echo $0; kill -TERM $$"],
        &["-n1", "sh", "-c", "echo $0; exit 2"],
        &["nonexistent-frun-xargs-command"],
        &["/etc/passwd"],
        &["/"],
        &["-P", "2", "-n", "1", "sh", "-c", "exit 3"],
    ];
    for args in cases {
        same(args, b"a\nb\nc\n", false);
    }
    let (f, _) = both(&["-n1", "sh", "-c", "exit 255"], b"a\n");
    assert!(
        String::from_utf8_lossy(&f.stderr).contains("xargs: sh: exited with status 255; aborting")
    );
}

#[test]
fn parallel_runs_and_slots() {
    let input: Vec<u8> = (1..=40)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect();
    for args in [
        &["-P", "3", "-n", "1", "echo"][..],
        &["-P0", "-n", "5", "echo"],
        &["--max-procs=2", "-L", "3", "echo"],
    ] {
        let (f, x) = both(args, &input);
        assert_eq!(
            crate::common::sorted_lines(&f.stdout),
            crate::common::sorted_lines(&x.stdout),
            "{args:?}"
        );
        assert_eq!(f.status.code(), x.status.code());
    }
    // Each command sees its slot: 0 .. P-1, never more.
    let (f, x) = both(
        &[
            "-P",
            "3",
            "-n",
            "1",
            "--process-slot-var=SLOT",
            "sh",
            "-c",
            "echo $SLOT",
        ],
        &input,
    );
    let slots = |o: &Output| {
        let mut s = crate::common::sorted_lines(&o.stdout);
        s.dedup();
        s
    };
    assert!(
        slots(&f)
            .iter()
            .all(|s| ["0", "1", "2"].contains(&s.as_str())),
        "{:?}",
        slots(&f)
    );
    assert!(
        slots(&x)
            .iter()
            .all(|s| ["0", "1", "2"].contains(&s.as_str()))
    );
    assert_eq!(f.stdout.len(), x.stdout.len());
}

/// A command that starts once another ended takes the lowest slot free then, as xargs gives
/// it (findutils' own suite checks this): 0 1 2 3, then the first one's 0 again.
#[test]
fn a_later_command_takes_the_lowest_free_slot() {
    let args = [
        "-n1",
        "-P4",
        "--process-slot-var=name",
        "bash",
        "-c",
        "sleep $1; echo $name",
        "_",
    ];
    let (f, x) = both(&args, b"0.2\n0.4\n0.6\n0.8\n1.0\n");
    assert_eq!(String::from_utf8_lossy(&x.stdout), "0\n1\n2\n3\n0\n");
    assert_eq!(
        String::from_utf8_lossy(&f.stdout),
        String::from_utf8_lossy(&x.stdout)
    );
}

#[test]
fn bad_options_are_status_1() {
    for args in [
        &["-n", "0"][..],
        &["-P", "-1"],
        &["-n", "x"],
        &["-L", "0"],
        &["-Q"],
        &["--foo"],
        &["-n"],
        &["--null=x"],
        &["--max-args"],
    ] {
        let (f, x) = both(args, b"");
        assert_eq!(f.status.code(), x.status.code(), "{args:?}");
        assert_eq!(f.status.code(), Some(1));
        assert!(f.stdout.is_empty());
        let err = String::from_utf8_lossy(&f.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("xargs: "), "{err}");
    }
}

#[test]
fn help_version_and_limits() {
    for a in ["--help", "--version"] {
        let (f, x) = both(&[a], b"");
        assert_eq!(f.status.code(), Some(0));
        assert_eq!(x.status.code(), Some(0));
        assert!(!f.stdout.is_empty());
    }
    let (f, x) = both(&["--show-limits", "echo"], b"a\n");
    assert_eq!(f.stdout, x.stdout);
    let fl: Vec<String> = String::from_utf8_lossy(&f.stderr)
        .lines()
        .map(|l| l.split(':').next().unwrap_or("").to_string())
        .collect();
    let xl: Vec<String> = String::from_utf8_lossy(&x.stderr)
        .lines()
        .map(|l| l.split(':').next().unwrap_or("").to_string())
        .collect();
    assert_eq!(fl, xl);
}

/// Random words with blanks, quotes, backslashes and newlines.
fn quoted_input() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => "[a-z]{1,6}".prop_map(String::into_bytes),
        2 => Just(b" ".to_vec()),
        1 => Just(b"\t".to_vec()),
        2 => Just(b"\n".to_vec()),
        1 => "'[a-z \t\"\\\\]{0,5}'".prop_map(String::into_bytes),
        1 => "\"[a-z \t'\\\\]{0,5}\"".prop_map(String::into_bytes),
        1 => "\\\\[a-z '\"\n \\\\]".prop_map(String::into_bytes),
        1 => Just(b"'".to_vec()),
        1 => Just(b"''".to_vec()),
    ];
    proptest::collection::vec(piece, 0..30).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    #[test]
    fn random_quoted_input_matches_xargs(input in quoted_input(), k in 1usize..5, lines in any::<bool>()) {
        let k = k.to_string();
        let flag = if lines { "-L" } else { "-n" };
        let args = [flag, k.as_str(), "printf", "[%s]\\n"];
        let (f, x) = both(&args, &input);
        prop_assert_eq!(String::from_utf8_lossy(&f.stdout), String::from_utf8_lossy(&x.stdout));
        prop_assert_eq!(f.status.code(), x.status.code());
    }
}

/// A command that is on no PATH.
const MISSING: &str = "frun-xargs-no-such-command";

#[test]
fn a_missing_command_is_only_an_error_when_one_would_run() {
    // Nothing runs (-r, -I or -E on empty input): what the command is does not matter.
    let quiet: &[&[&str]] = &[
        &["-r", MISSING],
        &["--no-run-if-empty", "-n1", MISSING],
        &["-r", "-L1", MISSING],
        &["-r", "-P2", MISSING],
        &["-r", "-t", MISSING],
        &["-I{}", MISSING, "{}"],
        &["-i", MISSING],
        &["-r", "/etc/passwd"],
        &["-r", "./frun-no-such-file"],
        &["-r", "-0", MISSING],
    ];
    for args in quiet {
        for input in [&b""[..], b"\n", b"  \n\n"] {
            same(args, input, true);
        }
    }
    same(&["-E", "stop", "-r", MISSING], b"stop\nx\n", false);
    // One would run: 127 (126), after -t shows it; without -r, empty input runs it once.
    let failing: &[(&[&str], &[u8])] = &[
        (&["-r", "-t", MISSING], b"x y\n"),
        (&["-t", MISSING], b""),
        (&["-P2", "-n1", MISSING], b"a\nb\nc\n"),
        (&["-I{}", "-t", MISSING, "<{}>"], b"a\n"),
        (&["-r", "/etc/passwd"], b"x\n"),
        (&["-L1", MISSING], b"\n"),
    ];
    for (args, input) in failing {
        same(args, input, true);
        assert!(matches!(both(args, input).0.status.code(), Some(126 | 127)));
    }
    // With no command and no `echo` on PATH either.
    let out = crate::common::bash(
        "for a in -r -rt '-I{}' '-L1 -r'; do PATH=/nonexistent \"$FRUN\" xargs $a </dev/null; \
         echo \"$? $(PATH=/nonexistent /usr/bin/xargs $a </dev/null; echo $?)\"; done",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "0 0\n".repeat(4));
}

/// The same warnings, word for word (both start with `xargs: `).
#[track_caller]
fn same_warnings(args: &[&str], input: &[u8]) {
    let (f, x) = both(args, input);
    let f_err = String::from_utf8_lossy(&f.stderr);
    let x_err = String::from_utf8_lossy(&x.stderr);
    assert_eq!(f_err, x_err, "stderr of xargs {args:?}");
    same(args, input, false);
}

#[test]
fn the_last_of_replace_lines_and_args_counts() {
    let input = b"a b\nc\nd\ne f g\n";
    let cases: &[&[&str]] = &[
        &["-I{}", "-n2", "echo", "{}"],
        &["-I{}", "--max-args=3", "echo", "{}"],
        &["-I{}", "-n1", "echo", "<{}>"],
        &["-i", "-n", "1", "echo", "<{}>"],
        &["-n2", "-I{}", "echo", "{}"],
        &["-I{}", "-L1", "echo", "{}"],
        &["-I{}", "-l", "echo", "{}"],
        &["-L2", "-I{}", "echo", "{}"],
        &["-L2", "-n1", "echo"],
        &["-n2", "-l", "echo"],
        &["-n1", "-L2", "echo"],
        &["-l", "-L2", "echo"],
        &["-L2", "-L3", "echo"],
        &["-I{}", "-n2", "-I{}", "echo", "{}"],
        &["-I{}", "-n2", "-L1", "echo", "{}"],
        &["-I{}", "-n1", "-L1", "echo", "{}"],
        &["-i", "-I{}", "echo", "{}"],
    ];
    for args in cases {
        same_warnings(args, input);
    }
}

/// `\f`, `\r` and `\v` are skipped between items (a CRLF file's blank lines make no command)
/// but are data inside one, in every mode.
#[test]
fn form_feeds_returns_and_vertical_tabs_between_items() {
    let inputs: &[&[u8]] = &[
        b"a\r\n\r\nb\r\n\r\n",
        b"\x0c\r \x0b\n",
        b" \x0cx\x0c y\r\x0bz\n\x0b\n",
        b"a \r\nb\n\x0c\nc d\n",
        b"\r",
    ];
    let modes: &[&[&str]] = &[&[], &["-r"], &["-n1"], &["-L1"], &["-L2"], &["-I{}"]];
    for input in inputs {
        for mode in modes {
            let mut args = mode.to_vec();
            args.extend(if mode.contains(&"-I{}") {
                &["printf", "[%s]\\n", "{}"][..]
            } else {
                PRINT
            });
            same(&args, input, false);
        }
    }
}

/// Stopping at the -E string (ended by a newline or a blank, in every mode) or at a bad quote
/// leaves a seekable stdin just after it: the next reader gets the rest, as with GNU xargs.
#[test]
fn a_seekable_stdin_keeps_what_follows_the_end_string() {
    let script = r#"
        d=$(mktemp -d)
        printf '1\n2\n3\n' > "$d/a"
        printf 'a END b\nc\n' > "$d/b"
        printf 'x\nEND\ny z\n' > "$d/c"
        printf 'p\nq "r\ns\n' > "$d/d"
        seq 100000 | sed 's/^50000$/END/' > "$d/e"
        for x in xargs "$FRUN xargs"; do
            for args in '-E 2' '-E END' '-E END -n1' '-E END -L1' '-E END -IX echo X' '-x -n2'; do
                for f in a b c d; do
                    { $x $args >/dev/null 2>&1; echo "$args $f $?"; cat | head -3; } < "$d/$f"
                done
            done
            # Past the first buffer of either reader.
            for args in '-E END' '-E END -s 2000' '-s 2000 -x'; do
                { $x $args >/dev/null 2>&1; echo "$args e $?"; cat | head -3; } < "$d/e"
            done
            echo ==
        done
        rm -r "$d"
    "#;
    let gnu = same_under_gnu_and_frun(script);
    // The case of findutils' sv-bug-20273, spelt out.
    assert!(gnu.contains("-E 2 a 0\n3\n"), "{gnu}");
}

/// Runs `script`, whose loop prints GNU xargs' lines, `==`, frun's lines, `==`; asserts that
/// frun's are GNU's and returns them.
fn same_under_gnu_and_frun(script: &str) -> String {
    let out = crate::common::bash(script);
    let text = String::from_utf8_lossy(&out.stdout);
    let (gnu, frun) = text.split_once("==\n").expect(&text);
    assert_eq!(frun.trim_end_matches("==\n"), gnu);
    gnu.to_string()
}

/// A run that stops early (a command exited 255, or was killed by a signal) leaves a seekable
/// stdin just after the input of the last command started and of the next one, which GNU
/// xargs has read before it waits for the command that failed; a full run leaves it at the end,
/// and a pipe gives nothing back.
#[test]
fn a_run_that_stops_leaves_the_input_it_did_not_use() {
    let script = r#"
        d=$(mktemp -d)
        seq 10 > "$d/a"
        seq 100000 > "$d/b"
        printf '1\0002\0003\0004\0005\000' > "$d/z"
        fail3='test $0 = 3 && exit 255; echo run $0'
        for x in xargs "$FRUN xargs"; do
            { $x -n1 sh -c "$fail3"; echo "n1 $?"; cat; } < "$d/a" 2>/dev/null
            { $x -P1 -n1 sh -c "$fail3"; echo "P1 $?"; cat; } < "$d/a" 2>/dev/null
            { $x -n3 sh -c 'test $0 = 1 && exit 255; echo run $0'; echo "n3 $?"; cat; } < "$d/a" 2>/dev/null
            { $x -n3 sh -c 'test $0 = 4 && exit 255; echo run $0'; echo "n3b $?"; cat; } < "$d/a" 2>/dev/null
            { $x -n2 sh -c 'test $0 = 5 && kill -9 $$; echo run $0'; echo "kill $?"; cat; } < "$d/a" 2>/dev/null
            { $x -0 -n1 sh -c "$fail3"; echo "z $?"; cat | tr '\0' .; echo; } < "$d/z" 2>/dev/null
            { $x -L2 sh -c "$fail3"; echo "L2 $?"; cat; } < "$d/a" 2>/dev/null
            # Far past the reader's first buffer.
            { $x -n5000 sh -c 'test $0 = 45001 && exit 255; :'; echo "big $?"; cat | head -2; } < "$d/b" 2>/dev/null
            # Two at once: 2 is still running when 3 fails, so 3 is the last one started.
            { $x -P2 -n1 sh -c 'test $0 = 2 && sleep 1; test $0 = 3 && exit 255; :'; echo "P2 $?"; cat; } < "$d/a" 2>/dev/null
            { $x -n1 echo; echo "full $?"; cat; } < "$d/a" 2>/dev/null
            { $x -E 4 -n1 sh -c "$fail3"; echo "E $?"; cat; } < "$d/a" 2>/dev/null
            { $x -E 6 -n1 sh -c "$fail3"; echo "E6 $?"; cat; } < "$d/a" 2>/dev/null
            seq 10 | { $x -n1 sh -c "$fail3"; echo "pipe $?"; cat; } 2>/dev/null
            echo ==
        done
        rm -r "$d"
    "#;
    let gnu = same_under_gnu_and_frun(script);
    assert!(gnu.contains("run 2\nn1 124\n5\n6\n"), "{gnu}");
    assert!(gnu.contains("n3 124\n7\n"), "{gnu}");
    assert!(gnu.contains("big 124\n55001\n"), "{gnu}");
    assert!(gnu.contains("full 0\nrun 1\nrun 2\nE 124\n5\n"), "{gnu}");
}

/// -I fills the command line and counts that against -s (not the template plus the item).
#[test]
fn replace_counts_the_filled_command_against_s() {
    let input = b"1\n22\n333\n4444\n55555\n666666\n7777777\n";
    for s in ["12", "14", "15", "16", "17", "18", "20", "22", "25"] {
        same(&["-IARG", "-s", s, "echo", "ARG"], input, false);
        same(&["-IARG", "-s", s, "echo", "xARGx", "ARG"], input, false);
        same(&["-i", "-s", s, "echo", "{}{}"], input, false);
    }
}

/// With -x, an unmatched quote runs nothing of the command still being filled.
#[test]
fn exit_if_too_long_runs_nothing_before_an_unmatched_quote() {
    for input in [&b"one\n\"two\nthree"[..], b"a b\nc 'd\n", b"a\nb\nc\n\"d\n"] {
        for args in [
            &["-x", "echo"][..],
            &["-n2", "-x", "echo"],
            &["-s20", "-x", "echo"],
        ] {
            same(args, input, false);
        }
    }
}

/// -t prints a run of control bytes in one `$'…'`, as GNU does.
#[test]
fn trace_prints_control_runs_together() {
    same(
        &["-t", "-0", "echo", "a"],
        b"\x0c\r\t\x0b\n\0x\x01\x02y\0 \n\t\0",
        true,
    );
}

/// Messages start with the name xargs was invoked as: its path for a link (as GNU prints its
/// argv[0]), `xargs` for `frun xargs`.
#[test]
fn messages_name_xargs_as_invoked() {
    let out = crate::common::bash(
        r#"d=$(mktemp -d); ln -s "$FRUN" "$d/xargs"; mkdir "$d/g"; ln -s /usr/bin/xargs "$d/g/xargs"
           echo "a 'b" | "$d/xargs" 2>&1 >/dev/null; echo "a 'b" | "$d/g/xargs" 2>&1 >/dev/null
           echo | "$FRUN" xargs -n 2>&1 | head -1; echo | xargs -n 2>&1 | head -1
           rm -r "$d""#,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    let quote = "/xargs: unmatched single quote; by default quotes are special to xargs unless you \
                 use the -0 option";
    assert!(lines[0].ends_with(quote), "{text}");
    assert!(lines[1].ends_with(quote), "{text}");
    assert_eq!(lines[0].len() + 2, lines[1].len(), "{text}");
    assert!(
        lines[2].starts_with("xargs: option requires an argument -- 'n'"),
        "{text}"
    );
    assert!(
        lines[3].starts_with("xargs: option requires an argument -- 'n'"),
        "{text}"
    );
}
