//! Sweeps of frun's own flags (`CMD ::: a b ::: 1 2`, `:::: FILE`, `:::+`, `--link`, `{1}`…)
//! and GNU Parallel's replacement strings in `-i` mode, against expectations made without
//! frun: a bash loop over the same values, the values themselves, and GNU Parallel on the same
//! line. Also the personalities' dispatch by a link's name.

use std::fs;

use crate::common::*;

/// `bash -c SCRIPT` output, for expectations computed by plain bash loops.
fn bash_out(script: &str) -> String {
    let o = bash(script);
    assert!(o.status.success(), "{}", err(&o));
    out(&o)
}

#[test]
fn a_product_runs_every_combination_once_the_last_source_fastest() {
    let o = frun(
        &["-k", "echo", "{1}-{2}", ":::", "a", "b c", ":::", "1", "2"],
        b"",
    );
    assert_code(&o, 0);
    let want = bash_out(r#"for x in a "b c"; do for y in 1 2; do echo "$x-$y"; done; done"#);
    assert_eq!(out(&o), want);
}

#[test]
fn without_placeholders_the_values_are_appended_one_invocation_per_tuple() {
    let o = frun(&["-k", "printf", "[%s]", ":::", "a b", "", ":::", "1"], b"");
    assert_code(&o, 0);
    // Each tuple is one invocation: its values are separate arguments, an empty one kept.
    assert_eq!(out(&o), "[a b][1][][1]");
}

#[test]
fn three_colons_never_reach_the_command() {
    let o = frun(&["-k", "printf", "%s\\n", ":::", "x", "y"], b"");
    assert_code(&o, 0);
    assert_eq!(out(&o), "x\ny\n");
    assert!(!out(&o).contains(":::"));
}

#[test]
fn file_sources_stdin_and_linked_sources() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    fs::write(&f, "p\nq\nr\n").unwrap();
    let fs_ = f.to_str().unwrap();
    let o = frun(&["-k", "echo", ":::", "a", "b", "::::", fs_], b"");
    assert_code(&o, 0);
    let want = bash_out(&format!(
        r#"for x in a b; do while read -r y; do echo "$x $y"; done < {fs_}; done"#
    ));
    assert_eq!(out(&o), want);
    // :::: - reads stdin.
    let o = frun(
        &["-k", "echo", "{2}{1}", ":::", "1", "::::", "-"],
        b"x\ny\n",
    );
    assert_code(&o, 0);
    assert_eq!(out(&o), "x1\ny1\n");
    // :::+ pairs values with the source before it, stopping at the shorter.
    let o = frun(&["-k", "echo", ":::", "a", "b", "c", ":::+", "1", "2"], b"");
    assert_code(&o, 0);
    assert_eq!(out(&o), "a 1\nb 2\n");
}

#[test]
fn link_stops_at_the_shortest_source_and_says_so() {
    let o = frun(
        &[
            "-k", "--link", "echo", ":::", "1", "2", "3", ":::", "a", "b",
        ],
        b"",
    );
    assert_code(&o, 0);
    assert_eq!(out(&o), "1 a\n2 b\n");
    // forkrun's words for it.
    assert!(
        err(&o).contains("--link")
            && err(&o).contains("truncating combinations to the shortest length (2)"),
        "{}",
        err(&o)
    );
    // Equal lengths: no warning.
    let o = frun(
        &["-k", "--link", "echo", ":::", "1", "2", ":::", "a", "b"],
        b"",
    );
    assert_clean(&o);
    assert_eq!(out(&o), "1 a\n2 b\n");
}

#[test]
fn an_empty_source_runs_nothing() {
    let o = frun(&["echo", "x", ":::", "a", ":::"], b"");
    assert_code(&o, 0);
    assert_eq!(out(&o), "");
}

#[test]
fn bad_sweeps_are_one_line_usage_errors() {
    assert_usage_error(&frun(&[":::", "a"], b""), &[":::"]);
    assert_usage_error(
        &frun(&["-a", "/etc/hostname", "echo", ":::", "a"], b""),
        &["-a"],
    );
    assert_usage_error(&frun(&["-s", "cat", ":::", "a"], b""), &["-s"]);
    assert_usage_error(&frun(&["echo", "::::"], b""), &["::::"]);
    let o = frun(&["echo", "::::", "/nonexistent/x"], b"");
    assert_usage_error(&o, &["/nonexistent/x"]);
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("nul");
    fs::write(&f, b"a\0b\n").unwrap();
    assert_usage_error(&frun(&["echo", "::::", f.to_str().unwrap()], b""), &["NUL"]);
    assert_usage_error(
        &frun(&["echo", "::::", dir.path().to_str().unwrap()], b""),
        &["directory"],
    );
}

#[test]
fn a_missing_command_is_reported_once_before_any_work() {
    let o = frun(&["no-such-command-here", ":::", "a", "b"], b"");
    assert_code(&o, 127);
    assert_eq!(err(&o).matches("not found").count(), 1, "{}", err(&o));
}

#[test]
fn insert_mode_fills_gnu_parallels_replacement_strings_as_parallel_does() {
    let values = "a.tar.gz\ndir.x/file\n/a/b.c\nx/.y\nplain\n";
    let o = frun(
        &["-k", "-l", "1", "-i", "echo", "{}|{.}|{/}|{//}|{/.}"],
        values.as_bytes(),
    );
    assert_code(&o, 0);
    let gnu = run_prog(
        "parallel",
        &["--will-cite", "-k", "echo", "{}\\|{.}\\|{/}\\|{//}\\|{/.}"],
        values.as_bytes(),
    );
    assert!(gnu.status.success(), "{}", err(&gnu));
    assert_eq!(out(&o), out(&gnu));
    // {#} is the batch's number, from 1, in input order.
    let o = frun(&["-k", "-l", "1", "-i", "echo", "{#}:{}"], b"x\ny\nz\n");
    assert_eq!(out(&o), "1:x\n2:y\n3:z\n");
}

#[test]
fn insert_mode_keeps_each_record_one_argument() {
    // A record with blanks and quotes is one word: no shell is involved.
    let o = frun(&["-k", "-i", "printf", "<%s>", "x{}"], b"a b\n'q'\n");
    assert_code(&o, 0);
    assert_eq!(out(&o), "<xa b><x'q'>");
}

#[test]
fn a_link_named_parallel_or_xargs_is_that_tool() {
    let dir = tempfile::tempdir().unwrap();
    let par = dir.path().join("parallel");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_frun"), &par).unwrap();
    let o = run_prog(
        par.to_str().unwrap(),
        &["-k", "echo", "{}-{#}", ":::", "a", "b"],
        b"",
    );
    let gnu = run_prog(
        "parallel",
        &["--will-cite", "-k", "echo", "{}-{#}", ":::", "a", "b"],
        b"",
    );
    assert_code(&o, 0);
    assert_eq!(out(&o), out(&gnu));
    // `frun parallel` is the same; `frun -- parallel` runs a command named parallel.
    let o = frun(&["parallel", "-k", "echo", ":::", "x"], b"");
    assert_eq!(out(&o), "x\n");
    // (GNU Parallel's own, with the record appended: parallel --version x.)
    let o = frun(&["--", "parallel", "--version"], b"x\n");
    assert!(out(&o).starts_with("GNU parallel"), "{}", out(&o));
}

#[test]
fn frun_parallel_refuses_what_it_does_not_do_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let line = format!("touch {}", marker.display());
    for flag in [
        &["--sshlogin", "host"][..],
        &["--tmux"],
        &["--sql", "x"],
        &["--semaphore"],
        &["--bogus-flag"],
    ] {
        let mut args: Vec<&str> = vec!["parallel"];
        args.extend_from_slice(flag);
        args.extend_from_slice(&[line.as_str(), ":::", "1"]);
        let o = frun(&args, b"");
        assert_code(&o, 255);
        let e = err(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.starts_with("frun: ") && e.contains(flag[0]), "{e}");
        assert!(!marker.exists(), "{flag:?} ran the line");
    }
    // A perl expression is evaluated now; where frun still evaluates none (a --pipe line) it
    // is refused.
    let o = frun(&["parallel", "echo {= $_ .= 2 =}", ":::", "1"], b"");
    assert_code(&o, 0);
    assert_eq!(out(&o), "12\n");
    let o = frun(&["parallel", "--pipe", &line, "{= $_ =}"], b"x\n");
    assert_code(&o, 255);
    assert!(err(&o).contains("perl"), "{}", err(&o));
    assert!(!marker.exists(), "a refused --pipe line ran");
}
