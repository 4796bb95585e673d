//! Sharding: the share of the input one task of a multi-task run processes (`--shard I/N`, or
//! Slurm's task number and task count).
//!
//! The input is cut into chunks of a fixed byte size, the same in every task; chunk `k` holds
//! the records that *start* in bytes `[k*C, (k+1)*C)` and belongs to task `k mod N`. So every
//! record belongs to exactly one task, decided by its offset alone: no task needs to hear from
//! another. This module only says where chunks begin and whose they are; the scanner skips the
//! chunks of other tasks (as it skips input a resumed run already did) and nothing here reads
//! the input beyond the few bytes that place a chunk's first record.

pub mod claims;

/// `--shard`: which task this is, of how many.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This task's number, from 0.
    pub index: u64,
    /// How many tasks share the input.
    pub count: u64,
}

impl Shard {
    /// Parses `I/N` (0 <= I < N).
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("'{s}' is not I/N (task I of N, counted from 0)"))?;
        let num = |t: &str| {
            t.trim()
                .parse::<u64>()
                .map_err(|_| format!("'{t}' in '{s}' is not a whole number"))
        };
        let (index, count) = (num(i)?, num(n)?);
        if count == 0 || index >= count {
            return Err(format!(
                "'{s}': the task number must be below the task count (0/2 and 1/2 make two tasks)"
            ));
        }
        Ok(Shard { index, count })
    }

    /// Slurm's task number and count of the step frun runs in (`srun`): `SLURM_PROCID` and
    /// `SLURM_STEP_NUM_TASKS` (or `SLURM_NTASKS`). None outside a step: a batch script also
    /// sees `SLURM_NTASKS`, but there frun is one process, not one of the tasks.
    pub fn from_slurm(var: impl Fn(&str) -> Option<String>) -> Result<Option<Shard>, String> {
        if var("SLURM_STEP_ID").is_none_or(|s| s.is_empty() || s == "batch") {
            return Ok(None);
        }
        let Some(procid) = var("SLURM_PROCID") else {
            return Ok(None);
        };
        let Some(ntasks) = var("SLURM_STEP_NUM_TASKS").or_else(|| var("SLURM_NTASKS")) else {
            return Ok(None);
        };
        Shard::parse(&format!("{}/{}", procid.trim(), ntasks.trim()))
            .map(Some)
            .map_err(|e| format!("SLURM_PROCID/SLURM_NTASKS: {e}"))
    }

    /// A name for this task in file names and messages: `I-of-N`.
    pub fn name(&self) -> String {
        format!("{}-of-{}", self.index, self.count)
    }
}

/// Chunk size for an input of unknown size (a stream every task reads whole).
pub const STREAM_CHUNK: u64 = 1 << 20;
/// Chunks are multiples of this.
const CHUNK_ALIGN: u64 = 64 << 10;
/// About this many chunks per task for an input of known size, so tasks get near-equal shares.
const CHUNKS_PER_TASK: u64 = 16;
/// The largest chunk.
const MAX_CHUNK: u64 = 256 << 20;

/// Which chunks are this task's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardMap {
    /// Which task this is.
    pub shard: Shard,
    /// Chunk size in bytes.
    pub chunk: u64,
    /// Chunks start at records (false: at exactly `k*C`, for `-b`, whose batches cut records
    /// anyway; there every byte belongs to the chunk it lies in).
    pub records: bool,
}

impl ShardMap {
    /// The map for an input of `size` bytes (None: a stream). Every task computes the same.
    pub fn new(shard: Shard, size: Option<u64>) -> ShardMap {
        let chunk = match size {
            None => STREAM_CHUNK,
            Some(s) => s
                .div_ceil(shard.count * CHUNKS_PER_TASK)
                .div_ceil(CHUNK_ALIGN)
                .saturating_mul(CHUNK_ALIGN)
                .clamp(CHUNK_ALIGN, MAX_CHUNK),
        };
        ShardMap {
            shard,
            chunk,
            records: true,
        }
    }

    /// The same map with chunks cut at exact byte offsets (`-b`).
    pub fn raw(self) -> ShardMap {
        ShardMap {
            records: false,
            ..self
        }
    }

    /// The chunk a record starting at `at` belongs to.
    pub fn chunk_of(&self, at: u64) -> u64 {
        at / self.chunk
    }

    /// Whether chunk number `chunk` belongs to this task.
    pub fn owns(&self, chunk: u64) -> bool {
        chunk % self.shard.count == self.shard.index
    }

    /// The first chunk at or after `k` that is this task's.
    pub fn next_owned(&self, k: u64) -> u64 {
        let n = self.shard.count;
        k + (self.shard.index + n - k % n) % n
    }

    /// The first chunk after `k` that is another task's (None: there is no other task).
    pub fn next_foreign(&self, k: u64) -> Option<u64> {
        (self.shard.count > 1).then(|| if self.owns(k) { k + 1 } else { k })
    }

    /// Where chunk `k`'s first record starts in `data` (the input from offset 0, `eof` when it
    /// is all there): the first record start at or after `k*C`, i.e. just past the first
    /// delimiter at or after `k*C - 1`. None while that delimiter has not arrived yet. Raw
    /// chunks start at `k*C`.
    pub fn chunk_start(&self, k: u64, data: &[u8], delimiter: u8, eof: bool) -> Option<u64> {
        let at = k.saturating_mul(self.chunk);
        if at == 0 {
            return Some(0);
        }
        let len = data.len() as u64;
        if at > len {
            return eof.then_some(len);
        }
        if !self.records {
            return Some(at);
        }
        match memchr::memchr(delimiter, &data[(at - 1) as usize..]) {
            Some(i) => Some(at + i as u64),
            None => eof.then_some(len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_task_of_count() {
        assert_eq!(Shard::parse("1/3"), Ok(Shard { index: 1, count: 3 }));
        for bad in ["3/3", "0/0", "x/2", "1", "-1/2", "1/2/3", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn slurm_tasks_shard_but_a_batch_script_does_not() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let step = env(&[
            ("SLURM_STEP_ID", "0"),
            ("SLURM_PROCID", "2"),
            ("SLURM_STEP_NUM_TASKS", "3"),
            ("SLURM_NTASKS", "6"),
        ]);
        assert_eq!(
            Shard::from_slurm(step),
            Ok(Some(Shard { index: 2, count: 3 }))
        );
        let batch = env(&[
            ("SLURM_STEP_ID", "batch"),
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "3"),
        ]);
        assert_eq!(Shard::from_slurm(batch), Ok(None));
        let bare = env(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "3")]);
        assert_eq!(Shard::from_slurm(bare), Ok(None));
        let broken = env(&[
            ("SLURM_STEP_ID", "0"),
            ("SLURM_PROCID", "3"),
            ("SLURM_NTASKS", "3"),
        ]);
        assert!(Shard::from_slurm(broken).is_err());
    }

    #[test]
    fn chunk_sizes_are_shared_by_every_task_and_aligned() {
        let m = |count, size| ShardMap::new(Shard { index: 0, count }, size).chunk;
        assert_eq!(m(3, None), STREAM_CHUNK);
        assert_eq!(m(3, Some(10)), CHUNK_ALIGN);
        // 48 chunks of 1 MiB for 48 MiB over 3 tasks.
        assert_eq!(m(3, Some(48 << 20)), 1 << 20);
        assert_eq!(m(2, Some(1 << 50)), MAX_CHUNK);
        assert_eq!(m(7, Some(123_456_789)) % CHUNK_ALIGN, 0);
    }

    /// Task `index` of `count`, chunks of `chunk` bytes at records.
    fn map(index: u64, count: u64, chunk: u64) -> ShardMap {
        ShardMap {
            shard: Shard { index, count },
            chunk,
            records: true,
        }
    }

    #[test]
    fn next_owned_and_foreign_chunks() {
        let m = map(1, 3, 10);
        let owned: Vec<u64> = (0..7).map(|k| m.next_owned(k)).collect();
        assert_eq!(owned, [1, 1, 4, 4, 4, 7, 7]);
        assert_eq!(m.next_foreign(1), Some(2));
        assert_eq!(m.next_foreign(2), Some(2));
        let alone = map(0, 1, 10);
        assert_eq!(alone.next_foreign(5), None);
        assert_eq!(alone.next_owned(5), 5);
    }

    #[test]
    fn chunk_starts_follow_records() {
        let m = map(0, 2, 4);
        let data = b"aa\nbbbbbb\ncc\n";
        assert_eq!(m.chunk_start(0, data, b'\n', false), Some(0));
        // "bbbbbb" starts at 3, in chunk 0; the first record starting at 4 or later is "cc" at
        // 10, so chunk 1 is empty and starts where chunk 2 does.
        assert_eq!(m.chunk_start(1, data, b'\n', false), Some(10));
        assert_eq!(m.chunk_start(2, data, b'\n', false), Some(10));
        assert_eq!(m.chunk_start(3, data, b'\n', false), Some(13));
        // Not all there yet: unknown until the delimiter or the end arrives.
        assert_eq!(m.chunk_start(1, &data[..8], b'\n', false), None);
        assert_eq!(m.chunk_start(1, &data[..8], b'\n', true), Some(8));
        assert_eq!(m.chunk_start(9, data, b'\n', true), Some(13));
        // Raw chunks (-b) start where they start.
        let raw = m.raw();
        assert_eq!(raw.chunk_start(1, data, b'\n', false), Some(4));
        assert_eq!(raw.chunk_start(4, data, b'\n', false), None);
        assert_eq!(raw.chunk_start(4, data, b'\n', true), Some(13));
    }

    proptest! {
        /// Every record belongs to exactly one task, and each task's records are those whose
        /// start lies in one of its chunks.
        #[test]
        fn every_record_has_exactly_one_task(
            lens in proptest::collection::vec(0usize..12, 0..60),
            count in 1u64..5,
            chunk in 1u64..20,
        ) {
            let mut data = Vec::new();
            let mut starts = Vec::new();
            for l in lens {
                starts.push(data.len() as u64);
                data.extend(std::iter::repeat_n(b'x', l));
                data.push(b'\n');
            }
            let mut owner = vec![None; starts.len()];
            for index in 0..count {
                let m = ShardMap { shard: Shard { index, count }, chunk, records: true };
                // Walk the task's chunks the way the scanner does: from each owned chunk's
                // start to the next foreign chunk's start.
                let mut k = m.next_owned(0);
                loop {
                    let from = m.chunk_start(k, &data, b'\n', true).unwrap();
                    if from >= data.len() as u64 { break; }
                    let to = match m.next_foreign(k) {
                        Some(f) => m.chunk_start(f, &data, b'\n', true).unwrap(),
                        None => data.len() as u64,
                    };
                    for (r, &s) in starts.iter().enumerate() {
                        if s >= from && s < to {
                            prop_assert_eq!(owner[r], None, "record {} twice", r);
                            owner[r] = Some(index);
                            prop_assert_eq!(m.chunk_of(s) % count, index);
                        }
                    }
                    match m.next_foreign(k) {
                        Some(f) => k = m.next_owned(f),
                        None => break,
                    }
                }
            }
            prop_assert!(owner.iter().all(Option::is_some), "a record has no task");
        }
    }
}
