//! The scanner: finds record boundaries in the spool and cuts them into batches for the ring.
//!
//! It owns the batch-size policy: small while workers starve or input trickles (latency),
//! doubling while work is plentiful (throughput), never past the argument-space budget of the
//! argv backend. It reads input only through [`Ingest`] and hands batches on only through
//! [`Rings::publish`]; it never runs commands and never looks at output.

use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use crate::dispatch::batch::{ArgSpace, count_records};
use crate::dispatch::rings::Rings;
use crate::input::bounds::RecordBounds;
use crate::input::group::GroupKey;
use crate::input::shard::ShardMap;
use crate::input::shard::claims::Book;
use crate::input::spool::{Fill, Ingest, Spool};

/// The smallest batch the end-of-input balancing cuts to (unless `-l` starts higher).
const TAIL_FLOOR: u64 = 16;

/// In stdin mode, the smallest batch the end-of-input balancing cuts to, in bytes: about this
/// much costs as much to move as a process costs to start. A small input gets a smaller floor
/// (an eighth of its share per worker), so that it is still spread over every worker.
const TAIL_FLOOR_BYTES: u64 = 4 << 20;

/// Bytes the fast path counts at a time.
const BLOCK: usize = 16 << 10;

/// The hard maximum batch size, in records. It is high enough that the argument budget
/// (ARG_MAX) is what bounds a batch: even empty records cost 9 bytes of it, and the kernel
/// takes at most 6 MiB of arguments.
pub const HARD_MAX_RECORDS: u64 = 1 << 20;

/// The hard maximum batch size in stdin mode, where ARG_MAX does not apply: records.
pub const HARD_MAX_STDIN_RECORDS: u64 = 1 << 30;
/// The hard maximum batch size in stdin mode: bytes (16 MiB).
pub const HARD_MAX_STDIN_BYTES: u64 = 16 << 20;

/// Batch sizes, as the plan resolved them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sizing {
    /// Start at `init`, adapt within `[init, max]` (fixed when `init == max`).
    Adaptive {
        /// Records in the first batch.
        init: u64,
        /// Records a batch may grow to.
        max: u64,
    },
    /// Exactly `n` records per batch; never cut early.
    Exact(u64),
    /// `size` records per batch until `from` records are out, then `tail` per batch.
    Tail {
        /// Records per batch at first.
        size: u64,
        /// Records after which batches shrink.
        from: u64,
        /// Records per batch from then on.
        tail: u64,
    },
    /// Raw `n`-byte chunks, records ignored (`-b`).
    Bytes(u64),
    /// About `n` bytes per chunk, cut at the last record boundary (`--block`).
    Block(u64),
    /// At least `n` bytes per chunk, cut at the first record boundary whose end pattern starts
    /// `n` bytes or more past the chunk's start.
    BlockPast(u64),
    /// Exactly `n` records per chunk, records ending at [`Settings::bounds`] (GNU Parallel's
    /// `--pipe -N` with `--recstart`/`--recend` strings or `--regexp`).
    BoundedRecords(u64),
    /// As [`Sizing::Block`], records being `lines` delimiter-ended lines each (GNU Parallel's
    /// `--pipe -L`): a chunk holds whole groups of `lines` lines, and an incomplete last group
    /// is a chunk of its own.
    BlockLines {
        /// About this many bytes per chunk.
        size: u64,
        /// Lines per record (at least 1).
        lines: u64,
    },
    /// Records are groups of consecutive lines with the same key (GNU Parallel's `--pipe
    /// --group-by`): `per_chunk` groups per chunk, or (0) about `size` bytes of whole groups.
    Groups {
        /// About this many bytes per chunk (when `per_chunk` is 0).
        size: u64,
        /// Groups per chunk (0: as many as fit in `size`).
        per_chunk: u64,
        /// Which part of a line is its key.
        key: GroupKey,
    },
}

/// What the scanner tells the rest of the engine while it runs.
pub trait ScanEvents {
    /// Called after each publish (the engine may add a worker).
    fn published(&self, rings: &Rings);
    /// A record too long to pass as an argument was skipped: `len` bytes at `offset`, input up
    /// to `end` (its delimiter included) dealt with.
    fn oversized(&self, offset: u64, len: u64, end: u64);
    /// True once the run is stopping.
    fn stopped(&self) -> bool;
    /// True once batch `seq` no longer needs its input bytes.
    fn released(&self, seq: u64) -> bool;
    /// Finished output held back for `-k`, in bytes.
    fn output_held(&self) -> u64;
    /// How many published batches may still need their input at once.
    fn outstanding_limit(&self) -> u64;
    /// The input's first bytes (up to [`HEAD_BYTES`](crate::journal::HEAD_BYTES)) and its size
    /// when known, once, before anything is published. False stops the scan (the input is not
    /// the one being resumed).
    fn input_head(&self, head: &[u8], size: Option<u64>) -> bool;
    /// The first record (or `-b` chunk, `chunk`) about to be published that holds a NUL byte
    /// starts at `offset`; it becomes an argument, and `what` says what the NUL does there
    /// (with `Refuse`, the run stops with its status before the batch is published). Called
    /// once per run at most.
    fn nul_in_argument(&self, _offset: u64, _chunk: bool, _what: NulInArgument) {}
    /// No record ended within a `--block` chunk: chunks are `to` bytes from now on.
    fn block_grown(&self, _from: u64, _to: u64) {}
}

/// What a NUL byte inside a record that becomes an argument does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NulInArgument {
    /// Nothing to look for: records do not become arguments, or NUL is their delimiter.
    Pass,
    /// The first one is reported; the argument is cut there (as xargs does).
    Warn,
    /// The first one is reported; the job line holds the two characters `\0` in its place
    /// (GNU Parallel's way; the job line does it, see `JobLine::escaping_nul`).
    Escape,
    /// The run stops before the batch holding it runs, with this exit status.
    Refuse(i32),
}

/// Unfinished input the spool may hold before ingest waits (plus the batch being built).
pub const WINDOW_BYTES: u64 = 64 << 20;
/// Finished `-k` output that may wait behind a slow batch before ingest waits.
pub const HELD_OUTPUT_BYTES: u64 = 64 << 20;
/// The spool is freed in steps of at least this much.
const RECLAIM_STEP: u64 = 4 << 20;

/// Published batches whose input is still needed, oldest first; what may be freed.
#[derive(Default)]
struct Window {
    outstanding: std::collections::VecDeque<(u64, u64)>,
    /// End of the last published batch.
    published_end: u64,
    /// Input below this offset is no longer needed.
    low: u64,
    /// The spool was freed below this offset.
    freed: u64,
}

/// Totals of one scan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanTotals {
    /// Records scanned (0 for batches that were cut without counting).
    pub records: u64,
    /// Batches published.
    pub batches: u64,
}

/// What the plan decides for the scanner, once per run.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The byte that ends each record.
    pub delimiter: u8,
    /// How big batches are.
    pub sizing: Sizing,
    /// The records each batch takes, in order, when the plan decided them all from the whole
    /// input (`-X`/`-m` lines filled by length); `sizing` is then the first one's, fixed.
    pub cuts: Option<std::sync::Arc<[u64]>>,
    /// `--limit`: stop after this many records.
    pub limit: Option<u64>,
    /// `--timeout`: publish a partial batch after this long without new input.
    pub timeout: Option<Duration>,
    /// The argument space a batch may fill; None when records do not become arguments.
    pub arg_space: Option<ArgSpace>,
    /// Batches are measured in bytes (stdin mode): an input whose size is known is shared out
    /// by bytes from its first batch on, instead of growing from one record.
    pub byte_guided: bool,
    /// Records must be counted. Without, a byte-guided batch of a known input is cut with one
    /// backward search at its byte budget: the bytes in between are never read (its `records`
    /// is then 0, "not counted").
    pub count_records: bool,
    /// This task's share of the input when the run is split over several (the rest is skipped).
    pub shard: Option<ShardMap>,
    /// The run is shared by claims (`--share claims`): this task's chunks are those it claims
    /// as it goes (instead of `shard`).
    pub claims: Option<std::sync::Arc<Book>>,
    /// The input's head is checked before anything else (resuming, or sharded: skipping may
    /// free the head before a batch is published), once this many bytes (or the whole input)
    /// are in.
    pub head_first: Option<u64>,
    /// Records (or `-b` chunks) become arguments, which a NUL byte inside cuts (the delimiter
    /// is not NUL): what to do about one. While it matters, each batch is searched for one,
    /// once per batch, until one is reported.
    pub nul: NulInArgument,
    /// `--block` chunks end at these string boundaries instead of at the delimiter byte.
    pub bounds: Option<RecordBounds>,
    /// `--block` chunks grow while no record ends within one (see `Config::grow_blocks`).
    pub grow_blocks: bool,
}

/// The scanner: its settings, and what it works with during the run.
pub struct Scanner<'a> {
    /// What the plan decided.
    pub settings: Settings,
    /// The spool the input is read into.
    pub spool: &'a Spool,
    /// The rings the batches are published on.
    pub ring: &'a Rings,
    /// Readable when the run stops (an eventfd).
    pub stop_fd: RawFd,
    /// An eventfd workers write when they run dry while a partial batch waits.
    pub hunger_fd: RawFd,
    /// How many workers may share the work (for balancing the last batches).
    pub workers: u64,
    /// Input intervals already done (a resumed run): sorted, disjoint, skipped.
    pub skip: &'a [(u64, u64)],
}

/// Walks the input a run skips: intervals done in an earlier run, and the chunks of other
/// tasks when the run is one shard of several.
struct Skips<'a> {
    list: &'a [(u64, u64)],
    shard: Option<ShardMap>,
    /// Claims mode: the book, the claim being scanned, and whether no more can be claimed.
    claims: Option<Claiming>,
    /// Where batches wait for workers (claims mode scans no further ahead of them than
    /// [`CLAIM_LOOKAHEAD`]).
    ring: &'a Rings,
    delimiter: u8,
    /// Inside a run of this task's chunks: the other task's chunk that ends it. Until its first
    /// record, every byte is this task's, also in the middle of a record (`-b` cuts there).
    run_end: Option<RunEnd>,
}

/// The end of a run of a task's own chunks: chunk `chunk`, whose first record starts at `at`
/// once the input shows where (then it is kept: it is looked at for every record).
#[derive(Clone, Copy)]
struct RunEnd {
    chunk: u64,
    at: Option<u64>,
}

/// The scanner's side of a run shared by claims.
struct Claiming {
    book: std::sync::Arc<Book>,
    current: Option<Current>,
    /// Where the next claim is looked for (the end of the last one).
    next: u64,
    /// Nothing more to claim in this scan: the rest of the input is skipped.
    exhausted: bool,
}

/// The claim being scanned: chunks `[a, b)`, of which `[a, reserved)` are marked as this
/// task's to scan (the rest may still be split off by another task), and where their records
/// begin and the marked ones end once the input shows it.
struct Current {
    a: u64,
    b: u64,
    reserved: u64,
    start: Option<u64>,
    end: Option<u64>,
}

/// In claims mode, a claim's next chunk is scanned only once no more than this many batches
/// wait for a worker.
const CLAIM_LOOKAHEAD: u64 = 1;

/// What lies at a position, for [`Skips::jump`].
enum Jump {
    /// Input to process.
    No,
    /// Skipped input up to here.
    To(u64),
    /// Another task's chunk whose end has not arrived yet: read more input first.
    Wait,
}

impl Skips<'_> {
    /// Where the next done interval at or after `at` starts (`u64::MAX`: none).
    fn next_done(&mut self, at: u64) -> u64 {
        while let Some(&(_, e)) = self.list.first() {
            if e > at {
                break;
            }
            self.list = &self.list[1..];
        }
        self.list.first().map_or(u64::MAX, |&(s, _)| s.max(at))
    }

    /// Where the next skipped input at or after `at` begins, as far as `data` (the input so
    /// far) shows: `u64::MAX` when none is in sight. Called after [`Skips::jump`] said `No`.
    fn next_start(&mut self, at: u64, data: &[u8], eof: bool) -> u64 {
        let done = self.next_done(at);
        if self.claims.is_some() {
            return done.min(self.claim_end(data, eof).unwrap_or(u64::MAX));
        }
        let Some(m) = self.shard else {
            return done;
        };
        if self.run_end.is_none() {
            if !m.owns(m.chunk_of(at)) {
                return at;
            }
            self.run_end = m
                .next_foreign(m.chunk_of(at))
                .map(|chunk| RunEnd { chunk, at: None });
        }
        done.min(self.run_end_at(m, data, eof).unwrap_or(u64::MAX))
    }

    /// Where the current run of own chunks ends, once the input shows it.
    fn run_end_at(&mut self, m: ShardMap, data: &[u8], eof: bool) -> Option<u64> {
        let end = self.run_end.as_mut()?;
        if end.at.is_none() {
            end.at = m.chunk_start(end.chunk, data, self.delimiter, eof);
        }
        end.at
    }

    /// Whether `at` begins skipped input, and where that ends. `at` is a record start, a
    /// point inside a run of this task's chunks, or a point inside another task's chunk that
    /// an earlier jump reached.
    fn jump(&mut self, at: u64, data: &[u8], eof: bool, events: &dyn ScanEvents) -> Jump {
        if self.next_done(at) == at {
            return Jump::To(self.list[0].1);
        }
        if self.claims.is_some() {
            return self.jump_claims(at, data, eof, events);
        }
        let Some(m) = self.shard else {
            return Jump::No;
        };
        if self.run_end.is_some() {
            match self.run_end_at(m, data, eof) {
                // Past the run (so at a record start): look again below.
                Some(e) if at >= e => self.run_end = None,
                _ => return Jump::No,
            }
        }
        let k = m.chunk_of(at);
        if m.owns(k) {
            self.run_end = m.next_foreign(k).map(|chunk| RunEnd { chunk, at: None });
            return Jump::No;
        }
        let next = m.next_owned(k);
        match m.chunk_start(next, data, self.delimiter, eof) {
            Some(e) if e > at => Jump::To(e),
            Some(_) => Jump::No,
            // Skip what is in already (the spool can free it), staying inside chunk `next - 1`
            // so the next look still knows whose input this is.
            None => {
                let e = (data.len() as u64).min(next * m.chunk - 1);
                if e > at { Jump::To(e) } else { Jump::Wait }
            }
        }
    }

    /// Where the marked part of the claim being scanned ends, once the input shows it; when
    /// that is the claim's end, it is reported to the book.
    fn claim_end(&mut self, data: &[u8], eof: bool) -> Option<u64> {
        let delimiter = self.delimiter;
        let c = self.claims.as_mut()?;
        let m = c.book.map();
        let cur = c.current.as_mut()?;
        if cur.end.is_none() {
            cur.end = m.chunk_start(cur.reserved, data, delimiter, eof);
            if let (Some(s), Some(e), true) = (cur.start, cur.end, cur.reserved == cur.b) {
                c.book.scanned(cur.a, s, e.max(s));
            }
        }
        cur.end
    }

    /// [`Skips::jump`] in claims mode: inside the claim being scanned, input to process;
    /// before it, a jump to its start; past it, the next claim (or, with none left, the rest
    /// of the input skipped).
    fn jump_claims(&mut self, at: u64, data: &[u8], eof: bool, events: &dyn ScanEvents) -> Jump {
        let delimiter = self.delimiter;
        loop {
            let c = self.claims.as_mut().expect("claims mode");
            let m = c.book.map();
            if let Some(cur) = c.current.as_mut() {
                if cur.start.is_none() {
                    cur.start = m.chunk_start(cur.a, data, delimiter, eof);
                }
                let Some(start) = cur.start else {
                    // Skip what is in, staying before the claim's first chunk.
                    let e = (data.len() as u64).min((cur.a * m.chunk).saturating_sub(1));
                    return if e > at { Jump::To(e) } else { Jump::Wait };
                };
                if start > at {
                    return Jump::To(start);
                }
                match self.claim_end(data, eof) {
                    // At the next chunk of the claim: marked, it is scanned on (the batch goes
                    // on); split off by another task, the claim ends here.
                    Some(e) if at >= e => {
                        let c = self.claims.as_mut().expect("claims mode");
                        let cur = c.current.as_mut().expect("a claim");
                        if cur.reserved < cur.b {
                            // What is not scanned yet may be split off by a task out of work:
                            // the scan stays close behind the workers. While batches wait
                            // for them, it looks again after 1 ms, doubling up to 8 ms (a
                            // batch still waits meanwhile, so no worker idles for it).
                            let mut nap = std::time::Duration::from_millis(1);
                            while self.ring.backlog() > CLAIM_LOOKAHEAD && !events.stopped() {
                                std::thread::sleep(nap);
                                nap = (nap * 2).min(std::time::Duration::from_millis(8));
                            }
                            if c.book.reserve(cur.a, cur.reserved) {
                                cur.reserved += 1;
                                cur.end = None;
                                continue;
                            }
                            cur.b = cur.reserved;
                            c.book.scanned(cur.a, start, e.max(start));
                        }
                        // Past the claim: the batch being built ends here (the next claim's
                        // records are committed apart, and may be another's).
                        c.current = None;
                        return Jump::To(at);
                    }
                    _ => return Jump::No,
                }
            }
            if !c.exhausted {
                match c.book.claim_from(c.next, &|| events.stopped()) {
                    Some((a, b)) => {
                        c.next = b;
                        c.current = Some(Current {
                            a,
                            b,
                            reserved: a + 1,
                            start: None,
                            end: None,
                        });
                        continue;
                    }
                    None => c.exhausted = true,
                }
            }
            // Nothing more is this task's: all of the input that is in is skipped.
            let len = data.len() as u64;
            return if len > at {
                Jump::To(len)
            } else if eof {
                Jump::No
            } else {
                Jump::Wait
            };
        }
    }
}

/// The size in force for the batch being built.
#[derive(Clone, Copy)]
struct Bound {
    /// At most this many records.
    records: u64,
    /// At most this much argument space (bytes in stdin mode).
    budget: u64,
}

/// The batch being built: records `[start, cursor)`.
struct Pending {
    start: u64,
    cursor: u64,
    records: u64,
    cost: u64,
    /// Where the search for the next delimiter resumes (`>= cursor`).
    search: u64,
}

impl Scanner<'_> {
    /// Scans until end of input, the record limit, or a stop; closes the ring at the end.
    pub fn run(&self, ingest: &mut Ingest, events: &dyn ScanEvents) -> io::Result<ScanTotals> {
        let result = self.scan(ingest, events);
        self.ring.close();
        result
    }

    /// Scans the way the sizing says: record by record, or in byte chunks.
    fn scan(&self, ingest: &mut Ingest, events: &dyn ScanEvents) -> io::Result<ScanTotals> {
        let run = Run::new(self, events);
        match self.settings.sizing {
            Sizing::Adaptive { init, max } => {
                // Batches the plan cut fit their line: they are taken as they are.
                let cuts = self.settings.cuts.clone();
                let mut scan = RecordScan::new(run, init, max, cuts.is_some());
                scan.cuts = cuts.map(|c| (c, 0));
                scan.scan(ingest)
            }
            Sizing::Exact(n) => RecordScan::new(run, n, n, true).scan(ingest),
            Sizing::Tail { size, from, tail } => {
                let mut scan = RecordScan::new(run, size, size, false);
                scan.tail = Some((from, tail));
                scan.scan(ingest)
            }
            Sizing::Bytes(n) => ChunkScan::new(run, n, false).scan(ingest),
            Sizing::Block(n) => ChunkScan::new(run, n, true).scan(ingest),
            Sizing::BlockLines { size, lines } => {
                let mut scan = ChunkScan::new(run, size, true);
                scan.lines = lines.max(1);
                scan.scan(ingest)
            }
            Sizing::Groups {
                size,
                per_chunk,
                key,
            } => {
                // Counted groups: a chunk is cut as soon as its groups are in.
                let mut scan = ChunkScan::new(run, if per_chunk > 0 { 1 } else { size }, true);
                scan.groups = Some((key, per_chunk));
                scan.scan(ingest)
            }
            Sizing::BlockPast(n) => {
                let mut scan = ChunkScan::new(run, n, true);
                scan.past = true;
                scan.scan(ingest)
            }
            Sizing::BoundedRecords(n) => {
                let mut scan = ChunkScan::new(run, 1, true);
                scan.records = Some(n);
                scan.scan(ingest)
            }
        }
    }

    /// The unfinished input the spool may hold: [`WINDOW_BYTES`], or room for a few of the
    /// largest batches when those are bigger.
    fn window_bytes(&self) -> u64 {
        let batch = match self.settings.sizing {
            Sizing::Bytes(n)
            | Sizing::Block(n)
            | Sizing::BlockPast(n)
            | Sizing::BlockLines { size: n, .. }
            | Sizing::Groups { size: n, .. } => n,
            _ => self.settings.arg_space.map_or(0, |s| s.budget),
        };
        WINDOW_BYTES.max(batch.saturating_mul(self.workers + 2))
    }

    /// The fast path: takes whole blocks of records at once (one SIMD count per block instead of
    /// one search per record) while the block cannot complete the batch, reach the limit, break
    /// the argument budget or hold a record over the per-argument limit. What is left goes
    /// record by record.
    fn skip_whole_blocks(
        &self,
        data: &[u8],
        p: &mut Pending,
        totals: &mut ScanTotals,
        size: Bound,
        limit: u64,
        exact: bool,
    ) {
        let delimiter = self.settings.delimiter;
        let arg_space = self.settings.arg_space;
        if arg_space.is_some_and(|s| s.max_record_len < BLOCK as u64) {
            return;
        }
        loop {
            let from = p.search as usize;
            let chunk = &data[from..data.len().min(from + BLOCK)];
            let Some(last) = memchr::memrchr(delimiter, chunk) else {
                return;
            };
            let region = &chunk[..=last];
            let n = bytecount::count(region, delimiter) as u64;
            if p.records + n >= size.records || totals.records + n >= limit {
                return;
            }
            let end = p.search + last as u64 + 1;
            let mut cost = p.cost;
            if let Some(space) = arg_space {
                let first = memchr::memchr(delimiter, region).unwrap_or(last) as u64;
                if p.search + first - p.cursor > space.max_record_len {
                    return;
                }
                // Record bytes without delimiters, from the current record's start.
                cost += space.per_byte * (end - p.cursor - n) + space.per_record * n;
                if !exact && cost > size.budget {
                    return;
                }
            }
            p.cost = cost;
            p.records += n;
            totals.records += n;
            p.cursor = end;
            p.search = end;
        }
    }
}

/// One scan's state, whichever way it cuts the input: the input it skips, the window of
/// unfinished input, the checks made once per run, and the totals so far.
struct Run<'s, 'a> {
    sc: &'s Scanner<'a>,
    events: &'s dyn ScanEvents,
    skips: Skips<'a>,
    window: Window,
    /// The input's head was checked with the engine.
    head_checked: bool,
    /// The last look at the spool saw the end of input.
    eof_seen: bool,
    /// A NUL byte inside an argument was reported.
    nul_reported: bool,
    totals: ScanTotals,
    /// When input last came in (or a batch was flushed because none did).
    last_input: Instant,
}

impl<'s, 'a> Run<'s, 'a> {
    fn new(sc: &'s Scanner<'a>, events: &'s dyn ScanEvents) -> Self {
        Run {
            sc,
            events,
            skips: Skips {
                list: sc.skip,
                shard: sc.settings.shard,
                claims: sc.settings.claims.clone().map(|book| Claiming {
                    book,
                    current: None,
                    next: 0,
                    exhausted: false,
                }),
                ring: sc.ring,
                delimiter: sc.settings.delimiter,
                run_end: None,
            },
            window: Window::default(),
            head_checked: false,
            eof_seen: false,
            nul_reported: false,
            totals: ScanTotals::default(),
            last_input: Instant::now(),
        }
    }

    /// Checks the input's head with the engine (once); false when the scan must stop.
    fn check_head(&mut self, eof: bool) -> bool {
        if std::mem::replace(&mut self.head_checked, true) {
            return true;
        }
        let spool = self.sc.spool;
        let filled = spool.filled();
        let head = spool.bytes(0, filled.min(crate::journal::HEAD_BYTES as u64));
        self.events.input_head(head, eof.then_some(filled))
    }

    /// Resuming: waits until the head to compare is in, then checks it.
    fn resume_check(&mut self, ingest: &mut Ingest) -> io::Result<bool> {
        let Some(want) = self.sc.settings.head_first else {
            return Ok(true);
        };
        while self.sc.spool.filled() < want && !ingest.at_eof() {
            if self.events.stopped() {
                return Ok(false);
            }
            ingest.fill(self.sc.spool, &[self.sc.stop_fd], None)?;
        }
        Ok(self.check_head(ingest.at_eof()))
    }

    /// Reports the first record of `[start, end)` that holds a NUL byte (the range itself when
    /// it is one argument, `records` false), unless one was reported already. One `memchr`.
    /// False when the run must stop (a NUL is refused).
    fn look_for_nul(&mut self, (start, end): (u64, u64), records: bool) -> bool {
        let what = self.sc.settings.nul;
        if what == NulInArgument::Pass || self.nul_reported {
            return true;
        }
        let bytes = self.sc.spool.bytes(start, end);
        let Some(at) = memchr::memchr(0, bytes) else {
            return true;
        };
        let record = if records {
            memchr::memrchr(self.sc.settings.delimiter, &bytes[..at]).map_or(0, |i| i as u64 + 1)
        } else {
            0
        };
        self.nul_reported = true;
        self.events.nul_in_argument(start + record, !records, what);
        !matches!(what, NulInArgument::Refuse(_))
    }

    /// The checks due before `range` is published (`records`: it holds records, not one
    /// argument); false when the scan must stop.
    fn may_publish(&mut self, range: (u64, u64), records: bool) -> bool {
        // A mapped input that shrank may have shown zeros instead of records: stop.
        if self.sc.spool.shrank() || !self.check_head(self.eof_seen) {
            return false;
        }
        self.look_for_nul(range, records)
    }

    /// Hands `[start, end)`, `records` records, to the ring: its sequence number, or None when
    /// the run was aborted.
    fn hand_over(&mut self, (start, end): (u64, u64), records: u64) -> Option<u64> {
        let seq = self.sc.ring.publish(start, end, records)?;
        self.totals.batches += 1;
        Some(seq)
    }

    /// Batch `seq`, ending at `end`, was handed over: tells the engine, records it in the
    /// window, then waits while too much is unfinished; false when the run stops meanwhile.
    fn published(&mut self, seq: u64, end: u64) -> bool {
        self.events.published(self.sc.ring);
        self.window.outstanding.push_back((seq, end));
        self.window.published_end = end;
        self.throttle(None)
    }

    /// Input up to `end` was skipped (done in an earlier run): nothing will release it, so the
    /// window moves past it once the batches before it are released.
    fn note_skipped(&mut self, end: u64) {
        self.window.published_end = self.window.published_end.max(end);
    }

    /// Frees what no batch needs any more, then waits while the unfinished window is too big
    /// (`filled`: ingest wants to read past this), too many batches are outstanding, or too much
    /// `-k` output is held back. False when the run stops meanwhile.
    fn throttle(&mut self, filled: Option<u64>) -> bool {
        loop {
            let over = {
                let w = &mut self.window;
                while let Some(&(seq, end)) = w.outstanding.front() {
                    if !self.events.released(seq) {
                        break;
                    }
                    w.outstanding.pop_front();
                    w.low = end;
                }
                if w.outstanding.is_empty() {
                    w.low = w.published_end;
                }
                if w.low >= w.freed + RECLAIM_STEP {
                    w.freed = self.sc.spool.release(w.freed, w.low);
                }
                let reach = filled.unwrap_or(w.published_end);
                w.outstanding.len() as u64 + 1 >= self.events.outstanding_limit()
                    || (w.low < w.published_end && reach - w.low > self.sc.window_bytes())
                    || self.events.output_held() > HELD_OUTPUT_BYTES
            };
            if !over {
                return true;
            }
            if self.events.stopped() {
                return false;
            }
            crate::input::spool::poll_in(&[self.sc.stop_fd], Some(2));
        }
    }

    /// How long to wait for input: until the `--timeout` after the last input when a partial
    /// batch waits, else for ever.
    fn fill_timeout(&self, partial: bool) -> Option<Duration> {
        match self.sc.settings.timeout {
            Some(t) if partial => Some(t.saturating_sub(self.last_input.elapsed())),
            _ => None,
        }
    }
}

/// Cutting byte chunks (`-b`, `--block`): no per-record work at all for `-b`, one backward
/// search per chunk for `--block`.
struct ChunkScan<'s, 'a> {
    run: Run<'s, 'a>,
    /// Bytes per chunk.
    size: u64,
    /// Chunks end at a record boundary (`--block`), and are searched for NULs per record.
    at_records: bool,
    /// Chunks end at the first record boundary at or past `size` bytes, not the last within.
    past: bool,
    /// Chunks hold this many records, ended at the string boundaries (`size` is then 1).
    records: Option<u64>,
    /// Delimiters per record ([`Sizing::BlockLines`]; 1 otherwise).
    lines: u64,
    /// Records are groups of lines with the same key, this many per chunk (0: by size)
    /// ([`Sizing::Groups`]).
    groups: Option<(GroupKey, u64)>,
    /// Where the next chunk starts.
    start: u64,
    /// A record longer than a chunk, from `start`, not ended yet: how far its end was looked
    /// for, so that input arriving in pieces is searched once, not again from the start with
    /// every piece (that was quadratic in the record's length).
    long: Option<LongRecord>,
    /// The chunk [`ChunkScan::chunk_end`] cut last is one record longer than a chunk (no
    /// delimiter before its end): publishing it counts 1 without reading it again.
    single: bool,
}

/// The search for the end of a record longer than a chunk, as far as it went.
#[derive(Clone, Copy, Debug)]
struct LongRecord {
    /// The chunk start it belongs to.
    start: u64,
    /// The input up to here was searched; no record ends in `(start + size, searched]` but
    /// possibly one whose end pattern straddles `searched`.
    searched: u64,
    /// With records of several lines: the delimiters in `[start, searched)`.
    seen: u64,
}

impl<'s, 'a> ChunkScan<'s, 'a> {
    fn new(run: Run<'s, 'a>, size: u64, at_records: bool) -> Self {
        ChunkScan {
            run,
            size,
            at_records,
            past: false,
            records: None,
            lines: 1,
            groups: None,
            start: 0,
            long: None,
            single: false,
        }
    }

    /// Where the search for the end of a long record from `start` may resume (an offset past
    /// `start + size`), knowing `overlap` bytes before it may hold the start of its end.
    fn resume_long(&self, overlap: u64) -> u64 {
        let floor = self.start + self.size;
        match self.long {
            Some(l) if l.start == self.start => l.searched.saturating_sub(overlap).max(floor),
            _ => floor,
        }
    }

    fn scan(mut self, ingest: &mut Ingest) -> io::Result<ScanTotals> {
        if !self.run.resume_check(ingest)? {
            return Ok(self.run.totals);
        }
        loop {
            if self.run.events.stopped() {
                return Ok(self.run.totals);
            }
            let filled = self.run.sc.spool.filled();
            let eof = ingest.at_eof();
            self.run.eof_seen = eof;
            if !self.cut_chunks(filled, eof) || eof {
                return Ok(self.run.totals);
            }
            if !self.wait_for_input(ingest, filled)? {
                return Ok(self.run.totals);
            }
        }
    }

    /// Publishes every chunk the input in so far (`filled` bytes) completes; false when the
    /// scan ends.
    fn cut_chunks(&mut self, filled: u64, eof: bool) -> bool {
        let data = self.run.sc.spool.bytes(0, filled);
        loop {
            match self.run.skips.jump(self.start, data, eof, self.run.events) {
                Jump::To(e) => {
                    self.start = e;
                    self.run.note_skipped(e);
                    continue;
                }
                Jump::Wait => return true,
                Jump::No => {}
            }
            // A chunk never runs into skipped input.
            let bound = self.run.skips.next_start(self.start, data, eof).min(filled);
            let start = self.start;
            if !(bound.saturating_sub(start) >= self.size
                || (eof || bound < filled) && bound > start)
            {
                return true;
            }
            let Some(end) = self.chunk_end(bound, filled, eof) else {
                return true;
            };
            if !self.publish(end) || self.run.events.stopped() {
                return false;
            }
            self.start = end;
        }
    }

    /// Where the chunk from `start` ends, the input up to `bound` being usable; None while a
    /// record longer than a chunk has not ended yet.
    fn chunk_end(&mut self, bound: u64, filled: u64, eof: bool) -> Option<u64> {
        let (start, size) = (self.start, self.size);
        self.single = false;
        if let (Some(n), Some(b)) = (self.records, &self.run.sc.settings.bounds) {
            // The search starts at the chunk's start again as input comes in: it is meant for
            // records far smaller than the spool's pieces.
            let data = self.run.sc.spool.bytes(start, bound);
            return match b.records_end(data, n, start == 0) {
                Some(p) if p > 0 => Some(start + p as u64),
                _ if eof || bound < filled => Some(bound),
                _ => None,
            };
        }
        if let Some((key, per_chunk)) = self.groups {
            return self.keyed_end(key, per_chunk, bound, filled, eof);
        }
        if self.lines > 1 {
            return self.group_end(bound, filled, eof);
        }
        if bound - start < size {
            return Some(bound);
        }
        if !self.at_records {
            return Some(start + size);
        }
        if self.run.sc.settings.grow_blocks && !self.past {
            return self.grown_chunk_end(bound, filled, eof);
        }
        let spool = self.run.sc.spool;
        // Once no record ends within the chunk's size, none will: only the rest is searched,
        // each byte once however the input arrives.
        let known_long = self.past || self.long.is_some_and(|l| l.start == start);
        let found = if let Some(b) = &self.run.sc.settings.bounds {
            let data = spool.bytes(start, bound);
            let within = (!known_long)
                .then(|| b.last_in(data, 0, size as usize))
                .flatten();
            let from = self.resume_long(b.overlap()) - start;
            // Past mode: the end pattern starts at `size` or later (`first_after` finds a
            // boundary past `from`, a pattern starting at `from + 1 - end` or later).
            let from = if self.past {
                from.max(size + b.end_len()) - 1
            } else {
                from
            };
            within
                .or_else(|| b.first_after(data, from as usize))
                .map(|p| start + p as u64)
        } else {
            let delimiter = self.run.sc.settings.delimiter;
            let within = (!known_long)
                .then(|| memchr::memrchr(delimiter, spool.bytes(start, start + size)))
                .flatten();
            // A record longer than the chunk is a chunk of its own.
            let from = self.resume_long(0);
            // No delimiter within the chunk's size: the chunk is one record, to the first one.
            self.single = within.is_none() && !self.past;
            within.map(|i| start + i as u64 + 1).or_else(|| {
                memchr::memchr(delimiter, spool.bytes(from, bound)).map(|j| from + j as u64 + 1)
            })
        };
        match found {
            Some(p) => Some(p),
            None if eof || bound < filled => Some(bound),
            None => {
                self.long = Some(LongRecord {
                    start,
                    searched: bound,
                    seen: 0,
                });
                None
            }
        }
    }

    /// [`ChunkScan::chunk_end`] when blocks grow: the last record end within the block
    /// (its whole end pattern, and start pattern, inside it); while there is none, the block
    /// grows to ⌈1.3 × size + 1⌉ for good, and is looked at again once that much is in.
    fn grown_chunk_end(&mut self, bound: u64, filled: u64, eof: bool) -> Option<u64> {
        let start = self.start;
        loop {
            let size = self.size;
            if bound - start < size {
                return (eof || bound < filled).then_some(bound);
            }
            let data = self.run.sc.spool.bytes(start, start + size);
            let found = match &self.run.sc.settings.bounds {
                Some(b) => b.last_in(data, 0, data.len()),
                None => memchr::memrchr(self.run.sc.settings.delimiter, data).map(|i| i + 1),
            };
            if let Some(p) = found {
                return Some(start + p as u64);
            }
            let to = (size as f64 * 1.3 + 1.0).ceil() as u64;
            self.run.events.block_grown(size, to);
            self.size = to;
        }
    }

    /// [`ChunkScan::chunk_end`] for records of `lines` lines: the end of the last whole record
    /// within the chunk's size; the end of the first one when none fits; at the end of the
    /// input, its rest with an incomplete last record cut off into a chunk of its own.
    fn group_end(&mut self, bound: u64, filled: u64, eof: bool) -> Option<u64> {
        let (start, size, lines) = (self.start, self.size, self.lines);
        let delimiter = self.run.sc.settings.delimiter;
        let spool = self.run.sc.spool;
        if bound - start < size {
            return Some(self.last_group_end(start, bound).unwrap_or(bound));
        }
        let known_long = self.long.is_some_and(|l| l.start == start);
        if let Some(end) = (!known_long)
            .then(|| self.last_group_end(start, start + size))
            .flatten()
        {
            return Some(end);
        }
        // No whole record within the chunk's size: the chunk is the first record, however long.
        let (from, seen) = match self.long {
            Some(l) if l.start == start => (l.searched, l.seen),
            _ => (start, 0),
        };
        let data = spool.bytes(from, bound);
        let mut ends = memchr::memchr_iter(delimiter, data);
        if let Some(i) = ends.nth((lines - seen - 1) as usize) {
            self.long = None;
            return Some(from + i as u64 + 1);
        }
        if eof || bound < filled {
            return Some(bound);
        }
        self.long = Some(LongRecord {
            start,
            searched: bound,
            seen: seen + bytecount::count(data, delimiter) as u64,
        });
        None
    }

    /// [`ChunkScan::chunk_end`] for groups of lines with the same key: the end of the
    /// `per_chunk`-th group, or (`per_chunk` 0) of the last whole group within the chunk's
    /// size (of the first one when none fits); None while that is not known yet.
    fn keyed_end(
        &mut self,
        key: GroupKey,
        per_chunk: u64,
        bound: u64,
        filled: u64,
        eof: bool,
    ) -> Option<u64> {
        let start = self.start;
        let ended = eof || bound < filled;
        let data = self.run.sc.spool.bytes(start, bound);
        let delimiter = self.run.sc.settings.delimiter;
        let (mut pos, mut groups, mut fit) = (0usize, 0u64, None);
        while pos < data.len() {
            let Some(len) = key.group_len(&data[pos..], delimiter, ended) else {
                // The group from `pos` goes on past the input in so far.
                return if per_chunk == 0 {
                    fit.map(|f| start + f as u64)
                } else {
                    None
                };
            };
            let end = pos + len;
            groups += 1;
            if per_chunk > 0 && groups == per_chunk {
                return Some(start + end as u64);
            }
            if per_chunk == 0 && end as u64 > self.size {
                return Some(start + fit.unwrap_or(end) as u64);
            }
            fit = Some(end);
            pos = end;
        }
        ended.then_some(bound)
    }

    /// With records of `lines` lines: the end of the last whole record in `[start, end)`, if
    /// any.
    fn last_group_end(&self, start: u64, end: u64) -> Option<u64> {
        let delimiter = self.run.sc.settings.delimiter;
        let data = self.run.sc.spool.bytes(start, end);
        let whole = bytecount::count(data, delimiter) as u64 / self.lines * self.lines;
        let n = usize::try_from(whole.checked_sub(1)?).ok()?;
        memchr::memchr_iter(delimiter, data)
            .nth(n)
            .map(|i| start + i as u64 + 1)
    }

    /// Publishes `[start, end)` as one chunk; false when the run stops.
    fn publish(&mut self, end: u64) -> bool {
        let range = (self.start, end);
        let single = std::mem::take(&mut self.single);
        if !self.run.may_publish(range, self.at_records) {
            return false;
        }
        let records = if let (true, Some(b)) = (self.at_records, &self.run.sc.settings.bounds) {
            b.count(self.run.sc.spool.bytes(self.start, end))
        } else if self.lines > 1 {
            count_records(
                self.run.sc.spool.bytes(self.start, end),
                self.run.sc.settings.delimiter,
            )
            .div_ceil(self.lines)
        } else if self.at_records && single {
            1
        } else if self.at_records {
            count_records(
                self.run.sc.spool.bytes(self.start, end),
                self.run.sc.settings.delimiter,
            )
        } else {
            1
        };
        let Some(seq) = self.run.hand_over(range, records) else {
            return false;
        };
        self.run.totals.records += records;
        self.run.published(seq, end)
    }

    /// Waits for more input (first while too much is unfinished); when input pauses past the
    /// timeout, publishes what is in. False when the scan ends.
    fn wait_for_input(&mut self, ingest: &mut Ingest, filled: u64) -> io::Result<bool> {
        let timeout = self.run.fill_timeout(filled > self.start);
        if !self.run.throttle(Some(filled)) {
            return Ok(false);
        }
        match ingest.fill(self.run.sc.spool, &[self.run.sc.stop_fd], timeout)? {
            Fill::Data => self.run.last_input = Instant::now(),
            Fill::Timeout => {
                if !self.flush_partial(filled) {
                    return Ok(false);
                }
                self.run.last_input = Instant::now();
            }
            Fill::Eof | Fill::Woken(_) => {}
        }
        Ok(true)
    }

    /// Input paused: publishes the partial chunk (up to its last record boundary for
    /// `--block`), if any; false when the run stops.
    fn flush_partial(&mut self, filled: u64) -> bool {
        let spool = self.run.sc.spool;
        let data = spool.bytes(0, filled);
        let start = self.start;
        let bound = self.run.skips.next_start(start, data, false).min(filled);
        let end = if self.groups.is_some() {
            // Where a group ends is not known before the next one starts.
            None
        } else if let (true, Some(b)) = (self.at_records, &self.run.sc.settings.bounds) {
            let data = spool.bytes(start, bound);
            b.last_in(data, 0, data.len()).map(|p| start + p as u64)
        } else if self.lines > 1 {
            self.last_group_end(start, bound)
        } else if self.at_records {
            memchr::memrchr(self.run.sc.settings.delimiter, spool.bytes(start, bound))
                .map(|i| start + i as u64 + 1)
        } else {
            Some(bound)
        };
        if let Some(end) = end.filter(|&end| end > start) {
            self.single = false;
            if !self.publish(end) {
                return false;
            }
            self.start = end;
        }
        true
    }
}

/// Cutting batches of records: record by record, or a block of records at once.
struct RecordScan<'s, 'a> {
    run: Run<'s, 'a>,
    /// The smallest batch, in records.
    init: u64,
    /// The largest batch, in records.
    max: u64,
    /// Batches grow and shrink within `[init, max]`.
    adaptive: bool,
    /// Exactly `init` records per batch, never cut early.
    exact: bool,
    /// The record limit (`u64::MAX`: none).
    limit: u64,
    /// The batch size aimed at now, in records.
    target: u64,
    /// Once this many records are out, batches take that many ([`Sizing::Tail`]).
    tail: Option<(u64, u64)>,
    /// The records of every batch, and the batch being built ([`Settings::cuts`]).
    cuts: Option<(std::sync::Arc<[u64]>, usize)>,
    /// The batch being built.
    p: Pending,
}

impl<'s, 'a> RecordScan<'s, 'a> {
    fn new(run: Run<'s, 'a>, init: u64, max: u64, exact: bool) -> Self {
        let limit = run.sc.settings.limit.unwrap_or(u64::MAX);
        RecordScan {
            run,
            init,
            max,
            adaptive: init < max,
            exact,
            limit,
            target: init,
            tail: None,
            cuts: None,
            p: Pending {
                start: 0,
                cursor: 0,
                records: 0,
                cost: 0,
                search: 0,
            },
        }
    }

    fn scan(mut self, ingest: &mut Ingest) -> io::Result<ScanTotals> {
        if !self.run.resume_check(ingest)? {
            return Ok(self.run.totals);
        }
        loop {
            if self.run.events.stopped() || !self.take_records(ingest.at_eof()) {
                return Ok(self.run.totals);
            }
            if ingest.at_eof() {
                self.cut();
                return Ok(self.run.totals);
            }
            if !self.wait_for_input(ingest)? {
                return Ok(self.run.totals);
            }
        }
    }

    /// Publishes the pending batch (if it holds anything); false when the run was aborted.
    fn cut(&mut self) -> bool {
        let range = (self.p.start, self.p.cursor);
        if range.0 == range.1 {
            return true;
        }
        if !self.run.may_publish(range, true) {
            return false;
        }
        let Some(seq) = self.run.hand_over(range, self.p.records) else {
            return false;
        };
        self.p.start = self.p.cursor;
        self.p.records = 0;
        self.p.cost = 0;
        if let Some((cuts, at)) = &mut self.cuts {
            *at += 1;
            if let Some(&n) = cuts.get(*at) {
                (self.init, self.max, self.target) = (n, n, n);
            }
        }
        self.run.published(seq, self.p.start)
    }

    /// Takes every complete record already in the spool (`eof`: all of the input is), cutting
    /// batches as they fill; per record only a memchr and a little arithmetic. False when the
    /// scan ends.
    fn take_records(&mut self, eof: bool) -> bool {
        let sc = self.run.sc;
        let filled = sc.spool.filled();
        let data = sc.spool.bytes(0, filled);
        self.run.eof_seen = eof;
        // The batch size in force: `target`, or less near the end of a known input.
        let at_end = self.adaptive && eof;
        let mut size = self.bound(at_end, filled);
        if at_end {
            self.trim(size, data);
        }
        loop {
            if self.p.records >= size.records {
                if !self.cut() || self.run.events.stopped() {
                    return false;
                }
                if let Some((from, tail)) = self.tail {
                    if self.run.totals.records >= from {
                        (self.init, self.max, self.target, self.tail) = (tail, tail, tail, None);
                    }
                }
                if self.adaptive && sc.ring.backlog() >= 1 && !sc.ring.starving() {
                    self.target = (self.target * 2).min(self.max);
                }
                size = self.bound(at_end, filled);
                continue;
            }
            if self.run.totals.records >= self.limit {
                self.cut();
                return false;
            }
            // Input done in an earlier run, or another task's, is skipped: the batch ends
            // before it.
            match self
                .run
                .skips
                .jump(self.p.cursor, data, eof, self.run.events)
            {
                Jump::To(e) => {
                    if !self.cut() {
                        return false;
                    }
                    (self.p.start, self.p.cursor, self.p.search) = (e, e, e);
                    self.run.note_skipped(e);
                    size = self.bound(at_end, filled);
                    continue;
                }
                Jump::Wait => return self.cut(),
                Jump::No => {}
            }
            if self.p.search > filled {
                return true;
            }
            // Records are looked for only up to the next skipped input.
            let view = &data[..self
                .run
                .skips
                .next_start(self.p.cursor, data, eof)
                .min(filled) as usize];
            let bounded = (view.len() as u64) < filled;
            if let Some(end) = self.end_unread(view, size, at_end, filled) {
                (self.p.cursor, self.p.search) = (end, end);
                if !self.cut() {
                    return false;
                }
                size = self.bound(at_end, filled);
                continue;
            }
            sc.skip_whole_blocks(
                view,
                &mut self.p,
                &mut self.run.totals,
                size,
                self.limit,
                self.exact,
            );
            let search = self.p.search;
            let (end, next) = match memchr::memchr(sc.settings.delimiter, &view[search as usize..])
            {
                Some(i) => (search + i as u64, search + i as u64 + 1),
                // At a skipped interval (the block fast path may have run up to it): the
                // loop's top jumps over it.
                None if bounded && self.p.cursor == view.len() as u64 => continue,
                None if (bounded || eof) && self.p.cursor < view.len() as u64 => {
                    (view.len() as u64, view.len() as u64)
                }
                None => {
                    self.p.search = filled;
                    return true;
                }
            };
            if !self.take_record(end, next, &mut size, at_end, filled) {
                return false;
            }
        }
    }

    /// At the end of the input, cuts the batch being built back to the size in force there
    /// (`size`), when it holds more: a batch that kept filling while input came in faster than
    /// the workers took it can hold all the rest of the input, which one worker would then run
    /// while the others wait. Its records past the new end are taken again, into the smaller
    /// batches that share out the tail.
    fn trim(&mut self, size: Bound, data: &[u8]) {
        let p = &self.p;
        if self.exact || p.records <= 1 || (p.records <= size.records && p.cost <= size.budget) {
            return;
        }
        let delimiter = self.run.sc.settings.delimiter;
        let space = self.run.sc.settings.arg_space;
        // The batch as take_record would have built it under `size`: record by record, the
        // first always, then while the count and the budget allow.
        let (mut end, mut records, mut cost) = (p.start, 0u64, 0u64);
        while records < size.records {
            let Some(i) = memchr::memchr(delimiter, &data[end as usize..p.cursor as usize]) else {
                break;
            };
            let c = space.map_or(0, |s| s.per_byte * i as u64 + s.per_record);
            if records > 0 && cost + c > size.budget {
                break;
            }
            (records, cost, end) = (records + 1, cost + c, end + i as u64 + 1);
        }
        if records == 0 || end >= p.cursor {
            return;
        }
        self.run.totals.records -= p.records - records;
        self.p.records = records;
        self.p.cost = cost;
        self.p.cursor = end;
        self.p.search = end;
    }

    /// Adds the record from the cursor to `end` (the input after it starts at `next`) to the
    /// batch: cutting the batch first when the record would break its argument budget, or
    /// skipping and reporting the record when it is too long to be an argument. False when the
    /// run stops.
    fn take_record(
        &mut self,
        end: u64,
        next: u64,
        size: &mut Bound,
        at_end: bool,
        filled: u64,
    ) -> bool {
        let len = end - self.p.cursor;
        if let Some(space) = self.run.sc.settings.arg_space {
            if len > space.max_record_len {
                if !self.cut() {
                    return false;
                }
                self.run.events.oversized(self.p.cursor, len, next);
                self.run.totals.records += 1;
                self.p.cursor = next;
                self.p.search = next;
                self.p.start = next;
                return true;
            }
            let cost = space.per_byte * len + space.per_record;
            if !self.exact && self.p.records > 0 && self.p.cost + cost > size.budget {
                if !self.cut() {
                    return false;
                }
                *size = self.bound(at_end, filled);
            }
            self.p.cost += cost;
        }
        self.p.records += 1;
        self.run.totals.records += 1;
        self.p.cursor = next;
        self.p.search = next;
        true
    }

    /// A byte-guided batch of a known input whose records need not be counted ends without
    /// reading it: at the last delimiter within the budget, or with everything left (`view`).
    /// None when that does not apply, or a record longer than the budget must go the slow way.
    fn end_unread(&self, view: &[u8], size: Bound, at_end: bool, filled: u64) -> Option<u64> {
        let s = &self.run.sc.settings;
        let p = &self.p;
        if !(at_end && s.byte_guided && !s.count_records && p.cursor == p.start && p.start < filled)
        {
            return None;
        }
        let want = p.start.saturating_add(size.budget);
        if want >= view.len() as u64 {
            return Some(view.len() as u64);
        }
        memchr::memrchr(s.delimiter, &view[p.start as usize..want as usize])
            .map(|i| p.start + i as u64 + 1)
    }

    /// The size in force for the batch being built. Near the end of an input whose size is
    /// known (`at_end`, `filled` bytes), batches shrink so the last ones are shared out evenly
    /// ("guided" scheduling): at most the remaining records (estimated from the average record
    /// so far) over twice the workers, never below `init` nor below [`TAIL_FLOOR`] records (so
    /// the tail is not spent starting processes for single records).
    ///
    /// With `byte_guided`, the same sharing is done in bytes and from the first batch on: the
    /// record target is lifted to `max` and the byte budget becomes the remaining bytes over
    /// twice the workers, within a floor (see [`TAIL_FLOOR_BYTES`]) and the full budget.
    fn bound(&self, at_end: bool, filled: u64) -> Bound {
        let sc = self.run.sc;
        let (target, p, totals) = (self.target, &self.p, self.run.totals);
        let budget = sc.settings.arg_space.map_or(u64::MAX, |s| s.budget);
        let bound = |records, budget| Bound { records, budget };
        if !at_end {
            return bound(target, budget);
        }
        let remaining_bytes = filled - p.start;
        let share = 2 * sc.workers.max(1);
        if sc.settings.byte_guided {
            let workers = sc.workers.max(1);
            // The tail's batches stay at a quarter of a worker's share or more: each one is a
            // process start (~1 ms here), and smaller ones only spend the time they save.
            let floor = (filled / (8 * workers))
                .min(TAIL_FLOOR_BYTES)
                .max(filled / (4 * workers));
            let bytes = (remaining_bytes / share).clamp(floor.min(budget), budget);
            return bound(self.max, bytes.max(1));
        }
        if totals.records == 0 || p.cursor == 0 {
            return bound(target, budget);
        }
        let remaining_bytes = filled - p.cursor;
        let remaining =
            (remaining_bytes as u128 * totals.records as u128 / p.cursor as u128) as u64;
        let floor = self.init.max(TAIL_FLOOR);
        bound(target.min((remaining / share).max(floor)), budget)
    }

    /// An incomplete record (or nothing) is left: flushes the batch early when workers starve,
    /// else waits for input (first while too much is unfinished), flushing when input pauses
    /// past the timeout. False when the scan ends.
    fn wait_for_input(&mut self, ingest: &mut Ingest) -> io::Result<bool> {
        let sc = self.run.sc;
        let partial = self.p.records > 0 && !self.exact;
        let flush_when_hungry = partial && self.adaptive;
        if flush_when_hungry {
            // Arm first, then look: a worker that runs dry after the look writes the eventfd.
            // Input that is ready (data or end of input) is read before anything is flushed.
            sc.ring.arm_hunger(sc.hunger_fd);
            if sc.ring.starving() && !ingest.ready_now() {
                sc.ring.disarm_hunger();
                if !self.cut() {
                    return Ok(false);
                }
                self.target = (self.target / 2).max(self.init);
                return Ok(true);
            }
        }
        let watch = [sc.stop_fd, sc.hunger_fd];
        let watched = if flush_when_hungry {
            &watch[..]
        } else {
            &watch[..1]
        };
        let timeout = self.run.fill_timeout(partial);
        if !self.run.throttle(Some(sc.spool.filled())) {
            return Ok(false);
        }
        let fill = ingest.fill(sc.spool, watched, timeout);
        sc.ring.disarm_hunger();
        match fill? {
            Fill::Data => self.run.last_input = Instant::now(),
            Fill::Eof => {}
            Fill::Timeout => {
                if !self.cut() {
                    return Ok(false);
                }
                if self.adaptive {
                    self.target = (self.target / 2).max(self.init);
                }
                self.run.last_input = Instant::now();
            }
            Fill::Woken(0) => {}
            Fill::Woken(_) => crate::sys::drain_event_fd(sc.hunger_fd),
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::ring::Claim;
    use proptest::prelude::*;
    use std::io::{Seek, Write};
    use std::sync::Mutex;

    struct Recorder {
        oversized: Mutex<Vec<(u64, u64)>>,
    }

    impl ScanEvents for Recorder {
        fn published(&self, _: &Rings) {}
        fn oversized(&self, offset: u64, len: u64, _: u64) {
            self.oversized.lock().unwrap().push((offset, len));
        }
        fn stopped(&self) -> bool {
            false
        }
        fn released(&self, _: u64) -> bool {
            true
        }
        fn output_held(&self) -> u64 {
            0
        }
        fn outstanding_limit(&self) -> u64 {
            1 << 16
        }
        fn input_head(&self, _: &[u8], _: Option<u64>) -> bool {
            true
        }
    }

    /// Scans `input` (as a regular file) and returns the batches and the skipped records.
    fn scan(
        input: &[u8],
        sizing: Sizing,
        limit: Option<u64>,
        space: Option<ArgSpace>,
    ) -> (Vec<crate::dispatch::batch::Batch>, Vec<(u64, u64)>) {
        scan_as(input, sizing, limit, space, false, true, &[])
    }

    /// [`scan`] with the stdin-mode switches.
    fn scan_as(
        input: &[u8],
        sizing: Sizing,
        limit: Option<u64>,
        space: Option<ArgSpace>,
        byte_guided: bool,
        count_records: bool,
        skip: &[(u64, u64)],
    ) -> (Vec<crate::dispatch::batch::Batch>, Vec<(u64, u64)>) {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(input).unwrap();
        f.seek(std::io::SeekFrom::Start(0)).unwrap();
        let how = How {
            sizing,
            limit,
            space,
            byte_guided,
            count_records,
            skip,
            shard: None,
        };
        scan_from(f, &how)
    }

    /// How a test scans.
    struct How<'a> {
        sizing: Sizing,
        limit: Option<u64>,
        space: Option<ArgSpace>,
        byte_guided: bool,
        count_records: bool,
        skip: &'a [(u64, u64)],
        shard: Option<ShardMap>,
    }

    impl How<'_> {
        /// The scanner's settings for this way of scanning (newline records, no timeout).
        fn settings(&self) -> Settings {
            Settings {
                delimiter: b'\n',
                sizing: self.sizing,
                cuts: None,
                limit: self.limit,
                timeout: None,
                arg_space: self.space,
                byte_guided: self.byte_guided,
                count_records: self.count_records,
                shard: self.shard,
                claims: None,
                head_first: None,
                nul: NulInArgument::Pass,
                bounds: None,
                grow_blocks: false,
            }
        }
    }

    /// Scans the input `f` gives (a file, or a pipe's read end).
    fn scan_from(
        f: std::fs::File,
        how: &How,
    ) -> (Vec<crate::dispatch::batch::Batch>, Vec<(u64, u64)>) {
        let (spool, mut ingest) = crate::input::spool::open(f).unwrap();
        let ring = Rings::new(std::sync::Arc::new(crate::sys::numa::Layout::single(1)), 4).unwrap();
        let rec = Recorder {
            oversized: Mutex::new(Vec::new()),
        };
        let batches = std::thread::scope(|s| {
            let consumer = s.spawn(|| {
                let mut out = Vec::new();
                while let Claim::Batch(b) = ring.claim(0, false) {
                    out.push(b);
                }
                out
            });
            let scanner = Scanner {
                settings: how.settings(),
                spool: &spool,
                ring: &ring,
                stop_fd: -1,
                hunger_fd: -1,
                workers: 2,
                skip: how.skip,
            };
            scanner.run(&mut ingest, &rec).unwrap();
            consumer.join().unwrap()
        });
        (batches, rec.oversized.into_inner().unwrap())
    }

    fn count_records(bytes: &[u8]) -> u64 {
        let n = memchr::memchr_iter(b'\n', bytes).count() as u64;
        n + u64::from(!bytes.is_empty() && *bytes.last().unwrap() != b'\n')
    }

    #[test]
    fn records_are_counted_with_or_without_a_final_delimiter() {
        assert_eq!(super::count_records(b"a\nb", b'\n'), 2);
        assert_eq!(super::count_records(b"a\nb\n", b'\n'), 2);
        assert_eq!(super::count_records(b"", b'\n'), 0);
        assert_eq!(super::count_records(b"\0\0x", 0), 3);
    }

    #[test]
    fn exact_batches_and_a_final_record_without_newline() {
        let (b, _) = scan(b"1\n2\n3\n4\n5", Sizing::Exact(2), None, None);
        let shape: Vec<_> = b.iter().map(|b| (b.start, b.end, b.records)).collect();
        assert_eq!(shape, [(0, 4, 2), (4, 8, 2), (8, 9, 1)]);
    }

    #[test]
    fn line_records_fill_blocks_and_an_incomplete_last_one_is_cut_off() {
        let shape = |input: &[u8], size, lines| {
            let (b, _) = scan(input, Sizing::BlockLines { size, lines }, None, None);
            b.iter()
                .map(|b| (b.start, b.end, b.records))
                .collect::<Vec<_>>()
        };
        let ten = b"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        assert_eq!(shape(ten, 1000, 4), [(0, 16, 2), (16, 21, 1)]);
        assert_eq!(shape(b"1\n2\n3\n4\n5", 100, 2), [(0, 8, 2), (8, 9, 1)]);
        // Whole records within 5 bytes each.
        assert_eq!(
            shape(b"a\nb\nc\nd\ne\nf\n", 5, 2),
            [(0, 4, 1), (4, 8, 1), (8, 12, 1)]
        );
        // A record longer than a block is a block of its own.
        assert_eq!(shape(b"a\nb\nc\nd\n", 2, 3), [(0, 6, 1), (6, 8, 1)]);
        assert_eq!(shape(b"a\nb", 100, 4), [(0, 3, 1)]);
    }

    #[test]
    fn groups_of_lines_with_one_key() {
        let key = GroupKey::new(1, b",").unwrap();
        let shape = |size, per_chunk| {
            let sizing = Sizing::Groups {
                size,
                per_chunk,
                key,
            };
            let (b, _) = scan(b"a,1\na,2\nb,3\nb,4\nc,5\nd,6", sizing, None, None);
            b.iter().map(|b| (b.start, b.end)).collect::<Vec<_>>()
        };
        assert_eq!(shape(1 << 20, 1), [(0, 8), (8, 16), (16, 20), (20, 23)]);
        assert_eq!(shape(1 << 20, 2), [(0, 16), (16, 23)]);
        // By size: whole groups within 10 bytes; a longer group alone.
        assert_eq!(shape(10, 0), [(0, 8), (8, 16), (16, 23)]);
        assert_eq!(shape(3, 0), [(0, 8), (8, 16), (16, 20), (20, 23)]);
    }

    #[test]
    fn limit_stops_mid_batch() {
        let (b, _) = scan(b"a\nb\nc\nd\n", Sizing::Exact(3), Some(2), None);
        assert_eq!(b.len(), 1);
        assert_eq!((b[0].start, b[0].end, b[0].records), (0, 4, 2));
    }

    #[test]
    fn oversized_records_are_skipped_and_reported() {
        let space = ArgSpace {
            per_byte: 1,
            per_record: 9,
            budget: 1 << 20,
            max_record_len: 3,
        };
        let (b, over) = scan(b"ab\nlong!\ncd\n", Sizing::Exact(10), None, Some(space));
        assert_eq!(over, [(3, 5)]);
        let shape: Vec<_> = b.iter().map(|b| (b.start, b.end, b.records)).collect();
        assert_eq!(shape, [(0, 3, 1), (9, 12, 1)]);
    }

    #[test]
    fn budget_cuts_batches() {
        let space = ArgSpace {
            per_byte: 1,
            per_record: 9,
            budget: 30,
            max_record_len: 100,
        };
        // Each 1-byte record costs 10: three fit in 30.
        let (b, _) = scan(
            b"a\nb\nc\nd\ne\n",
            Sizing::Adaptive {
                init: 100,
                max: 100,
            },
            None,
            Some(space),
        );
        let counts: Vec<_> = b.iter().map(|b| b.records).collect();
        assert_eq!(counts, [3, 2]);
    }

    /// A stdin-mode scan of a stream that is all in before any worker takes a batch (a pipe
    /// written and closed first, a ring with room for every batch, claimed only at the end):
    /// the batch being built when the input ends has taken in all of it.
    fn scan_streamed_before_any_claim(input: &[u8]) -> Vec<crate::dispatch::batch::Batch> {
        let (r, w) = std::io::pipe().unwrap();
        let mut w = w;
        assert!(input.len() <= 64 << 10, "a pipe holds it whole");
        w.write_all(input).unwrap();
        drop(w);
        let (spool, mut ingest) =
            crate::input::spool::open(std::fs::File::from(std::os::fd::OwnedFd::from(r))).unwrap();
        let ring = Rings::new(
            std::sync::Arc::new(crate::sys::numa::Layout::single(1)),
            1 << 12,
        )
        .unwrap();
        let rec = Recorder {
            oversized: Mutex::new(Vec::new()),
        };
        let how = How {
            sizing: Sizing::Adaptive {
                init: 1,
                max: HARD_MAX_STDIN_RECORDS,
            },
            limit: None,
            space: Some(ArgSpace {
                per_byte: 1,
                per_record: 1,
                budget: HARD_MAX_STDIN_BYTES,
                max_record_len: u64::MAX,
            }),
            byte_guided: true,
            count_records: true,
            skip: &[],
            shard: None,
        };
        let scanner = Scanner {
            settings: how.settings(),
            spool: &spool,
            ring: &ring,
            stop_fd: -1,
            hunger_fd: -1,
            workers: 2,
            skip: &[],
        };
        scanner.run(&mut ingest, &rec).unwrap();
        let mut out = Vec::new();
        while let Claim::Batch(b) = ring.claim(0, false) {
            out.push(b);
        }
        out
    }

    #[test]
    fn a_stream_all_in_at_its_end_is_shared_out_not_left_to_one_batch() {
        let input: Vec<u8> = (0..4000)
            .flat_map(|i| format!("{i:09}\n").into_bytes())
            .collect();
        let batches = scan_streamed_before_any_claim(&input);
        let mut at = 0;
        for (i, b) in batches.iter().enumerate() {
            assert_eq!((b.seq, b.start), (i as u64, at));
            assert_eq!(
                b.records,
                count_records(&input[b.start as usize..b.end as usize])
            );
            at = b.end;
        }
        assert_eq!(at, input.len() as u64);
        // Batches double while the input streams in; what is left when it ends is shared
        // out in shrinking batches (a quarter of the rest each, for two workers), down to
        // the floor of a quarter of each worker's share (5000 bytes here).
        let last = batches.last().unwrap();
        assert!(
            last.end - last.start <= 5000,
            "last batch {:?}",
            (last.start, last.end)
        );
        let biggest = batches.iter().map(|b| b.end - b.start).max().unwrap();
        assert!(
            biggest < input.len() as u64 / 3,
            "a batch of {biggest} bytes"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Invariant 1: batches tile the input in order; every record is in exactly one batch.
        #[test]
        fn batches_tile_the_input(
            lines in proptest::collection::vec("[a-z ]{0,12}", 0..200),
            trailing in any::<bool>(),
            init in 1u64..8,
            extra in 0u64..64,
            exact in any::<bool>(),
        ) {
            let mut input = lines.join("\n").into_bytes();
            if trailing && !input.is_empty() {
                input.push(b'\n');
            }
            let sizing = if exact { Sizing::Exact(init) } else { Sizing::Adaptive { init, max: init + extra } };
            let (batches, _) = scan(&input, sizing, None, None);
            let mut at = 0;
            let mut records = 0;
            for (i, b) in batches.iter().enumerate() {
                prop_assert_eq!(b.seq, i as u64);
                prop_assert_eq!(b.start, at);
                prop_assert!(b.records >= 1);
                prop_assert_eq!(b.records, count_records(&input[b.start as usize..b.end as usize]));
                if exact && i + 1 < batches.len() {
                    prop_assert_eq!(b.records, init);
                }
                prop_assert!(b.records <= init + extra);
                at = b.end;
                records += b.records;
            }
            prop_assert_eq!(at, input.len() as u64);
            prop_assert_eq!(records, count_records(&input));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// The block fast path keeps every rule of the record-by-record path: batches tile the
        /// input and never pass the size, the argument budget or the record limit.
        #[test]
        fn fast_path_keeps_every_limit(
            lens in proptest::collection::vec(0usize..40, 1..6000),
            size in 1u64..5000,
            budget in 200u64..200_000,
            limit in proptest::option::of(1u64..7000),
        ) {
            let mut input = Vec::new();
            for (i, l) in lens.iter().enumerate() {
                input.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, *l));
                input.push(b'\n');
            }
            let space = ArgSpace { per_byte: 1, per_record: 9, budget, max_record_len: 1 << 17 };
            let sizing = Sizing::Adaptive { init: size, max: size };
            let (batches, _) = scan(&input, sizing, limit, Some(space));
            let want = limit.map_or(lens.len() as u64, |l| l.min(lens.len() as u64));
            let mut at = 0u64;
            let mut total = 0u64;
            for b in &batches {
                prop_assert_eq!(b.start, at);
                prop_assert!(b.records <= size);
                let bytes = &input[b.start as usize..b.end as usize];
                let n = count_records(bytes);
                prop_assert_eq!(n, b.records);
                let cost = (bytes.len() as u64 - n) + 9 * n;
                prop_assert!(cost <= budget || n == 1, "cost {} over {}", cost, budget);
                at = b.end;
                total += b.records;
            }
            prop_assert_eq!(total, want);
        }
    }

    proptest! {
        /// Stdin mode on a known input: batches tile the input, end at a delimiter (or the end),
        /// count every record when counting, and the input is shared out from the first batch
        /// (no batch but a single long record is more than a quarter of the input plus a record).
        #[test]
        fn byte_guided_batches_tile_and_share(
            lines in proptest::collection::vec(0usize..300, 0..400),
            final_newline in any::<bool>(),
            budget in 1u64..20_000,
            count in any::<bool>(),
        ) {
            let mut input = Vec::new();
            for (i, n) in lines.iter().enumerate() {
                input.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, *n));
                input.push(b'\n');
            }
            if !final_newline {
                input.pop();
            }
            let space = ArgSpace { per_byte: 1, per_record: 1, budget, max_record_len: u64::MAX };
            let sizing = Sizing::Adaptive { init: 1, max: HARD_MAX_STDIN_RECORDS };
            let (b, _) = scan_as(&input, sizing, None, Some(space), true, count, &[]);
            let mut at = 0;
            let longest = lines.iter().max().copied().unwrap_or(0) as u64 + 1;
            for batch in &b {
                prop_assert_eq!(batch.start, at);
                prop_assert!(batch.end > batch.start);
                prop_assert!(batch.end == input.len() as u64 || input[batch.end as usize - 1] == b'\n');
                prop_assert!(batch.end - batch.start <= input.len() as u64 / 4 + longest);
                at = batch.end;
            }
            prop_assert_eq!(at, input.len() as u64);
            if count {
                prop_assert_eq!(b.iter().map(|b| b.records).sum::<u64>(), count_records(&input));
            }
        }
    }

    /// Lines of `lines` bytes each, their record starts (and the end), and done intervals at
    /// record boundaries (`(first record, records)`), merged like a checkpoint's.
    fn lines_and_done(
        lines: &[usize],
        done: &[(usize, usize)],
    ) -> (Vec<u8>, Vec<u64>, Vec<(u64, u64)>) {
        let mut input = Vec::new();
        let mut bounds = vec![0u64];
        for n in lines {
            input.extend(std::iter::repeat_n(b'x', *n));
            input.push(b'\n');
            bounds.push(input.len() as u64);
        }
        let skip = done
            .iter()
            .map(|&(at, len)| {
                let a = at.min(bounds.len() - 1);
                (bounds[a], bounds[(a + len).min(bounds.len() - 1)])
            })
            .collect();
        let merged = merge_done(skip);
        (input, bounds, merged)
    }

    /// Intervals sorted and merged like a checkpoint's (empty ones dropped).
    fn merge_done(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
        v.retain(|(a, b)| a < b);
        crate::journal::merge_intervals(v)
    }

    /// The sizing modes the properties run in: sizing, byte-guided, records counted.
    fn sizing_mode(mode: u8) -> (Sizing, bool, bool) {
        match mode {
            0 => (Sizing::Adaptive { init: 1, max: 64 }, false, true),
            1 => (Sizing::Exact(3), false, true),
            2 => (
                Sizing::Adaptive {
                    init: 1,
                    max: HARD_MAX_STDIN_RECORDS,
                },
                true,
                false,
            ),
            3 => (Sizing::Block(50), false, true),
            _ => (Sizing::Bytes(7), false, true),
        }
    }

    proptest! {
        /// Resuming: the batches cover exactly the input outside the done intervals, each byte
        /// once, and never reach into one — in every sizing mode.
        #[test]
        fn skipped_intervals_are_never_batched(
            lines in proptest::collection::vec(0usize..40, 1..300),
            done in proptest::collection::vec((0usize..300, 1usize..40), 0..6),
            mode in 0u8..5,
        ) {
            let (input, _, merged) = lines_and_done(&lines, &done);
            let space = ArgSpace { per_byte: 1, per_record: 1, budget: 300, max_record_len: u64::MAX };
            let (sizing, guided, count) = sizing_mode(mode);
            let (b, _) = scan_as(&input, sizing, None, Some(space), guided, count, &merged);
            let mut covered = vec![0u8; input.len()];
            for batch in &b {
                for i in batch.start..batch.end {
                    covered[i as usize] += 1;
                }
            }
            for (i, c) in covered.iter().enumerate() {
                let done = merged.iter().any(|&(a, e)| (a..e).contains(&(i as u64)));
                prop_assert_eq!(*c, u8::from(!done), "byte {} (done: {}) in {:?}", i, done, merged);
            }
        }
    }

    proptest! {
        /// Sharded: over all tasks, the batches cover exactly the input outside the done
        /// intervals, each byte once; a batch of records holds only records of its task's chunks
        /// (with `-b`, only bytes of its chunks, and done intervals may end anywhere, as `-b`
        /// batches do). Files and trickling streams alike.
        #[test]
        fn shards_cover_the_input_once(
            lines in proptest::collection::vec(0usize..30, 1..200),
            done in proptest::collection::vec((0usize..200, 1usize..30), 0..4),
            raw_done in proptest::collection::vec((0usize..3000, 1usize..300), 0..4),
            count in 1u64..5,
            chunk in 1u64..200,
            mode in 0u8..5,
            stream in any::<bool>(),
        ) {
            let (input, bounds, mut merged) = lines_and_done(&lines, &done);
            if mode == 4 {
                // -b: done intervals at any byte.
                merged = merge_done(
                    raw_done
                        .iter()
                        .map(|&(a, l)| (a.min(input.len()) as u64, (a + l).min(input.len()) as u64))
                        .collect(),
                );
            }
            let space = ArgSpace { per_byte: 1, per_record: 1, budget: 300, max_record_len: u64::MAX };
            let (sizing, guided, count_records) = sizing_mode(mode);
            let mut covered = vec![0u8; input.len()];
            for index in 0..count {
                let map = ShardMap { shard: crate::input::shard::Shard { index, count }, chunk, records: true };
                let map = if mode == 4 { map.raw() } else { map };
                let how = How {
                    sizing,
                    limit: None,
                    space: Some(space),
                    byte_guided: guided,
                    count_records,
                    skip: &merged,
                    shard: Some(map),
                };
                let f = if stream {
                    // A writer trickling the input in small pieces, so chunk ends often arrive
                    // after the scanner first looks for them.
                    let (r, w) = std::io::pipe().unwrap();
                    let data = input.clone();
                    std::thread::spawn(move || {
                        let mut w = w;
                        for piece in data.chunks(5) {
                            if w.write_all(piece).is_err() {
                                return;
                            }
                        }
                    });
                    std::fs::File::from(std::os::fd::OwnedFd::from(r))
                } else {
                    let mut f = tempfile::tempfile().unwrap();
                    f.write_all(&input).unwrap();
                    f.seek(std::io::SeekFrom::Start(0)).unwrap();
                    f
                };
                let (b, _) = scan_from(f, &how);
                for batch in &b {
                    prop_assert!(batch.end > batch.start);
                    if mode == 4 {
                        for i in batch.start..batch.end {
                            prop_assert!(map.owns(map.chunk_of(i)), "byte {} in {:?}", i, (batch.start, batch.end));
                        }
                    } else {
                        // Every record in it starts in a chunk of this task.
                        for &r in bounds.iter().filter(|&&r| r >= batch.start && r < batch.end) {
                            prop_assert!(map.owns(map.chunk_of(r)), "record at {} in {:?}", r, (batch.start, batch.end));
                        }
                    }
                    for i in batch.start..batch.end {
                        covered[i as usize] += 1;
                    }
                }
            }
            for (i, c) in covered.iter().enumerate() {
                let done = merged.iter().any(|&(a, e)| (a..e).contains(&(i as u64)));
                prop_assert_eq!(*c, u8::from(!done), "byte {} (done: {})", i, done);
            }
        }
    }
}
