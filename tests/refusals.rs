//! Lines and values frun does not understand or cannot pass are refused, never run as
//! something else: perl expressions where frun evaluates none (and all of them without perl), values too long for one
//! argument, NUL bytes inside values (`\0` in their place, as GNU Parallel has it), an empty
//! column separator. Each case states what GNU
//! Parallel does and checks that nothing ran (files the command would have touched are there,
//! nothing on stdout).

use crate::common::*;

#[test]
fn a_perl_expression_is_evaluated_as_gnu_parallel_does_or_refused_where_frun_has_none() {
    let dir = tempfile::tempdir().unwrap();
    // GNU Parallel joins the words and evaluates `s/\.bak$//`: it removes x, not x.bak.
    std::fs::write(dir.path().join("x"), "").unwrap();
    std::fs::write(dir.path().join("x.bak"), "").unwrap();
    let o = bash_in(
        dir.path(),
        r#""$FRUN" parallel rm -f {= 's/\.bak$//' =} ::: x.bak"#,
    );
    assert_code(&o, 0);
    assert!(!dir.path().join("x").exists() && dir.path().join("x.bak").exists());
    // Split over words, one word, glued to text, positional, with -X: GNU's values.
    for (line, want) in [
        (r#""$FRUN" parallel echo {= s/a/b/ =} ::: a"#, "b\n"),
        (r#""$FRUN" parallel echo {=s/a/b/=} ::: a"#, "b\n"),
        (r#""$FRUN" parallel echo l{= s/a/b/ =}x ::: a"#, "lbx\n"),
        (r#""$FRUN" parallel echo {=1 s/a/b/ =} ::: a"#, "b\n"),
        (
            r#""$FRUN" parallel -j1 -X echo {= s/a/b/ =} ::: a b"#,
            "b b\n",
        ),
        (r#""$FRUN" parallel 'echo {= s/a/b/' '=}' ::: a"#, "b\n"),
        // A tag is filled in as GNU Parallel fills it, its perl strings too.
        (
            r#""$FRUN" parallel --tagstring '{= s/a/b/ =}' echo ::: a"#,
            "b\ta\n",
        ),
    ] {
        let o = bash_in(dir.path(), line);
        assert_code(&o, 0);
        assert_eq!(out(&o), want, "{line}");
    }
    // Where frun evaluates no perl (--results names, --pipe): refused, nothing runs.
    for (line, expression) in [
        (
            r#""$FRUN" parallel --results 'o/{= s/a/b/ =}' echo ::: a"#,
            "{= s/a/b/ =}",
        ),
        (
            r#"echo a | "$FRUN" parallel --pipe echo {= s/a/b/ =}"#,
            "{= s/a/b/ =}",
        ),
    ] {
        let o = bash_in(dir.path(), line);
        assert_one_line_error(&o, 255, expression);
    }
    assert!(!dir.path().join("o").exists(), "--results made nothing");
    // frun's own -i: a usage error (2), not text passed to echo.
    let o = bash_in(dir.path(), r#""$FRUN" -i echo {= s/a/b/ =} ::: a"#);
    assert_one_line_error(&o, 2, "{= s/a/b/ =}");
    // What is no expression in GNU Parallel stays text: `{=` without a later `=}`, and `{=}`.
    let o = bash_in(dir.path(), r#""$FRUN" parallel -k echo '{=' {=} ::: a"#);
    assert_code(&o, 0);
    assert_eq!(out(&o), "{= {=} a\n");
    // xargs has no replacement strings of that kind: its -I line is passed as written.
    let o = bash_in(dir.path(), r#"echo a | "$FRUN" xargs -I{} echo {= {} =}"#);
    assert_code(&o, 0);
    assert_eq!(out(&o), "{= a =}\n");
}

#[test]
fn perl_strings_without_perl_a_dying_expression_and_a_syntax_error_say_so_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    // No perl on PATH: one line, nothing runs (the command is found by its full path).
    let o = bash_in(
        dir.path(),
        r#"PATH=/nonexistent "$FRUN" parallel /usr/bin/touch {= s/a/b/ =} ::: a"#,
    );
    assert_one_line_error(&o, 255, "need perl");
    assert!(!dir.path().join("b").exists());
    // An expression perl cannot compile: one line, nothing runs.
    let o = bash_in(dir.path(), r#""$FRUN" parallel touch {= s/a/ =} ::: a"#);
    assert_one_line_error(&o, 255, "does not compile");
    assert!(!dir.path().join("a").exists());
    // An expression that dies: GNU Parallel stops there, before that job runs (its status is
    // perl's errno; frun's is 255): the jobs before it ran, none after it.
    let o = bash_in(
        dir.path(),
        r#""$FRUN" parallel -j1 -k 'touch x{= die "boom\n" if $_ eq "b" =}' ::: a b c"#,
    );
    assert_one_line_error(&o, 255, "boom");
    assert!(dir.path().join("xa").exists());
    assert!(!dir.path().join("xb").exists() && !dir.path().join("xc").exists());
    // --plus's {##} (the number of jobs) is one frun has now: not left as text.
    let o = bash_in(
        dir.path(),
        r#""$FRUN" parallel -k --plus echo {##} ::: a b"#,
    );
    assert_code(&o, 0);
    assert_eq!(out(&o), "2\n2\n");
}

#[test]
fn the_perl_process_ends_with_frun_even_when_frun_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let mark = format!("FRUN_PERL_MARK_{}", std::process::id());
    // frun is killed while a job runs: the perl it started reads end-of-file and exits.
    let script = format!(
        r#"{mark}=1 "$FRUN" parallel -j1 'sleep {{= $_ =}}' ::: 3 & f=$!
        sleep 0.5; kill -9 $f; wait $f 2>/dev/null
        for i in $(seq 50); do
          left=$(grep -l '{mark}=' /proc/[0-9]*/environ 2>/dev/null | grep -v self | while read e; do
            c=$(tr '\0' ' ' < "${{e%environ}}cmdline" 2>/dev/null); case "$c" in perl*) echo "$c";; esac; done)
          [ -z "$left" ] && break; sleep 0.1
        done
        echo "left:$left""#
    );
    let o = bash_in(dir.path(), &script);
    assert_eq!(out(&o).trim(), "left:", "a perl outlived frun");
    // A run that ends normally leaves no perl either.
    let script = format!(
        r#"{mark}=2 "$FRUN" parallel echo {{= s/a/b/ =}} ::: a
        grep -l '{mark}=2' /proc/[0-9]*/environ 2>/dev/null | grep -v self | while read e; do
          tr '\0' ' ' < "${{e%environ}}cmdline"; done"#
    );
    let o = bash_in(dir.path(), &script);
    assert_eq!(out(&o), "b\n");
}

#[test]
fn a_value_too_long_for_one_argument_is_named_and_the_run_fails_as_gnu_parallel_says() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = vec![b'a'; 200_000];
    v.extend_from_slice(b"\nshort\n");
    std::fs::write(dir.path().join("v"), &v).unwrap();
    // GNU Parallel measures every job's line: one of 63664 bytes or more is not run, and the run
    // stops there with "Command line too long" and 255. frun parallel does the same, with the
    // same words and numbers.
    for line in [
        r#"parallel echo :::: v"#,
        r#"parallel 'echo {} | wc -c' :::: v"#,
        r#"parallel echo < v"#,
        r#"parallel -j1 -k echo ::: 1 2 :::: v"#,
        r#"parallel -j1 -k -s 9 echo ::: 1 22 333 4444 55555"#,
    ] {
        let gnu = bash_in(dir.path(), line);
        let o = bash_in(dir.path(), &format!(r#""$FRUN" {line}"#));
        assert_code(&o, 255);
        assert_eq!(gnu.status.code(), Some(255), "{line}");
        assert_eq!(out(&o), out(&gnu), "{line}");
        assert_eq!(err(&o), err(&gnu), "{line}");
        assert!(!out(&o).contains("aaaa"), "{line}");
    }
    // -X and -m fill lines to GNU Parallel's 63664 bytes (-s N: N); the jobs before a value whose
    // line alone is longer run, and the run stops there, as GNU Parallel's does.
    for line in [
        r#"parallel -X echo :::: v"#,
        r#"parallel -j1 -k -m -s 12 echo ::: 1 2 3 4 55555555 6"#,
        r#"(echo echo; seq 5; printf 'z%.0s' $(seq 20); echo; seq 3) | parallel -j1 -k -m -s 10"#,
    ] {
        let gnu = bash_in(dir.path(), line);
        let o = bash_in(dir.path(), &line.replace("parallel", r#""$FRUN" parallel"#));
        assert_eq!(gnu.status.code(), Some(255), "{line}");
        assert_code(&o, 255);
        assert_eq!(out(&o), out(&gnu), "{line}");
        assert_eq!(err(&o), err(&gnu), "{line}");
    }
    // frun's own flags keep their status (123), as README says.
    let o = bash_in(dir.path(), r#""$FRUN" -l1 echo < v"#);
    assert_code(&o, 123);
    assert_eq!(out(&o), "short\n");
}

#[test]
fn a_nul_byte_in_a_value_of_frun_parallel_is_the_two_characters_backslash_zero_as_in_gnu() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), b"a\0b\nc\n").unwrap();
    // Cut at the NUL, the value would have been `a`: a file of that name must survive.
    std::fs::write(dir.path().join("a"), "").unwrap();
    let warning = "parallel: Warning: A NUL character in the input was replaced with \\0.\n\
                   parallel: Warning: NUL cannot be passed through in the argument list.\n\
                   parallel: Warning: Did you mean to use the --null option?\n";
    for line in [
        r#"P -k echo X{}Y :::: f"#,
        r#"P -k -X echo < f"#,
        r#"P -k -a f echo"#,
        r#"P -k echo :::: f ::: x"#,
        r#"P -k --colsep , echo {1} :::: f"#,
        r#"P -k --tag echo :::: f"#,
        r#"P -k --results r echo :::: f >/dev/null && find r -name stdout | LC_ALL=C sort"#,
        r#"P rm :::: f; echo status $?"#,
    ] {
        let gnu = bash_in(dir.path(), &format!("P() {{ parallel \"$@\"; }}; {line}"));
        let frun = bash_in(
            dir.path(),
            &format!("P() {{ \"$FRUN\" parallel \"$@\"; }}; {line}"),
        );
        std::fs::remove_dir_all(dir.path().join("r")).ok();
        assert_eq!(out(&frun), out(&gnu), "{line}");
        assert_eq!(frun.status.code(), gnu.status.code(), "{line}");
        assert!(err(&frun).starts_with(warning), "{line}: {}", err(&frun));
        assert!(dir.path().join("a").exists(), "{line} removed a");
    }
    assert!(
        out(&bash_in(
            dir.path(),
            r#"P() { "$FRUN" parallel "$@"; }; P -k echo :::: f"#
        ))
        .contains("a\\0b")
    );
    // NUL-separated values are values, not refusals.
    let o = bash_in(
        dir.path(),
        r#"printf 'a\0b\0' | "$FRUN" parallel -0 -k echo"#,
    );
    assert_code(&o, 0);
    assert_eq!(out(&o), "a\nb\n");
}

#[test]
fn an_empty_column_separator_splits_between_characters_as_perl_does() {
    let dir = tempfile::tempdir().unwrap();
    let o = bash_in(
        dir.path(),
        r#""$FRUN" parallel --colsep '' echo {1}-{2}-{3}. ::: ab"#,
    );
    assert_code(&o, 0);
    // Perl's split (GNU Parallel's): no empty first column, an empty last one.
    assert_eq!(out(&o), "a-b-.\n");
}

/// A tmpfs of `size` mounted on a new directory (root only); None when it cannot be mounted.
fn tiny_disk(size: &str) -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("disk");
    std::fs::create_dir(&mnt).unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(&mnt)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some((dir, mnt))
}

fn unmount(mnt: &std::path::Path) {
    let _ = std::process::Command::new("umount").arg(mnt).status();
}

#[test]
fn a_full_results_disk_is_named_as_the_results_file_not_standard_output() {
    let Some((_dir, mnt)) = tiny_disk("64k") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let o = bash_in(
        &mnt,
        r#"seq 50 | "$FRUN" --results res -l1 sh -c 'seq 3000'"#,
    );
    unmount(&mnt);
    assert_code(&o, 1);
    let e = err(&o);
    assert!(
        e.contains("cannot write to the output file of task 0/1 in res: No space left"),
        "{e}"
    );
    assert!(!e.contains("standard output"), "{e}");
}
