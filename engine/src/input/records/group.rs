//! Groups of lines with the same key (GNU Parallel's `--pipe --group-by COLUMN`): where the run
//! of consecutive lines whose key equals the first one's ends. A key is one column of the line
//! (split at a fixed separator) or the whole line.
//!
//! It only reads the bytes it is given and allocates nothing; cutting groups into batches is
//! the scanner's business.

/// The longest column separator, in bytes.
pub const MAX_SEPARATOR: usize = 16;

/// Which part of a line is its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupKey {
    /// The column, from 1 (0: the whole line).
    column: u32,
    separator: [u8; MAX_SEPARATOR],
    separator_len: u8,
}

impl GroupKey {
    /// Column `column` (from 1; 0 for the whole line) of lines split at `separator`; None when
    /// the separator is empty or longer than [`MAX_SEPARATOR`].
    pub fn new(column: u32, separator: &[u8]) -> Option<GroupKey> {
        if separator.is_empty() || separator.len() > MAX_SEPARATOR {
            return None;
        }
        let mut s = [0; MAX_SEPARATOR];
        s[..separator.len()].copy_from_slice(separator);
        Some(GroupKey {
            column,
            separator: s,
            separator_len: separator.len() as u8,
        })
    }

    fn separator(&self) -> &[u8] {
        &self.separator[..self.separator_len as usize]
    }

    /// The key of `line` (its delimiter excluded): its column, empty when it has fewer.
    pub fn key<'l>(&self, line: &'l [u8]) -> &'l [u8] {
        if self.column == 0 {
            return line;
        }
        let sep = self.separator();
        let mut rest = line;
        for _ in 1..self.column {
            match memchr::memmem::find(rest, sep) {
                Some(i) => rest = &rest[i + sep.len()..],
                None => return &[],
            }
        }
        match memchr::memmem::find(rest, sep) {
            Some(i) => &rest[..i],
            None => rest,
        }
    }

    /// The length of the group of lines at the start of `data` (lines ended by `delimiter`):
    /// up to the first line whose key differs from the first line's. None while that is not
    /// known yet (more input may follow, unless `eof`).
    pub fn group_len(&self, data: &[u8], delimiter: u8, eof: bool) -> Option<usize> {
        let line = |from: usize| -> Option<(usize, usize)> {
            match memchr::memchr(delimiter, &data[from..]) {
                Some(i) => Some((from + i, from + i + 1)),
                None if eof => Some((data.len(), data.len())),
                None => None,
            }
        };
        let (content, mut pos) = line(0)?;
        let first = self.key(&data[..content]);
        loop {
            if pos == data.len() {
                return eof.then_some(pos);
            }
            let (content, next) = line(pos)?;
            if self.key(&data[pos..content]) != first {
                return Some(pos);
            }
            pos = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_columns() {
        let k = GroupKey::new(2, b",").unwrap();
        assert_eq!(k.key(b"a,b,c"), b"b");
        assert_eq!(k.key(b"a,,c"), b"");
        assert_eq!(k.key(b"a"), b"");
        assert_eq!(k.key(b"a,b"), b"b");
        let whole = GroupKey::new(0, b"\t").unwrap();
        assert_eq!(whole.key(b"a\tb"), b"a\tb");
        assert_eq!(GroupKey::new(3, b"::").unwrap().key(b"a::b::c::d"), b"c");
        assert!(GroupKey::new(1, b"").is_none());
    }

    #[test]
    fn groups_end_where_the_key_changes() {
        let k = GroupKey::new(1, b",").unwrap();
        let data = b"a,1\na,2\nb,3\n";
        assert_eq!(k.group_len(data, b'\n', false), Some(8));
        assert_eq!(k.group_len(&data[8..], b'\n', false), None);
        assert_eq!(k.group_len(&data[8..], b'\n', true), Some(4));
        // The next line's key is not complete yet.
        assert_eq!(k.group_len(b"a,1\na", b'\n', false), None);
        assert_eq!(k.group_len(b"a,1\nb", b'\n', false), None);
        assert_eq!(k.group_len(b"a,1\nb", b'\n', true), Some(4));
        assert_eq!(k.group_len(b"a,1\na,2", b'\n', true), Some(7));
        assert_eq!(k.group_len(b"", b'\n', false), None);
    }
}
