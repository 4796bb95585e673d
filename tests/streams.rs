//! Stdin modes: `-s` (a batch's bytes on the command's stdin), `-b N` (raw byte chunks) and
//! `--block N` (about N bytes cut at record boundaries). Every check compares bytes with the
//! input itself or with `wc -c`.

use crate::common::*;
use std::time::{Duration, Instant};

/// Deterministic bytes holding every byte value, with no trailing newline.
fn binary_input(len: usize) -> Vec<u8> {
    let mut rng = SeedRng::new(0x5eed);
    let mut v: Vec<u8> = (0..=255u8).collect();
    while v.len() < len {
        // Plenty of newlines so record-based modes see many records.
        let b = rng.below(300);
        v.push(if b >= 256 { b'\n' } else { b as u8 });
    }
    v.truncate(len);
    if v.last() == Some(&b'\n') {
        v.pop();
    }
    v
}

/// One number per output line (as `wc -c` prints them).
fn numbers(out: &[u8]) -> Vec<u64> {
    text(out)
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

fn with_file(data: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut f, data).unwrap();
    f
}

#[test]
fn stdin_mode_is_byte_exact_from_a_pipe_and_a_file() {
    let big = binary_input(3_000_000);
    // Small batches mean many processes: a smaller input keeps the test quick.
    let small = binary_input(60_000);
    for (args, data) in [
        (&["-k", "-s", "cat"][..], &big),
        (&["-k", "-s", "-l", "7", "cat"], &small),
        (&["-k", "-s", "-j", "2", "-l", "1000", "cat"], &big),
    ] {
        let o = frun(args, data);
        assert_code(&o, 0);
        assert!(o.stdout == *data, "{args:?}: output differs from input");
        let f = with_file(data);
        let mut a = vec!["-a", f.path().to_str().unwrap()];
        a.extend_from_slice(args);
        let o = frun(&a, b"");
        assert_code(&o, 0);
        assert!(o.stdout == *data, "-a {args:?}: output differs from input");
    }
}

/// A known input in stdin mode is cut by bytes from its first batch: a small file is still
/// spread over both workers, a larger one goes in a few big batches, and with `--stats` (which
/// counts records) the cuts and the counts are the same kind.
#[test]
fn stdin_mode_shares_a_file_out_by_bytes() {
    for (n, most) in [(100u64, 40usize), (2_000_000, 40)] {
        let f = with_file(&seq_n(n));
        for stats in [false, true] {
            let mut a = vec!["-a", f.path().to_str().unwrap(), "-j", "2", "-k"];
            if stats {
                a.push("--stats");
            }
            a.extend_from_slice(&["-s", "wc", "-l"]);
            let o = frun(&a, b"");
            assert_code(&o, 0);
            let c = counts(&o.stdout);
            assert_eq!(c.iter().sum::<usize>() as u64, n, "{a:?}");
            assert!(
                c.len() >= 2 && c.len() <= most,
                "{a:?}: {} batches",
                c.len()
            );
            assert!(c[0] as u64 <= n / 3, "{a:?}: first batch {} records", c[0]);
            if stats {
                assert!(err(&o).contains(&format!("records={n} ")), "{}", err(&o));
            }
        }
    }
}

#[test]
fn stdin_mode_keeps_nul_delimiters() {
    let mut data = Vec::new();
    for i in 0..5000 {
        data.extend_from_slice(format!("rec {i}\n with newline").as_bytes());
        data.push(0);
    }
    let o = frun(&["-k", "-z", "-s", "-l", "13", "cat"], &data);
    assert_code(&o, 0);
    assert!(o.stdout == data);
}

#[test]
fn byte_chunks_are_byte_exact_for_every_size() {
    let data = binary_input(2_500_000);
    // One process per chunk: small chunks get a small input.
    for (n, len) in [
        ("1", 3_000),
        ("3", 9_000),
        ("4096", data.len()),
        ("1000000", data.len()),
    ] {
        let input = &data[..len];
        let o = frun(&["-k", "-b", n, "cat"], input);
        assert_code(&o, 0);
        assert!(o.stdout == input, "-b {n}: output differs from input");
    }
}

#[test]
fn byte_chunks_have_the_asked_size() {
    let data = binary_input(100_000);
    let o = frun(&["-k", "-b", "512", "-s", "wc", "-c"], &data);
    assert_code(&o, 0);
    let sizes = numbers(&o.stdout);
    assert_eq!(sizes.iter().sum::<u64>(), data.len() as u64);
    assert!(
        sizes[..sizes.len() - 1].iter().all(|&s| s == 512),
        "{sizes:?}"
    );
    assert_eq!(sizes.len(), data.len().div_ceil(512));
}

#[test]
fn byte_chunks_may_cut_multibyte_characters_and_still_add_up() {
    let data = "ünïcödé — 日本語 ✓\n".repeat(40).into_bytes();
    let o = frun(&["-b", "3", "wc", "-c"], &data);
    assert_code(&o, 0);
    let total: u64 = numbers(&o.stdout).iter().sum();
    assert_eq!(total, data.len() as u64);
}

#[test]
fn byte_mode_without_a_number_uses_the_default_size() {
    let data = binary_input(2_200_000);
    let o = frun(&["-k", "-b", "wc", "-c"], &data);
    assert_code(&o, 0);
    let sizes = numbers(&o.stdout);
    assert_eq!(sizes, [1 << 20, 1 << 20, data.len() as u64 - (2 << 20)]);
}

#[test]
fn byte_chunks_as_one_argument_with_plus_s() {
    let o = frun(&["-k", "-b", "2", "+s", "printf", "[%s]\\n"], b"abcde");
    assert_code(&o, 0);
    assert_eq!(out(&o), "[ab]\n[cd]\n[e]\n");
    let o = frun(&["-b", "200000", "+s", "echo"], b"x");
    assert_usage_error(&o, &["131071"]);
}

#[test]
fn blocks_cut_at_record_boundaries() {
    let data = seq_n(200_000);
    let o = frun(&["-k", "--block", "10000", "cat"], &data);
    assert_code(&o, 0);
    assert!(o.stdout == data);
    // Every chunk holds whole lines: at most 10000 bytes, and more than 10000 minus the
    // longest line (7 bytes), except the last.
    let o = frun(&["-k", "--block", "10000", "wc", "-c"], &data);
    assert_code(&o, 0);
    let sizes = numbers(&o.stdout);
    assert_eq!(sizes.iter().sum::<u64>(), data.len() as u64);
    let (last, full) = sizes.split_last().unwrap();
    assert!(
        full.iter().all(|&s| (9_994..=10_000).contains(&s)),
        "{sizes:?}"
    );
    assert!(*last <= 10_000);
    let o = frun(
        &[
            "-k",
            "--block",
            "10000",
            "sh",
            "-c",
            "tail -c 1 | od -An -tx1",
        ],
        &data,
    );
    assert_code(&o, 0);
    assert!(
        text(&o.stdout).lines().all(|l| l.trim() == "0a"),
        "{}",
        out(&o)
    );
}

#[test]
fn a_record_longer_than_the_block_is_its_own_chunk() {
    let mut data = b"a\nb\n".to_vec();
    data.extend(std::iter::repeat_n(b'x', 5000));
    data.extend_from_slice(b"\nc\n");
    let o = frun(&["-k", "--block", "100", "wc", "-c"], &data);
    assert_code(&o, 0);
    assert_eq!(out(&o), "4\n5001\n2\n");
}

#[test]
fn a_command_that_reads_nothing_is_not_an_error() {
    let data = binary_input(3_000_000);
    let o = frun(&["-s", "-l", "100000", "true"], &data);
    assert_code(&o, 0);
    assert_eq!(err(&o), "");
    let o = frun(&["-b", "1Mi", "true"], &data);
    assert_code(&o, 0);
}

/// frun pauses instead of blocking while a batch's pipe is full, and waits for a reader that
/// reads nothing for a while: the batches of a command that sleeps before reading, or reads in
/// slow sips, still arrive whole and in order.
#[test]
fn slow_readers_get_every_byte() {
    let data = binary_input(6_000_000);
    for cmd in [
        "sleep 0.3; cat",
        // 64 KiB reads 2 ms apart (perl-base is in every Debian).
        "perl -e 'while (sysread STDIN, $b, 65536) { print $b; select undef, undef, undef, 0.002 }'",
    ] {
        let o = frun(&["-k", "-s", "-b", "3Mi", "sh", "-c", cmd], &data);
        assert_code(&o, 0);
        assert!(o.stdout == data, "{cmd}: output differs from input");
        let f = with_file(&data);
        let o = frun(
            &[
                "-k",
                "-s",
                "-a",
                f.path().to_str().unwrap(),
                "sh",
                "-c",
                cmd,
            ],
            b"",
        );
        assert_code(&o, 0);
        assert!(o.stdout == data, "-a, {cmd}: output differs from input");
    }
}

/// A command that reads part of its batch and exits, or exits while frun waits for the pipe
/// to drain, ends its batch: no hang, nothing reported.
#[test]
fn a_reader_that_stops_early_ends_its_batch() {
    let data = binary_input(8_000_000);
    for cmd in ["head -c 100 >/dev/null", "sleep 0.2"] {
        let start = Instant::now();
        let o = frun(&["-s", "-b", "4Mi", "sh", "-c", cmd], &data);
        assert_code(&o, 0);
        assert_eq!(err(&o), "", "{cmd}");
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{cmd}: took too long"
        );
    }
}

#[test]
fn a_failing_stdin_command_gives_123() {
    let o = frun(
        &["-s", "-l", "1", "sh", "-c", "cat >/dev/null; exit 3"],
        b"a\nb\n",
    );
    assert_code(&o, 123);
    assert!(err(&o).contains("2 of 2 batches failed"), "{}", err(&o));
}

#[test]
fn trickling_input_is_flushed_by_the_timeout() {
    let start = Instant::now();
    let mut child = spawn_frun_fed(
        &["-l", "100", "-t", "100000", "-k", "-s", "cat"],
        vec![
            (Duration::ZERO, b"first\n".to_vec()),
            (Duration::from_secs(8), b"second\n".to_vec()),
        ],
    );
    let lines = timed_lines(&mut child, start, Duration::from_secs(20));
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0].0, "first");
    // Flushed after 0.1 s, long before the second line comes (a busy machine may be slow).
    assert!(lines[0].1 < Duration::from_secs(6), "{lines:?}");
    assert_eq!(lines[1].0, "second");
}

#[test]
fn stdin_modes_refuse_record_only_flags() {
    assert_usage_error(&frun(&["-n", "5", "-b", "3", "cat"], b"x"), &["-n"]);
    assert_usage_error(&frun(&["-i", "-s", "echo", "{}"], b"x"), &["-i"]);
}

#[test]
fn dry_run_in_stdin_mode_shows_the_command_without_records() {
    let o = frun(&["-N", "-k", "-s", "-l", "2", "wc", "-l"], &seq_n(5));
    assert_code(&o, 0);
    assert_eq!(out(&o), "wc -l\nwc -l\nwc -l\n");
    let o = frun(&["-N", "-k", "-b", "2", "+s", "echo"], b"abcde");
    assert_eq!(out(&o), "echo ab\necho cd\necho e\n");
}

/// Runs frun over `data` from a pipe whose writer has finished and closed before frun starts,
/// so all of the input is there at once.
fn frun_over_ended_pipe(args: &[&str], data: &[u8]) -> std::process::Output {
    assert!(data.len() <= 60_000, "must fit the pipe's buffer");
    let (reader, mut writer) = pipe_files();
    std::io::Write::write_all(&mut writer, data).unwrap();
    drop(writer);
    let child = spawn_frun(args, reader.into());
    child.wait_with_output().unwrap()
}

/// An input of a few bytes that is all in memory when the run starts (a small file, or a pipe
/// that has ended) is cut without a scanner thread. Around that limit (1024 bytes, so at most
/// 1024 batches), with one record per batch, every record comes out once and in order, from a
/// pipe with several workers and from a file with one.
#[test]
fn an_input_all_there_at_the_start_is_cut_whole() {
    // Empty records, one byte each: as many batches as bytes.
    let blank: Vec<Vec<u8>> = [1023usize, 1024, 1025]
        .iter()
        .map(|&n| vec![b'\n'; n])
        .collect();
    let numbered = [seq(1, 250), seq(1, 300)]; // 892 and 1092 bytes
    let cases: Vec<&Vec<u8>> = blank.iter().chain(&numbered).collect();
    for data in cases {
        let args = ["-k", "-j", "4", "-s", "-l", "1", "cat"];
        let o = frun_over_ended_pipe(&args, data);
        assert_code(&o, 0);
        assert!(o.stdout == *data, "pipe {args:?}, {} bytes", data.len());
        let f = with_file(data);
        let a = [
            "-a",
            f.path().to_str().unwrap(),
            "-k",
            "-j",
            "1",
            "-s",
            "-l",
            "1",
            "cat",
        ];
        let o = frun(&a, b"");
        assert_code(&o, 0);
        assert!(o.stdout == *data, "file {a:?}, {} bytes", data.len());
    }
    // Argument mode, one record per command, checked against xargs.
    for data in &numbered {
        let o = frun_over_ended_pipe(&["-k", "-l", "1", "echo", "r"], data);
        assert_code(&o, 0);
        let x = xargs(&["-n", "1", "echo", "r"], data);
        assert_code(&x, 0);
        assert!(o.stdout == x.stdout, "-l 1, {} bytes", data.len());
    }
}

/// One record much longer than the block, from a pipe: it spans hundreds of moves from the pipe
/// into the spool (the pipe holds at most 1 MiB) and reaches the command byte for byte through
/// `--block`, `--pipe` and `--lb --pipe`. Every byte value but the newline is in it; `cat`
/// writing the file into the pipe is a writer of its own pace, as in the benchmark.
#[test]
fn a_record_spanning_many_reads_from_a_pipe_arrives_byte_exact() {
    let mut data: Vec<u8> = binary_input(24_000_000)
        .into_iter()
        .map(|b| if b == b'\n' { b'x' } else { b })
        .collect();
    data.push(b'\n');
    let f = with_file(&data);
    let want = sha256(&data);
    for flags in [
        "--block 1M",
        "parallel --pipe --block 1M",
        "parallel --lb --pipe --block 1M",
    ] {
        let o = bash(&format!(
            "cat '{}' | \"$FRUN\" {flags} cat | sha256sum",
            f.path().display()
        ));
        assert_code(&o, 0);
        assert_eq!(out(&o).split(' ').next().unwrap(), want, "{flags}");
    }
}

/// The SHA-256 of `data` as `sha256sum` prints it.
fn sha256(data: &[u8]) -> String {
    let o = run_prog::<&str>("sha256sum", &[], data);
    out(&o).split(' ').next().unwrap().to_string()
}
