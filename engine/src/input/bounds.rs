//! Record boundaries made of strings rather than one byte (GNU Parallel's `--recend STR` and
//! `--recstart STR` for `--pipe`): a record ends with the end string and the next one starts
//! with the start string, and a boundary is the place between the two.
//!
//! It only finds boundaries in bytes it is given (with `memchr::memmem`, once per chunk); it
//! reads no input and cuts no batches (the scanner does). The one-byte delimiter path never
//! comes here. `--pipe --csv` comes here too: its records end at a newline outside double
//! quotes, found by reading the chunk from its start (a record boundary).

use memchr::memmem;

/// The longest end string plus start string (the pattern is held inline, so settings that
/// carry it stay `Copy`).
pub const MAX_PATTERN: usize = 64;

/// A boundary is where `end` ends and `start` begins (either may be empty, not both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordBounds {
    /// The end string, then the start string.
    pattern: [u8; MAX_PATTERN],
    end_len: u8,
    start_len: u8,
    /// `--csv`: the pattern is a newline, and one inside double quotes is no boundary.
    csv: bool,
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

impl RecordBounds {
    /// None when both are empty or together longer than [`MAX_PATTERN`].
    pub fn new(end: &[u8], start: &[u8]) -> Option<RecordBounds> {
        let len = end.len() + start.len();
        if len == 0 || len > MAX_PATTERN {
            return None;
        }
        let mut pattern = [0u8; MAX_PATTERN];
        pattern[..end.len()].copy_from_slice(end);
        pattern[end.len()..len].copy_from_slice(start);
        Some(RecordBounds {
            pattern,
            end_len: end.len() as u8,
            start_len: start.len() as u8,
            csv: false,
        })
    }

    /// `--csv` records: each ends with a newline outside double quotes.
    #[must_use]
    pub fn csv() -> RecordBounds {
        let mut pattern = [0u8; MAX_PATTERN];
        pattern[0] = b'\n';
        RecordBounds {
            pattern,
            end_len: 1,
            start_len: 0,
            csv: true,
        }
    }

    /// The bytes to search for: the end string, then the start string.
    pub fn pattern(&self) -> &[u8] {
        &self.pattern[..self.end_len as usize + self.start_len as usize]
    }

    /// The last boundary `p` with `lo < p <= hi` in `data` (a boundary at `p` needs the start
    /// string's bytes after `p` to be in `data`).
    pub fn last_in(&self, data: &[u8], lo: usize, hi: usize) -> Option<usize> {
        if self.csv {
            return csv_boundaries(&data[..hi.min(data.len())])
                .filter(|&p| p > lo)
                .last();
        }
        let end = self.end_len as usize;
        let from = (lo + 1).saturating_sub(end);
        let to = (hi - end.min(hi) + self.pattern().len()).min(data.len());
        if from >= to || hi < end {
            return None;
        }
        memmem::rfind(&data[from..to], self.pattern()).map(|i| from + i + end)
    }

    /// The length of the end string (a boundary falls just after it).
    pub fn end_len(&self) -> u64 {
        u64::from(self.end_len)
    }

    /// The first boundary `p > lo` in `data`.
    pub fn first_after(&self, data: &[u8], lo: usize) -> Option<usize> {
        if self.csv {
            return csv_boundaries(data).find(|&p| p > lo);
        }
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
        if self.csv {
            return csv_boundaries(data).filter(|&p| p < data.len()).count() as u64 + 1;
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
    fn naive(b: &RecordBounds, data: &[u8]) -> Vec<usize> {
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
            let b = RecordBounds::new(end, start).unwrap();
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
    fn csv_records_end_at_newlines_outside_quotes() {
        let b = RecordBounds::csv();
        let data = b"a,\"x\ny\"\nb\n\"\n\"";
        assert_eq!(b.first_after(data, 0), Some(8));
        assert_eq!(b.first_after(data, 8), Some(10));
        assert_eq!(b.last_in(data, 0, data.len()), Some(10));
        assert_eq!(b.last_in(data, 0, 9), Some(8));
        assert_eq!(b.last_in(data, 0, 7), None);
        assert_eq!(b.count(data), 3);
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
    fn refuses_empty_and_overlong_patterns() {
        assert!(RecordBounds::new(b"", b"").is_none());
        assert!(RecordBounds::new(&[b'x'; 40], &[b'y'; 30]).is_none());
    }
}
