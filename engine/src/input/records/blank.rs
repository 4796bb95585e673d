//! Blank lines in a batch: lines of nothing but whitespace (perl's `\s`), ended by a newline. It finds
//! the runs of bytes around them (what a batch's command gets when blank lines are dropped);
//! it copies nothing and allocates nothing.

/// The maximal runs `(start, end)` of `data` that hold no blank line, in order; a last line
/// without a newline is kept whatever it holds.
pub fn kept_runs(data: &[u8]) -> KeptRuns<'_> {
    KeptRuns { data, at: 0 }
}

/// Whether `data` is nothing but blank lines (so dropping them leaves nothing).
pub fn all_blank(data: &[u8]) -> bool {
    data.last().is_none_or(|&b| b == b'\n') && data.iter().copied().all(is_space)
}

/// Whitespace as perl's `\s` (GNU Parallel's `-r` measures with it): ASCII whitespace and the
/// vertical tab.
pub fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')
}

/// See [`kept_runs`].
pub struct KeptRuns<'a> {
    data: &'a [u8],
    at: usize,
}

impl KeptRuns<'_> {
    /// Where the line starting at `from` ends (past its newline, or at the end of the data),
    /// and whether it is blank.
    fn line(&self, from: usize) -> (usize, bool) {
        let rest = &self.data[from..];
        match memchr::memchr(b'\n', rest) {
            Some(i) => (from + i + 1, rest[..i].iter().copied().all(is_space)),
            None => (self.data.len(), false),
        }
    }
}

impl Iterator for KeptRuns<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        // Past the blank lines here.
        while self.at < self.data.len() {
            let (end, blank) = self.line(self.at);
            if !blank {
                break;
            }
            self.at = end;
        }
        if self.at >= self.data.len() {
            return None;
        }
        let start = self.at;
        while self.at < self.data.len() {
            let (end, blank) = self.line(self.at);
            if blank {
                break;
            }
            self.at = end;
        }
        Some((start, self.at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(data: &[u8]) -> Vec<u8> {
        kept_runs(data)
            .flat_map(|(s, e)| data[s..e].to_vec())
            .collect()
    }

    #[test]
    fn blank_lines_are_dropped_and_the_rest_kept_whole() {
        assert_eq!(kept(b"a\n\n  \nb\n"), b"a\nb\n");
        assert_eq!(kept(b"\n\t\na b\n \n"), b"a b\n");
        assert_eq!(kept(b"a\n  "), b"a\n  ");
        assert_eq!(kept(b" x \n"), b" x \n");
        assert_eq!(kept(b""), b"");
        assert_eq!(kept_runs(b"a\n\nb\n").count(), 2);
    }

    #[test]
    fn only_blank_lines_leave_nothing() {
        assert!(all_blank(b"\n \n\t\n"));
        assert!(all_blank(b""));
        assert!(!all_blank(b"\n  "));
        assert!(!all_blank(b"a\n"));
    }
}
