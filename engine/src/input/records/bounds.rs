//! Record boundaries made of strings rather than one byte (GNU Parallel's `--recend STR` and
//! `--recstart STR` for `--pipe`): a record ends with the end string and the next one starts
//! with the start string, and a boundary is the place between the two.
//!
//! It only finds boundaries in bytes it is given (with `memchr::memmem`, once per chunk); it
//! reads no input and cuts no batches (the scanner does). The one-byte delimiter path never
//! comes here. Boundaries that strings cannot describe (GNU Parallel's `--regexp`) come from a
//! front end as a [`BoundaryFinder`]: the engine knows no regular expression syntax.
//! `--pipe --csv` comes here too: its records end at a newline outside double quotes, found by
//! reading the chunk from its start (a record boundary).

use memchr::memmem;
use std::fmt;
use std::sync::Arc;

/// The longest end string plus start string (the pattern is held inline, so settings that
/// carry it stay `Copy`).
pub const MAX_PATTERN: usize = 64;

/// Where records of the input begin and end: two strings, or a front end's finder.
#[derive(Clone, Debug)]
pub enum RecordBounds {
    /// A boundary is where the end string ends and the start string begins.
    Strings(Strings),
    /// A front end's own rule (for instance regular expressions).
    Found(Arc<dyn BoundaryFinder>),
    /// `--csv` records: each ends with a newline outside double quotes.
    Csv,
}

/// The boundaries of CSV records in `data` (which starts at one): just past each newline
/// outside double quotes.
fn csv_boundaries(data: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut quoted = false;
    memchr::memchr2_iter(b'"', b'\n', data).filter_map(move |i| {
        if data[i] == b'"' {
            quoted = !quoted;
            None
        } else {
            (!quoted).then_some(i + 1)
        }
    })
}

/// Finds record boundaries by a rule of its own. Offsets are into `data`, the input from a
/// chunk's start as far as it is in.
pub trait BoundaryFinder: Send + Sync + fmt::Debug {
    /// The last boundary `p` with `lo < p <= hi`, looking at `data[..hi]` only.
    fn last_in(&self, data: &[u8], lo: usize, hi: usize) -> Option<usize>;
    /// The first boundary `p > lo`.
    fn first_after(&self, data: &[u8], lo: usize) -> Option<usize>;
    /// How many records `data` (one chunk, cut at boundaries) holds.
    fn count(&self, data: &[u8]) -> u64;
    /// Where the first `n` records of `data` end, `data` starting a chunk (`first`: the
    /// input's first chunk); None while the input after them is not in yet.
    fn records_end(&self, data: &[u8], n: u64, first: bool) -> Option<usize>;
    /// The separators of `data` (one chunk) as sorted, disjoint ranges: see
    /// [`RecordBounds::kept_runs`].
    fn separators(&self, data: &[u8]) -> Vec<(usize, usize)>;
}

impl RecordBounds {
    /// Boundaries between `end` and `start`; None when both are empty or together longer than
    /// [`MAX_PATTERN`].
    pub fn new(end: &[u8], start: &[u8]) -> Option<RecordBounds> {
        Strings::new(end, start).map(RecordBounds::Strings)
    }

    /// How many bytes before a place already searched may hold the beginning of a boundary's
    /// pattern (a finder's searches look at the whole chunk again: none).
    pub fn overlap(&self) -> u64 {
        match self {
            RecordBounds::Strings(s) => s.pattern().len() as u64,
            RecordBounds::Found(_) | RecordBounds::Csv => 0,
        }
    }

    /// See [`BoundaryFinder::last_in`].
    pub fn last_in(&self, data: &[u8], lo: usize, hi: usize) -> Option<usize> {
        match self {
            RecordBounds::Strings(s) => s.last_in(data, lo, hi),
            RecordBounds::Found(f) => f.last_in(data, lo, hi.min(data.len())),
            RecordBounds::Csv => csv_boundaries(&data[..hi.min(data.len())])
                .filter(|&p| p > lo)
                .last(),
        }
    }

    /// See [`BoundaryFinder::first_after`].
    pub fn first_after(&self, data: &[u8], lo: usize) -> Option<usize> {
        match self {
            RecordBounds::Strings(s) => s.first_after(data, lo),
            RecordBounds::Found(f) => f.first_after(data, lo),
            RecordBounds::Csv => csv_boundaries(data).find(|&p| p > lo),
        }
    }

    /// See [`BoundaryFinder::count`].
    pub fn count(&self, data: &[u8]) -> u64 {
        match self {
            RecordBounds::Strings(s) => s.count(data),
            RecordBounds::Found(f) => f.count(data),
            RecordBounds::Csv if data.is_empty() => 0,
            RecordBounds::Csv => {
                csv_boundaries(data).filter(|&p| p < data.len()).count() as u64 + 1
            }
        }
    }

    /// The runs of `data` (one chunk) left when its separators are taken out (GNU Parallel's
    /// `--remove-rec-sep`): every end string followed by a start string, the start string
    /// that begins it and the end string that ends it (also before one last newline).
    pub fn kept_runs(&self, data: &[u8]) -> Vec<(usize, usize)> {
        let cuts = match self {
            RecordBounds::Strings(s) => s.separators(data),
            RecordBounds::Found(f) => f.separators(data),
            // CSV records have no separator of their own to leave out.
            RecordBounds::Csv => Vec::new(),
        };
        let mut runs = Vec::with_capacity(cuts.len() + 1);
        let mut at = 0;
        for (a, b) in cuts {
            if a > at {
                runs.push((at, a));
            }
            at = at.max(b);
        }
        if at < data.len() {
            runs.push((at, data.len()));
        }
        runs
    }

    /// See [`BoundaryFinder::records_end`]. With strings, the `n`th boundary, each found at
    /// least one byte past the last one's pattern start (GNU Parallel's `--pipe -N`).
    pub fn records_end(&self, data: &[u8], n: u64, first: bool) -> Option<usize> {
        match self {
            RecordBounds::Strings(s) => {
                let mut at = 0;
                for _ in 0..n {
                    at = memmem::find(data.get(at + 1..)?, s.pattern())? + at + 1;
                }
                Some(at + s.end_len as usize)
            }
            RecordBounds::Found(f) => f.records_end(data, n, first),
            RecordBounds::Csv => csv_boundaries(data).nth(usize::try_from(n).ok()?.checked_sub(1)?),
        }
    }

    /// Where a boundary sits past the beginning of its end pattern (strings: the end string's
    /// length; a finder: 1).
    pub fn end_len(&self) -> u64 {
        match self {
            RecordBounds::Strings(s) => s.end_len(),
            RecordBounds::Found(_) | RecordBounds::Csv => 1,
        }
    }
}

/// A boundary is where `end` ends and `start` begins (either may be empty, not both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strings {
    /// The end string, then the start string.
    pattern: [u8; MAX_PATTERN],
    end_len: u8,
    start_len: u8,
}

impl Strings {
    /// None when both are empty or together longer than [`MAX_PATTERN`].
    pub fn new(end: &[u8], start: &[u8]) -> Option<Strings> {
        let len = end.len() + start.len();
        if len == 0 || len > MAX_PATTERN {
            return None;
        }
        let mut pattern = [0u8; MAX_PATTERN];
        pattern[..end.len()].copy_from_slice(end);
        pattern[end.len()..len].copy_from_slice(start);
        Some(Strings {
            pattern,
            end_len: end.len() as u8,
            start_len: start.len() as u8,
        })
    }

    /// The bytes to search for: the end string, then the start string.
    pub fn pattern(&self) -> &[u8] {
        &self.pattern[..self.end_len as usize + self.start_len as usize]
    }

    /// The last boundary `p` with `lo < p <= hi` in `data` (a boundary at `p` needs the start
    /// string's bytes after `p` to be in `data`).
    pub fn last_in(&self, data: &[u8], lo: usize, hi: usize) -> Option<usize> {
        let end = self.end_len as usize;
        let from = (lo + 1).saturating_sub(end);
        let to = (hi - end.min(hi) + self.pattern().len()).min(data.len());
        if from >= to || hi < end {
            return None;
        }
        memmem::rfind(&data[from..to], self.pattern()).map(|i| from + i + end)
    }

    /// See [`RecordBounds::kept_runs`].
    fn separators(&self, data: &[u8]) -> Vec<(usize, usize)> {
        let (end, start) = (self.end_len as usize, self.start_len as usize);
        let (pattern, st, en) = (
            self.pattern(),
            &self.pattern()[end..],
            &self.pattern()[..end],
        );
        let mut cuts: Vec<(usize, usize)> = memmem::find_iter(data, pattern)
            .map(|i| (i, i + pattern.len()))
            .fold(Vec::new(), |mut v, (a, b)| {
                if v.last().is_none_or(|&(_, e)| a >= e) {
                    v.push((a, b));
                }
                v
            });
        if start > 0 && data.starts_with(st) && cuts.first().is_none_or(|&(a, _)| a >= start) {
            cuts.insert(0, (0, start));
        }
        let tail = if data.ends_with(b"\n") && !en.ends_with(b"\n") {
            data.len() - 1
        } else {
            data.len()
        };
        if end > 0
            && data[..tail].ends_with(en)
            && cuts.last().is_none_or(|&(_, e)| e <= tail - end)
        {
            cuts.push((tail - end, tail));
        }
        cuts
    }

    /// The length of the end string (a boundary falls just after it).
    pub fn end_len(&self) -> u64 {
        u64::from(self.end_len)
    }

    /// The first boundary `p > lo` in `data`.
    pub fn first_after(&self, data: &[u8], lo: usize) -> Option<usize> {
        let end = self.end_len as usize;
        let from = (lo + 1).saturating_sub(end);
        if from >= data.len() {
            return None;
        }
        memmem::find(&data[from..], self.pattern()).map(|i| from + i + end)
    }

    /// How many records `data` (one chunk, cut at boundaries) holds: its inner boundaries plus
    /// one (none when it is empty).
    pub fn count(&self, data: &[u8]) -> u64 {
        if data.is_empty() {
            return 0;
        }
        let end = self.end_len as usize;
        memmem::find_iter(data, self.pattern())
            .filter(|&i| i + end > 0 && i + end < data.len())
            .count() as u64
            + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every boundary of `data`, found by looking at each position.
    fn naive(b: &Strings, data: &[u8]) -> Vec<usize> {
        let (e, s) = (b.end_len as usize, b.start_len as usize);
        let pat = b.pattern();
        (1..=data.len())
            .filter(|&p| {
                p >= e && p - e + e + s <= data.len() && &data[p - e..p - e + e + s] == pat
            })
            .collect()
    }

    #[test]
    fn searches_agree_with_a_position_by_position_look() {
        let data = b"aXYbXYcXY>d>eXY>fXY";
        for (end, start) in [
            (&b"XY"[..], &b""[..]),
            (b"", b">"),
            (b"XY", b">"),
            (b"Y", b"b"),
        ] {
            let b = Strings::new(end, start).unwrap();
            let all = naive(&b, data);
            for lo in 0..data.len() {
                let want = all.iter().copied().find(|&p| p > lo);
                assert_eq!(
                    b.first_after(data, lo),
                    want,
                    "{end:?} {start:?} after {lo}"
                );
                for hi in lo..=data.len() {
                    let want = all.iter().copied().rev().find(|&p| p > lo && p <= hi);
                    assert_eq!(
                        b.last_in(data, lo, hi),
                        want,
                        "{end:?} {start:?} {lo}..{hi}"
                    );
                }
            }
        }
    }

    #[test]
    fn counts_records_between_boundaries() {
        let b = RecordBounds::new(b"XY", b"").unwrap();
        assert_eq!(b.count(b"aXYbXY"), 2);
        assert_eq!(b.count(b"aXYb"), 2);
        assert_eq!(b.count(b""), 0);
        let s = RecordBounds::new(b"", b">").unwrap();
        assert_eq!(s.count(b">a>b"), 2);
    }

    #[test]
    fn records_end_after_the_nth_boundary_past_the_first_byte() {
        let b = RecordBounds::new(b"", b">").unwrap();
        // The start at 0 begins the first record; it does not end one.
        assert_eq!(b.records_end(b">a>b>c", 1, true), Some(2));
        assert_eq!(b.records_end(b">a>b>c", 2, true), Some(4));
        assert_eq!(b.records_end(b">a>b", 2, true), None);
        let e = RecordBounds::new(b"XY", b"").unwrap();
        assert_eq!(e.records_end(b"aXYbXY", 2, true), Some(6));
        assert_eq!(e.records_end(b"aXYb", 2, true), None);
    }

    #[test]
    fn separators_are_left_out_as_gnu_parallel_does() {
        let runs = |end: &[u8], start: &[u8], data: &[u8]| -> Vec<u8> {
            let b = RecordBounds::new(end, start).unwrap();
            b.kept_runs(data)
                .iter()
                .flat_map(|&(a, z)| data[a..z].to_vec())
                .collect()
        };
        assert_eq!(runs(b"+", b"", b"a+"), b"a");
        assert_eq!(runs(b"+", b"", b"b\n"), b"b\n");
        assert_eq!(runs(b"+", b"", b"a+b+\n"), b"ab\n");
        assert_eq!(runs(b"", b">", b">a>b"), b"ab");
        assert_eq!(runs(b"XY", b">", b">aXY>bXY"), b"ab");
    }

    #[test]
    fn csv_records_end_at_newlines_outside_quotes() {
        let b = RecordBounds::Csv;
        let data = b"a,\"x\ny\"\nb\n\"\n\"";
        assert_eq!(b.first_after(data, 0), Some(8));
        assert_eq!(b.first_after(data, 8), Some(10));
        assert_eq!(b.last_in(data, 0, data.len()), Some(10));
        assert_eq!(b.last_in(data, 0, 9), Some(8));
        assert_eq!(b.last_in(data, 0, 7), None);
        assert_eq!(b.count(data), 3);
    }

    #[test]
    fn refuses_empty_and_overlong_patterns() {
        assert!(RecordBounds::new(b"", b"").is_none());
        assert!(RecordBounds::new(&[b'x'; 40], &[b'y'; 30]).is_none());
    }
}
