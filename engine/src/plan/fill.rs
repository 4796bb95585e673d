//! Lines filled by length (GNU Parallel's `-X` and `-m`): how many records each job takes,
//! decided once from the whole input before the run starts.
//!
//! It measures each record's share of the job's shell line and cuts the input into jobs; it
//! reads nothing itself (the plan hands it the input's bytes) and runs nothing.

use crate::exec::command::job::{JobLine, TagCost};

/// The records each job takes, in order: as many as keep the line (plus one, plus what
/// `tag` counts: [`JobLine::tag_cost`]) within `chars` bytes, at most `cap`; once the records left all fit in one line, they are spread evenly
/// over `workers` jobs instead (the last ones may hold one record fewer). Empty when the input
/// holds no record. A record whose line alone is too long ends it: [`TooLong`] says which.
pub(super) fn cuts(
    (line, tag): (&JobLine, Option<&TagCost>),
    bytes: &[u8],
    delimiter: u8,
    chars: u64,
    cap: u64,
    workers: u64,
) -> Result<Vec<u64>, TooLong> {
    let mut spans = Spans {
        bytes,
        delimiter,
        at: 0,
    };
    let mut records = Vec::new();
    let mut out = Vec::new();
    let mut len = |r: &[u8]| {
        let tagged = tag.map_or(0, |t| {
            t.len(r, delimiter, &mut records, &mut out) * line.length_factor()
        });
        line.shell_line_len(r, delimiter, &mut records, &mut out) + tagged
    };
    let total = crate::dispatch::batch::count_records(bytes, delimiter);
    // Each record after a line's first adds its own length less what its line shares with
    // the others: the same for every record, found from the first two.
    // (Negative when joining adds bytes: a line without a command joins records with spaces.)
    let shared: i64 = match (spans.peek(0), spans.peek(1)) {
        (Some(a), Some(b)) => {
            let both = &bytes[a.0..b.1];
            (len(&bytes[a.0..a.1]) + len(&bytes[b.0..b.1])) as i64 - len(both) as i64
        }
        _ => 0,
    };
    let mut cuts = Vec::new();
    let mut done = 0u64;
    let mut next = spans.next().map(|(s, e)| len(&bytes[s..e]));
    while let Some(first) = next {
        let mut cost = first + 1;
        if cost > chars {
            return Err(TooLong {
                record: done,
                length: first,
                before: cuts,
            });
        }
        let mut n = 1u64;
        next = spans.next().map(|(s, e)| len(&bytes[s..e]));
        while let Some(l) = next.filter(|_| n < cap) {
            let add = (l as i64 - shared).max(0) as u64;
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
    Ok(cuts)
}

/// The record (counted from 0) whose job's line alone is `length` bytes, too long for the limit.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct TooLong {
    pub(super) record: u64,
    pub(super) length: u64,
    /// The cuts of the records before it.
    pub(super) before: Vec<u64>,
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

#[cfg(test)]
mod tests {
    use super::{TooLong, cuts};
    use crate::exec::command::job::{Columns, JobLine, JobSpec, ReplacementNames, Spread, Trim};

    fn line(words: &[&str], spread: Spread) -> JobLine {
        JobLine::new(&spec(words, spread), |_| false).unwrap()
    }

    fn spec(words: &[&str], spread: Spread) -> JobSpec {
        JobSpec {
            words: words.iter().map(|w| w.as_bytes().to_vec()).collect(),
            quote: false,
            literal: false,
            shell: "/bin/sh".into(),
            columns: Columns::Whole,
            spread,
            names: ReplacementNames::default(),
            trim: Trim::default(),
            header: Vec::new(),
            bare: false,
            fed: false,
            numbered: true,
            rpl: Vec::new(),
        }
    }

    fn seq(n: u64) -> Vec<u8> {
        (1..=n)
            .map(|i| format!("{i}\n"))
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn lines_fill_to_the_length_then_the_rest_spreads_over_the_workers() {
        // `echo 1 … 34` is 97 bytes: with its one more, 98 fit in 100; 35 would make 101.
        let echo = line(&["echo"], Spread::Context);
        assert_eq!(
            cuts((&echo, None), &seq(150), b'\n', 100, u64::MAX, 3).unwrap(),
            [34, 31, 31, 24, 23, 3, 3, 1]
        );
        // 35..65 fill the second line exactly: being the last, it is spread instead.
        assert_eq!(
            cuts((&echo, None), &seq(65), b'\n', 100, u64::MAX, 3).unwrap(),
            [34, 11, 11, 9]
        );
        assert_eq!(
            cuts((&echo, None), &seq(10), b'\n', 100, u64::MAX, 3).unwrap(),
            [4, 4, 2]
        );
        assert_eq!(
            cuts((&echo, None), &seq(8), b'\n', 100, 4, 2).unwrap(),
            [4, 2, 2]
        );
        assert_eq!(
            cuts((&echo, None), b"", b'\n', 100, u64::MAX, 2).unwrap(),
            Vec::<u64>::new()
        );
    }

    #[test]
    fn repeated_words_and_quoted_values_count_as_the_shell_gets_them() {
        // -X repeats `x{}y` per value: `echo x1y … x20y` is 95 bytes, 21 values 101.
        let x = line(&["echo", "x{}y"], Spread::Context);
        assert_eq!(
            cuts((&x, None), &seq(20), b'\n', 96, u64::MAX, 1).unwrap(),
            [20]
        );
        assert_eq!(
            cuts((&x, None), &seq(21), b'\n', 96, u64::MAX, 1).unwrap(),
            [20, 1]
        );
        // `'a b'` is 5 bytes on the line: 15 of them make `echo` + 89 + 1 = 95.
        let echo = line(&["echo"], Spread::Context);
        let ab = b"a b\n".repeat(16);
        assert_eq!(
            cuts((&echo, None), &ab, b'\n', 100, u64::MAX, 1).unwrap(),
            [15, 1]
        );
    }

    #[test]
    fn a_tags_strings_the_command_lacks_count_once_more() {
        let values = b"aaaa\nbbbb\ncccc\ndddd\neeee\nffff\ngggg\n";
        let tag = spec(&["{}"], Spread::Context);
        // -X, values appended: `echo aaaa bbbb` (14) and the values again without spaces (8)
        // fit in 30 with one more; a third value makes 19 + 12.
        let x = spec(&["echo"], Spread::Context);
        let cost = JobLine::tag_cost(&x, &tag).unwrap().unwrap();
        let echo = JobLine::new(&x, |_| false).unwrap();
        assert_eq!(
            cuts((&echo, Some(&cost)), values, b'\n', 30, u64::MAX, 1).unwrap(),
            [2, 2, 2, 1]
        );
        // The same command holding `{}` itself: the tag adds nothing.
        let held = spec(&["echo", "{}"], Spread::Context);
        assert!(JobLine::tag_cost(&held, &tag).unwrap().is_none());
        // -m: the spaces between the values count too (`aaaa bbbb` is 9, not 8).
        let m = spec(&["echo"], Spread::Words);
        let cost = JobLine::tag_cost(&m, &spec(&["{}"], Spread::Words)).unwrap();
        let echo = JobLine::new(&m, |_| false).unwrap();
        assert_eq!(
            cost.as_ref()
                .map(|c| c.len(b"aaaa\nbbbb\n", b'\n', &mut Vec::new(), &mut Vec::new())),
            Some(9)
        );
        assert_eq!(
            cuts((&echo, cost.as_ref()), values, b'\n', 30, u64::MAX, 1).unwrap(),
            [2, 2, 2, 1]
        );
    }

    #[test]
    fn a_record_whose_line_alone_is_too_long_ends_the_cuts() {
        // `echo 12345` is 10 bytes: with its one more, 11 do not fit in 10.
        let echo = line(&["echo"], Spread::Context);
        let input = b"1\n2\n12345\n3\n";
        assert_eq!(
            cuts((&echo, None), input, b'\n', 10, u64::MAX, 1),
            Err(TooLong {
                record: 2,
                length: 10,
                before: vec![2],
            })
        );
        assert_eq!(
            cuts((&echo, None), b"1234\n", b'\n', 10, u64::MAX, 1),
            Ok(vec![1])
        );
    }
}
