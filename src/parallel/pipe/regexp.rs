//! `--regexp`: GNU Parallel's `--recstart` and `--recend` read as Perl regular expressions,
//! for `--pipe` and `--pipepart`. Its one job is to find record boundaries the way GNU Parallel
//! does (a boundary is where a match of the end expression ends and a match of the start
//! expression begins; multi-line mode, bytes rather than characters); the engine calls it
//! through [`BoundaryFinder`] and cuts the chunks itself. It reads no input.
//!
//! The expressions are compiled by `fancy-regex` (lookaround, as GNU Parallel's own searches
//! use it, on bytes that need not be UTF-8); each search looks at one chunk of input, never at
//! one record at a time.

use fancy_regex::{BytesMode, Regex, RegexBuilder};
use frun_engine::input::bounds::BoundaryFinder;

/// Boundaries between a match of the end expression and one of the start expression.
#[derive(Debug)]
pub(in crate::parallel) struct RegexBounds {
    /// The last boundary of a block: the greedy prefix up to an end match followed by a start
    /// match (group 1 ends at the boundary).
    last: Regex,
    /// Any boundary: an end match followed by a start match (the match ends at the boundary).
    any: Regex,
    /// `n` records from the chunk's start, a start match after them (group 1 is the records).
    records: Regex,
    /// The input begins with a start match.
    starts: Regex,
    /// What comes before the input's first start match (GNU Parallel's "garbage" record).
    garbage: Regex,
    /// A separator inside a chunk, at its start and at its end (`--rrs`).
    separator: Regex,
    head: Regex,
    tail: Regex,
    /// The number of records `records` was built for.
    n: u64,
}

impl RegexBounds {
    /// The finder for `--recstart START --recend END --regexp`, `n` records per job with `-N`
    /// (1 otherwise); an error names the expression that does not compile.
    pub(in crate::parallel) fn new(start: &str, end: &str, n: u64) -> Result<RegexBounds, String> {
        // GNU Parallel: --regexp --recend '' (without --recstart) ends records after any byte.
        let end = if end.is_empty() && start.is_empty() {
            "(?s:.)"
        } else {
            end
        };
        for (flag, re) in [("--recstart", start), ("--recend", end)] {
            RegexBuilder::new(re)
                .bytes_mode(BytesMode::Ascii)
                .build()
                .map_err(|err| format!("--regexp {flag} {re:?}: {err}"))?;
        }
        let (s, e) = (format!("(?:{start})"), format!("(?:{end})"));
        let not_boundary = format!("(?:(?!{e}{s})(?s:.))");
        let build = |pattern: String| {
            RegexBuilder::new(&pattern)
                .multi_line(true)
                .bytes_mode(BytesMode::Ascii)
                .build()
                .map_err(|err| format!("--regexp: {start:?} and {end:?}: {err}"))
        };
        Ok(RegexBounds {
            last: build(format!(r"\A((?s:.)*{e}){s}"))?,
            any: build(format!("{e}(?={s})"))?,
            records: build(format!(r"\A((?:{s}{not_boundary}*?{e}){{{n}}})(?={s})"))?,
            starts: build(format!(r"\A{s}"))?,
            garbage: build(format!(r"\A({not_boundary}*?{e})(?={s})"))?,
            separator: build(format!("{e}{s}"))?,
            head: build(format!(r"\A{s}"))?,
            tail: build(format!(r"{e}(?=\n?\z)"))?,
            n,
        })
    }

    /// Every boundary `p` with `0 < p < data.len()`, in order (a search that gives up on a
    /// pathological expression ends the list).
    fn inner(&self, data: &[u8]) -> impl Iterator<Item = usize> {
        self.any
            .find_iter(data)
            .map_while(Result::ok)
            .map(|m| m.end())
            .filter(move |&p| p > 0 && p < data.len())
    }

    /// Group 1's end when `re` matches `data`.
    fn group_end(re: &Regex, data: &[u8]) -> Option<usize> {
        let caps = re.captures(data).ok()??;
        caps.get(1).map(|g| g.end())
    }
}

impl BoundaryFinder for RegexBounds {
    fn last_in(&self, data: &[u8], lo: usize, hi: usize) -> Option<usize> {
        RegexBounds::group_end(&self.last, &data[..hi]).filter(|&p| p > lo)
    }

    fn first_after(&self, data: &[u8], lo: usize) -> Option<usize> {
        self.inner(data).find(|&p| p > lo)
    }

    fn count(&self, data: &[u8]) -> u64 {
        if data.is_empty() {
            return 0;
        }
        self.inner(data).count() as u64 + 1
    }

    fn records_end(&self, data: &[u8], n: u64, first: bool) -> Option<usize> {
        debug_assert_eq!(n, self.n, "built for another -N");
        if first && !self.starts.is_match(data).unwrap_or(false) {
            // Input before the first record start is a job of its own.
            if let Some(p) = RegexBounds::group_end(&self.garbage, data).filter(|&p| p > 0) {
                return Some(p);
            }
        }
        RegexBounds::group_end(&self.records, data).filter(|&p| p > 0)
    }

    fn separators(&self, data: &[u8]) -> Vec<(usize, usize)> {
        let found = |re: &Regex| re.find(data).ok().flatten().map(|m| (m.start(), m.end()));
        let mut cuts: Vec<(usize, usize)> = self
            .separator
            .find_iter(data)
            .map_while(Result::ok)
            .map(|m| (m.start(), m.end()))
            .collect();
        if let Some(h) = found(&self.head).filter(|h| cuts.first().is_none_or(|c| c.0 >= h.1)) {
            cuts.insert(0, h);
        }
        if let Some(t) = found(&self.tail).filter(|t| cuts.last().is_none_or(|c| c.1 <= t.0)) {
            cuts.push(t);
        }
        cuts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_boundary_of_a_block_is_before_the_last_start() {
        let b = RegexBounds::new(r"A\d+, Start", "", 1).unwrap();
        let data = b"A2, Start, 5\nA2, 1\nA2, Start, 7\nA2, 2\n";
        assert_eq!(b.last_in(data, 0, data.len()), Some(19));
        assert_eq!(b.last_in(data, 19, data.len()), None);
        assert_eq!(b.first_after(data, 0), Some(19));
        assert_eq!(b.count(data), 2);
    }

    #[test]
    fn records_are_counted_from_a_start_to_the_next() {
        let b = RegexBounds::new("^Start$", "", 1).unwrap();
        let data = b"Start\nfoo\nStart\nStart x\nStart\n";
        assert_eq!(b.records_end(data, 1, true), Some(10));
        assert_eq!(b.records_end(&data[10..], 1, false), Some(14));
        // The last record has no start after it: more input may still come.
        assert_eq!(b.records_end(b"Start\nfoo\n", 1, false), None);
    }

    #[test]
    fn input_before_the_first_start_is_a_record_of_its_own() {
        let b = RegexBounds::new(r"A\d+, Start", "", 1).unwrap();
        let data = b"Garbage\nA2, Start, 5\nA2, Start, 7\n";
        assert_eq!(b.records_end(data, 1, true), Some(8));
        assert_eq!(b.records_end(&data[8..], 1, false), Some(13));
    }

    #[test]
    fn an_empty_end_alone_ends_records_after_every_byte() {
        let b = RegexBounds::new("", "", 1).unwrap();
        assert_eq!(b.records_end(b"1\n2\n", 1, true), Some(1));
        assert_eq!(b.count(b"1\n2\n"), 4);
    }

    #[test]
    fn bytes_need_not_be_utf8() {
        let b = RegexBounds::new("", "\\xff", 1).unwrap();
        let data = b"a\xffb\xffc";
        assert_eq!(b.last_in(data, 0, data.len()), Some(4));
    }

    #[test]
    fn a_bad_expression_is_an_error_naming_it() {
        let err = RegexBounds::new("(", "", 1).unwrap_err();
        assert!(err.contains("--regexp"), "{err}");
    }
}
