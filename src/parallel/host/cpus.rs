//! `--number-of-sockets/cores/threads/cpus` and `--use-*-instead-of-threads`: counts the
//! machine's sockets, cores and hardware threads from a `/proc/cpuinfo` or `lscpu` text.
//!
//! `PARALLEL_LSCPU` / `PARALLEL_CPUINFO` (when not empty) stand in for the machine, as GNU
//! Parallel allows; otherwise `/proc/cpuinfo` is read. It only counts; it must not decide how
//! many jobs run (the caller does) and never reads anything else of the machine.

use std::collections::HashSet;

/// What a description of the machine says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::parallel) struct Counts {
    pub(in crate::parallel) sockets: u64,
    pub(in crate::parallel) cores: u64,
    pub(in crate::parallel) threads: u64,
}

/// Counts from `/proc/cpuinfo` text: one `processor` line per hardware thread, sockets by
/// distinct `physical id`, cores by distinct (`physical id`, `core id`) pairs.
pub(in crate::parallel) fn from_cpuinfo(text: &str) -> Option<Counts> {
    let mut threads = 0u64;
    let mut sockets = HashSet::new();
    let mut cores = HashSet::new();
    let mut socket = "";
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "processor" => {
                threads += 1;
                socket = "";
            }
            "physical id" => {
                socket = value.trim();
                sockets.insert(socket);
            }
            "core id" => {
                cores.insert((socket, value.trim()));
            }
            _ => {}
        }
    }
    (threads > 0).then(|| Counts {
        sockets: (sockets.len() as u64).max(1),
        cores: if cores.is_empty() {
            threads
        } else {
            cores.len() as u64
        },
        threads,
    })
}

/// Counts from `lscpu` text: `CPU(s)` threads, `Socket(s)` (or `CPU socket(s)`) sockets, and
/// the threads divided by `Thread(s) per core` cores.
pub(in crate::parallel) fn from_lscpu(text: &str) -> Option<Counts> {
    let (mut threads, mut per_core, mut sockets) = (None, 1u64, 1u64);
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let Ok(n) = value.trim().parse::<u64>() else {
            continue;
        };
        match key.trim() {
            "CPU(s)" => threads = Some(n),
            "Thread(s) per core" => per_core = n.max(1),
            "Socket(s)" | "CPU socket(s)" => sockets = n.max(1),
            _ => {}
        }
    }
    let threads = threads.filter(|&t| t > 0)?;
    Some(Counts {
        sockets,
        cores: (threads / per_core).max(1),
        threads,
    })
}

/// The machine's counts: `PARALLEL_LSCPU`, else `PARALLEL_CPUINFO`, else `/proc/cpuinfo`;
/// the CPUs frun may use when none of them can be read.
pub(in crate::parallel) fn machine() -> Counts {
    let given = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    given("PARALLEL_LSCPU")
        .and_then(|t| from_lscpu(&t))
        .or_else(|| given("PARALLEL_CPUINFO").and_then(|t| from_cpuinfo(&t)))
        .or_else(|| {
            let t = std::fs::read_to_string("/proc/cpuinfo").ok()?;
            from_cpuinfo(&t)
        })
        .unwrap_or_else(|| {
            let n = frun_engine::sys::usable_cpus() as u64;
            Counts {
                sockets: 1,
                cores: n,
                threads: n,
            }
        })
}

/// `PARALLEL_LSCPU` or `PARALLEL_CPUINFO` describes a machine to count instead of this one.
pub(in crate::parallel) fn described() -> bool {
    ["PARALLEL_LSCPU", "PARALLEL_CPUINFO"]
        .iter()
        .any(|n| std::env::var_os(n).is_some_and(|v| !v.is_empty()))
}

/// What `-j N%`, `+N` and `-N` count: the sockets or cores when asked
/// (`--use-X-instead-of-threads`), the described machine's threads, else the CPUs frun may use.
pub(in crate::parallel) fn base(instead: Option<&str>) -> u64 {
    match instead {
        Some(what) => number_of(what).unwrap_or(1),
        None if described() => machine().threads,
        None => frun_engine::sys::usable_cpus() as u64,
    }
}

/// `--number-of-X`'s answer, for X in sockets, cores, threads, cpus (cpus are cores).
pub(in crate::parallel) fn number_of(what: &str) -> Option<u64> {
    let c = machine();
    match what {
        "sockets" => Some(c.sockets),
        "cores" | "cpus" => Some(c.cores),
        "threads" => Some(c.threads),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_two_sockets_with_hyperthreads() {
        let mut t = String::new();
        for p in 0..8 {
            t += &format!(
                "processor\t: {p}\nphysical id\t: {}\ncore id\t\t: {}\n\n",
                p / 4,
                p % 2
            );
        }
        let c = from_cpuinfo(&t).unwrap();
        assert_eq!((c.sockets, c.cores, c.threads), (2, 4, 8));
    }

    #[test]
    fn cpuinfo_without_topology_counts_processors() {
        let c = from_cpuinfo("processor : 0\nBogoMIPS : 2\n\nprocessor : 1\n").unwrap();
        assert_eq!((c.sockets, c.cores, c.threads), (1, 2, 2));
        assert_eq!(from_cpuinfo("nothing here\n"), None);
    }

    #[test]
    fn lscpu_counts() {
        let t = "CPU(s):   8\nOn-line CPU(s) list: 0-7\nThread(s) per core: 2\n\
                 Core(s) per socket: 4\nSocket(s): 1\nNUMA node0 CPU(s): 0-7\n";
        let c = from_lscpu(t).unwrap();
        assert_eq!((c.sockets, c.cores, c.threads), (1, 4, 8));
        let old = "CPU(s): 8\nThread(s) per core: 1\nCPU socket(s): 2\n";
        let c = from_lscpu(old).unwrap();
        assert_eq!((c.sockets, c.cores, c.threads), (2, 8, 8));
    }
}
