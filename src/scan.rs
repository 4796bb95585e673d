//! The scanner: finds record boundaries in the spool and cuts them into batches for the ring.
//!
//! It owns the batch-size policy: small while workers starve or input trickles (latency),
//! doubling while work is plentiful (throughput), never past the argument-space budget of the
//! argv backend. It reads input only through [`Ingest`] and hands batches on only through
//! [`Rings::publish`]; it never runs commands and never looks at output.

use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use crate::batch::{ArgSpace, count_records};
use crate::rings::Rings;
use crate::shard::ShardMap;
use crate::spool::{Fill, Ingest, Spool};

/// The smallest batch the end-of-input balancing cuts to (unless `-l` starts higher).
const TAIL_FLOOR: u64 = 16;

/// In stdin mode, the smallest batch the end-of-input balancing cuts to, in bytes: about this
/// much costs as much to move as a process costs to start. A small input gets a smaller floor
/// (an eighth of its share per worker), so that it is still spread over every worker.
const TAIL_FLOOR_BYTES: u64 = 4 << 20;

/// Bytes the fast path counts at a time.
const BLOCK: usize = 16 << 10;

/// The hard maximum batch size, in records.
pub const HARD_MAX_RECORDS: u64 = 65_536;

/// The hard maximum batch size in stdin mode, where ARG_MAX does not apply: records and bytes.
pub const HARD_MAX_STDIN_RECORDS: u64 = 1 << 30;
pub const HARD_MAX_STDIN_BYTES: u64 = 16 << 20;

/// Batch sizes, as the plan resolved them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sizing {
    /// Start at `init`, adapt within `[init, max]` (fixed when `init == max`).
    Adaptive { init: u64, max: u64 },
    /// Exactly `n` records per batch; never cut early.
    Exact(u64),
    /// Raw `n`-byte chunks, records ignored (`-b`).
    Bytes(u64),
    /// About `n` bytes per chunk, cut at the last record boundary (`--block`).
    Block(u64),
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
    /// The first published record (or `-b` chunk, `chunk`) holding a NUL byte starts at
    /// `offset`; it becomes an argument, which the NUL cuts. Called once per run at most.
    fn nul_in_argument(&self, _offset: u64, _chunk: bool) {}
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
    pub records: u64,
    pub batches: u64,
}

/// What the plan decides for the scanner, once per run.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub delimiter: u8,
    pub sizing: Sizing,
    pub limit: Option<u64>,
    pub timeout: Option<Duration>,
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
    /// The input's head is checked before anything else (resuming, or sharded: skipping may
    /// free the head before a batch is published), once this many bytes (or the whole input)
    /// are in.
    pub head_first: Option<u64>,
    /// Records (or `-b` chunks) become arguments, which a NUL byte inside cuts (the delimiter
    /// is not NUL): each batch is searched for one, once per batch, until one is reported.
    pub warn_nul: bool,
}

/// The scanner: its settings, and what it works with during the run.
pub struct Scanner<'a> {
    pub settings: Settings,
    pub spool: &'a Spool,
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
    fn jump(&mut self, at: u64, data: &[u8], eof: bool) -> Jump {
        if self.next_done(at) == at {
            return Jump::To(self.list[0].1);
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
    fn skips(&self) -> Skips<'_> {
        Skips {
            list: self.skip,
            shard: self.settings.shard,
            delimiter: self.settings.delimiter,
            run_end: None,
        }
    }

    /// Reports the first record of `[start, end)` that holds a NUL byte (the range itself when
    /// it is one argument, `records` false), unless one was reported already. One `memchr`.
    fn look_for_nul(
        &self,
        reported: &std::cell::Cell<bool>,
        (start, end): (u64, u64),
        records: bool,
        events: &dyn ScanEvents,
    ) {
        if !self.settings.warn_nul || reported.get() {
            return;
        }
        let bytes = self.spool.bytes(start, end);
        let Some(at) = memchr::memchr(0, bytes) else {
            return;
        };
        let record = if records {
            memchr::memrchr(self.settings.delimiter, &bytes[..at]).map_or(0, |i| i as u64 + 1)
        } else {
            0
        };
        reported.set(true);
        events.nul_in_argument(start + record, !records);
    }

    /// Scans until end of input, the record limit, or a stop; closes the ring at the end.
    pub fn run(&self, ingest: &mut Ingest, events: &dyn ScanEvents) -> io::Result<ScanTotals> {
        let result = self.scan(ingest, events);
        self.ring.close();
        result
    }

    /// Input up to `end` was skipped (done in an earlier run): nothing will release it, so the
    /// window moves past it once the batches before it are released.
    fn note_skipped(&self, w: &std::cell::RefCell<Window>, end: u64) {
        let mut w = w.borrow_mut();
        w.published_end = w.published_end.max(end);
    }

    /// Checks the input's head with the engine (once); false when the scan must stop.
    fn check_head(
        &self,
        checked: &std::cell::Cell<bool>,
        eof: bool,
        events: &dyn ScanEvents,
    ) -> bool {
        if checked.replace(true) {
            return true;
        }
        let filled = self.spool.filled();
        let head = self
            .spool
            .bytes(0, filled.min(crate::journal::HEAD_BYTES as u64));
        events.input_head(head, eof.then_some(filled))
    }

    /// Resuming: waits until the head to compare is in, then checks it.
    fn resume_check(
        &self,
        ingest: &mut Ingest,
        checked: &std::cell::Cell<bool>,
        events: &dyn ScanEvents,
    ) -> io::Result<bool> {
        let Some(want) = self.settings.head_first else {
            return Ok(true);
        };
        while self.spool.filled() < want && !ingest.at_eof() {
            if events.stopped() {
                return Ok(false);
            }
            ingest.fill(self.spool, &[self.stop_fd], None)?;
        }
        Ok(self.check_head(checked, ingest.at_eof(), events))
    }

    /// Records a published batch, then waits while too much is unfinished; false when the run
    /// stops meanwhile.
    fn note_published(
        &self,
        w: &std::cell::RefCell<Window>,
        seq: u64,
        end: u64,
        events: &dyn ScanEvents,
    ) -> bool {
        {
            let mut w = w.borrow_mut();
            w.outstanding.push_back((seq, end));
            w.published_end = end;
        }
        self.throttle(w, None, events)
    }

    /// Frees what no batch needs any more, then waits while the unfinished window is too big
    /// (`filled`: ingest wants to read past this), too many batches are outstanding, or too much
    /// `-k` output is held back. False when the run stops meanwhile.
    fn throttle(
        &self,
        w: &std::cell::RefCell<Window>,
        filled: Option<u64>,
        events: &dyn ScanEvents,
    ) -> bool {
        loop {
            let over = {
                let mut w = w.borrow_mut();
                while let Some(&(seq, end)) = w.outstanding.front() {
                    if !events.released(seq) {
                        break;
                    }
                    w.outstanding.pop_front();
                    w.low = end;
                }
                if w.outstanding.is_empty() {
                    w.low = w.published_end;
                }
                if w.low >= w.freed + RECLAIM_STEP {
                    w.freed = self.spool.release(w.freed, w.low);
                }
                let reach = filled.unwrap_or(w.published_end);
                w.outstanding.len() as u64 + 1 >= events.outstanding_limit()
                    || (w.low < w.published_end && reach - w.low > self.window_bytes())
                    || events.output_held() > HELD_OUTPUT_BYTES
            };
            if !over {
                return true;
            }
            if events.stopped() {
                return false;
            }
            crate::spool::poll_in(&[self.stop_fd], Some(2));
        }
    }

    /// The unfinished input the spool may hold: [`WINDOW_BYTES`], or room for a few of the
    /// largest batches when those are bigger.
    fn window_bytes(&self) -> u64 {
        let batch = match self.settings.sizing {
            Sizing::Bytes(n) | Sizing::Block(n) => n,
            _ => self.settings.arg_space.map_or(0, |s| s.budget),
        };
        WINDOW_BYTES.max(batch.saturating_mul(self.workers + 2))
    }

    /// Near the end of an input whose size is known (`at_end`), batches shrink so the last ones
    /// are shared out evenly ("guided" scheduling): at most the remaining records (estimated
    /// from the average record so far) over twice the workers, never below `init` nor below
    /// [`TAIL_FLOOR`] records (so the tail is not spent starting processes for single records).
    ///
    /// With `byte_guided`, the same sharing is done in bytes and from the first batch on: the
    /// record target is lifted to `max` and the byte budget becomes the remaining bytes over
    /// twice the workers, within a floor (see [`TAIL_FLOOR_BYTES`]) and the full budget.
    ///
    #[allow(clippy::too_many_arguments)]
    fn balanced(
        &self,
        target: u64,
        init: u64,
        max: u64,
        at_end: bool,
        p: &Pending,
        totals: ScanTotals,
        filled: u64,
    ) -> Bound {
        let budget = self.settings.arg_space.map_or(u64::MAX, |s| s.budget);
        let bound = |records, budget| Bound { records, budget };
        if !at_end {
            return bound(target, budget);
        }
        let remaining_bytes = filled - p.start;
        let share = 2 * self.workers.max(1);
        if self.settings.byte_guided {
            let floor = (filled / (8 * self.workers.max(1))).min(TAIL_FLOOR_BYTES);
            let bytes = (remaining_bytes / share).clamp(floor.min(budget), budget);
            return bound(max, bytes.max(1));
        }
        if totals.records == 0 || p.cursor == 0 {
            return bound(target, budget);
        }
        let remaining_bytes = filled - p.cursor;
        let remaining =
            (remaining_bytes as u128 * totals.records as u128 / p.cursor as u128) as u64;
        let floor = init.max(TAIL_FLOOR);
        bound(target.min((remaining / share).max(floor)), budget)
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
        if self
            .settings
            .arg_space
            .is_some_and(|s| s.max_record_len < BLOCK as u64)
        {
            return;
        }
        loop {
            let from = p.search as usize;
            let chunk = &data[from..data.len().min(from + BLOCK)];
            let Some(last) = memchr::memrchr(self.settings.delimiter, chunk) else {
                return;
            };
            let region = &chunk[..=last];
            let n = bytecount::count(region, self.settings.delimiter) as u64;
            if p.records + n >= size.records || totals.records + n >= limit {
                return;
            }
            let end = p.search + last as u64 + 1;
            let mut cost = p.cost;
            if let Some(space) = self.settings.arg_space {
                let first = memchr::memchr(self.settings.delimiter, region).unwrap_or(last) as u64;
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

    /// Cuts byte chunks (`-b`, `--block`): no per-record work at all for `-b`, one backward
    /// search per chunk for `--block`.
    fn scan_chunks(
        &self,
        ingest: &mut Ingest,
        events: &dyn ScanEvents,
        size: u64,
        at_records: bool,
    ) -> io::Result<ScanTotals> {
        let mut totals = ScanTotals::default();
        let mut start = 0u64;
        let mut last_input = Instant::now();
        let window = std::cell::RefCell::new(Window::default());
        let checked = std::cell::Cell::new(false);
        let eof_seen = std::cell::Cell::new(false);
        let nul_reported = std::cell::Cell::new(false);
        let mut skips = self.skips();
        if !self.resume_check(ingest, &checked, events)? {
            return Ok(totals);
        }
        let publish = |start: u64, end: u64, totals: &mut ScanTotals| -> bool {
            // A mapped input that shrank may have shown zeros instead of records: stop.
            if self.spool.shrank() || !self.check_head(&checked, eof_seen.get(), events) {
                return false;
            }
            self.look_for_nul(&nul_reported, (start, end), at_records, events);
            let records = if at_records {
                count_records(self.spool.bytes(start, end), self.settings.delimiter)
            } else {
                1
            };
            let Some(seq) = self.ring.publish(start, end, records) else {
                return false;
            };
            totals.batches += 1;
            totals.records += records;
            events.published(self.ring);
            self.note_published(&window, seq, end, events)
        };
        loop {
            if events.stopped() {
                return Ok(totals);
            }
            let filled = self.spool.filled();
            let eof = ingest.at_eof();
            eof_seen.set(eof);
            let data = self.spool.bytes(0, filled);
            loop {
                match skips.jump(start, data, eof) {
                    Jump::To(e) => {
                        start = e;
                        self.note_skipped(&window, e);
                        continue;
                    }
                    Jump::Wait => break,
                    Jump::No => {}
                }
                // A chunk never runs into skipped input.
                let bound = skips.next_start(start, data, eof).min(filled);
                if !(bound.saturating_sub(start) >= size
                    || (eof || bound < filled) && bound > start)
                {
                    break;
                }
                let end = if bound - start < size {
                    bound
                } else if !at_records {
                    start + size
                } else {
                    let window = self.spool.bytes(start, start + size);
                    match memchr::memrchr(self.settings.delimiter, window) {
                        Some(i) => start + i as u64 + 1,
                        // A record longer than the chunk is a chunk of its own.
                        None => match memchr::memchr(
                            self.settings.delimiter,
                            self.spool.bytes(start + size, bound),
                        ) {
                            Some(j) => start + size + j as u64 + 1,
                            None if eof || bound < filled => bound,
                            None => break,
                        },
                    }
                };
                if !publish(start, end, &mut totals) || events.stopped() {
                    return Ok(totals);
                }
                start = end;
            }
            if eof {
                return Ok(totals);
            }
            let partial = filled > start;
            let timeout = match self.settings.timeout {
                Some(t) if partial => Some(t.saturating_sub(last_input.elapsed())),
                _ => None,
            };
            if !self.throttle(&window, Some(filled), events) {
                return Ok(totals);
            }
            match ingest.fill(self.spool, &[self.stop_fd], timeout)? {
                Fill::Data => last_input = Instant::now(),
                Fill::Timeout => {
                    let data = self.spool.bytes(0, filled);
                    let bound = skips.next_start(start, data, false).min(filled);
                    let end = if at_records {
                        let window = self.spool.bytes(start, bound);
                        memchr::memrchr(self.settings.delimiter, window)
                            .map(|i| start + i as u64 + 1)
                    } else {
                        Some(bound)
                    };
                    if let Some(end) = end
                        && end > start
                    {
                        if !publish(start, end, &mut totals) {
                            return Ok(totals);
                        }
                        start = end;
                    }
                    last_input = Instant::now();
                }
                Fill::Eof | Fill::Woken(_) => {}
            }
        }
    }

    fn scan(&self, ingest: &mut Ingest, events: &dyn ScanEvents) -> io::Result<ScanTotals> {
        let (init, max, adaptive, exact) = match self.settings.sizing {
            Sizing::Adaptive { init, max } => (init, max, init < max, false),
            Sizing::Exact(n) => (n, n, false, true),
            Sizing::Bytes(n) => return self.scan_chunks(ingest, events, n, false),
            Sizing::Block(n) => return self.scan_chunks(ingest, events, n, true),
        };
        let mut target = init;
        let mut p = Pending {
            start: 0,
            cursor: 0,
            records: 0,
            cost: 0,
            search: 0,
        };
        let mut totals = ScanTotals::default();
        let mut last_input = Instant::now();
        let limit = self.settings.limit.unwrap_or(u64::MAX);

        let checked = std::cell::Cell::new(false);
        let eof_seen = std::cell::Cell::new(false);
        let nul_reported = std::cell::Cell::new(false);
        let mut skips = self.skips();
        if !self.resume_check(ingest, &checked, events)? {
            return Ok(totals);
        }

        // Publishes the pending batch; false when the run was aborted.
        let window = std::cell::RefCell::new(Window::default());
        let cut = |p: &mut Pending, totals: &mut ScanTotals| -> bool {
            if p.cursor == p.start {
                return true;
            }
            // A mapped input that shrank may have shown zeros instead of records: stop.
            if self.spool.shrank() || !self.check_head(&checked, eof_seen.get(), events) {
                return false;
            }
            self.look_for_nul(&nul_reported, (p.start, p.cursor), true, events);
            let Some(seq) = self.ring.publish(p.start, p.cursor, p.records) else {
                return false;
            };
            totals.batches += 1;
            events.published(self.ring);
            p.start = p.cursor;
            p.records = 0;
            p.cost = 0;
            self.note_published(&window, seq, p.start, events)
        };

        loop {
            if events.stopped() {
                return Ok(totals);
            }
            // Take every complete record already in the spool; per record only a memchr and a
            // little arithmetic.
            let filled = self.spool.filled();
            let data = self.spool.bytes(0, filled);
            let eof = ingest.at_eof();
            eof_seen.set(eof);
            // The batch size in force: `target`, or less near the end of a known input.
            let at_end = adaptive && ingest.at_eof();
            let balance = |target: u64, p: &Pending, totals: ScanTotals| {
                self.balanced(target, init, max, at_end, p, totals, filled)
            };
            let mut size = balance(target, &p, totals);
            loop {
                if p.records >= size.records {
                    if !cut(&mut p, &mut totals) || events.stopped() {
                        return Ok(totals);
                    }
                    if adaptive && self.ring.backlog() >= 1 && !self.ring.starving() {
                        target = (target * 2).min(max);
                    }
                    size = balance(target, &p, totals);
                    continue;
                }
                if totals.records >= limit {
                    cut(&mut p, &mut totals);
                    return Ok(totals);
                }
                // Input done in an earlier run, or another task's, is skipped: the batch ends
                // before it.
                match skips.jump(p.cursor, data, eof) {
                    Jump::To(e) => {
                        if !cut(&mut p, &mut totals) {
                            return Ok(totals);
                        }
                        (p.start, p.cursor, p.search) = (e, e, e);
                        self.note_skipped(&window, e);
                        size = balance(target, &p, totals);
                        continue;
                    }
                    Jump::Wait => {
                        if !cut(&mut p, &mut totals) {
                            return Ok(totals);
                        }
                        break;
                    }
                    Jump::No => {}
                }
                if p.search > filled {
                    break;
                }
                // Records are looked for only up to the next skipped input.
                let view = &data[..skips.next_start(p.cursor, data, eof).min(filled) as usize];
                let bounded = (view.len() as u64) < filled;
                if at_end
                    && self.settings.byte_guided
                    && !self.settings.count_records
                    && p.cursor == p.start
                    && p.start < filled
                {
                    // Cut by bytes without reading: the last delimiter within the budget, or
                    // everything left. A record longer than the budget goes the slow way.
                    let want = p.start.saturating_add(size.budget);
                    let end = if want >= view.len() as u64 {
                        Some(view.len() as u64)
                    } else {
                        memchr::memrchr(
                            self.settings.delimiter,
                            &view[p.start as usize..want as usize],
                        )
                        .map(|i| p.start + i as u64 + 1)
                    };
                    if let Some(end) = end {
                        p.cursor = end;
                        p.search = end;
                        if !cut(&mut p, &mut totals) {
                            return Ok(totals);
                        }
                        size = balance(target, &p, totals);
                        continue;
                    }
                }
                self.skip_whole_blocks(view, &mut p, &mut totals, size, limit, exact);
                let (end, next) =
                    match memchr::memchr(self.settings.delimiter, &view[p.search as usize..]) {
                        Some(i) => (p.search + i as u64, p.search + i as u64 + 1),
                        // At a skipped interval (the block fast path may have run up to it): the
                        // loop's top jumps over it.
                        None if bounded && p.cursor == view.len() as u64 => continue,
                        None if (bounded || ingest.at_eof()) && p.cursor < view.len() as u64 => {
                            (view.len() as u64, view.len() as u64)
                        }
                        None => {
                            p.search = filled;
                            break;
                        }
                    };
                let len = end - p.cursor;
                if let Some(space) = self.settings.arg_space {
                    if len > space.max_record_len {
                        if !cut(&mut p, &mut totals) {
                            return Ok(totals);
                        }
                        events.oversized(p.cursor, len, next);
                        totals.records += 1;
                        p.cursor = next;
                        p.search = next;
                        p.start = next;
                        continue;
                    }
                    let cost = space.per_byte * len + space.per_record;
                    if !exact && p.records > 0 && p.cost + cost > size.budget {
                        if !cut(&mut p, &mut totals) {
                            return Ok(totals);
                        }
                        size = balance(target, &p, totals);
                    }
                    p.cost += cost;
                }
                p.records += 1;
                totals.records += 1;
                p.cursor = next;
                p.search = next;
            }
            if ingest.at_eof() {
                cut(&mut p, &mut totals);
                return Ok(totals);
            }

            // An incomplete record (or nothing) is left: flush early or wait for input.
            let partial = p.records > 0 && !exact;
            let flush_when_hungry = partial && adaptive;
            if flush_when_hungry {
                // Arm first, then look: a worker that runs dry after the look writes the eventfd.
                // Input that is ready (data or end of input) is read before anything is flushed.
                self.ring.arm_hunger(self.hunger_fd);
                if self.ring.starving() && !ingest.ready_now() {
                    self.ring.disarm_hunger();
                    if !cut(&mut p, &mut totals) {
                        return Ok(totals);
                    }
                    target = (target / 2).max(init);
                    continue;
                }
            }
            let watch = [self.stop_fd, self.hunger_fd];
            let watched = if flush_when_hungry {
                &watch[..]
            } else {
                &watch[..1]
            };
            let timeout = match self.settings.timeout {
                Some(t) if partial => Some(t.saturating_sub(last_input.elapsed())),
                _ => None,
            };
            if !self.throttle(&window, Some(self.spool.filled()), events) {
                return Ok(totals);
            }
            let fill = ingest.fill(self.spool, watched, timeout);
            self.ring.disarm_hunger();
            match fill? {
                Fill::Data => last_input = Instant::now(),
                Fill::Eof => {}
                Fill::Timeout => {
                    if !cut(&mut p, &mut totals) {
                        return Ok(totals);
                    }
                    if adaptive {
                        target = (target / 2).max(init);
                    }
                    last_input = Instant::now();
                }
                Fill::Woken(0) => {}
                Fill::Woken(_) => crate::sys::drain_event_fd(self.hunger_fd),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::Claim;
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
    ) -> (Vec<crate::batch::Batch>, Vec<(u64, u64)>) {
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
    ) -> (Vec<crate::batch::Batch>, Vec<(u64, u64)>) {
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

    /// Scans the input `f` gives (a file, or a pipe's read end).
    fn scan_from(f: std::fs::File, how: &How) -> (Vec<crate::batch::Batch>, Vec<(u64, u64)>) {
        let (spool, mut ingest) = crate::spool::open(f).unwrap();
        let ring = Rings::new(std::sync::Arc::new(crate::numa::Layout::single(1)), 4).unwrap();
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
                settings: Settings {
                    delimiter: b'\n',
                    sizing: how.sizing,
                    limit: how.limit,
                    timeout: None,
                    arg_space: how.space,
                    byte_guided: how.byte_guided,
                    count_records: how.count_records,
                    shard: how.shard,
                    head_first: None,
                    warn_nul: false,
                },
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
                let map = ShardMap { shard: crate::shard::Shard { index, count }, chunk, records: true };
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
