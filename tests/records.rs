//! Records: splitting, empty records, bytes, limits, argument files, placeholders, unsafe mode,
//! batch sizes, ARG_MAX and oversized records.

use crate::common::*;
use std::collections::HashSet;

/// Runs `frun -k -l 1000 <extra> printf '[%s]'` so each record shows as `[rec]`.
fn bracketed(extra: &[&str], input: &[u8]) -> Vec<u8> {
    let mut a = vec!["-k", "-l", "1000"];
    a.extend_from_slice(extra);
    a.extend_from_slice(&["printf", "[%s]"]);
    let o = frun(&a, input);
    assert_clean(&o);
    o.stdout
}

#[test]
fn newline_records_keep_empty_ones() {
    assert_eq!(bracketed(&[], b"a\n\nb\n"), b"[a][][b]");
    assert_eq!(bracketed(&[], b"\n\n\n"), b"[][][]");
    assert_eq!(bracketed(&[], b"\n"), b"[]");
}

#[test]
fn final_record_without_terminator_is_passed() {
    assert_eq!(bracketed(&[], b"a\nb"), b"[a][b]");
    assert_eq!(bracketed(&[], b"only"), b"[only]");
    assert_eq!(bracketed(&["-z"], b"a\0b"), b"[a][b]");
    assert_eq!(bracketed(&["-d", ","], b"a,b"), b"[a][b]");
}

#[test]
fn no_trimming_and_no_quote_processing() {
    let input = b"  lead\ntrail  \n'single'\n\"double\"\nback\\slash\n\ttab\na  b\n";
    assert_eq!(
        text(&bracketed(&[], input)),
        "[  lead][trail  ]['single'][\"double\"][back\\slash][\ttab][a  b]"
    );
    // Plain xargs would strip the quotes; frun matches xargs -d '\n'.
    let x = xargs(&["-d", "\\n", "printf", "[%s]"], input);
    assert_eq!(bracketed(&[], input), x.stdout);
}

#[test]
fn carriage_returns_are_data() {
    assert_eq!(bracketed(&[], b"a\r\nb\r\n"), b"[a\r][b\r]");
}

#[test]
fn empty_input_runs_nothing() {
    for extra in [&[][..], &["-z"], &["-l", "5"], &["-k"], &["-u"]] {
        let mut a = extra.to_vec();
        a.extend_from_slice(&["sh", "-c", "echo ran"]);
        let o = frun(&a, b"");
        assert_clean(&o);
        assert_eq!(out(&o), "", "{extra:?}");
    }
    // Default command too.
    let o = frun::<&str>(&[], b"");
    assert_clean(&o);
    assert_eq!(out(&o), "");
    // Same as xargs -r.
    let x = xargs(&["-r", "sh", "-c", "echo ran"], b"");
    assert_eq!(x.stdout, b"");
}

#[test]
fn empty_arg_file_runs_nothing() {
    let f = tempfile::NamedTempFile::new().unwrap();
    let o = frun(
        &["-a", f.path().to_str().unwrap(), "sh", "-c", "echo ran"],
        b"",
    );
    assert_clean(&o);
    assert_eq!(out(&o), "");
}

#[test]
fn nul_records() {
    for f in ["-z", "-0", "--null"] {
        assert_eq!(bracketed(&[f], b"a\0b c\0\0d"), b"[a][b c][][d]", "{f}");
        assert_eq!(bracketed(&[f], b"x\ny\0z\n\0"), b"[x\ny][z\n]", "{f}");
        assert_eq!(bracketed(&[f], b"\0"), b"[]", "{f}");
    }
}

#[test]
fn single_byte_delimiter() {
    assert_eq!(bracketed(&["-d", ","], b"a,b,,c"), b"[a][b][][c]");
    assert_eq!(bracketed(&["-d", ","], b"a\nb,c\n"), b"[a\nb][c\n]");
    assert_eq!(bracketed(&["-d", "x"], b"1x2x"), b"[1][2]");
    assert_eq!(bracketed(&["--delimiter", ":"], b"p:q"), b"[p][q]");
}

#[test]
fn delimiter_escapes() {
    let cases: &[(&str, &[u8], &[u8])] = &[
        ("\\t", b"a\tb c\t", b"[a][b c]"),
        ("\\n", b"a\nb\n", b"[a][b]"),
        ("\\\\", b"a\\b\\", b"[a][b]"),
        ("\\x1f", b"a\x1fb\n\x1f", b"[a][b\n]"),
        ("\\x41", b"xAyA", b"[x][y]"),
        ("\\037", b"a\x1fb", b"[a][b]"),
        ("\\101", b"xAy", b"[x][y]"),
        ("\\0", b"a\0b", b"[a][b]"),
        ("", b"a\0b\0", b"[a][b]"),
    ];
    for (d, input, want) in cases {
        assert_eq!(text(&bracketed(&["-d", d], input)), text(want), "-d {d:?}");
    }
}

#[test]
fn non_utf8_and_binary_bytes_pass_unchanged() {
    // Every byte value except NUL and newline, spread over several records.
    let bytes: Vec<u8> = (1u8..=255).filter(|&b| b != b'\n').collect();
    let mut input = Vec::new();
    for chunk in bytes.chunks(37) {
        input.extend_from_slice(chunk);
        input.push(b'\n');
    }
    input.extend_from_slice(b"\xff\xfe\x80\xc3(\n");
    let o = frun(&["-k", "printf", "%s\\n"], &input);
    assert_clean(&o);
    assert_eq!(o.stdout, input);
    // NUL-delimited, newlines inside records.
    let mut z = Vec::new();
    for chunk in (1u8..=255).collect::<Vec<_>>().chunks(50) {
        z.extend_from_slice(chunk);
        z.push(0);
    }
    let o = frun(&["-k", "-z", "printf", "%s\\0"], &z);
    assert_clean(&o);
    assert_eq!(o.stdout, z);
}

#[test]
fn limit_stops_after_n_records() {
    let o = frun(&["-n", "7", "-k", "printf", "%s\\n"], &seq_n(100));
    assert_clean(&o);
    assert_eq!(o.stdout, seq_n(7));
    let o = frun(&["-n", "7", "-l", "3", "-k", "echo"], &seq_n(100));
    assert_clean(&o);
    assert_eq!(out(&o), "1 2 3\n4 5 6\n7\n");
    let o = frun(&["-n", "500", "-k", "printf", "%s\\n"], &seq_n(100));
    assert_clean(&o);
    assert_eq!(o.stdout, seq_n(100));
}

#[test]
fn limit_works_on_endless_input() {
    let o = bash("yes | timeout 20 \"$FRUN\" -n 5 -l 1 -k echo; echo \"status=${PIPESTATUS[1]}\"");
    assert_eq!(out(&o), "y\ny\ny\ny\ny\nstatus=0\n");
    let o = bash("yes abc | timeout 20 \"$FRUN\" -n 1Ki -k printf '%s\\n' | wc -l");
    assert_eq!(out(&o).trim(), "1024");
}

#[test]
fn children_stdin_is_dev_null_without_arg_file() {
    let o = frun(
        &[
            "-k",
            "-l",
            "1",
            "-j",
            "1",
            "sh",
            "-c",
            "cat; echo \"rec=$1\"",
            "sh",
        ],
        b"a\nb\nc\n",
    );
    assert_clean(&o);
    assert_eq!(out(&o), "rec=a\nrec=b\nrec=c\n");
}

#[test]
fn arg_file_children_inherit_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("recs");
    std::fs::write(&f, "r1\n").unwrap();
    let o = frun(
        &[
            "-a",
            f.to_str().unwrap(),
            "sh",
            "-c",
            "read x; echo \"$1:$x\"",
            "sh",
        ],
        b"from-stdin\n",
    );
    assert_clean(&o);
    assert_eq!(out(&o), "r1:from-stdin\n");
}

#[test]
fn arg_file_records_are_the_file() {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    let data = seq_n(5000);
    std::io::Write::write_all(&mut f, &data).unwrap();
    let o = frun(
        &["-a", f.path().to_str().unwrap(), "-k", "printf", "%s\\n"],
        b"",
    );
    assert_clean(&o);
    assert_eq!(o.stdout, data);
    // -a with -z.
    let mut g = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut g, b"a b\0c\nd\0").unwrap();
    let o = frun(
        &[
            "-z",
            "-a",
            g.path().to_str().unwrap(),
            "-k",
            "-l",
            "5",
            "printf",
            "[%s]",
        ],
        b"",
    );
    assert_clean(&o);
    assert_eq!(out(&o), "[a b][c\nd]");
}

#[test]
fn insert_replaces_braces_in_words() {
    let o = frun(&["-k", "-l", "2", "-i", "echo", "x{}y"], b"a\nb\n");
    assert_clean(&o);
    assert_eq!(out(&o), "xay xby\n");
    let o = frun(
        &["-k", "-l", "2", "-i", "printf", "%s\\n", "{}", "{}.bak"],
        b"a\nb\n",
    );
    assert_clean(&o);
    assert_eq!(out(&o), "a\nb\na.bak\nb.bak\n");
    // Records with spaces stay one word each.
    let o = frun(
        &["-k", "-l", "3", "-i", "printf", "<%s>", "={}="],
        b"p q\n\nr\n",
    );
    assert_clean(&o);
    assert_eq!(out(&o), "<=p q=><==><=r=>");
}

#[test]
fn insert_replaces_every_occurrence_in_a_word() {
    let o = frun(&["-k", "-l", "2", "-i", "echo", "{}-{}"], b"a\nb\n");
    assert_clean(&o);
    assert_eq!(out(&o), "a-a b-b\n");
}

#[test]
fn insert_without_braces_appends() {
    let o = frun(&["-k", "-l", "2", "-i", "echo", "x"], b"a\nb\n");
    assert_clean(&o);
    assert_eq!(out(&o), "x a b\n");
}

#[test]
fn insert_is_off_without_flag() {
    let o = frun(&["-k", "-l", "2", "echo", "x{}y"], b"a\nb\n");
    assert_clean(&o);
    assert_eq!(out(&o), "x{}y a b\n");
    let o = frun(&["-k", "-l", "2", "-i", "+i", "echo", "x{}y"], b"a\nb\n");
    assert_clean(&o);
    assert_eq!(out(&o), "x{}y a b\n");
}

#[test]
fn insert_matches_xargs_replace_per_record() {
    // With one record per batch, -i equals xargs -I{}.
    let input = b"a b\n'q'\n*\n\nlast";
    let o = frun(
        &["-k", "-l", "1", "-i", "printf", "<%s>\\n", "pre{}post"],
        input,
    );
    assert_clean(&o);
    let x = xargs(
        &["-d", "\\n", "-I{}", "printf", "<%s>\\n", "pre{}post"],
        input,
    );
    assert_eq!(out(&o), out(&x));
}

fn parse_id(id: &str) -> Option<(u64, u64, u64)> {
    let p: Vec<&str> = id.split('.').collect();
    if p.len() != 3
        || p.iter()
            .any(|s| s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    Some((p[0].parse().ok()?, p[1].parse().ok()?, p[2].parse().ok()?))
}

#[test]
fn insert_id_is_unique_per_batch() {
    let n = 300;
    let o = frun(
        &[
            "-I",
            "-l",
            "1",
            "-j",
            "4",
            "sh",
            "-c",
            "echo \"$0 $1\"",
            "{ID}",
        ],
        &seq_n(n),
    );
    assert_clean(&o);
    let mut ids = HashSet::new();
    let mut recs = Vec::new();
    for l in lines(&o.stdout) {
        let (id, rec) = l.split_once(' ').unwrap_or_else(|| panic!("{l:?}"));
        assert!(parse_id(id).is_some(), "bad id {id:?}");
        assert!(ids.insert(id.to_owned()), "duplicate id {id}");
        recs.push(rec.parse::<u64>().unwrap());
    }
    recs.sort();
    assert_eq!(recs, (1..=n).collect::<Vec<_>>());
}

#[test]
fn insert_id_mid_word_and_records_appended() {
    let o = frun(
        &["-I", "-k", "-l", "2", "printf", "<%s>", "pre{ID}post"],
        &seq_n(5),
    );
    assert_clean(&o);
    let s = out(&o);
    // Three batches: <preIDpost><1><2> <preIDpost><3><4> <preIDpost><5>
    let parts: Vec<&str> = s.trim_start_matches('<').split("><").collect();
    let parts: Vec<&str> = parts.iter().map(|p| p.trim_end_matches('>')).collect();
    assert_eq!(parts.len(), 8, "{s}");
    let mut ids = HashSet::new();
    for (i, want) in [
        (0, None),
        (1, Some("1")),
        (2, Some("2")),
        (3, None),
        (4, Some("3")),
        (5, Some("4")),
        (6, None),
        (7, Some("5")),
    ] {
        match want {
            Some(r) => assert_eq!(parts[i], r, "{s}"),
            None => {
                let id = parts[i]
                    .strip_prefix("pre")
                    .and_then(|x| x.strip_suffix("post"))
                    .unwrap_or_else(|| panic!("{s}"));
                assert!(parse_id(id).is_some(), "bad id {id:?}");
                assert!(ids.insert(id.to_owned()));
            }
        }
    }
    // Without -I the word is literal.
    let o = frun(&["-l", "5", "echo", "{ID}"], b"a\n");
    assert_clean(&o);
    assert_eq!(out(&o), "{ID} a\n");
}

#[test]
fn unsafe_word_splits_and_globs() {
    let o = frun(&["-U", "printf", "[%s]\\n"], b"a b\n");
    assert_clean(&o);
    assert_eq!(out(&o), "[a]\n[b]\n");
    let o = frun(&["printf", "[%s]\\n"], b"a b\n");
    assert_clean(&o);
    assert_eq!(out(&o), "[a b]\n");
    let dir = tempfile::tempdir().unwrap();
    for f in ["f1", "f2", "g1"] {
        std::fs::write(dir.path().join(f), "").unwrap();
    }
    let o = frun_cmd()
        .current_dir(dir.path())
        .args(["-U", "-k", "printf", "[%s]\\n"])
        .write_stdin("f*\n")
        .output()
        .unwrap();
    assert_clean(&o);
    assert_eq!(out(&o), "[f1]\n[f2]\n");
    let o = frun_cmd()
        .current_dir(dir.path())
        .args(["-k", "printf", "[%s]\\n"])
        .write_stdin("f*\n")
        .output()
        .unwrap();
    assert_clean(&o);
    assert_eq!(out(&o), "[f*]\n");
}

#[test]
fn unsafe_does_not_evaluate_records() {
    // Only word splitting and globbing: no quote removal, expansion or command substitution.
    let dir = tempfile::tempdir().unwrap();
    let o = frun_cmd()
        .current_dir(dir.path())
        .args(["-U", "-k", "printf", "[%s]\\n"])
        .write_stdin("'a b' $HOME ${x:-y}\n$(touch made1) `touch made2`;x\n")
        .output()
        .unwrap();
    assert_clean(&o);
    assert_eq!(
        out(&o),
        "['a]\n[b']\n[$HOME]\n[${x:-y}]\n[$(touch]\n[made1)]\n[`touch]\n[made2`;x]\n"
    );
    assert!(!dir.path().join("made1").exists() && !dir.path().join("made2").exists());
}

/// The batch sizes frun cuts from `input` (see [`frun_from_file`]).
#[track_caller]
fn batch_counts(extra: &[&str], input: &[u8]) -> Vec<usize> {
    let mut a = vec!["-k"];
    a.extend_from_slice(extra);
    a.extend_from_slice(&["sh", "-c", "echo $#", "sh"]);
    let o = frun_from_file(&a, input);
    assert_clean(&o);
    counts(&o.stdout)
}

#[test]
fn fixed_batch_sizes_equal_xargs_n() {
    for (n, total) in [
        (1, 7u64),
        (3, 10),
        (4, 10),
        (5, 10),
        (10, 10),
        (16, 1000),
        (100, 1001),
    ] {
        let input = seq_n(total);
        let x = xargs(
            &[
                "-d",
                "\\n",
                "-n",
                &n.to_string(),
                "sh",
                "-c",
                "echo $#",
                "sh",
            ],
            &input,
        );
        let want = counts(&x.stdout);
        assert_eq!(
            batch_counts(&["-l", &n.to_string()], &input),
            want,
            "-l {n}"
        );
        assert_eq!(
            batch_counts(&["-L", &n.to_string()], &input),
            want,
            "-L {n}"
        );
        assert_eq!(
            batch_counts(&["-l", &format!("{n}:{n}")], &input),
            want,
            "-l {n}:{n}"
        );
    }
}

#[test]
fn fixed_batches_hold_exactly_their_records() {
    let o = frun(
        &[
            "-k",
            "-l",
            "4",
            "sh",
            "-c",
            "printf '%s,' \"$@\"; echo",
            "sh",
        ],
        &seq_n(10),
    );
    assert_clean(&o);
    assert_eq!(out(&o), "1,2,3,4,\n5,6,7,8,\n9,10,\n");
}

#[test]
fn exact_lines_zero_is_usage_error() {
    let o = frun(&["-L", "0", "echo"], b"a\n");
    assert_usage_error(&o, &["-L", "--exact-lines"]);
}

#[test]
fn adaptive_default_starts_at_one() {
    for extra in [
        &[][..],
        &["-l", "1:-1"],
        &["-l", ":"],
        &["-l", "0:0"],
        &["-l", ":-1"],
    ] {
        let c = batch_counts(extra, &seq_n(20000));
        assert_eq!(c.iter().sum::<usize>(), 20000, "{extra:?}");
        assert_eq!(c[0], 1, "{extra:?}: first batch {c:?}");
        assert!(
            c.iter().all(|&x| (1..=65536).contains(&x)),
            "{extra:?} {c:?}"
        );
    }
}

#[test]
fn adaptive_range_is_respected() {
    for (spec, lo, hi) in [
        ("2:8", 2, 8),
        ("3:5", 3, 5),
        (":4", 1, 4),
        ("0:4", 1, 4),
        ("7:7", 7, 7),
    ] {
        let c = batch_counts(&["-l", spec], &seq_n(500));
        assert_eq!(c.iter().sum::<usize>(), 500, "-l {spec}");
        assert_eq!(c[0], lo, "-l {spec}: first batch {c:?}");
        // Every batch except possibly the last is within [lo, hi].
        assert!(
            c[..c.len() - 1].iter().all(|&x| x >= lo && x <= hi),
            "-l {spec}: {c:?}"
        );
        assert!(c[c.len() - 1] <= hi, "-l {spec}: {c:?}");
    }
}

#[test]
fn adaptive_grows_on_plentiful_input() {
    // Bounded by 8 and plenty of input: batches must reach 8.
    let c = batch_counts(&["-l", "1:8", "-j", "1"], &seq_n(2000));
    assert_eq!(c.iter().sum::<usize>(), 2000);
    assert!(c.contains(&8), "never grew to 8: {c:?}");
}

#[test]
fn batches_stay_under_arg_max() {
    let arg_max: usize = text(
        &std::process::Command::new("getconf")
            .arg("ARG_MAX")
            .output()
            .unwrap()
            .stdout,
    )
    .trim()
    .parse()
    .unwrap();
    let n = 300_000usize;
    let mut input = Vec::with_capacity(n * 61);
    for i in 0..n {
        input.extend_from_slice(format!("{i:0>60}\n").as_bytes());
    }
    let c = batch_counts(&["-l", "65536"], &input);
    assert_eq!(c.iter().sum::<usize>(), n, "{c:?}");
    let min_batches = n * 61 / arg_max;
    assert!(c.len() > min_batches, "{} batches: {c:?}", c.len());
    assert!(c.iter().all(|&x| x <= 65536));
    // And the records themselves survive intact, in order.
    let o = frun(&["-k", "-l", "65536", "printf", "%s\\n"], &input);
    assert_clean(&o);
    assert_eq!(o.stdout.len(), input.len());
    assert!(o.stdout == input, "content differs");
}

#[test]
fn oversized_record_is_skipped_with_offset() {
    let mut input = b"a\n".to_vec();
    input.extend(std::iter::repeat_n(b'x', 200_000));
    input.extend_from_slice(b"\nb\n");
    let o = frun(&["-k", "-l", "1", "echo"], &input);
    assert_code(&o, 123);
    assert_eq!(out(&o), "a\nb\n");
    assert_eq!(offsets_reported(&err(&o)), [2]);
}

/// The distinct offsets named as `input offset N` on stderr, in order of first mention; every
/// stderr line must be one of frun's own messages.
fn offsets_reported(e: &str) -> Vec<usize> {
    let mut v = Vec::new();
    for l in e.lines() {
        assert!(l.starts_with("frun: "), "unexpected stderr line {l:?}");
        for tail in l.split("input offset ").skip(1) {
            let num: String = tail.chars().take_while(|c| c.is_ascii_digit()).collect();
            let n: usize = num.parse().unwrap_or_else(|_| panic!("no offset in {l:?}"));
            if !v.contains(&n) {
                v.push(n);
            }
        }
    }
    v
}

#[test]
fn oversized_records_in_big_batches_and_at_end() {
    // Two oversized records, one mid-batch, one last without terminator.
    let mut input = Vec::new();
    let mut off = Vec::new();
    for i in 1..=5 {
        input.extend_from_slice(format!("{i}\n").as_bytes());
    }
    off.push(input.len());
    input.extend(std::iter::repeat_n(b'y', 131_072));
    input.push(b'\n');
    for i in 6..=10 {
        input.extend_from_slice(format!("{i}\n").as_bytes());
    }
    off.push(input.len());
    input.extend(std::iter::repeat_n(b'z', 300_000));
    let o = frun(&["-k", "-l", "100", "printf", "%s\\n"], &input);
    assert_code(&o, 123);
    assert_eq!(o.stdout, seq_n(10));
    assert_eq!(offsets_reported(&err(&o)), off);
}

#[test]
fn longest_allowed_record_passes() {
    let mut input = vec![b'q'; 131_071];
    input.push(b'\n');
    let o = frun(&["sh", "-c", "echo ${#1}", "sh"], &input);
    assert_clean(&o);
    assert_eq!(out(&o), "131071\n");
}

/// Regression: input shorter than an adaptive INIT used to make frun spin forever.
#[test]
fn short_input_below_adaptive_init_finishes() {
    for spec in ["2:-1", "2:4", "3:5", "4:8"] {
        for _ in 0..5 {
            let o = frun_cmd()
                .args(["-l", spec, "echo"])
                .write_stdin("1\n")
                .timeout(std::time::Duration::from_secs(5))
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(0), "-l {spec}: hung or failed: {o:?}");
            assert_eq!(out(&o), "1\n", "-l {spec}");
        }
    }
}

/// `getconf ARG_MAX`, as the system reports it.
fn getconf_arg_max() -> u64 {
    let o = std::process::Command::new("getconf")
        .arg("ARG_MAX")
        .output()
        .unwrap();
    String::from_utf8(o.stdout).unwrap().trim().parse().unwrap()
}

#[test]
fn adaptive_batches_grow_to_what_arg_max_takes() {
    // `seq` lines cost their digits, a NUL and an 8-byte pointer each: past 65536 of them
    // fit in ARG_MAX, and no batch may take more than ARG_MAX.
    let arg_max = getconf_arg_max().min(6 << 20);
    let n = 600_000;
    for spec in ["65536:-1", "1:-1"] {
        let c = batch_counts(&["-l", spec], &seq_n(n));
        assert_eq!(c.iter().sum::<usize>() as u64, n, "-l {spec}");
        if spec == "65536:-1" {
            assert_eq!(c[0], 65536, "{c:?}");
        }
        let biggest = *c.iter().max().unwrap() as u64;
        assert!(biggest > 65536, "-l {spec}: {c:?}");
        // Every record of seq 600000 takes at least 1 + 1 + 8 bytes, the largest 6 + 1 + 8.
        assert!(biggest * 10 <= arg_max, "-l {spec}: {c:?}");
        let mut seen = 0u64;
        for &k in &c {
            let bytes: u64 = (seen + 1..=seen + k as u64)
                .map(|v| v.to_string().len() as u64 + 1 + 8)
                .sum();
            assert!(
                bytes <= arg_max,
                "-l {spec}: a batch of {k} takes {bytes} bytes"
            );
            seen += k as u64;
        }
    }
}

#[test]
fn arg_max_bound_accounts_for_environment_and_fixed_args() {
    // 1.4 MB of environment leaves little room under ARG_MAX.
    let big = "x".repeat(120_000);
    let mut c = frun_cmd();
    for i in 0..12 {
        c.env(format!("FRUN_TEST_BIG_{i}"), &big);
    }
    let o = c
        .args(["-k", "-l", "65536", "sh", "-c", "echo $#", "sh"])
        .write_stdin(seq_n(100_000))
        .output()
        .unwrap();
    assert_clean(&o);
    assert_eq!(counts(&o.stdout).iter().sum::<usize>(), 100_000);
    // Large fixed arguments: each batch carries them plus as many records as fit.
    let fixed = "y".repeat(120_000);
    let mut a = vec!["-k", "-l", "65536", "sh", "-c", "echo $(($# - 12))", "sh"];
    for _ in 0..12 {
        a.push(&fixed);
    }
    let o = frun(&a, &seq_n(100_000));
    assert_clean(&o);
    let c = counts(&o.stdout);
    assert_eq!(c.iter().sum::<usize>(), 100_000);
    assert!(c.len() >= 2, "{c:?}");
}
