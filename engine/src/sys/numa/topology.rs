//! Discovery: which NUMA nodes the machine has, the CPUs of each and the distances between them.
//!
//! hwloc is asked (through `hwlocality`, when frun is built with it) whenever there is more than
//! one node or `HWLOC_XMLFILE` / `HWLOC_SYNTHETIC` describe a machine to simulate; otherwise, and
//! when hwloc is not linked, `/sys/devices/system/node` is read. It describes the machine; it does
//! not decide where anything runs.

use std::path::Path;

/// One NUMA node as the machine (or a simulated machine) describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineNode {
    /// The kernel's node number.
    pub os: u32,
    /// Its CPUs (logical CPU numbers), ascending.
    pub cpus: Vec<usize>,
}

/// What discovery found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// The nodes found, with their CPUs.
    pub nodes: Vec<MachineNode>,
    /// `distance[i][j]`, node indices as in `nodes` (10 = local).
    pub distance: Vec<Vec<u32>>,
    /// The description is not this machine (`HWLOC_XMLFILE` / `HWLOC_SYNTHETIC`).
    pub simulated: bool,
    /// Where it came from: "hwloc" or "sysfs".
    pub source: &'static str,
}

/// The usual distance between two different nodes when nothing says otherwise.
pub const REMOTE: u32 = 20;
/// The distance of a node to itself (and the unit distances are counted in).
pub const LOCAL: u32 = 10;

/// A simulated machine is asked for.
pub fn simulation_requested() -> bool {
    ["HWLOC_XMLFILE", "HWLOC_SYNTHETIC"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

/// Parses a kernel CPU or node list ("0-3,8,10-11").
pub fn parse_list(s: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?);
                if a > b || b - a > 1 << 16 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// Reads the nodes the kernel reports under `root` (normally `/sys/devices/system/node`).
pub fn from_sysfs(root: &Path) -> Option<Machine> {
    let online = std::fs::read_to_string(root.join("online")).ok()?;
    let ids = parse_list(&online)?;
    let mut nodes = Vec::new();
    let mut distance = Vec::new();
    for id in ids {
        let dir = root.join(format!("node{id}"));
        let cpus = std::fs::read_to_string(dir.join("cpulist"))
            .ok()
            .and_then(|s| parse_list(&s))
            .unwrap_or_default();
        let row: Vec<u32> = std::fs::read_to_string(dir.join("distance"))
            .ok()
            .map(|s| {
                s.split_whitespace()
                    .filter_map(|w| w.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        nodes.push(MachineNode {
            os: id as u32,
            cpus,
        });
        distance.push(row);
    }
    if nodes.is_empty() {
        return None;
    }
    // The kernel's rows list every possible node; keep the columns of the online ones only when
    // the row is complete, otherwise fall back to the usual local/remote pair.
    let n = nodes.len();
    let ids: Vec<usize> = nodes.iter().map(|m| m.os as usize).collect();
    let distance = distance
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            (0..n)
                .map(|j| match row.get(ids[j]) {
                    Some(&d) if row.len() > *ids.iter().max().unwrap_or(&0) => d,
                    _ if i == j => LOCAL,
                    _ => REMOTE,
                })
                .collect()
        })
        .collect();
    Some(Machine {
        nodes,
        distance,
        simulated: false,
        source: "sysfs",
    })
}

/// One node holding every given CPU: what a machine without NUMA information looks like.
pub fn flat(cpus: Vec<usize>) -> Machine {
    Machine {
        nodes: vec![MachineNode { os: 0, cpus }],
        distance: vec![vec![LOCAL]],
        simulated: false,
        source: "sysfs",
    }
}

/// The machine as hwloc sees it (the `hwloc` feature).
#[cfg(feature = "hwloc")]
fn from_hwloc() -> Result<Machine, String> {
    use hwlocality::Topology;
    use hwlocality::object::types::ObjectType;

    let topology =
        Topology::new().map_err(|e| format!("hwloc could not load the topology: {e}"))?;
    let mut nodes: Vec<MachineNode> = topology
        .objects_with_type(ObjectType::NUMANode)
        .map(|obj| MachineNode {
            os: obj.os_index().unwrap_or(0) as u32,
            cpus: obj
                .cpuset()
                .map(|set| set.iter_set().map(usize::from).collect())
                .unwrap_or_default(),
        })
        .collect();
    nodes.sort_by_key(|n| n.os);
    if nodes.is_empty() {
        return Err("hwloc found no NUMA node".into());
    }
    let n = nodes.len();
    let mut distance: Vec<Vec<u32>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| if i == j { LOCAL } else { REMOTE })
                .collect()
        })
        .collect();
    if let Ok(matrices) = topology.distances_with_type(None, ObjectType::NUMANode) {
        if let Some(m) = matrices.first() {
            let index: Vec<Option<usize>> = m
                .objects()
                .map(|o| {
                    o.and_then(|o| {
                        nodes
                            .iter()
                            .position(|n| Some(n.os as usize) == o.os_index())
                    })
                })
                .collect();
            let k = index.len();
            let values = m.distances();
            if values.len() == k * k {
                for (a, ia) in index.iter().enumerate() {
                    for (b, ib) in index.iter().enumerate() {
                        if let (Some(i), Some(j)) = (ia, ib) {
                            distance[*i][*j] = values[a * k + b].min(u32::MAX as u64) as u32;
                        }
                    }
                }
            }
        }
    }
    Ok(Machine {
        nodes,
        distance,
        simulated: !topology.is_this_system(),
        source: "hwloc",
    })
}

/// Without the `hwloc` feature: an error saying so.
#[cfg(not(feature = "hwloc"))]
fn from_hwloc() -> Result<Machine, String> {
    Err("this frun was built without hwloc".into())
}

/// True when the kernel lists one online node and no simulated machine is asked for. The
/// layout is then one node whatever the CPUs, so its files need not be read (a run's start-up
/// pays for each file opened).
pub fn one_node() -> bool {
    !simulation_requested()
        && std::fs::read_to_string("/sys/devices/system/node/online")
            .ok()
            .and_then(|s| parse_list(&s))
            .is_some_and(|ids| ids.len() == 1)
}

/// The machine as seen now: hwloc when it matters and is linked, sysfs otherwise.
pub fn discover(allowed: &[usize]) -> Result<Machine, String> {
    if simulation_requested() {
        return from_hwloc()
            .map_err(|e| format!("cannot simulate the machine HWLOC_* describes: {e}"));
    }
    match from_sysfs(Path::new("/sys/devices/system/node")) {
        // One node: nothing to place, and loading hwloc would only cost start-up time.
        Some(m) if m.nodes.len() == 1 => Ok(m),
        Some(m) => Ok(from_hwloc().unwrap_or(m)),
        None => Ok(flat(allowed.to_vec())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_lists_parse() {
        assert_eq!(
            parse_list("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_list("5"), Some(vec![5]));
        assert_eq!(parse_list(""), Some(vec![]));
        assert_eq!(parse_list("3-1"), None);
        assert_eq!(parse_list("a"), None);
    }

    #[test]
    fn a_sysfs_tree_is_read_with_its_distances() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("online"), "0-1\n").unwrap();
        for (i, cpus, dist) in [(0, "0-3\n", "10 21\n"), (1, "4-7\n", "21 10\n")] {
            let d = root.join(format!("node{i}"));
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("cpulist"), cpus).unwrap();
            std::fs::write(d.join("distance"), dist).unwrap();
        }
        let m = from_sysfs(root).unwrap();
        assert_eq!(m.nodes.len(), 2);
        assert_eq!(m.nodes[1].cpus, vec![4, 5, 6, 7]);
        assert_eq!(m.distance, vec![vec![10, 21], vec![21, 10]]);
    }
}
