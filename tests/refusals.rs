//! Lines and values frun does not understand or cannot pass are refused, never run as
//! something else: perl expressions anywhere in a command line, values too long for one
//! argument, NUL bytes inside values, an empty column separator. Each case states what GNU
//! Parallel does and checks that nothing ran (files the command would have touched are there,
//! nothing on stdout).

use crate::common::*;
use std::process::Output;

/// Runs `script` in bash in `dir`, with `$FRUN` set.
fn bash_in(dir: &std::path::Path, script: &str) -> Output {
    assert_cmd::Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("FRUN", BIN)
        .write_stdin(Vec::new())
        .timeout(LIMIT)
        .output()
        .expect("spawn bash")
}

#[track_caller]
fn assert_refused(o: &Output, code: i32, what: &str) {
    assert_code(o, code);
    assert_eq!(out(o), "", "nothing ran");
    let e = err(o);
    assert!(
        e.starts_with("frun: ") && e.matches('\n').count() == 1,
        "{e:?}"
    );
    assert!(e.contains(what), "{e:?} should say {what:?}");
}

#[test]
fn a_perl_expression_anywhere_in_the_line_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    // GNU Parallel joins the words and evaluates `s/\.bak$//`, removing x: frun has no perl,
    // so it must remove nothing at all (it used to remove x.bak, the value itself).
    std::fs::write(dir.path().join("x"), "").unwrap();
    std::fs::write(dir.path().join("x.bak"), "").unwrap();
    let o = bash_in(
        dir.path(),
        r#""$FRUN" parallel rm -f {= 's/\.bak$//' =} ::: x.bak"#,
    );
    assert_refused(&o, 255, r"{= s/\.bak$// =}");
    assert!(dir.path().join("x").exists() && dir.path().join("x.bak").exists());
    for (line, expression) in [
        // Split over words, one word, glued to text, positional, in the tag, in --results.
        (
            r#""$FRUN" parallel echo {= s/a/b/ =} ::: a"#,
            "{= s/a/b/ =}",
        ),
        (r#""$FRUN" parallel echo {=s/a/b/=} ::: a"#, "{=s/a/b/=}"),
        (
            r#""$FRUN" parallel echo l{= s/a/b/ =}x ::: a"#,
            "{= s/a/b/ =}",
        ),
        (
            r#""$FRUN" parallel echo {=1 s/a/b/ =} ::: a"#,
            "{=1 s/a/b/ =}",
        ),
        (
            r#""$FRUN" parallel -X echo {= s/a/b/ =} ::: a b"#,
            "{= s/a/b/ =}",
        ),
        (
            r#""$FRUN" parallel --tagstring '{= s/a/b/ =}' echo ::: a"#,
            "{= s/a/b/ =}",
        ),
        (
            r#""$FRUN" parallel --results 'o/{= s/a/b/ =}' echo ::: a"#,
            "{= s/a/b/ =}",
        ),
        (
            r#""$FRUN" parallel 'echo {= s/a/b/' '=}' ::: a"#,
            "{= s/a/b/ =}",
        ),
    ] {
        let o = bash_in(dir.path(), line);
        assert_refused(&o, 255, expression);
    }
    assert!(!dir.path().join("o").exists(), "--results made nothing");
    // frun's own -i: a usage error (2), not text passed to echo.
    let o = bash_in(dir.path(), r#""$FRUN" -i echo {= s/a/b/ =} ::: a"#);
    assert_refused(&o, 2, "{= s/a/b/ =}");
    // What is no expression in GNU Parallel stays text: `{=` without a later `=}`, and `{=}`.
    let o = bash_in(dir.path(), r#""$FRUN" parallel -k echo '{=' {=} ::: a"#);
    assert_code(&o, 0);
    assert_eq!(out(&o), "{= {=} a\n");
    // xargs has no replacement strings of that kind: its -I line is passed as written.
    let o = bash_in(dir.path(), r#"echo a | "$FRUN" xargs -I{} echo {= {} =}"#);
    assert_code(&o, 0);
    assert_eq!(out(&o), "{= a =}\n");
}
