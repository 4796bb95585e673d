//! NUMA placement on simulated machines (`tests/topologies/`): the worker split and pinning read
//! back from /proc, where each chunk's batches ran, the per-node `--stats` figures, and the
//! `--nodes` values that are refused. (The engine, streams and faults tests run again with
//! `FRUN_NODES=@4`: see tests/run.sh.) The simulated machines need the `hwloc` feature, which
//! tests/run.sh turns on; a build without it must refuse a simulation with one line.

use crate::common::*;
use std::io::Write;
use std::process::{Command, Stdio};
#[cfg(feature = "hwloc")]
use std::time::{Duration, Instant};

fn topology(name: &str) -> String {
    let path = format!("{}/tests/topologies/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap().trim().to_string()
}

/// The CPUs this test process may use (what frun lays simulated CPUs over).
#[cfg(feature = "hwloc")]
fn allowed_cpus() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim();
    parse_cpu_list(list)
}

#[cfg(feature = "hwloc")]
fn parse_cpu_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap()),
            None => out.push(part.parse().unwrap()),
        }
    }
    out
}

/// `key=value` fields of the stats line that starts with `prefix` (e.g. "node=1 ").
fn stats_line(stderr: &str, prefix: &str) -> Vec<(String, String)> {
    let line = stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix("frun: stats: ")
                .filter(|l| l.starts_with(prefix))
        })
        .unwrap_or_else(|| panic!("no stats line {prefix:?} in {stderr}"));
    let mut fields = Vec::new();
    for word in line.split(' ') {
        match word.split_once('=') {
            Some((k, v)) => fields.push((k.to_string(), v.to_string())),
            // A value with a space ("hwloc (simulated)") continues the previous field.
            None => fields.last_mut().unwrap().1.push_str(&format!(" {word}")),
        }
    }
    fields
}

/// A file of `n` records of exactly 16 bytes, so 1 MiB chunks hold 65536 whole records.
#[cfg(feature = "hwloc")]
fn sixteen_byte_records(n: usize) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    let mut buf = Vec::with_capacity(n * 16);
    for i in 0..n {
        writeln!(buf, "{i:015}").unwrap();
    }
    f.write_all(&buf).unwrap();
    f
}

/// Reads back the CPUs each worker thread of `pid` is pinned to, by thread name.
#[cfg(feature = "hwloc")]
fn worker_pinning(pid: u32, workers: usize) -> Vec<(String, Vec<usize>)> {
    let start = Instant::now();
    loop {
        let mut found = Vec::new();
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for t in tasks.flatten() {
                let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
                let comm = comm.trim().to_string();
                if !comm.starts_with("frun-worker-") {
                    continue;
                }
                let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
                if let Some(list) = status
                    .lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                {
                    found.push((comm, parse_cpu_list(list.trim())));
                }
            }
        }
        // A worker thread has its name before it pins itself: wait until none still has the
        // whole machine (where pinning can be seen at all).
        let all = allowed_cpus();
        let settled = all.len() < 2 || found.iter().all(|(_, cpus)| *cpus != all);
        if found.len() == workers && settled {
            found.sort();
            return found;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "only {} of {workers} worker threads seen: {found:?}",
            found.len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One run over a simulated machine of `nodes` packages with one worker per node and balanced
/// file input (four 1 MiB chunks per node, one `--block` batch each). Checks the pinning of
/// every worker thread, the CPUs each batch's command ran on, exact output, and the stats.
#[cfg(feature = "hwloc")]
fn balanced_run(synthetic: &str, nodes: usize) {
    let allowed = allowed_cpus();
    // Simulated CPU k runs on usable CPU k mod n; node k has simulated CPU k.
    let cpu_of_node = |k: usize| allowed[k % allowed.len()];
    let chunks = 4 * nodes;
    let input = sixteen_byte_records(chunks * 65536);
    let mut child = Command::new(BIN)
        .env("HWLOC_SYNTHETIC", synthetic)
        .env_remove("HWLOC_XMLFILE")
        .env_remove("FRUN_NODES")
        .args([
            "--stats",
            "-k",
            "-j",
            &nodes.to_string(),
            "--block",
            "1Mi",
            "-a",
        ])
        .arg(input.path())
        .args([
            "sh",
            "-c",
            "sleep 0.3; grep Cpus_allowed_list /proc/self/status | cut -f2; wc -l",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pinned = worker_pinning(child.id(), nodes);
    for (name, cpus) in &pinned {
        let index: usize = name["frun-worker-".len()..].parse().unwrap();
        // Workers are dealt to nodes in turn: worker i is node i's.
        assert_eq!(cpus, &vec![cpu_of_node(index)], "{name} pinned to {cpus:?}");
    }
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let status = wait_limit(&mut child, Duration::from_secs(60));
    let (stdout, stderr) = (stdout.join().unwrap(), text(&stderr.join().unwrap()));
    assert_eq!(status.code(), Some(0), "{stderr}");
    // Chunk k belongs to node k mod nodes; its batch ran there, on that node's CPU.
    let mut want = String::new();
    for k in 0..chunks {
        let cpu = cpu_of_node(k % nodes);
        want.push_str(&format!("{cpu}\n65536\n"));
    }
    assert_eq!(text(&stdout), want);

    let all = stats_line(&stderr, "nodes=");
    assert_eq!(field(&all, "nodes"), nodes.to_string());
    assert_eq!(field(&all, "source"), "hwloc (simulated)");
    assert_eq!(field(&all, "chunk"), (1 << 20).to_string());
    assert_eq!(field(&all, "cross_node"), "0.0%");
    for k in 0..nodes {
        let n = stats_line(&stderr, &format!("node={k} "));
        assert_eq!(field(&n, "cpus"), cpu_of_node(k).to_string());
        assert_eq!(field(&n, "memory"), k.to_string());
        assert_eq!(field(&n, "workers"), "1");
        assert_eq!(field(&n, "chunks_placed"), "4");
        assert_eq!(field(&n, "chunks_stolen"), "0");
        assert_eq!(field(&n, "batches"), "4");
        assert_eq!(field(&n, "cross_node"), "0.0%");
        let busy: f64 = field(&n, "busy").trim_end_matches('%').parse().unwrap();
        assert!(busy > 50.0 && busy <= 100.0, "busy {busy}% on node {k}");
    }
}

#[test]
#[cfg(feature = "hwloc")]
fn two_packages_split_pin_and_place_balanced_input_locally() {
    balanced_run(&topology("two-packages.synthetic"), 2);
}

#[test]
#[cfg(feature = "hwloc")]
fn four_packages_split_pin_and_place_balanced_input_locally() {
    balanced_run(&topology("four-packages.synthetic"), 4);
}

#[test]
#[cfg(feature = "hwloc")]
fn an_xml_topology_gives_its_nodes_and_distances() {
    let xml = format!(
        "{}/tests/topologies/two-packages.xml",
        env!("CARGO_MANIFEST_DIR")
    );
    let o = Command::new(BIN)
        .env("HWLOC_XMLFILE", &xml)
        .env_remove("HWLOC_SYNTHETIC")
        .env_remove("FRUN_NODES")
        .args(["--stats", "-k", "-j", "4", "-l", "7", "echo"])
        .stdin(std::fs::File::open(write_seq(20000).path()).unwrap())
        .output()
        .unwrap();
    assert_code(&o, 0);
    // -l 7 gives 7 records per batch, in order, wherever the batches ran.
    assert_eq!(lines(&o.stdout), seq_in_batches(20000, 7));
    let e = err(&o);
    assert_eq!(field(&stats_line(&e, "nodes="), "nodes"), "2");
    let n0 = stats_line(&e, "node=0 ");
    assert_eq!(field(&n0, "distances"), "10,32");
    assert_eq!(field(&n0, "workers"), "2");
    assert_eq!(field(&stats_line(&e, "node=1 "), "distances"), "32,10");
    let batches: u64 = (0..2)
        .map(|k| {
            field(&stats_line(&e, &format!("node={k} ")), "batches")
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(batches, 20000u64.div_ceil(7));
}

/// The lines `echo` prints for `seq n` in batches of `k` records.
#[cfg(feature = "hwloc")]
fn seq_in_batches(n: u32, k: usize) -> Vec<String> {
    let all: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    all.chunks(k).map(|c| c.join(" ")).collect()
}

fn write_seq(n: u64) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(&seq_n(n)).unwrap();
    f
}

#[test]
fn logical_nodes_bind_a_streamed_spool_and_keep_exact_batches() {
    // A pipe: the spool is frun's memory, bound chunk by chunk to each node's memory.
    let input = seq_n(1_500_000);
    let o = Command::new(BIN)
        .env_remove("HWLOC_SYNTHETIC")
        .env_remove("HWLOC_XMLFILE")
        .args([
            "--nodes", "@2", "--stats", "-j", "4", "-L", "1000", "-s", "wc", "-l",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            let mut stdin = c.stdin.take().unwrap();
            let feeder = std::thread::spawn(move || stdin.write_all(&input));
            let o = c.wait_with_output();
            feeder.join().unwrap().unwrap();
            o
        })
        .unwrap();
    assert_code(&o, 0);
    // Exactly 1000 records per batch on every node.
    let counts: Vec<String> = lines(&o.stdout);
    assert_eq!(counts.len(), 1500);
    assert!(counts.iter().all(|c| c == "1000"), "{counts:?}");
    let e = err(&o);
    for k in 0..2 {
        let n = stats_line(&e, &format!("node={k} "));
        assert_eq!(field(&n, "workers"), "2");
        let placed: u64 = field(&n, "chunks_placed").parse().unwrap();
        let bound: u64 = field(&n, "chunks_bound").parse().unwrap();
        // The machine's own node exists: the kernel binds every chunk (placed ones and those
        // reserved ahead).
        assert!(placed >= 1 && bound >= placed, "node {k}: {n:?}");
    }
}

#[test]
fn one_node_machines_and_none_print_no_node_lines() {
    let o = Command::new(BIN)
        .env_remove("HWLOC_SYNTHETIC")
        .env_remove("HWLOC_XMLFILE")
        .env_remove("FRUN_NODES")
        .args(["--nodes", "none", "--stats", "-j", "4", "true"])
        .stdin(std::fs::File::open(write_seq(1000).path()).unwrap())
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(err(&o).lines().count(), 1, "{}", err(&o));
    // -j 1 leaves one node with workers: nothing to place either.
    let o = Command::new(BIN)
        .args(["--nodes", "@4", "--stats", "-j", "1", "true"])
        .stdin(std::fs::File::open(write_seq(1000).path()).unwrap())
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(err(&o).lines().count(), 1, "{}", err(&o));
}

#[test]
#[cfg(feature = "hwloc")]
fn a_node_list_picks_those_nodes() {
    let allowed = allowed_cpus();
    let o = Command::new(BIN)
        .env("HWLOC_SYNTHETIC", topology("four-packages.synthetic"))
        .env_remove("HWLOC_XMLFILE")
        .args([
            "--nodes", "1,3", "--stats", "-k", "-j", "4", "-L", "10", "echo",
        ])
        .stdin(std::fs::File::open(write_seq(5000).path()).unwrap())
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(lines(&o.stdout), seq_in_batches(5000, 10));
    let e = err(&o);
    assert_eq!(field(&stats_line(&e, "nodes="), "nodes"), "2");
    // The run's nodes 0 and 1 are the machine's nodes 1 and 3, two workers each.
    for (k, os) in [(0, 1), (1, 3)] {
        let n = stats_line(&e, &format!("node={k} "));
        assert_eq!(field(&n, "memory"), os.to_string());
        assert_eq!(field(&n, "cpus"), allowed[os % allowed.len()].to_string());
        assert_eq!(field(&n, "workers"), "2");
    }
    // Nodes a list names that the machine lacks are skipped (as forkrun does): 2-5 is 2 and 3.
    // A single number is a count (forkrun's meaning): 2 is the first two nodes, 9 all four.
    for (map, want) in [
        ("2-5", vec![2, 3]),
        ("2", vec![0, 1]),
        ("9", vec![0, 1, 2, 3]),
    ] {
        let o = Command::new(BIN)
            .env("HWLOC_SYNTHETIC", topology("four-packages.synthetic"))
            .env_remove("HWLOC_XMLFILE")
            .args([
                "--nodes", map, "--stats", "-k", "-j", "4", "-L", "10", "echo",
            ])
            .stdin(std::fs::File::open(write_seq(5000).path()).unwrap())
            .output()
            .unwrap();
        assert_code(&o, 0);
        assert_eq!(lines(&o.stdout), seq_in_batches(5000, 10), "--nodes {map}");
        let e = err(&o);
        assert_eq!(
            field(&stats_line(&e, "nodes="), "nodes"),
            want.len().to_string(),
            "--nodes {map}: {e}"
        );
        for (k, os) in want.iter().enumerate() {
            let n = stats_line(&e, &format!("node={k} "));
            assert_eq!(field(&n, "memory"), os.to_string(), "--nodes {map}: {e}");
        }
    }
}

#[test]
#[cfg(feature = "hwloc")]
fn a_node_list_of_absent_nodes_is_a_plain_run() {
    // None of the nodes named exists: no placement, no error, every record once.
    let o = Command::new(BIN)
        .env("HWLOC_SYNTHETIC", topology("four-packages.synthetic"))
        .env_remove("HWLOC_XMLFILE")
        .args([
            "--nodes", "5,7", "--stats", "-k", "-j", "4", "-L", "10", "echo",
        ])
        .stdin(std::fs::File::open(write_seq(5000).path()).unwrap())
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(lines(&o.stdout), seq_in_batches(5000, 10));
    let e = err(&o);
    assert!(!e.lines().any(|l| l.contains("node=")), "{e}");
}

#[test]
fn bad_node_maps_are_usage_errors() {
    for bad in ["@0", "@x", "@65", "foo", "1-0", "", "0,,x"] {
        let o = frun(&["--nodes", bad, "true"], b"");
        assert_usage_error(&o, &["--nodes"]);
    }
    // A node the machine does not have is skipped, and a count past the machine's nodes takes
    // them all: each a plain run here.
    for map in ["0,7", "7", "2", "64"] {
        let o = frun(&["--nodes", map, "-L", "2", "echo"], b"a\nb\n");
        assert_clean(&o);
        assert_eq!(out(&o), "a b\n", "--nodes {map}");
    }
    let o = Command::new(BIN)
        .env("FRUN_NODES", "@zero")
        .arg("true")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_usage_error(&o, &["FRUN_NODES"]);
    // The machine's node 0 alone is one node: a plain run.
    let o = frun(&["--nodes", "0", "-L", "2", "echo"], b"a\nb\n");
    assert_clean(&o);
    assert_eq!(out(&o), "a b\n");
}

#[test]
#[cfg(not(feature = "hwloc"))]
fn without_hwloc_a_simulation_is_refused_in_one_line() {
    let out = Command::new(BIN)
        .args(["--nodes", "auto", "true"])
        .env("HWLOC_SYNTHETIC", topology("two-packages.synthetic"))
        .env_remove("HWLOC_XMLFILE")
        .stdin(Stdio::null())
        .output()
        .expect("spawn frun");
    let e = err(&out);
    assert_eq!(out.status.code(), Some(2), "stderr: {e}");
    assert_eq!(e.lines().count(), 1, "stderr: {e}");
    assert!(e.contains("built without hwloc"), "stderr: {e}");
}
