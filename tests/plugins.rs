//! C plugins (`-C SO:FN`): plugins written here in C and compiled with `cc` run in plugin
//! hosts. What they print, the contexts they are handed (forkrun's layout and frun's own),
//! retries of a plugin that fails, crashes or calls `exit`, `-s`, NUMA node ids, and the errors
//! said before any work are each checked against the input or an independent count.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The test plugins. Each function is independent; the state that makes one fail once lives in
/// a file named by `$MARK` (the hosts are separate processes, so a static would not do).
const PLUGINS: &str = r#"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

int echo_args(int argc, char **argv) {
    for (int i = 0; i < argc; i++) printf("%s\n", argv[i]);
    return 0;
}

int noop(int argc, char **argv) { (void)argc; (void)argv; return 0; }

/* Copies stdin to stdout, then prints its arguments on stderr-free lines after a marker. */
int cat_stdin(int argc, char **argv) {
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) fwrite(buf, 1, n, stdout);
    for (int i = 0; i < argc; i++) printf("ARG %s\n", argv[i]);
    return 0;
}

/* The first call that sees the record $REC creates $MARK; that call (only) then misbehaves
   as $HOW says: "ret" returns 1, "segv" crashes, "exit" prints its records and exits 4. */
static int first_time(int argc, char **argv) {
    const char *rec = getenv("REC");
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], rec) == 0) {
            int fd = open(getenv("MARK"), O_CREAT | O_EXCL | O_WRONLY, 0600);
            if (fd >= 0) { close(fd); return 1; }
        }
    }
    return 0;
}

int flaky(int argc, char **argv) {
    const char *how = getenv("HOW");
    if (first_time(argc, argv)) {
        if (strcmp(how, "ret") == 0) return 1;
        if (strcmp(how, "segv") == 0) { fflush(stdout); *(volatile int *)0 = 1; }
        if (strcmp(how, "exit") == 0) {
            for (int i = 0; i < argc; i++) printf("%s\n", argv[i]);
            exit(4);
        }
    }
    for (int i = 0; i < argc; i++) printf("%s\n", argv[i]);
    return 0;
}

/* Crashes on every call that holds the record $REC. */
int crash_on(int argc, char **argv) {
    const char *rec = getenv("REC");
    for (int i = 0; i < argc; i++) if (strcmp(argv[i], rec) == 0) *(volatile int *)0 = 1;
    for (int i = 0; i < argc; i++) printf("%s\n", argv[i]);
    return 0;
}

/* Never returns. */
int hang(int argc, char **argv) { (void)argc; (void)argv; for (;;) pause(); }

/* Returns $RET for every batch. */
int ret_env(int argc, char **argv) { (void)argc; (void)argv; return atoi(getenv("RET")); }
"#;

/// Plugins with forkrun's context (its `forkrun_use_ctx` opt-in and its version 1 layout, as
/// forkrun documents them).
const FORKRUN_CTX: &str = r#"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int forkrun_use_ctx = 1;
struct forkrun_ctx {
    uint64_t batch_index, batch_offset, batch_byte_length;
    uint32_t version, worker_id, node_id, num_kills, numa_major, numa_minor;
    int32_t fd_in;
    char delimiter;
    uint8_t cfg_state[3];
};
/* One line per batch: index, byte length, records, version, worker, node, retries. */
int describe(int argc, char **argv, const struct forkrun_ctx *c) {
    (void)argv;
    printf("%llu %llu %d %u %u %u %u %d\n", (unsigned long long)c->batch_index,
           (unsigned long long)c->batch_byte_length, argc, c->version, c->worker_id,
           c->node_id, c->num_kills, c->delimiter);
    return 0;
}
/* describe, taking 2 ms per batch (so that every worker gets batches). */
int describe_slowly(int argc, char **argv, const struct forkrun_ctx *c) {
    usleep(2000);
    return describe(argc, argv, c);
}
/* Fails batch 7 on its first attempt, else prints its records (forkrun's retry example). */
int fail_seven(int argc, char **argv, const struct forkrun_ctx *c) {
    if (c->batch_index == 7 && c->num_kills == 0) return 1;
    for (int i = 0; i < argc; i++) printf("%s\n", argv[i]);
    return 0;
}
"#;

/// A plugin with frun's own context, from the header frun installs.
const FRUN_CTX: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "frun_plugin.h"
FRUN_PLUGIN_USES_CTX;
/* Reads its batch back from fd_in and checks it against argv; prints one line per batch. */
int check_ctx(int argc, char **argv, const struct frun_ctx *c) {
    char *buf = malloc(c->batch_bytes + 1);
    ssize_t got = pread(c->fd_in, buf, c->batch_bytes, (off_t)c->spool_offset);
    int same = got == (ssize_t)c->batch_bytes;
    size_t at = 0;
    for (int i = 0; i < argc && same; i++) {
        size_t n = strlen(argv[i]);
        same = at + n <= (size_t)got && memcmp(buf + at, argv[i], n) == 0
               && (at + n == (size_t)got || buf[at + n] == c->delimiter);
        at += n + 1;
    }
    free(buf);
    dprintf(c->fd_out, "%llu %llu %llu %llu %u %u %u %s\n",
            (unsigned long long)c->batch_index, (unsigned long long)c->input_offset,
            (unsigned long long)c->batch_bytes, (unsigned long long)c->records,
            c->size, c->version, c->incarnation, same ? "same" : "differs");
    return 0;
}
"#;

/// Plugins that leave their process changed for the next call, or end it while loading.
const MISBEHAVING: &str = r#"
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static int calls;
/* On every third call of its host, first takes fd 1 away as $HOW says ("close" closes it,
   "null" points it at /dev/null, "fclose" closes C's stdout), then prints its records. */
int closeout3(int argc, char **argv) {
    if (++calls % 3 == 0) {
        const char *how = getenv("HOW");
        if (strcmp(how, "close") == 0) close(1);
        if (strcmp(how, "null") == 0) {
            int fd = open("/dev/null", O_WRONLY);
            dup2(fd, 1);
            close(fd);
        }
        if (strcmp(how, "fclose") == 0) fclose(stdout);
    }
    for (int i = 0; i < argc; i++) printf("%s\n", argv[i]);
    return 0;
}
/* Prints its working directory, then leaves it for /. */
int chdir_away(int argc, char **argv) {
    (void)argc; (void)argv;
    char dir[PATH_MAX];
    printf("%s\n", getcwd(dir, sizeof dir) ? dir : "?");
    return chdir("/");
}
/* Prints whether fds 0 and 2 are open, then closes both. */
int close_in_and_err(int argc, char **argv) {
    (void)argc; (void)argv;
    printf("%d %d\n", fcntl(0, F_GETFD) != -1, fcntl(2, F_GETFD) != -1);
    close(0);
    close(2);
    return 0;
}
"#;

/// A library whose constructor ends the process with the status `$CTOR_EXIT` says.
const EXITS_WHILE_LOADING: &str = r#"
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void leave(void) {
    const char *code = getenv("CTOR_EXIT");
    if (code) exit(atoi(code));
}
int f(int argc, char **argv) {
    for (int i = 0; i < argc; i++) printf("%s\n", argv[i]);
    return 0;
}
"#;

/// The directory holding the compiled plugins (built once per test process).
fn plugins() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("plugins-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
        for (name, src) in [
            ("plugins", PLUGINS),
            ("forkrun_ctx", FORKRUN_CTX),
            ("frun_ctx", FRUN_CTX),
            ("misbehaving", MISBEHAVING),
            ("exits_while_loading", EXITS_WHILE_LOADING),
        ] {
            let c = dir.join(format!("{name}.c"));
            std::fs::write(&c, src).unwrap();
            let out = std::process::Command::new("cc")
                .args(["-O2", "-shared", "-fPIC", "-Wall", "-Werror", "-I"])
                .arg(&include)
                .arg("-o")
                .arg(dir.join(format!("{name}.so")))
                .arg(&c)
                .output()
                .expect("cc");
            assert!(out.status.success(), "cc {name}: {}", err(&out));
        }
        dir
    })
}

/// `-C LIB.so:FN` for one of the compiled plugins.
fn plugin(lib: &str, function: &str) -> String {
    format!("{}/{lib}.so:{function}", plugins().display())
}

/// Runs frun with `args` and `env` on `input` in a fresh directory (a checkpoint may be left).
fn run(args: &[&str], env: &[(&str, &str)], input: &[u8]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let mut c = assert_cmd::Command::new(BIN);
    c.args(args)
        .envs(env.iter().copied())
        .current_dir(dir.path())
        .write_stdin(input.to_vec())
        .timeout(LIMIT);
    c.output().expect("spawn frun")
}

#[test]
fn echo_plugin_output_in_order_equals_the_input() {
    let input = seq_n(200_000);
    let o = run(&["-k", "-C", &plugin("plugins", "echo_args")], &[], &input);
    assert_clean(&o);
    assert_eq!(o.stdout, input);
    // Buffered: every record once, in any order of batches.
    let o = run(&["-C", &plugin("plugins", "echo_args")], &[], &input);
    assert_clean(&o);
    assert_eq!(sorted_lines(&o.stdout), sorted_lines(&input));
}

#[test]
fn records_are_passed_as_they_are_empty_ones_and_a_last_without_newline_too() {
    for (input, delim) in [
        (&b"a\n\nb c\n\n"[..], None),
        (b"x\ny\n  z", None),
        (b"one\0\0two\0", Some("-z")),
    ] {
        let mut args = vec!["-k", "-C"];
        let p = plugin("plugins", "echo_args");
        args.push(&p);
        args.extend(delim);
        let o = run(&args, &[], input);
        assert_clean(&o);
        // echo_args prints each argument on a line: what the real xargs -0 passes, one per line.
        let mut nul = input.to_vec();
        if delim.is_none() {
            for b in nul.iter_mut().filter(|b| **b == b'\n') {
                *b = 0;
            }
        }
        let x = xargs(&["-0", "-n1", "printf", "%s\\n"], &nul);
        assert_eq!(text(&o.stdout), text(&x.stdout), "input {input:?}");
    }
}

#[test]
fn fixed_words_come_before_the_records() {
    let o = run(
        &[
            "-k",
            "-L",
            "2",
            "-C",
            &plugin("plugins", "echo_args"),
            "A",
            "B",
        ],
        &[],
        &seq_n(4),
    );
    assert_clean(&o);
    assert_eq!(out(&o), "A\nB\n1\n2\nA\nB\n3\n4\n");
}

#[test]
fn forkrun_context_covers_the_input_once_and_numbers_batches_uniquely() {
    let input = seq_n(100_000);
    let o = run(&["-C", &plugin("forkrun_ctx", "describe")], &[], &input);
    assert_clean(&o);
    let rows: Vec<Vec<u64>> = lines(&o.stdout)
        .iter()
        .map(|l| l.split(' ').map(|w| w.parse().unwrap()).collect())
        .collect();
    assert!(rows.len() > 1, "several batches: {rows:?}");
    let bytes: u64 = rows.iter().map(|r| r[1]).sum();
    let records: u64 = rows.iter().map(|r| r[2]).sum();
    assert_eq!(bytes, input.len() as u64);
    assert_eq!(records, 100_000);
    let mut seen: Vec<u64> = rows.iter().map(|r| r[0]).collect();
    seen.sort_unstable();
    assert_eq!(
        seen,
        (0..rows.len() as u64).collect::<Vec<_>>(),
        "indexes 0..n, each once"
    );
    assert!(
        rows.iter()
            .all(|r| r[3] == 1 && r[6] == 0 && r[7] == u64::from(b'\n'))
    );
}

#[test]
fn frun_context_from_the_installed_header_reads_the_batch_back_from_fd_in() {
    let input = seq_n(50_000);
    let o = run(&["-C", &plugin("frun_ctx", "check_ctx")], &[], &input);
    assert_clean(&o);
    let rows = lines(&o.stdout);
    assert!(rows.len() > 1);
    let (mut bytes, mut records) = (0, 0);
    let mut starts = Vec::new();
    for r in &rows {
        let w: Vec<&str> = r.split(' ').collect();
        assert_eq!(w[7], "same", "{r}");
        assert_eq!(w[4], "80", "the context's size: {r}");
        assert_eq!(w[5], "1", "version: {r}");
        assert_eq!(w[6], "1", "first incarnation of each worker's host: {r}");
        starts.push((w[1].parse::<u64>().unwrap(), w[2].parse::<u64>().unwrap()));
        bytes += w[2].parse::<u64>().unwrap();
        records += w[3].parse::<u64>().unwrap();
    }
    assert_eq!(bytes, input.len() as u64);
    assert_eq!(records, 50_000);
    // The input offsets tile the input.
    starts.sort_unstable();
    let mut at = 0;
    for (start, len) in starts {
        assert_eq!(start, at);
        at += len;
    }
}

#[test]
fn batch_seven_failing_once_heals_with_dash_e_and_keeps_order() {
    let input = seq_n(1000);
    let p = plugin("forkrun_ctx", "fail_seven");
    let o = run(&["-k", "-E", "-l", "10", "-C", &p], &[], &input);
    assert_clean(&o);
    assert_eq!(o.stdout, input);
    // Without -E the failure stands: batch 7 (records 71..80) is missing, status 123.
    let o = run(&["-k", "-l", "10", "-C", &p], &[], &input);
    assert_code(&o, 123);
    let mut want = seq(1, 70);
    want.extend(seq(81, 1000));
    assert_eq!(o.stdout, want);
}

/// Runs `flaky` misbehaving once as `how` at record 500 of 1000.
fn flaky_once(how: &str, extra: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("mark");
    let p = plugin("plugins", "flaky");
    let mut args = vec!["-k", "-C", &p];
    args.extend_from_slice(extra);
    let o = run(
        &args,
        &[
            ("REC", "500"),
            ("HOW", how),
            ("MARK", mark.to_str().unwrap()),
        ],
        &seq_n(1000),
    );
    assert!(mark.exists(), "the plugin misbehaved once");
    o
}

#[test]
fn a_plugin_that_segfaults_once_heals_without_dash_e() {
    let o = flaky_once("segv", &[]);
    assert_clean(&o);
    assert_eq!(o.stdout, seq_n(1000));
}

#[test]
fn exit_inside_a_plugin_is_retried_and_its_partial_output_dropped() {
    let o = flaky_once("exit", &[]);
    assert_clean(&o);
    assert_eq!(
        o.stdout,
        seq_n(1000),
        "the records printed before exit() appear once"
    );
}

#[test]
fn a_plugin_returning_non_zero_once_heals_only_with_dash_e() {
    let o = flaky_once("ret", &["-E"]);
    assert_clean(&o);
    assert_eq!(o.stdout, seq_n(1000));
    let o = flaky_once("ret", &["-L", "10"]);
    assert_code(&o, 123);
    let mut want = seq(1, 490);
    want.extend(seq(501, 1000));
    assert_eq!(o.stdout, want);
}

#[test]
fn a_plugin_that_always_crashes_on_a_record_gives_exit_3_and_every_other_record() {
    let o = run(
        &["-k", "-C", &plugin("plugins", "crash_on")],
        &[("REC", "13")],
        &seq_n(3000),
    );
    assert_code(&o, 3);
    let mut want = seq(1, 12);
    want.extend(seq(14, 3000));
    assert_eq!(o.stdout, want);
    assert!(err(&o).contains("Segmentation fault"), "{}", err(&o));
}

#[test]
fn return_values_are_exit_statuses_and_out_of_range_ones_fail() {
    for (ret, code) in [("0", 0), ("1", 123), ("300", 123), ("-1", 123)] {
        let o = run(
            &["-C", &plugin("plugins", "ret_env")],
            &[("RET", ret)],
            &seq_n(10),
        );
        assert_code(&o, code);
    }
    // 200 is retried without -E, then given up.
    let o = run(
        &["-C", &plugin("plugins", "ret_env")],
        &[("RET", "200"), ("FRUN_RETRY_LIMIT", "1")],
        &seq_n(10),
    );
    assert_code(&o, 3);
}

#[test]
fn with_dash_s_the_batch_is_on_the_plugins_stdin() {
    let input = seq_n(100_000);
    let o = run(
        &["-k", "-s", "-C", &plugin("plugins", "cat_stdin")],
        &[],
        &input,
    );
    assert_clean(&o);
    assert_eq!(o.stdout, input);
    // The fixed words are its only arguments; each batch's stdin ends where the batch does.
    let o = run(
        &[
            "-k",
            "-s",
            "-L",
            "3",
            "-C",
            &plugin("plugins", "cat_stdin"),
            "w",
        ],
        &[],
        &seq_n(6),
    );
    assert_clean(&o);
    assert_eq!(out(&o), "1\n2\n3\nARG w\n4\n5\n6\nARG w\n");
}

#[test]
fn unbuffered_plugins_write_straight_to_stdout() {
    let input = seq_n(10_000);
    // One worker: its host writes the batches in input order (two would interleave their
    // writes, as commands do with -u).
    let o = run(
        &["-u", "-j", "1", "-C", &plugin("plugins", "echo_args")],
        &[],
        &input,
    );
    assert_clean(&o);
    assert!(o.stdout == input, "-u output differs from the input");
}

#[test]
fn numa_logical_nodes_reach_the_context() {
    let o = run(
        &[
            "-j",
            "2",
            "--nodes",
            "@2",
            "-l",
            "50",
            "-C",
            &plugin("forkrun_ctx", "describe_slowly"),
        ],
        &[],
        &seq_n(10_000),
    );
    assert_clean(&o);
    // (worker, node) of each batch: each worker stays on one node, the two on different ones.
    let mut pairs: Vec<(String, String)> = lines(&o.stdout)
        .iter()
        .map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            (w[4].to_string(), w[5].to_string())
        })
        .collect();
    pairs.sort();
    pairs.dedup();
    let nodes: std::collections::BTreeSet<&str> = pairs.iter().map(|p| p.1.as_str()).collect();
    assert_eq!(pairs.len(), 2, "two workers, each on one node: {pairs:?}");
    assert_eq!(
        nodes.into_iter().collect::<Vec<_>>(),
        ["0", "1"],
        "{pairs:?}"
    );
}

#[test]
fn a_library_name_without_a_slash_is_in_the_working_directory_never_searched() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(plugins().join("plugins.so"), dir.path().join("mine.so")).unwrap();
    let mut c = assert_cmd::Command::new(BIN);
    c.args(["-k", "-C", "mine.so:echo_args"])
        .current_dir(dir.path())
        .write_stdin(seq_n(5))
        .timeout(LIMIT);
    let o = c.output().unwrap();
    assert_clean(&o);
    assert_eq!(o.stdout, seq_n(5));
    // libc is on the loader's search path, not here: not found.
    let o = run(&["-C", "libc.so.6:puts"], &[], b"x\n");
    assert_one_line_error(&o, 127, "no such plugin library");
}

#[test]
fn a_missing_library_or_function_or_a_foreign_file_is_said_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let missing = format!("{}/none.so:f", dir.path().display());
    assert_one_line_error(
        &run(&["-C", &missing], &[], b"x\n"),
        127,
        "no such plugin library",
    );
    let o = run(&["-C", &plugin("plugins", "not_there")], &[], b"x\n");
    assert_one_line_error(&o, 127, "no function not_there");
    let text_file = dir.path().join("text.so");
    std::fs::write(&text_file, vec![b'x'; 4096]).unwrap();
    let o = run(&["-C", &format!("{}:f", text_file.display())], &[], b"x\n");
    assert_one_line_error(&o, 126, "not a shared library");
    // The same library marked as built for another architecture (ELF e_machine = AArch64).
    let mut elf = std::fs::read(plugins().join("plugins.so")).unwrap();
    elf[18..20].copy_from_slice(&183u16.to_le_bytes());
    let foreign = dir.path().join("foreign.so");
    std::fs::write(&foreign, elf).unwrap();
    let o = run(
        &["-C", &format!("{}:echo_args", foreign.display())],
        &[],
        b"x\n",
    );
    assert_one_line_error(&o, 126, "built for another architecture (AArch64");
    // An ELF file the loader still refuses (a truncated library): the loader's words.
    let whole = std::fs::read(plugins().join("plugins.so")).unwrap();
    let cut = dir.path().join("cut.so");
    std::fs::write(&cut, &whole[..200]).unwrap();
    let o = run(
        &["-C", &format!("{}:echo_args", cut.display())],
        &[],
        b"x\n",
    );
    assert_one_line_error(&o, 126, "cannot load the plugin");
    assert_one_line_error(
        &run(&["-C", dir.path().to_str().unwrap()], &[], b""),
        2,
        "plugin",
    );
}

#[test]
fn bad_plugin_flag_values_are_usage_errors() {
    for bad in ["noColon", "lib.so:", ":f", "lib.so:f-g"] {
        let o = run(&["-C", bad], &[], b"");
        assert_usage_error(&o, &["-C", "plugin"]);
    }
    let p = plugin("plugins", "echo_args");
    for flag in ["-i", "-I", "-U"] {
        let o = run(&[flag, "-C", &p], &[], b"x\n");
        assert_usage_error(&o, &["-C"]);
    }
}

#[test]
fn dry_run_shows_the_plugin_call() {
    let o = run(
        &[
            "-N",
            "-k",
            "-L",
            "2",
            "-C",
            &plugin("plugins", "echo_args"),
            "w",
        ],
        &[],
        &seq_n(3),
    );
    assert_clean(&o);
    let p = plugin("plugins", "echo_args");
    assert_eq!(out(&o), format!("{p} w 1 2\n{p} w 3\n"));
}

#[test]
fn a_plugin_host_of_another_release_refuses_to_serve() {
    use std::os::unix::process::CommandExt;
    let lib = plugins().join("plugins.so");
    let o = std::process::Command::new(BIN)
        .arg0("frun-plugin-host")
        .args(["check", "frun-plugin-wire-0"])
        .arg(&lib)
        .arg("echo_args")
        .output()
        .unwrap();
    assert_one_line_error(&o, 126, "from another frun release");
    // Started by hand, without its arguments: refused too.
    let o = std::process::Command::new(BIN)
        .arg0("frun-plugin-host")
        .output()
        .unwrap();
    assert_one_line_error(&o, 2, "started by frun -C");
}

#[test]
fn a_stopped_run_ends_its_plugin_hosts_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(BIN)
        .args(["-C", &plugin("plugins", "hang")])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(&seq_n(10)).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let hosts = pgrep(&format!(
        "^frun-plugin-host serve .*{}",
        plugins().display()
    ));
    assert!(!hosts.is_empty(), "the hosts run the hanging function");
    send_signal(child.id(), "TERM");
    let status = wait_limit(&mut child, std::time::Duration::from_secs(10));
    assert_stopped_by(&status, libc::SIGTERM, "SIGTERM with plugin hosts");
    std::thread::sleep(std::time::Duration::from_millis(200));
    let left: Vec<u32> = pgrep("^frun-plugin-host serve")
        .into_iter()
        .filter(|p| hosts.contains(p))
        .collect();
    assert!(left.is_empty(), "hosts left behind: {left:?}");
}

#[test]
fn a_function_that_takes_fd_1_away_loses_no_later_output() {
    // Every third call in a host closes or moves its stdout before printing: that attempt is
    // dropped, the batch runs again in a new host, and every record is printed once.
    for how in ["close", "null", "fclose"] {
        let p = plugin("misbehaving", "closeout3");
        let o = run(&["-j1", "-l1", "-k", "-C", &p], &[("HOW", how)], &seq_n(6));
        assert_code(&o, 0);
        assert_eq!(out(&o), text(&seq_n(6)), "HOW={how}: {}", err(&o));
        assert!(err(&o).contains("standard output (fd 1)"), "{}", err(&o));
        let o = run(
            &["-j2", "-l1", "-k", "-C", &p],
            &[("HOW", how)],
            &seq_n(100),
        );
        assert_code(&o, 0);
        assert_eq!(out(&o), text(&seq_n(100)), "HOW={how}, -j2");
    }
}

#[test]
fn each_call_finds_the_working_directory_and_fds_0_and_2_as_the_first_did() {
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path().canonicalize().unwrap();
    for (function, want) in [
        ("chdir_away", format!("{}\n", here.display())),
        ("close_in_and_err", "1 1\n".to_string()),
    ] {
        let o = assert_cmd::Command::new(BIN)
            .args(["-j1", "-l1", "-k", "-C", &plugin("misbehaving", function)])
            .current_dir(&here)
            .write_stdin(seq_n(5))
            .timeout(LIMIT)
            .output()
            .unwrap();
        assert_clean(&o);
        assert_eq!(out(&o), want.repeat(5), "{function}");
    }
}

#[test]
fn a_constructor_that_exits_while_loading_is_refused_before_any_work() {
    let p = plugin("exits_while_loading", "f");
    for code in ["0", "7"] {
        let dir = tempfile::tempdir().unwrap();
        let o = assert_cmd::Command::new(BIN)
            .args(["-k", "-C", &p])
            .env("CTOR_EXIT", code)
            .current_dir(dir.path())
            .write_stdin(seq_n(3))
            .timeout(LIMIT)
            .output()
            .unwrap();
        assert_one_line_error(&o, 126, &format!("exit status {code}): a constructor"));
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "nothing ran, no checkpoint: {left:?}");
    }
    // Without the exit, the same library serves.
    let o = run(&["-k", "-C", &p], &[], &seq_n(3));
    assert_clean(&o);
    assert_eq!(o.stdout, seq_n(3));
}
