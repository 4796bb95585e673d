//! Lines filled by length (GNU Parallel's `-X` and `-m`): how many records each job takes,
//! decided once from the whole input before the run starts.
//!
//! It measures each record's share of the job's shell line and cuts the input into jobs; it
//! reads nothing itself (the plan hands it the input's bytes) and runs nothing.

use crate::exec::command::job::JobLine;

/// The records each job takes, in order: as many as keep the line (plus one) within `chars`
/// bytes, at most `cap`; once the records left all fit in one line, they are spread evenly
/// over `workers` jobs instead (the last ones may hold one record fewer). A record whose line
/// alone is too long is a job of its own. Empty when the input holds no record.
pub(super) fn cuts(
    line: &JobLine,
    bytes: &[u8],
    delimiter: u8,
    chars: u64,
    cap: u64,
    workers: u64,
) -> Vec<u64> {
    let mut spans = Spans {
        bytes,
        delimiter,
        at: 0,
    };
    let mut records = Vec::new();
    let mut out = Vec::new();
    let mut len = |r: &[u8]| line.shell_line_len(r, delimiter, &mut records, &mut out);
    let total = crate::dispatch::batch::count_records(bytes, delimiter);
    // Each record after a line's first adds its own length less what its line shares with
    // the others: the same for every record, found from the first two.
    let shared = match (spans.peek(0), spans.peek(1)) {
        (Some(a), Some(b)) => {
            let both = &bytes[a.0..b.1];
            (len(&bytes[a.0..a.1]) + len(&bytes[b.0..b.1])).saturating_sub(len(both))
        }
        _ => 0,
    };
    let mut cuts = Vec::new();
    let mut done = 0u64;
    let mut next = spans.next().map(|(s, e)| len(&bytes[s..e]));
    while let Some(first) = next {
        let mut cost = first + 1;
        let mut n = 1u64;
        next = spans.next().map(|(s, e)| len(&bytes[s..e]));
        while let Some(l) = next.filter(|_| n < cap) {
            let add = l.saturating_sub(shared);
            if cost + add > chars {
                break;
            }
            cost += add;
            n += 1;
            next = spans.next().map(|(s, e)| len(&bytes[s..e]));
        }
        if done + n == total && n > 1 {
            // The rest fits in this one line: spread it over the workers.
            let per = n.div_ceil(workers.max(1));
            let mut left = n;
            while left > 0 {
                cuts.push(per.min(left));
                left -= per.min(left);
            }
            break;
        }
        cuts.push(n);
        done += n;
    }
    cuts
}

/// The records of `bytes`, each with its delimiter (the last one maybe without).
struct Spans<'a> {
    bytes: &'a [u8],
    delimiter: u8,
    at: usize,
}

impl Spans<'_> {
    /// The `k`th record from here, without moving on.
    fn peek(&self, k: usize) -> Option<(usize, usize)> {
        let mut s = Spans { ..*self };
        for _ in 0..k {
            s.next()?;
        }
        s.next()
    }
}

impl Iterator for Spans<'_> {
    type Item = (usize, usize);
    fn next(&mut self) -> Option<(usize, usize)> {
        if self.at >= self.bytes.len() {
            return None;
        }
        let start = self.at;
        let end = memchr::memchr(self.delimiter, &self.bytes[start..])
            .map_or(self.bytes.len(), |i| start + i + 1);
        self.at = end;
        Some((start, end))
    }
}
