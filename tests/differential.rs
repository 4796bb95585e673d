//! Differential tests: frun's batches and bytes must equal `xargs -d '\n' -n N` (or `xargs -0`,
//! `xargs -d C`) on random inputs full of characters that trip up quoting and encoding.

use crate::common::*;
use proptest::prelude::*;

/// Prints each argument followed by NUL: the exact bytes of every record.
const PRINT_NUL: [&str; 2] = ["printf", "%s\\0"];
/// Prints each argument in angle brackets and ends the batch with `|`: shows batch boundaries.
const PRINT_BATCH: [&str; 4] = ["sh", "-c", "printf '<%s>' \"$@\"; echo '|'", "sh"];

/// `xargs` delimiter arguments for a record terminator.
fn xargs_delim(term: u8) -> Vec<String> {
    match term {
        0 => vec!["-0".into()],
        b'\n' => vec!["-d".into(), "\\n".into()],
        b'\t' => vec!["-d".into(), "\\t".into()],
        c => vec!["-d".into(), (c as char).to_string()],
    }
}

/// frun delimiter arguments for a record terminator.
fn frun_delim(term: u8) -> Vec<String> {
    match term {
        0 => vec!["-z".into()],
        b'\n' => vec![],
        b'\t' => vec!["-d".into(), "\\t".into()],
        c => vec!["-d".into(), (c as char).to_string()],
    }
}

/// Compares frun and xargs on `input`; `size_flag` is `-l` or `-L`.
fn compare(input: &[u8], term: u8, n: usize, size_flag: &str, cmd: &[&str]) -> Result<(), String> {
    let mut fa: Vec<String> = vec!["-k".into(), size_flag.into(), n.to_string()];
    fa.extend(frun_delim(term));
    fa.extend(cmd.iter().map(|s| s.to_string()));
    let f = frun(&fa, input);
    if f.status.code() != Some(0) || !f.stderr.is_empty() {
        return Err(format!(
            "frun {fa:?} failed: {:?} stderr {:?}",
            f.status,
            err(&f)
        ));
    }
    if input.is_empty() {
        // xargs (without -r) would run once; frun must run nothing.
        if !f.stdout.is_empty() {
            return Err(format!("frun printed {:?} for empty input", out(&f)));
        }
        return Ok(());
    }
    let mut xa = xargs_delim(term);
    xa.extend(["-n".to_string(), n.to_string()]);
    xa.extend(cmd.iter().map(|s| s.to_string()));
    let x = xargs(&xa, input);
    assert_eq!(x.status.code(), Some(0), "xargs failed: {}", err(&x));
    if f.stdout != x.stdout {
        return Err(format!(
            "frun {fa:?} differs from xargs {xa:?}\ninput  {:?}\nfrun   {:?}\nxargs  {:?}",
            text(input),
            text(&f.stdout),
            text(&x.stdout)
        ));
    }
    Ok(())
}

fn token() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => proptest::sample::select(NASTY).prop_map(|t| t.to_vec()),
        2 => proptest::collection::vec(1u8..=255, 0..6),
        1 => Just(b"\n".to_vec()),
    ]
}

fn record(term: u8) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(token(), 0..5).prop_map(move |ts| {
        let mut r: Vec<u8> = ts.concat();
        r.retain(|&b| b != term && b != 0);
        r
    })
}

/// Builds input from records; optionally drops the final terminator.
fn build(recs: &[Vec<u8>], term: u8, final_term: bool) -> Vec<u8> {
    let mut v = join_terminated(recs, term);
    if !final_term && !v.is_empty() {
        v.pop();
        // Dropping the terminator of a final empty record would drop the record itself.
        if recs.last().is_some_and(|r| r.is_empty()) {
            v.push(term);
        }
    }
    v
}

fn case(term: u8) -> impl Strategy<Value = (Vec<u8>, usize, bool)> {
    (
        proptest::collection::vec(record(term), 0..25),
        1usize..8,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(move |(recs, n, final_term, exact)| (build(&recs, term, final_term), n, exact))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn newline_bytes_equal_xargs((input, n, exact) in case(b'\n')) {
        let flag = if exact { "-L" } else { "-l" };
        compare(&input, b'\n', n, flag, &PRINT_NUL).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn newline_batches_equal_xargs((input, n, exact) in case(b'\n')) {
        let flag = if exact { "-L" } else { "-l" };
        compare(&input, b'\n', n, flag, &PRINT_BATCH).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn nul_bytes_equal_xargs((input, n, exact) in case(0)) {
        let flag = if exact { "-L" } else { "-l" };
        compare(&input, 0, n, flag, &PRINT_NUL).map_err(TestCaseError::fail)?;
        compare(&input, 0, n, flag, &PRINT_BATCH).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn custom_delimiter_equals_xargs((input, n, _exact) in case(b',')) {
        compare(&input, b',', n, "-l", &PRINT_NUL).map_err(TestCaseError::fail)?;
    }
}

/// Larger seeded inputs, many batch sizes and delimiters.
#[test]
fn seeded_large_inputs_equal_xargs() {
    let mut rng = SeedRng::new(0x5eed_f00d);
    for (round, term) in [b'\n', 0, b'\n', b'\t', b'\n', 0].into_iter().enumerate() {
        let count = 300 + rng.below(2000) as usize;
        let recs: Vec<Vec<u8>> = (0..count)
            .map(|_| {
                let mut r = nasty_record(&mut rng, term);
                if term == 0 && rng.below(10) == 0 {
                    r.push(b'\n');
                }
                r
            })
            .collect();
        let input = build(&recs, term, round % 2 == 0);
        for n in [13usize, 64, 1000] {
            compare(&input, term, n, "-l", &PRINT_NUL).unwrap();
        }
        if round < 2 {
            // One process per record: keep to two rounds for speed.
            let head = &input[..input.len().min(800)];
            compare(head, term, 1, "-l", &PRINT_NUL).unwrap();
            compare(head, term, 3, "-l", &PRINT_NUL).unwrap();
        }
        compare(&input, term, 37, "-L", &PRINT_BATCH).unwrap();
        compare(&input, term, 333, "-l", &PRINT_BATCH).unwrap();
    }
}

/// Only-empty records and whitespace-only records, which plain xargs would drop.
#[test]
fn blank_records_equal_xargs() {
    for input in [&b"\n"[..], b"\n\n\n\n", b" \n\t\n  \n", b"\n \n\n", b""] {
        for n in 1..=4 {
            compare(input, b'\n', n, "-l", &PRINT_BATCH).unwrap();
            compare(input, b'\n', n, "-l", &PRINT_NUL).unwrap();
        }
    }
    for input in [&b"\0"[..], b"\0\0\0", b"\n\0 \0"] {
        for n in 1..=3 {
            compare(input, 0, n, "-l", &PRINT_BATCH).unwrap();
        }
    }
}

/// Default adaptive batching passes the same records in the same order as xargs.
#[test]
fn adaptive_batches_pass_the_same_records() {
    let mut rng = SeedRng::new(42);
    let recs: Vec<Vec<u8>> = (0..3000).map(|_| nasty_record(&mut rng, b'\n')).collect();
    let input = join_terminated(&recs, b'\n');
    let f = frun(&["-k", "printf", "%s\\0"], &input);
    assert_clean(&f);
    let x = xargs(&["-d", "\\n", "printf", "%s\\0"], &input);
    assert!(
        f.stdout == x.stdout,
        "adaptive batching changed the records"
    );
    let mut expect = Vec::new();
    for r in &recs {
        expect.extend_from_slice(r);
        expect.push(0);
    }
    assert!(f.stdout == expect);
}
