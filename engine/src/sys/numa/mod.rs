//! NUMA placement for one run: which nodes take part, how many workers each gets and on which
//! CPUs, which node each spool chunk belongs to, and the two system calls that carry this out
//! (thread affinity and memory binding).
//!
//! It decides and pins; it never claims batches, never reads input and never touches the rings.

pub mod topology;

use nix::sched::{CpuSet, sched_setaffinity};
use nix::unistd::Pid;
use topology::{LOCAL, Machine, REMOTE};

/// `--nodes`, as asked.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum NodeSpec {
    /// Every node that has usable CPUs (one node: no NUMA path at all).
    #[default]
    Auto,
    /// `@N`: N logical nodes over the usable CPUs, also on a one-node machine.
    Logical(u32),
    /// These kernel nodes only; those the machine lacks are skipped (none left: no placement).
    List(Vec<u32>),
    /// The machine's first N nodes with usable CPUs (fewer when it has fewer).
    Count(u32),
    /// No placement: one ring, no pinning, no binding.
    None,
}

/// Most nodes a run places work on (each has a ring; the input-release window holds all).
pub const MAX_NODES: usize = 64;
/// Chunk size for a stream, whose size is not known ahead.
const STREAM_CHUNK: u64 = 2 << 20;
const MIN_CHUNK: u64 = 64 << 10;
const MAX_CHUNK: u64 = 4 << 20;
/// A known input is cut into about this many chunks per turn of the placement.
const CHUNKS_PER_SLOT: u64 = 4;

/// A node of this run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The kernel node its chunks are bound to (`None`: not bound).
    pub memory: Option<u32>,
    /// The CPUs its workers are pinned to.
    pub cpus: Vec<usize>,
    /// How many of the run's workers are its own.
    pub workers: usize,
}

/// Where everything of one run goes.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The run's nodes, each with its workers and CPUs.
    pub nodes: Vec<Node>,
    /// `distance[i][j]` between the run's nodes (10 = local).
    pub distance: Vec<Vec<u32>>,
    /// The turn nodes take: worker i belongs to node `turn[i]` (workers are added in this
    /// order) and chunk c to node `turn[c % turn.len()]`.
    turn: Vec<usize>,
    /// Bytes per spool chunk.
    pub chunk_size: u64,
    /// What the nodes came from, for `--stats`.
    pub source: String,
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    crate::sys::affinity().unwrap_or_else(|| (0..crate::sys::usable_cpus()).collect())
}

/// Splits `total` workers over nodes in proportion to `weights` (largest remainder), each node
/// at least one while there are enough workers; the heaviest nodes come first when there are not.
fn split(total: usize, weights: &[usize]) -> Vec<usize> {
    let n = weights.len();
    let mut out = vec![0; n];
    if total == 0 || n == 0 {
        return out;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(weights[i]), i));
    if total <= n {
        for &i in order.iter().take(total) {
            out[i] = 1;
        }
        return out;
    }
    let sum: usize = weights.iter().sum::<usize>().max(1);
    let spare = total - n;
    let mut rema = Vec::with_capacity(n);
    for i in 0..n {
        let exact = spare * weights[i];
        out[i] = 1 + exact / sum;
        rema.push((exact % sum, i));
    }
    let mut left = total - out.iter().sum::<usize>();
    rema.sort_by_key(|&(r, i)| (std::cmp::Reverse(r), std::cmp::Reverse(weights[i]), i));
    for (_, i) in rema {
        if left == 0 {
            break;
        }
        out[i] += 1;
        left -= 1;
    }
    out
}

/// Interleaves nodes by their counts (smooth weighted round robin): `[2, 1]` gives `0 1 0`.
fn interleave(counts: &[usize]) -> Vec<usize> {
    let total: usize = counts.iter().sum();
    let mut credit = vec![0i64; counts.len()];
    let mut out = Vec::with_capacity(total);
    for _ in 0..total {
        for (c, &w) in credit.iter_mut().zip(counts) {
            *c += w as i64;
        }
        let pick = (0..counts.len())
            .max_by_key(|&i| (credit[i], std::cmp::Reverse(i)))
            .expect("at least one node");
        credit[pick] -= total as i64;
        out.push(pick);
    }
    out
}

impl Layout {
    /// One node, no placement: the plain engine.
    pub fn single(workers: usize) -> Layout {
        Layout {
            nodes: vec![Node {
                memory: None,
                cpus: Vec::new(),
                workers,
            }],
            distance: vec![vec![LOCAL]],
            turn: vec![0; workers.max(1)],
            chunk_size: u64::MAX,
            source: "none".into(),
        }
    }

    /// True when there is nothing to place (one node).
    pub fn is_single(&self) -> bool {
        self.nodes.len() == 1
    }

    /// Builds the layout `spec` asks for, for `workers` workers and an input of `input_size`
    /// bytes (`None`: a stream).
    pub fn plan(
        spec: &NodeSpec,
        workers: usize,
        input_size: Option<u64>,
    ) -> Result<Layout, String> {
        if matches!(spec, NodeSpec::Auto) && topology::one_node() {
            return Ok(Layout::single(workers));
        }
        let allowed = allowed_cpus();
        let (candidates, distance, source) = match spec {
            NodeSpec::None => return Ok(Layout::single(workers)),
            NodeSpec::Auto => {
                let m = topology::discover(&allowed)?;
                machine_nodes(&m, &allowed, None)?
            }
            NodeSpec::List(ids) => {
                let m = topology::discover(&allowed)?;
                machine_nodes(&m, &allowed, Some(ids))?
            }
            NodeSpec::Count(n) => {
                let m = topology::discover(&allowed)?;
                let first: Vec<u32> = m
                    .nodes
                    .iter()
                    .filter(|node| !usable_cpus(&m, node, &allowed).is_empty())
                    .take(*n as usize)
                    .map(|node| node.os)
                    .collect();
                machine_nodes(&m, &allowed, Some(&first))?
            }
            NodeSpec::Logical(n) => logical_nodes(*n as usize, &allowed),
        };
        Ok(Layout::from_candidates(
            candidates, distance, source, workers, input_size,
        ))
    }

    fn from_candidates(
        candidates: Vec<(Option<u32>, Vec<usize>)>,
        distance: Vec<Vec<u32>>,
        source: String,
        workers: usize,
        input_size: Option<u64>,
    ) -> Layout {
        let weights: Vec<usize> = candidates.iter().map(|(_, c)| c.len()).collect();
        let quota = split(workers, &weights);
        let keep: Vec<usize> = (0..candidates.len()).filter(|&i| quota[i] > 0).collect();
        if keep.len() <= 1 {
            return Layout::single(workers);
        }
        let nodes: Vec<Node> = keep
            .iter()
            .map(|&i| Node {
                memory: candidates[i].0,
                cpus: candidates[i].1.clone(),
                workers: quota[i],
            })
            .collect();
        let distance = keep
            .iter()
            .map(|&i| keep.iter().map(|&j| distance[i][j]).collect())
            .collect();
        let counts: Vec<usize> = nodes.iter().map(|n| n.workers).collect();
        let order = interleave(&counts);
        let chunk_size = match input_size {
            Some(s) => s
                .div_ceil(CHUNKS_PER_SLOT * order.len() as u64)
                .next_multiple_of(MIN_CHUNK)
                .clamp(MIN_CHUNK, MAX_CHUNK),
            None => STREAM_CHUNK,
        };
        Layout {
            nodes,
            distance,
            turn: order,
            chunk_size,
            source,
        }
    }

    /// The node worker `index` belongs to.
    pub fn node_of_worker(&self, index: usize) -> usize {
        self.turn.get(index).copied().unwrap_or(0)
    }

    /// The chunk input offset `at` lies in.
    pub fn chunk_of(&self, at: u64) -> u64 {
        at / self.chunk_size
    }

    /// The node chunk `chunk` belongs to.
    pub fn node_of_chunk(&self, chunk: u64) -> usize {
        self.turn[(chunk % self.turn.len() as u64) as usize]
    }

    /// The first workers to start: at least one per node.
    pub fn first_workers(&self, wanted: usize) -> usize {
        wanted.max(self.nodes.len()).min(self.turn.len())
    }

    /// Pins the calling thread to `node`'s CPUs; false when the kernel refuses.
    pub fn pin_thread(&self, node: usize) -> bool {
        self.pin(0, node)
    }

    /// Pins process `pid` (a worker shell) to `node`'s CPUs.
    pub fn pin(&self, pid: libc::pid_t, node: usize) -> bool {
        let Some(n) = self.nodes.get(node) else {
            return false;
        };
        if self.is_single() || n.cpus.is_empty() {
            return false;
        }
        let mut set = CpuSet::new();
        for &c in &n.cpus {
            // A CPU past the set's size cannot be named to the kernel: left out.
            let _ = set.set(c);
        }
        // pid 0 is the calling thread.
        sched_setaffinity(Pid::from_raw(pid), &set).is_ok()
    }

    /// Binds the spool bytes `[from, to)` at `base` (page aligned) chunk by chunk to their
    /// nodes' memory before anything touches them; `bound(node)` is called for every chunk the
    /// kernel bound. Where it refuses (no such node, no NUMA support), memory stays where it
    /// would have been.
    pub fn bind(&self, base: *mut u8, from: u64, to: u64, mut bound: impl FnMut(usize)) {
        if self.is_single() || to <= from {
            return;
        }
        let mut at = from;
        while at < to {
            let chunk = self.chunk_of(at);
            let end = ((chunk + 1) * self.chunk_size).min(to);
            let node = self.node_of_chunk(chunk);
            if let Some(mem) = self.nodes[node].memory.filter(|&mem| mem < 1024) {
                let mut mask = [0u64; 16];
                mask[mem as usize / 64] |= 1 << (mem % 64);
                // Raw mbind: nix has no memory-policy calls.
                // SAFETY: mbind only sets the memory policy of our own mapping's range
                // [base+at, base+end), page aligned since chunks are multiples of 64 KiB and
                // `from` is a page boundary; the mask is a live array of 1024 bits.
                let r = unsafe {
                    libc::syscall(
                        libc::SYS_mbind,
                        base.wrapping_add(at as usize),
                        (end - at) as usize,
                        libc::MPOL_PREFERRED,
                        mask.as_ptr(),
                        1025usize,
                        0u32,
                    )
                };
                if r == 0 {
                    bound(node);
                }
            }
            at = end;
        }
    }
}

type Candidates = (Vec<(Option<u32>, Vec<usize>)>, Vec<Vec<u32>>, String);

/// The CPUs of `node` this process may use. A simulated machine's CPUs are laid over the real
/// ones (simulated CPU k runs on usable CPU k mod n), so its whole path runs here.
fn usable_cpus(m: &Machine, node: &topology::MachineNode, allowed: &[usize]) -> Vec<usize> {
    let mut cpus: Vec<usize> = if m.simulated && !allowed.is_empty() {
        node.cpus
            .iter()
            .map(|c| allowed[c % allowed.len()])
            .collect()
    } else {
        node.cpus
            .iter()
            .copied()
            .filter(|c| allowed.contains(c))
            .collect()
    };
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// The machine's nodes with the CPUs this process may use; with `only`, those of its nodes
/// (ids the machine lacks are skipped, as forkrun does).
fn machine_nodes(
    m: &Machine,
    allowed: &[usize],
    only: Option<&Vec<u32>>,
) -> Result<Candidates, String> {
    let mut picked = Vec::new();
    let mut index = Vec::new();
    for (i, node) in m.nodes.iter().enumerate() {
        if only.is_some_and(|ids| !ids.contains(&node.os)) {
            continue;
        }
        let cpus = usable_cpus(m, node, allowed);
        if cpus.is_empty() {
            if only.is_some() {
                return Err(format!(
                    "--nodes: node {} has no CPU this process may use",
                    node.os
                ));
            }
            continue;
        }
        picked.push((Some(node.os), cpus));
        index.push(i);
    }
    if picked.is_empty() {
        picked.push((None, allowed.to_vec()));
        index.push(0);
    }
    let distance = index
        .iter()
        .map(|&i| {
            index
                .iter()
                .map(|&j| {
                    m.distance
                        .get(i)
                        .and_then(|r| r.get(j))
                        .copied()
                        .unwrap_or(if i == j { LOCAL } else { REMOTE })
                })
                .collect()
        })
        .collect();
    let source = if m.simulated {
        format!("{} (simulated)", m.source)
    } else {
        m.source.to_string()
    };
    Ok((picked, distance, source))
}

/// `@N`: the usable CPUs cut into N contiguous groups (with fewer CPUs than nodes, CPUs are
/// shared round robin). Each group's memory is the kernel node of its first CPU.
fn logical_nodes(n: usize, allowed: &[usize]) -> Candidates {
    let sysfs = topology::from_sysfs(std::path::Path::new("/sys/devices/system/node"));
    let memory_of = |cpu: usize| -> Option<u32> {
        sysfs
            .as_ref()
            .and_then(|m| m.nodes.iter().find(|node| node.cpus.contains(&cpu)))
            .map(|node| node.os)
    };
    let cpus = if allowed.is_empty() {
        vec![0]
    } else {
        allowed.to_vec()
    };
    let groups: Vec<Vec<usize>> = if n >= cpus.len() {
        (0..n).map(|i| vec![cpus[i % cpus.len()]]).collect()
    } else {
        (0..n)
            .map(|i| cpus[i * cpus.len() / n..(i + 1) * cpus.len() / n].to_vec())
            .collect()
    };
    let picked = groups.into_iter().map(|g| (memory_of(g[0]), g)).collect();
    let distance = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| if i == j { LOCAL } else { REMOTE })
                .collect()
        })
        .collect();
    (picked, distance, format!("@{n}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_follow_the_cores() {
        assert_eq!(split(8, &[4, 4]), vec![4, 4]);
        assert_eq!(split(6, &[6, 2]), vec![4, 2]);
        assert_eq!(split(3, &[1, 1, 1, 1]), vec![1, 1, 1, 0]);
        assert_eq!(split(3, &[1, 4, 1, 1]), vec![1, 1, 1, 0]);
        assert_eq!(split(10, &[1, 1, 1, 1]).iter().sum::<usize>(), 10);
        assert_eq!(split(0, &[1]), vec![0]);
    }

    #[test]
    fn interleaving_spreads_nodes() {
        assert_eq!(interleave(&[2, 2]), vec![0, 1, 0, 1]);
        assert_eq!(interleave(&[2, 1]), vec![0, 1, 0]);
        assert_eq!(interleave(&[1, 1, 1, 1]), vec![0, 1, 2, 3]);
    }

    fn layout(cpus: &[usize], workers: usize, size: Option<u64>) -> Layout {
        let c = cpus
            .iter()
            .enumerate()
            .map(|(i, &n)| (Some(i as u32), (0..n).collect()))
            .collect();
        let d = (0..cpus.len())
            .map(|i| {
                (0..cpus.len())
                    .map(|j| if i == j { 10 } else { 20 })
                    .collect()
            })
            .collect();
        Layout::from_candidates(c, d, "test".into(), workers, size)
    }

    #[test]
    fn chunks_are_dealt_like_workers_and_sized_by_the_input() {
        let l = layout(&[1, 1], 2, Some(8 << 20));
        assert_eq!(l.chunk_size, 1 << 20);
        assert_eq!(
            (0..8).map(|c| l.node_of_chunk(c)).collect::<Vec<_>>(),
            [0, 1, 0, 1, 0, 1, 0, 1]
        );
        assert_eq!(layout(&[1, 1], 2, Some(10)).chunk_size, MIN_CHUNK);
        assert_eq!(layout(&[1, 1], 2, Some(1 << 40)).chunk_size, MAX_CHUNK);
        assert_eq!(layout(&[1, 1], 2, None).chunk_size, STREAM_CHUNK);
        // One worker: one node takes part, so nothing is placed.
        assert!(layout(&[1, 1], 1, None).is_single());
        let l = layout(&[1, 1, 1, 1], 8, None);
        assert_eq!(
            l.nodes.iter().map(|n| n.workers).collect::<Vec<_>>(),
            [2, 2, 2, 2]
        );
        assert_eq!(l.first_workers(1), 4);
    }

    #[test]
    fn logical_nodes_share_cpus_when_there_are_few() {
        let (c, d, _) = logical_nodes(4, &[0, 1]);
        let cpus: Vec<Vec<usize>> = c.into_iter().map(|(_, c)| c).collect();
        assert_eq!(cpus, [vec![0], vec![1], vec![0], vec![1]]);
        assert_eq!(d[0], [10, 20, 20, 20]);
        let (c, _, _) = logical_nodes(2, &[0, 1, 2, 3]);
        let cpus: Vec<Vec<usize>> = c.into_iter().map(|(_, c)| c).collect();
        assert_eq!(cpus, [vec![0, 1], vec![2, 3]]);
    }
}
