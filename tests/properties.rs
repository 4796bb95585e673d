//! Property tests: whatever the workers, batch sizes and output mode, every record comes out
//! exactly once (in input order under -k); -N quoting and -n limits hold on random records.

use crate::common::*;
use proptest::prelude::*;

/// A record: printable text with spaces, quotes, glob and shell characters, UTF-8; no newline.
fn line() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[a-zA-Z0-9 '\"*?\\[\\]$\\\\\t;&|<>(){}%é€😀-]{0,20}").unwrap()
}

/// A `-l` value: fixed N (also as N:N), or an adaptive INIT:MAX range (with empty/0/-1 forms).
fn lines_spec() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u32..=6).prop_map(|n| n.to_string()),
        (1u32..=6).prop_map(|n| format!("{n}:{n}")),
        (1u32..=3, 0u32..=6).prop_map(|(i, extra)| format!("{i}:{}", i + extra)),
        (1u32..=4).prop_map(|i| format!("{i}:-1")),
        Just(":".to_string()),
        Just("0:8".to_string()),
        Just(":5".to_string()),
        Just("1:-1".to_string()),
    ]
}

/// Runs one `every_record_comes_out_once` case.
fn check_every_record(
    recs: &[String],
    workers: u32,
    spec: &str,
    mode_flags: &[&str],
    ordered: bool,
) -> Result<(), TestCaseError> {
    let input: String = recs.iter().map(|r| format!("{r}\n")).collect();
    let w = workers.to_string();
    let mut args = vec!["-j", &w, "-l", spec];
    args.extend_from_slice(mode_flags);
    args.extend_from_slice(&["printf", "%s\\n"]);
    let o = frun(&args, input.as_bytes());
    prop_assert_eq!(
        o.status.code(),
        Some(0),
        "args {:?} stderr {}",
        args,
        err(&o)
    );
    prop_assert_eq!(err(&o), "");
    let got = out(&o);
    if ordered {
        prop_assert_eq!(got, input);
    } else {
        let mut a: Vec<&str> = got.split_terminator('\n').collect();
        let mut b: Vec<&str> = recs.iter().map(String::as_str).collect();
        a.sort();
        b.sort();
        prop_assert_eq!(a, b);
    }
    Ok(())
}

/// Runs one `limit_takes_a_prefix` case.
fn check_limit(total: u64, limit: u64, spec: &str) -> Result<(), TestCaseError> {
    let n = limit.to_string();
    let o = frun(
        &["-k", "-n", &n, "-l", spec, "printf", "%s\\n"],
        &seq_n(total),
    );
    prop_assert_eq!(
        o.status.code(),
        Some(0),
        "-n {} -l {}: {}",
        n,
        spec,
        err(&o)
    );
    prop_assert_eq!(text(&o.stdout), text(&seq_n(total.min(limit))));
    Ok(())
}

/// Output mode flags: `true` if the mode keeps input order.
fn mode() -> impl Strategy<Value = (Vec<&'static str>, bool)> {
    prop_oneof![
        Just((vec!["-k"], true)),
        Just((vec!["--ordered"], true)),
        Just((vec!["-u", "-k"], true)),
        Just((vec![], false)),
        Just((vec!["--buffered"], false)),
        Just((vec!["-u"], false)),
        Just((vec!["-k", "+k"], false)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_record_comes_out_once(
        recs in proptest::collection::vec(line(), 0..30),
        workers in 1u32..=4,
        spec in lines_spec(),
        (mode_flags, ordered) in mode(),
    ) {
        check_every_record(&recs, workers, &spec, &mode_flags, ordered)?;
    }


    #[test]
    fn dry_run_quotes_every_word(
        recs in proptest::collection::vec(line(), 1..12),
        n in 1usize..5,
    ) {
        let input: String = recs.iter().map(|r| format!("{r}\n")).collect();
        let ns = n.to_string();
        let o = frun(&["-N", "-k", "-l", &ns, "printf", "%s\\n"], input.as_bytes());
        prop_assert_eq!(o.status.code(), Some(0));
        prop_assert_eq!(err(&o), "");
        let mut expect = Vec::new();
        for chunk in recs.chunks(n) {
            expect.extend_from_slice(b"printf '%s\\n'");
            for r in chunk {
                expect.push(b' ');
                expect.extend_from_slice(&quote_word(r.as_bytes()));
            }
            expect.push(b'\n');
        }
        prop_assert_eq!(text(&o.stdout), text(&expect));
    }

    #[test]
    fn dry_run_output_is_valid_shell(
        recs in proptest::collection::vec(line(), 1..8),
    ) {
        // Running the printed invocation through sh gives back the records.
        let input: String = recs.iter().map(|r| format!("{r}\n")).collect();
        let o = frun(&["-N", "-k", "-l", "100", "printf", "%s\\n"], input.as_bytes());
        prop_assert_eq!(o.status.code(), Some(0));
        let sh = run_prog("sh", &["-c", &out(&o)], b"");
        prop_assert_eq!(out(&sh), input);
    }

    #[test]
    fn limit_takes_a_prefix(
        total in 0u64..60,
        limit in 1u64..80,
        spec in lines_spec(),
    ) {
        check_limit(total, limit, &spec)?;
    }

}
